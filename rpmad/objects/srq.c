// SPDX-License-Identifier: BSD-3-Clause
/*
 * srq.c -- creating and deleting shared receive queues, and waking the
 * connections that wait for a receive when the client posts to one
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "clients/client.h"
#include "core/daemon.h"
#include "librpma.h"
#include "log/log.h"
#include "objects/conn.h"
#include "objects/device.h"
#include "objects/mr.h"
#include "objects/peer.h"
#include "objects/srq.h"
#include "transport/transport.h"

static void srq_release(struct obj *o, enum obj_release how);

/* what the registry does with a shared RQ whose client goes */
static const struct obj_type srq_type = { OBJ_SRQ, srq_release };

struct srq *
srq_find(struct call *call, uint64_t id)
{
	return (struct srq *) call_find(call, id, OBJ_SRQ);
}

struct peer *
srq_peer(const struct srq *srq)
{
	return srq->peer;
}

void *
srq_tp(const struct srq *srq)
{
	return srq->tp_srq;
}

void
srq_set_tp(struct srq *srq, void *tp_srq)
{
	srq->tp_srq = tp_srq;
}

uint32_t
srq_slots(const struct srq *srq)
{
	return srq->n_slots;
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
	const struct transport_ops *tp = srq->peer->dev->tp;
	if (tp->srq_posted) {
		tp->srq_posted(srq);
		return;
	}
	for (uint32_t i = 0; i < srq->n_users; i++)
		conn_srq_posted(srq->users[i]);
}

/* A receive that may not be used, completed at once: no queue pair has
 * it, so it goes to the queue's receive CQ (or nowhere without one). */
static void
refuse_slot(struct srq *srq, const struct qp_rqe *rqe)
{
	log_info("a shared receive queue's receive names memory it may not "
			"use: completed with an error");
	if (!srq->has_rcq)
		return;
	struct qp_cqe cqe = {
		.wr_id = rqe->wr_id,
		.status = IBV_WC_LOC_PROT_ERR,
		.opcode = IBV_WC_RECV,
		.source = QP_CQE_FROM_SRQ,
	};
	qp_complete(&srq->qp, &cqe, false);
}

int
srq_take(struct srq *srq, struct recv_slot **rsp, uint64_t *wr_id)
{
	for (;;) {
		if (srq->n_free == 0 || !qp_rq_pending(&srq->qp))
			return -EAGAIN;
		struct qp_rqe rqe;
		int got = qp_rq_next(&srq->qp, &rqe);
		if (got == 0)
			return -EAGAIN;
		if (got < 0)
			return -EPROTO;
		struct mr *mr = NULL;
		if (rqe.length) {
			mr = mr_by_lkey(rqe.lkey);
			if (mr == NULL || mr->obj.owner != srq->obj.owner ||
					mr->peer != srq->peer ||
					!mr_contains(mr, rqe.laddr,
						rqe.length) ||
					!mr_allows(mr, MR_LOCAL_WRITE)) {
				refuse_slot(srq, &rqe);
				continue;
			}
			mr_get(mr);
		}
		uint32_t idx = srq->free_slots[--srq->n_free];
		struct recv_slot *rs = &srq->slots[idx];
		memset(rs, 0, sizeof(*rs));
		rs->wr_id = rqe.wr_id;
		rs->addr = rqe.laddr;
		rs->length = rqe.length;
		rs->mr = mr;
		rs->tp_seq = (uint64_t)idx + 1;
		*rsp = rs;
		*wr_id = rs->tp_seq;
		return 0;
	}
}

static struct recv_slot *
slot_of(struct srq *srq, uint64_t wr_id)
{
	if (wr_id == 0 || wr_id > srq->n_slots)
		return NULL;
	struct recv_slot *rs = &srq->slots[wr_id - 1];
	return rs->tp_seq == wr_id ? rs : NULL;
}

static void
slot_free(struct srq *srq, struct recv_slot *rs)
{
	if (rs->mr)
		mr_put(rs->mr);
	rs->mr = NULL;
	srq->free_slots[srq->n_free++] = (uint32_t)(rs->tp_seq - 1);
	rs->tp_seq = 0;
}

void
srq_untake(struct srq *srq, uint64_t wr_id)
{
	struct recv_slot *rs = slot_of(srq, wr_id);
	if (rs == NULL)
		return;
	if (srq->has_rcq) {
		struct qp_cqe cqe = {
			.wr_id = rs->wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.source = QP_CQE_FROM_SRQ,
		};
		qp_complete(&srq->qp, &cqe, false);
	}
	slot_free(srq, rs);
}

