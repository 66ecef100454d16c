// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn.c -- connections: the calls of their clients, their events, and the
 * data path between the shared rings and the transport
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <utlist.h>

#include "clients/client.h"
#include "clients/tenant.h"
#include "conn_pdata.h"
#include "core/daemon.h"
#include "core/random.h"
#include "core/registry.h"
#include "log/log.h"
#include "loop/fairq.h"
#include "objects/conn.h"
#include "objects/device.h"
#include "objects/ep.h"
#include "objects/mr.h"
#include "objects/peer.h"
#include "objects/qp.h"
#include "objects/srq.h"
#include "qp_wc.h"
#include "transport/transport.h"

/*
 * In flight: works and receives the transport took (conn_work_handed(),
 * conn_recv_handed()) and has not completed yet, oldest first.
 */
struct conn_inflight {
	struct work *head, *tail;	/* through work.next */
	uint32_t works;			/* on the list */
	uint64_t work_seq;		/* the newest's number (0: none yet) */
	struct recv_slot *recvs;	/* by number & (rq_entries - 1) */
	uint64_t recv_done, recv_seq;	/* numbers: completed, handed over */
};

#define CONN_MAX_EVENTS 8

struct conn_event_entry {
	int event;
	bool has_pdata;
	uint8_t pdata_len;
	uint8_t pdata[CONN_PDATA_MAX];
};

/*
 * The fields are this file's alone: transports, the control plane and
 * main.c go through the functions of conn.h, so that what a connection
 * owes its client (order, counts, states) is kept in one place.
 */
struct conn {
	struct obj obj;
	struct peer *peer;
	const struct transport_ops *tp;
	void *tp_conn;
	enum conn_state state;
	const char *end_reason;	/* once ended: how, in rpmad's terms */
	bool passive;
	bool qp_error;		/* every further work request is flushed */
	bool release_pending;	/* ended: the transport is to be released */
	uint32_t qp_num;
	uint32_t timeout_ms;
	struct qp qp;
	struct mr *staging;	/* its staging bytes' registration, or NULL */

	struct sockaddr_storage remote;
	socklen_t remote_len;
	/*
	 * who causes what happens to it, when it came in: the remote host
	 * (or the local user) that sent the request; its log lines are that
	 * origin's share (conn_log)
	 */
	struct origin origin;
	char local_name[CONN_NAME_MAX], remote_name[CONN_NAME_MAX];
	uint8_t pdata_in[CONN_PDATA_MAX];	/* passive: what the client sent */
	uint8_t pdata_in_len;

	struct work *works;	/* by SQ index & (entries - 1) */
	uint32_t sq_done;	/* next SQ index to complete */
	uint32_t sq_taken;	/* next SQ index to take */
	bool deferred;		/* works[sq_taken - 1] waits for post() */
	/*
	 * rpmad refused works[sq_taken - 1] (an ibv_wc_status, 0: none), or
	 * the receive after those in flight: each completes with it in its
	 * turn, once everything before it completed (reliable connections
	 * complete in order)
	 */
	uint8_t rejected;
	uint8_t recv_rejected;
	bool rnr_waiting;	/* a message waits for a receive */
	struct conn_inflight inflight;
	struct srq *srq;	/* 1.x: receives come from it, not qp.rq */

	struct conn_event_entry events[CONN_MAX_EVENTS];
	unsigned ev_head, ev_count;

	struct op_counters ops;
	struct conn *all_prev, *all_next;	/* every connection */

	/*
	 * The poller's list: connections that had work within the spin time
	 * or wait on their transport. The others sleep with need_wakeup set
	 * and come back by their doorbell or by an event of their transport
	 * (conn_activate), so a pass costs what the busy connections cost.
	 */
	bool active;
	uint64_t last_work_ns;
	struct conn *active_prev, *active_next;
};

static struct conn *all_conns;
static struct conn *active_conns;	/* the poller's list */
static uint32_t next_qp_num;

static const char *
state_name(enum conn_state state)
{
	switch (state) {
	case CONN_REQ_OUT:
		return "request-out";
	case CONN_REQ_IN:
		return "request-in";
	case CONN_CONNECTING:
		return "connecting";
	case CONN_ESTABLISHED:
		return "established";
	case CONN_DISCONNECTING:
		return "disconnecting";
	case CONN_ENDED:
		return "ended";
	}
	return "?";
}

/* The client the connection is of: its log share, its counts. */
static struct client *
owner_of(const struct conn *conn)
{
	return obj_client(&conn->obj);
}

