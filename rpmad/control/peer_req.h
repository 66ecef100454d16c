/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_req.h -- a client's requests about its peers (objects/peer.h)
 */

#ifndef RPMAD_PEER_REQ_H
#define RPMAD_PEER_REQ_H

struct req_ctx;

void peer_handle_new(struct req_ctx *rc);
void peer_handle_delete(struct req_ctx *rc);

#endif /* RPMAD_PEER_REQ_H */
