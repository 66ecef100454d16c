// SPDX-License-Identifier: BSD-3-Clause
/*
 * admin.c -- answering rpmactl: the daemon's status, every client,
 * connection, registration and endpoint, the statistics; evicting a client
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <utlist.h>

#include "admin.h"
#include "config.h"
#include "conn.h"
#include "daemon.h"
#include "device.h"
#include "ep.h"
#include "librpma.h"
#include "log.h"
#include "mr.h"
#include "peer.h"
#include "session.h"
#include "transport.h"

/* Everything an answer points to, freed after it is sent. */
struct arena {
	void **blocks;
	size_t n, cap;
};

static void *
arena_alloc(struct arena *a, size_t size)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		void **b = realloc(a->blocks, cap * sizeof(*b));
		if (b == NULL)
			return NULL;
		a->blocks = b;
		a->cap = cap;
	}
	void *p = calloc(1, size ? size : 1);
	if (p)
		a->blocks[a->n++] = p;
	return p;
}

static void
arena_free(void *arg)
{
	struct arena *a = arg;
	for (size_t i = 0; i < a->n; i++)
		free(a->blocks[i]);
	free(a->blocks);
	free(a);
}

/* Pointers to n zeroed messages of `size` bytes, or NULL. */
static void **
arena_array(struct arena *a, size_t n, size_t size)
{
	void **arr = arena_alloc(a, n * sizeof(void *));
	for (size_t i = 0; arr && i < n; i++) {
		arr[i] = arena_alloc(a, size);
		if (arr[i] == NULL)
			return NULL;
	}
	return arr;
}

static Rpmad__ResourceCounts *
counts_msg(struct arena *a, const struct session_counts *c, uint32_t sessions)
{
	Rpmad__ResourceCounts *m = arena_alloc(a, sizeof(*m));
	if (m == NULL)
		return NULL;
	rpmad__resource_counts__init(m);
	m->sessions = sessions;
	m->peers = c->peers;
	m->mrs = c->mrs;
	m->endpoints = c->eps;
	m->conn_reqs = c->conn_reqs;
	m->connections = c->conns;
	m->pinned_bytes = c->pinned_bytes;
	return m;
}

/* Requests are connections that are not connecting or connected yet. */
static void
session_counts_now(struct session *s, struct session_counts *c)
{
	*c = s->counts;
	c->conn_reqs = 0;
	struct conn *conn;
	DL_FOREACH(s->conns, conn) {
		if (conn->state == CONN_REQ_OUT || conn->state == CONN_REQ_IN)
			c->conn_reqs++;
	}
	c->conns -= c->conn_reqs;
}

static Rpmad__OpCounters *
ops_msg(struct arena *a, const struct op_counters *o)
{
	Rpmad__OpCounters *m = arena_alloc(a, sizeof(*m));
	if (m == NULL)
		return NULL;
	rpmad__op_counters__init(m);
	m->reads = o->reads;
	m->writes = o->writes;
	m->atomic_writes = o->atomic_writes;
	m->flushes = o->flushes;
	m->sends = o->sends;
	m->recvs = o->recvs;
	m->bytes_read = o->bytes_read;
	m->bytes_written = o->bytes_written;
	m->bytes_sent = o->bytes_sent;
	m->bytes_received = o->bytes_received;
	m->errors = o->errors;
	return m;
}

