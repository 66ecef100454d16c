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

int
maps_scan(uintptr_t start, uintptr_t end, struct maps_entry **out,
		void (*seen)(const struct maps_entry *e, void *arg), void *arg)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (f == NULL)
		return -1;

	struct maps_entry *entries = NULL;
	int count = 0, cap = 0;
	char *line = NULL;
	size_t linecap = 0;
	struct maps_entry e;
	int ret = 0;
	while (getline(&line, &linecap, f) > 0) {
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
				errno = ENOMEM;
				ret = -1;
				break;
			}
			entries = n;
		}
		entries[count++] = e;
	}
	int err = errno;
	free(line);
	(void) fclose(f);
	if (ret) {
		free(entries);
		errno = err;
		return -1;
	}
	*out = entries;
	return count;
}
