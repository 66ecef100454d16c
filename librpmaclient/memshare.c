// SPDX-License-Identifier: BSD-3-Clause
/*
 * memshare.c -- moving private pages into memfds and finding the files
 * behind shared mappings (see memshare.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* a table that cannot grow is an error of the call, not exit() */
static bool hash_oom;
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) ((void)(elt), hash_oom = true)
#include <uthash.h>

#include "librpma.h"
#include "log_internal.h"
#include "maps.h"
#include "memshare.h"

#define MEMFD_NAME "rpmaclient"
#define MEMFD_MAPS_PREFIX "/memfd:" MEMFD_NAME

/*
 * Private pages are moved into memfds so that neighbouring moves land in
 * neighbouring offsets of one file: the kernel then merges their mappings
 * into one, and a process can hold as many registrations as it likes
 * without one mapping each (vm.max_map_count). A memfd is made with room
 * (MEMFD_ROOM) before and after its first pages, sparse and free until
 * used; its used offsets [lo, hi) only ever grow at either end, so an
 * offset is written once and never shared by two addresses.
 */
#define MEMFD_ROOM	(32ull << 20)
/* a move takes whole chunks of private memory around the range (bounded
 * by its mappings), so that nearby registrations share one mapping */
#define MOVE_CHUNK	(64u << 10)
/* how often (in registrations) memfds no page maps any more are closed */
#define SWEEP_EVERY	256

/* memfds this library made; kept open while some page still maps them */
struct memfd_entry {
	int fd;
	dev_t dev;
	uint64_t inode;
	uint64_t size;		/* of the file */
	uint64_t lo, hi;	/* offsets in use */
	uintptr_t delta;	/* address - offset where the pages were put */
	uintptr_t start_addr, end_addr;	/* lo + delta, hi + delta */
	bool by_start, by_end;	/* in the address tables */
	bool seen;	/* mapped somewhere, in the last scan of maps */
	UT_hash_handle hh;
	UT_hash_handle hh_start;
	UT_hash_handle hh_end;
};

static pthread_mutex_t memshare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct memfd_entry *memfds;
static struct memfd_entry *memfds_by_start;	/* lo + delta */
static struct memfd_entry *memfds_by_end;	/* hi + delta */
static unsigned prepares_since_sweep;

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

/* Leaves the address tables (its pages there may be gone). */
static void
memfd_unindex(struct memfd_entry *m)
{
	if (m->by_start)
		HASH_DELETE(hh_start, memfds_by_start, m);
	if (m->by_end)
		HASH_DELETE(hh_end, memfds_by_end, m);
	m->by_start = m->by_end = false;
}

