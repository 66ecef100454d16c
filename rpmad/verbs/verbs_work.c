// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_work.c -- the data path on a connection's queue pair: work from
 * the shared SQ becomes ibv_post_send, receives from the shared RQ go to
 * the device as soon as the client posts them, and work completions come
 * back to the core in order; a failed one fails the queue pair, and one
 * that says the peer cannot be reached loses the connection
 *
 * Completions: only signaled work (and failed work) makes a work
 * completion, and an RC send queue completes in order, so a completion of
 * work n means everything posted before n is done: those complete as
 * successes first. After an error, everything still held is flushed here
 * (the device's own flush completions then find nothing and are dropped).
 *
 * The queue pair itself is made and watched above (verbs_qp.c), which
 * calls verbs_work_poll() when its completion channel fires or the loop
 * polls.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs/verbs.h"

/* Work completions taken per ibv_poll_cq. */
#define POLL_BATCH 16

/* ------------------------------------------------------------- receives */

static void
recv_complete(struct verbs_conn *vc, struct recv_slot *rs,
		enum ibv_wc_status status, const struct ibv_wc *wc)
{
	if (status != IBV_WC_SUCCESS || wc == NULL) {
		conn_recv_done(vc->conn, rs, status, 0, IBV_WC_RECV, false, 0);
		return;
	}
	bool imm = wc->wc_flags & IBV_WC_WITH_IMM;
	enum ibv_wc_opcode op = wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM ?
		IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	conn_recv_done(vc->conn, rs, IBV_WC_SUCCESS, wc->byte_len, op, imm,
			imm ? wc->imm_data : 0);
}

/* Hands the client's posted receives to the device, while it has room. */
void
verbs_work_post_recvs(struct verbs_conn *vc)
{
	struct conn *conn = vc->conn;
	if (conn == NULL || vc->qp == NULL || vc->qp_failed ||
			vc->state == VC_OVER || conn_qp_failed(conn))
		return;
	/* a shared RQ's receives go to its own queue (verbs_srq.c) */
	if (conn_srq(conn))
		return;
	while (conn_recvs_in_flight(conn) < vc->max_recv_wr) {
		struct recv_slot *rs;
		/* the length is checked by the device when a message lands */
		int ret = conn_take_recv(conn, 0, &rs);
		if (ret == -EAGAIN)
			return;	/* the core calls again when there are more */
		if (ret) {
			/* a bad one (completed by the core) fails the QP */
			verbs_work_failed(vc);
			return;
		}

		struct ibv_sge sge = { 0 };
		struct ibv_recv_wr wr = {
			.wr_id = rs->tp_seq,
			.sg_list = &sge,
		};
		if (rs->mr) {
			sge.addr = rs->addr;	/* registered at the client's addresses */
			sge.length = rs->length;
			sge.lkey = verbs_mr_lkey(rs->mr);
			wr.num_sge = 1;
		}
		struct ibv_recv_wr *bad = NULL;
		/* libibverbs answers with a positive errno */
		ret = -ibv_post_recv(vc->qp, &wr, &bad);
		if (ret) {
			log_warning("verbs: connection qp %u: ibv_post_recv: "
					"%s", conn_qp_num(conn),
					strerror(-ret));
			verbs_work_failed(vc);
			/* never handed over: completed after those that were */
			recv_complete(vc, rs, IBV_WC_WR_FLUSH_ERR, NULL);
			return;
		}
		conn_recv_handed(conn, rs);
	}
}

void
verbs_recv_posted(struct conn *conn)
{
	struct verbs_conn *vc = conn_tp(conn);
	if (vc)
		verbs_work_post_recvs(vc);
}

/* A receive of the shared RQ's queue completed on this queue pair. */
static void
srq_recv_wc(struct verbs_conn *vc, struct srq *srq, const struct ibv_wc *wc)
{
	bool imm = wc->status == IBV_WC_SUCCESS &&
		(wc->wc_flags & IBV_WC_WITH_IMM);
	enum ibv_wc_opcode op = wc->status == IBV_WC_SUCCESS &&
		wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM ?
		IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	uint32_t len = wc->status == IBV_WC_SUCCESS ? wc->byte_len : 0;
	srq_done(srq, wc->wr_id, vc->conn, wc->status, len, op, imm,
			imm ? wc->imm_data : 0);
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			log_info("verbs: connection qp %u: a receive failed: "
					"%s", conn_qp_num(vc->conn),
					ibv_wc_status_str(wc->status));
		verbs_work_failed(vc);
	}
}

