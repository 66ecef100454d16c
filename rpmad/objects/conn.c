// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn.c -- the bottom of a connection's files (conn.h): its facts, its
 * owner and log lines, its states and the events its client reads, and
 * whether the poller visits it
 */

#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <utlist.h>

#include "clients/client.h"
#include "clients/tenant.h"
#include "core/daemon.h"
#include "log/log.h"
#include "objects/conn.h"
#include "objects/conn_impl.h"
#include "objects/qp.h"
#include "transport/transport.h"

static struct conn *active_conns; /* the poller's list */

const char *
conn_state_name(enum conn_state state)
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
struct client *
conn_owner(const struct conn *conn)
{
	return obj_client(&conn->obj);
}

void
conn_log(const struct conn *conn, int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/*
	 * an active one's lines are its own client's doing, as many as its
	 * connections: not limited, so that its user's share stays for its
	 * refusals
	 */
	if (conn->passive)
		tenant_vlog_from(&conn->origin, level, fmt, ap);
	else
		log_vmsg(level, fmt, ap);
	va_end(ap);
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
	return conn_owner(conn)->uid;
}

int
conn_netns(const struct conn *conn)
{
	return conn_owner(conn)->netns;
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

struct srq *
conn_srq(const struct conn *conn)
{
	return conn->srq;
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
				"%s", conn_state_name(conn->state));
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

/* ---------------------------------------------------------------- events */

/* Also names rpmad's own outcomes (CONN_END_*): compared as ints. */
const char *
conn_event_name(enum rpma_conn_event event)
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

void
conn_push_event(struct conn *conn, enum rpma_conn_event event,
		const void *pdata, uint8_t len, bool has_pdata)
{
	if (conn->ev_count == CONN_MAX_EVENTS) {
		tenant_log(conn_owner(conn), LOG_WARNING,
				"connection qp %u: "
				"event queue full, dropping %s",
				conn->qp_num, conn_event_name(event));
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

/* -------------------------------------------------------- state changes */

bool
conn_is_request(enum conn_state state)
{
	return state == CONN_REQ_OUT || state == CONN_REQ_IN;
}

/*
 * Every change of state comes here: the client counts its requests (not
 * connecting yet) for max_pending_requests and rpmactl.
 */
void
conn_set_state(struct conn *conn, enum conn_state state)
{
	struct client *owner = conn_owner(conn);
	if (conn_is_request(conn->state) && !conn_is_request(state))
		client_add_reqs(owner, -1);
	else if (!conn_is_request(conn->state) && conn_is_request(state))
		client_add_reqs(owner, 1);
	conn->state = state;
}

/* Lines about conn and its owner until log_subject_pop() (the journal's
 * fields). */
void
conn_log_subject(const struct conn *conn)
{
	log_subject_push();
	if (conn->obj.owner) {
		const struct client *owner = conn_owner(conn);
		log_subject_client(owner->pid, owner->uid, owner->comm);
	}
	log_subject_conn(conn->qp_num, conn->local_name, conn->remote_name);
}

/* --------------------------------------------------------- its addresses */

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

/* ----------------------------------------------------- the poller's list */

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

void
conn_deactivate(struct conn *conn)
{
	if (!conn->active)
		return;
	conn->active = false;
	DL_DELETE2(active_conns, conn, active_prev, active_next);
}

struct conn *
conn_active_first(void)
{
	return active_conns;
}
