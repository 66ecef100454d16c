// SPDX-License-Identifier: BSD-3-Clause
/*
 * srq.c -- creating and deleting shared receive queues, and waking the
 * connections that wait for a receive when the client posts to one
 */

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "client.h"
#include "conn.h"
#include "daemon.h"
#include "device.h"
#include "librpma.h"
#include "log.h"
#include "peer.h"
#include "srq.h"
#include "transport.h"

static void srq_release(struct obj *o, enum obj_release how);

/* what the registry does with a shared RQ whose client goes */
static const struct obj_type srq_type = { OBJ_SRQ, srq_release };

struct srq *
srq_find(struct req_ctx *rc, uint64_t id)
{
	return (struct srq *)req_find(rc, id, OBJ_SRQ);
}

/*
 * The client posted receives (or took completions while some wait for
 * room): every connection made with the queue looks at it again.
 */
static void
doorbell_ready(struct loop_watch *w, uint32_t events)
{
	(void) events;
	struct srq *srq = w->arg;
	qp_doorbell_drain(&srq->qp);
	(void) qp_backlog_drain(&srq->qp);
	for (uint32_t i = 0; i < srq->n_users; i++)
		conn_srq_posted(srq->users[i]);
}

void
srq_handle_new(struct req_ctx *rc)
{
	const Rpmad__SrqNew *m = rc->req->srq_new;
	struct peer *peer = peer_find(rc, m->peer_id);
	if (peer == NULL)
		return;
	/*
	 * the verbs transport hands receives to the device as the client
	 * posts them, per queue pair: a shared one needs an ibv_srq there,
	 * which it does not make yet
	 */
	if (peer->dev->tp->eager_recv) {
		req_fail(rc, RPMA_E_NOSUPP, 0, "shared receive queues are not "
				"served over %s yet", peer->dev->tp->name);
		return;
	}
	struct srq *srq = calloc(1, sizeof(*srq));
	if (srq == NULL) {
		req_fail(rc, RPMA_E_NOMEM, ENOMEM, "shared receive queue");
		return;
	}
	/* its CQ is the shared receive CQ; a CQ of 1 when it has none */
	struct qp_sizes sizes = {
		.sq = 0,
		.rq = m->rq_size,
		.cq = m->rcq_size ? m->rcq_size : 1,
		.rcq = 0,
	};
	char err[256];
	int ret = qp_create(&srq->qp, &sizes, 0, err, sizeof(err));
	if (ret) {
		req_fail(rc, ret == -ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER,
				-ret, "%s", err);
		free(srq);
		return;
	}
	srq->has_rcq = m->rcq_size > 0;
	/* no poller looks at it: every post rings the doorbell */
	atomic_store_explicit(&srq->qp.hdr->need_wakeup, 1,
			memory_order_release);
	qp_set_state(&srq->qp, QP_STATE_READY);
	srq->qp.doorbell_watch.fd = srq->qp.doorbell_fd;
	srq->qp.doorbell_watch.fn = doorbell_ready;
	srq->qp.doorbell_watch.arg = srq;
	if (loop_add(rpmad.loop, &srq->qp.doorbell_watch, EPOLLIN)) {
		req_fail(rc, RPMA_E_PROVIDER, 0, "cannot watch a doorbell");
		qp_destroy(&srq->qp);
		free(srq);
		return;
	}
	srq->peer = peer;
	peer->users++;
	registry_add(&srq->obj, &srq_type, &rc->client->owner);

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

int
srq_attach(struct srq *srq, struct conn *conn)
{
	if (srq->n_users == srq->cap_users) {
		uint32_t cap = srq->cap_users ? srq->cap_users * 2 : 4;
		struct conn **u = realloc(srq->users, cap * sizeof(*u));
		if (u == NULL)
			return -ENOMEM;
		srq->users = u;
		srq->cap_users = cap;
	}
	srq->users[srq->n_users++] = conn;
	return 0;
}

void
srq_detach(struct srq *srq, struct conn *conn)
{
	for (uint32_t i = 0; i < srq->n_users; i++) {
		if (srq->users[i] == conn) {
			srq->users[i] = srq->users[--srq->n_users];
			return;
		}
	}
}

/* Its connections must be gone. */
static void
srq_destroy(struct srq *srq)
{
	loop_del(rpmad.loop, &srq->qp.doorbell_watch);
	qp_destroy(&srq->qp);
	srq->peer->users--;
	registry_remove(&srq->obj);
	free(srq->users);
	free(srq);
}

static void
srq_release(struct obj *o, enum obj_release how)
{
	(void) how;
	srq_destroy((struct srq *)o);
}

void
srq_handle_delete(struct req_ctx *rc)
{
	struct srq *srq = srq_find(rc, rc->req->srq_delete->srq_id);
	if (srq == NULL)
		return;
	/* as ibv_destroy_srq while queue pairs use it */
	if (srq->n_users > 0) {
		req_fail(rc, RPMA_E_PROVIDER, EBUSY, "the shared receive queue "
				"still has %u connections", srq->n_users);
		return;
	}
	srq_destroy(srq);
	req_ok(rc);
}
