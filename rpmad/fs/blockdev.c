// SPDX-License-Identifier: BSD-3-Clause
/*
 * blockdev.c -- the devices under a block device, from sysfs (blockdev.h)
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs/blockdev.h"

/* device-mapper over md over dm...: deeper than anyone stacks */
#define MAX_DEPTH 8

/* A small sysfs attribute, without its newline; 0 or -errno. */
static int
read_attr(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX + 32];
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
			(int)sizeof(path))
		return -ENAMETOOLONG;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int e = errno;
	(void) close(fd);
	if (n < 0)
		return -e;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

static bool
has_attr(const char *dir, const char *name)
{
	char path[PATH_MAX + 32];
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
			(int)sizeof(path))
		return false;
	return access(path, F_OK) == 0;
}

/* Block devices whose data a process serves (nbd: a socket's server). */
static bool
served_name(const char *name)
{
	static const char *const prefixes[] = { "nbd", "ublkb" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

struct walk {
	struct blockdev_lower *out;
	size_t max, n;
};

/* One more device at the bottom; NULL when out is full (it is dropped). */
static struct blockdev_lower *
add(struct walk *w, enum blockdev_kind kind, const char *name)
{
	if (w->n >= w->max)
		return NULL;
	struct blockdev_lower *l = &w->out[w->n++];
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	(void) snprintf(l->name, sizeof(l->name), "%.*s",
			(int)sizeof(l->name) - 1, name);
	return l;
}

static int walk_dev(struct walk *w, unsigned major, unsigned minor,
		int depth);

/* The members of a device-mapper, md, bcache... device (its slaves). */
static int
walk_slaves(struct walk *w, const char *dir, int depth)
{
	char path[PATH_MAX + 16];
	if (snprintf(path, sizeof(path), "%s/slaves", dir) >=
			(int)sizeof(path))
		return 0;
	DIR *d = opendir(path);
	if (d == NULL)
		return 0;
	int found = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char member[300], devnum[32];
		unsigned ma, mi;
		(void) snprintf(member, sizeof(member), "/sys/class/block/%s",
				e->d_name);
		if (read_attr(member, "dev", devnum, sizeof(devnum)) ||
				sscanf(devnum, "%u:%u", &ma, &mi) != 2)
			(void) add(w, BLOCKDEV_UNKNOWN, e->d_name);
		else
			(void) walk_dev(w, ma, mi, depth + 1);
		found++;
	}
	(void) closedir(d);
	return found;
}

static int
walk_dev(struct walk *w, unsigned major, unsigned minor, int depth)
{
	char link[64], dir[PATH_MAX];
	(void) snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major,
			minor);
	if (realpath(link, dir) == NULL)
		return -errno;
	/* a partition: its disk is what holds its data */
	if (has_attr(dir, "partition")) {
		char *slash = strrchr(dir, '/');
		if (slash == NULL || slash == dir)
			return -ENOENT;
		*slash = '\0';
	}
	const char *name = strrchr(dir, '/') + 1;
	if (depth > MAX_DEPTH) {
		(void) add(w, BLOCKDEV_UNKNOWN, name);
		return 0;
	}
	if (has_attr(dir, "loop/backing_file")) {
		struct blockdev_lower *l = add(w, BLOCKDEV_LOOP, name);
		if (l && read_attr(dir, "loop/backing_file", l->backing_path,
				sizeof(l->backing_path)))
			l->backing_path[0] = '\0';
		return 0;
	}
	if (served_name(name)) {
		(void) add(w, BLOCKDEV_SERVED, name);
		return 0;
	}
	if (walk_slaves(w, dir, depth) == 0)
		(void) add(w, BLOCKDEV_DISK, name);
	return 0;
}

int
blockdev_lowers(unsigned major, unsigned minor, struct blockdev_lower *out,
		size_t max)
{
	struct walk w = { .out = out, .max = max };
	int ret = walk_dev(&w, major, minor, 0);
	if (ret)
		return ret;
	return (int)w.n;
}
