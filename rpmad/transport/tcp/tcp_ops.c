// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_ops.c -- operations over the software transport
 *
 * Initiator: every work request becomes one frame on our operations
 * socket, numbered as the core numbers it (work.tp_seq), and waits in
 * flight, in order, for its answer. Target: every operation
 * frame is checked (key, bounds, usage) before a byte of it lands, then
 * executed in order and answered; a bad one is refused with NAK and the
 * rest of that direction discarded, as a verbs responder does.
 *
 * The receive engine (tcp_rx.c) hands this file each frame; a message
 * that waits for a receive pauses its socket here, and the engine reads it
 * again once the wait is over.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "log.h"
#include "mr.h"
#include "mr_io.h"
#include "mr_sync.h"
#include "tcp_chan.h"
#include "tcp_conn.h"
#include "tcp_ops.h"

/* ------------------------------------------------------------ initiator */

int
tcp_ops_post(struct tcp_conn *tc, struct work *w)
{
	struct tcp_frame f = {
		.length = w->length,
		.raddr = w->raddr,
		.rkey = w->rkey,
		.imm = w->imm,
	};
	struct mr *payload = NULL;	/* from the local buffer */
	uint8_t atomic_value[8];
	const void *inline_data = NULL;
	size_t inline_len = 0;

	switch (w->opcode) {
	case QP_OP_READ:
		f.type = TF_READ;
		break;
	case QP_OP_WRITE:
	case QP_OP_WRITE_IMM:
		f.type = TF_WRITE;
		f.flags = w->opcode == QP_OP_WRITE_IMM ? TF_F_IMM : 0;
		payload = w->lmr;
		break;
	case QP_OP_ATOMIC_WRITE:
		/* the 8 bytes as they are now, as a NIC would read them */
		mr_io_read(w->lmr, w->laddr, atomic_value, 8);
		f.type = TF_ATOMIC;
		inline_data = atomic_value;
		inline_len = 8;
		break;
	case QP_OP_FLUSH:
		f.type = TF_FLUSH;
		f.flags = w->persistent ? TF_F_PERSIST : 0;
		break;
	default:
		f.type = TF_SEND;
		f.flags = w->opcode == QP_OP_SEND_IMM ? TF_F_IMM : 0;
		payload = w->lmr;
		/*
		 * what we did of the peer's operations rides along: our ACK
		 * travels on the other socket and could arrive after this
		 * message, which may well answer one of them (tcp_wire.h)
		 */
		f.raddr = tc->last_done;
		break;
	}
	f.seq = w->tp_seq;
	if (tcp_chan_send(tc->ini, &f, inline_data, inline_len, payload,
			w->laddr))
		return -EAGAIN;
	conn_work_handed(tc->conn, w);
	tcp_chan_mark_dirty(tc->ini);
	return 0;
}

/*
 * Everything before `seq` was done by the target: complete it. 0, or
 * -EPROTO when a read is among it (a read is answered by its data only).
 */
static int
complete_before(struct tcp_conn *tc, uint64_t seq)
{
	struct work *w;
	while ((w = conn_work_oldest(tc->conn)) != NULL && w->tp_seq < seq) {
		if (w->opcode == QP_OP_READ)
			return -EPROTO;
		conn_work_done(tc->conn, w, IBV_WC_SUCCESS);
	}
	return 0;
}

/* The statuses a target may report; anything else is a remote error. */
static enum ibv_wc_status
nak_status(uint32_t v)
{
	switch (v) {
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return (enum ibv_wc_status)v;
	default:
		return IBV_WC_REM_OP_ERR;
	}
}

/*
 * A message of the peer's says it had done our operations up to `seq`:
 * complete them before the message is taken, as a NIC sees the peer's
 * acknowledgements and its next request in that order. A read among them
 * waits for its data (which completes it), and what it holds back with
 * it. 0, or -EPROTO for operations we never handed over.
 */
static int
done_by_peer(struct tcp_conn *tc, uint64_t seq)
{
	if (seq > conn_work_last_seq(tc->conn))
		return -EPROTO;
	struct work *w;
	while ((w = conn_work_oldest(tc->conn)) != NULL && w->tp_seq <= seq &&
			w->opcode != QP_OP_READ)
		conn_work_done(tc->conn, w, IBV_WC_SUCCESS);
	return 0;
}

