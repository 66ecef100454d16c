// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_life.c -- a connection's life, the top of its files (conn.h):
 * made for a client's request or an incoming one, connected, ended by its
 * transport or its client, deleted; and the calls its client makes on it
 */

#include <errno.h>
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
#include "objects/conn_poll.h"
#include "objects/conn_work.h"
#include "objects/device.h"
#include "objects/mr.h"
#include "objects/peer.h"
#include "objects/qp.h"
#include "objects/srq.h"
#include "transport/transport.h"

static struct conn *all_conns;
static uint32_t next_qp_num;

/* ---------------------------------------------- its transport's outcomes */

/* The librpma 0.12 event an application sees for an outcome. */
static enum rpma_conn_event
app_event(enum rpma_conn_event event)
{
	if (event == CONN_END_REFUSED)
		return RPMA_CONN_REJECTED;
	if (event == CONN_END_UNREACHABLE)
		return RPMA_CONN_UNDEFINED; /* the library: RPMA_E_UNKNOWN */
	return event;
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
			conn_event_name(event));
	log_subject_pop();
	conn_set_state(conn, CONN_ENDED);
	conn->end_reason = conn_event_name(event);
	conn->release_pending = true;
	conn_set_qp_error(conn);
	conn_push_event(conn, app_event(event), NULL, 0, false);
	loop_kick(rpmad.loop);
}

/* ------------------------------------------------- rpmad's start and end */

void
conn_init(void)
{
	next_qp_num = (random32() & 0xffff) << 8;
	conn_poller_start();
}

unsigned
conn_shutdown_all(void)
{
	unsigned n = 0;
	struct conn *conn;
	DL_FOREACH2(all_conns, conn, all_next)
	{
		if (conn->state == CONN_ESTABLISHED) {
			conn->tp->disconnect(conn);
			n++;
		}
	}
	return n;
}

/* ------------------------------------------------------ create, destroy */

static void conn_destroy(struct conn *conn, enum obj_release how);
static void conn_release(struct obj *o, enum obj_release how);

/* what the registry does with a connection whose client goes */
static const struct obj_type conn_type = { OBJ_CONN, conn_release };

/* The staging granted for a wish: whole pages, at most QP_STAGING_MAX. */
static uint32_t
staging_granted(uint32_t wish)
{
	uint32_t page = (uint32_t) sysconf(_SC_PAGESIZE);
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
		goto fail_conn;
	}
	conn->works = calloc(conn->qp.layout.sq_entries, sizeof(*conn->works));
	conn->inflight.recvs = calloc(conn->qp.layout.rq_entries,
			sizeof(*conn->inflight.recvs));
	if (conn->works == NULL || conn->inflight.recvs == NULL) {
		call_fail(call, RPMA_E_NOMEM, ENOMEM, "connection");
		goto fail_qp;
	}
	if (conn->qp.staging) {
		conn->staging = mr_staging_new(peer, &call->client->owner,
				conn->qp.staging,
				(uint64_t) staging.sq + staging.rq);
		conn->qp.staging = NULL; /* the registration's now */
		if (conn->staging == NULL) {
			call_fail(call, RPMA_E_NOMEM, ENOMEM, "staging");
			goto fail_qp;
		}
	}
	conn->qp.doorbell_watch.fd = conn->qp.doorbell_fd;
	conn->qp.doorbell_watch.fn = conn_doorbell_ready;
	conn->qp.doorbell_watch.arg = conn;
	if (loop_add(rpmad.loop, &conn->qp.doorbell_watch, EPOLLIN)) {
		call_fail(call, RPMA_E_PROVIDER, 0, "cannot watch a doorbell");
		goto fail_staging;
	}
	if (srq && srq_attach(srq, conn)) {
		call_fail(call, RPMA_E_NOMEM, ENOMEM, "connection");
		goto fail_watch;
	}
	conn->srq = srq;
	if (srq) {
		/* what its work path needs of the queue: its rings, its CQ */
		conn->srq_qp = &srq->qp;
		conn->srq_rcq = srq->has_rcq;
	}
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

fail_watch:
	loop_del(rpmad.loop, &conn->qp.doorbell_watch);
fail_staging:
	mr_staging_end(conn->staging);
fail_qp:
	free(conn->works);
	free(conn->inflight.recvs);
	qp_destroy(&conn->qp);
fail_conn:
	free(conn);
	return NULL;
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
	if (conn_is_request(conn->state))
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
	conn_destroy((struct conn *) o, how);
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
		/*
		 * an incoming request whose client gave up: nothing to
		 * accept
		 */
		call_fail(call,
				conn->state == CONN_ENDED ? RPMA_E_PROVIDER :
							    RPMA_E_INVAL,
				0, "the request is %s already",
				conn_state_name(conn->state));
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
		break; /* disconnecting or over already: nothing to do */
	}
	return 0;
}
