// SPDX-License-Identifier: BSD-3-Clause
/*
 * memshare.c -- moving private pages into memfds and finding the files
 * behind shared mappings (see memshare.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <uthash.h>

#include "librpma.h"
#include "log_internal.h"
#include "maps.h"
#include "memshare.h"

#define MEMFD_NAME "rpmaclient"
#define MEMFD_MAPS_PREFIX "/memfd:" MEMFD_NAME

/* memfds this library made; kept open while some page still maps them */
struct memfd_entry {
	int fd;
	dev_t dev;
	uint64_t inode;
	bool seen;	/* mapped somewhere, in the last scan of maps */
	UT_hash_handle hh;
};

static pthread_mutex_t memshare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct memfd_entry *memfds;

static uintptr_t
page_size(void)
{
	static uintptr_t size;
	if (size == 0)
		size = (uintptr_t)sysconf(_SC_PAGESIZE);
	return size;
}

static struct memfd_entry *
memfd_find(const struct maps_entry *e)
{
	if (strncmp(e->path, MEMFD_MAPS_PREFIX, strlen(MEMFD_MAPS_PREFIX)))
		return NULL;
	struct memfd_entry *m = NULL;
	HASH_FIND(hh, memfds, &e->inode, sizeof(e->inode), m);
	if (m == NULL || m->dev != makedev(e->dev_major, e->dev_minor))
		return NULL;
	return m;
}

/* During the scan of maps: this memfd is still mapped. */
static void
memfd_mark(const struct maps_entry *e, void *arg)
{
	(void) arg;
	struct memfd_entry *m = memfd_find(e);
	if (m)
		m->seen = true;
}

static void
memfd_unmark_all(void)
{
	struct memfd_entry *m, *tmp;
	HASH_ITER(hh, memfds, m, tmp)
		m->seen = false;
}

/* Closes memfds no page maps any more (their registrations hold dups). */
static void
memfd_sweep(void)
{
	struct memfd_entry *m, *tmp;
	HASH_ITER(hh, memfds, m, tmp) {
		if (m->seen)
			continue;
		HASH_DEL(memfds, m);
		(void) close(m->fd);
		free(m);
	}
}

static int
plan_add_fd(struct memshare_plan *plan, int fd, bool owned, unsigned *index)
{
	for (unsigned i = 0; i < plan->nfds; i++) {
		if (plan->fds[i] == fd) {
			*index = i;
			return 0;
		}
	}
	if (plan->nfds == CTL_MAX_FDS) {
		RLOG_ERROR("the range spans more than %d files", CTL_MAX_FDS);
		return RPMA_E_PROVIDER;	/* 0.12's code for a failed registration */
	}
	plan->fds[plan->nfds] = fd;
	plan->fd_owned[plan->nfds] = owned;
	*index = plan->nfds++;
	return 0;
}

static int
plan_add_segment(struct memshare_plan *plan, int fd, bool owned,
		uint64_t offset, uint64_t length, bool file_backed)
{
	/* extend the previous segment when this one continues it */
	if (plan->nsegs > 0) {
		struct memshare_segment *last = &plan->segs[plan->nsegs - 1];
		if (plan->fds[last->fd_index] == fd &&
				last->offset + last->length == offset) {
			last->length += length;
			if (owned)
				(void) close(fd);
			return 0;
		}
	}
	if (plan->nsegs == MEMSHARE_MAX_SEGMENTS) {
		RLOG_ERROR("the range spans more than %d mappings",
				MEMSHARE_MAX_SEGMENTS);
		if (owned)
			(void) close(fd);
		return RPMA_E_PROVIDER;
	}
	unsigned index;
	int ret = plan_add_fd(plan, fd, owned, &index);
	if (ret) {
		if (owned)
			(void) close(fd);
		return ret;
	}
	plan->segs[plan->nsegs++] = (struct memshare_segment){
		.fd_index = index,
		.offset = offset,
		.length = length,
		.file_backed = file_backed,
	};
	return 0;
}

/*
 * Opens the file behind a shared mapping: the exact object through
 * /proc/self/map_files when allowed (root), else by its path, checked to
 * be the same inode.
 */
