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

#include "as_worker.h"
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
		f.raddr = tcp_target_done_upto(tc);
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
	if (tc->tgt_busy)
		as_batch_cancel(tc->tgt_busy);
	as_batch_free(tc->tgt_batch);
	tc->tgt_batch = tc->tgt_busy = NULL;
	tc->tgt_deferred = tc->tgt_end_pending = tc->tgt_nomem = false;
	tc->tgt_read = NULL;
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

/* Whether the client's thread has yet to do what frames read so far need. */
static bool
batch_pending(const struct tcp_conn *tc)
{
	return tc->tgt_busy ||
		(tc->tgt_batch && as_batch_size(tc->tgt_batch) > 0);
}

uint64_t
tcp_target_done_upto(const struct tcp_conn *tc)
{
	/* nothing counts as done before its bytes are in the client's memory */
	if (tc->tgt_busy)
		return as_batch_first_tag(tc->tgt_busy) - 1;
	if (tc->tgt_batch && as_batch_size(tc->tgt_batch) > 0)
		return as_batch_first_tag(tc->tgt_batch) - 1;
	return tc->last_done;
}

void
tcp_target_ack(struct tcp_conn *tc)
{
	if (!tc->ack_due)
		return;
	uint64_t upto = tcp_target_done_upto(tc);
	if (upto == tc->last_done)
		tc->ack_due = false;
	if (upto <= tc->acked)
		return;
	tc->acked = upto;
	struct tcp_frame f = { .type = TF_ACK, .seq = upto };
	send_answer(tc, &f, NULL, 0);
}

/*
 * Refuses operation `seq`: NAK to the initiator, and this direction
 * discards everything after it. An error of our own queue pair (bad
 * access, bad receive) also fails our work, as a verbs responder's does.
 */
static void
refuse_seq(struct tcp_conn *tc, uint64_t seq, enum ibv_wc_status status,
		bool qp_fails)
{
	tcp_target_ack(tc);
	struct tcp_frame f = { .type = TF_NAK, .seq = seq, .imm = status };
	send_answer(tc, &f, NULL, 0);
	tc->tgt_error = true;
	tcp_conn_log(tc, LOG_INFO, "tcp: connection qp %u: refused operation "
			"%llu of the peer: %s", conn_qp_num(tc->conn),
			(unsigned long long)seq, ibv_wc_status_str(status));
	if (qp_fails && tc->state == TC_ESTABLISHED) {
		conn_work_flush(tc->conn);
		conn_qp_error(tc->conn);
	}
}

