// SPDX-License-Identifier: BSD-3-Clause
/*
 * itest_pmem.c -- memory that rpmad makes persistent on the transport
 * under test, as a target application maps it: a file on the software
 * transport (rpmad writes its page cache back); the device DAX of
 * RPMAD_TEST_DEVDAX on RDMA, where a page cache cannot be made persistent
 * (the device's flush never reaches rpmad)
 */

#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "itest.h"

static const char *
devdax(void)
{
	const char *dev = getenv("RPMAD_TEST_DEVDAX");
	return dev && *dev ? dev : NULL;
}

bool
it_pmem_available(void)
{
	return !it_transport_is("verbs") || devdax() != NULL;
}

/* A device DAX maps whole units of its alignment. */
static size_t
devdax_alignment(const char *dev)
{
	char copy[256], path[300];
	(void) snprintf(copy, sizeof(copy), "%s", dev);
	(void) snprintf(path, sizeof(path), "/sys/bus/dax/devices/%s/align",
			basename(copy));
	FILE *f = fopen(path, "r");
	IT_ASSERT_MSG(f != NULL, "%s: no alignment in sysfs", dev);
	unsigned long a = 0;
	IT_ASSERT(fscanf(f, "%lu", &a) == 1 && a > 0);
	(void) fclose(f);
	return a;
}

void
it_pmem_map(const struct it_env *env, size_t size, struct it_pmem *pm)
{
	memset(pm, 0, sizeof(*pm));
	pm->size = size;
	pm->map_len = size;
	const char *dev = it_transport_is("verbs") ? devdax() : NULL;
	if (dev) {
		size_t a = devdax_alignment(dev);
		pm->map_len = (size + a - 1) / a * a;
		(void) snprintf(pm->path, sizeof(pm->path), "%s", dev);
		pm->fd = open(dev, O_RDWR);
	} else {
		const char *dir = getenv("RPMAD_TEST_FILE_DIR");
		if (dir == NULL || !*dir)
			dir = getenv("TOP_BUILDDIR");
		if (dir == NULL || !*dir)
			dir = env->dir;
		(void) snprintf(pm->path, sizeof(pm->path), "%s/pmem.XXXXXX",
				dir);
		pm->fd = mkstemp(pm->path);
		IT_ASSERT_MSG(pm->fd >= 0, "mkstemp %s", pm->path);
		IT_EQ(ftruncate(pm->fd, (off_t)size), 0);
	}
	IT_ASSERT_MSG(pm->fd >= 0, "open %s", pm->path);
	pm->ptr = mmap(NULL, pm->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			pm->fd, 0);
	IT_ASSERT_MSG(pm->ptr != MAP_FAILED, "mmap %s", pm->path);
	memset(pm->ptr, 0, size);
	if (dev) {
		(void) close(pm->fd);
		pm->fd = -1;
	}
}

uint8_t *
it_file_map(const struct it_env *env, const char *name, size_t size, int *fd)
{
	char path[300];
	(void) snprintf(path, sizeof(path), "%s/%s", env->dir, name);
	*fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	IT_ASSERT_MSG(*fd >= 0, "open %s", path);
	IT_EQ(ftruncate(*fd, (off_t) size), 0);
	uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd,
			0);
	IT_ASSERT_MSG(p != MAP_FAILED, "mmap %s", path);
	return p;
}

void
it_pmem_unmap(struct it_pmem *pm)
{
	IT_EQ(munmap(pm->ptr, pm->map_len), 0);
	if (pm->fd >= 0) {
		IT_EQ(close(pm->fd), 0);
		IT_EQ(unlink(pm->path), 0);
	}
	pm->ptr = NULL;
}
