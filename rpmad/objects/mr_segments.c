// SPDX-License-Identifier: BSD-3-Clause
/*
 * mr_segments.c -- the segments a client sent for a registration: their
 * shape checked, the files passed by descriptor checked (file system,
 * access, alignment) and mapped back to back into one reserved span, the
 * client's own memory reached through its address space
 */

#include <errno.h>
#include <fcntl.h>
#include <libpmem2.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "clients/addrspace.h"
#include "clients/client.h"
#include "clients/tenant.h"
#include "fs/fsident.h"
#include "fs_medium.h"
#include "fs/fstype.h"
#include "librpma.h"
#include "log/log.h"
#include "mr_usage.h"
#include "objects/mr.h"
#include "objects/mr_holes.h"
#include "objects/mr_segments.h"
#include "objects/mr_view.h"
#include "transport/transport.h"

/*
 * Whether rpmad may map the file at all, judged before anything reaches
 * its file system (fstat included): not on one that can make rpmad's
 * single thread wait on a server or a network (fstype.h), and, when rpmad
 * is to write into it, not on one that reserves its blocks for rpmad's
 * file-system identity (fsident.h). 0, or a negative errno with the
 * reason in err.
 */
static int
check_file_system(int fd, pid_t client, bool writes, char *err, size_t errlen)
{
	struct fstype fs;
	int ret = fstype_of_fd(fd, client, &fs);
	if (ret == 0 && fs.verdict == FSTYPE_MAY_BLOCK) {
		(void) snprintf(err, errlen,
				"on %.40s at %.64s, a file "
				"system that can make rpmad wait (its server "
				"or network): use a local one or a memfd",
				fs.type,
				fs.mount_point[0] ? fs.mount_point : "?");
		return -EOPNOTSUPP;
	}
	if (ret || fs.verdict == FSTYPE_UNKNOWN) {
		(void) snprintf(err, errlen,
				"the file system it is on cannot "
				"be told (%s), so it could be one that makes "
				"rpmad wait",
				ret ? strerror(-ret) :
				      "its mount "
				      "is in no mount table rpmad can read");
		return ret ? ret : -EOPNOTSUPP;
	}
	return writes ? fsident_check_mount(fs.super_opts, fs.mount_point, err,
					errlen) :
			0;
}

/*
 * A client may pass regular files (memfds included) and DAX devices.
 * *writable is cleared for a file opened read-only; that is an error when
 * the usage needs rpmad to write (`needs_write`). 0, or a negative errno
 * with the reason in err.
 */
static int
check_fd(int fd, const struct mr_segment *seg, bool needs_write, bool *writable,
		char *err, size_t errlen)
{
	struct stat st;
	if (fstat(fd, &st)) {
		int e = errno;
		(void) snprintf(err, errlen, "fstat: %s", strerror(e));
		return -e;
	}
	int mode = fcntl(fd, F_GETFL);
	if ((mode & O_ACCMODE) != O_RDWR) {
		if (needs_write) {
			(void) snprintf(err, errlen,
					"the usage needs write "
					"access but the file was opened "
					"read-only");
			return -EACCES;
		}
		*writable = false;
	}
	if (S_ISCHR(st.st_mode)) {
		char link[128], target[256];
		(void) snprintf(link, sizeof(link),
				"/sys/dev/char/%u:%u/subsystem",
				major(st.st_rdev), minor(st.st_rdev));
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		const char *base = strrchr(target, '/');
		if (n <= 0 || strcmp(base ? base + 1 : target, "dax")) {
			(void) snprintf(err, errlen,
					"a character device that "
					"is not a DAX device");
			return -EINVAL;
		}
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		(void) snprintf(err, errlen,
				"not a regular file or DAX device");
		return -EINVAL;
	}
	if (seg->offset > (uint64_t) st.st_size ||
			seg->length > (uint64_t) st.st_size - seg->offset) {
		(void) snprintf(err, errlen,
				"the file is smaller (%lld bytes) "
				"than the segment [%llu, +%llu)",
				(long long) st.st_size,
				(unsigned long long) seg->offset,
				(unsigned long long) seg->length);
		return -EINVAL;
	}
	if (seg->kind == MR_SEG_MEMFD) {
		/* the library's memfds come sealed: they cannot shrink */
		int seals = fcntl(fd, F_GET_SEALS);
		if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
			(void) snprintf(err, errlen,
					"shared memory that is "
					"not sealed against shrinking");
			return -EPERM;
		}
	}
	return 0;
}

