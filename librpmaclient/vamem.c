// SPDX-License-Identifier: BSD-3-Clause
/*
 * vamem.c -- the memfd whose offsets are virtual addresses: moving
 * private pages in and back out, counting the registrations that hold
 * them, and private copies for a child of fork() (vamem.h)
 */

#include <bsd/sys/tree.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "librpma.h"
#include "log_internal.h"
#include "mapattr.h"
#include "vamem.h"

/*
 * Offsets reach every user address there is (57 bits with five-level
 * paging); the file is sparse, so its size costs nothing.
 */
#define VAMEM_SIZE	(1ull << 57)
/* pages moved at a time: what a move needs beyond the registration */
#define MOVE_CHUNK	(2ull << 20)

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

/* A run of moved pages held by the same registrations. */
struct extent {
	RB_ENTRY(extent) link;
	uintptr_t start, end;
	unsigned refs;
	struct mapattr attr;	/* of the private mapping they came from */
};

static int
extent_cmp(struct extent *a, struct extent *b)
{
	return a->start < b->start ? -1 : a->start > b->start;
}

RB_HEAD(extents, extent);
/* static, and quiet about the operations this file does not use */
RB_GENERATE_INTERNAL(extents, extent, link, extent_cmp,
		__attribute__((unused)) static)

static pthread_mutex_t vamem_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct extents extents = RB_INITIALIZER(&extents);
static int vfd = -1;
static dev_t vdev;
static ino_t vino;

void
vamem_lock(void)
{
	pthread_mutex_lock(&vamem_mutex);
}

void
vamem_unlock(void)
{
	pthread_mutex_unlock(&vamem_mutex);
}

static int
rpma_err(int err)
{
	return err == ENOMEM || err == ENOSPC || err == EMFILE ||
		err == ENFILE || err == EAGAIN ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
}

int
vamem_fd(void)
{
	if (vfd >= 0)
		return vfd;
	int fd = memfd_create("rpmaclient", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		int err = errno;
		RLOG_ERROR("memfd_create: %s", strerror(err));
		return rpma_err(err);
	}
	struct stat st;
	/* rpmad maps these pages: the file must never shrink under it */
	if (ftruncate(fd, (off_t)VAMEM_SIZE) || fcntl(fd, F_ADD_SEALS,
			F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) ||
			fstat(fd, &st)) {
		int err = errno;
		RLOG_ERROR("cannot prepare the memfd for registered pages: %s",
				strerror(err));
		(void) close(fd);
		return rpma_err(err);
	}
	vfd = fd;
	vdev = st.st_dev;
	vino = st.st_ino;
	return vfd;
}

bool
vamem_holds(const struct maps_entry *e)
{
	return vfd >= 0 && e->shared && e->inode == (uint64_t)vino &&
		makedev(e->dev_major, e->dev_minor) == vdev &&
		e->offset == (uint64_t)e->start;
}

/* ------------------------------------------------- write protection */

/*
 * Stores other threads make into pages while they are copied must not be
 * lost: the pages are write-protected through a userfaultfd, so that such
 * a store waits until the pages are in their new place (and lands there).
 * Where the process may not make one (a seccomp filter, an old kernel),
 * the copy goes on unprotected (librpmaclient(7) says what that means).
 */
struct wprotect {
	int fd;		/* -1: not protected */
	uintptr_t start, end;
};

static void
wp_begin(struct wprotect *wp, uintptr_t start, uintptr_t end, bool shmem)
{
	wp->fd = -1;
	wp->start = start;
	wp->end = end;
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK |
			UFFD_USER_MODE_ONLY);
	if (fd < 0 && errno == EINVAL)	/* a kernel before 5.11 */
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = shmem ? UFFD_FEATURE_WP_HUGETLBFS_SHMEM : 0,
	};
	struct uffdio_register reg = {
		.range = { .start = start, .len = end - start },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	struct uffdio_writeprotect prot = {
		.range = { .start = start, .len = end - start },
		.mode = UFFDIO_WRITEPROTECT_MODE_WP,
	};
	if (ioctl(fd, UFFDIO_API, &api) || ioctl(fd, UFFDIO_REGISTER, &reg)) {
		(void) close(fd);
		return;
	}
	if (ioctl(fd, UFFDIO_WRITEPROTECT, &prot)) {
		(void) ioctl(fd, UFFDIO_UNREGISTER, &reg.range);
		(void) close(fd);
		return;
	}
	wp->fd = fd;
}

/* The pages of [start, start + len) are in their new place: go on. */
static void
wp_wake(struct wprotect *wp, uintptr_t start, size_t len)
{
	struct uffdio_range r = { .start = start, .len = len };
	if (wp->fd >= 0)
		(void) ioctl(wp->fd, UFFDIO_WAKE, &r);
}

