// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_replay.c -- main() of a fuzz target built without libFuzzer: runs
 * the target over every file named on the command line (files, or
 * directories of them), else over its corpus in
 * $TOP_SRCDIR/tests/fuzz/corpus/FUZZ_NAME. A crash is a crash; an empty
 * or missing corpus is a failure (exit 1), so that make check notices.
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_target.h"

#ifndef FUZZ_NAME
#error "FUZZ_NAME names the corpus directory of the target"
#endif

/* inputs larger than this are not fuzz inputs; refuse them */
#define REPLAY_MAX_INPUT (1u << 20)

static int
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		(void) fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	uint8_t *buf = malloc(REPLAY_MAX_INPUT);
	size_t n = buf ? fread(buf, 1, REPLAY_MAX_INPUT, f) : 0;
	int too_big = buf && n == REPLAY_MAX_INPUT && fgetc(f) != EOF;
	(void) fclose(f);
	if (buf == NULL || too_big) {
		(void) fprintf(stderr, "%s: cannot read it whole\n", path);
		free(buf);
		return -1;
	}
	/* an exact-size copy: a sanitizer sees any read past the end */
	uint8_t *input = malloc(n ? n : 1);
	if (input == NULL) {
		free(buf);
		return -1;
	}
	memcpy(input, buf, n);
	free(buf);
	(void) LLVMFuzzerTestOneInput(input, n);
	free(input);
	return 0;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of a directory, in name order; the count or -1. */
static int
run_dir(const char *path)
{
	DIR *dir = opendir(path);
	if (dir == NULL) {
		(void) fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			char **grown = realloc(names, cap * sizeof(*names));
			if (grown == NULL)
				break;
			names = grown;
		}
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	(void) closedir(dir);
	qsort(names, n, sizeof(*names), cmp_names);
	int count = 0;
	for (size_t i = 0; i < n; i++) {
		char file[4096];
		(void) snprintf(file, sizeof(file), "%s/%s", path, names[i]);
		if (run_file(file) == 0)
			count++;
		else
			count = -1000000;
		free(names[i]);
	}
	free(names);
	return count;
}

static int
run_path(const char *path)
{
	struct stat st;
	if (stat(path, &st)) {
		(void) fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return run_dir(path);
	return run_file(path) == 0 ? 1 : -1;
}

int
main(int argc, char *argv[])
{
	(void) LLVMFuzzerInitialize(&argc, &argv);
	int total = 0;
	if (argc > 1) {
		for (int i = 1; i < argc; i++) {
			int n = run_path(argv[i]);
			if (n < 0)
				return 1;
			total += n;
		}
	} else {
		const char *top = getenv("TOP_SRCDIR");
		char dir[4096];
		(void) snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/%s",
				top && *top ? top : ".", FUZZ_NAME);
		total = run_dir(dir);
		if (total <= 0) {
			(void) fprintf(stderr, "%s: no corpus to replay\n", dir);
			return 1;
		}
	}
	(void) printf("%s: %d inputs replayed\n", FUZZ_NAME, total);
	return 0;
}
