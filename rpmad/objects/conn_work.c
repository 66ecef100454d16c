// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_work.c -- a connection's work path: work requests and receives
 * taken from the shared rings, handed to the transport, kept in flight
 * and completed, in order, into the client's completion queues
 */

#include <string.h>

#include "clients/tenant.h"
#include "core/daemon.h"
#include "log/log.h"
#include "loop/fairq.h"
#include "objects/conn.h"
#include "objects/conn_impl.h"
#include "objects/conn_work.h"
#include "objects/device.h"
#include "objects/mr.h"
#include "objects/peer.h"
#include "objects/qp.h"
#include "qp_wc.h"
#include "transport/transport.h"

/* ------------------------------------------------------- work in flight */

/*
 * What the transport took, in order: works on a list through work.next
 * (their slots in works[] stay theirs until completed), receives in a ring
 * of their own by number. Taking the oldest off is part of completing it.
 */

void
conn_work_handed(struct conn *conn, struct work *w)
{
	struct conn_inflight *f = &conn->inflight;
	w->next = NULL;
	if (f->tail)
		f->tail->next = w;
	else
		f->head = w;
	f->tail = w;
	f->works++;
	f->work_seq = w->tp_seq;
}

struct work *
conn_work_oldest(const struct conn *conn)
{
	return conn->inflight.head;
}

uint32_t
conn_works_in_flight(const struct conn *conn)
{
	return conn->inflight.works;
}

uint64_t
conn_work_last_seq(const struct conn *conn)
{
	return conn->inflight.work_seq;
}

/* A completed work leaves the list (one never handed over is not on it). */
static void
work_leaves(struct conn *conn, struct work *w)
{
	struct conn_inflight *f = &conn->inflight;
	if (f->head != w)
		return;
	f->head = w->next;
	if (f->head == NULL)
		f->tail = NULL;
	w->next = NULL;
	f->works--;
}

/*
 * The transport let go: what it had in flight is flushed with the rest of
 * the works taken, in SQ order (conn_flush_taken).
 */
static void
conn_works_forget(struct conn *conn)
{
	struct conn_inflight *f = &conn->inflight;
	f->head = f->tail = NULL;
	f->works = 0;
}

void
conn_work_flush(struct conn *conn)
{
	struct work *w;
	while ((w = conn->inflight.head) != NULL)
		conn_work_done(conn, w, IBV_WC_WR_FLUSH_ERR);
}

/* The ring's slot of receive number `seq`. */
static struct recv_slot *
recv_at(const struct conn *conn, uint64_t seq)
{
	return &conn->inflight.recvs[seq & (conn->qp.layout.rq_entries - 1)];
}

void
conn_recv_handed(struct conn *conn, struct recv_slot *rs)
{
	conn->inflight.recv_seq = rs->tp_seq;
}

struct recv_slot *
conn_recv_oldest(const struct conn *conn)
{
	const struct conn_inflight *f = &conn->inflight;
	return f->recv_done == f->recv_seq ? NULL :
					     recv_at(conn, f->recv_done + 1);
}

uint32_t
conn_recvs_in_flight(const struct conn *conn)
{
	return (uint32_t) (conn->inflight.recv_seq - conn->inflight.recv_done);
}

/*
 * The receive rpmad refused (conn->recv_rejected) completes once the
 * receives before it did, with `status`; false while they are in flight.
 */
static bool
recv_rejected_turn(struct conn *conn, enum ibv_wc_status status)
{
	if (!conn->recv_rejected || conn_recvs_in_flight(conn))
		return false;
	conn->recv_rejected = 0;
	conn_recv_done(conn, recv_at(conn, conn->inflight.recv_seq + 1), status,
			0, IBV_WC_RECV, false, 0);
	return true;
}

void
conn_recv_flush(struct conn *conn)
{
	struct recv_slot *rs;
	while ((rs = conn_recv_oldest(conn)) != NULL)
		conn_recv_done(conn, rs, IBV_WC_WR_FLUSH_ERR, 0, IBV_WC_RECV,
				false, 0);
	(void) recv_rejected_turn(conn, IBV_WC_WR_FLUSH_ERR);
}

/* ------------------------------------------------------------ completions */