/* Files m under the addresses its used offsets were put at. */
static void
memfd_index(struct memfd_entry *m)
{
	memfd_unindex(m);
	m->start_addr = (uintptr_t)m->lo + m->delta;
	m->end_addr = (uintptr_t)m->hi + m->delta;
	struct memfd_entry *old = NULL;
	/* a newer memfd at the same address replaces an older one */
	HASH_FIND(hh_start, memfds_by_start, &m->start_addr,
			sizeof(m->start_addr), old);
	if (old) {
		HASH_DELETE(hh_start, memfds_by_start, old);
		old->by_start = false;
	}
	old = NULL;
	HASH_FIND(hh_end, memfds_by_end, &m->end_addr, sizeof(m->end_addr),
			old);
	if (old) {
		HASH_DELETE(hh_end, memfds_by_end, old);
		old->by_end = false;
	}
	/* without an entry here the next move makes a memfd of its own */
	hash_oom = false;
	HASH_ADD(hh_start, memfds_by_start, start_addr, sizeof(m->start_addr),
			m);
	m->by_start = !hash_oom;
	hash_oom = false;
	HASH_ADD(hh_end, memfds_by_end, end_addr, sizeof(m->end_addr), m);
	m->by_end = !hash_oom;
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
		memfd_unindex(m);
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
	if (plan->nsegs == MR_MAX_SEGMENTS) {
		RLOG_ERROR("the range spans more than %d mappings",
				MR_MAX_SEGMENTS);
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
 * Whether fd is the file mapped at e, asked of the kernel: a page of fd
 * mapped here shows in maps with the same device and inode as e. Stacking
 * file systems need this: overlayfs maps the file of the layer below, so
 * maps names that layer's device while fstat of the overlay's file (even
 * one opened through map_files) reports the overlay's.
 */
static bool
maps_same_file(int fd, const struct maps_entry *e)
{
	void *p = mmap(NULL, page_size(), PROT_READ, MAP_SHARED, fd,
			(off_t)e->offset);
	if (p == MAP_FAILED)
		return false;
	struct maps_entry *found = NULL;
	uintptr_t at = (uintptr_t)p;
	bool same = maps_scan(at, at + page_size(), &found, NULL, NULL) == 1 &&
		found[0].inode == e->inode &&
		found[0].dev_major == e->dev_major &&
		found[0].dev_minor == e->dev_minor;
	free(found);
	(void) munmap(p, page_size());
	return same;
}

/*
 * Opens the file behind a shared mapping: the exact object through
 * /proc/self/map_files when allowed (root), else by its path, checked to
 * be the same inode (by fstat, or where a stacking file system makes
 * that disagree with maps, by mapping it).
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
		if (!(S_ISCHR(st.st_mode) && st.st_ino == e->inode) &&
				!maps_same_file(fd, e)) {
			RLOG_ERROR("the file %s is no longer the one mapped at "
					"0x%jx", e->path, (uintmax_t)e->start);
			(void) close(fd);
			return -1;
		}
	}
	return fd;
}

/*
 * Copies [src, src + len) into the memfd at `offset`, by the kernel: the
 * pages also hold bytes the application does not own (malloc's neighbours,
 * a sanitizer's redzones), which an instrumented memcpy would report.
 */
static int
copy_into_memfd(int fd, uint64_t offset, const void *src, size_t len)
{
	size_t done = 0;
	while (done < len) {
		long n = syscall(SYS_pwrite64, fd, (const char *)src + done,
				len - done, (off_t)(offset + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* A new memfd with room around `len` bytes meant for address `start`. */
static int
memfd_new(uintptr_t start, uint64_t len, struct memfd_entry **m_out)
{
	int fd = memfd_create(MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		RLOG_ERROR("memfd_create: %s", strerror(errno));
		return errno == ENOMEM || errno == EMFILE || errno == ENFILE ?
			RPMA_E_NOMEM : RPMA_E_PROVIDER;
	}
	struct memfd_entry *m = calloc(1, sizeof(*m));
	if (m == NULL) {
		(void) close(fd);
		return RPMA_E_NOMEM;
	}
	m->size = len + 2 * MEMFD_ROOM;
	if (ftruncate(fd, (off_t)m->size)) {
		RLOG_ERROR("cannot size a memfd to %ju bytes: %s",
				(uintmax_t)m->size, strerror(errno));
		goto err;
	}
	/* rpmad maps these pages: they must never shrink under it */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		RLOG_ERROR("cannot seal a memfd: %s", strerror(errno));
		goto err;
	}
	struct stat st;
	if (fstat(fd, &st)) {
		RLOG_ERROR("fstat of a memfd: %s", strerror(errno));
		goto err;
	}
	m->fd = fd;
	m->dev = st.st_dev;
	m->inode = st.st_ino;
	m->lo = m->hi = MEMFD_ROOM;
	m->delta = start - (uintptr_t)MEMFD_ROOM;
	m->seen = true;
	hash_oom = false;
	HASH_ADD(hh, memfds, inode, sizeof(m->inode), m);
	if (hash_oom) {
		free(m);
		(void) close(fd);
		return RPMA_E_NOMEM;
	}
	*m_out = m;
	return 0;

err:
	free(m);
	(void) close(fd);
	return RPMA_E_PROVIDER;
}

/*
 * Where the pages of [start, end) go: right after the used offsets of the
 * memfd whose pages end at `start`, right before those of the one whose
 * pages begin at `end` (either way the mappings merge), or a new memfd.
 */
static int
memfd_place(uintptr_t start, uintptr_t end, struct memfd_entry **m_out,
		uint64_t *offset)
{
	uint64_t len = end - start;
	struct memfd_entry *m = NULL;
	HASH_FIND(hh_end, memfds_by_end, &start, sizeof(start), m);
	if (m != NULL && m->size - m->hi >= len) {
		*m_out = m;
		*offset = m->hi;
		return 0;
	}
	m = NULL;
	HASH_FIND(hh_start, memfds_by_start, &end, sizeof(end), m);
	if (m != NULL && m->lo >= len) {
		*m_out = m;
		*offset = m->lo - len;
		return 0;
	}
	int ret = memfd_new(start, len, m_out);
	if (ret == 0)
		*offset = (*m_out)->lo;
	return ret;
}

/*
 * Moves [start, end) -- private pages, possibly of several mappings with
 * different protections -- into a memfd at the same address, and adds the
 * part [seg_start, seg_end) the registration covers to the plan. The copy
 * is made in a staging mapping which then replaces the original in one
 * mremap, so the range is never left unmapped.
 */
static int
move_to_memfd(uintptr_t start, uintptr_t end, const struct maps_entry *e,
		int count, uintptr_t seg_start, uintptr_t seg_end,
		struct memshare_plan *plan)
{
	size_t len = end - start;
	struct memfd_entry *m;
	uint64_t offset;
	int ret = memfd_place(start, end, &m, &offset);
	if (ret)
		return ret;
	if (copy_into_memfd(m->fd, offset, (const void *)start, len)) {
		int err = errno;
		RLOG_ERROR("cannot copy %zu bytes into a memfd: %s", len,
				strerror(err));
		return err == ENOMEM || err == ENOSPC ? RPMA_E_NOMEM :
			RPMA_E_PROVIDER;
	}
	void *stage = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			m->fd, (off_t)offset);
	if (stage == MAP_FAILED) {
		RLOG_ERROR("mmap of %zu bytes: %s", len, strerror(errno));
		return errno == ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
	}
	if (mremap(stage, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			(void *)start) == MAP_FAILED) {
		RLOG_ERROR("cannot move the pages at 0x%jx into shared memory: "
				"%s", (uintmax_t)start, strerror(errno));
		(void) munmap(stage, len);
		return errno == ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
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

	/* the offsets are used now: never again for other pages */
	if (m->lo == m->hi) {
		m->lo = offset;
		m->hi = offset + len;
	} else if (offset == m->hi) {
		m->hi += len;
	} else {
		m->lo = offset;
	}
	memfd_index(m);
	return plan_add_segment(plan, m->fd, false,
			offset + (seg_start - start), seg_end - seg_start,
			false);
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

/*
 * Whether [start, end) overlaps the calling thread's own stack. A thread's
 * stack does not move, so it is looked up once per thread (for the main
 * thread glibc reads /proc/self/maps to find it).
 */
static bool
overlaps_own_stack(uintptr_t start, uintptr_t end)
{
	static __thread bool known;
	static __thread uintptr_t lo, hi;
	if (!known) {
		pthread_attr_t attr;
		void *addr;
		size_t size;
		if (pthread_getattr_np(pthread_self(), &attr) != 0)
			return false;
		if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
			lo = (uintptr_t)addr;
			hi = lo + size;
			known = true;
		}
		(void) pthread_attr_destroy(&attr);
		if (!known)
			return false;
	}
	return start < hi && lo < end;
}

/*
 * The loading thread (usually the main one) learns its stack at once:
 * glibc reads maps for it with buffers of its own, which must not appear
 * in the middle of the first registration, between the application's
 * mappings.
 */
__attribute__((constructor)) static void
learn_own_stack(void)
{
	(void) overlaps_own_stack(0, 0);
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

/* A full scan of maps now and then closes the memfds nothing maps. */
static void
memfd_maybe_sweep(void)
{
	if (++prepares_since_sweep < SWEEP_EVERY)
		return;
	prepares_since_sweep = 0;
	struct maps_entry *none = NULL;
	memfd_unmark_all();
	/* an empty range: only the marks are wanted */
	if (maps_scan(0, 0, &none, memfd_mark, NULL) >= 0)
		memfd_sweep();
	free(none);
}

/* Whether a private mapping may be moved as a whole chunk around a range. */
static bool
chunk_movable(const struct maps_entry *e)
{
	return is_movable(e) && refusal(e) == NULL && e->path[0] != '/';
}

int
memshare_prepare(void *ptr, size_t size, struct memshare_plan *plan)
{
	uintptr_t ps = page_size();
	uintptr_t addr = (uintptr_t)ptr;
	if (addr + size < addr ||
			addr + size > UINTPTR_MAX - ps - MOVE_CHUNK) {
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
	/* private memory around the range moves with it, by whole chunks */
	uintptr_t cstart = start & ~((uintptr_t)MOVE_CHUNK - 1);
	uintptr_t cend = (end + MOVE_CHUNK - 1) & ~((uintptr_t)MOVE_CHUNK - 1);
	if (overlaps_own_stack(cstart, cend)) {
		cstart = start;
		cend = end;
	}

	pthread_mutex_lock(&memshare_lock);
	memfd_maybe_sweep();

	struct maps_entry *e = NULL;
	int count = maps_query(cstart, cend, &e);
	if (count < 0) {
		RLOG_ERROR("cannot read /proc/self/maps: %s", strerror(errno));
		pthread_mutex_unlock(&memshare_lock);
		return RPMA_E_PROVIDER;
	}

	int ret = 0;
	uintptr_t cursor = start;
	int i = 0;
	while (i < count && e[i].end <= cursor)
		i++;
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
			/*
			 * and the chunks around it, of anonymous memory and
			 * inside the same mappings only: a neighbouring
			 * mapping may be another thread's stack
			 */
			uintptr_t move_start = cursor, move_end = piece_end;
			if (cursor == start && chunk_movable(&e[i]))
				move_start = e[i].start > cstart ? e[i].start :
					cstart;
			if (piece_end == end && chunk_movable(&e[j]))
				move_end = e[j].end < cend ? e[j].end : cend;
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
			ret = move_to_memfd(move_start, move_end, &e[i],
					j - i + 1, cursor, piece_end, plan);
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

/* ------------------------------------------------------------ populate */

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

int
memshare_populate(const struct memshare_plan *plan, bool write)
{
	int advice = write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ;
	if (madvise((void *)plan->start, plan->length, advice) == 0)
		return 0;
	int err = errno;
	if (err == EINVAL) {
		/*
		 * A kernel before 5.14, or a mapping that cannot be
		 * populated (device memory: not charged to anyone). Not
		 * touched by hand: a wrong guess about a mapping would
		 * crash the application.
		 */
		static bool said;
		if (!said)
			RLOG_INFO("memory at 0x%jx is registered without "
					"faulting it in first (MADV_POPULATE: "
					"%s)", (uintmax_t)plan->start,
					strerror(err));
		said = true;
		return 0;
	}
	RLOG_ERROR("cannot fault in the %" PRIu64 " bytes at 0x%jx before "
			"registering them (they are charged to this process, "
			"not to rpmad): %s", plan->length,
			(uintmax_t)plan->start, strerror(err));
	return err == ENOMEM || err == ENOSPC || err == EDQUOT ?
		RPMA_E_NOMEM : RPMA_E_PROVIDER;
}
