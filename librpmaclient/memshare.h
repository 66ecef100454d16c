/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memshare.h -- making application memory reachable by rpmad
 *
 * rpmad must see the very pages the application uses, without the
 * application changing its pointer or losing its data:
 *  - private memory (heap, posix_memalign, anonymous mmap, a program's
 *    data and bss, MAP_PRIVATE files) is moved into a memfd mapped at the
 *    same address, contents included;
 *  - shared file mappings (pmem files, DAX devices) are passed by fd and
 *    offset and never remapped, so stores keep reaching the file;
 *  - pages moved by an earlier registration are found and reused.
 * Anything else (the calling thread's or the main thread's stack, special
 * mappings, memory without read access, holes) cannot be shared safely and
 * is refused.
 */

#ifndef RPMACLIENT_MEMSHARE_H
#define RPMACLIENT_MEMSHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_socket.h"
#include "mr_usage.h"

struct memshare_segment {
	unsigned fd_index;
	uint64_t offset;
	uint64_t length;
	bool file_backed;
};

/* What rpmad needs to map a registration: its pages as file segments. */
struct memshare_plan {
	uintptr_t start;	/* page-aligned span covering the range */
	uint64_t length;
	struct memshare_segment segs[MR_MAX_SEGMENTS];
	unsigned nsegs;
	int fds[CTL_MAX_FDS];
	bool fd_owned[CTL_MAX_FDS];	/* opened for this plan only */
	unsigned nfds;
};

/*
 * memshare_prepare -- share the pages covering [ptr, ptr + size) and
 * describe them in `plan`. On failure the reason is logged and an RPMA_E_*
 * code returned; pages already moved stay moved (harmless: they behave as
 * before). Holds the process-wide registration lock until memshare_done().
 */
int memshare_prepare(void *ptr, size_t size, struct memshare_plan *plan);

/*
 * memshare_populate -- fault in every page of the plan's span in this
 * process (for writing when rpmad will write into it), so that the pages,
 * page-cache pages and file blocks are allocated for, and charged to, the
 * application and its memory cgroup, with its own credentials and quotas,
 * rather than to rpmad when it first touches them. 0 or an RPMA_E_* code
 * (logged). Call between memshare_prepare() and memshare_done().
 */
int memshare_populate(const struct memshare_plan *plan, bool write);

/* memshare_done -- release the plan's own fds and the lock. */
void memshare_done(struct memshare_plan *plan);

#endif /* RPMACLIENT_MEMSHARE_H */