/* The huge page size of a hugetlbfs file, or 0 for any other. */
static uint64_t
huge_page_of(int fd)
{
	struct statfs fs;
	return fstatfs(fd, &fs) == 0 && fs.f_type == HUGETLBFS_MAGIC ?
			(uint64_t) fs.f_bsize :
			0;
}

/*
 * How a file segment must be mapped: a DAX device maps whole units of its
 * alignment (2 MiB or 1 GiB, in address and in offset), a hugetlbfs file
 * (huge pages a client shares, an MFD_HUGETLB memfd) whole huge pages, any
 * other file whole pages. libpmem2 reads the device's alignment and size;
 * `*src` is the caller's to delete. 0, or a negative errno with the reason
 * in err.
 */
static int
file_alignment(const struct mr_segment *seg, struct pmem2_source **src,
		uint64_t *align, char *err, size_t errlen)
{
	size_t a = 0, size = 0;
	int ret = pmem2_source_from_fd(src, seg->fd);
	if (ret == 0)
		ret = pmem2_source_alignment(*src, &a);
	if (ret == 0)
		ret = pmem2_source_size(*src, &size);
	if (ret) {
		(void) snprintf(err, errlen, "libpmem2 cannot use a file: %s",
				pmem2_errormsg());
		return -EINVAL;
	}
	/* a file's size check_fd checked; a device's is known here */
	if (seg->offset > size || seg->length > size - seg->offset) {
		(void) snprintf(err, errlen,
				"the device is smaller (%zu "
				"bytes) than the segment [%llu, +%llu)",
				size, (unsigned long long) seg->offset,
				(unsigned long long) seg->length);
		return -EINVAL;
	}
	uint64_t huge = huge_page_of(seg->fd);
	*align = huge > a ? huge : a;
	return 0;
}

/* What a segment's mapping reaches beyond it to be aligned. */
static uint64_t
lead_of(const struct mr_segment *seg, uint64_t align)
{
	return seg->offset % align;
}

static uint64_t
trail_of(const struct mr_segment *seg, uint64_t align)
{
	return (align - (seg->offset + seg->length) % align) % align;
}

/*
 * Whether a file outlives a power cut at all: not one of a file system
 * that lives in memory (memfds, shared anonymous memory and SysV shared
 * memory are tmpfs or hugetlbfs files too); msync of such a file is a
 * no-op, and it is persisted by nothing.
 */
static bool
kept_by_storage(int fd)
{
	struct statfs fs;
	if (fstatfs(fd, &fs))
		return false;
	return fs.f_type != TMPFS_MAGIC && fs.f_type != HUGETLBFS_MAGIC &&
			fs.f_type != RAMFS_MAGIC;
}

/*
 * Maps a file segment the way libpmem2 would: a DAX file that takes
 * MAP_SYNC, or a DAX device, is persisted by flushing CPU caches
 * (libpmem2's persist function, never msync); any other file lives in the
 * page cache and is persisted with msync. A device's mapping covers the
 * whole units of its alignment around the segment (map_segments left room
 * for them); what the registration reaches is the segment alone.
 */
