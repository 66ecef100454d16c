/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_cfg.h -- the peer configuration object, for the library's use
 */

#ifndef RPMACLIENT_PEER_CFG_H
#define RPMACLIENT_PEER_CFG_H

#include <stdbool.h>

#include "librpma.h"

/* The descriptor is one byte: direct write to pmem, 0 or 1. */
#define PEER_CFG_DESCRIPTOR_SIZE 1

struct rpma_peer_cfg {
	bool direct_write_to_pmem;
};

#endif /* RPMACLIENT_PEER_CFG_H */
