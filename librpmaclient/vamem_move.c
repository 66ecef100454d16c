// SPDX-License-Identifier: BSD-3-Clause
/*
 * vamem_move.c -- moving private pages into the memfd of vamem.h and back
 * out, with the other threads' stores held by write protection and the
 * moving thread's signals held meanwhile
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "librpma.h"
#include "log_internal.h"
#include "mapattr.h"
#include "vamem.h"
#include "vamem_move.h"

/* pages moved at a time: what a move needs beyond the registration */
#define MOVE_CHUNK (2ull << 20)

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

/* the errnos of a shortage, for which librpma says RPMA_E_NOMEM */
int
vamem_err(int err)
{
	return err == ENOMEM || err == ENOSPC || err == EMFILE ||
					err == ENFILE || err == EAGAIN ?
			RPMA_E_NOMEM :
			RPMA_E_PROVIDER;
}

/* ------------------------------------------------------------ signals */

/*
 * While pages move, the moving thread's signals wait: a handler storing
 * into them would wait for a move that only this thread can finish. A
 * handler then runs when the pages are in place, as after a system call
 * (ibv_reg_mr pins pages in one). Faults are never held back.
 */
static void
signals_hold(sigset_t *old)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP,
		SIGSYS };
	sigset_t all;
	(void) sigfillset(&all);
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		(void) sigdelset(&all, faults[i]);
	(void) pthread_sigmask(SIG_BLOCK, &all, old);
}

static void
signals_release(const sigset_t *old)
{
	(void) pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* ------------------------------------------------- write protection */

/*
 * Stores other threads make into pages while they are copied must not be
 * lost: the pages are write-protected through a userfaultfd, so that such
 * a store waits until the pages are in their new place (and lands there).
 *
 * How this process may make one is learned once (an attempt refused may
 * be audited): one that holds the kernel's own accesses too (a read()
 * into the pages waits as a store does) through /dev/userfaultfd where
 * the process may open it, or through the system call where it may
 * (CAP_SYS_PTRACE, or vm.unprivileged_userfaultfd 1); else one for faults
 * in user mode only, where such a system call fails with EFAULT; else
 * none (a seccomp filter, an old kernel), where the copy goes on
 * unprotected. librpmaclient(7) says what each means.
 */
enum uffd_way {
	UFFD_UNKNOWN,
	UFFD_DEVICE,
	UFFD_SYSCALL,
	UFFD_USER_ONLY,
	UFFD_NONE
};
static enum uffd_way uffd_way;

/* Whether a failure to make a userfaultfd one way says it never will. */
static bool
refused(int err)
{
	return err == EPERM || err == EACCES || err == ENOENT ||
			err == ENODEV || err == ENXIO || err == ENOSYS ||
			err == EINVAL || err == EROFS;
}

static int
uffd_device(void)
{
	int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -1;
	int fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
	int err = errno;
	(void) close(dev);
	errno = err;
	return fd;
}

/* A userfaultfd (*kernel_too: for the kernel's accesses too), or -1. */
static int
uffd_new(bool *kernel_too)
{
	static const enum uffd_way order[] = { UFFD_DEVICE, UFFD_SYSCALL,
		UFFD_USER_ONLY };
	*kernel_too = false;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		enum uffd_way w = order[i];
		if (uffd_way != UFFD_UNKNOWN && w < uffd_way)
			continue; /* refused before */
		int flags = O_CLOEXEC | O_NONBLOCK;
		if (w == UFFD_USER_ONLY)
			flags |= UFFD_USER_MODE_ONLY;
		int fd = w == UFFD_DEVICE ?
				uffd_device() :
				(int) syscall(SYS_userfaultfd, flags);
		if (fd >= 0) {
			uffd_way = w;
			*kernel_too = w != UFFD_USER_ONLY;
			return fd;
		}
		/* refused (the process may have dropped privileges): next */
		if (!refused(errno))
			return -1; /* for now: a shortage */
	}
	uffd_way = UFFD_NONE;
	return -1;
}

struct wprotect {
	int fd; /* -1: not protected */
	uintptr_t start, end;
};

