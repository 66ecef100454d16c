// SPDX-License-Identifier: BSD-3-Clause
/*
 * device_req.c -- DeviceGet and DeviceQuery: the device that serves an
 * address, and a device by its number (objects/device.h)
 */

#include "clients/call.h"
#include "clients/reply.h"
#include "control/device_req.h"
#include "librpma.h"
#include "objects/device.h"
#include "transport/transport.h"

static void
reply_device(struct req_ctx *rc, const struct device *d)
{
	rpmad__device_info__init(&rc->device);
	rc->device.device_id = d->id;
	rc->device.name = (char *) d->name;
	rc->device.transport = (char *) d->tp->name;
	rc->device.odp_capable = d->odp_capable;
	rc->resp.body_case = RPMAD__RESPONSE__BODY_DEVICE;
	rc->resp.device = &rc->device;
}

void
device_handle_get(struct req_ctx *rc)
{
	const Rpmad__DeviceGet *m = rc->req->device_get;
	struct call call = { .client = rc->client };
	struct device *d = device_for_addr(&call, m->addr,
			m->type == RPMAD__CONTEXT_TYPE__CONTEXT_LOCAL);
	if (d == NULL) {
		req_fail_call(rc, &call);
		return;
	}
	reply_device(rc, d);
}

void
device_handle_query(struct req_ctx *rc)
{
	struct device *d = device_by_id(rc->req->device_query->device_id);
	if (d == NULL) {
		req_fail(rc, RPMA_E_INVAL, 0, "no device %u",
				rc->req->device_query->device_id);
		return;
	}
	reply_device(rc, d);
}