static void
count_op(struct conn *conn, const struct work *w, enum ibv_wc_status status)
{
	struct op_counters *c[2] = { &conn->ops, &rpmad.stats.ops };
	for (int i = 0; i < 2; i++) {
		if (status != IBV_WC_SUCCESS) {
			c[i]->errors++;
			continue;
		}
		switch (w->opcode) {
		case QP_OP_READ:
			c[i]->reads++;
			c[i]->bytes_read += w->length;
			break;
		case QP_OP_WRITE:
		case QP_OP_WRITE_IMM:
			c[i]->writes++;
			c[i]->bytes_written += w->length;
			break;
		case QP_OP_ATOMIC_WRITE:
			c[i]->atomic_writes++;
			c[i]->bytes_written += w->length;
			break;
		case QP_OP_FLUSH:
			c[i]->flushes++;
			break;
		default:
			c[i]->sends++;
			c[i]->bytes_sent += w->length;
			break;
		}
	}
	if (w->opcode == QP_OP_FLUSH && status == IBV_WC_SUCCESS)
		stats_flush_latency(&rpmad.stats, loop_now_ns() - w->posted_ns);
}

void
conn_count_served(struct conn *conn, uint8_t opcode, uint64_t len)
{
	struct op_counters *c[2] = { &conn->ops, &rpmad.stats.ops };
	for (int i = 0; i < 2; i++) {
		switch (opcode) {
		case QP_OP_READ:
			c[i]->served_reads++;
			c[i]->served_bytes_read += len;
			break;
		case QP_OP_WRITE:
		case QP_OP_WRITE_IMM:
			c[i]->served_writes++;
			c[i]->served_bytes_written += len;
			break;
		case QP_OP_ATOMIC_WRITE:
			c[i]->served_atomic_writes++;
			c[i]->served_bytes_written += len;
			break;
		case QP_OP_FLUSH:
			c[i]->served_flushes++;
			break;
		default:
			break; /* messages are counted as receives */
		}
	}
}

/* Completes one SQ entry: a CQE when asked for or when it failed. */
static void
complete_sqe(struct conn *conn, uint32_t sq_index, uint64_t wr_id,
		uint8_t opcode, bool signaled, uint32_t length,
		enum ibv_wc_status status)
{
	if (!signaled && status == IBV_WC_SUCCESS)
		return;
	struct qp_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = qp_sq_wc_opcode(opcode),
		.byte_len = opcode == QP_OP_READ ? length : 0,
		.sq_index = sq_index,
		.source = QP_CQE_FROM_SQ,
	};
	qp_complete(&conn->qp, &cqe, false);
}

void
conn_set_qp_error(struct conn *conn)
{
	if (conn->qp_error)
		return;
	conn->qp_error = true;
	qp_set_state(&conn->qp, QP_STATE_ERROR);
}

/*
 * The work rpmad refused completes once the works taken before it did:
 * with its own status, or flushed when one of them failed the queue pair.
 */
static void
complete_rejected(struct conn *conn)
{
	if (!conn->rejected || conn->sq_done + 1 != conn->sq_taken)
		return;
	enum ibv_wc_status status = conn->qp_error ?
			IBV_WC_WR_FLUSH_ERR :
			(enum ibv_wc_status) conn->rejected;
	conn->rejected = 0;
	conn_work_done(conn,
			&conn->works[conn->sq_done &
					(conn->qp.layout.sq_entries - 1)],
			status);
}

void
conn_work_refused(struct conn *conn, struct work *w, enum ibv_wc_status status)
{
	/* post() offers the newest work taken: take_work stops behind it */
	if (w !=
			&conn->works[(conn->sq_taken - 1) &
					(conn->qp.layout.sq_entries - 1)])
		log_err("connection qp %u: work %u refused out of turn",
				conn->qp_num, w->sq_index);
	conn->rejected = (uint8_t) status;
	complete_rejected(conn);
}

