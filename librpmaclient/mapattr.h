/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mapattr.h -- what an application set on a mapping, read and set again
 *
 * When the library must replace a mapping (vamem.h: private pages moved
 * into shared memory for an RDMA device, and back), the new one gets what
 * the application gave the old one: protection and protection key,
 * locking, the madvise flags, the NUMA policy and the wish for huge pages.
 * They are read from /proc/self/smaps (VmFlags, ProtectionKey) and
 * get_mempolicy(2).
 */

#ifndef RPMACLIENT_MAPATTR_H
#define RPMACLIENT_MAPATTR_H

#include <stdbool.h>
#include <stdint.h>

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
	int policy;			/* MPOL_*; MPOL_DEFAULT when none */
	unsigned long nodes[MAPATTR_NODE_WORDS];
};

struct mapattr_range {
	uintptr_t start, end;
	struct mapattr attr;
};

/*
 * mapattr_read -- the attributes of each mapping overlapping [start, end),
 * clipped to it, in address order, into a malloc'ed array. Returns how
 * many, or -1 (errno set).
 */
int mapattr_read(uintptr_t start, uintptr_t end, struct mapattr_range **out);

/*
 * mapattr_apply -- give [start, end) the attributes `a`, as far as a
 * mapping of its kind can carry them (`shared`: wipe-on-fork and KSM exist
 * only for private memory; huge pages for shared memory only where the
 * kernel offers them). 0, or -errno of the first that failed.
 */
int mapattr_apply(uintptr_t start, uintptr_t end, const struct mapattr *a,
		bool shared);

/*
 * mapattr_policy_apply -- the NUMA policy of `a` on [start, end), before
 * pages are allocated there. 0 or -errno.
 */
int mapattr_policy_apply(uintptr_t start, uintptr_t end,
		const struct mapattr *a);

#endif /* RPMACLIENT_MAPATTR_H */
