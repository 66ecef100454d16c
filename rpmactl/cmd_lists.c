// SPDX-License-Identifier: BSD-3-Clause
/*
 * cmd_lists.c -- rpmactl clients, connections, mrs, endpoints: one row
 * (or JSON object) per item, fetched page by page
 */

#include <inttypes.h>
#include <stdio.h>

#include "commands.h"
#include "format.h"
#include "json.h"
#include "table.h"

/* What a page callback needs: the output and who owns what. */
struct listing {
	struct cmd_ctx *x;
	struct json j;
	struct table *t;
	struct owners owners;
	size_t count;
};

static const char *
owner_comm(const struct listing *l, uint64_t session_id)
{
	const struct owner *o = owners_find(&l->owners, session_id);
	return o ? o->comm : NULL;
}

static void
json_counts(struct json *j, const Rpmad__ResourceCounts *c)
{
	json_key(j, "resources");
	json_object_begin(j);
	json_kv_u64(j, "peers", c ? c->peers : 0);
	json_kv_u64(j, "mrs", c ? c->mrs : 0);
	json_kv_u64(j, "pinned_bytes", c ? c->pinned_bytes : 0);
	json_kv_u64(j, "endpoints", c ? c->endpoints : 0);
	json_kv_u64(j, "conn_requests", c ? c->conn_reqs : 0);
	json_kv_u64(j, "connections", c ? c->connections : 0);
	json_object_end(j);
}

/*
 * Runs one listing: `page` gets every page; the table (columns `cols`;
 * `none` when it has no rows) or the JSON array named `key` is printed
 * when all went well.
 */
static int
run_listing(struct cmd_ctx *x, Rpmad__AdminQuery__Kind kind, const char *key,
		const char *none, const struct table_column *cols,
		unsigned ncols, bool want_owners, client_page_fn *page)
{
	struct listing l = { .x = x };
	int ret = EXIT_OK;
	if (want_owners && (ret = owners_fetch(x, &l.owners)))
		goto out;
	if (x->json) {
		json_init(&l.j, x->out);
		json_object_begin(&l.j);
		json_key(&l.j, key);
		json_array_begin(&l.j);
	} else if ((l.t = table_new(cols, ncols)) == NULL) {
		(void) fprintf(stderr, "rpmactl: out of memory\n");
		ret = EXIT_REFUSED;
		goto out;
	}
	ret = client_list(x->client, kind, x->page_limit, page, &l);
	if (ret)
		goto out;
	if (x->json) {
		json_array_end(&l.j);
		json_object_end(&l.j);
		json_end(&l.j);
	} else if (l.count == 0) {
		(void) fprintf(x->out, "%s\n", none);
	} else {
		table_print(l.t, x->out);
	}
out:
	table_free(l.t);
	owners_free(&l.owners);
	return ret;
}

/* ------------------------------------------------------------ clients */

/* The users seen in a clients listing, for the table of use and limits. */
#define USERS_SHOWN 256
struct user_row {
	uint32_t uid;
	Rpmad__UserLimits lim;
	Rpmad__UserUse use;
};
static struct user_row users[USERS_SHOWN];
static size_t n_users;

static void
note_user(const Rpmad__ClientInfo *c)
{
	if (c->user_limits == NULL || c->user_use == NULL)
		return;
	for (size_t i = 0; i < n_users; i++) {
		if (users[i].uid == c->uid)
			return;
	}
	if (n_users == USERS_SHOWN)
		return;
	users[n_users].uid = c->uid;
	users[n_users].lim = *c->user_limits;
	users[n_users].use = *c->user_use;
	n_users++;
}

