// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_ops.c -- the initiator's side of the software transport's
 * operations (the target's is tcp_target.c)
 *
 * Every work request becomes one frame on our operations socket, numbered
 * as the core numbers it (work.tp_seq), and waits in flight, in order, for
 * its answer. A payload in the client's own memory is read by the client's
 * thread before its frame goes (tcp_chan.c), and read data for it is
 * written by that thread before the read completes (tcp_batch.c): bytes
 * that cannot be read or written fail their work with
 * IBV_WC_LOC_PROT_ERR, as a NIC's local protection error does.
 *
 * The receive engine (tcp_rx.c) hands this file each answer; how the
 * works then complete is tcp_complete.c's, below both sides, because a
 * message of the peer's (tcp_target.c) acknowledges them too. This side
 * stands on the target's: a message of ours carries what the target did.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp/tcp.h"

/* ------------------------------------------------------------ initiator */

/*
 * A payload of ours in the client's own memory could not be read: its
 * frame is not sent, nor anything after it (the queue pair fails), or, if
 * it had begun to go, zeros went in place of the bytes and the work fails
 * when it is answered.
 */
static void
payload_lost(struct tcp_chan *ch, struct tx_item *it, bool unsent)
{
	struct tcp_conn *tc = ch->tc;
	if (tc->ini_failed_seq)
		return;	/* one is enough: the queue pair fails with it */
	tcp_conn_log(tc, LOG_INFO, "tcp: connection qp %u: the local buffer "
			"of work %llu could not be read from the client's "
			"memory", conn_qp_num(tc->conn),
			(unsigned long long)it->seq);
	tc->ini_failed_seq = it->seq;
	tc->ini_failed_unsent = unsent;
	if (unsent) {
		tcp_chan_drop(ch, it, true);
		tcp_complete_unsent(tc);
	}
}

static const struct tcp_fetch_role initiator_fetches = {
	.lost = payload_lost,
};

int
tcp_ops_post(struct tcp_conn *tc, struct work *w)
{
	struct tcp_frame f = {
		.length = w->length,
		.raddr = w->raddr,
		.rkey = w->rkey,
		.imm = w->imm,
	};
	/* from the local buffer, read as the frame leaves (a NIC's way) */
	struct mr *payload = NULL;

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
		f.type = TF_ATOMIC;
		payload = w->lmr;
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
		f.raddr = tcp_target_done_upto(tc);
		break;
	}
	f.seq = w->tp_seq;
	tc->ini->fetch_role = &initiator_fetches;
	if (tcp_chan_send(tc->ini, &f, NULL, 0, payload, w->laddr))
		return -EAGAIN;
	conn_work_handed(tc->conn, w);
	tcp_chan_mark_dirty(tc->ini);
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

/* Read data for the client's own memory: back from its thread. */
static void
read_back(struct tcp_chan *ch, struct as_batch *b, enum as_status status)
{
	(void) b;
	if (status != AS_OK && !ch->tc->ini_failed_seq)
		ch->tc->ini_failed_seq = ch->cur.seq;
}

static void
read_end(struct tcp_chan *ch)
{
	tcp_initiator_end(ch->tc, ch);
}

static void
read_after(struct tcp_chan *ch)
{
	(void) ch;
}

static const struct tcp_batch_role initiator_batches = {
	.back = read_back,
	.end = read_end,
	.after = read_after,
};

int
tcp_initiator_begin(struct tcp_conn *tc, struct tcp_chan *ch,
		void (*resume)(struct tcp_chan *ch))
{
	const struct tcp_frame *f = &ch->cur;
	if (f->seq > conn_work_last_seq(tc->conn) ||
			tcp_complete_before(tc, f->seq)) {
		tcp_conn_violation(tc, "answer out of sequence");
		return -EPROTO;
	}
	ch->sink = SINK_DISCARD;
	tcp_batch_start(ch, &initiator_batches, resume);

	switch (f->type) {
	case TF_ACK:
		if (tcp_complete_before(tc, f->seq + 1)) {
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
		if (w->lmr && mr_io_in_process(w->lmr, w->laddr, w->length)) {
			/* the client's thread writes it; the read completes then */
			if (tcp_batch_sink(ch, w->lmr, w->laddr) == 0)
				ch->rx_deferred = true;
			else if (!tc->ini_failed_seq)
				tc->ini_failed_seq = f->seq;	/* no room */
			return 0;
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
	if (ch->rx_deferred) {
		/* its data first: it completes once the client's thread is done */
		ch->rx_deferred = false;
		tcp_batch_end_waits(ch);
		return;
	}
	if (ch->rx_nomem) {
		ch->rx_nomem = false;
		if (!tc->ini_failed_seq)
			tc->ini_failed_seq = ch->cur.seq;
	}
	struct work *w = conn_work_oldest(tc->conn);
	if (w && w->tp_seq == ch->cur.seq)
		tcp_complete(tc, w);
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
	for (int i = 0; i < 2; i++)
		tcp_batch_forget(&tc->chan[i]);
	tc->tgt_read_waits = false;
	tc->ini_failed_seq = 0;
	tc->ini_failed_unsent = false;
}
