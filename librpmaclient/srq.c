// SPDX-License-Identifier: BSD-3-Clause
/*
 * srq.c -- shared receive queues (1.x): rpma_srq_new, rpma_srq_delete,
 * rpma_srq_recv, rpma_srq_get_rcq
 *
 * rpmad makes a queue pair region of its own for the queue: its RQ is the
 * shared receive queue, its CQ the shared receive CQ (when rcq_size > 0;
 * one entry, unused, otherwise). Connections made with it post no
 * receives of their own; their messages take the shared queue's buffers.
 */

#include <stdlib.h>

#include "broker.h"
#include "fork.h"
#include "log_internal.h"
#include "ops.h"
#include "peer.h"
#include "srq.h"

void
srq_region_sizes(uint32_t rq_size, uint32_t rcq_size, struct qp_sizes *sizes)
{
	sizes->sq = 0;
	sizes->rq = rq_size;
	sizes->cq = rcq_size ? rcq_size : 1;
	sizes->rcq = 0;
}

int
rpma_srq_new(struct rpma_peer *peer, struct rpma_srq_cfg *cfg,
		struct rpma_srq **srq_ptr)
{
	if (peer == NULL || srq_ptr == NULL)
		return RPMA_E_INVAL;

	uint32_t rq_size, rcq_size;
	srq_cfg_sizes(cfg, &rq_size, &rcq_size);
	struct rpma_srq *srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return RPMA_E_NOMEM;

	Rpmad__SrqNew msg = RPMAD__SRQ_NEW__INIT;
	msg.peer_id = peer->peer_id;
	msg.rq_size = rq_size;
	msg.rcq_size = rcq_size;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_SRQ_NEW;
	req.srq_new = &msg;

	struct broker_reply reply;
	int ret = broker_call(peer->generation, &req, NULL, 0,
			RPMAD__RESPONSE__BODY_QP, &reply);
	if (ret) {
		free(srq);
		return ret;
	}
	struct qp_sizes sizes;
	srq_region_sizes(rq_size, rcq_size, &sizes);
	/* none: its receives land straight in the application's memory */
	static const struct qp_staging no_staging;
	ret = qp_new(&reply, &sizes, &no_staging, &srq->qp);
	broker_reply_fini(&reply);
	if (ret) {
		free(srq);
		return ret;
	}
	srq->peer = peer;
	srq->rq_size = rq_size;
	srq->has_rcq = rcq_size > 0;
	*srq_ptr = srq;
	return 0;
}

int
rpma_srq_delete(struct rpma_srq **srq_ptr)
{
	if (srq_ptr == NULL)
		return RPMA_E_INVAL;
	struct rpma_srq *srq = *srq_ptr;
	if (srq == NULL)
		return 0;

	int ret = 0;
	if (broker_session_alive(srq->qp->generation)) {
		Rpmad__SrqDelete msg = RPMAD__SRQ_DELETE__INIT;
		msg.srq_id = srq->qp->conn_id;
		Rpmad__Request r = RPMAD__REQUEST__INIT;
		r.body_case = RPMAD__REQUEST__BODY_SRQ_DELETE;
		r.srq_delete = &msg;
		ret = broker_call_simple(srq->qp->generation, &r);
		/* a session that ended just now took the object with it */
		if (ret && !broker_session_alive(srq->qp->generation))
			ret = 0;
	}
	/* as native 1.x: gone on failure too (connections still used it) */
	qp_delete(&srq->qp);
	free(srq);
	*srq_ptr = NULL;
	return ret ? RPMA_E_PROVIDER : 0;
}

int
rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst, size_t offset,
		size_t len, const void *op_context)
{
	if (srq == NULL || (dst == NULL && (offset != 0 || len != 0)))
		return RPMA_E_INVAL;

	return ops_post_recv(srq->qp, dst, offset, len, op_context);
}

int
rpma_srq_get_rcq(const struct rpma_srq *srq, struct rpma_cq **rcq_ptr)
{
	if (srq == NULL || rcq_ptr == NULL)
		return RPMA_E_INVAL;

	*rcq_ptr = srq->has_rcq ? &srq->qp->cq : NULL;
	return 0;
}