int
tcp_initiator_begin(struct tcp_conn *tc, struct tcp_chan *ch)
{
	const struct tcp_frame *f = &ch->cur;
	if (f->seq > conn_work_last_seq(tc->conn) ||
			complete_before(tc, f->seq)) {
		tcp_conn_violation(tc, "answer out of sequence");
		return -EPROTO;
	}
	ch->sink = SINK_DISCARD;

	switch (f->type) {
	case TF_ACK:
		if (complete_before(tc, f->seq + 1)) {
			tcp_conn_violation(tc, "read acknowledged without data");
			return -EPROTO;
		}
		return 0;
	case TF_READ_RESP: {
		struct work *w = conn_work_oldest(tc->conn);
		if (w == NULL || w->tp_seq != f->seq ||
				w->opcode != QP_OP_READ || w->length != f->length) {
			tcp_conn_violation(tc, "data for no read");
			return -EPROTO;
		}
		ch->sink = SINK_MEM;
		ch->dst_mr = w->lmr;
		ch->dst_addr = w->laddr;
		return 0;
	}
	case TF_NAK: {
		struct work *w = conn_work_oldest(tc->conn);
		if (w == NULL || w->tp_seq != f->seq) {
			tcp_conn_violation(tc, "refusal of no operation");
			return -EPROTO;
		}
		enum ibv_wc_status st = nak_status(f->imm);
		tcp_conn_log(tc, LOG_INFO, "tcp: connection qp %u: the target "
				"refused work %u: %s", conn_qp_num(tc->conn),
				w->sq_index, ibv_wc_status_str(st));
		conn_work_done(tc->conn, w, st);
		conn_work_flush(tc->conn);
		conn_qp_error(tc->conn);
		return 0;
	}
	default:
		tcp_conn_violation(tc, "unknown answer");
		return -EPROTO;
	}
}

void
tcp_initiator_end(struct tcp_conn *tc, struct tcp_chan *ch)
{
	if (ch->cur.type != TF_READ_RESP)
		return;
	conn_work_done(tc->conn, conn_work_oldest(tc->conn), IBV_WC_SUCCESS);
}

void
tcp_ops_forget(struct tcp_conn *tc)
{
	if (tc->tgt_mr) {
		mr_put(tc->tgt_mr);
		tc->tgt_mr = NULL;
	}
	mr_sync_forget(tc->persist_sync);
	tc->persist_sync = NULL;
	tc->persist_synced = false;
	tc->persist_from = tc->persist_at = tc->persist_end = 0;
}

/* --------------------------------------------------------------- target */

static void
send_answer(struct tcp_conn *tc, const struct tcp_frame *f, struct mr *mr,
		uint64_t addr)
{
	if (tcp_chan_send(tc->tgt, f, NULL, 0, mr, addr))
		tcp_conn_over(tc, RPMA_CONN_LOST);
	else
		tcp_chan_mark_dirty(tc->tgt);
}

void
tcp_target_ack(struct tcp_conn *tc)
{
	if (!tc->ack_due)
		return;
	tc->ack_due = false;
	struct tcp_frame f = { .type = TF_ACK, .seq = tc->last_done };
	send_answer(tc, &f, NULL, 0);
}

/*
 * Refuses operation `seq`: NAK to the initiator, and this direction
 * discards everything after it. An error of our own queue pair (bad
 * access, bad receive) also fails our work, as a verbs responder's does.
 */
static void
refuse(struct tcp_conn *tc, struct tcp_chan *ch, enum ibv_wc_status status,
		bool qp_fails)
{
	tcp_target_ack(tc);
	struct tcp_frame f = { .type = TF_NAK, .seq = ch->cur.seq,
			.imm = status };
	send_answer(tc, &f, NULL, 0);
	tc->tgt_error = true;
	ch->sink = SINK_DISCARD;
	tcp_conn_log(tc, LOG_INFO, "tcp: connection qp %u: refused operation "
			"%llu of the peer: %s", conn_qp_num(tc->conn),
			(unsigned long long)ch->cur.seq,
			ibv_wc_status_str(status));
	if (qp_fails && tc->state == TC_ESTABLISHED) {
		conn_work_flush(tc->conn);
		conn_qp_error(tc->conn);
	}
}

/*
 * The target's side of a message: a receive to land in, or RNR. 0 (it is
 * in flight), 1 (wait for one), or conn_take_recv()'s -EPROTO (refused).
 */