static int
fill_status(struct arena *a, Rpmad__AdminReply *r)
{
	Rpmad__StatusReply *st = arena_alloc(a, sizeof(*st));
	if (st == NULL)
		return -1;
	rpmad__status_reply__init(st);
	st->version = PACKAGE_VERSION;
	st->uptime_ms = (loop_now_ns() - rpmad.start_ns) / 1000000;
	st->transport = (char *)config_transport_name(rpmad.cfg.transport);
	st->pid = (uint32_t)getpid();

	size_t ndev = 0;
	for (struct device *d = device_list(); d; d = d->next)
		ndev++;
	st->devices = (Rpmad__DeviceStatus **)arena_array(a, ndev,
			sizeof(Rpmad__DeviceStatus));
	if (st->devices == NULL)
		return -1;
	size_t i = 0;
	for (struct device *d = device_list(); d; d = d->next, i++) {
		rpmad__device_status__init(st->devices[i]);
		st->devices[i]->name = (char *)d->name;
		st->devices[i]->transport = (char *)d->tp->name;
		st->devices[i]->odp_capable = d->odp_capable;
	}
	st->n_devices = ndev;

	struct session_counts total = { 0 };
	uint32_t sessions = 0;
	struct session *s;
	DL_FOREACH(rpmad.sessions, s) {
		struct session_counts c;
		session_counts_now(s, &c);
		total.peers += c.peers;
		total.mrs += c.mrs;
		total.eps += c.eps;
		total.conn_reqs += c.conn_reqs;
		total.conns += c.conns;
		total.pinned_bytes += c.pinned_bytes;
		sessions++;
	}
	st->counts = counts_msg(a, &total, sessions);
	r->status = st;
	return st->counts ? 0 : -1;
}

static int
fill_clients(struct arena *a, Rpmad__AdminReply *r)
{
	size_t n = 0;
	struct session *s;
	DL_COUNT(rpmad.sessions, s, n);
	r->clients = (Rpmad__ClientInfo **)arena_array(a, n,
			sizeof(Rpmad__ClientInfo));
	if (r->clients == NULL)
		return -1;
	size_t i = 0;
	DL_FOREACH(rpmad.sessions, s) {
		Rpmad__ClientInfo *c = r->clients[i++];
		rpmad__client_info__init(c);
		c->session_id = s->id;
		c->pid = (uint32_t)s->pid;
		c->uid = s->uid;
		c->gid = s->gid;
		c->comm = s->comm;
		c->admin = s->admin;
		struct session_counts counts;
		session_counts_now(s, &counts);
		if ((c->counts = counts_msg(a, &counts, 1)) == NULL)
			return -1;
	}
	r->n_clients = n;
	return 0;
}

static int
fill_connections(struct arena *a, Rpmad__AdminReply *r)
{
	size_t n = 0;
	struct conn *conn;
	DL_FOREACH2(conn_all(), conn, all_next)
		n++;
	r->connections = (Rpmad__ConnectionInfo **)arena_array(a, n,
			sizeof(Rpmad__ConnectionInfo));
	if (r->connections == NULL)
		return -1;
	size_t i = 0;
	DL_FOREACH2(conn_all(), conn, all_next) {
		Rpmad__ConnectionInfo *c = r->connections[i++];
		rpmad__connection_info__init(c);
		c->conn_id = conn->obj.id;
		c->pid = (uint32_t)conn->obj.owner->pid;
		c->local_addr = conn->local_name;
		c->remote_addr = conn->remote_name;
		c->state = (char *)conn_state_name(conn->state);
		c->qp_num = conn->qp_num;
		c->role = conn->passive ? "passive" : "active";
		if ((c->ops = ops_msg(a, &conn->ops)) == NULL)
			return -1;
	}
	r->n_connections = n;
	return 0;
}

static int
fill_mrs(struct arena *a, Rpmad__AdminReply *r)
{
	size_t n = 0;
	struct session *s;
	struct mr *mr;
	DL_FOREACH(rpmad.sessions, s) {
		DL_FOREACH(s->mrs, mr)
			n++;
	}
	r->mrs = (Rpmad__MrInfo **)arena_array(a, n, sizeof(Rpmad__MrInfo));
	if (r->mrs == NULL)
		return -1;
	size_t i = 0;
	DL_FOREACH(rpmad.sessions, s) {
		DL_FOREACH(s->mrs, mr) {
			Rpmad__MrInfo *m = r->mrs[i++];
			rpmad__mr_info__init(m);
			m->mr_id = mr->obj.id;
			m->pid = (uint32_t)s->pid;
			m->addr = mr->addr;
			m->length = mr->length;
			m->usage = mr->usage;
			m->backing = mr->backing;
			m->pinned_bytes = mr->span_len;
			m->key = mr->key;
		}
	}
	r->n_mrs = n;
	return 0;
}

