// SPDX-License-Identifier: BSD-3-Clause
/*
 * memshare.c -- turning a registration's range into segments rpmad can
 * reach: checking it, faulting it in, finding the files behind shared
 * mappings, and (for RDMA devices) sharing private pages (memshare.h)
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs_medium.h"
#include "librpma.h"
#include "log_internal.h"
#include "memshare.h"
#include "proc_maps.h"
#include "vamem.h"

static uintptr_t
page_size(void)
{
	static uintptr_t size;
	if (size == 0)
		size = (uintptr_t)sysconf(_SC_PAGESIZE);
	return size;
}

static int
plan_add_fd(struct memshare_plan *plan, int fd, bool owned, unsigned *index)
{
	for (unsigned i = 0; i < plan->nfds; i++) {
		if (plan->fds[i] == fd) {
			if (owned)
				(void) close(fd);
			*index = i;
			return 0;
		}
	}
	if (plan->nfds == CTL_MAX_FDS) {
		RLOG_ERROR("the range spans more than %d files", CTL_MAX_FDS);
		if (owned)
			(void) close(fd);
		return RPMA_E_PROVIDER;	/* 0.12's code for a failed registration */
	}
	plan->fds[plan->nfds] = fd;
	plan->fd_owned[plan->nfds] = owned;
	*index = plan->nfds++;
	return 0;
}

/*
 * Adds `length` bytes of the span (the next ones) to the plan: of the
 * file `fd` at `offset` (its ownership goes to the plan), or of the
 * process. A piece that continues the previous segment extends it.
 */
static int
plan_add(struct memshare_plan *plan, enum memshare_kind kind, int fd,
		bool owned, uint64_t offset, uint64_t length)
{
	unsigned index = 0;
	if (kind != MEMSHARE_PROCESS) {
		int ret = plan_add_fd(plan, fd, owned, &index);
		if (ret)
			return ret;
	}
	if (plan->nsegs > 0) {
		struct memshare_segment *last = &plan->segs[plan->nsegs - 1];
		if (last->kind == kind && (kind == MEMSHARE_PROCESS ||
				(last->fd_index == index &&
				last->offset + last->length == offset))) {
			last->length += length;
			return 0;
		}
	}
	if (plan->nsegs == MR_MAX_SEGMENTS) {
		RLOG_ERROR("the range spans more than %d mappings",
				MR_MAX_SEGMENTS);
		return RPMA_E_PROVIDER;
	}
	plan->segs[plan->nsegs++] = (struct memshare_segment){
		.kind = kind,
		.fd_index = index,
		.offset = offset,
		.length = length,
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
	int mfd = maps_open_self();
	struct maps_entry *found = NULL;
	uintptr_t at = (uintptr_t)p;
	bool same = mfd >= 0 &&
		maps_query(mfd, at, at + page_size(), &found) == 1 &&
		found[0].inode == e->inode &&
		found[0].dev_major == e->dev_major &&
		found[0].dev_minor == e->dev_minor;
	free(found);
	if (mfd >= 0)
		(void) close(mfd);
	(void) munmap(p, page_size());
	return same;
}

/* Whether fd is the file of the mapping e (maps' device and inode). */
static bool
is_mapped_file(int fd, const struct maps_entry *e)
{
	struct stat st;
	if (fstat(fd, &st))
		return false;
	if (st.st_ino == e->inode &&
			st.st_dev == makedev(e->dev_major, e->dev_minor))
		return true;
	/* char devices (DAX) report the device's own inode in maps */
	if (S_ISCHR(st.st_mode) && st.st_ino == e->inode)
		return true;
	return maps_same_file(fd, e);
}

/*
 * A descriptor of the file this process already has open, found by its
 * device and inode: how an unprivileged process names a memfd or an
 * unlinked file it mapped. A dup of it, or -1.
 */
static int
find_open_fd(const struct maps_entry *e)
{
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL)
		return -1;
	int found = -1;
	struct dirent *de;
	while (found < 0 && (de = readdir(d)) != NULL) {
		char *end;
		long n = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || n == dirfd(d))
			continue;
		struct stat st;
		if (fstat((int)n, &st) || !S_ISREG(st.st_mode) ||
				!is_mapped_file((int)n, e))
			continue;
		int fl = fcntl((int)n, F_GETFL);
		if (fl >= 0 && (!e->write || (fl & O_ACCMODE) == O_RDWR))
			found = fcntl((int)n, F_DUPFD_CLOEXEC, 0);
	}
	(void) closedir(d);
	return found;
}