static void
json_user(struct json *j, const Rpmad__ClientInfo *c)
{
	const Rpmad__UserLimits *l = c->user_limits;
	const Rpmad__UserUse *u = c->user_use;
	if (l == NULL || u == NULL)
		return;
	/* what all clients of the uid hold together, and their limits */
	json_key(j, "user_totals");
	json_object_begin(j);
	json_key(j, "use");
	json_object_begin(j);
	json_kv_u64(j, "clients", u->sessions);
	json_kv_u64(j, "connections", u->connections);
	json_kv_u64(j, "endpoints", u->endpoints);
	json_kv_u64(j, "pending_requests", u->pending_requests);
	json_kv_u64(j, "descriptors", u->descriptors);
	json_kv_u64(j, "registered_bytes", u->registered_bytes);
	json_object_end(j);
	json_key(j, "limits");
	json_object_begin(j);
	json_kv_u64(j, "max_connections", l->max_connections);
	json_kv_u64(j, "max_endpoints", l->max_endpoints);
	json_kv_u64(j, "max_pending_requests", l->max_pending_requests);
	json_kv_u64(j, "max_descriptors", l->max_descriptors);
	/* 0 (or 2^64-1, RLIMIT_MEMLOCK unlimited): none */
	json_kv_u64(j, "max_registered_bytes", l->max_registered_bytes ==
			UINT64_MAX ? 0 : l->max_registered_bytes);
	json_object_end(j);
	json_key(j, "refused");
	json_object_begin(j);
	json_kv_u64(j, "limits", u->refused_limits);
	json_kv_u64(j, "allow_connect", u->refused_connect);
	json_kv_u64(j, "allow_listen", u->refused_listen);
	json_kv_u64(j, "log_lines_suppressed", u->log_suppressed);
	json_object_end(j);
	json_key(j, "data_path");
	json_object_begin(j);
	json_kv_u64(j, "weight", l->weight);
	json_kv_u64(j, "max_bandwidth", l->max_bandwidth);
	json_kv_u64(j, "throttled", u->data_throttled);
	json_kv_u64(j, "bytes", u->data_bytes);
	json_kv_u64(j, "ops", u->data_ops);
	json_kv_u64(j, "all_users_bytes", u->data_all_bytes);
	json_object_end(j);
	json_object_end(j);
}

/* "3/1024", or "3/-" without a limit */
static const char *
use_of(uint64_t used, uint64_t limit, bool bytes, char *buf, size_t len)
{
	char a[32], b[32];
	if (bytes) {
		(void) format_bytes(used, a, sizeof(a));
		if (limit && limit != UINT64_MAX)
			(void) format_bytes(limit, b, sizeof(b));
		else
			(void) snprintf(b, sizeof(b), "-");
	} else {
		(void) snprintf(a, sizeof(a), "%llu", (unsigned long long)used);
		if (limit)
			(void) snprintf(b, sizeof(b), "%llu",
					(unsigned long long)limit);
		else
			(void) snprintf(b, sizeof(b), "-");
	}
	(void) snprintf(buf, len, "%s/%s", a, b);
	return buf;
}

static const struct table_column user_cols[] = {
	{ "UID", true }, { "USER", false }, { "CLIENTS", true },
	{ "CONNECTIONS", true }, { "ENDPOINTS", true }, { "REQUESTS", true },
	{ "DESCRIPTORS", true }, { "REGISTERED", true }, { "REFUSED", true },
	{ "WEIGHT", true }, { "CAP", true }, { "DATA", true },
	{ "OPS", true },
	{ "SHARE", true },
};

