/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr.h -- local and remote memory registrations, for the library's use
 */

#ifndef RPMACLIENT_MR_H
#define RPMACLIENT_MR_H

#include <stddef.h>
#include <stdint.h>

#include "librpma.h"
#include "memshare.h"
#include "mr_usage.h"

/* addr (LE u64), length (LE u64), rkey (LE u32), usage (u8) */
#define MR_DESCRIPTOR_SIZE 21


struct rpma_mr_local {
	struct rpma_peer *peer;
	uint64_t generation;	/* broker session it was registered in */
	unsigned epoch;		/* fork.h */
	struct memshare_held *held;	/* pages of the library's memfd */
	unsigned nheld;
	uint64_t mr_id;		/* rpmad's handle */
	uint32_t lkey;		/* rpmad's name of it, in ring entries */
	uint32_t rkey;		/* what remote peers name it by */
	void *ptr;
	size_t size;
	int usage;
	bool private_only;	/* memshare_plan.private_only */
	bool landed;		/* its remote accesses go by landing.h */
};

struct rpma_mr_remote {
	uint64_t raddr;		/* the owner's virtual address */
	uint64_t size;
	uint32_t rkey;
	int usage;
};

#endif /* RPMACLIENT_MR_H */
