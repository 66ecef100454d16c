// SPDX-License-Identifier: BSD-3-Clause
/*
 * proc_maps.c -- parsing a maps file, and asking the kernel for the
 * mappings of one range
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc_maps.h"

int
maps_parse_line(const char *line, struct maps_entry *e)
{
	char perms[5];
	uintmax_t start, end, offset, inode;
	int pos = 0;

	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%jx-%jx %4s %jx %x:%x %ju%n", &start, &end, perms,
			&offset, &e->dev_major, &e->dev_minor, &inode,
			&pos) != 7)
		return -1;
	if (strlen(perms) != 4 || start >= end)
		return -1;

	e->start = (uintptr_t)start;
	e->end = (uintptr_t)end;
	e->offset = offset;
	e->inode = inode;
	e->read = perms[0] == 'r';
	e->write = perms[1] == 'w';
	e->exec = perms[2] == 'x';
	e->shared = perms[3] == 's';

	const char *p = line + pos;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t len = strcspn(p, "\n");
	if (len >= sizeof(e->path))
		len = sizeof(e->path) - 1;
	memcpy(e->path, p, len);
	e->path[len] = '\0';
	return 0;
}

/* A maps file read line by line from the start, by pread. */
struct line_reader {
	int fd;
	off_t pos;
	bool eof;
	int error;		/* errno of a failed read or allocation */
	char *buf;
	size_t cap, fill, used;
};

/*
 * The next line, NUL-terminated in place (without its newline), or NULL
 * at the end of the file or on an error (r->error).
 */
static char *
next_line(struct line_reader *r)
{
	for (;;) {
		char *start = r->buf + r->used;
		char *nl = memchr(start, '\n', r->fill - r->used);
		if (nl) {
			*nl = '\0';
			r->used = (size_t)(nl + 1 - r->buf);
			return start;
		}
		if (r->eof) {
			if (r->used == r->fill)
				return NULL;
			r->buf[r->fill] = '\0';	/* a last line without '\n' */
			r->used = r->fill;
			return start;
		}
		/* keep the partial line, read more behind it */
		memmove(r->buf, start, r->fill - r->used);
		r->fill -= r->used;
		r->used = 0;
		if (r->cap - r->fill < 4096) {
			char *n = realloc(r->buf, r->cap * 2);
			if (n == NULL) {
				r->error = ENOMEM;
				return NULL;
			}
			r->buf = n;
			r->cap *= 2;
		}
		ssize_t n = pread(r->fd, r->buf + r->fill,
				r->cap - r->fill - 1, r->pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r->error = errno;
			return NULL;
		}
		r->eof = n == 0;
		r->pos += n;
		r->fill += (size_t)n;
	}
}

int
maps_scan(int fd, uintptr_t start, uintptr_t end, struct maps_entry **out,
		void (*seen)(const struct maps_entry *e, void *arg), void *arg)
{
	struct line_reader r = { .fd = fd, .cap = 16384 };
	r.buf = malloc(r.cap);
	if (r.buf == NULL) {
		errno = ENOMEM;
		return -1;
	}
	struct maps_entry *entries = NULL;
	int count = 0, cap = 0;
	struct maps_entry e;
	char *line;
	while ((line = next_line(&r)) != NULL) {
		if (maps_parse_line(line, &e))
			continue;
		if (seen)
			seen(&e, arg);
		if (e.end <= start || e.start >= end)
			continue;
		if (count == cap) {
			cap = cap ? cap * 2 : 8;
			struct maps_entry *n = realloc(entries,
					(size_t)cap * sizeof(*n));
			if (n == NULL) {
				r.error = ENOMEM;
				break;
			}
			entries = n;
		}
		entries[count++] = e;
	}
	free(r.buf);
	if (r.error) {
		free(entries);
		errno = r.error;
		return -1;
	}
	*out = entries;
	return count;
}

int
maps_open_self(void)
{
	return open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
}

/*
 * PROCMAP_QUERY (Linux 6.11): the kernel looks one mapping up by address,
 * so a registration costs the same however many mappings the process has.
 * Declared here because older kernel headers lack it; the layout is ABI.
 */