/* Per user: use/limit (all its clients together), refusals. */
static int
print_users(FILE *out)
{
	struct table *t = table_new(user_cols, sizeof(user_cols) /
			sizeof(user_cols[0]));
	if (t == NULL)
		return EXIT_REFUSED;
	int bad = 0;
	for (size_t i = 0; i < n_users; i++) {
		const struct user_row *r = &users[i];
		char user[64], buf[80];
		const char *name = user_name(r->uid, user, sizeof(user));
		bad |= table_cell(t, "%u", r->uid);
		bad |= table_cell(t, "%s", name ? name : "-");
		bad |= table_cell(t, "%u", r->use.sessions);
		bad |= table_cell(t, "%s", use_of(r->use.connections,
				r->lim.max_connections, false, buf,
				sizeof(buf)));
		bad |= table_cell(t, "%s", use_of(r->use.endpoints,
				r->lim.max_endpoints, false, buf,
				sizeof(buf)));
		bad |= table_cell(t, "%s", use_of(r->use.pending_requests,
				r->lim.max_pending_requests, false, buf,
				sizeof(buf)));
		bad |= table_cell(t, "%s", use_of(r->use.descriptors,
				r->lim.max_descriptors, false, buf,
				sizeof(buf)));
		bad |= table_cell(t, "%s", use_of(r->use.registered_bytes,
				r->lim.max_registered_bytes, true, buf,
				sizeof(buf)));
		bad |= table_cell(t, "%llu", (unsigned long long)(
				r->use.refused_limits +
				r->use.refused_connect +
				r->use.refused_listen));
		bad |= table_cell(t, "%u", r->lim.weight);
		if (r->lim.max_bandwidth)
			bad |= table_cell(t, "%s/s", format_bytes(
					r->lim.max_bandwidth, buf,
					sizeof(buf)));
		else
			bad |= table_cell(t, "-");
		bad |= table_cell(t, "%s", format_bytes(r->use.data_bytes,
				buf, sizeof(buf)));
		bad |= table_cell(t, "%llu",
				(unsigned long long)r->use.data_ops);
		if (r->use.data_all_bytes)
			bad |= table_cell(t, "%.1f%%", 100.0 *
					(double)r->use.data_bytes /
					(double)r->use.data_all_bytes);
		else
			bad |= table_cell(t, "-");
	}
	if (!bad) {
		(void) fprintf(out, "\nper user (all its clients; used/limit, "
				"-: no limit; DATA, OPS: what its "
				"connections moved through rpmad, SHARE: of "
				"all users'):\n");
		table_print(t, out);
	}
	table_free(t);
	return bad ? EXIT_REFUSED : 0;
}

static const struct table_column client_cols[] = {
	{ "PID", true }, { "UID", true }, { "USER", false },
	{ "COMMAND", false }, { "API", false }, { "PEERS", true },
	{ "MRS", true }, { "PINNED", true }, { "ENDPOINTS", true },
	{ "REQUESTS", true }, { "CONNECTIONS", true }, { "ADMIN", false },
};

static int
client_page(const Rpmad__AdminReply *r, void *arg)
{
	struct listing *l = arg;
	for (size_t i = 0; i < r->n_clients; i++, l->count++) {
		const Rpmad__ClientInfo *c = r->clients[i];
		const Rpmad__ResourceCounts *n = c->counts;
		char user[64], bytes[32];
		const char *name = user_name(c->uid, user, sizeof(user));
		if (l->x->json) {
			struct json *j = &l->j;
			json_object_begin(j);
			json_kv_u64(j, "session_id", c->session_id);
			json_kv_u64(j, "pid", c->pid);
			json_kv_u64(j, "uid", c->uid);
			json_kv_string(j, "user", name);
			json_kv_u64(j, "gid", c->gid);
			json_kv_string(j, "command", c->comm);
			json_kv_string(j, "library", c->library);
			json_kv_string(j, "api", c->api);
			json_kv_bool(j, "admin", c->admin);
			json_kv_u64(j, "netns", c->netns);
			json_counts(j, n);
			json_user(j, c);
			json_object_end(j);
			continue;
		}
		note_user(c);
		struct table *t = l->t;
		int bad = 0;
		bad |= table_cell(t, "%u", c->pid);
		bad |= table_cell(t, "%u", c->uid);
		bad |= table_cell(t, "%s", name ? name : "-");
		bad |= table_cell(t, "%s", c->comm && *c->comm ? c->comm :
					"-");
		/* "-": a client older than the field, or an admin tool */
		bad |= table_cell(t, "%s", c->api && *c->api ? c->api : "-");
		bad |= table_cell(t, "%u", n ? n->peers : 0);
		bad |= table_cell(t, "%u", n ? n->mrs : 0);
		bad |= table_cell(t, "%s", format_bytes(n ? n->pinned_bytes :
					0, bytes, sizeof(bytes)));
		bad |= table_cell(t, "%u", n ? n->endpoints : 0);
		bad |= table_cell(t, "%u", n ? n->conn_reqs : 0);
		bad |= table_cell(t, "%u", n ? n->connections : 0);
		bad |= table_cell(t, "%s", c->admin ? "yes" : "no");
		if (bad)
			return EXIT_REFUSED;
	}
	return 0;
}

int
cmd_clients(struct cmd_ctx *x)
{
	n_users = 0;
	int ret = run_listing(x, RPMAD__ADMIN_QUERY__KIND__CLIENTS, "clients",
			"no clients", client_cols, sizeof(client_cols) /
			sizeof(client_cols[0]), false, client_page);
	if (ret == 0 && !x->json && n_users)
		ret = print_users(x->out);
	return ret;
}

