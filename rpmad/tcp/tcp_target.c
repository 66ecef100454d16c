// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_target.c -- the target's side of the software transport's
 * operations: every operation frame of the peer's is checked (key, bounds,
 * usage) before a byte of it lands, then executed in order and answered;
 * a bad one is refused with NAK and the rest of that direction discarded,
 * as a verbs responder does.
 *
 * What lands in a client's own memory (its private pages, reached through
 * its address space) is done by the client's thread, in batches
 * (tcp_batch.c): nothing is acknowledged before its bytes are in, a frame
 * that must not overtake them waits for them, and bytes that cannot be
 * written fail their operation. A read of such memory is answered with
 * what the client's thread read (tcp_chan.c), and nothing after it is
 * taken until then.
 */

#include <errno.h>
#include <string.h>

#include "tcp/tcp.h"

static void
send_answer(struct tcp_conn *tc, const struct tcp_frame *f, struct mr *mr,
		uint64_t addr)
{
	if (tcp_chan_send(tc->tgt, f, NULL, 0, mr, addr))
		tcp_conn_over(tc, RPMA_CONN_LOST);
	else
		tcp_chan_mark_dirty(tc->tgt);
}

uint64_t
tcp_target_done_upto(const struct tcp_conn *tc)
{
	/* nothing counts as done before its bytes are in the client's memory */
	const struct as_batch *b = tc->tgt ? tcp_batch_busy(tc->tgt) : NULL;
	if (b == NULL && tc->tgt)
		b = tcp_batch_gathering(tc->tgt);
	return b ? as_batch_first_tag(b) - 1 : tc->last_done;
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
			loop_timer_arm(tcp_env->loop, &tc->rnr_timer,
					(uint64_t) tcp_env->set.rnr_timeout_ms *
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
		loop_timer_cancel(tcp_env->loop, &tc->rnr_timer);
	}
	/* in flight until its message is in */
	conn_recv_handed(tc->conn, rs);
	return 0;
}

/* ------------------------------------------- the client's own memory */

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

/*
 * A batch is back. Frames before the first one it failed are done
 * (acknowledged once all is back), that one is refused (its bytes did not
 * land: never a success for them) with everything after it; a client
 * whose memory did not answer in time fails the same way.
 */
static void
batch_back(struct tcp_chan *ch, struct as_batch *b, enum as_status status)
{
	struct tcp_conn *tc = ch->tc;
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
	if (failed && !tc->tgt_error && tc->state == TC_ESTABLISHED) {
		if (tc->last_done >= bad)
			tc->last_done = bad - 1;
		/* what the next batch holds came after it: discarded */
		tcp_batch_discard(ch);
		refuse_seq(tc, bad, why, true);
	}
}

static void
batch_end(struct tcp_chan *ch)
{
	tcp_target_end(ch->tc, ch);
}

static void
batch_after(struct tcp_chan *ch)
{
	tcp_target_ack(ch->tc);
}

static const struct tcp_batch_role target_batches = {
	.back = batch_back,
	.end = batch_end,
	.after = batch_after,
};

/* A read's data is read (or refused): the frames after it are taken. */
static void
read_on(struct tcp_conn *tc)
{
	struct tcp_chan *ch = tc->tgt;
	tc->tgt_read_waits = false;
	if (ch->fd >= 0 && ch->batch_paused && !ch->throttled) {
		ch->batch_paused = false;
		tcp_chan_pause(ch, false);
		ch->rx_resume(ch);
	}
}

/*
 * A read's data in the client's own memory could not be read: refused
 * before its answer went; after (its bytes went as zeros), the connection
 * breaks, so that the initiator's read never completes as a success.
 */
