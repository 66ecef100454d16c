// SPDX-License-Identifier: BSD-3-Clause
/*
 * th_files.c -- files of a test (see th_files.h)
 */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "th_files.h"
#include "th_wait.h"

char *
read_text(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (cap - len < 4096) {
			size_t cap2 = cap ? cap * 2 : 8192;
			char *b = realloc(buf, cap2);
			if (b == NULL)
				break;
			buf = b;
			cap = cap2;
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t) n;
	}
	(void) close(fd);
	if (buf)
		buf[len] = '\0';
	return buf ? buf : strdup("");
}

int
write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	if (f == NULL)
		return -1;
	bool ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

bool
wait_text(const char *path, const char *text, int timeout_ms)
{
	uint64_t end = it_now_ms() + (uint64_t) timeout_ms;
	for (;;) {
		char *t = read_text(path);
		bool found = t && strstr(t, text);
		free(t);
		if (found)
			return true;
		if (it_now_ms() > end)
			return false;
		it_sleep_ms(20);
	}
}

/*
 * Whether `word` stands in `line` as a word of its own: a pid 819 is not
 * found in "8192", nor "3" in "13" (an edge that is no letter or digit,
 * as in "socket:", needs no boundary).
 */
static bool
has_word(const char *line, const char *word)
{
	size_t wl = strlen(word);
	if (wl == 0)
		return true;
	for (const char *p = strstr(line, word); p; p = strstr(p + 1, word)) {
		bool open = !isalnum((unsigned char) word[0]) || p == line ||
				!isalnum((unsigned char) p[-1]);
		bool close = !isalnum((unsigned char) word[wl - 1]) ||
				!isalnum((unsigned char) p[wl]);
		if (open && close)
			return true;
	}
	return false;
}

size_t
count_lines_with(const char *text, ...)
{
	size_t count = 0;
	const char *line = text;
	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t) (end - line) : strlen(line);
		char *copy = strndup(line, len);
		bool all = copy != NULL;
		va_list ap;
		va_start(ap, text);
		const char *w;
		while (all && (w = va_arg(ap, const char *)) != NULL)
			all = has_word(copy, w);
		va_end(ap);
		free(copy);
		if (all)
			count++;
		line = end ? end + 1 : NULL;
	}
	return count;
}

static const char *
dir_path(const char *var, const char *rel)
{
	static char buf[2][1024];
	static int which;
	const char *top = getenv(var);
	char *b = buf[which++ % 2];
	(void) snprintf(b, sizeof(buf[0]), "%s/%s", top && *top ? top : ".",
			rel);
	return b;
}

const char *
builddir_path(const char *rel)
{
	return dir_path("TOP_BUILDDIR", rel);
}

const char *
srcdir_path(const char *rel)
{
	return dir_path("TOP_SRCDIR", rel);
}

int
th_mkdtemp(char *buf, size_t len, const char *prefix)
{
	const char *tmp = getenv("TMPDIR");
	(void) snprintf(buf, len, "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp",
			prefix);
	if (mkdtemp(buf) != NULL)
		return 0;
	buf[0] = '\0';
	return -1;
}

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void) st;
	(void) flag;
	(void) ftw;
	(void) remove(path);
	return 0;
}

const char *
th_path(const char *dir, const char *rel)
{
	static char path[4][PATH_MAX];
	static int i;
	i = (i + 1) % 4;
	(void) snprintf(path[i], sizeof(path[i]), "%s/%s", dir, rel);
	return path[i];
}

int
th_mkdir_owned(const char *path, mode_t mode, uid_t owner)
{
	if (mkdir(path, 0700) || chmod(path, mode))
		return -1;
	return owner == (uid_t) -1 ? 0 : chown(path, owner, (gid_t) -1);
}

void
th_remove_tree(const char *path)
{
	(void) nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void
th_show_tail(const char *path, const char *prefix, unsigned lines)
{
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return;
	char tail[20][512];
	unsigned keep = lines < 20 ? lines : 20, n = 0;
	if (keep == 0) {
		(void) fclose(f);
		return;
	}
	while (fgets(tail[n % keep], sizeof(tail[0]), f))
		n++;
	(void) fclose(f);
	(void) fprintf(stderr, "%s--- end of %s\n", prefix, path);
	for (unsigned i = n > keep ? n - keep : 0; i < n; i++)
		(void) fprintf(stderr, "%s%s", prefix, tail[i % keep]);
}