static int
map_file_segment(struct mr_segment *seg, struct pmem2_source *src,
		uint64_t align, uint8_t *at, int prot, char *err, size_t errlen)
{
	struct stat st;
	bool dax_device = fstat(seg->fd, &st) == 0 && S_ISCHR(st.st_mode);
	/* mapped in whole units around the segment, as the client's is */
	bool units = dax_device || huge_page_of(seg->fd) > 0;
	void *p = MAP_FAILED;
	if (units) {
		uint64_t lead = lead_of(seg, align);
		p = mmap(at - lead, lead + seg->length + trail_of(seg, align),
				prot, MAP_SHARED | MAP_FIXED, seg->fd,
				(off_t) (seg->offset - lead));
	} else {
		p = mmap(at, seg->length, prot,
				MAP_SHARED_VALIDATE | MAP_SYNC | MAP_FIXED,
				seg->fd, (off_t) seg->offset);
	}
	bool dax = p != MAP_FAILED && (dax_device || !units);
	if (p == MAP_FAILED && !units)
		p = mmap(at, seg->length, prot, MAP_SHARED | MAP_FIXED, seg->fd,
				(off_t) seg->offset);
	if (p == MAP_FAILED) {
		int e = errno;
		(void) snprintf(err, errlen, "cannot map %s: %s",
				dax_device ? "a DAX device" : "a file",
				strerror(e));
		return -e;
	}
	if (!dax) {
		seg->page_cache = kept_by_storage(seg->fd);
		return 0;
	}
	if (pmem2_map_from_existing(&seg->map, src, at, seg->length,
			    PMEM2_GRANULARITY_CACHE_LINE)) {
		(void) snprintf(err, errlen, "libpmem2 cannot use a file: %s",
				pmem2_errormsg());
		return -EINVAL;
	}
	seg->persist = pmem2_get_persist_fn(seg->map);
	return 0;
}

/*
 * Where the span goes so that every DAX device's segment lands on an
 * address as aligned as its offset (the application's mapping is, which
 * is how it can register part of one): `*residue` is what the span's
 * start must be congruent to modulo `*align` (the largest alignment).
 * Only the first segment may begin and only the last end inside a unit
 * of alignment: others meet a neighbour there. 0, or -EINVAL with the
 * reason in err.
 */