/* ------------------------------------------------------------ connections */

static const struct table_column conn_cols[] = {
	{ "PID", true }, { "COMMAND", false }, { "ROLE", false },
	{ "STATE", false }, { "QPN", true }, { "LOCAL", false },
	{ "REMOTE", false }, { "READS", true }, { "WRITES", true },
	{ "ATOMICS", true }, { "FLUSHES", true }, { "SENDS", true },
	{ "RECVS", true }, { "ERRORS", true }, { "SERVED", true },
	{ "NETNS", false },
};

/* "3 (12.0 KiB)": operations of a kind and their bytes */
static const char *
ops_bytes(uint64_t ops, uint64_t bytes, char *buf, size_t len)
{
	char b[32];
	if (ops == 0)
		(void) snprintf(buf, len, "0");
	else
		(void) snprintf(buf, len, "%" PRIu64 " (%s)", ops,
				format_bytes(bytes, b, sizeof(b)));
	return buf;
}

static void
json_ops(struct json *j, const Rpmad__OpCounters *o)
{
	static const Rpmad__OpCounters none = RPMAD__OP_COUNTERS__INIT;
	if (o == NULL)
		o = &none;
	json_key(j, "operations");
	json_object_begin(j);
	json_kv_u64(j, "reads", o->reads);
	json_kv_u64(j, "bytes_read", o->bytes_read);
	json_kv_u64(j, "writes", o->writes);
	json_kv_u64(j, "bytes_written", o->bytes_written);
	json_kv_u64(j, "atomic_writes", o->atomic_writes);
	json_kv_u64(j, "flushes", o->flushes);
	json_kv_u64(j, "sends", o->sends);
	json_kv_u64(j, "bytes_sent", o->bytes_sent);
	json_kv_u64(j, "recvs", o->recvs);
	json_kv_u64(j, "bytes_received", o->bytes_received);
	json_kv_u64(j, "errors", o->errors);
	json_kv_u64(j, "served_reads", o->served_reads);
	json_kv_u64(j, "served_bytes_read", o->served_bytes_read);
	json_kv_u64(j, "served_writes", o->served_writes);
	json_kv_u64(j, "served_bytes_written", o->served_bytes_written);
	json_kv_u64(j, "served_atomic_writes", o->served_atomic_writes);
	json_kv_u64(j, "served_flushes", o->served_flushes);
	json_object_end(j);
}

/* A network namespace as readlink(2) shows /proc/PID/ns/net ("-": none) */
static int
netns_cell(struct table *t, uint64_t netns)
{
	return netns ? table_cell(t, "net:[%" PRIu64 "]", netns) :
		table_cell(t, "-");
}

