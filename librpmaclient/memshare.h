/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memshare.h -- how rpmad reaches the memory of a registration
 *
 * rpmad must reach the very pages the application uses, and nothing about
 * the application's memory may change (the library is a guest in the
 * process):
 *  - with rpmad's software transport, rpmad reaches the memory through the
 *    process's own address space (the descriptors of /proc/self/mem and
 *    /proc/self/maps the library hands over at hello): nothing is moved,
 *    shared or pinned. Shared mappings of files on persistent storage come
 *    by descriptor as well, so that rpmad can persist them;
 *  - an RDMA device reaches memory through rpmad's own mappings: shared
 *    mappings are passed by descriptor as they are, and private pages
 *    are moved into the library's memfd (vamem.h), as are those of a
 *    process whose address space rpmad does not have (no /proc).
 * Either way the usage is checked against the memory's protection as
 * ibv_reg_mr checks it, and every page is faulted in first, by the
 * application (charged to it, with its credentials).
 */

#ifndef RPMACLIENT_MEMSHARE_H
#define RPMACLIENT_MEMSHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_socket.h"
#include "mr_usage.h"

enum memshare_kind {
	MEMSHARE_FILE,		/* a file of the application's, by descriptor */
	MEMSHARE_MEMFD,		/* moved private pages: the library's memfd */
	MEMSHARE_PROCESS,	/* through the process's address space */
};

struct memshare_segment {
	enum memshare_kind kind;
	unsigned fd_index;	/* FILE, MEMFD */
	uint64_t offset;	/* FILE, MEMFD: in the file */
	uint64_t length;
};

/* Pages of the library's memfd a registration holds (vamem_ref). */
struct memshare_held {
	uintptr_t start, end;
};

/* What rpmad needs to reach a registration, and what it holds. */
struct memshare_plan {
	uintptr_t start;	/* page-aligned span covering the range */
	uint64_t length;
	struct memshare_segment segs[MR_MAX_SEGMENTS];
	unsigned nsegs;
	int fds[CTL_MAX_FDS];
	bool fd_owned[CTL_MAX_FDS];	/* opened for this plan only */
	unsigned nfds;
	struct memshare_held held[MR_MAX_SEGMENTS];
	unsigned nheld;
	/*
	 * every page is private memory of the process's own, no file's:
	 * copying its bytes in the process can neither fault on a file's
	 * missing block nor change a file (staging.h)
	 */
	bool private_only;
};

/* How rpmad reaches a registration's memory. */
struct memshare_reach {
	bool rdma; /* it is for an RDMA device */
	bool addrspace; /* rpmad has this process's address space */
	/*
	 * rpmad maps shared memory of no storage (tmpfs, hugetlbfs) it gets
	 * by descriptor, guarded against the holes the process punches
	 */
	bool shared_by_fd;
};

/*
 * memshare_prepare -- describe (and for RDMA devices, share) the pages
 * covering [ptr, ptr + size) for a registration of `usage`, reached as
 * `reach` says. On failure the reason is logged, an RPMA_E_* code is
 * returned and nothing has changed.
 */
int memshare_prepare(void *ptr, size_t size, int usage,
		const struct memshare_reach *reach, struct memshare_plan *plan);

/*
 * memshare_done -- release the plan's own descriptors; unless the
 * registration was made (`registered`), give back what the plan holds.
 */
void memshare_done(struct memshare_plan *plan, bool registered);

/*
 * memshare_release -- a registration ends: give back the memfd's pages it
 * held (those no other registration holds become private again).
 */
void memshare_release(const struct memshare_held *held, unsigned n);

#endif /* RPMACLIENT_MEMSHARE_H */
