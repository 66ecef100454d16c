// SPDX-License-Identifier: BSD-3-Clause
/*
 * maps.c -- parsing /proc/self/maps
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "maps.h"

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

/* Calls fn on every entry of /proc/self/maps until it returns non-zero. */
static int
maps_foreach(int (*fn)(const struct maps_entry *e, void *arg), void *arg)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (f == NULL)
		return -1;

	char *line = NULL;
	size_t cap = 0;
	int ret = 0;
	struct maps_entry e;
	while (getline(&line, &cap, f) > 0) {
		if (maps_parse_line(line, &e))
			continue;
		ret = fn(&e, arg);
		if (ret)
			break;
	}
	free(line);
	(void) fclose(f);
	return ret < 0 ? -1 : ret;
}

struct range_collect {
	uintptr_t start, end;
	struct maps_entry *entries;
	int count, cap;
};

static int
collect_in_range(const struct maps_entry *e, void *arg)
{
	struct range_collect *rc = arg;
	if (e->end <= rc->start)
		return 0;
	if (e->start >= rc->end)
		return 1;	/* entries come in address order: done */
	if (rc->count == rc->cap) {
		int cap = rc->cap ? rc->cap * 2 : 8;
		struct maps_entry *n = realloc(rc->entries,
				(size_t)cap * sizeof(*n));
		if (n == NULL)
			return -1;
		rc->entries = n;
		rc->cap = cap;
	}
	rc->entries[rc->count++] = *e;
	return 0;
}

int
maps_read_range(uintptr_t start, uintptr_t end, struct maps_entry **out)
{
	struct range_collect rc = { .start = start, .end = end };
	if (maps_foreach(collect_in_range, &rc) < 0) {
		int err = errno;
		free(rc.entries);
		errno = err ? err : ENOMEM;
		return -1;
	}
	*out = rc.entries;
	return rc.count;
}

struct inode_find {
	dev_t dev;
	uint64_t inode;
};

static int
match_inode(const struct maps_entry *e, void *arg)
{
	const struct inode_find *f = arg;
	return e->inode == f->inode &&
		makedev(e->dev_major, e->dev_minor) == f->dev;
}

int
maps_inode_mapped(dev_t dev, uint64_t inode)
{
	struct inode_find f = { .dev = dev, .inode = inode };
	return maps_foreach(match_inode, &f);
}