static void
read_lost(struct tcp_chan *ch, struct tx_item *it, bool unsent)
{
	struct tcp_conn *tc = ch->tc;
	if (it->type != TF_READ_RESP)
		return;
	if (!unsent) {
		tcp_conn_log(tc, LOG_INFO, "tcp: connection qp %u: the data of "
				"read %llu is gone from the client's memory",
				conn_qp_num(tc->conn),
				(unsigned long long)it->seq);
		tcp_conn_over(tc, RPMA_CONN_LOST);
		return;
	}
	uint64_t seq = it->seq;
	tcp_chan_drop(ch, it, false);
	refuse_seq(tc, seq, IBV_WC_REM_ACCESS_ERR, true);
	read_on(tc);
}

/* The whole of a read's data is read: the frames after it are taken. */
static void
read_fetched(struct tcp_chan *ch, struct tx_item *it)
{
	if (it->type == TF_READ_RESP && ch->tc->tgt_read_waits)
		read_on(ch->tc);
}

static const struct tcp_fetch_role target_fetches = {
	.lost = read_lost,
	.fetched = read_fetched,
};

/*
 * Finds the registration of a remote access: 0, 1 (wait: it is refused
 * once the batches before it are done, which refuses nothing after it),
 * or -EACCES (refused).
 */
static int
access_or_refuse(struct tcp_conn *tc, struct tcp_chan *ch, uint64_t len,
		enum mr_access access, struct mr **mr)
{
	int ret = conn_target_access(tc->conn, ch->cur.rkey, ch->cur.raddr,
			len, access, mr);
	if (ret == 0)
		return 0;
	if (tcp_batch_pending(ch))
		return tcp_batch_wait(ch);
	refuse(tc, ch, IBV_WC_REM_ACCESS_ERR, true);
	return ret;
}

/*
 * The frame's bytes for memory that is not the client's own: done on the
 * loop, but only after the batches before them (1: wait).
 */
static int
after_batches(struct tcp_chan *ch)
{
	return tcp_batch_pending(ch) ? tcp_batch_wait(ch) : 0;
}

/* What a write or a message does to the client's own memory. */
static int
to_own_memory(struct tcp_conn *tc, struct tcp_chan *ch, struct mr *mr,
		uint64_t addr, bool end_waits)
{
	if (tcp_batch_sink(ch, mr, addr)) {
		/* rpmad cannot hold the bytes: the operation fails */
		if (after_batches(ch))
			return 1;
		refuse(tc, ch, IBV_WC_REM_OP_ERR, true);
		return 0;
	}
	ch->rx_deferred = end_waits;
	return 0;
}