static int
take_recv(struct tcp_conn *tc, struct tcp_chan *ch, uint32_t len)
{
	struct recv_slot *rs;
	int ret = conn_take_recv(tc->conn, len, &rs);
	if (ret == -EAGAIN) {
		if (!tc->rnr) {
			tc->rnr = true;
			loop_timer_arm(rpmad.loop, &tc->rnr_timer,
					(uint64_t)rpmad.cfg.rnr_timeout_ms *
					1000000);
		}
		tcp_chan_pause(ch, true);
		return 1;
	}
	if (ret) {
		refuse(tc, ch, ch->cur.type == TF_SEND ?
				IBV_WC_REM_INV_REQ_ERR : IBV_WC_REM_OP_ERR,
				true);
		return ret;
	}
	if (tc->rnr) {
		tc->rnr = false;
		loop_timer_cancel(rpmad.loop, &tc->rnr_timer);
	}
	/* in flight until its message is in */
	conn_recv_handed(tc->conn, rs);
	return 0;
}

/*
 * Finds the registration of a remote access, or refuses the operation: 0,
 * or conn_target_access()'s -EACCES.
 */
static int
access_or_refuse(struct tcp_conn *tc, struct tcp_chan *ch, uint64_t len,
		enum mr_access access, struct mr **mr)
{
	int ret = conn_target_access(tc->conn, ch->cur.rkey, ch->cur.raddr,
			len, access, mr);
	if (ret == 0)
		return 0;
	refuse(tc, ch, IBV_WC_REM_ACCESS_ERR, true);
	return ret;
}

int
tcp_target_begin(struct tcp_conn *tc, struct tcp_chan *ch)
{
	const struct tcp_frame *f = &ch->cur;
	if (f->seq != tc->expect_seq) {
		tcp_conn_violation(tc, "operation out of sequence");
		return -EPROTO;
	}
	ch->sink = SINK_DISCARD;
	if (tc->tgt_error)
		return 0;

	struct mr *mr = NULL;
	switch (f->type) {
	case TF_WRITE:
		if (f->flags & TF_F_IMM) {
			int r = take_recv(tc, ch, 0);
			if (r)
				return r > 0 ? 1 : 0;
		}
		if (access_or_refuse(tc, ch, f->length, MR_REMOTE_WRITE, &mr))
			return 0;
		break;
	case TF_READ: {
		if (access_or_refuse(tc, ch, f->length, MR_REMOTE_READ, &mr))
			return 0;
		/* the data is read from the registration as it leaves */
		struct tcp_frame resp = { .type = TF_READ_RESP, .seq = f->seq,
				.length = f->length };
		send_answer(tc, &resp, mr, f->raddr);
		tc->ack_due = false;	/* the data acknowledges all before */
		conn_count_served(tc->conn, QP_OP_READ, f->length);
		return 0;
	}
	case TF_ATOMIC:
		if ((f->raddr & 7) || access_or_refuse(tc, ch, 8,
				MR_REMOTE_WRITE, &mr)) {
			if (!tc->tgt_error)
				refuse(tc, ch, IBV_WC_REM_INV_REQ_ERR, true);
			return 0;
		}
		ch->sink = SINK_SCRATCH;
		return 0;
	case TF_FLUSH:
		if (access_or_refuse(tc, ch, f->length,
				(f->flags & TF_F_PERSIST) ? MR_REMOTE_PERSIST :
				MR_REMOTE_READ, &mr))
			return 0;
		/*
		 * everything before it was applied: that is visibility; a
		 * persist goes a slice at a time (tcp_target_persist)
		 */
		if ((f->flags & TF_F_PERSIST) && mr) {
			mr_get(mr);
			tc->tgt_mr = mr;
			tc->persist_from = tc->persist_at = f->raddr;
			tc->persist_end = f->raddr + f->length;
		}
		return 0;
	case TF_SEND: {
		if (f->raddr && done_by_peer(tc, f->raddr)) {
			tcp_conn_violation(tc, "message acknowledging "
					"operations never sent");
			return -EPROTO;
		}
		int r = take_recv(tc, ch, f->length);
		if (r)
			return r > 0 ? 1 : 0;
		struct recv_slot *rs = conn_recv_oldest(tc->conn);
		ch->sink = SINK_MEM;
		ch->dst_mr = rs->mr;
		ch->dst_addr = rs->addr;
		return 0;
	}
	default:
		tcp_conn_violation(tc, "unknown operation");
		return -EPROTO;
	}
	/* a write: the payload lands in registered memory */
	if (mr) {
		mr_get(mr);
		tc->tgt_mr = mr;
	}
	ch->sink = SINK_MEM;
	ch->dst_mr = mr;
	ch->dst_addr = f->raddr;
	return 0;
}

