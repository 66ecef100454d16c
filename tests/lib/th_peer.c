// SPDX-License-Identifier: BSD-3-Clause
/*
 * th_peer.c -- a peer of this host (see th_peer.h)
 */

#include <stdio.h>

#include "th_peer.h"

struct rpma_peer *
th_local_peer(void)
{
	struct ibv_context *dev;
	int ret = rpma_utils_get_ibv_context("127.0.0.1",
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev);
	if (ret) {
		(void) fprintf(stderr, "rpma_utils_get_ibv_context: %s\n",
				rpma_err_2str(ret));
		return NULL;
	}
	struct rpma_peer *peer = NULL;
	ret = rpma_peer_new(dev, &peer);
	if (ret)
		(void) fprintf(stderr, "rpma_peer_new: %s\n",
				rpma_err_2str(ret));
	return peer;
}