/* Lifts the protection of what was not moved and wakes every waiter. */
static void
wp_end(struct wprotect *wp, uintptr_t moved_to)
{
	if (wp->fd < 0)
		return;
	if (moved_to < wp->end) {
		struct uffdio_writeprotect prot = {
			.range = { .start = moved_to,
				.len = wp->end - moved_to },
			.mode = 0,
		};
		(void) ioctl(wp->fd, UFFDIO_WRITEPROTECT, &prot);
		(void) ioctl(wp->fd, UFFDIO_UNREGISTER, &prot.range);
	}
	(void) close(wp->fd);	/* wakes whoever still waits */
	wp->fd = -1;
}

/* ------------------------------------------------------- moving pages */

/*
 * Copies by the kernel: the pages hold bytes the application does not own
 * (malloc's neighbours, a sanitizer's redzones), which an instrumented
 * memcpy or an intercepted pwrite would report.
 */
static int
copy_file(bool into_file, uintptr_t mem, uint64_t off, size_t len)
{
	size_t done = 0;
	while (done < len) {
		long n = syscall(into_file ? SYS_pwrite64 : SYS_pread64, vfd,
				(void *)(mem + done), len - done,
				(off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

static void
punch(uintptr_t start, size_t len)
{
	(void) fallocate(vfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			(off_t)start, (off_t)len);
}

/*
 * Moves the private pages [start, end) of one mapping with attributes `a`
 * into the memfd. 0, or an RPMA_E_* code (logged) with the pages as they
 * were.
 */
static int move_out(uintptr_t start, uintptr_t end, const struct mapattr *a,
		bool child);

static int
move_in(uintptr_t start, uintptr_t end, const struct mapattr *a)
{
	struct wprotect wp;
	wp_begin(&wp, start, end, false);
	int err = 0;
	const char *what = NULL;
	uintptr_t c = start;
	while (c < end) {
		size_t n = end - c < MOVE_CHUNK ? end - c : MOVE_CHUNK;
		void *stage = mmap(NULL, n, a->prot, MAP_SHARED, vfd, (off_t)c);
		if (stage == MAP_FAILED) {
			err = errno;
			what = "mmap";
			break;
		}
		uintptr_t s = (uintptr_t)stage;
		/* pages are made where the policy says: set it first */
		int r = mapattr_policy_apply(s, s + n, a);
		if (r == 0)
			r = copy_file(true, c, c, n);
		if (r == 0 && mremap(stage, n, n, MREMAP_MAYMOVE | MREMAP_FIXED,
				(void *)c) == MAP_FAILED)
			r = -errno;
		if (r) {
			err = -r;
			what = "moving them";
			(void) munmap(stage, n);
			punch(c, n);
			break;
		}
		wp_wake(&wp, c, n);
		c += n;
	}
	wp_end(&wp, c);
	int r = 0;
	if (c > start && (r = mapattr_apply(start, c, a, true)) && err == 0) {
		err = -r;
		what = "giving them the mapping's attributes";
	}
	if (err == 0)
		return 0;
	RLOG_ERROR("cannot move the private pages at 0x%jx (%zu bytes) into "
			"shared memory for an RDMA device (%s): %s",
			(uintmax_t)start, (size_t)(end - start), what,
			strerror(err));
	if (c > start)
		(void) move_out(start, c, a, false);
	return rpma_err(err);
}

/*
 * Moves [start, end) of the memfd (mapped at those addresses) back into
 * private memory with attributes `a`, and lets the memfd forget them --
 * unless in a child of fork(), where they are the parent's: there the
 * child gets private copies, or, as the kernel does for it, nothing (the
 * application asked MADV_DONTFORK) or zeros (MADV_WIPEONFORK).
 */
static int
move_out(uintptr_t start, uintptr_t end, const struct mapattr *a, bool child)
{
	struct wprotect wp;
	if (child)
		wp.fd = -1;
	else
		wp_begin(&wp, start, end, true);
	int err = 0;
	uintptr_t c = start;
	while (c < end) {
		size_t n = end - c < MOVE_CHUNK ? end - c : MOVE_CHUNK;
		void *stage = mmap(NULL, n, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (stage == MAP_FAILED) {
			err = errno;
			break;
		}
		uintptr_t s = (uintptr_t)stage;
		int r = mapattr_policy_apply(s, s + n, a);
		if (r == 0 && !(child && a->wipeonfork))
			r = copy_file(false, s, c, n);
		if (r == 0 && mremap(stage, n, n, MREMAP_MAYMOVE | MREMAP_FIXED,
				(void *)c) == MAP_FAILED)
			r = -errno;
		if (r) {
			err = -r;
			(void) munmap(stage, n);
			break;
		}
		wp_wake(&wp, c, n);
		if (!child)
			punch(c, n);
		c += n;
	}
	wp_end(&wp, c);
	if (c > start)
		(void) mapattr_apply(start, c, a, false);
	if (err == 0)
		return 0;
	RLOG_ERROR("cannot give the registered pages at 0x%jx (%zu bytes) "
			"back as private memory: %s; they stay shared",
			(uintmax_t)c, (size_t)(end - c), strerror(err));
	return rpma_err(err);
}

/* ---------------------------------------------------------- extents */

/* The extent holding addr, split so that one starts there. */
static int
split_at(uintptr_t addr)
{
	struct extent key = { .start = addr };
	struct extent *e = RB_NFIND(extents, &extents, &key);
	e = e ? RB_PREV(extents, &extents, e) :
		RB_MAX(extents, &extents);
	if (e == NULL || e->start >= addr || e->end <= addr)
		return 0;
	struct extent *tail = malloc(sizeof(*tail));
	if (tail == NULL)
		return RPMA_E_NOMEM;
	*tail = *e;
	tail->start = addr;
	e->end = addr;
	RB_INSERT(extents, &extents, tail);
	return 0;
}

static int
extent_add(uintptr_t start, uintptr_t end, const struct mapattr *a)
{
	struct extent *x = calloc(1, sizeof(*x));
	if (x == NULL)
		return RPMA_E_NOMEM;
	x->start = start;
	x->end = end;
	x->refs = 1;
	x->attr = *a;
	RB_INSERT(extents, &extents, x);
	return 0;
}

int
vamem_share(uintptr_t start, uintptr_t end)
{
	int fd = vamem_fd();
	if (fd < 0)
		return fd;
	struct mapattr_range *r = NULL;
	int n = mapattr_read(start, end, &r);
	if (n <= 0) {
		RLOG_ERROR("cannot read the attributes of the memory at 0x%jx: "
				"%s", (uintmax_t)start,
				n < 0 ? strerror(errno) : "not mapped");
		return n < 0 ? rpma_err(errno) : RPMA_E_PROVIDER;
	}
	int ret = 0, moved = 0;
	for (int i = 0; i < n && ret == 0; i++) {
		if (r[i].attr.userfault) {
			RLOG_ERROR("the memory at 0x%jx is registered with a "
					"userfaultfd of the application's: it "
					"cannot be moved into shared memory for "
					"an RDMA device",
					(uintmax_t)r[i].start);
			ret = RPMA_E_PROVIDER;
			break;
		}
		ret = move_in(r[i].start, r[i].end, &r[i].attr);
		if (ret == 0 && (ret = extent_add(r[i].start, r[i].end,
				&r[i].attr)) != 0)
			(void) move_out(r[i].start, r[i].end, &r[i].attr,
					false);
		if (ret == 0)
			moved++;
	}
	if (ret)	/* all or nothing */
		for (int i = 0; i < moved; i++)
			vamem_unref(r[i].start, r[i].end);
	free(r);
	return ret;
}

int
vamem_ref(uintptr_t start, uintptr_t end)
{
	int ret = split_at(start);
	if (ret == 0)
		ret = split_at(end);
	if (ret)
		return ret;
	struct extent key = { .start = start };
	uintptr_t cursor = start;
	for (struct extent *e = RB_NFIND(extents, &extents, &key);
			e != NULL && e->start < end;
			e = RB_NEXT(extents, &extents, e)) {
		if (e->start != cursor)
			break;
		cursor = e->end;
	}
	if (cursor < end) {
		/* the memfd holds pages no registration of ours moved */
		RLOG_ERROR("the pages at 0x%jx are in the library's shared "
				"memory but not known to it", (uintmax_t)cursor);
		return RPMA_E_PROVIDER;
	}
	for (struct extent *e = RB_NFIND(extents, &extents, &key);
			e != NULL && e->start < end;
			e = RB_NEXT(extents, &extents, e))
		e->refs++;
	return 0;
}

/*
 * Whether some mapping of this process still shows the memfd's offsets
 * [start, end) (the application mremap()ed registered pages elsewhere):
 * those pages are then the application's, not the memfd's to forget.
 */
static bool
offsets_mapped(uintptr_t start, uintptr_t end)
{
	int fd = maps_open_self();
	if (fd < 0)
		return true;
	struct maps_entry *all = NULL;
	int n = maps_scan(fd, 0, UINTPTR_MAX, &all, NULL, NULL);
	(void) close(fd);
	bool found = n < 0;
	for (int i = 0; i < n && !found; i++) {
		const struct maps_entry *m = &all[i];
		found = m->shared && m->inode == (uint64_t)vino &&
			makedev(m->dev_major, m->dev_minor) == vdev &&
			m->offset < end &&
			m->offset + (m->end - m->start) > start;
	}
	free(all);
	return found;
}

/*
 * Gives the pages of an extent no registration holds back to the
 * application: those still in place become private again; offsets whose
 * pages the application unmapped or moved are let go when nothing maps
 * them any more.
 */
static void
give_back(const struct extent *x)
{
	int fd = maps_open_self();
	struct maps_entry *e = NULL;
	int n = fd < 0 ? -1 : maps_query(fd, x->start, x->end, &e);
	if (fd >= 0)
		(void) close(fd);
	if (n < 0) {
		RLOG_ERROR("cannot read /proc/self/maps: %s; the registered "
				"pages at 0x%jx stay shared", strerror(errno),
				(uintmax_t)x->start);
		return;
	}
	uintptr_t cursor = x->start;
	for (int i = 0; i <= n; i++) {
		uintptr_t s = i < n ? e[i].start : x->end;
		if (s > cursor && !offsets_mapped(cursor, s))
			punch(cursor, s - cursor);	/* no longer in place */
		if (i == n)
			break;
		uintptr_t from = e[i].start > x->start ? e[i].start : x->start;
		uintptr_t to = e[i].end < x->end ? e[i].end : x->end;
		if (vamem_holds(&e[i]))
			(void) move_out(from, to, &x->attr, false);
		else if (!offsets_mapped(from, to))
			punch(from, to - from);
		cursor = to;
	}
	free(e);
}

void
vamem_unref(uintptr_t start, uintptr_t end)
{
	/* without memory for a split, the whole extents stay held: safe */
	(void) split_at(start);
	(void) split_at(end);
	struct extent key = { .start = start };
	struct extent *e = RB_NFIND(extents, &extents, &key), *next;
	for (; e != NULL && e->start < end; e = next) {
		next = RB_NEXT(extents, &extents, e);
		if (e->end > end || --e->refs > 0)
			continue;
		RB_REMOVE(extents, &extents, e);
		give_back(e);
		free(e);
	}
}

/* ------------------------------------------------------------- fork */

/*
 * The child copies the registered pages out of the memfd, which the
 * parent keeps writing: so that the copy holds the pages as they were at
 * the fork (malloc's metadata among them, consistent), the thread that
 * forked waits in the parent until the child has copied (as a kernel
 * copies pinned pages inside fork()). Other threads of the parent are not
 * held back (librpmaclient(7)).
 */
static int fork_pipe[2] = { -1, -1 };

void
vamem_atfork_prepare(void)
{
	/* no move is half done in the child */
	vamem_lock();
	if (!RB_EMPTY(&extents) && pipe2(fork_pipe, O_CLOEXEC))
		fork_pipe[0] = fork_pipe[1] = -1;
}

void
vamem_atfork_parent(void)
{
	if (fork_pipe[0] >= 0) {
		(void) close(fork_pipe[1]);
		char byte;
		/* a byte when the child has copied, the end if it died */
		while (read(fork_pipe[0], &byte, 1) < 0 && errno == EINTR)
			;
		(void) close(fork_pipe[0]);
		fork_pipe[0] = fork_pipe[1] = -1;
	}
	vamem_unlock();
}

/*
 * The child's copy of one extent: private pages where the memfd is still
 * mapped at its own addresses, found without allocating (maps_find):
 * malloc's metadata may lie in these very pages, and a malloc before
 * they are the child's own would write into the parent's.
 */
static void
child_copy(const struct extent *x, int mfd)
{
	uintptr_t cursor = x->start;
	while (cursor < x->end) {
		struct maps_entry e;
		if (maps_find(mfd, cursor, &e) != 1 || e.start >= x->end)
			return;
		uintptr_t from = e.start > cursor ? e.start : cursor;
		uintptr_t to = e.end < x->end ? e.end : x->end;
		if (vamem_holds(&e) && !x->attr.dontfork)
			(void) move_out(from, to, &x->attr, true);
		cursor = to;
	}
}

void
vamem_atfork_child(void)
{
	if (!RB_EMPTY(&extents)) {
		int mfd = maps_open_self();
		struct extent *e;
		RB_FOREACH(e, extents, &extents)
			if (mfd >= 0)
				child_copy(e, mfd);
		if (mfd >= 0)
			(void) close(mfd);
		/* only now may the child free what the parent allocated */
		struct extent *next;
		for (e = RB_MIN(extents, &extents); e != NULL; e = next) {
			next = RB_NEXT(extents, &extents, e);
			RB_REMOVE(extents, &extents, e);
			free(e);
		}
	}
	if (fork_pipe[0] >= 0) {
		(void) close(fork_pipe[0]);
		while (write(fork_pipe[1], "", 1) < 0 && errno == EINTR)
			;
		(void) close(fork_pipe[1]);
		fork_pipe[0] = fork_pipe[1] = -1;
	}
	/* the parent's: in the child the descriptor is surely still ours */
	if (vfd >= 0)
		(void) close(vfd);
	vfd = -1;
	vamem_unlock();
}