void
conn_log(const struct conn *conn, int level, const char *fmt, ...)
{
	if (level > log_max_level)
		return;
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!conn->passive) {
		/*
		 * its own client's doing, as many as its connections: not
		 * limited, so that its user's share stays for its refusals
		 */
		log_msg(level, "%s", text);
		return;
	}
	char who[ORIGIN_NAME_MAX];
	origin_name(&conn->origin, who, sizeof(who));
	tenant_log_origin(&conn->origin, level, "%s (from %s)", text, who);
}

/* ------------------------------------------------------------- its facts */

void *
conn_tp(const struct conn *conn)
{
	return conn->tp_conn;
}

void
conn_set_tp(struct conn *conn, void *tp_conn)
{
	conn->tp_conn = tp_conn;
}

uint32_t
conn_qp_num(const struct conn *conn)
{
	return conn->qp_num;
}

uid_t
conn_uid(const struct conn *conn)
{
	return owner_of(conn)->uid;
}

int
conn_netns(const struct conn *conn)
{
	return owner_of(conn)->netns;
}

struct peer *
conn_peer(const struct conn *conn)
{
	return conn->peer;
}

const struct sockaddr_storage *
conn_remote(const struct conn *conn, socklen_t *len)
{
	*len = conn->remote_len;
	return &conn->remote;
}

const char *
conn_remote_name(const struct conn *conn)
{
	return conn->remote_name;
}

uint32_t
conn_timeout_ms(const struct conn *conn)
{
	return conn->timeout_ms;
}

bool
conn_qp_failed(const struct conn *conn)
{
	return conn->qp_error;
}

struct qp *
conn_qp(struct conn *conn)
{
	return &conn->qp;
}

const struct qp_layout *
conn_qp_layout(const struct conn *conn)
{
	return &conn->qp.layout;
}

bool
conn_polled(const struct conn *conn)
{
	return conn->active;
}

void
conn_describe(const struct conn *conn, struct conn_info *info)
{
	memset(info, 0, sizeof(*info));
	info->state = conn->state;
	if (conn->state != CONN_ENDED || conn->end_reason == NULL)
		(void) snprintf(info->state_text, sizeof(info->state_text),
				"%s", state_name(conn->state));
	else
		(void) snprintf(info->state_text, sizeof(info->state_text),
				"ended: %s", conn->end_reason);
	memcpy(info->local_name, conn->local_name, sizeof(info->local_name));
	memcpy(info->remote_name, conn->remote_name,
			sizeof(info->remote_name));
	info->qp_num = conn->qp_num;
	info->role = conn->passive ? "passive" : "active";
	info->transport = conn->tp->name;
	info->ops = conn->ops;
}

unsigned
conn_shutdown_all(void)
{
	unsigned n = 0;
	struct conn *conn;
	DL_FOREACH2(all_conns, conn, all_next) {
		if (conn->state == CONN_ESTABLISHED) {
			conn->tp->disconnect(conn);
			n++;
		}
	}
	return n;
}

/* ---------------------------------------------------------------- events */

/* Also names rpmad's own outcomes (CONN_END_*): compared as ints. */
static const char *
event_name(enum rpma_conn_event event)
{
	switch ((int)event) {
	case RPMA_CONN_ESTABLISHED:
		return "established";
	case RPMA_CONN_CLOSED:
		return "closed";
	case RPMA_CONN_LOST:
		return "lost";
	case RPMA_CONN_REJECTED:
		return "rejected";
	case (int)CONN_END_REFUSED:
		return "refused (nothing listens there)";
	case (int)CONN_END_UNREACHABLE:
		return "unreachable (no route, or no answer in time)";
	default:
		return "undefined";
	}
}

/* The librpma 0.12 event an application sees for an outcome. */
static enum rpma_conn_event
app_event(enum rpma_conn_event event)
{
	if (event == CONN_END_REFUSED)
		return RPMA_CONN_REJECTED;
	if (event == CONN_END_UNREACHABLE)
		return RPMA_CONN_UNDEFINED;	/* the library: RPMA_E_UNKNOWN */
	return event;
}