static void
wp_begin(struct wprotect *wp, uintptr_t start, uintptr_t end, bool shmem)
{
	wp->fd = -1;
	wp->start = start;
	wp->end = end;
	bool kernel_too;
	int fd = uffd_new(&kernel_too);
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

/*
 * The pages of [start, start + len) are about to leave their place for a
 * moment: accesses to pages not there wait as well (reads too). 0 or -1.
 */
static int
wp_hold_missing(struct wprotect *wp, uintptr_t start, size_t len)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP,
	};
	return wp->fd >= 0 ? ioctl(wp->fd, UFFDIO_REGISTER, &reg) : -1;
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
	(void) close(wp->fd); /* wakes whoever still waits */
	wp->fd = -1;
}

/* ------------------------------------------------------- moving pages */

/*
 * Copies by the kernel: the pages hold bytes the application does not own
 * (malloc's neighbours, a sanitizer's redzones), which an instrumented
 * memcpy or an intercepted pwrite would report.
 */
int
vamem_copy_file(int fd, bool into_file, uintptr_t mem, uint64_t off, size_t len)
{
	size_t done = 0;
	while (done < len) {
		long n = syscall(into_file ? SYS_pwrite64 : SYS_pread64, fd,
				(void *) (mem + done), len - done,
				(off_t) (off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t) n;
	}
	return 0;
}

void
vamem_punch(int fd, uintptr_t start, size_t len)
{
	(void) fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			(off_t) start, (off_t) len);
}

/*
 * The original mapping's piece kept aside while its pages are shared:
 * empty, inaccessible, unlocked, not inherited by a child; otherwise as
 * it was (`orig`).
 */
static struct mapattr
aside_state(const struct mapattr *orig)
{
	struct mapattr a = *orig;
	a.prot = PROT_NONE;
	a.locked = a.lock_on_fault = false;
	a.dontfork = true;
	return a;
}

/* Empties a piece of the original mapping just moved aside. */
static void
set_aside(uintptr_t at, size_t len, const struct mapattr *orig)
{
	struct mapattr to = aside_state(orig);
	(void) mapattr_finish(at, at + len, orig, &to, false);
	(void) madvise((void *) at, len, MADV_DONTNEED);
}

/*
 * Moves [start, end) of the memfd, mapped at those addresses, back into
 * private memory with the attributes `to`: into the original mapping's
 * piece kept at `aside` (attributes `orig` at the move), or into a new
 * mapping where there is none. 0, or an errno with what was not moved
 * still shared (logged).
 */
int
vamem_move_out(int fd, uintptr_t start, uintptr_t end, uintptr_t aside,
		const struct mapattr *orig, const struct mapattr *to)
{
	sigset_t sigs;
	signals_hold(&sigs);
	struct wprotect wp;
	wp_begin(&wp, start, end, true);
	struct mapattr from = aside ? aside_state(orig) :
				      mapattr_fresh(PROT_READ | PROT_WRITE);
	from.prot = PROT_READ | PROT_WRITE;
	int err = 0;
	uintptr_t c = start;
	while (c < end) {
		size_t n = end - c < MOVE_CHUNK ? end - c : MOVE_CHUNK;
		uintptr_t dst = aside ? aside + (c - start) : 0;
		if (dst && mprotect((void *) dst, n, PROT_READ | PROT_WRITE)) {
			err = errno;
			break;
		}
		if (dst == 0) {
			void *m = mmap(NULL, n, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED) {
				err = errno;
				break;
			}
			dst = (uintptr_t) m;
		}
		/* pages are made where the policy says: set it first */
		int r = mapattr_shape(dst, dst + n, &from, to, false, NULL);
		if (r == 0)
			r = vamem_copy_file(fd, false, dst, c, n);
		if (r == 0)
			r = mapattr_finish(dst, dst + n, &from, to, false);
		if (r == 0 &&
				mremap((void *) dst, n, n,
						MREMAP_MAYMOVE | MREMAP_FIXED,
						(void *) c) == MAP_FAILED)
			r = -errno;
		if (r) {
			err = -r;
			if (!aside)
				(void) munmap((void *) dst, n);
			break;
		}
		wp_wake(&wp, c, n);
		vamem_punch(fd, c, n);
		c += n;
	}
	wp_end(&wp, c);
	signals_release(&sigs);
	if (aside && c < end)
		(void) munmap((void *) (aside + (c - start)), end - c);
	if (err == 0)
		return 0;
	RLOG_ERROR("cannot give the registered pages at 0x%jx (%zu bytes) "
		   "back as private memory: %s; they stay shared",
			(uintmax_t) c, (size_t) (end - c), strerror(err));
	return err;
}

