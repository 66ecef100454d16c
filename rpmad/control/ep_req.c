// SPDX-License-Identifier: BSD-3-Clause
/*
 * ep_req.c -- EpListen, EpShutdown and EpNextConnReq (objects/ep.h)
 */

#include "clients/call.h"
#include "clients/reply.h"
#include "control/conn_req.h"
#include "control/ep_req.h"
#include "objects/conn.h"
#include "objects/ep.h"
#include "objects/peer.h"

void
ep_handle_listen(struct req_ctx *rc)
{
	const Rpmad__EpListen *m = rc->req->ep_listen;
	struct call call = { .client = rc->client };
	int fd = -1;
	struct peer *peer = peer_find(&call, m->peer_id);
	struct ep *ep = peer ? ep_listen(&call, peer, m->addr, m->port, &fd) :
			       NULL;
	if (ep == NULL) {
		req_fail_call(rc, &call);
		return;
	}

	rpmad__ep_reply__init(&rc->ep);
	rc->ep.ep_id = ep_id(ep);
	rc->ep.fd_count = 1;
	req_pass_fd(rc, fd);
	rc->resp.body_case = RPMAD__RESPONSE__BODY_EP;
	rc->resp.ep = &rc->ep;
}

void
ep_handle_shutdown(struct req_ctx *rc)
{
	struct call call = { .client = rc->client };
	struct ep *ep = ep_find(&call, rc->req->ep_shutdown->ep_id);
	if (ep == NULL) {
		req_fail_call(rc, &call);
		return;
	}
	ep_shutdown(ep);
	req_ok(rc);
}

void
ep_handle_next_conn_req(struct req_ctx *rc)
{
	const Rpmad__EpNextConnReq *m = rc->req->ep_next_conn_req;
	struct call call = { .client = rc->client };
	struct conn_cfg cfg;
	struct ep *ep = ep_find(&call, m->ep_id);
	struct conn *conn = ep ?
			ep_next_conn(&call, ep, conn_cfg_of(m->cfg, &cfg)) :
			NULL;
	if (conn == NULL) {
		req_fail_call(rc, &call);
		return;
	}
	conn_reply_qp(rc, conn);
}