void
conn_work_done(struct conn *conn, struct work *w, enum ibv_wc_status status)
{
	conn_activate(conn);
	work_leaves(conn, w);
	if (w->sq_index != conn->sq_done)
		log_err("connection qp %u: work %u completed out of order "
			"(expected %u)",
				conn->qp_num, w->sq_index, conn->sq_done);
	count_op(conn, w, status);
	complete_sqe(conn, w->sq_index, w->wr_id, w->opcode, w->signaled,
			w->length, status);
	if (w->lmr) {
		mr_put(w->lmr);
		w->lmr = NULL;
	}
	conn->sq_done = w->sq_index + 1;
	/*
	 * the transport flushes what it holds after this; the poller the
	 * rest
	 */
	if (status != IBV_WC_SUCCESS && status != IBV_WC_WR_FLUSH_ERR)
		conn_set_qp_error(conn);
	complete_rejected(conn);
}

/* Flushes work taken from the SQ that nobody will complete any more. */
static void
conn_flush_taken(struct conn *conn)
{
	while (conn->sq_done != conn->sq_taken) {
		struct work *w = &conn->works[conn->sq_done &
				(conn->qp.layout.sq_entries - 1)];
		conn_work_done(conn, w, IBV_WC_WR_FLUSH_ERR);
	}
	conn->deferred = false;
	conn->rejected = 0;
}

/* Flushes everything still in the rings (the queue pair is in error). */
int
conn_flush_rings(struct conn *conn)
{
	int n = 0;
	struct qp_sqe sqe;
	uint32_t index;
	while (qp_sq_next(&conn->qp, &sqe, &index) == 1) {
		complete_sqe(conn, index, sqe.wr_id, sqe.opcode, true, 0,
				IBV_WC_WR_FLUSH_ERR);
		conn->sq_taken = conn->sq_done = index + 1;
		n++;
	}
	struct qp_rqe rqe;
	/* a refused receive first, in its turn (conn_recv_flush) */
	while (!conn->recv_rejected && qp_rq_next(&conn->qp, &rqe) == 1) {
		struct qp_cqe cqe = {
			.wr_id = rqe.wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.source = QP_CQE_FROM_RQ,
		};
		qp_complete(&conn->qp, &cqe, true);
		n++;
	}
	return n;
}

/* Flushes the work the transport refused for now (it holds none of it). */
int
conn_flush_deferred(struct conn *conn)
{
	if (!conn->deferred || conn->sq_done + 1 != conn->sq_taken)
		return 0;
	conn_flush_taken(conn);
	return 1;
}

/* Lets go of the transport and flushes what it had. */
void
conn_release_transport(struct conn *conn, bool abort)
{
	if (conn->tp_conn)
		conn->tp->release(conn, abort);
	conn->tp_conn = NULL;
	conn->release_pending = false;
	conn_recv_flush(conn);
	conn_works_forget(conn);
	conn_flush_taken(conn);
}

void
conn_qp_error(struct conn *conn)
{
	conn_activate(conn);
	conn_set_qp_error(conn);
	(void) conn_flush_deferred(conn);
	(void) conn_flush_rings(conn);
}

/* --------------------------------------------------------- work requests */

/*
 * The client's own buffer for a work request: what the work's completion
 * says when it is not there (IBV_WC_SUCCESS when it is).
 */
static enum ibv_wc_status
resolve_local(struct conn *conn, uint32_t lkey, uint64_t laddr, uint32_t len,
		enum mr_access access, struct mr **mrp)
{
	*mrp = NULL;
	if (len == 0)
		return IBV_WC_SUCCESS;
	struct mr *mr = mr_by_lkey(lkey);
	if (mr == NULL || mr->obj.owner != conn->obj.owner ||
			mr->peer != conn->peer)
		return IBV_WC_LOC_PROT_ERR;
	if (!mr_contains(mr, laddr, len) || !mr_allows(mr, access))
		return IBV_WC_LOC_PROT_ERR;
	mr_get(mr);
	*mrp = mr;
	return IBV_WC_SUCCESS;
}

/*
 * Checks a copied SQ entry and turns it into work: IBV_WC_SUCCESS, or the
 * status it completes with when it is not valid.
 */