/*
 * Opens the file behind a shared mapping: the exact object through
 * /proc/self/map_files where allowed (CAP_SYS_ADMIN), else by its path,
 * else a descriptor this process has open on it; checked to be the same
 * file. -1 when there is none (not logged: the caller decides).
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
	if (fd >= 0 && !is_mapped_file(fd, e)) {
		(void) close(fd);
		fd = -1;
	}
	if (fd < 0)
		fd = find_open_fd(e);
	return fd;
}

/*
 * Whether [start, end) overlaps the calling thread's own stack: pages
 * under the caller's own frames cannot be moved. A thread's stack does not
 * move, so it is looked up once per thread.
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
 * in the middle of a registration, between the application's mappings.
 */
__attribute__((constructor)) static void
learn_own_stack(void)
{
	(void) overlaps_own_stack(0, 0);
}

/* The kernel's own mappings ([vdso], [vvar], ...): never registrable. */
static bool
special_mapping(const struct maps_entry *e)
{
	return e->path[0] == '[' && strcmp(e->path, "[heap]") &&
		strncmp(e->path, "[stack", 6) && strncmp(e->path, "[anon:", 6);
}

/*
 * Why the mapping e cannot hold a registration of `usage`, or NULL. The
 * usages a device would need write access for are refused on memory the
 * application cannot write, as ibv_reg_mr refuses them (EFAULT).
 */
static const char *
refusal(const struct maps_entry *e, int usage)
{
	if (!e->read)
		return "it cannot be read";
	if (special_mapping(e))
		return "it is a mapping of the kernel's";
	if (!e->write && mr_usage_local_write((unsigned)usage))
		return "the usage needs write access (as ibv_reg_mr with "
			"IBV_ACCESS_LOCAL_WRITE would) but it is read-only";
	return NULL;
}

/* Why private pages of e cannot be moved for an RDMA device, or NULL. */
static const char *
move_refusal(const struct maps_entry *e, uintptr_t start, uintptr_t end)
{
	if (strncmp(e->path, "[stack", 6) == 0)
		return "it is the main thread's stack";
	if (overlaps_own_stack(start, end))
		return "it is the calling thread's stack";
	return NULL;
}

/* Whether a shared mapping of a file on `m` goes by descriptor. */
static bool
passed_by_fd(enum fs_medium m, bool shared_by_fd)
{
	return m == FS_MEDIUM_STORAGE || (m == FS_MEDIUM_SHMEM && shared_by_fd);
}

/*
 * A piece of the span for rpmad's software transport. Shared files on
 * storage come by descriptor (rpmad persists them), and so does shared
 * memory where rpmad guards its holes (`shared_by_fd`): rpmad then
 * reaches it through its own mapping, as a NIC through pinned pages.
 */
static int
plan_process_piece(struct memshare_plan *plan, const struct maps_entry *e,
		uintptr_t from, uintptr_t to, bool shared_by_fd)
{
	if (e->shared && !vamem_holds(e)) {
		int fd = open_mapped_file(e);
		if (fd >= 0 && passed_by_fd(fs_medium_of(fd), shared_by_fd))
			return plan_add(plan, MEMSHARE_FILE, fd, true,
					e->offset + (from - e->start),
					to - from);
		if (fd >= 0)
			(void) close(fd);
		else if (e->path[0] == '/' && strncmp(e->path, "/memfd:", 7) &&
				strncmp(e->path, "/dev/zero", 9) &&
				strncmp(e->path, "/SYSV", 5))
			RLOG_INFO("the file %s mapped at 0x%jx cannot be opened "
					"again: rpmad reaches it, but a "
					"persistent flush does not reach its "
					"storage", e->path, (uintmax_t)from);
	}
	return plan_add(plan, MEMSHARE_PROCESS, -1, false, 0, to - from);
}

