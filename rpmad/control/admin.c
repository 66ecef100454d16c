// SPDX-License-Identifier: BSD-3-Clause
/*
 * admin.c -- answering rpmactl: the daemon's status, every client,
 * connection, registration and endpoint (page by page), the statistics;
 * evicting a client
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clients/client.h"
#include "clients/tenant.h"
#include "control/admin.h"
#include "control/session.h"
#include "control/upgrade.h"
#include "core/config.h"
#include "core/daemon.h"
#include "core/netns.h"
#include "core/registry.h"
#include "librpma.h"
#include "log/log.h"
#include "log/remote_log.h"
#include "objects/conn.h"
#include "objects/device.h"
#include "objects/ep.h"
#include "objects/mr.h"
#include "objects/peer.h"
#include "transport/transport.h"

/*
 * Room a page leaves for the envelope around its items (response id, the
 * body's tag and length, cursor, total): far more than they take.
 */
#define PAGE_HEADROOM 1024
/* An item's tag and length prefix inside the page, at most. */
#define ITEM_OVERHEAD 6

static struct {
	bool socket_activated;
	uint64_t reloads;
	bool last_reload_failed;
	uint64_t evictions;
} history;

void
admin_note_socket(bool activated)
{
	history.socket_activated = activated;
}

void
admin_note_reload(bool ok)
{
	if (ok)
		history.reloads++;
	history.last_reload_failed = !ok;
}

/* Everything an answer points to, freed after it is sent. */
struct arena {
	void **blocks;
	size_t n, cap;
};

/* 0, or -ENOMEM (p is not the arena's then) */
static int
arena_adopt(struct arena *a, void *p)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		void **b = realloc(a->blocks, cap * sizeof(*b));
		if (b == NULL)
			return -ENOMEM;
		a->blocks = b;
		a->cap = cap;
	}
	a->blocks[a->n++] = p;
	return 0;
}