/*
 * Moves the private pages [start, end) of one mapping with attributes `a`
 * into the memfd. 0, or an RPMA_E_* code (logged) with the pages as they
 * were.
 */
int
vamem_move_in(int fd, uintptr_t start, uintptr_t end, const struct mapattr *a,
		struct moved *m)
{
	memset(m, 0, sizeof(*m));
	sigset_t sigs;
	signals_hold(&sigs);
	struct wprotect wp;
	wp_begin(&wp, start, end, false);
	/*
	 * Where the pages wait, the original mapping's piece is kept aside
	 * (mremap keeps its anon_vma and page offset), to take them back
	 * when they return: so they merge with their neighbours again, and
	 * the application may mremap its pool as a whole. Not without the
	 * protection: in the moment the pages are aside, accesses to them
	 * must wait.
	 */
	uintptr_t aside = 0;
	if (wp.fd >= 0) {
		void *r = mmap(NULL, end - start, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
				0);
		if (r != MAP_FAILED)
			aside = (uintptr_t) r;
	}
	uintptr_t kept = start;
	/* the memfd remembers a policy per offset: always set it */
	struct mapattr fresh = mapattr_fresh(a->prot);
	fresh.policy = -1;
	int err = 0;
	const char *what = NULL;
	uintptr_t c = start;
	while (c < end) {
		size_t n = end - c < MOVE_CHUNK ? end - c : MOVE_CHUNK;
		void *stage = mmap(NULL, n, a->prot, MAP_SHARED, fd, (off_t) c);
		if (stage == MAP_FAILED) {
			err = errno;
			what = "mmap";
			break;
		}
		uintptr_t s = (uintptr_t) stage;
		/* pages are made where the policy says: set it first */
		int r = mapattr_shape(s, s + n, &fresh, a, true,
				&m->asked_huge);
		if (r == 0)
			r = vamem_copy_file(fd, true, c, c, n);
		if (r == 0)
			r = mapattr_finish(s, s + n, &fresh, a, true);
		uintptr_t to = aside + (c - start);
		bool set = false, unlocked = false;
		if (r == 0 && aside && kept == c &&
				wp_hold_missing(&wp, c, n) == 0) {
			/* locked pages moved aside would stay in VmLck */
			unlocked = a->locked && munlock((void *) c, n) == 0;
			int how = MREMAP_MAYMOVE | MREMAP_FIXED |
					MREMAP_DONTUNMAP;
			set = (!a->locked || unlocked) &&
					mremap((void *) c, n, n, how,
							(void *) to) !=
							MAP_FAILED;
		}
		if (r == 0 &&
				mremap(stage, n, n,
						MREMAP_MAYMOVE | MREMAP_FIXED,
						(void *) c) == MAP_FAILED)
			r = -errno;
		if (r && set) /* the pages go back where they were */
			(void) mremap((void *) to, n, n,
					MREMAP_MAYMOVE | MREMAP_FIXED,
					(void *) c);
		if (r && unlocked)
			(void) mlock2((void *) c, n,
					a->lock_on_fault ? MLOCK_ONFAULT : 0);
		if (r) {
			err = -r;
			what = "moving them";
			(void) munmap(stage, n);
			vamem_punch(fd, c, n);
			break;
		}
		wp_wake(&wp, c, n);
		if (set) {
			set_aside(to, n, a);
			kept = c + n;
		}
		c += n;
	}
	wp_end(&wp, c);
	signals_release(&sigs);
	if (aside && kept < end)
		(void) munmap((void *) (aside + (kept - start)), end - kept);
	if (kept > start) {
		m->aside = aside;
		m->aside_end = kept;
	}
	if (err == 0)
		return 0;
	RLOG_ERROR("cannot move the private pages at 0x%jx (%zu bytes) into "
		   "shared memory for an RDMA device (%s): %s",
			(uintmax_t) start, (size_t) (end - start), what,
			strerror(err));
	if (c > start) {
		uintptr_t at = kept > start ? kept : start;
		if (kept > start)
			(void) vamem_move_out(fd, start, kept, aside, a, a);
		if (c > at)
			(void) vamem_move_out(fd, at, c, 0, a, a);
	}
	return vamem_err(err);
}
