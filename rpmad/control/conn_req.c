// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_req.c -- ConnReqNew, ConnReqDelete, ConnReqConnect, ConnNextEvent,
 * ConnDisconnect and ConnDelete (objects/conn.h)
 */

#include "clients/call.h"
#include "clients/reply.h"
#include "control/conn_req.h"
#include "objects/conn.h"
#include "objects/peer.h"

const struct conn_cfg *
conn_cfg_of(const Rpmad__ConnCfg *m, struct conn_cfg *cfg)
{
	if (m == NULL)
		return NULL;
	*cfg = (struct conn_cfg){
		.timeout_ms = m->timeout_ms,
		.cq_size = m->cq_size,
		.rcq_size = m->rcq_size,
		.sq_size = m->sq_size,
		.rq_size = m->rq_size,
		.srq_id = m->srq_id,
		.sq_staging = m->sq_staging,
		.rq_staging = m->rq_staging,
	};
	return cfg;
}

void
conn_reply_qp(struct req_ctx *rc, struct conn *conn)
{
	struct conn_handover h;
	conn_handover(conn, &h);
	rpmad__qp_reply__init(&rc->qp);
	rc->qp.conn_id = h.id;
	rc->qp.qp_num = h.qp_num;
	rc->qp.region_size = h.region_size;
	rc->qp.private_data.data = (uint8_t *) h.pdata;
	rc->qp.private_data.len = h.pdata_len;
	rc->qp.fd_count = h.nfds;
	rc->qp.staging_lkey = h.staging_lkey;
	rc->qp.sq_staging = h.sq_staging;
	rc->qp.rq_staging = h.rq_staging;
	/* the client's ends go with the answer and are closed after it */
	for (unsigned i = 0; i < h.nfds; i++)
		req_pass_fd(rc, h.fds[i]);
	rc->resp.body_case = RPMAD__RESPONSE__BODY_QP;
	rc->resp.qp = &rc->qp;
}

void
conn_handle_req_new(struct req_ctx *rc)
{
	const Rpmad__ConnReqNew *m = rc->req->conn_req_new;
	struct call call = { .client = rc->client };
	struct conn_cfg cfg;
	struct peer *peer = peer_find(&call, m->peer_id);
	struct conn *conn = peer ?
			conn_new_active(&call, peer, m->addr, m->port,
					conn_cfg_of(m->cfg, &cfg)) :
			NULL;
	if (conn == NULL) {
		req_fail_call(rc, &call);
		return;
	}
	conn_reply_qp(rc, conn);
}

void
conn_handle_req_delete(struct req_ctx *rc)
{
	struct call call = { .client = rc->client };
	struct conn *conn = conn_find(&call, rc->req->conn_req_delete->conn_id);
	if (conn == NULL) {
		req_fail_call(rc, &call);
		return;
	}
	conn_delete(conn);
	req_ok(rc);
}

void
conn_handle_req_connect(struct req_ctx *rc)
{
	const Rpmad__ConnReqConnect *m = rc->req->conn_req_connect;
	struct call call = { .client = rc->client };
	struct conn *conn = conn_find(&call, m->conn_id);
	if (conn == NULL ||
			conn_connect(&call, conn, m->private_data.data,
					m->private_data.len)) {
		req_fail_call(rc, &call);
		return;
	}
	req_ok(rc);
}

void
conn_handle_next_event(struct req_ctx *rc)
{
	struct call call = { .client = rc->client };
	struct conn_event_view ev;
	struct conn *conn = conn_find(&call, rc->req->conn_next_event->conn_id);
	if (conn == NULL || conn_next_event(&call, conn, &ev)) {
		req_fail_call(rc, &call);
		return;
	}

	rpmad__conn_event__init(&rc->event);
	rc->event.event = ev.event;
	rc->event.has_private_data = ev.has_pdata;
	rc->event.private_data.data = (uint8_t *) ev.pdata;
	rc->event.private_data.len = ev.pdata_len;
	rc->resp.body_case = RPMAD__RESPONSE__BODY_EVENT;
	rc->resp.event = &rc->event;
}

void
conn_handle_disconnect(struct req_ctx *rc)
{
	struct call call = { .client = rc->client };
	struct conn *conn = conn_find(&call, rc->req->conn_disconnect->conn_id);
	if (conn == NULL || conn_disconnect(&call, conn)) {
		req_fail_call(rc, &call);
		return;
	}
	req_ok(rc);
}

void
conn_handle_delete(struct req_ctx *rc)
{
	struct call call = { .client = rc->client };
	struct conn *conn = conn_find(&call, rc->req->conn_delete->conn_id);
	if (conn == NULL) {
		req_fail_call(rc, &call);
		return;
	}
	conn_delete(conn);
	req_ok(rc);
}