/* The thread wrote the page cache back: the frame goes on. */
static void
persisted(void *arg, int result)
{
	struct tcp_conn *tc = arg;
	tc->persist_sync = NULL;
	tc->persist_synced = true;
	tc->persist_result = result;
	tcp_chan_pause(tc->tgt, false);
	tc->persist_resume(tc->tgt);
}

bool
tcp_target_persist(struct tcp_conn *tc, struct tcp_chan *ch, size_t *budget,
		void (*resume)(struct tcp_chan *ch))
{
	if (tc->persist_end == 0)
		return true;	/* none asked for */
	while (tc->persist_at < tc->persist_end) {
		if (*budget == 0)
			return false;
		uint64_t n = tc->persist_end - tc->persist_at;
		if (n > *budget)
			n = *budget;
		mr_persist_cpu(tc->tgt_mr, tc->persist_at, n);
		tc->persist_at += n;
		*budget -= (size_t)n;
	}
	uint64_t len = tc->persist_end - tc->persist_from;
	if (tc->persist_sync)
		return false;	/* the thread is at it */
	if (!tc->persist_synced) {
		tc->persist_result = 0;
		if (mr_persist_needs_msync(tc->tgt_mr, tc->persist_from, len)) {
			tc->persist_resume = resume;
			tc->persist_sync = mr_sync_start(tc->tgt_mr,
					tc->persist_from, len, persisted, tc,
					&tc->persist_result);
			if (tc->persist_sync) {
				/* nothing read after it until it is over */
				tcp_chan_pause(ch, true);
				return false;
			}
		}
		tc->persist_synced = true;
	}
	int result = tc->persist_result;
	tc->persist_synced = false;
	tc->persist_from = tc->persist_at = tc->persist_end = 0;
	if (result)
		refuse(tc, ch, IBV_WC_REM_OP_ERR, true);
	return true;
}

void
tcp_target_end(struct tcp_conn *tc, struct tcp_chan *ch)
{
	const struct tcp_frame *f = &ch->cur;
	tc->expect_seq = f->seq + 1;
	if (tc->tgt_mr) {
		mr_put(tc->tgt_mr);
		tc->tgt_mr = NULL;
	}
	/* the receive it lands in, if it took one */
	struct recv_slot *rs = conn_recv_oldest(tc->conn);
	if (tc->tgt_error) {
		if (rs)
			conn_recv_done(tc->conn, rs, IBV_WC_WR_FLUSH_ERR, 0,
					IBV_WC_RECV, false, 0);
		return;
	}

	switch (f->type) {
	case TF_WRITE:
		conn_count_served(tc->conn, QP_OP_WRITE, f->length);
		if (rs)
			conn_recv_done(tc->conn, rs, IBV_WC_SUCCESS,
					f->length, IBV_WC_RECV_RDMA_WITH_IMM,
					true, f->imm);
		break;
	case TF_ATOMIC: {
		struct mr *mr;
		uint64_t value;
		memcpy(&value, ch->scratch, sizeof(value));
		/* checked at the start; checked again: it may have gone since */
		if (conn_target_access(tc->conn, f->rkey, f->raddr, 8,
				MR_REMOTE_WRITE, &mr)) {
			refuse(tc, ch, IBV_WC_REM_ACCESS_ERR, true);
			return;
		}
		mr_io_store64(mr, f->raddr, value);
		conn_count_served(tc->conn, QP_OP_ATOMIC_WRITE, 8);
		break;
	}
	case TF_FLUSH:
		conn_count_served(tc->conn, QP_OP_FLUSH, f->length);
		break;
	case TF_SEND:
		conn_recv_done(tc->conn, rs, IBV_WC_SUCCESS, f->length,
				IBV_WC_RECV, (f->flags & TF_F_IMM) != 0, f->imm);
		break;
	default:
		break;
	}
	tc->last_done = f->seq;
	tc->ack_due = true;
	/* a flush is waited for: answer it now, not at the end of the batch */
	if (f->type == TF_FLUSH)
		tcp_target_ack(tc);
}

bool
tcp_target_rnr_expired(struct tcp_conn *tc)
{
	if (!tc->rnr || tc->state != TC_ESTABLISHED)
		return false;
	tc->rnr = false;
	tcp_conn_log(tc, LOG_INFO, "tcp: connection qp %u: no receive was "
			"posted within %u ms", conn_qp_num(tc->conn),
			rpmad.cfg.rnr_timeout_ms);
	/* the sender's problem: its queue pair fails, ours goes on */
	refuse(tc, tc->tgt, IBV_WC_RNR_RETRY_EXC_ERR, false);
	return true;
}