static enum ibv_wc_status
work_from_sqe(struct conn *conn, const struct qp_sqe *sqe, uint32_t index,
		struct work *w)
{
	memset(w, 0, sizeof(*w));
	w->sq_index = index;
	w->opcode = sqe->opcode;
	w->wr_id = sqe->wr_id;
	w->signaled = sqe->flags & QP_SQE_SIGNALED;
	w->persistent = sqe->flags & QP_SQE_PERSISTENT;
	w->imm = sqe->imm;
	w->length = sqe->length;
	w->rkey = sqe->rkey;
	w->raddr = sqe->raddr;
	w->laddr = sqe->laddr;
	w->posted_ns = loop_now_ns();

	if (sqe->opcode == 0 || sqe->opcode >= QP_OP_MAX ||
			(sqe->flags & ~QP_SQE_FLAGS_ALL) ||
			(w->persistent && sqe->opcode != QP_OP_FLUSH))
		return IBV_WC_LOC_QP_OP_ERR;

	switch (sqe->opcode) {
	case QP_OP_ATOMIC_WRITE:
		if (sqe->length != 8 || (sqe->raddr & 7))
			return IBV_WC_LOC_QP_OP_ERR;
		/* fall through */
	case QP_OP_WRITE:
	case QP_OP_WRITE_IMM:
	case QP_OP_SEND:
	case QP_OP_SEND_IMM:
		return resolve_local(conn, sqe->lkey, sqe->laddr, sqe->length,
				MR_LOCAL_READ, &w->lmr);
	case QP_OP_READ:
		return resolve_local(conn, sqe->lkey, sqe->laddr, sqe->length,
				MR_LOCAL_WRITE, &w->lmr);
	default:
		return IBV_WC_SUCCESS; /* flush: nothing local */
	}
}

/* Offers w to the transport, numbered as it would be once handed over. */
static int
post(struct conn *conn, struct work *w)
{
	w->tp_seq = conn->inflight.work_seq + 1;
	return conn->tp->post(conn, w);
}

/* Takes work from the SQ into the transport; returns how much. */
int
conn_take_work(struct conn *conn)
{
	int n = 0;
	uint32_t entries = conn->qp.layout.sq_entries;

	if (conn->deferred) {
		struct work *w = &conn->works[(conn->sq_taken - 1) &
				(entries - 1)];
		if (post(conn, w) == -EAGAIN)
			return 0;
		conn->deferred = false;
		n++;
	}
	while (!conn->qp_error && !conn->rejected &&
			conn->state == CONN_ESTABLISHED &&
			conn->sq_taken - conn->sq_done < entries) {
		struct qp_sqe sqe;
		uint32_t index;
		int got = qp_sq_next(&conn->qp, &sqe, &index);
		if (got <= 0)
			break;
		struct work *w = &conn->works[index & (entries - 1)];
		conn->sq_taken = index + 1;
		n++;
		enum ibv_wc_status status = work_from_sqe(conn, &sqe, index, w);
		if (status != IBV_WC_SUCCESS) {
			tenant_log(conn_owner(conn), LOG_INFO,
					"connection qp "
					"%u: work request %u rejected (%s)",
					conn->qp_num, index,
					ibv_wc_status_str(status));
			conn->rejected = (uint8_t) status;
			complete_rejected(conn);
			break;
		}
		if (post(conn, w) == -EAGAIN) {
			conn->deferred = true;
			break;
		}
	}
	if (n > 0) {
		const struct fairq_tenant *share = conn->obj.owner ?
				tenant_share(conn_owner(conn)) :
				NULL;
		qp_set_contended(&conn->qp, fairq_contended(share));
	}
	return n;
}

/* ------------------------------------------------------------- receives */

/* Where the connection's receives are posted: its own RQ or a shared one. */
struct qp *
conn_recv_qp(struct conn *conn)
{
	return conn->srq_qp ? conn->srq_qp : &conn->qp;
}

void
conn_srq_posted(struct conn *conn)
{
	if (conn->rnr_waiting)
		conn_activate(conn);
}

/*
 * For conn_take_recv: -EPROTO once the refused receive failed in its turn
 * (and the queue pair with it), -EAGAIN while receives before it are in
 * flight (a transport that holds receives takes again after each).
 */
static int
refused_recv_due(struct conn *conn)
{
	enum ibv_wc_status status = conn->qp_error ?
			IBV_WC_WR_FLUSH_ERR :
			(enum ibv_wc_status) conn->recv_rejected;
	if (!recv_rejected_turn(conn, status))
		return -EAGAIN;
	conn_qp_error(conn);
	return -EPROTO;
}

