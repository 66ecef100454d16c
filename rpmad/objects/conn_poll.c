// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_poll.c -- the poller of the connections' queue pairs: the busy
 * ones are polled each pass of the loop, idle ones sleep until their
 * doorbell or their transport wakes them
 */

#include <utlist.h>

#include "clients/tenant.h"
#include "core/daemon.h"
#include "log/log.h"
#include "loop/fairq.h"
#include "loop/loop.h"
#include "objects/conn.h"
#include "objects/conn_impl.h"
#include "objects/conn_poll.h"
#include "objects/conn_work.h"
#include "objects/qp.h"
#include "transport/transport.h"

static void
conn_fail_corrupted(struct conn *conn)
{
	conn_log_subject(conn);
	tenant_log(conn_owner(conn), LOG_WARNING,
			"connection qp %u: the "
			"client corrupted its queue pair region; ending the "
			"connection",
			conn->qp_num);
	log_subject_pop();
	conn->qp.corrupted = false;
	if (conn->state != CONN_ENDED) {
		conn_set_state(conn, CONN_ENDED);
		conn->end_reason = "lost (the client corrupted its queue pair)";
		conn_push_event(conn, RPMA_CONN_LOST, NULL, 0, false);
	}
	conn_set_qp_error(conn);
	conn_release_transport(conn, true);
}

static int
conn_poll(struct conn *conn)
{
	int work = qp_backlog_drain(&conn->qp);

	if (conn->release_pending)
		conn_release_transport(conn, false);

	if (conn->qp_error)
		work += conn_flush_deferred(conn) + conn_flush_rings(conn);
	else if (conn->state == CONN_ESTABLISHED)
		work += conn_take_work(conn);

	if (conn->rnr_waiting && qp_rq_pending(conn_recv_qp(conn)) &&
			conn->tp_conn) {
		conn->rnr_waiting = false;
		conn->tp->recv_posted(conn);
		work++;
	} else if (conn->tp->eager_recv && conn->tp_conn && !conn->qp_error &&
			qp_rq_pending(&conn->qp)) {
		/* not counted as work: the transport may not take them yet */
		conn->tp->recv_posted(conn);
	}
	if (conn->qp.corrupted)
		conn_fail_corrupted(conn);
	return work;
}

/*
 * Whether posted SQ entries are work now: not while the connection is not
 * up (nor while all its work is in flight), or a client that posts early
 * would keep the loop from ever sleeping.
 */
static bool
sq_wanted(const struct conn *conn)
{
	if (conn->qp_error || conn->deferred)
		return true;
	if (conn->rejected)
		return false; /* nothing more is taken before it completes */
	return conn->state == CONN_ESTABLISHED &&
			conn->sq_taken - conn->sq_done <
			conn->qp.layout.sq_entries;
}

/* Whether posted receives are work now (see conn_poll). */
static bool
rq_wanted(const struct conn *conn)
{
	return conn->rnr_waiting ||
			(conn->tp->eager_recv && conn->tp_conn &&
					!conn->qp_error);
}

/* What only polling finds: the transport refused work for now, ... */
static bool
needs_polling(const struct conn *conn)
{
	return conn->deferred || conn->release_pending || conn->qp.corrupted;
}

/*
 * Sets need_wakeup and leaves the poller's list, unless work came
 * meanwhile. Returns true when the connection sleeps now.
 */
static bool
conn_try_sleep(struct conn *conn)
{
	/* a shared RQ's doorbell wakes its connections */
	if (qp_prepare_sleep(&conn->qp, sq_wanted(conn),
			    rq_wanted(conn) && conn->srq == NULL)) {
		qp_wake(&conn->qp);
		return false;
	}
	conn_deactivate(conn);
	return true;
}

static int
poll_all(void *arg)
{
	int work = 0;
	uint64_t now = loop_now_ns();
	uint64_t spin = loop_spin_ns(rpmad.loop);
	struct conn *conn, *tmp;
	DL_FOREACH_SAFE2(conn_active_first(), conn, tmp, active_next)
	{
		int w = conn_poll(conn);
		work += w;
		if (w)
			qp_progress(&conn->qp);
		if (w || needs_polling(conn))
			conn->last_work_ns = now;
		else if (now - conn->last_work_ns >= spin &&
				conn_try_sleep(conn))
			continue;
	}
	return work;
}

static int
prepare_sleep_all(void *arg)
{
	int work = 0;
	struct conn *conn;
	DL_FOREACH2(conn_active_first(), conn, active_next)
	work += qp_prepare_sleep(&conn->qp, sq_wanted(conn), rq_wanted(conn));
	return work;
}

static void
wake_all(void *arg)
{
	struct conn *conn;
	DL_FOREACH2(conn_active_first(), conn, active_next)
	qp_wake(&conn->qp);
}

static struct loop_poller conn_poller = {
	.poll = poll_all,
	.prepare_sleep = prepare_sleep_all,
	.wake = wake_all,
};

void
conn_poller_start(void)
{
	/* the arbiter after the poller: work taken is served in that pass */
	fairq_init(rpmad.loop);
	loop_poller_add(rpmad.loop, &conn_poller);
}

struct fairq_tenant *
conn_fairq(const struct conn *conn)
{
	return conn->obj.owner ? tenant_fairq(conn_owner(conn)) : NULL;
}

void
conn_doorbell_ready(struct loop_watch *w, uint32_t events)
{
	struct conn *conn = w->arg;
	qp_doorbell_drain(&conn->qp);
	conn_activate(conn);
	/* take the work now: it was posted before what this batch reports */
	(void) conn_poll(conn);
	loop_kick(rpmad.loop);
}
