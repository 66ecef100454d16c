// SPDX-License-Identifier: BSD-3-Clause
/*
 * json.c -- the JSON writer
 */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "json.h"

void
json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

static void
indent(struct json *j)
{
	(void) fputc('\n', j->f);
	for (unsigned i = 0; i < j->depth; i++)
		(void) fputs("  ", j->f);
}

/* Whatever goes before a value: nothing after a key, else comma+indent. */
static void
before_value(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth == 0)
		return;
	if (j->has_items[j->depth])
		(void) fputc(',', j->f);
	j->has_items[j->depth] = true;
	indent(j);
}

static void
open_(struct json *j, char c)
{
	before_value(j);
	(void) fputc(c, j->f);
	/* rpmactl nests a few levels: anything deeper is a bug here */
	if (j->depth == JSON_MAX_DEPTH)
		abort();
	j->depth++;
	j->has_items[j->depth] = false;
}

static void
close_(struct json *j, char c)
{
	bool had = j->has_items[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (had)
		indent(j);
	(void) fputc(c, j->f);
}

void
json_object_begin(struct json *j)
{
	open_(j, '{');
}

void
json_object_end(struct json *j)
{
	close_(j, '}');
}

void
json_array_begin(struct json *j)
{
	open_(j, '[');
}

void
json_array_end(struct json *j)
{
	close_(j, ']');
}

void
json_write_string(FILE *f, const char *s)
{
	(void) fputc('"', f);
	const unsigned char *p = (const unsigned char *)s;
	size_t avail = strlen(s);
	while (avail > 0) {
		unsigned char c = *p;
		size_t n = utf8_seq_len(p, avail);
		if (n == 0) {
			(void) fputs("\\ufffd", f);
			p++;
			avail--;
			continue;
		}
		if (n > 1) {
			(void) fwrite(p, 1, n, f);
		} else if (c == '"' || c == '\\') {
			(void) fputc('\\', f);
			(void) fputc(c, f);
		} else if (c == '\n') {
			(void) fputs("\\n", f);
		} else if (c == '\t') {
			(void) fputs("\\t", f);
		} else if (c == '\r') {
			(void) fputs("\\r", f);
		} else if (c < 0x20 || c == 0x7f) {
			(void) fprintf(f, "\\u%04x", c);
		} else {
			(void) fputc(c, f);
		}
		p += n;
		avail -= n;
	}
	(void) fputc('"', f);
}

void
json_key(struct json *j, const char *key)
{
	before_value(j);
	json_write_string(j->f, key);
	(void) fputs(": ", j->f);
	j->after_key = true;
}

void
json_string(struct json *j, const char *s)
{
	if (s == NULL) {
		json_null(j);
		return;
	}
	before_value(j);
	json_write_string(j->f, s);
}

void
json_u64(struct json *j, uint64_t v)
{
	before_value(j);
	(void) fprintf(j->f, "%" PRIu64, v);
}

void
json_i64(struct json *j, int64_t v)
{
	before_value(j);
	(void) fprintf(j->f, "%" PRId64, v);
}

void
json_bool(struct json *j, bool v)
{
	before_value(j);
	(void) fputs(v ? "true" : "false", j->f);
}

void
json_null(struct json *j)
{
	before_value(j);
	(void) fputs("null", j->f);
}

void
json_kv_string(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j, s);
}

void
json_kv_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

void
json_kv_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}

void
json_end(struct json *j)
{
	(void) fputc('\n', j->f);
}