static int
span_alignment(const struct mr *mr, const uint64_t *aligns, uint64_t *align,
		uint64_t *residue, char *err, size_t errlen)
{
	const uint64_t page = (uint64_t) sysconf(_SC_PAGESIZE);
	*align = page;
	*residue = 0;
	for (unsigned i = 0; i < mr->nsegs; i++) {
		if (aligns[i] > *align) {
			*align = aligns[i];
			*residue = (mr->segs[i].offset -
						   mr->segs[i].span_offset) %
					aligns[i];
		}
	}
	for (unsigned i = 0; i < mr->nsegs; i++) {
		const struct mr_segment *seg = &mr->segs[i];
		uint64_t a = aligns[i];
		if (a <= page)
			continue;
		uint64_t at = (seg->offset - seg->span_offset) % a;
		if ((lead_of(seg, a) && i > 0) ||
				(trail_of(seg, a) && i + 1 < mr->nsegs) ||
				*residue % a != at) {
			(void) snprintf(err, errlen,
					"segment %u (a DAX "
					"device or huge pages) maps in units "
					"of %llu bytes but is not mapped at an "
					"address so aligned",
					i, (unsigned long long) a);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Reserves the span, widened at its ends by what a DAX device's segment
 * there maps beyond it, and placed as span_alignment says.
 */
static int
reserve_span(struct mr *mr, const uint64_t *aligns, char *err, size_t errlen)
{
	uint64_t align, residue;
	int ret = span_alignment(mr, aligns, &align, &residue, err, errlen);
	if (ret)
		return ret;
	const struct mr_segment *first = &mr->segs[0];
	const struct mr_segment *last = &mr->segs[mr->nsegs - 1];
	uint64_t head = lead_of(first, aligns[0]);
	uint64_t tail = trail_of(last, aligns[mr->nsegs - 1]);
	uint64_t len = head + mr->span_len + tail;
	/* room to slide the span to its residue; given back below */
	uint64_t slack = align > (uint64_t) sysconf(_SC_PAGESIZE) ? align : 0;
	uint8_t *raw = mmap(NULL, len + slack, PROT_NONE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED) {
		int e = errno;
		(void) snprintf(err, errlen, "cannot reserve %llu bytes: %s",
				(unsigned long long) (len + slack),
				strerror(e));
		return -e;
	}
	uintptr_t start = (uintptr_t) raw + head;
	uint8_t *base = (uint8_t *) (start +
			(residue + align - start % align) % align);
	if (base - head > raw)
		(void) munmap(raw, (size_t) (base - head - raw));
	if (base + mr->span_len + tail < raw + len + slack)
		(void) munmap(base + mr->span_len + tail,
				(size_t) (raw + len + slack -
						(base + mr->span_len + tail)));
	mr->base = base;
	mr->resv = base - head;
	mr->resv_len = len;
	return 0;
}

/*
 * Whether rpmad's mapping of the segment's file must be guarded against
 * its holes (mr_holes.h): shared memory of no storage, which rpmad's own
 * accesses would otherwise fill in on its account (the library passes it
 * by the same judgement, fs_medium.h).
 */
static bool
needs_hole_guard(const struct mr_segment *seg)
{
	return seg->kind == MR_SEG_FILE &&
			fs_medium_of(seg->fd) == FS_MEDIUM_SHMEM;
}

/* Guards the whole mapping map_file_segment made of seg at `at`. */
static int
guard_file_segment(const struct mr_segment *seg, uint64_t align, uint8_t *at,
		char *err, size_t errlen)
{
	uint64_t lead = lead_of(seg, align);
	int ret = mr_holes_guard(at - lead,
			lead + seg->length + trail_of(seg, align));
	if (ret)
		(void) snprintf(err, errlen,
				"cannot guard the mapping of "
				"shared memory: %s",
				strerror(-ret));
	return ret;
}

/*
 * Maps the segments passed by descriptor into one reserved span, each at
 * its place; the places of the others stay inaccessible. `moves_bytes`:
 * rpmad itself reads and writes them (the software transport), so shared
 * memory's holes are guarded.
 */
int
mr_map_segments(struct mr *mr, bool moves_bytes, char *err, size_t errlen)
{
	bool any_mapped = false;
	for (unsigned i = 0; i < mr->nsegs; i++)
		any_mapped |= mr->segs[i].kind != MR_SEG_PROCESS;
	if (!any_mapped)
		return 0;

	/*
	 * one segment of a memfd or of a tmpfs file: a mapping shared with
	 * its neighbours (hugetlbfs files map whole huge pages: their own)
	 */
	const struct mr_segment *one = &mr->segs[0];
	bool guard = moves_bytes && needs_hole_guard(one);
	bool shared_pool = guard && huge_page_of(one->fd) == 0;
	if (mr->nsegs == 1 && (one->kind == MR_SEG_MEMFD || shared_pool)) {
		mr->base = mr_view_get(one->fd, one->offset, one->length,
				mr->writable, guard, &mr->view);
		if (mr->base)
			return 0;
	}

	const uint64_t page = (uint64_t) sysconf(_SC_PAGESIZE);
	struct pmem2_source **srcs = calloc(mr->nsegs, sizeof(*srcs));
	uint64_t *aligns = calloc(mr->nsegs, sizeof(*aligns));
	int ret = 0;
	if (srcs == NULL || aligns == NULL) {
		(void) snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < mr->nsegs && ret == 0; i++) {
		aligns[i] = page;
		if (mr->segs[i].kind == MR_SEG_FILE)
			ret = file_alignment(&mr->segs[i], &srcs[i], &aligns[i],
					err, errlen);
	}
	if (ret == 0)
		ret = reserve_span(mr, aligns, err, errlen);

	int prot = PROT_READ | (mr->writable ? PROT_WRITE : 0);
	for (unsigned i = 0; i < mr->nsegs && ret == 0; i++) {
		struct mr_segment *seg = &mr->segs[i];
		uint8_t *at = mr->base + seg->span_offset;
		if (seg->kind == MR_SEG_PROCESS)
			continue;
		if (seg->kind == MR_SEG_FILE) {
			ret = map_file_segment(seg, srcs[i], aligns[i], at,
					prot, err, errlen);
			if (ret == 0 && moves_bytes && needs_hole_guard(seg))
				ret = guard_file_segment(seg, aligns[i], at,
						err, errlen);
		} else if (mmap(at, seg->length, prot, MAP_SHARED | MAP_FIXED,
					   seg->fd,
					   (off_t) seg->offset) == MAP_FAILED) {
			ret = -errno;
			(void) snprintf(err, errlen,
					"cannot map segment %u: "
					"%s",
					i, strerror(-ret));
		}
	}
out:
	for (unsigned i = 0; srcs && i < mr->nsegs; i++) {
		if (srcs[i])
			(void) pmem2_source_delete(&srcs[i]);
	}
	free(srcs);
	free(aligns);
	return ret;
}

/*
 * A descriptor of the file behind `fd` of its own (a new open file
 * description, O_RDWR and nothing else: nothing the client does with its
 * descriptor, O_APPEND or O_DIRECT, changes where rpmad's writes land),
 * or -1. Only for a descriptor the client handed over for writing; and
 * not for a set-ID file, whose bits write(2) clears where stores through
 * the mapping keep them.
 */
static int
reopen_for_writes(int fd)
{
	struct stat st;
	int mode = fcntl(fd, F_GETFL);
	if (mode < 0 || (mode & O_ACCMODE) != O_RDWR || fstat(fd, &st) ||
			(st.st_mode & (S_ISUID | S_ISGID))) {
		errno = EPERM;
		return -1;
	}
	char link[64];
	(void) snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	/*
	 * The client's writable descriptor is the permission; rpmad's own
	 * file-system identity (fsident.h) may not open the client's files.
	 * Writes through it are still made with that identity.
	 */
	fsident_root();
	int wfd = open(link, O_RDWR | O_CLOEXEC);
	int e = errno;
	fsident_restore();
	errno = e;
	return wfd;
}

/*
 * Opens the write descriptors of mr.h for the page-cache segments rpmad
 * writes into on the software transport (an RDMA device writes through
 * its own registration). A descriptor rpmad cannot have (the user's
 * max_descriptors, rpmad's own limit) leaves that segment's writes on the
 * mapping: slower beside a persist, the same bytes.
 */
void
mr_open_write_fds(struct mr *mr, const struct client *c,
		const struct transport_ops *tp)
{
	if (tp->mr_register || !mr_usage_rpmad_writes(mr->usage))
		return;
	for (unsigned i = 0; i < mr->nsegs; i++) {
		struct mr_segment *seg = &mr->segs[i];
		if (!seg->page_cache || !tenant_fds_allow(c, mr->write_fds + 1))
			continue;
		seg->write_fd = reopen_for_writes(seg->fd);
		if (seg->write_fd >= 0)
			mr->write_fds++;
		else
			log_debug("registration of %s: writes go through "
				  "the mapping: %s",
					c->name, strerror(errno));
	}
}

/* Names the backing of a registration for rpmactl. */
void
mr_describe_backing(struct mr *mr)
{
	(void) snprintf(mr->backing, sizeof(mr->backing), "anonymous");
	for (unsigned i = 0; i < mr->nsegs; i++) {
		if (mr->segs[i].kind != MR_SEG_FILE)
			continue;
		char link[64];
		(void) snprintf(link, sizeof(link), "/proc/self/fd/%d",
				mr->segs[i].fd);
		ssize_t n = readlink(link, mr->backing,
				sizeof(mr->backing) - 1);
		mr->backing[n > 0 ? n : 0] = '\0';
		return;
	}
}

/*
 * A segment of the client's own memory: reachable through the address
 * space it handed over at hello, and mapped as the usage needs it right
 * now (the library checked as much; a client that did not pays only
 * itself). 0, or a negative errno with the reason in err.
 */
static int
take_process_segment(struct call *call, struct mr *mr,
		const struct mr_segment *seg, bool needs_write, char *err,
		size_t errlen)
{
	struct addrspace *as = call->client->as;
	if (as == NULL) {
		(void) snprintf(err, errlen,
				"memory of the client's own "
				"needs the descriptors of its address space "
				"at hello");
		return -EINVAL;
	}
	int ret = addrspace_check(as, call->client->pid,
			mr->span_start + seg->span_offset, seg->length,
			needs_write, err, errlen);
	if (ret == 0 && mr->as == NULL)
		mr->as = addrspace_get(as);
	return ret;
}

/*
 * Checks the range, the usage and the segments' shape; fills mr. 0, or
 * a negative errno with the call failed.
 */
int
mr_take_segments(struct call *call, const struct mr_reg_args *m, struct mr *mr)
{
	const uint64_t page = (uint64_t) sysconf(_SC_PAGESIZE);

	if (m->addr == 0 || m->length == 0 || m->addr + m->length < m->addr ||
			m->addr + m->length > UINT64_MAX - page) {
		call_fail(call, RPMA_E_INVAL, 0, "bad range");
		return -EINVAL;
	}
	if (m->usage == 0 || (m->usage & ~MR_USAGE_ALL)) {
		call_fail(call, RPMA_E_INVAL, 0, "bad usage 0x%x", m->usage);
		return -EINVAL;
	}
	if (m->n_segments == 0 || m->n_segments > MR_MAX_SEGMENTS) {
		call_fail(call, RPMA_E_INVAL, 0, "%zu segments", m->n_segments);
		return -EINVAL;
	}

	mr->addr = m->addr;
	mr->length = m->length;
	mr->usage = m->usage;
	mr->span_start = m->addr & ~(page - 1);
	mr->span_len = ((m->addr + m->length + page - 1) & ~(page - 1)) -
			mr->span_start;
	/* where data lands; WRITE_SRC may land data too, where possible */
	bool needs_write = mr_usage_rpmad_writes(mr->usage);
	/*
	 * Mapped writable whenever the client's files allow it, whatever the
	 * usage: kernels before 6.2 pin every RDMA registration for writing
	 * (FOLL_WRITE | FOLL_FORCE), which a read-only shared mapping refuses
	 * with EFAULT. What rpmad does with the pages is decided by the usage
	 * (mr_allows), and what the NIC may do by the access flags.
	 */
	mr->writable = true;

	mr->segs = calloc(m->n_segments, sizeof(*mr->segs));
	if (mr->segs == NULL) {
		call_fail(call, RPMA_E_NOMEM, ENOMEM, "segments");
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->n_segments; i++)
		mr->segs[i].fd = mr->segs[i].write_fd = -1;
	mr->nsegs = (unsigned) m->n_segments;

	uint64_t covered = 0;
	for (size_t i = 0; i < m->n_segments; i++) {
		const struct mr_reg_segment *in = &m->segments[i];
		struct mr_segment *seg = &mr->segs[i];
		char err[256];
		if ((!in->in_process && in->fd_index >= m->nfds) ||
				in->length == 0 || in->length % page ||
				in->offset % page ||
				in->length > mr->span_len - covered) {
			call_fail(call, RPMA_E_INVAL, 0,
					"segment %zu is not "
					"well-formed",
					i);
			return -EINVAL;
		}
		seg->offset = in->offset;
		seg->length = in->length;
		seg->span_offset = covered;
		covered += in->length;
		int ret;
		if (in->in_process) {
			seg->kind = MR_SEG_PROCESS;
			seg->offset = 0;
			ret = take_process_segment(call, mr, seg, needs_write,
					err, sizeof(err));
		} else {
			seg->kind = in->file_backed ? MR_SEG_FILE :
						      MR_SEG_MEMFD;
			/* the same fd may serve several segments: a dup each */
			seg->fd = fcntl(m->fds[in->fd_index], F_DUPFD_CLOEXEC,
					0);
			ret = seg->fd < 0 ? -errno : 0;
			if (ret)
				(void) snprintf(err, sizeof(err), "dup: %s",
						strerror(-ret));
			if (ret == 0)
				ret = check_file_system(seg->fd,
						call->client->pid, needs_write,
						err, sizeof(err));
			if (ret == 0)
				ret = check_fd(seg->fd, seg, needs_write,
						&mr->writable, err,
						sizeof(err));
		}
		if (ret) {
			call_fail(call, RPMA_E_PROVIDER, 0, "segment %zu: %s",
					i, err);
			return ret;
		}
	}
	if (covered != mr->span_len) {
		call_fail(call, RPMA_E_INVAL, 0,
				"the segments cover %llu of %llu "
				"bytes",
				(unsigned long long) covered,
				(unsigned long long) mr->span_len);
		return -EINVAL;
	}
	return 0;
}