int
conn_take_recv(struct conn *conn, uint32_t len, struct recv_slot **rsp)
{
	conn_activate(conn);
	/* nothing after a refused receive until it had its turn */
	if (conn->recv_rejected)
		return refused_recv_due(conn);
	/* a transport holds at most the RQ's depth; more would reuse a slot */
	if (conn_recvs_in_flight(conn) >= conn->qp.layout.rq_entries)
		return -EAGAIN;
	struct qp_rqe rqe;
	int got = qp_rq_next(conn_recv_qp(conn), &rqe);
	if (got == 0) {
		conn->rnr_waiting = true;
		return -EAGAIN;
	}
	/* corrupted: the poller ends the connection (a shared RQ: it is
	 * of no use any more, and each connection fails as it takes) */
	if (got < 0) {
		if (conn->srq_qp)
			conn->qp.corrupted = true;
		return -EPROTO;
	}

	conn->rnr_waiting = false;
	uint64_t seq = conn->inflight.recv_seq + 1;
	struct recv_slot *rs = recv_at(conn, seq);
	memset(rs, 0, sizeof(*rs));
	rs->tp_seq = seq;
	*rsp = rs;
	rs->rq_index = conn_recv_qp(conn)->rq_head - 1;
	rs->shared = conn->srq_qp != NULL;
	rs->wr_id = rqe.wr_id;
	rs->length = rqe.length;
	rs->addr = rqe.laddr;
	enum ibv_wc_status status = resolve_local(conn, rqe.lkey, rqe.laddr,
			rqe.length, MR_LOCAL_WRITE, &rs->mr);
	if (status == IBV_WC_SUCCESS && len > rqe.length)
		status = IBV_WC_LOC_LEN_ERR;
	if (status != IBV_WC_SUCCESS) {
		conn->recv_rejected = (uint8_t) status;
		return refused_recv_due(conn);
	}
	return 0;
}

void
conn_recv_filled(struct conn *conn, const struct recv_slot *rs, uint32_t bytes)
{
	if (rs->shared)
		return;
	atomic_store_explicit(&conn->qp.hdr->rq_filled,
			(uint64_t) rs->rq_index << 32 | bytes,
			memory_order_release);
}

void
conn_recv_done(struct conn *conn, struct recv_slot *rs,
		enum ibv_wc_status status, uint32_t byte_len,
		enum ibv_wc_opcode opcode, bool with_imm, uint32_t imm)
{
	conn_activate(conn);
	if (rs == conn_recv_oldest(conn))
		conn->inflight.recv_done++;
	struct qp_cqe cqe = {
		.wr_id = rs->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.imm_data = with_imm ? imm : 0,
		.wc_flags = with_imm ? IBV_WC_WITH_IMM : 0,
		.source = QP_CQE_FROM_RQ,
	};
	if (conn->srq_qp) {
		/* the shared RQ's receive CQ, else the connection's queues */
		cqe.source = QP_CQE_FROM_SRQ;
		cqe.qp_num = conn->qp_num;
		if (conn->srq_rcq)
			qp_complete(conn->srq_qp, &cqe, false);
		else
			qp_complete(&conn->qp, &cqe, true);
	} else {
		qp_complete(&conn->qp, &cqe, true);
	}
	if (rs->mr) {
		mr_put(rs->mr);
		rs->mr = NULL;
	}
	if (status == IBV_WC_SUCCESS) {
		conn->ops.recvs++;
		conn->ops.bytes_received += byte_len;
		rpmad.stats.ops.recvs++;
		rpmad.stats.ops.bytes_received += byte_len;
	}
}

int
conn_target_access(struct conn *conn, uint32_t rkey, uint64_t raddr,
		uint64_t len, enum mr_access access, struct mr **mrp)
{
	*mrp = NULL;
	if (len == 0)
		return 0;
	struct mr *mr = mr_by_rkey(conn->peer->dev->id, rkey);
	if (mr == NULL || mr->peer != conn->peer || !mr_allows(mr, access) ||
			!mr_contains(mr, raddr, len))
		return -EACCES;
	*mrp = mr;
	return 0;
}
