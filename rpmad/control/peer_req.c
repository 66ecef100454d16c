// SPDX-License-Identifier: BSD-3-Clause
/*
 * peer_req.c -- PeerNew and PeerDelete (objects/peer.h)
 */

#include "clients/call.h"
#include "clients/reply.h"
#include "control/peer_req.h"
#include "objects/peer.h"

void
peer_handle_new(struct req_ctx *rc)
{
	struct call call = { .client = rc->client };
	struct peer *peer = peer_new(&call, rc->req->peer_new->device_id);
	if (peer == NULL) {
		req_fail_call(rc, &call);
		return;
	}
	rpmad__peer_reply__init(&rc->peer);
	rc->peer.peer_id = peer->obj.id;
	rc->resp.body_case = RPMAD__RESPONSE__BODY_PEER;
	rc->resp.peer = &rc->peer;
}

void
peer_handle_delete(struct req_ctx *rc)
{
	struct call call = { .client = rc->client };
	struct peer *peer = peer_find(&call, rc->req->peer_delete->peer_id);
	if (peer == NULL || peer_delete(&call, peer)) {
		req_fail_call(rc, &call);
		return;
	}
	req_ok(rc);
}
