// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn.c -- connections: creating and deleting them, their facts, their
 * events and states, and the calls of their clients (the work path is
 * conn_work.c's, the poller conn_poll.c's)
 */

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
#include "objects/conn.h"
#include "objects/conn_impl.h"
#include "objects/device.h"
#include "objects/mr.h"
#include "objects/peer.h"
#include "objects/qp.h"
#include "objects/srq.h"
#include "transport/transport.h"

static struct conn *all_conns;
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
struct client *
conn_owner(const struct conn *conn)
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

void
conn_push_event(struct conn *conn, enum rpma_conn_event event,
		const void *pdata, uint8_t len, bool has_pdata)
{
	if (conn->ev_count == CONN_MAX_EVENTS) {
		tenant_log(conn_owner(conn), LOG_WARNING,
				"connection qp %u: "
				"event queue full, dropping %s",
				conn->qp_num, event_name(event));
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

static bool
is_request(enum conn_state state)
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
	if (is_request(conn->state) && !is_request(state))
		client_add_reqs(owner, -1);
	else if (!is_request(conn->state) && is_request(state))
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

void
conn_established(struct conn *conn, const void *pdata, uint8_t len,
		bool has_pdata)
{
	if (conn->state != CONN_CONNECTING)
		return;
	conn_activate(conn);
	conn_set_state(conn, CONN_ESTABLISHED);
	qp_set_state(&conn->qp, QP_STATE_READY);
	conn_push_event(conn, RPMA_CONN_ESTABLISHED, pdata, len, has_pdata);
	conn_log_subject(conn);
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
	conn_log_subject(conn);
	conn_log(conn, LOG_INFO, "connection qp %u: %s", conn->qp_num,
			event_name(event));
	log_subject_pop();
	conn_set_state(conn, CONN_ENDED);
	conn->end_reason = event_name(event);
	conn->release_pending = true;
	conn_set_qp_error(conn);
	conn_push_event(conn, app_event(event), NULL, 0, false);
	loop_kick(rpmad.loop);
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
conn_init(void)
{
	next_qp_num = (random32() & 0xffff) << 8;
	conn_poller_start();
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
	conn->qp.doorbell_watch.fn = conn_doorbell_ready;
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
	conn_set_state(conn, CONN_REQ_IN);
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
		(void) conn_take_work(conn);
	conn_release_transport(conn, how == OBJ_RELEASE_ABORT);

	loop_del(rpmad.loop, &conn->qp.doorbell_watch);
	mr_staging_end(conn->staging);
	qp_destroy(&conn->qp);
	if (conn->srq)
		srq_detach(conn->srq, conn);
	free(conn->works);
	free(conn->inflight.recvs);
	if (is_request(conn->state))
		client_add_reqs(conn_owner(conn), -1);
	registry_remove(&conn->obj);
	DL_DELETE2(all_conns, conn, all_prev, all_next);
	conn_deactivate(conn);
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
	conn_set_state(conn, CONN_REQ_OUT);
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
	conn_set_state(conn, CONN_CONNECTING);
	int ret = passive ? conn->tp->accept(conn, pdata, (uint8_t) pdata_len,
					    err, sizeof(err)) :
			    conn->tp->connect(conn, pdata, (uint8_t) pdata_len,
					    err, sizeof(err));
	if (ret) {
		/* the library deletes the connection after this answer */
		conn_set_state(conn, CONN_ENDED);
		conn_set_qp_error(conn);
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
		(void) conn_take_work(conn);
		conn_set_state(conn, CONN_DISCONNECTING);
		conn_set_qp_error(conn);
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
