/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device.h -- devices served by rpmad, as the library hands them out
 *
 * rpma_utils_get_ibv_context() returns a struct ibv_context * that points
 * into one of these objects. Applications only pass it back (to
 * rpma_peer_new and rpma_utils_ibv_context_is_odp_capable); its `device`
 * member carries the device's name for ibv_get_device_name(). Devices live
 * until the process exits, as verbs contexts do for librpma.
 */

#ifndef RPMACLIENT_DEVICE_H
#define RPMACLIENT_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "librpma.h"

struct rpma_device {
	struct ibv_context ctx;
	struct ibv_device dev;
	uint64_t generation;
	uint32_t device_id;
	bool odp_capable;
	struct rpma_device *next;
};

/* device_from_ctx -- our device behind ctx, or NULL for a foreign pointer */
struct rpma_device *device_from_ctx(const struct ibv_context *ctx);

#endif /* RPMACLIENT_DEVICE_H */
