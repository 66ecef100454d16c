// SPDX-License-Identifier: BSD-3-Clause
/*
 * srq_req.c -- SrqNew and SrqDelete (objects/srq.h)
 */

#include "clients/call.h"
#include "clients/reply.h"
#include "control/srq_req.h"
#include "objects/peer.h"
#include "objects/srq.h"

void
srq_handle_new(struct req_ctx *rc)
{
	const Rpmad__SrqNew *m = rc->req->srq_new;
	struct call call = { .client = rc->client };
	struct peer *peer = peer_find(&call, m->peer_id);
	struct srq *srq = peer ? srq_new(&call, peer, m->rq_size, m->rcq_size) :
				 NULL;
	if (srq == NULL) {
		req_fail_call(rc, &call);
		return;
	}

	rpmad__qp_reply__init(&rc->qp);
	rc->qp.conn_id = srq->obj.id;
	rc->qp.region_size = srq->qp.layout.size;
	rc->qp.fd_count = srq->qp.n_client_fds;
	/* the client's ends go with the answer and are closed after it */
	for (unsigned i = 0; i < srq->qp.n_client_fds; i++) {
		req_pass_fd(rc, srq->qp.client_fds[i]);
		srq->qp.client_fds[i] = -1;
	}
	srq->qp.n_client_fds = 0;
	rc->resp.body_case = RPMAD__RESPONSE__BODY_QP;
	rc->resp.qp = &rc->qp;
}

void
srq_handle_delete(struct req_ctx *rc)
{
	struct call call = { .client = rc->client };
	struct srq *srq = srq_find(&call, rc->req->srq_delete->srq_id);
	if (srq == NULL || srq_delete(&call, srq)) {
		req_fail_call(rc, &call);
		return;
	}
	req_ok(rc);
}
