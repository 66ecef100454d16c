/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr_usage.h -- what a registration's usage means, and the limits of one
 * registration, as the library and rpmad both apply them
 */

#ifndef RPMAD_COMMON_MR_USAGE_H
#define RPMAD_COMMON_MR_USAGE_H

#include <stdbool.h>

#include "librpma.h"

/* every RPMA_MR_USAGE_* bit librpma 0.12 defines */
#define MR_USAGE_ALL 0xffu

/* most segments (pieces of memory of one file each) one registration has */
#define MR_MAX_SEGMENTS 64

/*
 * mr_usage_local_write -- librpma's usage-to-access mapping grants local
 * write (IBV_ACCESS_LOCAL_WRITE) for these usages; e.g. PREFETCH_WRITE
 * advice needs it
 */
static inline bool
mr_usage_local_write(unsigned usage)
{
	return (usage & (RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC |
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_RECV)) != 0;
}

/*
 * mr_usage_rpmad_writes -- usages for which rpmad itself stores into the
 * registration (read data, written data, received messages): the client
 * must hand it the memory writable, and faults it in for writing
 */
static inline bool
mr_usage_rpmad_writes(unsigned usage)
{
	return (usage & (RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_RECV)) != 0;
}

#endif /* RPMAD_COMMON_MR_USAGE_H */