static int
conn_page(const Rpmad__AdminReply *r, void *arg)
{
	struct listing *l = arg;
	static const Rpmad__OpCounters none = RPMAD__OP_COUNTERS__INIT;
	for (size_t i = 0; i < r->n_connections; i++, l->count++) {
		const Rpmad__ConnectionInfo *c = r->connections[i];
		const char *comm = owner_comm(l, c->session_id);
		if (l->x->json) {
			struct json *j = &l->j;
			json_object_begin(j);
			json_kv_u64(j, "id", c->conn_id);
			json_kv_u64(j, "session_id", c->session_id);
			json_kv_u64(j, "pid", c->pid);
			json_kv_string(j, "command", comm);
			json_kv_string(j, "role", c->role);
			json_kv_string(j, "state", c->state);
			json_kv_u64(j, "qp_num", c->qp_num);
			json_kv_string(j, "transport", c->transport);
			json_kv_string(j, "local_address", c->local_addr);
			json_kv_string(j, "remote_address", c->remote_addr);
			json_kv_u64(j, "netns", c->netns);
			json_ops(j, c->ops);
			json_object_end(j);
			continue;
		}
		const Rpmad__OpCounters *o = c->ops ? c->ops : &none;
		char rd[48], wr[48], sd[48], rv[48];
		struct table *t = l->t;
		int bad = 0;
		bad |= table_cell(t, "%u", c->pid);
		bad |= table_cell(t, "%s", comm && *comm ? comm : "-");
		bad |= table_cell(t, "%s", c->role);
		bad |= table_cell(t, "%s", c->state);
		bad |= table_cell(t, "%u", c->qp_num);
		bad |= table_cell(t, "%s", c->local_addr);
		bad |= table_cell(t, "%s", c->remote_addr);
		bad |= table_cell(t, "%s", ops_bytes(o->reads, o->bytes_read,
					rd, sizeof(rd)));
		bad |= table_cell(t, "%s", ops_bytes(o->writes,
					o->bytes_written, wr, sizeof(wr)));
		bad |= table_cell(t, "%" PRIu64, o->atomic_writes);
		bad |= table_cell(t, "%" PRIu64, o->flushes);
		bad |= table_cell(t, "%s", ops_bytes(o->sends, o->bytes_sent,
					sd, sizeof(sd)));
		bad |= table_cell(t, "%s", ops_bytes(o->recvs,
					o->bytes_received, rv, sizeof(rv)));
		bad |= table_cell(t, "%" PRIu64, o->errors);
		/* what the peer did here: reads, writes (atomics incl.), flushes */
		bad |= table_cell(t, "%" PRIu64 "/%" PRIu64 "/%" PRIu64,
				o->served_reads, o->served_writes +
				o->served_atomic_writes, o->served_flushes);
		bad |= netns_cell(t, c->netns);
		if (bad)
			return EXIT_REFUSED;
	}
	return 0;
}

int
cmd_connections(struct cmd_ctx *x)
{
	return run_listing(x, RPMAD__ADMIN_QUERY__KIND__CONNECTIONS,
			"connections", "no connections", conn_cols,
			sizeof(conn_cols) / sizeof(conn_cols[0]), true,
			conn_page);
}

/* ------------------------------------------------------------ mrs */

static const struct table_column mr_cols[] = {
	{ "PID", true }, { "COMMAND", false }, { "ADDRESS", false },
	{ "SIZE", true }, { "PINNED", true }, { "DEVICE", false },
	{ "KEY", true }, { "USAGE", false }, { "PERSISTENCE", false },
	{ "BACKING", false },
};

static int
mr_page(const Rpmad__AdminReply *r, void *arg)
{
	struct listing *l = arg;
	for (size_t i = 0; i < r->n_mrs; i++, l->count++) {
		const Rpmad__MrInfo *m = r->mrs[i];
		const char *comm = owner_comm(l, m->session_id);
		if (l->x->json) {
			struct json *j = &l->j;
			json_object_begin(j);
			json_kv_u64(j, "id", m->mr_id);
			json_kv_u64(j, "session_id", m->session_id);
			json_kv_u64(j, "pid", m->pid);
			json_kv_string(j, "command", comm);
			json_kv_u64(j, "addr", m->addr);
			json_kv_u64(j, "length", m->length);
			json_kv_u64(j, "pinned_bytes", m->pinned_bytes);
			json_kv_string(j, "device", m->device);
			json_kv_u64(j, "key", m->key);
			json_kv_u64(j, "lkey", m->lkey);
			json_key(j, "usage");
			json_array_begin(j);
			for (unsigned bit = 0; bit < 32; bit++) {
				if (!(m->usage & (1u << bit)))
					continue;
				const char *n = format_usage_name(bit);
				if (n) {
					json_string(j, n);
				} else {
					char hex[16];
					(void) snprintf(hex, sizeof(hex),
							"0x%x", 1u << bit);
					json_string(j, hex);
				}
			}
			json_array_end(j);
			json_kv_u64(j, "usage_bits", m->usage);
			json_kv_string(j, "persistence", m->persistence);
			json_kv_string(j, "backing", m->backing);
			json_object_end(j);
			continue;
		}
		char size[32], pinned[32], usage[160];
		struct table *t = l->t;
		int bad = 0;
		bad |= table_cell(t, "%u", m->pid);
		bad |= table_cell(t, "%s", comm && *comm ? comm : "-");
		bad |= table_cell(t, "0x%" PRIx64, m->addr);
		bad |= table_cell(t, "%s", format_bytes(m->length, size,
					sizeof(size)));
		bad |= table_cell(t, "%s", format_bytes(m->pinned_bytes,
					pinned, sizeof(pinned)));
		bad |= table_cell(t, "%s", m->device && *m->device ?
					m->device : "-");
		bad |= table_cell(t, "0x%08x", m->key);
		bad |= table_cell(t, "%s", format_usage(m->usage, usage,
					sizeof(usage)));
		bad |= table_cell(t, "%s", m->persistence && *m->persistence ?
					m->persistence : "-");
		bad |= table_cell(t, "%s", m->backing && *m->backing ?
					m->backing : "-");
		if (bad)
			return EXIT_REFUSED;
	}
	return 0;
}