static void
recv_wc(struct verbs_conn *vc, const struct ibv_wc *wc)
{
	struct conn *conn = vc->conn;
	struct srq *srq = conn_srq(conn);
	if (srq) {
		srq_recv_wc(vc, srq, wc);
		return;
	}
	struct recv_slot *rs = conn_recv_oldest(conn);
	/* gone already: flushed by us after an earlier error */
	if (rs == NULL || wc->wr_id < rs->tp_seq ||
			wc->wr_id - rs->tp_seq >= conn_recvs_in_flight(conn))
		return;
	/* a receive queue completes in order: nothing is skipped */
	while (rs->tp_seq != wc->wr_id) {
		recv_complete(vc, rs, IBV_WC_WR_FLUSH_ERR, NULL);
		rs = conn_recv_oldest(conn);
	}
	recv_complete(vc, rs, wc->status, wc);
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			conn_log(vc->conn, LOG_INFO, "verbs: connection qp %u: "
					"a receive failed: "
					"%s", conn_qp_num(vc->conn),
					ibv_wc_status_str(wc->status));
		verbs_work_failed(vc);
	}
}

/* ----------------------------------------------------------------- work */

void
verbs_work_failed(struct verbs_conn *vc)
{
	if (vc->qp_failed || vc->conn == NULL || vc->state == VC_OVER)
		return;
	vc->qp_failed = true;
	/* the device must stop touching the buffers before they are flushed */
	if (vc->qp) {
		struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
		(void) ibv_modify_qp(vc->qp, &attr, IBV_QP_STATE);
	}
	conn_work_flush(vc->conn);
	conn_recv_flush(vc->conn);
	conn_qp_error(vc->conn);
}

void
verbs_work_lost(struct verbs_conn *vc)
{
	/* the device stops touching the buffers; what it held is flushed */
	verbs_work_failed(vc);
	/* the CM's view follows: it stops waiting for a peer that is gone */
	if (vc->state == VC_ESTABLISHED)
		(void) rdma_disconnect(vc->id);
	/* what the device completed before counts as done */
	(void) verbs_work_poll(vc);
	verbs_conn_over(vc, RPMA_CONN_LOST);
}

/*
 * Whether a failed work request says the way to the peer is gone, rather
 * than that the work itself was bad (a key, a length, an access: those
 * fail the queue pair as on the software transport, nothing more): the
 * device gave up retrying, or could not send at all (rxe when its link is
 * down), or failed.
 */
static bool
path_failed(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_LOC_QP_OP_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
	case IBV_WC_FATAL_ERR:
	case IBV_WC_GENERAL_ERR:
		return true;
	default:
		return false;
	}
}

static void
send_wc(struct verbs_conn *vc, const struct ibv_wc *wc)
{
	struct conn *conn = vc->conn;
	struct work *w;
	/* unsignaled work before it is done: a later completion says so */
	while ((w = conn_work_oldest(conn)) != NULL && w->tp_seq < wc->wr_id)
		conn_work_done(conn, w, IBV_WC_SUCCESS);
	if ((w = conn_work_oldest(conn)) != NULL && w->tp_seq == wc->wr_id)
		conn_work_done(conn, w, wc->status);
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			conn_log(vc->conn, LOG_INFO, "verbs: connection qp "
					"%u: work failed: %s "
					"(vendor error 0x%x)",
					conn_qp_num(vc->conn),
					ibv_wc_status_str(wc->status),
					wc->vendor_err);
		verbs_work_failed(vc);
		if (path_failed(wc->status))
			verbs_work_lost(vc);
	}
}

/* Fills the local part of a work request. */
static void
set_local(struct ibv_sge *sge, struct ibv_send_wr *wr, const struct work *w)
{
	if (w->lmr == NULL || w->length == 0)
		return;
	sge->addr = w->laddr;	/* registered at the client's addresses */
	sge->length = w->length;
	sge->lkey = verbs_mr_lkey(w->lmr);
	wr->num_sge = 1;
}

/*
 * Something other than a full queue (`err`, a negative errno): the queue
 * pair is unusable.
 */
