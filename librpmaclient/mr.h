/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr.h -- local and remote memory registrations, for the library's use
 */

#ifndef RPMACLIENT_MR_H
#define RPMACLIENT_MR_H

#include <stddef.h>
#include <stdint.h>

#include "librpma.h"

/* addr (LE u64), length (LE u64), rkey (LE u32), usage (u8) */
#define MR_DESCRIPTOR_SIZE 21

#define MR_USAGE_ALL 0xff

struct rpma_mr_local {
	struct rpma_peer *peer;
	uint64_t generation;	/* broker session it was registered in */
	uint64_t mr_id;		/* rpmad's handle */
	uint32_t lkey;		/* rpmad's name of it, in ring entries */
	uint32_t rkey;		/* what remote peers name it by */
	void *ptr;
	size_t size;
	int usage;
};

struct rpma_mr_remote {
	uint64_t raddr;		/* the owner's virtual address */
	uint64_t size;
	uint32_t rkey;
	int usage;
};

/* mr_usage_has_local_write -- usage bits that let rpmad write into it */
static inline int
mr_usage_has_local_write(int usage)
{
	return (usage & (RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC |
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_RECV)) != 0;
}

#endif /* RPMACLIENT_MR_H */