/* A piece of the span for an RDMA device (or without the address space). */
static int
plan_mapped_piece(struct memshare_plan *plan, const struct maps_entry *e,
		uintptr_t from, uintptr_t to)
{
	int ret;
	if (vamem_holds(e) || !e->shared) {
		const char *why = e->shared ? NULL : move_refusal(e, from, to);
		if (why) {
			RLOG_ERROR("memory at 0x%jx (%s) cannot be shared with "
					"rpmad for an RDMA device: %s",
					(uintmax_t)from,
					e->path[0] ? e->path : "anonymous",
					why);
			return RPMA_E_PROVIDER;
		}
		if (plan->nheld == MR_MAX_SEGMENTS) {
			RLOG_ERROR("the range spans more than %d mappings",
					MR_MAX_SEGMENTS);
			return RPMA_E_PROVIDER;
		}
		ret = e->shared ? vamem_ref(from, to) : vamem_share(from, to);
		if (ret)
			return ret;
		plan->held[plan->nheld++] = (struct memshare_held){ from, to };
		return plan_add(plan, MEMSHARE_MEMFD, vamem_fd(), false, from,
				to - from);
	}
	int fd = open_mapped_file(e);
	if (fd < 0) {
		RLOG_ERROR("memory at 0x%jx (%s) cannot be shared with rpmad "
				"for an RDMA device: no descriptor of the file "
				"behind the shared mapping can be had (it is "
				"not open in this process, and %s)",
				(uintmax_t)from, e->path[0] ? e->path :
				"anonymous", e->path[0] == '/' ? "its path does "
				"not lead to it" : "it has no path");
		return RPMA_E_PROVIDER;
	}
	return plan_add(plan, MEMSHARE_FILE, fd, true,
			e->offset + (from - e->start), to - from);
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/*
 * Faults in every page of [start, start + len) in this process (for
 * writing when rpmad will write into it), so that the pages, page-cache
 * pages and file blocks are allocated for, and charged to, the
 * application and its memory cgroup, with its own credentials and quotas,
 * rather than to rpmad when it first touches them. 0 or an RPMA_E_* code
 * (logged).
 */
static int
populate(uintptr_t start, uint64_t len, bool write)
{
	int advice = write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ;
	if (madvise((void *)start, len, advice) == 0)
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
					"%s)", (uintmax_t)start, strerror(err));
		said = true;
		return 0;
	}
	RLOG_ERROR("cannot fault in the %" PRIu64 " bytes at 0x%jx before "
			"registering them (they are charged to this process, "
			"not to rpmad): %s", len, (uintmax_t)start,
			strerror(err));
	return err == ENOMEM || err == ENOSPC || err == EDQUOT ?
		RPMA_E_NOMEM : RPMA_E_PROVIDER;
}

/* Checks every mapping of the span; 0 or RPMA_E_* (logged). */
static int
check_span(const struct maps_entry *e, int count, uintptr_t start,
		uintptr_t end, void *ptr, size_t size, int usage)
{
	uintptr_t cursor = start;
	for (int i = 0; i < count && cursor < end; i++) {
		if (e[i].start > cursor)
			break;
		const char *why = refusal(&e[i], usage);
		if (why) {
			RLOG_ERROR("memory at 0x%jx (%s) cannot be registered: "
					"%s", (uintmax_t)cursor,
					e[i].path[0] ? e[i].path : "anonymous",
					why);
			return RPMA_E_PROVIDER;
		}
		cursor = e[i].end;
	}
	if (cursor < end) {
		RLOG_ERROR("0x%jx is not mapped: the range at %p of %zu bytes "
				"is not all memory", (uintmax_t)cursor, ptr,
				size);
		return RPMA_E_PROVIDER;
	}
	return 0;
}

int
memshare_prepare(void *ptr, size_t size, int usage,
		const struct memshare_reach *reach, struct memshare_plan *plan)
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

	int mfd = maps_open_self();
	struct maps_entry *e = NULL;
	int count = mfd < 0 ? -1 : maps_query(mfd, start, end, &e);
	if (mfd >= 0)
		(void) close(mfd);
	if (count < 0) {
		RLOG_ERROR("cannot read /proc/self/maps: %s", strerror(errno));
		return RPMA_E_PROVIDER;
	}
	int ret = check_span(e, count, start, end, ptr, size, usage);
	if (ret == 0)
		ret = populate(start, end - start,
				mr_usage_rpmad_writes((unsigned)usage));
	if (ret) {
		free(e);
		return ret;
	}

	plan->private_only = true;
	for (int i = 0; i < count; i++)
		plan->private_only &= !e[i].shared && !e[i].inode;

	bool in_process = reach->addrspace && !reach->rdma;
	if (!in_process)
		vamem_lock();
	for (int i = 0; i < count && ret == 0; i++) {
		uintptr_t from = e[i].start > start ? e[i].start : start;
		uintptr_t to = e[i].end < end ? e[i].end : end;
		ret = in_process ? plan_process_piece(plan, &e[i], from, to,
						   reach->shared_by_fd) :
				   plan_mapped_piece(plan, &e[i], from, to);
	}
	if (!in_process)
		vamem_unlock();
	free(e);
	if (ret)
		memshare_done(plan, false);
	return ret;
}

void
memshare_release(const struct memshare_held *held, unsigned n)
{
	if (n == 0)
		return;
	vamem_lock();
	for (unsigned i = 0; i < n; i++)
		vamem_unref(held[i].start, held[i].end);
	vamem_unlock();
}

void
memshare_done(struct memshare_plan *plan, bool registered)
{
	for (unsigned i = 0; i < plan->nfds; i++) {
		if (plan->fd_owned[i])
			(void) close(plan->fds[i]);
	}
	plan->nfds = 0;
	plan->nsegs = 0;
	if (!registered)
		memshare_release(plan->held, plan->nheld);
	plan->nheld = 0;
}
