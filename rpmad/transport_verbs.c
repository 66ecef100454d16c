// SPDX-License-Identifier: BSD-3-Clause
/*
 * transport_verbs.c -- placeholder until the rdma-core transport lands:
 * no RDMA device serves any address, so every peer uses the TCP transport.
 */

#include <stddef.h>

#include "device.h"
#include "transport.h"

struct device *
transport_verbs_device_for(const struct sockaddr_storage *ss, socklen_t len,
		bool local)
{
	(void) ss;
	(void) len;
	(void) local;
	return NULL;
}

const struct transport_ops transport_verbs = {
	.name = "verbs",
};
