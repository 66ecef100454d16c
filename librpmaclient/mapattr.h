/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mapattr.h -- what an application set on a mapping, read and set again
 *
 * When the library must replace a mapping (vamem.h: private pages moved
 * into shared memory for an RDMA device, and back), the new one gets what
 * the application gave the old one: protection and protection key,
 * locking, the madvise flags, the NUMA policy and the wish for huge pages.
 * They are read from /proc/self/smaps (VmFlags, ProtectionKey) and
 * get_mempolicy(2), always as they are now: what the application changed
 * while its pages were moved is what they get back.
 */

#ifndef RPMACLIENT_MAPATTR_H
#define RPMACLIENT_MAPATTR_H

#include <stdbool.h>
#include <stdint.h>

#include "proc_maps.h"

/* nodes a NUMA policy may name: enough for any machine Linux runs on */
#define MAPATTR_NODE_WORDS 16

struct mapattr {
	int prot;			/* PROT_* */
	int pkey;			/* 0: the default key */
	bool locked, lock_on_fault;	/* mlock, mlock2(MLOCK_ONFAULT) */
	bool dontdump, dontfork, wipeonfork;
	bool hugepage, nohugepage, mergeable;
	bool huge_now;			/* backed by huge pages now */
	bool userfault;			/* registered with a userfaultfd */
	unsigned long page_kb;		/* KernelPageSize: hugetlb's own */
	int policy;			/* MPOL_*; MPOL_DEFAULT when none */
	unsigned long nodes[MAPATTR_NODE_WORDS];
};

struct mapattr_range {
	uintptr_t start, end;
	struct mapattr attr;
	struct maps_entry map;		/* the whole mapping, as maps shows it */
};

/*
 * mapattr_read -- the attributes of each mapping overlapping [start, end),
 * clipped to it, in address order, into a malloc'ed array. Returns how
 * many, or -1 (errno set).
 */
int mapattr_read(uintptr_t start, uintptr_t end, struct mapattr_range **out);

/* mapattr_fresh -- what a new mapping of protection `prot` has */
struct mapattr mapattr_fresh(int prot);

/*
 * mapattr_shape -- from `from` to `to`, what decides where and how big
 * the pages of [start, end) are made: the NUMA policy and the wish for
 * huge pages. Before the pages are filled. `shared`: the range is shared
 * memory, which gets huge pages only where the kernel gives shmem any;
 * *asked_huge (may be NULL) tells whether MADV_HUGEPAGE was given for
 * that reason alone, to keep the huge pages `to` has now. 0 or -errno.
 */
int mapattr_shape(uintptr_t start, uintptr_t end, const struct mapattr *from,
		const struct mapattr *to, bool shared, bool *asked_huge);

/*
 * mapattr_finish -- from `from` to `to`, the rest: protection and key,
 * locking, MADV_DONTDUMP, MADV_DONTFORK, and for private memory
 * MADV_WIPEONFORK and KSM. Each is set or cleared as `to` says. 0, or
 * -errno of the first that failed.
 */
int mapattr_finish(uintptr_t start, uintptr_t end, const struct mapattr *from,
		const struct mapattr *to, bool shared);

#endif /* RPMACLIENT_MAPATTR_H */