static int
open_mapped_file(const struct maps_entry *e)
{
	int flags = (e->write ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	char link[64];
	(void) snprintf(link, sizeof(link), "/proc/self/map_files/%jx-%jx",
			(uintmax_t)e->start, (uintmax_t)e->end);
	int fd = open(link, flags);
	if (fd < 0 && e->path[0] == '/')
		fd = open(e->path, flags);
	if (fd < 0) {
		RLOG_ERROR("cannot open the file behind the shared mapping at "
				"0x%jx (%s): %s", (uintmax_t)e->start,
				e->path[0] ? e->path : "anonymous",
				strerror(errno));
		return -1;
	}

	struct stat st;
	if (fstat(fd, &st) || st.st_ino != e->inode ||
			st.st_dev != makedev(e->dev_major, e->dev_minor)) {
		/* char devices (DAX) report the device's own inode in maps */
		if (!(S_ISCHR(st.st_mode) && st.st_ino == e->inode)) {
			RLOG_ERROR("the file %s is no longer the one mapped at "
					"0x%jx", e->path, (uintmax_t)e->start);
			(void) close(fd);
			return -1;
		}
	}
	return fd;
}

/*
 * Copies [src, src + len) into the memfd at offset 0, by the kernel: the
 * pages also hold bytes the application does not own (malloc's neighbours,
 * a sanitizer's redzones), which an instrumented memcpy would report.
 */
static int
copy_into_memfd(int fd, const void *src, size_t len)
{
	size_t done = 0;
	while (done < len) {
		long n = syscall(SYS_pwrite64, fd, (const char *)src + done,
				len - done, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/*
 * Moves [start, end) -- private pages, possibly of several
 * mappings with different protections -- into a new memfd at the same
 * address. The copy is made in a staging mapping which then replaces the
 * original in one mremap, so the range is never left unmapped.
 */
static int
move_to_memfd(uintptr_t start, uintptr_t end, const struct maps_entry *e,
		int count, struct memshare_plan *plan)
{
	size_t len = end - start;
	int fd = memfd_create(MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		RLOG_ERROR("memfd_create: %s", strerror(errno));
		return errno == ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
	}
	struct memfd_entry *m = calloc(1, sizeof(*m));
	if (m == NULL) {
		(void) close(fd);
		return RPMA_E_NOMEM;
	}
	int ret = RPMA_E_PROVIDER;
	if (ftruncate(fd, (off_t)len)) {
		RLOG_ERROR("cannot size a memfd to %zu bytes: %s", len,
				strerror(errno));
		goto err;
	}
	/* rpmad maps these pages: they must never shrink under it */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		RLOG_ERROR("cannot seal a memfd: %s", strerror(errno));
		goto err;
	}
	if (copy_into_memfd(fd, (const void *)start, len)) {
		int err = errno;
		RLOG_ERROR("cannot copy %zu bytes into a memfd: %s", len,
				strerror(err));
		ret = err == ENOMEM || err == ENOSPC ? RPMA_E_NOMEM :
			RPMA_E_PROVIDER;
		goto err;
	}
	void *stage = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			0);
	if (stage == MAP_FAILED) {
		RLOG_ERROR("mmap of %zu bytes: %s", len, strerror(errno));
		ret = errno == ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
		goto err;
	}
	if (mremap(stage, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			(void *)start) == MAP_FAILED) {
		RLOG_ERROR("cannot move the pages at 0x%jx into shared memory: "
				"%s", (uintmax_t)start, strerror(errno));
		(void) munmap(stage, len);
		goto err;
	}
	/* give every piece its original protection back */
	for (int i = 0; i < count; i++) {
		uintptr_t s = e[i].start > start ? e[i].start : start;
		uintptr_t t = e[i].end < end ? e[i].end : end;
		if (s >= t || e[i].write)
			continue;
		int prot = PROT_READ | (e[i].exec ? PROT_EXEC : 0);
		if (mprotect((void *)s, t - s, prot))
			RLOG_WARNING("mprotect(0x%jx): %s", (uintmax_t)s,
					strerror(errno));
	}

	struct stat st;
	if (fstat(fd, &st) == 0) {
		m->fd = fd;
		m->dev = st.st_dev;
		m->inode = st.st_ino;
		m->seen = true;
		HASH_ADD(hh, memfds, inode, sizeof(m->inode), m);
	} else {
		free(m);
		m = NULL;
	}
	/* the table keeps fd open; without an entry the plan owns it */
	return plan_add_segment(plan, fd, m == NULL, 0, len, false);

err:
	free(m);
	(void) close(fd);
	return ret;
}

/*
 * Private mappings -- anonymous memory, the heap, and copy-on-write file
 * mappings such as a program's data -- are moved into a memfd: their
 * stores never reached a file, so from the application's side nothing
 * changes (except that pages it has not written yet stop showing later
 * changes of the file, which is why that case is logged).
 */
static bool
is_movable(const struct maps_entry *e)
{
	if (e->shared)
		return false;
	return e->path[0] == '\0' || e->path[0] == '/' ||
		strcmp(e->path, "[heap]") == 0 ||
		strncmp(e->path, "[anon:", 6) == 0;
}

/* Whether [start, end) overlaps the calling thread's own stack. */
static bool
overlaps_own_stack(uintptr_t start, uintptr_t end)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	bool overlap = false;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return false;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0)
		overlap = start < (uintptr_t)addr + size &&
			(uintptr_t)addr < end;
	(void) pthread_attr_destroy(&attr);
	return overlap;
}