#define MAPS_PROCMAP_QUERY _IOWR('f', 17, struct maps_procmap_query)
#define MAPS_Q_READ		0x01
#define MAPS_Q_WRITE		0x02
#define MAPS_Q_EXEC		0x04
#define MAPS_Q_SHARED		0x08
#define MAPS_Q_COVERING_OR_NEXT	0x10

struct maps_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};

/* set once a kernel answered that it does not know the ioctl */
static _Atomic bool query_unsupported;

/* 1 found, 0 nothing at or above addr, -1 error, -2 not supported */
static int
query_one(int fd, uintptr_t addr, struct maps_entry *e)
{
	struct maps_procmap_query q;
	memset(&q, 0, sizeof(q));
	memset(e, 0, sizeof(*e));
	q.size = sizeof(q);
	q.query_flags = MAPS_Q_COVERING_OR_NEXT;
	q.query_addr = addr;
	q.vma_name_addr = (uint64_t)(uintptr_t)e->path;
	q.vma_name_size = sizeof(e->path);
	if (ioctl(fd, MAPS_PROCMAP_QUERY, &q)) {
		if (errno == ENOENT)
			return 0;
		if (errno == ENOTTY || errno == EINVAL || errno == EOPNOTSUPP)
			return -2;
		return -1;
	}
	e->start = (uintptr_t)q.vma_start;
	e->end = (uintptr_t)q.vma_end;
	e->offset = q.vma_offset;
	e->inode = q.inode;
	e->dev_major = q.dev_major;
	e->dev_minor = q.dev_minor;
	e->read = q.vma_flags & MAPS_Q_READ;
	e->write = q.vma_flags & MAPS_Q_WRITE;
	e->exec = q.vma_flags & MAPS_Q_EXEC;
	e->shared = q.vma_flags & MAPS_Q_SHARED;
	if (q.vma_name_size == 0)
		e->path[0] = '\0';
	e->path[sizeof(e->path) - 1] = '\0';
	return 1;
}

int
maps_query(int fd, uintptr_t start, uintptr_t end, struct maps_entry **out)
{
	if (atomic_load(&query_unsupported))
		return maps_scan(fd, start, end, out, NULL, NULL);
	struct maps_entry *entries = NULL;
	int count = 0, cap = 0, ret = 0;
	uintptr_t addr = start;
	while (addr < end) {
		if (count == cap) {
			cap = cap ? cap * 2 : 4;
			struct maps_entry *n = realloc(entries,
					(size_t)cap * sizeof(*n));
			if (n == NULL) {
				errno = ENOMEM;
				ret = -1;
				break;
			}
			entries = n;
		}
		ret = query_one(fd, addr, &entries[count]);
		if (ret <= 0)
			break;
		if (entries[count].start >= end) {
			ret = 0;
			break;
		}
		addr = entries[count].end;
		count++;
		ret = 0;
	}
	if (ret == -2) {
		atomic_store(&query_unsupported, true);
		free(entries);
		return maps_scan(fd, start, end, out, NULL, NULL);
	}
	if (ret) {
		int err = errno;
		free(entries);
		errno = err;
		return -1;
	}
	*out = entries;
	return count;
}

int
maps_find(int fd, uintptr_t addr, struct maps_entry *e)
{
	if (!atomic_load(&query_unsupported)) {
		int r = query_one(fd, addr, e);
		if (r != -2)
			return r;
		atomic_store(&query_unsupported, true);
	}
	/* a scan in a buffer of our own: no allocation */
	char buf[8192];
	size_t fill = 0;
	off_t pos = 0;
	for (;;) {
		ssize_t n = pread(fd, buf + fill, sizeof(buf) - 1 - fill, pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		pos += n;
		fill += (size_t)n;
		buf[fill] = '\0';
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n')) != NULL ||
				(n == 0 && *line)) {
			if (nl)
				*nl = '\0';
			if (maps_parse_line(line, e) == 0 && e->end > addr)
				return 1;
			line = nl ? nl + 1 : line + strlen(line);
		}
		if (n == 0)
			return 0;
		/* keep the partial line; a line longer than the buffer: skip */
		fill = strlen(line);
		if (fill >= sizeof(buf) - 1)
			fill = 0;
		memmove(buf, line, fill);
	}
}