int
cmd_mrs(struct cmd_ctx *x)
{
	return run_listing(x, RPMAD__ADMIN_QUERY__KIND__MRS, "mrs",
			"no memory registrations", mr_cols,
			sizeof(mr_cols) / sizeof(mr_cols[0]), true, mr_page);
}

/* ------------------------------------------------------------ endpoints */

static const struct table_column ep_cols[] = {
	{ "PID", true }, { "COMMAND", false }, { "ADDRESS", false },
	{ "PORT", false }, { "TRANSPORT", false }, { "PENDING", true },
	{ "FROM", false }, { "NETNS", false },
};

/* Whom the waiting requests come from: "192.0.2.7:1021 uid 1000:3 +2". */
static void
shares_text(const Rpmad__EndpointInfo *e, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < e->n_largest_shares && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s:%u",
				i ? " " : "", e->largest_shares[i]->origin,
				e->largest_shares[i]->pending);
		used += n > 0 ? (size_t)n : 0;
	}
	if (e->pending_origins > e->n_largest_shares && used < len)
		(void) snprintf(buf + used, len - used, " +%zu",
				(size_t)e->pending_origins -
				e->n_largest_shares);
	if (buf[0] == '\0')
		(void) snprintf(buf, len, "-");
}

static int
ep_page(const Rpmad__AdminReply *r, void *arg)
{
	struct listing *l = arg;
	for (size_t i = 0; i < r->n_endpoints; i++, l->count++) {
		const Rpmad__EndpointInfo *e = r->endpoints[i];
		const char *comm = owner_comm(l, e->session_id);
		if (l->x->json) {
			struct json *j = &l->j;
			json_object_begin(j);
			json_kv_u64(j, "id", e->ep_id);
			json_kv_u64(j, "session_id", e->session_id);
			json_kv_u64(j, "pid", e->pid);
			json_kv_string(j, "command", comm);
			json_kv_string(j, "address", e->addr);
			json_kv_string(j, "port", e->port);
			json_kv_string(j, "transport", e->transport);
			json_kv_u64(j, "pending_requests",
					e->pending_requests);
			json_kv_u64(j, "pending_origins", e->pending_origins);
			json_kv_u64(j, "netns", e->netns);
			json_key(j, "largest_shares");
			json_array_begin(j);
			for (size_t s = 0; s < e->n_largest_shares; s++) {
				json_object_begin(j);
				json_kv_string(j, "origin",
						e->largest_shares[s]->origin);
				json_kv_u64(j, "pending",
						e->largest_shares[s]->pending);
				json_object_end(j);
			}
			json_array_end(j);
			json_object_end(j);
			continue;
		}
		struct table *t = l->t;
		int bad = 0;
		bad |= table_cell(t, "%u", e->pid);
		bad |= table_cell(t, "%s", comm && *comm ? comm : "-");
		bad |= table_cell(t, "%s", e->addr);
		bad |= table_cell(t, "%s", e->port);
		bad |= table_cell(t, "%s", e->transport && *e->transport ?
					e->transport : "-");
		bad |= table_cell(t, "%u", e->pending_requests);
		char from[256];
		shares_text(e, from, sizeof(from));
		bad |= table_cell(t, "%s", from);
		bad |= netns_cell(t, e->netns);
		if (bad)
			return EXIT_REFUSED;
	}
	return 0;
}

int
cmd_endpoints(struct cmd_ctx *x)
{
	return run_listing(x, RPMAD__ADMIN_QUERY__KIND__ENDPOINTS,
			"endpoints", "no endpoints", ep_cols,
			sizeof(ep_cols) / sizeof(ep_cols[0]), true, ep_page);
}
