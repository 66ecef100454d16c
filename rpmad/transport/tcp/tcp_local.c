// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_local.c -- the memory-to-memory shortcut of the software transport
 *
 * When both ends of a connection live in this rpmad (the passive side
 * recognises the active side's HELLO token), operations skip the sockets:
 * each is checked against the other end's registrations exactly as a
 * remote target checks it, then copied, and completes at once -- in order,
 * since every operation completes before the next one starts. A send that
 * finds no receive waits in flight (with the later work behind it, all of
 * it handed over to the core's list) until one is posted or the RNR time
 * runs out. Set-up and tear-down still go through the sockets, so events
 * behave the same either way.
 */

#include <errno.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "log.h"
#include "mr.h"
#include "mr_io.h"
#include "tcp_conn.h"
#include "tcp_local.h"

/*
 * The work waiting for a receive at the peer: in this mode the only work
 * in flight (everything else completes in tcp_local_post()).
 */
static struct work *
waiting(const struct tcp_conn *tc)
{
	return conn_work_oldest(tc->conn);
}

void
tcp_local_forget(struct tcp_conn *tc)
{
	loop_timer_cancel(rpmad.loop, &tc->rnr_timer);
}

/* The initiator's work failed: it and everything after it end. */
static void
fail(struct tcp_conn *tc, struct work *w, enum ibv_wc_status status)
{
	conn_work_done(tc->conn, w, status);
	conn_work_flush(tc->conn);
	loop_timer_cancel(rpmad.loop, &tc->rnr_timer);
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
		loop_timer_cancel(rpmad.loop, &peer->rnr_timer);
		conn_qp_error(peer->conn);
	}
}

/*
 * Executes one work at the peer. Returns 1 when it must wait for a
 * receive buffer (nothing happened), 0 otherwise (it completed).
 */
static int
execute(struct tcp_conn *tc, struct work *w)
{
	struct tcp_conn *peer = tc->local_peer;
	struct conn *target = peer ? peer->conn : NULL;
	if (target == NULL || conn_qp_failed(target)) {
		fail(tc, w, target ? IBV_WC_REM_OP_ERR : IBV_WC_WR_FLUSH_ERR);
		return 0;
	}

	struct mr *mr = NULL;
	struct recv_slot *rs = NULL;
	bool imm = false;
	int ret;

	switch (w->opcode) {
	case QP_OP_WRITE_IMM:
		imm = true;
		ret = conn_take_recv(target, 0, &rs);
		if (ret == -EAGAIN)
			return 1;
		if (ret) {
			fail_at_target(tc, w, IBV_WC_REM_OP_ERR);
			return 0;
		}
		/* fall through */
	case QP_OP_WRITE:
		if (conn_target_access(target, w->rkey, w->raddr, w->length,
				MR_REMOTE_WRITE, &mr)) {
			if (imm)
				conn_recv_done(target, rs, IBV_WC_WR_FLUSH_ERR,
						0, IBV_WC_RECV, false, 0);
			fail_at_target(tc, w, IBV_WC_REM_ACCESS_ERR);
			return 0;
		}
		if (w->length)
			mr_io_copy(mr, w->raddr, w->lmr, w->laddr, w->length);
		if (imm)
			conn_recv_done(target, rs, IBV_WC_SUCCESS, w->length,
					IBV_WC_RECV_RDMA_WITH_IMM, true, w->imm);
		break;
	case QP_OP_READ:
		if (conn_target_access(target, w->rkey, w->raddr, w->length,
				MR_REMOTE_READ, &mr)) {
			fail_at_target(tc, w, IBV_WC_REM_ACCESS_ERR);
			return 0;
		}
		if (w->length)
			mr_io_copy(w->lmr, w->laddr, mr, w->raddr, w->length);
		break;
	case QP_OP_ATOMIC_WRITE: {
		uint64_t value;
		if ((w->raddr & 7) || conn_target_access(target, w->rkey,
				w->raddr, 8, MR_REMOTE_WRITE, &mr)) {
			fail_at_target(tc, w, IBV_WC_REM_ACCESS_ERR);
			return 0;
		}
		mr_io_read(w->lmr, w->laddr, &value, 8);
		mr_io_store64(mr, w->raddr, value);
		break;
	}
	case QP_OP_FLUSH:
		if (conn_target_access(target, w->rkey, w->raddr, w->length,
				w->persistent ? MR_REMOTE_PERSIST :
				MR_REMOTE_READ, &mr)) {
			fail_at_target(tc, w, IBV_WC_REM_ACCESS_ERR);
			return 0;
		}
		if (w->persistent && mr && mr_persist(mr, w->raddr, w->length)) {
			fail_at_target(tc, w, IBV_WC_REM_OP_ERR);
			return 0;
		}
		break;
	default:	/* send, send with imm */
		ret = conn_take_recv(target, w->length, &rs);
		if (ret == -EAGAIN)
			return 1;
		if (ret) {
			fail_at_target(tc, w, IBV_WC_REM_INV_REQ_ERR);
			return 0;
		}
		if (w->length)
			mr_io_copy(rs->mr, rs->addr, w->lmr, w->laddr,
					w->length);
		conn_recv_done(target, rs, IBV_WC_SUCCESS, w->length,
				IBV_WC_RECV, w->opcode == QP_OP_SEND_IMM, w->imm);
		break;
	}
	conn_count_served(target, w->opcode, w->length);
	conn_work_done(tc->conn, w, IBV_WC_SUCCESS);
	return 0;
}

/* Runs waiting work in order until one must wait again. */
static void
run_waiting(struct tcp_conn *tc)
{
	struct work *w;
	while (!conn_qp_failed(tc->conn) && (w = waiting(tc)) != NULL) {
		if (execute(tc, w) > 0)
			return;	/* still the oldest, still waiting */
	}
	loop_timer_cancel(rpmad.loop, &tc->rnr_timer);
}

int
tcp_local_post(struct tcp_conn *tc, struct work *w)
{
	if (waiting(tc) == NULL && execute(tc, w) == 0)
		return 0;
	/* it waits for a receive, or behind one that does: in order */
	conn_work_handed(tc->conn, w);
	if (!tc->rnr_timer.armed)
		loop_timer_arm(rpmad.loop, &tc->rnr_timer,
				(uint64_t)rpmad.cfg.rnr_timeout_ms * 1000000);
	return 0;
}

void
tcp_local_resume(struct tcp_conn *target)
{
	struct tcp_conn *tc = target->local_peer;
	if (tc && tc->conn && waiting(tc))
		run_waiting(tc);
}

bool
tcp_local_rnr_expired(struct tcp_conn *tc)
{
	/* with sockets, work in flight waits for answers, not receives */
	struct work *w = tc->local_peer ? waiting(tc) : NULL;
	if (w == NULL)
		return false;
	log_info("tcp: connection qp %u: no receive was posted within %u ms",
			conn_qp_num(tc->conn), rpmad.cfg.rnr_timeout_ms);
	fail(tc, w, IBV_WC_RNR_RETRY_EXC_ERR);
	return true;
}