static void
push_event(struct conn *conn, enum rpma_conn_event event, const void *pdata,
		uint8_t len, bool has_pdata)
{
	if (conn->ev_count == CONN_MAX_EVENTS) {
		tenant_log(owner_of(conn), LOG_WARNING, "connection qp %u: "
				"event queue full, dropping %s", conn->qp_num,
				event_name(event));
		return;
	}
	struct conn_event_entry *e = &conn->events[(conn->ev_head +
			conn->ev_count) % CONN_MAX_EVENTS];
	e->event = event;
	e->has_pdata = has_pdata;
	e->pdata_len = has_pdata ? len : 0;
	if (has_pdata && len)
		memcpy(e->pdata, pdata, len);
	conn->ev_count++;
	qp_notify_event(&conn->qp);
}

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
 * the works taken, in SQ order (flush_taken).
 */
static void
works_forget(struct conn *conn)
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
	return (uint32_t)(conn->inflight.recv_seq - conn->inflight.recv_done);
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
	conn_recv_done(conn, recv_at(conn, conn->inflight.recv_seq + 1),
			status, 0, IBV_WC_RECV, false, 0);
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
		stats_flush_latency(&rpmad.stats,
				loop_now_ns() - w->posted_ns);
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
			break;	/* messages are counted as receives */
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

static void
set_qp_error(struct conn *conn)
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
	enum ibv_wc_status status = conn->qp_error ? IBV_WC_WR_FLUSH_ERR :
		(enum ibv_wc_status)conn->rejected;
	conn->rejected = 0;
	conn_work_done(conn, &conn->works[conn->sq_done &
			(conn->qp.layout.sq_entries - 1)], status);
}

void
conn_work_refused(struct conn *conn, struct work *w,
		enum ibv_wc_status status)
{
	/* post() offers the newest work taken: take_work stops behind it */
	if (w != &conn->works[(conn->sq_taken - 1) &
			(conn->qp.layout.sq_entries - 1)])
		log_err("connection qp %u: work %u refused out of turn",
				conn->qp_num, w->sq_index);
	conn->rejected = (uint8_t)status;
	complete_rejected(conn);
}

void
conn_work_done(struct conn *conn, struct work *w, enum ibv_wc_status status)
{
	conn_activate(conn);
	work_leaves(conn, w);
	if (w->sq_index != conn->sq_done)
		log_err("connection qp %u: work %u completed out of order "
				"(expected %u)", conn->qp_num, w->sq_index,
				conn->sq_done);
	count_op(conn, w, status);
	complete_sqe(conn, w->sq_index, w->wr_id, w->opcode, w->signaled,
			w->length, status);
	if (w->lmr) {
		mr_put(w->lmr);
		w->lmr = NULL;
	}
	conn->sq_done = w->sq_index + 1;
	/* the transport flushes what it holds after this; the poller the rest */
	if (status != IBV_WC_SUCCESS && status != IBV_WC_WR_FLUSH_ERR)
		set_qp_error(conn);
	complete_rejected(conn);
}

/* Flushes work taken from the SQ that nobody will complete any more. */
static void
flush_taken(struct conn *conn)
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
static int
flush_rings(struct conn *conn)
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
static int
flush_deferred(struct conn *conn)
{
	if (!conn->deferred || conn->sq_done + 1 != conn->sq_taken)
		return 0;
	flush_taken(conn);
	return 1;
}

void
conn_qp_error(struct conn *conn)
{
	conn_activate(conn);
	set_qp_error(conn);
	(void) flush_deferred(conn);
	(void) flush_rings(conn);
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
		return IBV_WC_SUCCESS;	/* flush: nothing local */
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
static int
take_work(struct conn *conn)
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
		enum ibv_wc_status status = work_from_sqe(conn, &sqe, index,
				w);
		if (status != IBV_WC_SUCCESS) {
			tenant_log(owner_of(conn), LOG_INFO, "connection qp "
					"%u: work request %u rejected (%s)",
					conn->qp_num, index,
					ibv_wc_status_str(status));
			conn->rejected = (uint8_t)status;
			complete_rejected(conn);
			break;
		}
		if (post(conn, w) == -EAGAIN) {
			conn->deferred = true;
			break;
		}
	}
	if (n > 0)
		qp_set_contended(&conn->qp, fairq_contended(conn->obj.owner ?
				tenant_share(owner_of(conn)) : NULL));
	return n;
}

/* ------------------------------------------------------------- receives */

/* Where the connection's receives are posted: its own RQ or a shared one. */
static struct qp *
recv_qp(struct conn *conn)
{
	return conn->srq ? &conn->srq->qp : &conn->qp;
}

void
conn_srq_posted(struct conn *conn)
{
	if (conn->rnr_waiting)
		conn_activate(conn);
}