static void
refuse(struct tcp_conn *tc, struct tcp_chan *ch, enum ibv_wc_status status,
		bool qp_fails)
{
	ch->sink = SINK_DISCARD;
	refuse_seq(tc, ch->cur.seq, status, qp_fails);
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

/* ------------------------------------------- the client's own memory */

/*
 * what the next batch gathers at most while one is with the thread, and
 * the most of one payload a batch holds: a bigger payload goes through in
 * slices, so that what rpmad holds of it stays bounded
 */
#define BATCH_MAX (1u << 20)

/*
 * Frames that only add to the batch: what they do to memory is in it, and
 * their ends need nothing else done before them (their acknowledgement
 * waits for the batch). Any other frame waits until the batch is back.
 */
static bool
batch_kind(const struct tcp_frame *f)
{
	switch (f->type) {
	case TF_WRITE:
		return !(f->flags & TF_F_IMM);
	case TF_ATOMIC:
		return true;
	case TF_FLUSH:	/* visibility: the writes before it being done */
		return !(f->flags & TF_F_PERSIST);
	default:
		return false;
	}
}

/* The batch the frames add to, for the registration's client. */
static struct as_batch *
batch_for(struct tcp_conn *tc, struct mr *mr)
{
	if (tc->tgt_batch == NULL)
		tc->tgt_batch = as_batch_new(mr->as);
	return tc->tgt_batch;
}

static void batch_done(struct as_batch *b, enum as_status status, void *arg);

/*
 * The batch goes to the client's thread (only one is there at a time);
 * the frames after it add to the next while it is at it.
 */
static void
batch_submit(struct tcp_conn *tc)
{
	tc->tgt_busy = tc->tgt_batch;
	tc->tgt_batch = NULL;
	as_batch_submit(tc->tgt_busy, batch_done, tc);
}

void
tcp_target_batch_flush(struct tcp_conn *tc,
		void (*resume)(struct tcp_chan *ch))
{
	tc->tgt_resume = resume;
	/* not while a payload is still filling its slice of the batch */
	const struct tcp_chan *ch = tc->tgt;
	bool filling = ch->in_frame && ch->sink == SINK_BATCH &&
		ch->got < ch->batch_end;
	if (!tc->tgt_busy && !filling && tc->tgt_batch &&
			as_batch_size(tc->tgt_batch) > 0)
		batch_submit(tc);
}

/* The frame waits for the batches before it: reading stops until then. */
static int
wait_for_batch(struct tcp_conn *tc)
{
	tcp_target_batch_flush(tc, tc->tgt_resume);
	tcp_chan_pause(tc->tgt, true);
	return 1;
}

/*
 * A batch is back. Frames before the first one it failed are done
 * (acknowledged now), that one is refused (its bytes did not land: never a
 * success for them) with everything after it -- a client whose memory did
 * not answer in time fails the same way. Then the next batch goes; the
 * frame whose end waited for its bytes ends once they are all in; and
 * reading goes on.
 */
static void
batch_done(struct as_batch *b, enum as_status status, void *arg)
{
	struct tcp_conn *tc = arg;
	struct tcp_chan *ch = tc->tgt;
	uint64_t bad = 0;
	bool failed = false;
	enum ibv_wc_status why = IBV_WC_REM_ACCESS_ERR;
	if (status == AS_LOST) {
		failed = as_batch_first_lost(b, &bad);
	} else if (status != AS_OK) {
		failed = true;
		bad = as_batch_first_tag(b);
		why = IBV_WC_REM_OP_ERR;
	}
	tc->tgt_busy = NULL;
	if (failed && !tc->tgt_error && tc->state == TC_ESTABLISHED) {
		if (tc->last_done >= bad)
			tc->last_done = bad - 1;
		refuse_seq(tc, bad, why, true);
	}
	if (tc->tgt_error) {
		/* what the next batch holds came after it: discarded */
		as_batch_free(tc->tgt_batch);
		tc->tgt_batch = NULL;
		if (ch->in_frame && ch->sink == SINK_BATCH)
			ch->sink = SINK_DISCARD;
	}
	tcp_target_batch_flush(tc, tc->tgt_resume);
	if (tc->tgt_end_pending && !tc->tgt_busy) {
		tc->tgt_end_pending = false;
		tcp_target_end(tc, ch);
	}
	tc->tgt_read = NULL;
	as_batch_free(b);
	tcp_target_ack(tc);
	if (ch->fd >= 0 && ch->paused && !tc->tgt_end_pending &&
			!ch->throttled && !tc->rnr) {
		tcp_chan_pause(ch, false);
		tc->tgt_resume(ch);
	}
}

/* Room in the batch for the next slice of the current frame's payload. */
static int
batch_slice(struct tcp_conn *tc, struct tcp_chan *ch)
{
	uint32_t n = ch->cur_payload - ch->got;
	if (n > BATCH_MAX)
		n = BATCH_MAX;
	struct as_batch *b = batch_for(tc, ch->dst_mr);
	uint8_t *p = b ? as_batch_write_space(b, ch->dst_addr + ch->got, n,
			ch->cur.seq) : NULL;
	if (p == NULL)
		return -ENOMEM;
	ch->batch_dst = p;
	ch->batch_start = ch->got;
	ch->batch_end = ch->got + n;
	return 0;
}

/*
 * Where the current frame's payload goes when it is for the client's own
 * memory at `addr` of `mr`: the batch (SINK_BATCH), a slice at a time.
 * 0, or -ENOMEM.
 */
static int
sink_to_batch(struct tcp_conn *tc, struct tcp_chan *ch, struct mr *mr,
		uint64_t addr)
{
	ch->dst_mr = mr;
	ch->dst_addr = addr;
	if (batch_slice(tc, ch))
		return -ENOMEM;
	ch->sink = SINK_BATCH;
	return 0;
}

int
tcp_target_batch_room(struct tcp_conn *tc, struct tcp_chan *ch)
{
	/* the slice filled goes to the thread once the one before is back */
	if (tc->tgt_busy) {
		tcp_chan_pause(ch, true);
		return 1;
	}
	tcp_target_batch_flush(tc, tc->tgt_resume);
	if (batch_slice(tc, ch) == 0)
		return 0;
	/* rpmad cannot hold the bytes: refused at the frame's end */
	ch->sink = SINK_DISCARD;
	tc->tgt_nomem = true;
	return 0;
}

/*
 * Finds the registration of a remote access: 0, 1 (wait: it is refused
 * once the batch before it is done, which refuses nothing after it), or
 * -EACCES (refused).
 */
static int
access_or_refuse(struct tcp_conn *tc, struct tcp_chan *ch, uint64_t len,
		enum mr_access access, struct mr **mr)
{
	int ret = conn_target_access(tc->conn, ch->cur.rkey, ch->cur.raddr,
			len, access, mr);
	if (ret == 0)
		return 0;
	if (batch_pending(tc))
		return wait_for_batch(tc);
	refuse(tc, ch, IBV_WC_REM_ACCESS_ERR, true);
	return ret;
}

/*
 * The frame's bytes for memory that is not the client's own: done on the
 * loop, but only after a batch before them (1: wait).
 */
static int
mapped_after_batch(struct tcp_conn *tc)
{
	return batch_pending(tc) ? wait_for_batch(tc) : 0;
}

int
tcp_target_begin(struct tcp_conn *tc, struct tcp_chan *ch,
		void (*resume)(struct tcp_chan *ch))
{
	const struct tcp_frame *f = &ch->cur;
	if (f->seq != tc->expect_seq) {
		tcp_conn_violation(tc, "operation out of sequence");
		return -EPROTO;
	}
	ch->sink = SINK_DISCARD;
	tc->tgt_resume = resume;
	if (tc->tgt_error)
		return 0;
	if (!batch_kind(f) && batch_pending(tc))
		return wait_for_batch(tc);
	/* the next batch holds this much at most while one is out */
	if (tc->tgt_busy && tc->tgt_batch &&
			as_batch_size(tc->tgt_batch) >= BATCH_MAX)
		return wait_for_batch(tc);

	struct mr *mr = NULL;
	int r;
	switch (f->type) {
	case TF_WRITE:
		if (f->flags & TF_F_IMM) {
			r = take_recv(tc, ch, 0);
			if (r)
				return r > 0 ? 1 : 0;
		}
		r = access_or_refuse(tc, ch, f->length, MR_REMOTE_WRITE, &mr);
		if (r)
			return r > 0 ? 1 : 0;
		if (mr && mr_io_in_process(mr, f->raddr, f->length)) {
			if (sink_to_batch(tc, ch, mr, f->raddr))
				goto nomem;
			tc->tgt_deferred = (f->flags & TF_F_IMM) != 0;
			return 0;
		}
		if (mapped_after_batch(tc))
			return 1;
		break;
	case TF_READ: {
		r = access_or_refuse(tc, ch, f->length, MR_REMOTE_READ, &mr);
		if (r)
			return r > 0 ? 1 : 0;
		if (mr && mr_io_in_process(mr, f->raddr, f->length)) {
			/* answered with the data once the thread read it */
			struct as_batch *b = batch_for(tc, mr);
			tc->tgt_read = b ? as_batch_read(b, f->raddr,
					f->length, f->seq) : NULL;
			if (tc->tgt_read == NULL)
				goto nomem;
			tc->tgt_deferred = true;
			return 0;
		}
		/* the data is read from the registration as it leaves */
		struct tcp_frame resp = { .type = TF_READ_RESP, .seq = f->seq,
				.length = f->length };
		send_answer(tc, &resp, mr, f->raddr);
		/* the data acknowledges all before */
		tc->ack_due = false;
		tc->acked = f->seq;
		conn_count_served(tc->conn, QP_OP_READ, f->length);
		return 0;
	}
	case TF_ATOMIC:
		if (f->raddr & 7) {
			if (mapped_after_batch(tc))
				return 1;
			refuse(tc, ch, IBV_WC_REM_INV_REQ_ERR, true);
			return 0;
		}
		r = access_or_refuse(tc, ch, 8, MR_REMOTE_WRITE, &mr);
		if (r)
			return r > 0 ? 1 : 0;
		/* the value lands at the end (a batch's, or on the loop) */
		if (!(mr && mr_io_in_process(mr, f->raddr, 8)) &&
				mapped_after_batch(tc))
			return 1;
		ch->sink = SINK_SCRATCH;
		return 0;
	case TF_FLUSH:
		r = access_or_refuse(tc, ch, f->length,
				(f->flags & TF_F_PERSIST) ? MR_REMOTE_PERSIST :
				MR_REMOTE_READ, &mr);
		if (r)
			return r > 0 ? 1 : 0;
		/*
		 * everything before it was applied (or will be, by the batch
		 * its acknowledgement waits for): that is visibility; a
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
		r = take_recv(tc, ch, f->length);
		if (r)
			return r > 0 ? 1 : 0;
		struct recv_slot *rs = conn_recv_oldest(tc->conn);
		if (rs->mr && mr_io_in_process(rs->mr, rs->addr, f->length)) {
			if (sink_to_batch(tc, ch, rs->mr, rs->addr))
				goto nomem;
			tc->tgt_deferred = true;
			return 0;
		}
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

nomem:
	/* rpmad cannot hold the bytes: the operation fails, nothing else */
	if (mapped_after_batch(tc))
		return 1;
	refuse(tc, ch, IBV_WC_REM_OP_ERR, true);
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
	if (tc->tgt_deferred) {
		/*
		 * its bytes first: it ends when the client's thread has them
		 * all (batch_done), and nothing is read until then
		 */
		tc->tgt_deferred = false;
		tc->tgt_end_pending = true;
		tcp_chan_pause(ch, true);
		tcp_target_batch_flush(tc, tc->tgt_resume);
		return;
	}
	if (tc->tgt_nomem) {
		tc->tgt_nomem = false;
		refuse(tc, ch, IBV_WC_REM_OP_ERR, true);
	}
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
		if (!mr_io_in_process(mr, f->raddr, 8)) {
			mr_io_store64(mr, f->raddr, value);
		} else {
			/* one aligned 8-byte pwrite: one store of the kernel's */
			struct as_batch *b = batch_for(tc, mr);
			if (b == NULL || as_batch_write(b, f->raddr, &value, 8,
					f->seq)) {
				refuse(tc, ch, IBV_WC_REM_OP_ERR, true);
				return;
			}
		}
		conn_count_served(tc->conn, QP_OP_ATOMIC_WRITE, 8);
		break;
	}
	case TF_READ:
		/* one whose data the client's thread read: it goes now */
		if (tc->tgt_read) {
			struct tcp_frame resp = { .type = TF_READ_RESP,
					.seq = f->seq, .length = f->length };
			if (tcp_chan_send_copy(tc->tgt, &resp, tc->tgt_read,
					f->length))
				tcp_conn_over(tc, RPMA_CONN_LOST);
			else
				tcp_chan_mark_dirty(tc->tgt);
			tc->tgt_read = NULL;
			conn_count_served(tc->conn, QP_OP_READ, f->length);
			/* the data acknowledges all before */
			tc->last_done = tc->acked = f->seq;
			tc->ack_due = false;
			return;
		}
		break;
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
	/*
	 * with the client's thread idle, what this frame put in the batch
	 * goes now: the first acknowledgement of a stream waits for one
	 * frame's bytes only, and the frames after it gather meanwhile
	 */
	if (!tc->tgt_busy)
		tcp_target_batch_flush(tc, tc->tgt_resume);
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
