/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep_req.h -- a client's requests about its listening endpoints
 * (objects/ep.h)
 */

#ifndef RPMAD_EP_REQ_H
#define RPMAD_EP_REQ_H

struct req_ctx;

void ep_handle_listen(struct req_ctx *rc);
void ep_handle_shutdown(struct req_ctx *rc);
void ep_handle_next_conn_req(struct req_ctx *rc);

#endif /* RPMAD_EP_REQ_H */