struct srq *
conn_srq(const struct conn *conn)
{
	return conn->srq;
}

/*
 * For conn_take_recv: -EPROTO once the refused receive failed in its turn
 * (and the queue pair with it), -EAGAIN while receives before it are in
 * flight (a transport that holds receives takes again after each).
 */
static int
refused_recv_due(struct conn *conn)
{
	enum ibv_wc_status status = conn->qp_error ? IBV_WC_WR_FLUSH_ERR :
		(enum ibv_wc_status)conn->recv_rejected;
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
	int got = qp_rq_next(recv_qp(conn), &rqe);
	if (got == 0) {
		conn->rnr_waiting = true;
		return -EAGAIN;
	}
	/* corrupted: the poller ends the connection (a shared RQ: it is
	 * of no use any more, and each connection fails as it takes) */
	if (got < 0) {
		if (conn->srq)
			conn->qp.corrupted = true;
		return -EPROTO;
	}

	conn->rnr_waiting = false;
	uint64_t seq = conn->inflight.recv_seq + 1;
	struct recv_slot *rs = recv_at(conn, seq);
	memset(rs, 0, sizeof(*rs));
	rs->tp_seq = seq;
	*rsp = rs;
	rs->wr_id = rqe.wr_id;
	rs->length = rqe.length;
	rs->addr = rqe.laddr;
	enum ibv_wc_status status = resolve_local(conn, rqe.lkey, rqe.laddr,
			rqe.length, MR_LOCAL_WRITE, &rs->mr);
	if (status == IBV_WC_SUCCESS && len > rqe.length)
		status = IBV_WC_LOC_LEN_ERR;
	if (status != IBV_WC_SUCCESS) {
		conn->recv_rejected = (uint8_t)status;
		return refused_recv_due(conn);
	}
	return 0;
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
	if (conn->srq) {
		/* the shared RQ's receive CQ, else the connection's queues */
		cqe.source = QP_CQE_FROM_SRQ;
		cqe.qp_num = conn->qp_num;
		if (conn->srq->has_rcq)
			qp_complete(&conn->srq->qp, &cqe, false);
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

/* -------------------------------------------------------- state changes */

static bool
is_request(enum conn_state state)
{
	return state == CONN_REQ_OUT || state == CONN_REQ_IN;
}

/*
 * Every change of state comes here: the client counts its requests (not
 * connecting yet) for max_pending_requests and rpmactl.
 */
static void
set_state(struct conn *conn, enum conn_state state)
{
	struct client *owner = owner_of(conn);
	if (is_request(conn->state) && !is_request(state))
		client_add_reqs(owner, -1);
	else if (!is_request(conn->state) && is_request(state))
		client_add_reqs(owner, 1);
	conn->state = state;
}

/* Lines about conn and its owner until log_subject_pop() (the journal's
 * fields). */
static void
log_subject_of(const struct conn *conn)
{
	log_subject_push();
	if (conn->obj.owner) {
		const struct client *owner = owner_of(conn);
		log_subject_client(owner->pid, owner->uid, owner->comm);
	}
	log_subject_conn(conn->qp_num, conn->local_name, conn->remote_name);
}

void
conn_established(struct conn *conn, const void *pdata, uint8_t len,
		bool has_pdata)
{
	if (conn->state != CONN_CONNECTING)
		return;
	conn_activate(conn);
	set_state(conn, CONN_ESTABLISHED);
	qp_set_state(&conn->qp, QP_STATE_READY);
	push_event(conn, RPMA_CONN_ESTABLISHED, pdata, len, has_pdata);
	log_subject_of(conn);
	conn_log(conn, LOG_INFO, "connection qp %u: established (%s <-> %s)",
			conn->qp_num, conn->local_name, conn->remote_name);
	log_subject_pop();
	loop_kick(rpmad.loop);
}

void
conn_ended(struct conn *conn, enum rpma_conn_event event)
{
	if (conn->state == CONN_ENDED)
		return;
	conn_activate(conn);
	log_subject_of(conn);
	conn_log(conn, LOG_INFO, "connection qp %u: %s", conn->qp_num,
			event_name(event));
	log_subject_pop();
	set_state(conn, CONN_ENDED);
	conn->end_reason = event_name(event);
	conn->release_pending = true;
	set_qp_error(conn);
	push_event(conn, app_event(event), NULL, 0, false);
	loop_kick(rpmad.loop);
}

/* Lets go of the transport and flushes what it had. */
static void
release_transport(struct conn *conn, bool abort)
{
	if (conn->tp_conn)
		conn->tp->release(conn, abort);
	conn->tp_conn = NULL;
	conn->release_pending = false;
	conn_recv_flush(conn);
	works_forget(conn);
	flush_taken(conn);
}

/* ----------------------------------------------------------- the poller */

static void
conn_fail_corrupted(struct conn *conn)
{
	log_subject_of(conn);
	tenant_log(owner_of(conn), LOG_WARNING, "connection qp %u: the "
			"client corrupted its queue pair region; ending the "
			"connection", conn->qp_num);
	log_subject_pop();
	conn->qp.corrupted = false;
	if (conn->state != CONN_ENDED) {
		set_state(conn, CONN_ENDED);
		conn->end_reason = "lost (the client corrupted its queue pair)";
		push_event(conn, RPMA_CONN_LOST, NULL, 0, false);
	}
	set_qp_error(conn);
	release_transport(conn, true);
}

static int
conn_poll(struct conn *conn)
{
	int work = qp_backlog_drain(&conn->qp);

	if (conn->release_pending)
		release_transport(conn, false);

	if (conn->qp_error)
		work += flush_deferred(conn) + flush_rings(conn);
	else if (conn->state == CONN_ESTABLISHED)
		work += take_work(conn);

	if (conn->rnr_waiting && qp_rq_pending(recv_qp(conn)) &&
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

void
conn_activate(struct conn *conn)
{
	if (conn->active)
		return;
	conn->active = true;
	conn->last_work_ns = loop_now_ns();
	qp_wake(&conn->qp);
	DL_APPEND2(active_conns, conn, active_prev, active_next);
	loop_kick(rpmad.loop);
}

static void
deactivate(struct conn *conn)
{
	if (!conn->active)
		return;
	conn->active = false;
	DL_DELETE2(active_conns, conn, active_prev, active_next);
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
		return false;	/* nothing more is taken before it completes */
	return conn->state == CONN_ESTABLISHED &&
		conn->sq_taken - conn->sq_done < conn->qp.layout.sq_entries;
}

/* Whether posted receives are work now (see conn_poll). */
static bool
rq_wanted(const struct conn *conn)
{
	return conn->rnr_waiting || (conn->tp->eager_recv && conn->tp_conn &&
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
	/* a shared RQ's doorbell wakes its connections (srq.c) */
	if (qp_prepare_sleep(&conn->qp, sq_wanted(conn),
			rq_wanted(conn) && conn->srq == NULL)) {
		qp_wake(&conn->qp);
		return false;
	}
	deactivate(conn);
	return true;
}

static int
poll_all(void *arg)
{
	int work = 0;
	uint64_t now = loop_now_ns();
	uint64_t spin = loop_spin_ns(rpmad.loop);
	struct conn *conn, *tmp;
	DL_FOREACH_SAFE2(active_conns, conn, tmp, active_next) {
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
	DL_FOREACH2(active_conns, conn, active_next)
		work += qp_prepare_sleep(&conn->qp, sq_wanted(conn),
				rq_wanted(conn));
	return work;
}

static void
wake_all(void *arg)
{
	struct conn *conn;
	DL_FOREACH2(active_conns, conn, active_next)
		qp_wake(&conn->qp);
}

static struct loop_poller conn_poller = {
	.poll = poll_all,
	.prepare_sleep = prepare_sleep_all,
	.wake = wake_all,
};

void
conn_init(void)
{
	next_qp_num = (random32() & 0xffff) << 8;
	/* the arbiter after the poller: work taken is served in that pass */
	fairq_init(rpmad.loop);
	loop_poller_add(rpmad.loop, &conn_poller);
}

struct fairq_tenant *
conn_fairq(const struct conn *conn)
{
	return conn->obj.owner ? tenant_fairq(owner_of(conn)) : NULL;
}

static void
doorbell_ready(struct loop_watch *w, uint32_t events)
{
	struct conn *conn = w->arg;
	qp_doorbell_drain(&conn->qp);
	conn_activate(conn);
	/* take the work now: it was posted before what this batch reports */
	(void) conn_poll(conn);
	loop_kick(rpmad.loop);
}

/* ------------------------------------------------------ create, destroy */

static void conn_destroy(struct conn *conn, enum obj_release how);
static void conn_release(struct obj *o, enum obj_release how);

/* what the registry does with a connection whose client goes */
static const struct obj_type conn_type = { OBJ_CONN, conn_release };

static void
name_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[64] = "?", serv[16] = "?";
	(void) getnameinfo((const struct sockaddr *)ss, sizeof(*ss), host,
			sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV);
	(void) snprintf(buf, len, ss->ss_family == AF_INET6 ? "[%s]:%s" :
			"%s:%s", host, serv);
}

void
conn_set_names(struct conn *conn, const struct sockaddr_storage *local,
		const struct sockaddr_storage *remote)
{
	if (local)
		name_addr(local, conn->local_name, sizeof(conn->local_name));
	if (remote)
		name_addr(remote, conn->remote_name, sizeof(conn->remote_name));
}

/* The staging granted for a wish: whole pages, at most QP_STAGING_MAX. */
static uint32_t
staging_granted(uint32_t wish)
{
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE);
	if (wish > QP_STAGING_MAX)
		wish = QP_STAGING_MAX;
	return (wish + page - 1) & ~(page - 1);
}

/* 0, or -EINVAL with the call failed */
static int
sizes_from_cfg(struct call *call, const struct conn_cfg *cfg,
		struct qp_sizes *sizes, struct qp_staging *staging,
		uint32_t *timeout_ms)
{
	if (cfg == NULL) {
		call_fail(call, RPMA_E_INVAL, 0, "no connection configuration");
		return -EINVAL;
	}
	sizes->sq = cfg->sq_size;
	sizes->rq = cfg->rq_size;
	sizes->cq = cfg->cq_size;
	sizes->rcq = cfg->rcq_size;
	staging->sq = staging_granted(cfg->sq_staging);
	staging->rq = staging_granted(cfg->rq_staging);
	*timeout_ms = cfg->timeout_ms;
	return 0;
}

static struct conn *
conn_new(struct call *call, struct peer *peer, const struct conn_cfg *cfg)
{
	if (tenant_admit_conn(call))
		return NULL;
	struct qp_sizes sizes;
	struct qp_staging staging;
	uint32_t timeout_ms;
	if (sizes_from_cfg(call, cfg, &sizes, &staging, &timeout_ms))
		return NULL;
	/*
	 * an RDMA device would have to pin all of it: the payloads of its
	 * connections stay in the application's registrations
	 */
	if (peer->dev->tp->mr_register)
		staging.sq = staging.rq = 0;
	struct srq *srq = NULL;
	if (cfg->srq_id) {
		if ((srq = srq_find(call, cfg->srq_id)) == NULL)
			return NULL;
		/* as a queue pair and a shared RQ of two protection domains */
		if (srq->peer != peer) {
			call_fail(call, RPMA_E_PROVIDER, EINVAL,
					"the shared "
					"receive queue is of another peer");
			return NULL;
		}
		/* receives come from the shared RQ: this RQ stages nothing */
		staging.rq = 0;
	}

	struct conn *conn = calloc(1, sizeof(*conn));
	if (conn == NULL) {
		call_fail(call, RPMA_E_NOMEM, ENOMEM, "connection");
		return NULL;
	}
	char err[256];
	conn->qp_num = ++next_qp_num & 0xffffff;
	if (conn->qp_num == 0)
		conn->qp_num = ++next_qp_num & 0xffffff;
	int ret = qp_create(&conn->qp, &sizes, &staging, conn->qp_num, err,
			sizeof(err));
	if (ret) {
		call_fail(call, ret == -ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER,
				0, "%s", err);
		free(conn);
		return NULL;
	}
	conn->works = calloc(conn->qp.layout.sq_entries, sizeof(*conn->works));
	conn->inflight.recvs = calloc(conn->qp.layout.rq_entries,
			sizeof(*conn->inflight.recvs));
	if (conn->works == NULL || conn->inflight.recvs == NULL) {
		call_fail(call, RPMA_E_NOMEM, ENOMEM, "connection");
		free(conn->works);
		free(conn->inflight.recvs);
		qp_destroy(&conn->qp);
		free(conn);
		return NULL;
	}
	if (conn->qp.staging) {
		conn->staging = mr_staging_new(peer, &call->client->owner,
				conn->qp.staging,
				(uint64_t) staging.sq + staging.rq);
		conn->qp.staging = NULL;	/* the registration's now */
		if (conn->staging == NULL) {
			call_fail(call, RPMA_E_NOMEM, ENOMEM, "staging");
			free(conn->works);
			free(conn->inflight.recvs);
			qp_destroy(&conn->qp);
			free(conn);
			return NULL;
		}
	}
	conn->qp.doorbell_watch.fd = conn->qp.doorbell_fd;
	conn->qp.doorbell_watch.fn = doorbell_ready;
	conn->qp.doorbell_watch.arg = conn;
	if (loop_add(rpmad.loop, &conn->qp.doorbell_watch, EPOLLIN)) {
		call_fail(call, RPMA_E_PROVIDER, 0, "cannot watch a doorbell");
		mr_staging_end(conn->staging);
		free(conn->works);
		free(conn->inflight.recvs);
		qp_destroy(&conn->qp);
		free(conn);
		return NULL;
	}

	if (srq && srq_attach(srq, conn)) {
		call_fail(call, RPMA_E_NOMEM, ENOMEM, "connection");
		loop_del(rpmad.loop, &conn->qp.doorbell_watch);
		free(conn->works);
		free(conn->inflight.recvs);
		qp_destroy(&conn->qp);
		free(conn);
		return NULL;
	}
	conn->srq = srq;
	conn->peer = peer;
	conn->tp = peer->dev->tp;
	conn->timeout_ms = timeout_ms;
	(void) snprintf(conn->local_name, sizeof(conn->local_name), "-");
	(void) snprintf(conn->remote_name, sizeof(conn->remote_name), "-");
	registry_add(&conn->obj, &conn_type, &call->client->owner);
	origin_of_user(call->client->uid, &conn->origin);
	client_add_reqs(call->client, 1); /* CONN_REQ_OUT, as calloc left it */
	DL_APPEND2(all_conns, conn, all_prev, all_next);
	conn_activate(conn);
	peer->users++;
	return conn;
}

void
conn_handover(struct conn *conn, struct conn_handover *h)
{
	memset(h, 0, sizeof(*h));
	h->id = conn->obj.id;
	h->qp_num = conn->qp_num;
	h->region_size = conn->qp.layout.size;
	h->pdata = conn->pdata_in;
	h->pdata_len = conn->pdata_in_len;
	if (conn->staging) {
		h->staging_lkey = conn->staging->lkey;
		h->sq_staging = conn->qp.staging_sizes.sq;
		h->rq_staging = conn->qp.staging_sizes.rq;
	}
	/* the client's ends are the answer's now */
	for (unsigned i = 0; i < conn->qp.n_client_fds; i++) {
		h->fds[i] = conn->qp.client_fds[i];
		conn->qp.client_fds[i] = -1;
	}
	h->nfds = conn->qp.n_client_fds;
	conn->qp.n_client_fds = 0;
}

struct conn *
conn_new_passive(struct call *call, struct peer *peer, struct incoming *inc,
		const struct conn_cfg *cfg)
{
	struct conn *conn = conn_new(call, peer, cfg);
	if (conn == NULL)
		return NULL;
	conn->passive = true;
	conn->origin = inc->origin;
	set_state(conn, CONN_REQ_IN);
	conn->remote = inc->remote;
	conn->remote_len = inc->remote_len;
	memcpy(conn->pdata_in, inc->pdata, inc->pdata_len);
	conn->pdata_in_len = inc->pdata_len;
	conn_set_names(conn, &inc->local, &inc->remote);

	char err[256];
	if (conn->tp->adopt(conn, inc, err, sizeof(err))) {
		call_fail(call, RPMA_E_PROVIDER, 0, "%s", err);
		conn_destroy(conn, OBJ_RELEASE_ABORT);
		return NULL;
	}
	return conn;
}

/* Releases everything the connection holds. */
static void
conn_destroy(struct conn *conn, enum obj_release how)
{
	if (conn->state == CONN_REQ_IN && conn->tp_conn &&
			how == OBJ_RELEASE_ORDERLY)
		conn->tp->reject(conn);
	if (conn->state == CONN_ESTABLISHED && how == OBJ_RELEASE_ORDERLY)
		(void) take_work(conn);
	release_transport(conn, how == OBJ_RELEASE_ABORT);

	loop_del(rpmad.loop, &conn->qp.doorbell_watch);
	mr_staging_end(conn->staging);
	qp_destroy(&conn->qp);
	if (conn->srq)
		srq_detach(conn->srq, conn);
	free(conn->works);
	free(conn->inflight.recvs);
	if (is_request(conn->state))
		client_add_reqs(owner_of(conn), -1);
	registry_remove(&conn->obj);
	DL_DELETE2(all_conns, conn, all_prev, all_next);
	deactivate(conn);
	conn->peer->users--;
	free(conn);
}

static void
conn_release(struct obj *o, enum obj_release how)
{
	conn_destroy((struct conn *)o, how);
}

/* ----------------------------------------------------- a client's calls */

/* A call on a connection may change what its poller must do. */
struct conn *
conn_find(struct call *call, uint64_t id)
{
	struct conn *conn = (struct conn *) call_find(call, id, OBJ_CONN);
	if (conn)
		conn_activate(conn);
	return conn;
}

struct conn *
conn_new_active(struct call *call, struct peer *peer, const char *addr,
		const char *port, const struct conn_cfg *cfg)
{
	if (addr == NULL || port == NULL) {
		call_fail(call, RPMA_E_INVAL, 0, "no address or port");
		return NULL;
	}

	struct sockaddr_storage ss;
	socklen_t len;
	if (resolve_addr(call, addr, port, &ss, &len))
		return NULL;
	if (tenant_check_connect(call, (struct sockaddr *) &ss))
		return NULL;

	/* as librpma resolves the route here: no route, no request */
	int ret = route_exists(call->client->netns, &ss, len);
	if (ret) {
		call_fail(call, RPMA_E_PROVIDER, -ret, "no route to %s", addr);
		return NULL;
	}

	struct conn *conn = conn_new(call, peer, cfg);
	if (conn == NULL)
		return NULL;
	set_state(conn, CONN_REQ_OUT);
	conn->remote = ss;
	conn->remote_len = len;
	conn_set_names(conn, NULL, &ss);
	return conn;
}

void
conn_delete(struct conn *conn)
{
	conn_destroy(conn, OBJ_RELEASE_ORDERLY);
}

int
conn_connect(struct call *call, struct conn *conn, const uint8_t *pdata,
		size_t pdata_len)
{
	if (conn->state != CONN_REQ_OUT && conn->state != CONN_REQ_IN) {
		/* an incoming request whose client gave up: nothing to accept */
		call_fail(call,
				conn->state == CONN_ENDED ? RPMA_E_PROVIDER :
							    RPMA_E_INVAL,
				0, "the request is %s already",
				state_name(conn->state));
		return -EINVAL;
	}
	if (pdata_len > CONN_PDATA_MAX) {
		call_fail(call, RPMA_E_INVAL, 0,
				"private data of %zu bytes (at "
				"most %d)",
				pdata_len, CONN_PDATA_MAX);
		return -EINVAL;
	}

	char err[256] = "";
	bool passive = conn->state == CONN_REQ_IN;
	set_state(conn, CONN_CONNECTING);
	int ret = passive ? conn->tp->accept(conn, pdata, (uint8_t) pdata_len,
					    err, sizeof(err)) :
			    conn->tp->connect(conn, pdata, (uint8_t) pdata_len,
					    err, sizeof(err));
	if (ret) {
		/* the library deletes the connection after this answer */
		set_state(conn, CONN_ENDED);
		set_qp_error(conn);
		call_fail(call, ret == -ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER,
				-ret, "%s", err);
		return ret;
	}
	return 0;
}

int
conn_next_event(struct call *call, struct conn *conn,
		struct conn_event_view *ev)
{
	if (conn->ev_count == 0) {
		call_fail(call, RPMA_E_NO_EVENT, 0, "no event pending");
		return -ENOENT;
	}
	struct conn_event_entry *e = &conn->events[conn->ev_head];
	conn->ev_head = (conn->ev_head + 1) % CONN_MAX_EVENTS;
	conn->ev_count--;

	ev->event = e->event;
	ev->has_pdata = e->has_pdata;
	ev->pdata = e->pdata;
	ev->pdata_len = e->pdata_len;
	return 0;
}

int
conn_disconnect(struct call *call, struct conn *conn)
{
	switch (conn->state) {
	case CONN_ESTABLISHED:
		/* what was posted before goes out before the goodbye */
		(void) take_work(conn);
		set_state(conn, CONN_DISCONNECTING);
		set_qp_error(conn);
		conn->tp->disconnect(conn);
		break;
	case CONN_CONNECTING:
		conn->tp->disconnect(conn);
		conn_ended(conn, RPMA_CONN_CLOSED);
		break;
	case CONN_REQ_OUT:
	case CONN_REQ_IN:
		call_fail(call, RPMA_E_INVAL, 0, "not connected");
		return -EINVAL;
	default:
		break;	/* disconnecting or over already: nothing to do */
	}
	return 0;
}