void
srq_done(struct srq *srq, uint64_t wr_id, struct conn *conn,
		enum ibv_wc_status status, uint32_t byte_len,
		enum ibv_wc_opcode opcode, bool with_imm, uint32_t imm)
{
	struct recv_slot *rs = slot_of(srq, wr_id);
	if (rs == NULL)
		return;
	/* routes it (the queue's CQ, or conn's) and lets go of its memory */
	conn_recv_done(conn, rs, status, byte_len, opcode, with_imm, imm);
	slot_free(srq, rs);
	/* a slot came free: receives that waited for one go on */
	if (qp_rq_pending(&srq->qp) && srq->peer->dev->tp->srq_posted)
		srq->peer->dev->tp->srq_posted(srq);
}

struct srq *
srq_new(struct call *call, struct peer *peer, uint32_t rq_size,
		uint32_t rcq_size)
{
	/*
	 * a transport that hands receives to its device per queue pair
	 * needs a shared queue of the device
	 */
	const struct transport_ops *tp = peer->dev->tp;
	if (tp->eager_recv && tp->srq_create == NULL) {
		call_fail(call, RPMA_E_NOSUPP, 0,
				"shared receive queues are not "
				"served over %s",
				tp->name);
		return NULL;
	}
	struct srq *srq = calloc(1, sizeof(*srq));
	if (srq == NULL) {
		call_fail(call, RPMA_E_NOMEM, ENOMEM, "shared receive queue");
		return NULL;
	}
	/* its CQ is the shared receive CQ; a CQ of 1 when it has none */
	struct qp_sizes sizes = {
		.sq = 0,
		.rq = rq_size,
		.cq = rcq_size ? rcq_size : 1,
		.rcq = 0,
	};
	/* no staging: its receives land in the application's registrations */
	static const struct qp_staging no_staging;
	char err[256];
	int ret = qp_create(&srq->qp, &sizes, &no_staging, 0, err,
			sizeof(err));
	if (ret) {
		call_fail(call, ret == -ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER,
				-ret, "%s", err);
		free(srq);
		return NULL;
	}
	srq->has_rcq = rcq_size > 0;
	srq->peer = peer;
	srq->n_slots = srq->qp.layout.rq_entries;
	srq->slots = calloc(srq->n_slots, sizeof(*srq->slots));
	srq->free_slots = calloc(srq->n_slots, sizeof(*srq->free_slots));
	if (srq->slots == NULL || srq->free_slots == NULL) {
		call_fail(call, RPMA_E_NOMEM, ENOMEM, "shared receive queue");
		goto err_region;
	}
	for (uint32_t i = 0; i < srq->n_slots; i++)
		srq->free_slots[srq->n_free++] = srq->n_slots - 1 - i;
	if (tp->srq_create && (ret = tp->srq_create(srq, err, sizeof(err)))) {
		call_fail(call, ret == -ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER,
				-ret, "%s", err);
		goto err_region;
	}
	/* no poller looks at it: every post rings the doorbell */
	atomic_store_explicit(&srq->qp.hdr->need_wakeup, 1,
			memory_order_release);
	qp_set_state(&srq->qp, QP_STATE_READY);
	srq->qp.doorbell_watch.fd = srq->qp.doorbell_fd;
	srq->qp.doorbell_watch.fn = doorbell_ready;
	srq->qp.doorbell_watch.arg = srq;
	if (loop_add(rpmad.loop, &srq->qp.doorbell_watch, EPOLLIN)) {
		call_fail(call, RPMA_E_PROVIDER, 0, "cannot watch a doorbell");
		if (tp->srq_destroy)
			tp->srq_destroy(srq);
		goto err_region;
	}
	peer->users++;
	registry_add(&srq->obj, &srq_type, &call->client->owner);

	return srq;

err_region:
	free(srq->slots);
	free(srq->free_slots);
	qp_destroy(&srq->qp);
	free(srq);
	return NULL;
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
	const struct transport_ops *tp = srq->peer->dev->tp;
	if (tp->srq_destroy)
		tp->srq_destroy(srq);
	/* what the device held is gone with its queue */
	for (uint32_t i = 0; i < srq->n_slots; i++)
		if (srq->slots[i].tp_seq && srq->slots[i].mr)
			mr_put(srq->slots[i].mr);
	loop_del(rpmad.loop, &srq->qp.doorbell_watch);
	qp_destroy(&srq->qp);
	srq->peer->users--;
	registry_remove(&srq->obj);
	free(srq->users);
	free(srq->slots);
	free(srq->free_slots);
	free(srq);
}

static void
srq_release(struct obj *o, enum obj_release how)
{
	(void) how;
	srq_destroy((struct srq *)o);
}

int
srq_delete(struct call *call, struct srq *srq)
{
	/* as ibv_destroy_srq while queue pairs use it */
	if (srq->n_users > 0) {
		call_fail(call, RPMA_E_PROVIDER, EBUSY,
				"the shared receive "
				"queue still has %u connections",
				srq->n_users);
		return -EBUSY;
	}
	srq_destroy(srq);
	return 0;
}