static void *
arena_alloc(struct arena *a, size_t size)
{
	void *p = calloc(1, size ? size : 1);
	if (p && arena_adopt(a, p)) {
		free(p);
		return NULL;
	}
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

static Rpmad__ResourceCounts *
counts_msg(struct arena *a, const struct client_counts *c, uint32_t sessions)
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

/* Requests (not connecting or connected yet) are no connections here. */
static void
client_counts_now(const struct client *who, struct client_counts *c)
{
	client_counts(who, c);
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
	m->served_reads = o->served_reads;
	m->served_bytes_read = o->served_bytes_read;
	m->served_writes = o->served_writes;
	m->served_bytes_written = o->served_bytes_written;
	m->served_atomic_writes = o->served_atomic_writes;
	m->served_flushes = o->served_flushes;
	return m;
}

/* ------------------------------------------------------------ status */

/* fill_status, fill_stats: 0, or -ENOMEM */
static int
fill_status(struct arena *a, Rpmad__AdminReply *r)
{
	const struct config *cfg = &rpmad.cfg;
	Rpmad__StatusReply *st = arena_alloc(a, sizeof(*st));
	if (st == NULL)
		return -ENOMEM;
	rpmad__status_reply__init(st);
	st->version = PACKAGE_VERSION;
	st->uptime_ms = (loop_now_ns() - rpmad.start_ns) / 1000000;
	st->transport = (char *)cfg->transport;
	st->pid = (uint32_t)getpid();
	st->socket = (char *)cfg->socket_path;
	st->socket_activated = history.socket_activated;
	st->config_path = (char *)(rpmad.config_path ? rpmad.config_path : "");
	st->reloads = history.reloads;
	st->config_absent = rpmad.config_absent;
	st->last_reload_failed = history.last_reload_failed;
	st->log_level = (char *)log_level_name(cfg->log_level);
	st->max_connections = cfg->limits.max_connections;
	st->max_endpoints = cfg->limits.max_endpoints;
	/* memlock: each client's own RLIMIT_MEMLOCK (UINT64_MAX says so) */
	st->max_registered_bytes = cfg->limits.max_registered_bytes;
	st->max_pending_requests = cfg->limits.max_pending_requests;
	st->max_descriptors = cfg->limits.max_descriptors;
	struct tenant_totals tt;
	tenant_totals(&tt);
	st->refused_limits = tt.refused_limits;
	st->refused_connect = tt.refused_connect;
	st->refused_listen = tt.refused_listen;
	st->log_suppressed = tt.log_suppressed;
	st->log_suppressed_remote = remote_log_suppressed();
	st->evictions = history.evictions;
	st->draining = upgrade_draining();
	st->drain_timeout_s = cfg->drain_timeout_s;
	st->upgrade_pending_pid = (uint32_t)upgrade_pending();
	pid_t pids[UPGRADE_MAX_PREDECESSORS];
	size_t npids = upgrade_predecessors(pids, UPGRADE_MAX_PREDECESSORS);
	st->draining_pids = arena_alloc(a, npids * sizeof(*st->draining_pids));
	if (st->draining_pids == NULL)
		return -ENOMEM;
	for (size_t k = 0; k < npids; k++)
		st->draining_pids[k] = (uint32_t)pids[k];
	st->n_draining_pids = npids;

	size_t ndev = 0;
	for (struct device *d = device_list(); d; d = d->next)
		ndev++;
	st->devices = arena_alloc(a, ndev * sizeof(*st->devices));
	if (st->devices == NULL)
		return -ENOMEM;
	size_t i = 0;
	for (struct device *d = device_list(); d; d = d->next, i++) {
		Rpmad__DeviceStatus *ds = arena_alloc(a, sizeof(*ds));
		if (ds == NULL)
			return -ENOMEM;
		rpmad__device_status__init(ds);
		ds->name = d->name;
		ds->transport = (char *)d->tp->name;
		ds->odp_capable = d->odp_capable;
		ds->registrations = d->mrs;
		ds->pinned_bytes = d->pinned_bytes;
		st->devices[i] = ds;
	}
	st->n_devices = ndev;

	struct client_counts total = { 0 };
	uint32_t sessions = 0;
	for (struct session *s = session_first(); s; s = session_next(s)) {
		struct client_counts c;
		client_counts_now(session_client(s), &c);
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
	return st->counts ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------ stats */

static int
fill_stats(struct arena *a, Rpmad__AdminReply *r)
{
	Rpmad__StatsReply *st = arena_alloc(a, sizeof(*st));
	if (st == NULL)
		return -ENOMEM;
	rpmad__stats_reply__init(st);
	st->totals = ops_msg(a, &rpmad.stats.ops);
	st->flush_latency_buckets = rpmad.stats.flush_latency;
	st->n_flush_latency_buckets = STATS_LATENCY_BUCKETS;
	st->requests = rpmad.stats.requests;
	st->request_errors = rpmad.stats.request_errors;
	st->sessions_total = rpmad.stats.sessions_total;
	st->flush_latency_sum_ns = rpmad.stats.flush_latency_sum_ns;
	st->refused_max_connections = rpmad.stats.refused.max_connections;
	st->refused_max_endpoints = rpmad.stats.refused.max_endpoints;
	st->refused_max_registered_bytes =
		rpmad.stats.refused.max_registered_bytes;
	st->refused_allow_lists = rpmad.stats.refused.allow_lists;
	st->refused_admin_groups = rpmad.stats.refused.admin_groups;
	st->refused_max_descriptors = rpmad.stats.refused.max_descriptors;
	st->refused_no_descriptors = rpmad.stats.refused.no_descriptors;
	st->sessions_silent = rpmad.stats.sessions_silent;
	r->stats = st;
	return st->totals ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------ listings */

/*
 * One page of a listing. Every item of the kind passes through
 * page_offer() in (session, object) order; those after the cursor are
 * taken while they fit, and the first that does not fit ends the page.
 */
struct page {
	struct arena *a;
	uint64_t after_session, after_object;
	uint32_t limit;
	size_t room;		/* bytes left for items */
	ProtobufCMessage **items;
	size_t n, cap;
	bool more;
	uint64_t last_session, last_object;
	uint32_t total;
	bool failed;		/* out of memory */
};

typedef ProtobufCMessage *item_fn(struct arena *a, void *obj);

static void
page_offer(struct page *p, uint64_t session_id, uint64_t object_id,
		item_fn *make, void *obj)
{
	p->total++;
	if (p->failed || p->more)
		return;
	if (session_id < p->after_session || (session_id == p->after_session &&
			object_id <= p->after_object))
		return;
	if (p->limit && p->n == p->limit) {
		p->more = true;
		return;
	}
	ProtobufCMessage *m = make(p->a, obj);
	if (m == NULL) {
		p->failed = true;
		return;
	}
	size_t size = protobuf_c_message_get_packed_size(m) + ITEM_OVERHEAD;
	if (size > p->room) {
		/* never an empty page: one item always fits in a packet */
		p->more = p->n > 0;
		p->failed = p->n == 0;
		return;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		ProtobufCMessage **items = realloc(p->items,
				cap * sizeof(*items));
		if (items == NULL) {
			p->failed = true;
			return;
		}
		p->items = items;
		p->cap = cap;
	}
	p->items[p->n++] = m;
	p->room -= size;
	p->last_session = session_id;
	p->last_object = object_id;
}

/*
 * The page's cursor and total into the reply; its items stay in p->items
 * (owned by the arena now) for the caller to hang on the right field.
 * 0, or -ENOMEM.
 */
static int
page_finish(struct page *p, Rpmad__AdminReply *r)
{
	if (p->failed || arena_adopt(p->a, p->items)) {
		free(p->items);
		p->items = NULL;
		return -ENOMEM;
	}
	r->total = p->total;
	if (p->more) {
		Rpmad__AdminCursor *c = arena_alloc(p->a, sizeof(*c));
		if (c == NULL)
			return -ENOMEM;
		rpmad__admin_cursor__init(c);
		c->session_id = p->last_session;
		c->object_id = p->last_object;
		r->next = c;
	}
	return 0;
}

static Rpmad__UserLimits *
user_limits_msg(struct arena *a, const struct client *who)
{
	Rpmad__UserLimits *m = arena_alloc(a, sizeof(*m));
	if (m == NULL)
		return NULL;
	rpmad__user_limits__init(m);
	struct limits l;
	tenant_limits(who, &l);
	m->max_connections = l.max_connections;
	m->max_endpoints = l.max_endpoints;
	m->max_pending_requests = l.max_pending_requests;
	m->max_descriptors = l.max_descriptors;
	m->max_registered_bytes = l.max_registered_bytes == LIMIT_MEMLOCK ?
		who->memlock : l.max_registered_bytes;
	m->weight = l.weight;
	m->max_bandwidth = l.max_bandwidth;
	return m;
}

static Rpmad__UserUse *
user_use_msg(struct arena *a, const struct client *who)
{
	Rpmad__UserUse *m = arena_alloc(a, sizeof(*m));
	if (m == NULL)
		return NULL;
	rpmad__user_use__init(m);
	struct tenant_usage u;
	tenant_usage(who, &u);
	m->sessions = u.sessions;
	m->connections = u.conns;
	m->endpoints = u.eps;
	m->pending_requests = u.pending;
	m->descriptors = u.descriptors;
	m->registered_bytes = u.registered_bytes;
	struct tenant_totals tt;
	tenant_totals_of(who, &tt);
	m->refused_limits = tt.refused_limits;
	m->refused_connect = tt.refused_connect;
	m->refused_listen = tt.refused_listen;
	m->log_suppressed = tt.log_suppressed;
	struct tenant_data d;
	tenant_data_use(who, &d);
	m->data_bytes = d.use.bytes;
	m->data_ops = d.use.ops;
	m->data_throttled = d.use.throttled;
	m->data_all_bytes = d.all_bytes;
	return m;
}

static ProtobufCMessage *
client_item(struct arena *a, void *obj)
{
	struct session *s = obj;
	struct client *who = session_client(s);
	Rpmad__ClientInfo *c = arena_alloc(a, sizeof(*c));
	if (c == NULL)
		return NULL;
	rpmad__client_info__init(c);
	c->session_id = who->id;
	c->pid = (uint32_t)who->pid;
	c->uid = who->uid;
	c->gid = who->gid;
	c->comm = who->comm;
	c->library = who->library;
	c->api = who->api;
	c->admin = session_is_admin(s);
	c->netns = netns_inode(who->netns, who->netns_ino);
	struct client_counts counts;
	client_counts_now(who, &counts);
	if ((c->counts = counts_msg(a, &counts, 1)) == NULL)
		return NULL;
	if ((c->user_limits = user_limits_msg(a, who)) == NULL ||
			(c->user_use = user_use_msg(a, who)) == NULL)
		return NULL;
	return &c->base;
}

static ProtobufCMessage *
connection_item(struct arena *a, void *obj)
{
	const struct obj *o = obj;
	Rpmad__ConnectionInfo *c = arena_alloc(a, sizeof(*c));
	/* the strings the answer points to live in the arena */
	struct conn_info *info = arena_alloc(a, sizeof(*info));
	if (c == NULL || info == NULL)
		return NULL;
	conn_describe(obj, info);
	rpmad__connection_info__init(c);
	c->conn_id = o->id;
	c->session_id = obj_client(o)->id;
	c->pid = (uint32_t)obj_client(o)->pid;
	c->local_addr = info->local_name;
	c->remote_addr = info->remote_name;
	c->state = info->state_text;
	c->qp_num = info->qp_num;
	c->role = (char *)info->role;
	c->transport = (char *)info->transport;
	c->netns = netns_inode(obj_client(o)->netns, obj_client(o)->netns_ino);
	if ((c->ops = ops_msg(a, &info->ops)) == NULL)
		return NULL;
	return &c->base;
}

static ProtobufCMessage *
mr_item(struct arena *a, void *obj)
{
	struct mr *mr = obj;
	Rpmad__MrInfo *m = arena_alloc(a, sizeof(*m));
	if (m == NULL)
		return NULL;
	rpmad__mr_info__init(m);
	m->mr_id = mr->obj.id;
	m->session_id = obj_client(&mr->obj)->id;
	m->pid = (uint32_t)obj_client(&mr->obj)->pid;
	m->addr = mr->addr;
	m->length = mr->length;
	m->usage = mr->usage;
	m->backing = mr->backing;
	m->pinned_bytes = mr->span_len;
	m->key = mr_rkey(mr);
	m->lkey = mr->lkey;
	m->device = mr->peer->dev->name;
	m->persistence = (char *)mr_persistence_name(mr->persistence);
	return &m->base;
}

static ProtobufCMessage *
endpoint_item(struct arena *a, void *obj)
{
	const struct obj *o = obj;
	Rpmad__EndpointInfo *e = arena_alloc(a, sizeof(*e));
	/* the strings the answer points to live in the arena */
	struct ep_info *info = arena_alloc(a, sizeof(*info));
	if (e == NULL || info == NULL)
		return NULL;
	ep_describe(obj, info);
	rpmad__endpoint_info__init(e);
	e->ep_id = o->id;
	e->session_id = obj_client(o)->id;
	e->pid = (uint32_t)obj_client(o)->pid;
	e->addr = info->addr;
	e->port = info->port;
	e->pending_requests = info->pending;
	e->transport = (char *)info->transport;
	e->pending_origins = info->origins;
	e->netns = netns_inode(obj_client(o)->netns, obj_client(o)->netns_ino);
	e->n_largest_shares = info->n_shares;
	e->largest_shares = arena_alloc(a, info->n_shares *
			sizeof(*e->largest_shares));
	Rpmad__OriginShare *shares = arena_alloc(a, info->n_shares *
			sizeof(*shares));
	if (info->n_shares && (e->largest_shares == NULL || shares == NULL))
		return NULL;
	for (unsigned i = 0; i < info->n_shares; i++) {
		rpmad__origin_share__init(&shares[i]);
		shares[i].origin = info->share[i].origin;
		shares[i].pending = info->share[i].pending;
		e->largest_shares[i] = &shares[i];
	}
	return &e->base;
}

/* The client's objects of a kind (each one's struct obj comes first). */
static void
offer_objects(struct page *p, const struct client *who, enum obj_kind kind,
		item_fn *make)
{
	for (struct obj *o = registry_first(&who->owner, kind); o;
			o = o->next)
		page_offer(p, who->id, o->id, make, o);
}

/*
 * Sessions are kept in the order they came, with ascending ids, and every
 * client's objects in the order they were made, with ascending ids (ids
 * only grow): walking them gives the (session, object) order pages need.
 * 0, or -ENOMEM (-EINVAL for a kind that is no listing).
 */
static int
fill_listing(struct page *p, Rpmad__AdminQuery__Kind kind,
		Rpmad__AdminReply *r)
{
	for (struct session *s = session_first(); s; s = session_next(s)) {
		const struct client *who = session_client(s);
		switch (kind) {
		case RPMAD__ADMIN_QUERY__KIND__CLIENTS:
			page_offer(p, who->id, 0, client_item, s);
			break;
		case RPMAD__ADMIN_QUERY__KIND__CONNECTIONS:
			offer_objects(p, who, OBJ_CONN, connection_item);
			break;
		case RPMAD__ADMIN_QUERY__KIND__MRS:
			offer_objects(p, who, OBJ_MR, mr_item);
			break;
		case RPMAD__ADMIN_QUERY__KIND__ENDPOINTS:
			offer_objects(p, who, OBJ_EP, endpoint_item);
			break;
		default:
			return -EINVAL;
		}
	}
	int ret = page_finish(p, r);
	if (ret)
		return ret;
	/* repeated message fields are arrays of message pointers */
	switch (kind) {
	case RPMAD__ADMIN_QUERY__KIND__CLIENTS:
		r->clients = (Rpmad__ClientInfo **)p->items;
		r->n_clients = p->n;
		break;
	case RPMAD__ADMIN_QUERY__KIND__CONNECTIONS:
		r->connections = (Rpmad__ConnectionInfo **)p->items;
		r->n_connections = p->n;
		break;
	case RPMAD__ADMIN_QUERY__KIND__MRS:
		r->mrs = (Rpmad__MrInfo **)p->items;
		r->n_mrs = p->n;
		break;
	default:
		r->endpoints = (Rpmad__EndpointInfo **)p->items;
		r->n_endpoints = p->n;
		break;
	}
	return 0;
}

/* ------------------------------------------------------------ requests */

void
admin_handle_query(struct req_ctx *rc)
{
	const Rpmad__AdminQuery *q = rc->req->admin_query;
	struct arena *a = calloc(1, sizeof(*a));
	Rpmad__AdminReply *r = a ? arena_alloc(a, sizeof(*r)) : NULL;
	if (r == NULL) {
		free(a);
		req_fail(rc, RPMA_E_NOMEM, ENOMEM, "answer");
		return;
	}
	rpmad__admin_reply__init(r);

	int ret;
	switch (q->kind) {
	case RPMAD__ADMIN_QUERY__KIND__STATUS:
		ret = fill_status(a, r);
		break;
	case RPMAD__ADMIN_QUERY__KIND__STATS:
		ret = fill_stats(a, r);
		break;
	case RPMAD__ADMIN_QUERY__KIND__CLIENTS:
	case RPMAD__ADMIN_QUERY__KIND__CONNECTIONS:
	case RPMAD__ADMIN_QUERY__KIND__MRS:
	case RPMAD__ADMIN_QUERY__KIND__ENDPOINTS: {
		struct page p = {
			.a = a,
			.limit = q->limit,
			.room = CTL_MAX_MSG - PAGE_HEADROOM,
		};
		if (q->after) {
			p.after_session = q->after->session_id;
			p.after_object = q->after->object_id;
		}
		ret = fill_listing(&p, q->kind, r);
		break;
	}
	default:
		arena_free(a);
		req_fail(rc, RPMA_E_NOSUPP, 0, "unknown query %d",
				(int)q->kind);
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
	if (rc->client->pid == pid) {
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
		log_notice("session %s: evicted by %s (uid %u)",
				session_name(s), rc->client->name,
				(unsigned)rc->client->uid);
		history.evictions++;
		session_destroy(s);
	} while ((s = session_find_pid(pid)) != NULL);
	req_ok(rc);
}

void
admin_handle_upgrade(struct req_ctx *rc)
{
	char by[160], why[256];
	(void) snprintf(by, sizeof(by), "asked by %s, uid %u", rc->client->name,
			(unsigned)rc->client->uid);
	pid_t pid;
	int ret = upgrade_start(by, &pid, why, sizeof(why));
	if (ret) {
		req_fail(rc, RPMA_E_INVAL, -ret, "%s", why);
		return;
	}
	Rpmad__AdminReply *r = calloc(1, sizeof(*r));
	if (r == NULL) {
		/* started all the same: the log says so */
		req_ok(rc);
		return;
	}
	rpmad__admin_reply__init(r);
	r->upgrade_pid = (uint32_t)pid;
	rc->resp.body_case = RPMAD__RESPONSE__BODY_ADMIN;
	rc->resp.admin = r;
	rc->after = free;
	rc->after_arg = r;
}
