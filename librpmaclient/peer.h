/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.h -- the peer object (a protection domain inside rpmad)
 */

#ifndef RPMACLIENT_PEER_H
#define RPMACLIENT_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include "librpma.h"

struct rpma_peer {
	uint64_t generation;
	uint64_t peer_id;
	bool rdma;		/* of an RDMA device (memshare.h) */
	unsigned epoch;		/* fork.h */
};

#endif /* RPMACLIENT_PEER_H */