static int
fill_endpoints(struct arena *a, Rpmad__AdminReply *r)
{
	size_t n = 0;
	struct session *s;
	struct ep *ep;
	DL_FOREACH(rpmad.sessions, s) {
		DL_FOREACH(s->eps, ep)
			n++;
	}
	r->endpoints = (Rpmad__EndpointInfo **)arena_array(a, n,
			sizeof(Rpmad__EndpointInfo));
	if (r->endpoints == NULL)
		return -1;
	size_t i = 0;
	DL_FOREACH(rpmad.sessions, s) {
		DL_FOREACH(s->eps, ep) {
			Rpmad__EndpointInfo *e = r->endpoints[i++];
			rpmad__endpoint_info__init(e);
			e->ep_id = ep->obj.id;
			e->pid = (uint32_t)s->pid;
			e->addr = ep->addr;
			e->port = ep->port;
			e->pending_requests = ep->pending;
		}
	}
	r->n_endpoints = n;
	return 0;
}

static int
fill_stats(struct arena *a, Rpmad__AdminReply *r)
{
	Rpmad__StatsReply *st = arena_alloc(a, sizeof(*st));
	if (st == NULL)
		return -1;
	rpmad__stats_reply__init(st);
	st->totals = ops_msg(a, &rpmad.stats.ops);
	st->flush_latency_buckets = rpmad.stats.flush_latency;
	st->n_flush_latency_buckets = STATS_LATENCY_BUCKETS;
	st->requests = rpmad.stats.requests;
	st->request_errors = rpmad.stats.request_errors;
	st->sessions_total = rpmad.stats.sessions_total;
	r->stats = st;
	return st->totals ? 0 : -1;
}

void
admin_handle_query(struct req_ctx *rc)
{
	struct arena *a = calloc(1, sizeof(*a));
	Rpmad__AdminReply *r = a ? arena_alloc(a, sizeof(*r)) : NULL;
	if (r == NULL) {
		free(a);
		req_fail(rc, RPMA_E_NOMEM, ENOMEM, "answer");
		return;
	}
	rpmad__admin_reply__init(r);

	int ret;
	switch (rc->req->admin_query->kind) {
	case RPMAD__ADMIN_QUERY__KIND__STATUS:
		ret = fill_status(a, r);
		break;
	case RPMAD__ADMIN_QUERY__KIND__CLIENTS:
		ret = fill_clients(a, r);
		break;
	case RPMAD__ADMIN_QUERY__KIND__CONNECTIONS:
		ret = fill_connections(a, r);
		break;
	case RPMAD__ADMIN_QUERY__KIND__MRS:
		ret = fill_mrs(a, r);
		break;
	case RPMAD__ADMIN_QUERY__KIND__ENDPOINTS:
		ret = fill_endpoints(a, r);
		break;
	case RPMAD__ADMIN_QUERY__KIND__STATS:
		ret = fill_stats(a, r);
		break;
	default:
		arena_free(a);
		req_fail(rc, RPMA_E_NOSUPP, 0, "unknown query %d",
				(int)rc->req->admin_query->kind);
		return;
	}
	if (ret) {
		arena_free(a);
		req_fail(rc, RPMA_E_NOMEM, ENOMEM, "answer");
		return;
	}
	rc->resp.body_case = RPMAD__RESPONSE__BODY_ADMIN;
	rc->resp.admin = r;
	rc->after = arena_free;
	rc->after_arg = a;
}

void
admin_handle_evict(struct req_ctx *rc)
{
	pid_t pid = (pid_t)rc->req->admin_evict->pid;
	if (rc->s->pid == pid) {
		req_fail(rc, RPMA_E_INVAL, 0, "a session cannot evict itself");
		return;
	}
	struct session *s = session_find_pid(pid);
	if (s == NULL) {
		req_fail(rc, RPMA_E_INVAL, ESRCH, "no client with pid %d",
				(int)pid);
		return;
	}
	/* a process normally has one session; evict every one it has */
	do {
		log_notice("session %s: evicted by %s", session_name(s),
				session_name(rc->s));
		session_destroy(s);
	} while ((s = session_find_pid(pid)) != NULL);
	req_ok(rc);
}
