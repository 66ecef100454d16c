// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_local.c -- the memory-to-memory shortcut of the software transport
 *
 * When both ends of a connection live in this rpmad (the passive side
 * recognises the active side's HELLO token), operations skip the sockets:
 * each is checked against the other end's registrations exactly as a
 * remote target checks it, then copied (or persisted) and completed. The
 * works wait in flight, in order, and the connection's flow (fairq.h)
 * moves the oldest on a slice at a time in its turns, interleaved with
 * every other connection's, so that a big copy or persist never holds
 * others up for more than a slice. A send that finds no receive waits,
 * with the later work behind it, until one is posted or the RNR time runs
 * out. Set-up and tear-down still go through the sockets, so events
 * behave the same either way.
 */

#include <errno.h>
#include <string.h>

#include "tcp/tcp.h"

/* The oldest work in flight: the one the connection's turns move on. */
static struct work *
waiting(const struct tcp_conn *tc)
{
	return conn_work_oldest(tc->conn);
}

void
tcp_local_forget(struct tcp_conn *tc)
{
	loop_timer_cancel(tcp_env->loop, &tc->rnr_timer);
	fairq_cancel(&tc->local_flow);
	mr_sync_forget(tc->local_sync);
	tc->local_sync = NULL;
	tc->local_synced = false;
	if (tc->local_job)
		as_batch_cancel(tc->local_job);
	as_batch_free(tc->local_read);
	tc->local_job = tc->local_read = NULL;
	tc->local_bytes = NULL;
	tc->local_n = 0;
	tc->local_over = false;
	tc->local_rs = NULL;
	tc->local_started = false;
	tc->local_done = 0;
}

/* The initiator's work failed: it and everything after it end. */
static void
fail(struct tcp_conn *tc, struct work *w, enum ibv_wc_status status)
{
	conn_work_done(tc->conn, w, status);
	conn_work_flush(tc->conn);
	loop_timer_cancel(tcp_env->loop, &tc->rnr_timer);
	conn_qp_error(tc->conn);
}

/* The target refused: its queue pair fails too, as a verbs responder's. */
static void
fail_at_target(struct tcp_conn *tc, struct work *w,
		enum ibv_wc_status status)
{
	struct tcp_conn *peer = tc->local_peer;
	fail(tc, w, status);
	if (peer && peer->conn && !conn_qp_failed(peer->conn)) {
		conn_work_flush(peer->conn);
		loop_timer_cancel(tcp_env->loop, &peer->rnr_timer);
		conn_qp_error(peer->conn);
	}
}

/*
 * What the oldest work needs before its bytes move: the whole range checked
 * as a target checks it (nothing lands when any of it may not), the
 * receive it lands in. IBV_WC_SUCCESS, IBV_WC_RNR_RETRY_EXC_ERR when it
 * must wait for a receive (nothing happened), or the status it fails with
 * at the target.
 */
static enum ibv_wc_status
begin(struct tcp_conn *tc, struct conn *target, struct work *w)
{
	struct mr *mr = NULL;
	struct recv_slot *rs = NULL;
	int ret;

	switch (w->opcode) {
	case QP_OP_WRITE_IMM:
	case QP_OP_SEND:
	case QP_OP_SEND_IMM:
		ret = conn_take_recv(target, w->opcode == QP_OP_WRITE_IMM ?
				0 : w->length, &rs);
		if (ret == -EAGAIN)
			return IBV_WC_RNR_RETRY_EXC_ERR;
		if (ret)
			return w->opcode == QP_OP_WRITE_IMM ?
				IBV_WC_REM_OP_ERR : IBV_WC_REM_INV_REQ_ERR;
		/* in flight at the target until it completes */
		conn_recv_handed(target, rs);
		tc->local_rs = rs;
		if (w->opcode != QP_OP_WRITE_IMM)
			return IBV_WC_SUCCESS;
		/* fall through */
	case QP_OP_WRITE:
		if (conn_target_access(target, w->rkey, w->raddr, w->length,
				MR_REMOTE_WRITE, &mr))
			return IBV_WC_REM_ACCESS_ERR;
		return IBV_WC_SUCCESS;
	case QP_OP_READ:
		if (conn_target_access(target, w->rkey, w->raddr, w->length,
				MR_REMOTE_READ, &mr))
			return IBV_WC_REM_ACCESS_ERR;
		return IBV_WC_SUCCESS;
	case QP_OP_ATOMIC_WRITE:
		/* its 8 bytes move as a write's do (move_slice) */
		if ((w->raddr & 7) || conn_target_access(target, w->rkey,
				w->raddr, 8, MR_REMOTE_WRITE, &mr))
			return IBV_WC_REM_ACCESS_ERR;
		return IBV_WC_SUCCESS;
	case QP_OP_FLUSH:
		if (conn_target_access(target, w->rkey, w->raddr, w->length,
				w->persistent ? MR_REMOTE_PERSIST :
				MR_REMOTE_READ, &mr))
			return IBV_WC_REM_ACCESS_ERR;
		return IBV_WC_SUCCESS;
	default:
		return IBV_WC_REM_INV_REQ_ERR;
	}
}

/* Whether the bytes of work w go a slice at a time (the others: none). */
static bool
has_bytes(const struct work *w)
{
	switch (w->opcode) {
	case QP_OP_FLUSH:
		return w->persistent;
	default:
		return true;
	}
}

static void slice_moved(struct as_batch *b, enum as_status status,
		void *arg);

/*
 * A slice from src to dst where either is a client's own memory: the
 * source's client's thread reads it, then the destination's writes it (a
 * side rpmad maps is done here). 1 while a thread is at it
 * (slice_moved() wakes the flow), 0 once the slice is over (*status: how;
 * a side that lost bytes fails the work with `src_lost` or `dst_lost`).
 */
static int
move_by_threads(struct tcp_conn *tc, struct mr *dst, uint64_t daddr,
		struct mr *src, uint64_t saddr, enum ibv_wc_status src_lost,
		enum ibv_wc_status dst_lost, enum ibv_wc_status *status)
{
	uint64_t n = tc->local_n;
	if (tc->local_job)
		return 1;
	if (tc->local_over) {
		tc->local_over = false;
		*status = (enum ibv_wc_status)tc->local_status;
		return 0;
	}
	struct as_batch *b;
	bool reading = tc->local_read == NULL && mr_io_in_process(src, saddr,
			n);
	if (reading) {
		b = as_batch_new(mr_addrspace(src));
		tc->local_bytes = b ? as_batch_read(b, saddr, n, 0) : NULL;
		tc->local_status = src_lost;
		if (b && tc->local_bytes == NULL) {
			as_batch_free(b);
			b = NULL;
		}
	} else if (mr_io_in_process(dst, daddr, n)) {
		b = as_batch_new(mr_addrspace(dst));
		uint8_t *p = b ? as_batch_write_space(b, daddr, n, 0) : NULL;
		if (p && tc->local_read)
			memcpy(p, tc->local_bytes, n);
		else if (p)
			mr_io_read(src, saddr, p, n);	/* mapped: read here */
		tc->local_status = dst_lost;
		if (b && p == NULL) {
			as_batch_free(b);
			b = NULL;
		}
	} else {
		/* read by the source's thread; rpmad maps the destination */
		mr_io_write_part(dst, daddr, tc->local_bytes, n, n);
		as_batch_free(tc->local_read);
		tc->local_read = NULL;
		*status = IBV_WC_SUCCESS;
		return 0;
	}
	if (b == NULL) {
		as_batch_free(tc->local_read);
		tc->local_read = NULL;
		*status = IBV_WC_REM_OP_ERR;	/* rpmad is out of memory */
		return 0;
	}
	tc->local_job = b;
	tc->local_reading = reading;
	as_batch_submit(b, slice_moved, tc);
	return 1;
}

static void
slice_moved(struct as_batch *b, enum as_status status, void *arg)
{
	struct tcp_conn *tc = arg;
	bool was_read = tc->local_reading;
	tc->local_job = NULL;
	tc->local_reading = false;
	fairq_wake(&tc->local_flow);
	if (status == AS_OK && was_read) {
		tc->local_read = b;	/* the source's bytes: written next */
		return;
	}
	/* over: done, or local_status says which side lost bytes */
	if (status == AS_OK)
		tc->local_status = IBV_WC_SUCCESS;
	as_batch_free(tc->local_read);
	tc->local_read = NULL;
	tc->local_over = true;
	as_batch_free(b);
}

/*
 * Copies a slice: here when rpmad maps both sides (an atomic write's 8
 * bytes as one store), else by the clients' threads. 1 while they are at
 * it, 0 once it is over (*status).
 */
static int
copy_slice(struct tcp_conn *tc, struct work *w, struct mr *dst,
		uint64_t daddr, struct mr *src, uint64_t saddr,
		enum ibv_wc_status src_lost, enum ibv_wc_status dst_lost,
		enum ibv_wc_status *status)
{
	uint64_t n = tc->local_n;
	*status = IBV_WC_SUCCESS;
	if (n && (tc->local_job || tc->local_read || tc->local_over ||
			mr_io_in_process(src, saddr, n) ||
			mr_io_in_process(dst, daddr, n)))
		return move_by_threads(tc, dst, daddr, src, saddr, src_lost,
				dst_lost, status);
	if (w->opcode == QP_OP_ATOMIC_WRITE) {
		uint64_t value;
		mr_io_read(src, saddr, &value, 8);
		mr_io_store64(dst, daddr, value);
	} else if (n) {
		mr_io_copy(dst, daddr, src, saddr, (size_t)n, w->length);
	}
	return 0;
}

/*
 * The next slice of the oldest work's bytes (taken off *budget): copied,
 * or persisted. A slice rpmad copies itself is at most *budget bytes; one
 * a client's thread moves is up to TCP_BATCH_SLICE (the thread's time is
 * its tenant's, not the loop's). The registration is looked up again for
 * every slice: one deregistered meanwhile takes no more. Returns 1 while
 * a client's thread moves the slice (the flow wakes when it is done), 0
 * with how it went in *status.
 */
static int
move_slice(struct tcp_conn *tc, struct conn *target, struct work *w,
		size_t *budget, enum ibv_wc_status *status)
{
	uint64_t off = tc->local_done, rem = w->length - off;
	struct mr *mr = NULL, *dst = NULL, *src = NULL;
	uint64_t daddr = 0, saddr = 0;
	enum ibv_wc_status src_lost = IBV_WC_LOC_PROT_ERR;
	enum ibv_wc_status dst_lost = IBV_WC_REM_ACCESS_ERR;
	enum mr_access access;
	*status = IBV_WC_SUCCESS;
	switch (w->opcode) {
	case QP_OP_READ:
		access = MR_REMOTE_READ;
		break;
	case QP_OP_FLUSH:	/* the DAX part; the page cache's: sync() */
		access = MR_REMOTE_PERSIST;
		break;
	case QP_OP_SEND:
	case QP_OP_SEND_IMM:
		access = MR_LOCAL_WRITE;	/* into the receive taken */
		break;
	default:
		access = MR_REMOTE_WRITE;
		break;
	}
	if (access != MR_LOCAL_WRITE && conn_target_access(target, w->rkey,
			w->raddr + off, rem, access, &mr)) {
		*status = IBV_WC_REM_ACCESS_ERR;
		tc->local_n = 0;
		return 0;
	}
	switch (w->opcode) {
	case QP_OP_READ:
		dst = w->lmr, daddr = w->laddr + off;
		src = mr, saddr = w->raddr + off;
		src_lost = IBV_WC_REM_ACCESS_ERR;
		dst_lost = IBV_WC_LOC_PROT_ERR;
		break;
	case QP_OP_FLUSH:
		break;
	case QP_OP_SEND:
	case QP_OP_SEND_IMM:
		dst = tc->local_rs->mr, daddr = tc->local_rs->addr + off;
		src = w->lmr, saddr = w->laddr + off;
		dst_lost = IBV_WC_REM_OP_ERR;
		break;
	default:
		dst = mr, daddr = w->raddr + off;
		src = w->lmr, saddr = w->laddr + off;
		break;
	}
	/* a slice keeps its length until it is over, whatever the budget */
	if (tc->local_n == 0) {
		/* (a tenant with a bandwidth cap goes a turn's bytes a time) */
		bool threaded = rem && dst && src &&
			!fairq_flow_capped(&tc->local_flow) &&
			(mr_io_in_process(src, saddr, rem) ||
			mr_io_in_process(dst, daddr, rem));
		uint64_t cap = threaded ? TCP_BATCH_SLICE : *budget;
		tc->local_n = rem < cap ? rem : cap;
	}
	uint64_t n = tc->local_n;
	if (w->opcode == QP_OP_FLUSH) {
		if (mr)
			mr_persist_cpu(mr, w->raddr + off, n);
	} else if (n && copy_slice(tc, w, dst, daddr, src, saddr, src_lost,
			dst_lost, status)) {
		return 1;
	}
	tc->local_n = 0;
	if (*status != IBV_WC_SUCCESS)
		return 0;
	tc->local_done += n;
	bool message = w->opcode == QP_OP_SEND || w->opcode == QP_OP_SEND_IMM;
	if (tc->local_rs && message && w->length >= TCP_FILLED_MIN)
		conn_recv_filled(target, tc->local_rs,
				(uint32_t) tc->local_done);
	/* a thread's slice may be more than the turn: charged all the same */
	if (n > *budget)
		tc->local_overdraft += n - *budget;
	*budget = n < *budget ? *budget - (size_t)n : 0;
	return 0;
}

/* The oldest work is done: its receive completes, then the work. */
static void
finish(struct tcp_conn *tc, struct conn *target, struct work *w)
{
	struct recv_slot *rs = tc->local_rs;
	tc->local_rs = NULL;
	tc->local_started = false;
	tc->local_synced = false;
	tc->local_done = 0;
	if (rs && w->opcode == QP_OP_WRITE_IMM)
		conn_recv_done(target, rs, IBV_WC_SUCCESS, w->length,
				IBV_WC_RECV_RDMA_WITH_IMM, true, w->imm);
	else if (rs)
		conn_recv_done(target, rs, IBV_WC_SUCCESS, w->length,
				IBV_WC_RECV, w->opcode == QP_OP_SEND_IMM,
				w->imm);
	conn_count_served(target, w->opcode, w->length);
	conn_work_done(tc->conn, w, IBV_WC_SUCCESS);
}

/*
 * The oldest work fails with `status`: the receive it took at the target,
 * if any, completes flushed (a failed or gone target flushes its own), and
 * both queue pairs fail.
 */
static void
refused(struct tcp_conn *tc, struct conn *target, struct work *w,
		enum ibv_wc_status status)
{
	struct recv_slot *rs = tc->local_rs;
	tc->local_rs = NULL;
	tc->local_started = false;
	tc->local_synced = false;
	tc->local_done = 0;
	if (rs && target && !conn_qp_failed(target) &&
			conn_recv_oldest(target) == rs)
		conn_recv_done(target, rs, IBV_WC_WR_FLUSH_ERR, 0, IBV_WC_RECV,
				false, 0);
	fail_at_target(tc, w, status);
}

/* The thread wrote the page cache back: the persist goes on. */
static void
synced(void *arg, int result)
{
	struct tcp_conn *tc = arg;
	tc->local_sync = NULL;
	tc->local_synced = true;
	tc->local_sync_result = result;
	fairq_wake(&tc->local_flow);
}

/*
 * The page-cache part of a persistent flush, in the thread of offload.h:
 * 1 while the thread is at it (synced() wakes the flow), 0 once over
 * (*status: IBV_WC_SUCCESS, or what the work fails with).
 */
static int
sync(struct tcp_conn *tc, struct conn *target, struct work *w,
		enum ibv_wc_status *status)
{
	if (tc->local_sync)
		return 1;
	if (!tc->local_synced) {
		struct mr *mr = NULL;
		if (conn_target_access(target, w->rkey, w->raddr, w->length,
				MR_REMOTE_PERSIST, &mr)) {
			*status = IBV_WC_REM_ACCESS_ERR;
			return 0;
		}
		tc->local_sync_result = 0;
		if (mr && mr_persist_needs_msync(mr, w->raddr, w->length)) {
			tc->local_sync = mr_sync_start(mr, w->raddr, w->length,
					synced, tc, &tc->local_sync_result);
			if (tc->local_sync)
				return 1;
		}
		tc->local_synced = true;
	}
	*status = tc->local_sync_result ? IBV_WC_REM_OP_ERR : IBV_WC_SUCCESS;
	return 0;
}

/*
 * Moves the oldest work on by at most *budget bytes (taken off it).
 * Returns 1 when it must wait for a receive buffer (nothing happened), 2
 * while a thread writes its page cache back or moves a slice of a
 * client's own memory, 0 otherwise (it progressed, completed or failed).
 */
static int
step(struct tcp_conn *tc, struct work *w, size_t *budget)
{
	struct tcp_conn *peer = tc->local_peer;
	struct conn *target = peer ? peer->conn : NULL;
	if (target == NULL || conn_qp_failed(target)) {
		refused(tc, target, w, target ? IBV_WC_REM_OP_ERR :
				IBV_WC_WR_FLUSH_ERR);
		return 0;
	}
	enum ibv_wc_status status;
	if (!tc->local_started) {
		status = begin(tc, target, w);
		if (status == IBV_WC_RNR_RETRY_EXC_ERR)
			return 1;
		if (status != IBV_WC_SUCCESS) {
			refused(tc, target, w, status);
			return 0;
		}
		tc->local_started = true;
		tc->local_done = 0;
		/* it has its receive: no RNR wait runs while it moves on */
		loop_timer_cancel(tcp_env->loop, &tc->rnr_timer);
	}
	if (has_bytes(w)) {
		if (move_slice(tc, target, w, budget, &status))
			return 2;	/* a client's thread moves it */
		if (status != IBV_WC_SUCCESS) {
			refused(tc, target, w, status);
			return 0;
		}
		if (tc->local_done < w->length)
			return 0;	/* more next turn */
	}
	if (w->opcode == QP_OP_FLUSH && w->persistent) {
		if (sync(tc, target, w, &status))
			return 2;
		if (status != IBV_WC_SUCCESS) {
			refused(tc, target, w, status);
			return 0;
		}
	}
	finish(tc, target, w);
	return 0;
}

/*
 * A turn of the connection's works memory to memory (fairq.h): in order,
 * the oldest a slice at a time, until the budget is spent or one must
 * wait for a receive (then the RNR time runs until tcp_local_resume()).
 */
static size_t
local_turn(struct fairq_flow *f, size_t budget, bool *more)
{
	struct tcp_conn *tc = f->arg;
	size_t left = budget;
	unsigned ops = 0;
	struct work *w;
	*more = false;
	while (!conn_qp_failed(tc->conn) && (w = waiting(tc)) != NULL) {
		if (left == 0) {
			*more = true;
			break;
		}
		int r = step(tc, w, &left);
		if (r == 1 && !tc->rnr_timer.armed)
			loop_timer_arm(tcp_env->loop, &tc->rnr_timer,
					(uint64_t) tcp_env->set.rnr_timeout_ms *
							1000000);
		if (r)
			break;	/* a receive, or the thread, wakes it */
		if (waiting(tc) != w) {
			ops++;
			left = left > FAIRQ_OP_COST ? left - FAIRQ_OP_COST : 0;
			loop_timer_cancel(tcp_env->loop, &tc->rnr_timer);
		}
	}
	size_t used = budget - left + tc->local_overdraft;
	size_t opcost = (size_t)ops * FAIRQ_OP_COST;
	tc->local_overdraft = 0;
	return fairq_charge(f->tenant, used > opcost ? used - opcost : 0, ops);
}

void
tcp_local_init(struct tcp_conn *tc)
{
	fairq_flow_init(&tc->local_flow, local_turn, tc, tc, NULL);
}

int
tcp_local_post(struct tcp_conn *tc, struct work *w)
{
	/* in flight, in order, until its turns are done */
	conn_work_handed(tc->conn, w);
	fairq_wake(&tc->local_flow);
	return 0;
}

void
tcp_local_resume(struct tcp_conn *target)
{
	struct tcp_conn *tc = target->local_peer;
	if (tc && tc->conn && waiting(tc))
		fairq_wake(&tc->local_flow);
}

bool
tcp_local_rnr_expired(struct tcp_conn *tc)
{
	/* with sockets, work in flight waits for answers, not receives */
	struct work *w = tc->local_peer ? waiting(tc) : NULL;
	if (w == NULL)
		return false;
	conn_log(tc->conn, LOG_INFO,
			"tcp: connection qp %u: no receive was "
			"posted within %u ms",
			conn_qp_num(tc->conn), tcp_env->set.rnr_timeout_ms);
	fail(tc, w, IBV_WC_RNR_RETRY_EXC_ERR);
	return true;
}