static void
post_failed(struct verbs_conn *vc, struct work *w, int err)
{
	log_warning("verbs: connection qp %u: ibv_post_send: %s",
			conn_qp_num(vc->conn), strerror(-err));
	(void) verbs_work_poll(vc);
	verbs_work_failed(vc);
	conn_work_done(vc->conn, w, IBV_WC_WR_FLUSH_ERR);
}

int
verbs_post(struct conn *conn, struct work *w)
{
	struct verbs_conn *vc = conn_tp(conn);
	if (vc == NULL || vc->qp == NULL)
		return -EAGAIN;
	if (vc->qp_failed) {
		/* everything before it was flushed already */
		conn_work_done(conn, w, IBV_WC_WR_FLUSH_ERR);
		return 0;
	}
	if (conn_works_in_flight(conn) >= vc->max_send_wr)
		return -EAGAIN;

	struct ibv_sge sge = { 0 };
	struct ibv_send_wr wr = {
		.wr_id = w->tp_seq,
		.sg_list = &sge,
		.send_flags = w->signaled ? IBV_SEND_SIGNALED : 0,
	};
	wr.wr.rdma.remote_addr = w->raddr;
	wr.wr.rdma.rkey = w->rkey;
	switch (w->opcode) {
	case QP_OP_READ:
		wr.opcode = IBV_WR_RDMA_READ;
		set_local(&sge, &wr, w);
		break;
	case QP_OP_WRITE:
		wr.opcode = IBV_WR_RDMA_WRITE;
		set_local(&sge, &wr, w);
		break;
	case QP_OP_WRITE_IMM:
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = w->imm;
		set_local(&sge, &wr, w);
		break;
	case QP_OP_ATOMIC_WRITE:
		/* librpma 0.12: an 8-byte write after everything before it */
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags |= IBV_SEND_FENCE;
		set_local(&sge, &wr, w);
		break;
	case QP_OP_FLUSH:
		/*
		 * librpma's method: reading from the range returns only after
		 * the writes before it reached the target's memory. A range
		 * shorter than the read reads only the range (no overrun).
		 */
		wr.opcode = IBV_WR_RDMA_READ;
		sge.addr = (uintptr_t)vc->flush_buf;
		sge.length = w->length && w->length < VERBS_FLUSH_READ_LEN ?
			w->length : VERBS_FLUSH_READ_LEN;
		sge.lkey = vc->flush_mr->lkey;
		wr.num_sge = 1;
		break;
	case QP_OP_SEND:
		wr.opcode = IBV_WR_SEND;
		set_local(&sge, &wr, w);
		break;
	case QP_OP_SEND_IMM:
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = w->imm;
		set_local(&sge, &wr, w);
		break;
	default:
		/* the core validated the opcode */
		conn_work_refused(conn, w, IBV_WC_LOC_QP_OP_ERR);
		return 0;
	}

	struct ibv_send_wr *bad = NULL;
	/* libibverbs answers with a positive errno; ENOMEM: the SQ is full */
	int ret = -ibv_post_send(vc->qp, &wr, &bad);
	if (ret == -ENOMEM)
		return -EAGAIN;
	if (ret) {
		post_failed(vc, w, ret);
		return 0;
	}
	conn_work_handed(conn, w);
	return 0;
}

/* ------------------------------------------------------------ completions */

static int
poll_cq(struct verbs_conn *vc, struct ibv_cq *cq, bool recv)
{
	int n = 0;
	struct ibv_wc wc[POLL_BATCH];
	for (;;) {
		/* the connection may end inside the loop (failure) */
		if (vc->state == VC_OVER)
			break;
		int got = ibv_poll_cq(cq, POLL_BATCH, wc);
		if (got < 0) {
			log_warning("verbs: connection qp %u: ibv_poll_cq "
					"failed", conn_qp_num(vc->conn));
			verbs_work_failed(vc);
			break;
		}
		for (int i = 0; i < got; i++) {
			if (recv)
				recv_wc(vc, &wc[i]);
			else
				send_wc(vc, &wc[i]);
		}
		n += got;
		if (got < POLL_BATCH)
			break;
	}
	return n;
}

int
verbs_work_poll(struct verbs_conn *vc)
{
	if (vc->qp == NULL || vc->conn == NULL || vc->state == VC_OVER)
		return 0;
	int n = poll_cq(vc, vc->send_cq, false);
	int r = poll_cq(vc, vc->recv_cq, true);
	/* receive slots were freed: the client's next ones may go */
	if (r)
		verbs_work_post_recvs(vc);
	return n + r;
}
