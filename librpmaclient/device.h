/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device.h -- devices served by rpmad, as the library hands them out
 *
 * rpma_utils_get_ibv_context() returns a struct ibv_context * that points
 * into one of these objects. Applications only pass it back (to
 * rpma_peer_new and rpma_utils_ibv_context_is_odp_capable); its `device`
 * member carries the device's name for ibv_get_device_name(). Devices live
 * until the process exits, as verbs contexts do for librpma, and outlive
 * rpmad's sessions: each keeps the address it was looked up for, by which
 * a restarted rpmad is asked for it again (device_current).
 */

#ifndef RPMACLIENT_DEVICE_H
#define RPMACLIENT_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "addr.h"
#include "librpma.h"

struct rpma_device {
	struct ibv_context ctx;
	struct ibv_device dev;
	/* the session that named it, and its name there */
	uint64_t generation;
	uint32_t device_id;
	bool odp_capable;
	/* what it was looked up for (a numeric address) */
	char host[ADDR_HOST_MAX];
	enum rpma_util_ibv_context_type type;
	bool rdma;		/* an RDMA device (rpmad's verbs transport) */
	struct rpma_device *next;
};

/* device_from_ctx -- our device behind ctx, or NULL for a foreign pointer */
struct rpma_device *device_from_ctx(const struct ibv_context *ctx);

/*
 * device_current -- the device in rpmad's current session: its session's
 * generation and its id there. After rpmad restarted it is looked up
 * again by the address it was found for, and must be the device of the
 * same name. 0, or an RPMA_E_* code (logged).
 */
int device_current(struct rpma_device *d, uint64_t *generation,
		uint32_t *device_id);

#endif /* RPMACLIENT_DEVICE_H */
