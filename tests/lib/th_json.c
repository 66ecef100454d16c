// SPDX-License-Identifier: BSD-3-Clause
/*
 * th_json.c -- JSON documents flattened by python3 (see th_json.h)
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "th_json.h"
#include "th_run.h"
#include "th_wait.h"

/* strict: one document, valid UTF-8; lists give "path.#" = length */
static const char flatten_py[] =
		"import json, sys\n"
		"doc = json.loads(open(sys.argv[1], 'rb').read()"
		".decode('utf-8'))\n"
		"def show(v):\n"
		"    if v is None: return 'null'\n"
		"    if isinstance(v, bool): return 'true' if v else 'false'\n"
		"    return str(v).encode('unicode_escape').decode('ascii')\n"
		"def walk(path, v):\n"
		"    if isinstance(v, dict):\n"
		"        for k, x in v.items(): walk(path + [k], x)\n"
		"    elif isinstance(v, list):\n"
		"        print('.'.join(path + ['#']) + '\\t' + str(len(v)))\n"
		"        for i, x in enumerate(v): walk(path + [str(i)], x)\n"
		"    else:\n"
		"        print('.'.join(path) + '\\t' + show(v))\n"
		"walk([], doc)\n";

int
flat_parse(struct flat *f, const char *json)
{
	memset(f, 0, sizeof(*f));
	char path[] = "/tmp/ops-json.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	size_t len = strlen(json);
	bool ok = write(fd, json, len) == (ssize_t) len;
	(void) close(fd);
	struct run r;
	char *argv[] = { "python3", "-c", (char *) flatten_py, path, NULL };
	int ret = ok ? run_cmd(&r, argv, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS) :
		       -1;
	(void) unlink(path);
	if (ret || r.status != 0) {
		if (ret == 0) {
			(void) fprintf(stderr, "not valid JSON (%s):\n%s\n",
					r.err, json);
			run_free(&r);
		}
		return -1;
	}
	size_t cap = 0;
	for (char *line = strtok(r.out, "\n"); line;
			line = strtok(NULL, "\n")) {
		char *tab = strchr(line, '\t');
		if (tab == NULL)
			continue;
		*tab = '\0';
		/* doubling: a listing of thousands is not copied each line */
		if (f->n == cap) {
			cap = cap ? 2 * cap : 64;
			char **k = realloc(f->key, cap * sizeof(*k));
			if (k)
				f->key = k;
			char **v = realloc(f->val, cap * sizeof(*v));
			if (v)
				f->val = v;
			if (k == NULL || v == NULL)
				break;
		}
		f->key[f->n] = strdup(line);
		f->val[f->n] = strdup(tab + 1);
		f->n++;
	}
	run_free(&r);
	/* an index, so that looking every element up costs n, not n^2 */
	if (hcreate_r(2 * f->n + 16, &f->index)) {
		f->indexed = true;
		for (size_t i = 0; i < f->n; i++) {
			ENTRY e = { f->key[i], f->val[i] }, *found;
			if (f->key[i] &&
					!hsearch_r(e, ENTER, &found, &f->index))
				f->indexed = false;
		}
	}
	return 0;
}

const char *
flat_get(const struct flat *f, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (f->indexed) {
		ENTRY e = { path, NULL }, *found = NULL;
		return hsearch_r(e, FIND, &found,
				       (struct hsearch_data *) &f->index) ?
				found->data :
				NULL;
	}
	for (size_t i = 0; i < f->n; i++) {
		if (f->key[i] && strcmp(f->key[i], path) == 0)
			return f->val[i];
	}
	return NULL;
}

long
flat_len(const struct flat *f, const char *path)
{
	const char *v = flat_get(f, "%s.#", path);
	return v ? strtol(v, NULL, 10) : -1;
}

long
flat_find(const struct flat *f, const char *array, const char *field,
		const char *value, long nth)
{
	long n = flat_len(f, array);
	for (long i = 0; i < n; i++) {
		const char *v = flat_get(f, "%s.%ld.%s", array, i, field);
		if (v && strcmp(v, value) == 0 && nth-- == 0)
			return i;
	}
	return -1;
}

void
flat_free(struct flat *f)
{
	if (f->indexed)
		hdestroy_r(&f->index);
	for (size_t i = 0; i < f->n; i++) {
		free(f->key[i]);
		free(f->val[i]);
	}
	free(f->key);
	free(f->val);
	memset(f, 0, sizeof(*f));
}

void
rpmactl_json(struct flat *f, const char *socket, const char *cmd)
{
	struct run r;
	ck_assert_int_eq(rpmactl(&r, socket, "--json", cmd, NULL), 0);
	ck_assert_msg(r.status == 0, "rpmactl --json %s: exit %d: %s", cmd,
			r.status, r.err);
	ck_assert_msg(flat_parse(f, r.out) == 0,
			"rpmactl --json %s: not "
			"JSON: %s",
			cmd, r.out);
	run_free(&r);
}
