// SPDX-License-Identifier: BSD-3-Clause
/*
 * mr_view.c -- windows of client memfds, mapped once for all the
 * registrations inside them (see mr_view.h)
 */

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uthash.h>

#include "objects/mr_holes.h"
#include "objects/mr_view.h"

struct view_key {
	uint64_t dev;
	uint64_t ino;
	uint64_t window;	/* offset / MR_VIEW_WINDOW */
};

struct mr_view {
	struct view_key key;
	uint8_t *base;		/* the window's first byte */
	uint64_t len;		/* mapped: the window, or up to the file's end */
	bool writable;
	bool guarded; /* against holes (mr_holes.h) */
	unsigned refs;
	UT_hash_handle hh;
};

static struct mr_view *views;

uint8_t *
mr_view_get(int fd, uint64_t offset, uint64_t len, bool writable, bool guarded,
		struct mr_view **view)
{
	uint64_t window = offset / MR_VIEW_WINDOW;
	uint64_t wstart = window * MR_VIEW_WINDOW;
	if (len > MR_VIEW_WINDOW || offset - wstart > MR_VIEW_WINDOW - len)
		return NULL;

	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return NULL;
	struct view_key key;
	memset(&key, 0, sizeof(key));
	key.dev = (uint64_t)st.st_dev;
	key.ino = (uint64_t)st.st_ino;
	key.window = window;

	struct mr_view *v = NULL;
	HASH_FIND(hh, views, &key, sizeof(key), v);
	if (v != NULL) {
		if (offset + len > wstart + v->len ||
				(writable && !v->writable) ||
				(guarded && !v->guarded))
			return NULL;
		v->refs++;
		*view = v;
		return v->base + (offset - wstart);
	}

	/*
	 * The library's memfds are sealed against shrinking: their end stays
	 * where it is. Another file cut short under the view loses pages as
	 * a mapping of its own would (mr_io.h).
	 */
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t size = (uint64_t)st.st_size & ~(page - 1);
	if (size <= wstart || offset + len > size)
		return NULL;
	uint64_t maplen = size - wstart < MR_VIEW_WINDOW ? size - wstart :
		MR_VIEW_WINDOW;
	int mode = fcntl(fd, F_GETFL);
	bool rw = mode >= 0 && (mode & O_ACCMODE) == O_RDWR;
	if (writable && !rw)
		return NULL;
	v = calloc(1, sizeof(*v));
	if (v == NULL)
		return NULL;
	void *p = mmap(NULL, maplen, PROT_READ | (rw ? PROT_WRITE : 0),
			MAP_SHARED, fd, (off_t)wstart);
	if (p == MAP_FAILED) {
		free(v);
		return NULL;
	}
	if (guarded && mr_holes_guard(p, maplen)) {
		(void) munmap(p, maplen);
		free(v);
		return NULL;
	}
	v->key = key;
	v->base = p;
	v->len = maplen;
	v->writable = rw;
	v->guarded = guarded;
	v->refs = 1;
	HASH_ADD(hh, views, key, sizeof(v->key), v);
	*view = v;
	return v->base + (offset - wstart);
}

void
mr_view_put(struct mr_view *v)
{
	if (--v->refs > 0)
		return;
	HASH_DEL(views, v);
	(void) munmap(v->base, v->len);
	free(v);
}