/* Why a mapping cannot be shared, or NULL when it can. */
static const char *
refusal(const struct maps_entry *e)
{
	if (!e->read)
		return "it cannot be read";
	if (strncmp(e->path, "[stack", 6) == 0)
		return "it is the main thread's stack";
	if (!e->shared && !is_movable(e))
		return "it is a special kernel mapping";
	if (e->shared && e->path[0] == '[')
		return "it is a special kernel mapping";
	return NULL;
}

int
memshare_prepare(void *ptr, size_t size, struct memshare_plan *plan)
{
	uintptr_t ps = page_size();
	uintptr_t addr = (uintptr_t)ptr;
	if (addr + size < addr || addr + size > UINTPTR_MAX - ps) {
		RLOG_ERROR("the range at %p of %zu bytes wraps around", ptr,
				size);
		return RPMA_E_INVAL;
	}
	uintptr_t start = addr & ~(ps - 1);
	uintptr_t end = (addr + size + ps - 1) & ~(ps - 1);

	memset(plan, 0, sizeof(*plan));
	plan->start = start;
	plan->length = end - start;

	/* our own frames would change between the copy and the move */
	if (overlaps_own_stack(start, end)) {
		RLOG_ERROR("memory at %p cannot be shared with rpmad: it is on "
				"the calling thread's stack", ptr);
		return RPMA_E_PROVIDER;
	}

	pthread_mutex_lock(&memshare_lock);

	/* one pass: the range's mappings, and which memfds are still used */
	struct maps_entry *e = NULL;
	memfd_unmark_all();
	int count = maps_scan(start, end, &e, memfd_mark, NULL);
	if (count >= 0)
		memfd_sweep();
	if (count < 0) {
		RLOG_ERROR("cannot read /proc/self/maps: %s", strerror(errno));
		pthread_mutex_unlock(&memshare_lock);
		return RPMA_E_PROVIDER;
	}

	int ret = 0;
	uintptr_t cursor = start;
	int i = 0;
	while (ret == 0 && cursor < end) {
		if (i == count || e[i].start > cursor) {
			RLOG_ERROR("0x%jx is not mapped: the range at %p of %zu "
					"bytes is not all memory",
					(uintmax_t)cursor, ptr, size);
			ret = RPMA_E_PROVIDER;
			break;
		}
		const char *why = refusal(&e[i]);
		if (why != NULL) {
			RLOG_ERROR("memory at 0x%jx (%s) cannot be shared with "
					"rpmad: %s", (uintmax_t)cursor,
					e[i].path[0] ? e[i].path : "anonymous",
					why);
			ret = RPMA_E_PROVIDER;
			break;
		}

		uintptr_t piece_end = e[i].end < end ? e[i].end : end;
		uint64_t delta = cursor - e[i].start;
		struct memfd_entry *m;

		if (is_movable(&e[i])) {
			/* gather the run of private mappings */
			int j = i;
			while (j + 1 < count && e[j + 1].start == e[j].end &&
					e[j + 1].start < end &&
					is_movable(&e[j + 1]) &&
					refusal(&e[j + 1]) == NULL)
				j++;
			piece_end = e[j].end < end ? e[j].end : end;
			for (int k = i; k <= j; k++) {
				if (e[k].path[0] == '/')
					RLOG_INFO("the private mapping of %s at "
							"0x%jx is copied into "
							"shared memory: later "
							"changes of the file do "
							"not show through it",
							e[k].path,
							(uintmax_t)e[k].start);
			}
			ret = move_to_memfd(cursor, piece_end, &e[i], j - i + 1,
					plan);
			i = j;
		} else if ((m = memfd_find(&e[i])) != NULL) {
			ret = plan_add_segment(plan, m->fd, false,
					e[i].offset + delta, piece_end - cursor,
					false);
		} else {
			int fd = open_mapped_file(&e[i]);
			if (fd < 0)
				ret = RPMA_E_PROVIDER;
			else
				ret = plan_add_segment(plan, fd, true,
						e[i].offset + delta,
						piece_end - cursor, true);
		}
		cursor = piece_end;
		i++;
	}
	free(e);

	if (ret) {
		memshare_done(plan);
		return ret;
	}
	return 0;
}

void
memshare_done(struct memshare_plan *plan)
{
	for (unsigned i = 0; i < plan->nfds; i++) {
		if (plan->fd_owned[i])
			(void) close(plan->fds[i]);
	}
	plan->nfds = 0;
	plan->nsegs = 0;
	pthread_mutex_unlock(&memshare_lock);
}
