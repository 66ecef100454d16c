// SPDX-License-Identifier: BSD-3-Clause
/*
 * vamem.c -- the memfd whose offsets are virtual addresses: counting the
 * registrations that hold its pages, and private copies for a child of
 * fork() (vamem.h); the moves themselves are vamem_move.c's
 */

#include <bsd/sys/tree.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "librpma.h"
#include "log_internal.h"
#include "mapattr.h"
#include "vamem.h"
#include "vamem_move.h"

/*
 * Offsets reach every user address there is (57 bits with five-level
 * paging); the file is sparse, so its size costs nothing.
 */
#define VAMEM_SIZE	(1ull << 57)

/* A run of moved pages held by the same registrations. */
struct extent {
	RB_ENTRY(extent) link;
	uintptr_t start, end;
	unsigned refs;
	/*
	 * Where the piece of the original private mapping waits, empty,
	 * for the pages to come back (its anon_vma and page offset, which
	 * let it merge with its neighbours again): the address of `start`
	 * there, 0 when it could not be kept.
	 */
	uintptr_t aside;
	struct mapattr orig;	/* of the private mapping they came from */
	bool asked_huge;	/* our MADV_HUGEPAGE on the shared mapping */
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

int
vamem_fd(void)
{
	if (vfd >= 0)
		return vfd;
	int fd = memfd_create("rpmaclient", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		int err = errno;
		RLOG_ERROR("memfd_create: %s", strerror(err));
		return vamem_err(err);
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
		return vamem_err(err);
	}
	vfd = fd;
	vdev = st.st_dev;
	vino = st.st_ino;
	return vfd;
}

/* Nothing holds moved pages any more: the memfd goes. */
static void
close_if_unused(void)
{
	if (RB_EMPTY(&extents) && vfd >= 0) {
		(void) close(vfd);
		vfd = -1;
	}
}

bool
vamem_holds(const struct maps_entry *e)
{
	return vfd >= 0 && e->shared && e->inode == (uint64_t)vino &&
		makedev(e->dev_major, e->dev_minor) == vdev &&
		e->offset == (uint64_t)e->start;
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
	if (e->aside)
		tail->aside = e->aside + (addr - e->start);
	e->end = addr;
	RB_INSERT(extents, &extents, tail);
	return 0;
}

/* Where the original mapping's piece of addr (in x) waits, or 0. */
static uintptr_t
aside_of(const struct extent *x, uintptr_t addr)
{
	return x->aside ? x->aside + (addr - x->start) : 0;
}

/*
 * What private memory in place of the shared mapping with attributes
 * `now` gets: what the application set on it while it was shared, and
 * what shared memory cannot carry (wipe-on-fork, KSM) as it was.
 */
static struct mapattr
private_attr(const struct mapattr *now, const struct extent *x)
{
	struct mapattr a = *now;
	a.wipeonfork = x->orig.wipeonfork;
	a.mergeable = x->orig.mergeable;
	if (x->asked_huge && now->hugepage) {
		a.hugepage = x->orig.hugepage;
		a.nohugepage = x->orig.nohugepage;
	}
	a.huge_now = false;
	a.userfault = false;
	return a;
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
		free(r);
		close_if_unused();
		return n < 0 ? vamem_err(errno) : RPMA_E_PROVIDER;
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
		if (r[i].attr.page_kb > (unsigned long)sysconf(_SC_PAGESIZE)
				/ 1024) {
			/*
			 * a memfd of small pages in their place would take
			 * the huge pages away for good
			 */
			RLOG_ERROR("the memory at 0x%jx is private MAP_HUGETLB "
					"memory (pages of %lu kB), which cannot "
					"be moved into shared memory for an "
					"RDMA device and stay huge: map it "
					"MAP_SHARED (a file of hugetlbfs, or a "
					"memfd made with MFD_HUGETLB) to "
					"register it", (uintmax_t)r[i].start,
					r[i].attr.page_kb);
			ret = RPMA_E_PROVIDER;
			break;
		}
		/* one extent for the pages kept aside, one for the rest */
		struct extent *x[2] = { calloc(1, sizeof(*x[0])),
			calloc(1, sizeof(*x[1])) };
		struct moved m;
		if (x[0] == NULL || x[1] == NULL)
			ret = RPMA_E_NOMEM;
		else
			ret = vamem_move_in(vfd, r[i].start, r[i].end,
					&r[i].attr, &m);
		if (ret) {
			free(x[0]);
			free(x[1]);
			break;
		}
		uintptr_t bounds[3] = { r[i].start, m.aside ? m.aside_end :
			r[i].start, r[i].end };
		for (int k = 0; k < 2; k++) {
			if (bounds[k] == bounds[k + 1]) {
				free(x[k]);
				continue;
			}
			*x[k] = (struct extent){
				.start = bounds[k],
				.end = bounds[k + 1],
				.refs = 1,
				.aside = k == 0 ? m.aside : 0,
				.orig = r[i].attr,
				.asked_huge = m.asked_huge,
			};
			RB_INSERT(extents, &extents, x[k]);
		}
		moved++;
	}
	if (ret)	/* all or nothing */
		for (int i = 0; i < moved; i++)
			vamem_unref(r[i].start, r[i].end);
	free(r);
	close_if_unused();
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

/* [start, end) of x is no longer in place: let its pages go. */
static void
let_go(const struct extent *x, uintptr_t start, uintptr_t end)
{
	if (start >= end)
		return;
	if (!offsets_mapped(start, end))
		vamem_punch(vfd, start, end - start);
	if (x->aside)
		(void) munmap((void *)aside_of(x, start), end - start);
}

/*
 * Gives the pages of an extent no registration holds back to the
 * application: those still in place become private again, with the
 * attributes their mapping has now; offsets whose pages the application
 * unmapped or moved are let go when nothing maps them any more.
 */
static void
give_back(const struct extent *x)
{
	struct mapattr_range *r = NULL;
	int n = mapattr_read(x->start, x->end, &r);
	if (n < 0) {
		RLOG_ERROR("cannot read /proc/self/smaps: %s; the registered "
				"pages at 0x%jx stay shared", strerror(errno),
				(uintmax_t)x->start);
		return;
	}
	uintptr_t cursor = x->start;
	for (int i = 0; i < n; i++) {
		let_go(x, cursor, r[i].start);
		if (vamem_holds(&r[i].map)) {
			struct mapattr to = private_attr(&r[i].attr, x);
			(void) vamem_move_out(vfd, r[i].start, r[i].end,
					aside_of(x, r[i].start), &x->orig, &to);
		} else {
			let_go(x, r[i].start, r[i].end);
		}
		cursor = r[i].end;
	}
	let_go(x, cursor, x->end);
	free(r);
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
	close_if_unused();
}

/* ------------------------------------------------------------- fork */

/*
 * A child gets private copies of the moved pages, as a kernel copies the
 * pinned pages of a registration in fork(). The parent makes them before
 * the fork, in its prepare handler, and never waits for the child (which
 * a debugger may hold stopped): the child only mremap()s them in place,
 * before anything in it may allocate (malloc's metadata may lie in those
 * pages, and would otherwise be the parent's). The list of copies is in
 * a private mapping of its own, not on the heap, for the same reason, and
 * nothing allocates between the copies and the fork: the heap the child
 * sees is then all of one moment.
 */
struct fork_copy {
	uintptr_t at, len;	/* a piece of the shared mapping */
	uintptr_t copy;		/* its private copy; 0: none was made */
	struct mapattr attr;	/* the copy's */
};

static struct fork_copy *fork_list;	/* MAP_PRIVATE, or NULL */
static size_t fork_count, fork_list_len;
static bool fork_had_pages;
static bool fork_all_copied;	/* the list holds every inherited piece */

/*
 * Calls fn for each piece of the memfd a child inherits (mapped at its
 * own addresses, not MADV_DONTFORK), with the attributes its copy takes;
 * both lists are in address order. Returns how many.
 */
static size_t
inherited(const struct mapattr_range *r, int n,
		void (*fn)(size_t i, uintptr_t at, uintptr_t end,
			const struct mapattr *a))
{
	size_t count = 0;
	int j = 0;
	struct extent *x;
	RB_FOREACH(x, extents, &extents) {
		while (j < n && r[j].end <= x->start)
			j++;
		for (int k = j; k < n && r[k].start < x->end; k++) {
			if (!vamem_holds(&r[k].map) || r[k].attr.dontfork)
				continue;
			if (fn) {
				struct mapattr a = private_attr(&r[k].attr, x);
				/* a child inherits no locks */
				a.locked = a.lock_on_fault = false;
				fn(count, r[k].start > x->start ? r[k].start :
						x->start, r[k].end < x->end ?
						r[k].end : x->end, &a);
			}
			count++;
		}
	}
	return count;
}

static void
list_piece(size_t i, uintptr_t at, uintptr_t end, const struct mapattr *a)
{
	fork_list[i] = (struct fork_copy){ .at = at, .len = end - at,
		.attr = *a };
}

/* Makes the private copy of a piece (0 when it cannot). */
static uintptr_t
copy_piece(const struct fork_copy *f)
{
	void *m = mmap(NULL, f->len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 0;
	uintptr_t c = (uintptr_t)m;
	struct mapattr fresh = mapattr_fresh(PROT_READ | PROT_WRITE);
	/* wipe-on-fork: the kernel gives the child's copy zeros itself */
	if (mapattr_shape(c, c + f->len, &fresh, &f->attr, false, NULL) ||
			(!f->attr.wipeonfork &&
					vamem_copy_file(vfd, false, c, f->at,
							f->len)) ||
			mapattr_finish(c, c + f->len, &fresh, &f->attr,
					false)) {
		(void) munmap(m, f->len);
		return 0;
	}
	return c;
}

void
vamem_atfork_prepare(void)
{
	int saved = errno;
	/* no move is half done in the child */
	vamem_lock();
	fork_had_pages = !RB_EMPTY(&extents);
	if (!fork_had_pages)
		goto out;
	struct mapattr_range *r = NULL;
	int n = mapattr_read(RB_MIN(extents, &extents)->start,
			RB_MAX(extents, &extents)->end, &r);
	size_t count = n > 0 ? inherited(r, n, NULL) : 0;
	fork_all_copied = n > 0;
	if (count) {
		fork_list_len = count * sizeof(*fork_list);
		void *m = mmap(NULL, fork_list_len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED) {
			fork_list = m;
			fork_count = inherited(r, n, list_piece);
		}
		fork_all_copied &= fork_list != NULL;
	}
	free(r);
	/* from here on, system calls only */
	for (size_t i = 0; i < fork_count; i++) {
		fork_list[i].copy = copy_piece(&fork_list[i]);
		fork_all_copied &= fork_list[i].copy != 0;
	}
out:
	errno = saved;
}

static void
forget_list(void)
{
	if (fork_list)
		(void) munmap(fork_list, fork_list_len);
	fork_list = NULL;
	fork_count = 0;
}

void
vamem_atfork_parent(void)
{
	int saved = errno;
	for (size_t i = 0; i < fork_count; i++)
		if (fork_list[i].copy)
			(void) munmap((void *)fork_list[i].copy,
					fork_list[i].len);
	forget_list();
	vamem_unlock();
	errno = saved;
}

/*
 * In the child, a private copy of [start, end) of the memfd made here
 * and now: for what the parent could not copy (the parent's stores after
 * the fork may show in it).
 */
static void
child_copy(uintptr_t start, uintptr_t end, int prot)
{
	size_t len = end - start;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return;
	if (vamem_copy_file(vfd, false, (uintptr_t) m, start, len) ||
			mprotect(m, len, prot) ||
			mremap(m, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
					(void *) start) == MAP_FAILED)
		(void) munmap(m, len);
}

/* The child's copies in place, found without allocating (maps_find). */
static void
child_place(int mfd)
{
	for (size_t i = 0; i < fork_count; i++) {
		const struct fork_copy *f = &fork_list[i];
		struct maps_entry e;
		bool there = f->copy && mfd >= 0 &&
			maps_find(mfd, f->at, &e) == 1 && vamem_holds(&e) &&
			e.start <= f->at && e.end >= f->at + f->len;
		if (!there || mremap((void *)f->copy, f->len, f->len,
				MREMAP_MAYMOVE | MREMAP_FIXED,
				(void *)f->at) == MAP_FAILED) {
			if (f->copy)
				(void) munmap((void *)f->copy, f->len);
			fork_all_copied &= !there;
		}
	}
	if (fork_all_copied)
		return;
	/* whatever the parent could not copy: here (a walk of all maps) */
	struct maps_entry e;
	for (uintptr_t at = 0; mfd >= 0 && maps_find(mfd, at, &e) == 1;
			at = e.end)
		if (vamem_holds(&e))
			child_copy(e.start, e.end, (e.read ? PROT_READ : 0) |
					(e.write ? PROT_WRITE : 0) |
					(e.exec ? PROT_EXEC : 0));
}

void
vamem_atfork_child(void)
{
	int saved = errno;
	if (fork_had_pages) {
		int mfd = maps_open_self();
		child_place(mfd);
		if (mfd >= 0)
			(void) close(mfd);
		forget_list();
		/* only now may the child free what the parent allocated */
		struct extent *e, *next;
		for (e = RB_MIN(extents, &extents); e != NULL; e = next) {
			next = RB_NEXT(extents, &extents, e);
			RB_REMOVE(extents, &extents, e);
			free(e);
		}
	}
	/* the parent's: in the child the descriptor is surely still ours */
	if (vfd >= 0)
		(void) close(vfd);
	vfd = -1;
	vamem_unlock();
	errno = saved;
}
