/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device_req.h -- a client's requests about devices (objects/device.h)
 */

#ifndef RPMAD_DEVICE_REQ_H
#define RPMAD_DEVICE_REQ_H

struct req_ctx;

void device_handle_get(struct req_ctx *rc);
void device_handle_query(struct req_ctx *rc);

#endif /* RPMAD_DEVICE_REQ_H */
