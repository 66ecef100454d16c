// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_psk.c -- reading the software transport's pre-shared keys
 * (tcp.h)
 */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tcp/tcp.h"

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int
tcp_psk_parse_line(const char *line, struct tcp_psk *out, char *why,
		size_t len)
{
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line == '\0' || *line == '\n' || *line == '#')
		return 1;
	const char *colon = strchr(line, ':');
	if (colon == NULL) {
		(void) snprintf(why, len, "expected IDENTITY:HEXKEY");
		return -EINVAL;
	}
	size_t id_len = (size_t)(colon - line);
	if (id_len == 0 || id_len > TCP_PSK_IDENTITY_MAX) {
		(void) snprintf(why, len, "an identity has 1 to %d characters",
				TCP_PSK_IDENTITY_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < id_len; i++) {
		if (line[i] < 0x20 || line[i] > 0x7e) {
			(void) snprintf(why, len, "an identity is printable "
					"ASCII");
			return -EINVAL;
		}
	}
	memset(out, 0, sizeof(*out));
	memcpy(out->identity, line, id_len);
	const char *h = colon + 1;
	size_t n = 0;
	while (h[0] && h[0] != '\n' && h[0] != ' ' && h[0] != '\t') {
		int hi = hex_value(h[0]);
		int lo = h[1] ? hex_value(h[1]) : -1;
		if (hi < 0 || lo < 0 || n == TCP_PSK_KEY_MAX) {
			explicit_bzero(out, sizeof(*out));
			(void) snprintf(why, len, "a key is %d to %d bytes in "
					"hexadecimal (openssl rand -hex 32)",
					TCP_PSK_KEY_MIN, TCP_PSK_KEY_MAX);
			return -EINVAL;
		}
		out->key[n++] = (uint8_t)(hi << 4 | lo);
		h += 2;
	}
	while (*h == ' ' || *h == '\t' || *h == '\n')
		h++;
	if (n < TCP_PSK_KEY_MIN || (*h && *h != '#')) {
		explicit_bzero(out, sizeof(*out));
		(void) snprintf(why, len, "a key is %d to %d bytes in "
				"hexadecimal (openssl rand -hex 32)",
				TCP_PSK_KEY_MIN, TCP_PSK_KEY_MAX);
		return -EINVAL;
	}
	out->key_len = n;
	return 0;
}

/* Only its owner (root, or the user rpmad runs as) may read the file. */
static int
check_file(int fd, const char *path, char *err, size_t len)
{
	struct stat st;
	if (fstat(fd, &st)) {
		int e = errno;
		(void) snprintf(err, len, "%s: %s", path, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		(void) snprintf(err, len, "%s is not a file", path);
		return -EINVAL;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		(void) snprintf(err, len, "%s belongs to uid %u, not root: "
				"whoever owns it could change the keys",
				path, (unsigned)st.st_uid);
		return -EPERM;
	}
	if (st.st_mode & 077) {
		(void) snprintf(err, len, "%s may be read or written by others "
				"(mode %04o): chmod 600 it, and make new keys "
				"if others have read these", path,
				(unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int
tcp_psk_load(const char *path, struct tcp_psk_table *t, char *err,
		size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		(void) snprintf(err, len, "%s: %s", path, strerror(e));
		return -e;
	}
	int ret = check_file(fd, path, err, len);
	FILE *f = ret ? NULL : fdopen(fd, "r");
	if (f == NULL) {
		if (ret == 0) {
			ret = -errno;
			(void) snprintf(err, len, "%s: %s", path,
					strerror(errno));
		}
		(void) close(fd);
		return ret;
	}
	struct tcp_psk_table next = { 0 };
	char line[512], why[192];
	int lineno = 0;
	while (ret == 0 && fgets(line, sizeof(line), f)) {
		lineno++;
		struct tcp_psk k;
		int r = tcp_psk_parse_line(line, &k, why, sizeof(why));
		if (r == 1)
			continue;
		if (r == 0 && tcp_psk_find(&next, (const uint8_t *)k.identity,
				strlen(k.identity))) {
			r = -EINVAL;
			(void) snprintf(why, sizeof(why), "identity '%s' again",
					k.identity);
		}
		struct tcp_psk *bigger = r ? NULL : realloc(next.keys,
				(next.n + 1) * sizeof(*next.keys));
		if (r == 0 && bigger == NULL) {
			r = -ENOMEM;
			(void) snprintf(why, sizeof(why), "out of memory");
		}
		if (r) {
			(void) snprintf(err, len, "%s:%d: %s", path, lineno,
					why);
			ret = r;
		} else {
			next.keys = bigger;
			next.keys[next.n++] = k;
		}
		explicit_bzero(&k, sizeof(k));
	}
	explicit_bzero(line, sizeof(line));
	(void) fclose(f);
	if (ret == 0 && next.n == 0) {
		(void) snprintf(err, len, "%s holds no key", path);
		ret = -EINVAL;
	}
	if (ret) {
		tcp_psk_free(&next);
		return ret;
	}
	*t = next;
	return 0;
}

const struct tcp_psk *
tcp_psk_find(const struct tcp_psk_table *t, const uint8_t *identity,
		size_t len)
{
	for (size_t i = 0; i < t->n; i++) {
		if (strlen(t->keys[i].identity) == len &&
				memcmp(t->keys[i].identity, identity, len) == 0)
			return &t->keys[i];
	}
	return NULL;
}

void
tcp_psk_free(struct tcp_psk_table *t)
{
	if (t->keys)
		explicit_bzero(t->keys, t->n * sizeof(*t->keys));
	free(t->keys);
	t->keys = NULL;
	t->n = 0;
}