/* A read: answered as its data leaves (0), or after a wait (1). */
static int
begin_read(struct tcp_conn *tc, struct tcp_chan *ch, struct mr *mr)
{
	const struct tcp_frame *f = &ch->cur;
	struct tcp_frame resp = { .type = TF_READ_RESP, .seq = f->seq,
			.length = f->length };
	/*
	 * the data is read from the registration as it leaves: by the
	 * client's thread for its own memory, and nothing after the read is
	 * taken before all of it is read (a later write must not land first)
	 */
	send_answer(tc, &resp, mr, f->raddr);
	if (mr && mr_io_in_process(mr, f->raddr, f->length)) {
		tc->tgt_read_waits = true;
		ch->batch_paused = true;
		tcp_chan_pause(ch, true);
	}
	/* the data acknowledges all before */
	tc->ack_due = false;
	tc->acked = f->seq;
	conn_count_served(tc->conn, QP_OP_READ, f->length);
	return 0;
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
	tcp_batch_start(ch, &target_batches, resume);
	ch->fetch_role = &target_fetches;
	if (tc->tgt_error)
		return 0;
	if (tc->tgt_read_waits)
		return 1;	/* a read's data is still being read */
	if (!batch_kind(f) && tcp_batch_pending(ch))
		return tcp_batch_wait(ch);
	/* the next batch holds this much at most while one is out */
	if (tcp_batch_busy(ch) && tcp_batch_gathering(ch) &&
			as_batch_size(tcp_batch_gathering(ch)) >=
			TCP_BATCH_SLICE)
		return tcp_batch_wait(ch);

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
		if (mr && mr_io_in_process(mr, f->raddr, f->length))
			return to_own_memory(tc, ch, mr, f->raddr,
					(f->flags & TF_F_IMM) != 0);
		if (after_batches(ch))
			return 1;
		break;
	case TF_READ:
		r = access_or_refuse(tc, ch, f->length, MR_REMOTE_READ, &mr);
		if (r)
			return r > 0 ? 1 : 0;
		return begin_read(tc, ch, mr);
	case TF_ATOMIC:
		if (f->raddr & 7) {
			if (after_batches(ch))
				return 1;
			refuse(tc, ch, IBV_WC_REM_INV_REQ_ERR, true);
			return 0;
		}
		r = access_or_refuse(tc, ch, 8, MR_REMOTE_WRITE, &mr);
		if (r)
			return r > 0 ? 1 : 0;
		/* the value lands at the end (a batch's, or on the loop) */
		if (!(mr && mr_io_in_process(mr, f->raddr, 8)) &&
				after_batches(ch))
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
		if (f->raddr && tcp_initiator_done_by_peer(tc, f->raddr)) {
			tcp_conn_violation(tc, "message acknowledging "
					"operations never sent");
			return -EPROTO;
		}
		r = take_recv(tc, ch, f->length);
		if (r)
			return r > 0 ? 1 : 0;
		struct recv_slot *rs = conn_recv_oldest(tc->conn);
		if (rs->mr && mr_io_in_process(rs->mr, rs->addr, f->length))
			return to_own_memory(tc, ch, rs->mr, rs->addr, true);
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

void
tcp_target_filled(struct tcp_conn *tc, struct tcp_chan *ch)
{
	/* a small message is in before anyone could copy part of it */
	if (ch != tc->tgt || ch->cur.type != TF_SEND || ch->sink != SINK_MEM ||
			ch->cur_payload < TCP_FILLED_MIN || tc->conn == NULL ||
			tc->tgt_error)
		return;
	struct recv_slot *rs = conn_recv_oldest(tc->conn);
	if (rs)
		conn_recv_filled(tc->conn, rs, ch->got);
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

/* An atomic write's value: stored now, or by the client's thread. */
static void
end_atomic(struct tcp_conn *tc, struct tcp_chan *ch)
{
	const struct tcp_frame *f = &ch->cur;
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
		struct as_batch *b = tcp_batch_for(ch, mr);
		if (b == NULL || as_batch_write(b, f->raddr, &value, 8,
				f->seq)) {
			refuse(tc, ch, IBV_WC_REM_OP_ERR, true);
			return;
		}
	}
	conn_count_served(tc->conn, QP_OP_ATOMIC_WRITE, 8);
}

void
tcp_target_end(struct tcp_conn *tc, struct tcp_chan *ch)
{
	const struct tcp_frame *f = &ch->cur;
	if (ch->rx_deferred) {
		/*
		 * its bytes first: it ends when the client's thread has them
		 * all (tcp_batch.c calls again), nothing read until then
		 */
		ch->rx_deferred = false;
		tcp_batch_end_waits(ch);
		return;
	}
	if (ch->rx_nomem) {
		ch->rx_nomem = false;
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
	case TF_ATOMIC:
		end_atomic(tc, ch);
		if (tc->tgt_error)
			return;
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
	if (f->type != TF_READ)	/* its data acknowledged it already */
		tc->ack_due = true;
	/*
	 * with the client's thread idle, what this frame put in the batch
	 * goes now: the first acknowledgement of a stream waits for one
	 * frame's bytes only, and the frames after it gather meanwhile
	 */
	if (!tcp_batch_busy(ch))
		tcp_batch_flush(ch);
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
	tcp_conn_log(tc, LOG_INFO,
			"tcp: connection qp %u: no receive was "
			"posted within %u ms",
			conn_qp_num(tc->conn), tcp_env->set.rnr_timeout_ms);
	/* the sender's problem: its queue pair fails, ours goes on */
	refuse(tc, tc->tgt, IBV_WC_RNR_RETRY_EXC_ERR, false);
	return true;
}
