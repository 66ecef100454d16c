// SPDX-License-Identifier: BSD-3-Clause
/*
 * cmd_metrics.c -- rpmactl metrics: what rpmad holds and has done, in the
 * Prometheus text exposition format (version 0.0.4), for node_exporter's
 * textfile collector or any scraper.
 *
 * Resources are gauges per user (uid and name), because quotas and
 * tenants are per user; connections also by state. Operations, refusals
 * and control requests are counters since rpmad started (they restart at
 * 0 with it, which Prometheus' rate() understands). rpmactl's own session
 * is left out: it is the observer, not a client.
 */

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

/* what one user holds right now, and its use of the data path */
struct user_use {
	uint32_t uid;
	uint64_t clients, peers, mrs, pinned, eps, reqs;
	uint64_t weight, data_bytes, data_ops;	/* the user's, not summed */
};

/* connections of one user in one state */
struct conn_use {
	uint32_t uid;
	char state[32];
	uint64_t n;
};

struct usage {
	struct owners owners;	/* session -> uid, for connections */
	struct user_use *users;
	size_t n_users;
	struct conn_use *conns;
	size_t n_conns;
	uint32_t self;		/* rpmactl's pid */
};

static void *
grow(void *list, size_t n, size_t size)
{
	void *p = realloc(list, (n + 1) * size);
	if (p == NULL)
		(void) fprintf(stderr, "rpmactl: out of memory\n");
	return p;
}

static struct user_use *
user_of(struct usage *u, uint32_t uid)
{
	for (size_t i = 0; i < u->n_users; i++) {
		if (u->users[i].uid == uid)
			return &u->users[i];
	}
	struct user_use *list = grow(u->users, u->n_users, sizeof(*list));
	if (list == NULL)
		return NULL;
	u->users = list;
	struct user_use *w = &list[u->n_users++];
	memset(w, 0, sizeof(*w));
	w->uid = uid;
	return w;
}

static int
clients_page(const Rpmad__AdminReply *r, void *arg)
{
	struct usage *u = arg;
	struct owners *o = &u->owners;
	if (r->n_clients == 0)
		return 0;
	struct owner *list = realloc(o->list,
			(o->n + r->n_clients) * sizeof(*list));
	if (list == NULL) {
		(void) fprintf(stderr, "rpmactl: out of memory\n");
		return EXIT_REFUSED;
	}
	o->list = list;
	for (size_t i = 0; i < r->n_clients; i++) {
		const Rpmad__ClientInfo *ci = r->clients[i];
		struct owner *w = &o->list[o->n++];
		memset(w, 0, sizeof(*w));
		w->session_id = ci->session_id;
		w->pid = ci->pid;
		w->uid = ci->uid;
		if (ci->pid == u->self)
			continue;
		struct user_use *uu = user_of(u, ci->uid);
		if (uu == NULL)
			return EXIT_REFUSED;
		const Rpmad__ResourceCounts *c = ci->counts;
		uu->clients++;
		if (ci->user_limits)
			uu->weight = ci->user_limits->weight;
		if (ci->user_use) {
			uu->data_bytes = ci->user_use->data_bytes;
			uu->data_ops = ci->user_use->data_ops;
		}
		if (c) {
			uu->peers += c->peers;
			uu->mrs += c->mrs;
			uu->pinned += c->pinned_bytes;
			uu->eps += c->endpoints;
			uu->reqs += c->conn_reqs;
		}
	}
	return 0;
}

static int
conns_page(const Rpmad__AdminReply *r, void *arg)
{
	struct usage *u = arg;
	for (size_t i = 0; i < r->n_connections; i++) {
		const Rpmad__ConnectionInfo *ci = r->connections[i];
		const struct owner *w = owners_find(&u->owners,
				ci->session_id);
		/* a session that came after the clients listing: unknown */
		uint32_t uid = w ? w->uid : UINT32_MAX;
		const char *state = ci->state && *ci->state ? ci->state : "?";
		struct conn_use *cu = NULL;
		for (size_t k = 0; k < u->n_conns && cu == NULL; k++) {
			if (u->conns[k].uid == uid &&
					strcmp(u->conns[k].state, state) == 0)
				cu = &u->conns[k];
		}
		if (cu == NULL) {
			struct conn_use *list = grow(u->conns, u->n_conns,
					sizeof(*list));
			if (list == NULL)
				return EXIT_REFUSED;
			u->conns = list;
			cu = &list[u->n_conns++];
			memset(cu, 0, sizeof(*cu));
			cu->uid = uid;
			(void) snprintf(cu->state, sizeof(cu->state), "%s",
					state);
		}
		cu->n++;
	}
	return 0;
}

static void
usage_free(struct usage *u)
{
	owners_free(&u->owners);
	free(u->users);
	free(u->conns);
}

/* a label value: backslash, double quote and newline escaped */
static void
label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			(void) fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			(void) fputs("\\n", f);
		else
			(void) fputc(*v, f);
	}
}

static void
family(FILE *f, const char *name, const char *type, const char *help)
{
	(void) fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
			type);
}

static void
sample(FILE *f, const char *name, const char *lname, const char *lvalue,
		uint64_t v)
{
	(void) fputs(name, f);
	if (lname) {
		(void) fprintf(f, "{%s=\"", lname);
		label_value(f, lvalue);
		(void) fputs("\"}", f);
	}
	(void) fprintf(f, " %" PRIu64 "\n", v);
}

/* name{uid="U",user="NAME" -- the caller adds more labels and "}" */
static void
user_labels(FILE *f, const char *name, uint32_t uid)
{
	char buf[256], id[16] = "";
	const char *user = NULL;
	if (uid != UINT32_MAX) {	/* UINT32_MAX: its session is gone */
		(void) snprintf(id, sizeof(id), "%" PRIu32, uid);
		user = user_name(uid, buf, sizeof(buf));
	}
	(void) fprintf(f, "%s{uid=\"%s\",user=\"", name, id);
	label_value(f, user ? user : "");
	(void) fputc('"', f);
}

static void
per_user_typed(FILE *f, const struct usage *u, const char *name,
		const char *type, size_t offset, const char *help)
{
	family(f, name, type, help);
	for (size_t i = 0; i < u->n_users; i++) {
		const struct user_use *uu = &u->users[i];
		uint64_t v;
		memcpy(&v, (const char *)uu + offset, sizeof(v));
		user_labels(f, name, uu->uid);
		(void) fprintf(f, "} %" PRIu64 "\n", v);
	}
}

static void
per_user(FILE *f, const struct usage *u, const char *name, size_t offset,
		const char *help)
{
	per_user_typed(f, u, name, "gauge", offset, help);
}

static void
print_status(FILE *f, const Rpmad__StatusReply *st)
{
	family(f, "rpmad_up", "gauge",
			"Whether rpmad answered (the service that writes this "
			"file writes 0 when it does not).");
	(void) fputs("rpmad_up 1\n", f);
	family(f, "rpmad_info", "gauge", "rpmad's version and transport.");
	(void) fputs("rpmad_info{version=\"", f);
	label_value(f, st->version ? st->version : "");
	(void) fputs("\",transport=\"", f);
	label_value(f, st->transport ? st->transport : "");
	(void) fputs("\"} 1\n", f);
	family(f, "rpmad_uptime_seconds", "gauge",
			"Seconds since rpmad started.");
	(void) fprintf(f, "rpmad_uptime_seconds %.3f\n",
			(double)st->uptime_ms / 1000.0);
	family(f, "rpmad_config_reloads_total", "counter",
			"Successful configuration reloads (SIGHUP).");
	sample(f, "rpmad_config_reloads_total", NULL, NULL, st->reloads);
	family(f, "rpmad_config_last_reload_failed", "gauge",
			"1 when the last reload found a bad file (the previous "
			"settings stay).");
	sample(f, "rpmad_config_last_reload_failed", NULL, NULL,
			st->last_reload_failed);
	family(f, "rpmad_limit", "gauge",
			"Per-client limits of rpmad.conf; 0 is no limit.");
	sample(f, "rpmad_limit", "limit", "max_connections",
			st->max_connections);
	sample(f, "rpmad_limit", "limit", "max_endpoints", st->max_endpoints);
	sample(f, "rpmad_limit", "limit", "max_registered_bytes",
			st->max_registered_bytes);
	family(f, "rpmad_evictions_total", "counter",
			"Clients evicted (rpmactl evict) since rpmad started.");
	sample(f, "rpmad_evictions_total", NULL, NULL, st->evictions);
}

static void
print_usage(FILE *f, const struct usage *u)
{
	per_user(f, u, "rpmad_clients", offsetof(struct user_use, clients),
			"Client processes connected to rpmad.");
	per_user(f, u, "rpmad_peers", offsetof(struct user_use, peers),
			"Peers (rpma_peer) of the clients.");
	per_user(f, u, "rpmad_registrations", offsetof(struct user_use, mrs),
			"Memory registrations of the clients.");
	per_user(f, u, "rpmad_pinned_bytes", offsetof(struct user_use, pinned),
			"Bytes of the clients' memory that rpmad has mapped "
			"(pinned, with verbs) for registrations.");
	per_user(f, u, "rpmad_endpoints", offsetof(struct user_use, eps),
			"Listening endpoints of the clients.");
	per_user(f, u, "rpmad_connection_requests",
			offsetof(struct user_use, reqs),
			"Connection requests not yet connected or deleted.");
	per_user(f, u, "rpmad_weight", offsetof(struct user_use, weight),
			"The user's weight in the data path (rpmad.conf).");
	per_user_typed(f, u, "rpmad_data_bytes_total", "counter",
			offsetof(struct user_use, data_bytes),
			"Bytes the user's connections moved through rpmad's "
			"data path (sent, received, copied, persisted) since "
			"rpmad knows the user.");
	per_user_typed(f, u, "rpmad_data_ops_total", "counter",
			offsetof(struct user_use, data_ops),
			"Frames and operations the user's turns in the data "
			"path finished since rpmad knows the user.");
	family(f, "rpmad_connections", "gauge",
			"Connections of the clients, by state.");
	for (size_t i = 0; i < u->n_conns; i++) {
		user_labels(f, "rpmad_connections", u->conns[i].uid);
		(void) fputs(",state=\"", f);
		label_value(f, u->conns[i].state);
		(void) fprintf(f, "\"} %" PRIu64 "\n", u->conns[i].n);
	}
}

static void
print_stats(FILE *f, const Rpmad__StatsReply *st)
{
	static const Rpmad__OpCounters none = RPMAD__OP_COUNTERS__INIT;
	const Rpmad__OpCounters *o = st->totals ? st->totals : &none;
	const char *n;

	n = "rpmad_operations_total";
	family(f, n, "counter", "Operations the clients posted, by kind.");
	sample(f, n, "kind", "read", o->reads);
	sample(f, n, "kind", "write", o->writes);
	sample(f, n, "kind", "atomic_write", o->atomic_writes);
	sample(f, n, "kind", "flush", o->flushes);
	sample(f, n, "kind", "send", o->sends);
	sample(f, n, "kind", "recv", o->recvs);
	n = "rpmad_operation_bytes_total";
	family(f, n, "counter", "Bytes the clients' operations moved, by kind.");
	sample(f, n, "kind", "read", o->bytes_read);
	sample(f, n, "kind", "write", o->bytes_written);
	sample(f, n, "kind", "send", o->bytes_sent);
	sample(f, n, "kind", "recv", o->bytes_received);
	n = "rpmad_operation_errors_total";
	family(f, n, "counter", "Operations that completed with an error.");
	sample(f, n, NULL, NULL, o->errors);
	n = "rpmad_served_operations_total";
	family(f, n, "counter",
			"Operations remote peers performed on the clients' "
			"memory, by kind.");
	sample(f, n, "kind", "read", o->served_reads);
	sample(f, n, "kind", "write", o->served_writes);
	sample(f, n, "kind", "atomic_write", o->served_atomic_writes);
	sample(f, n, "kind", "flush", o->served_flushes);
	n = "rpmad_served_bytes_total";
	family(f, n, "counter",
			"Bytes remote peers read from or wrote to the clients' "
			"memory.");
	sample(f, n, "kind", "read", o->served_bytes_read);
	sample(f, n, "kind", "write", o->served_bytes_written);

	n = "rpmad_refusals_total";
	family(f, n, "counter",
			"Requests refused because of a setting of rpmad.conf, "
			"by setting.");
	sample(f, n, "limit", "max_connections", st->refused_max_connections);
	sample(f, n, "limit", "max_endpoints", st->refused_max_endpoints);
	sample(f, n, "limit", "max_registered_bytes",
			st->refused_max_registered_bytes);
	sample(f, n, "limit", "allow_users_groups", st->refused_allow_lists);
	sample(f, n, "limit", "admin_groups", st->refused_admin_groups);
	sample(f, n, "limit", "max_descriptors", st->refused_max_descriptors);
	sample(f, n, "limit", "rpmad_out_of_descriptors",
			st->refused_no_descriptors);

	n = "rpmad_control_requests_total";
	family(f, n, "counter", "Control requests of clients and rpmactl.");
	sample(f, n, NULL, NULL, st->requests);
	n = "rpmad_control_request_errors_total";
	family(f, n, "counter", "Control requests that failed.");
	sample(f, n, NULL, NULL, st->request_errors);
	n = "rpmad_sessions_total";
	family(f, n, "counter", "Client sessions opened since rpmad started.");
	sample(f, n, NULL, NULL, st->sessions_total);
	n = "rpmad_sessions_silent_total";
	family(f, n, "counter", "Client sessions ended because they said no "
			"hello in time.");
	sample(f, n, NULL, NULL, st->sessions_silent);

	/* bucket i: below 2^i microseconds; the last one: the rest */
	n = "rpmad_flush_latency_seconds";
	family(f, n, "histogram",
			"Time from posting a flush to its completion.");
	uint64_t cum = 0;
	for (size_t i = 0; i < st->n_flush_latency_buckets; i++) {
		cum += st->flush_latency_buckets[i];
		if (i + 1 == st->n_flush_latency_buckets)
			(void) fprintf(f, "%s_bucket{le=\"+Inf\"} %" PRIu64
					"\n", n, cum);
		else
			(void) fprintf(f, "%s_bucket{le=\"%.9g\"} %" PRIu64
					"\n", n, (double)(1ull << i) / 1e6,
					cum);
	}
	if (st->n_flush_latency_buckets == 0)
		(void) fprintf(f, "%s_bucket{le=\"+Inf\"} 0\n", n);
	(void) fprintf(f, "%s_sum %.9f\n", n,
			(double)st->flush_latency_sum_ns / 1e9);
	(void) fprintf(f, "%s_count %" PRIu64 "\n", n, cum);
}

int
cmd_metrics(struct cmd_ctx *x)
{
	Rpmad__Response *status = NULL, *stats = NULL;
	struct usage u;
	memset(&u, 0, sizeof(u));
	u.self = (uint32_t)getpid();

	int ret = client_query(x->client, RPMAD__ADMIN_QUERY__KIND__STATUS,
			&status);
	if (ret == EXIT_OK)
		ret = client_list(x->client, RPMAD__ADMIN_QUERY__KIND__CLIENTS,
				x->page_limit, clients_page, &u);
	if (ret == EXIT_OK)
		ret = client_list(x->client,
				RPMAD__ADMIN_QUERY__KIND__CONNECTIONS,
				x->page_limit, conns_page, &u);
	if (ret == EXIT_OK)
		ret = client_query(x->client, RPMAD__ADMIN_QUERY__KIND__STATS,
				&stats);
	if (ret != EXIT_OK)
		goto out;
	if (status->admin == NULL || status->admin->status == NULL ||
			stats->admin == NULL || stats->admin->stats == NULL) {
		(void) fprintf(stderr, "rpmactl: rpmad's answer lacks its "
				"status or statistics\n");
		ret = EXIT_REFUSED;
		goto out;
	}
	print_status(x->out, status->admin->status);
	print_usage(x->out, &u);
	print_stats(x->out, stats->admin->stats);
out:
	if (status)
		rpmad__response__free_unpacked(status, NULL);
	if (stats)
		rpmad__response__free_unpacked(stats, NULL);
	usage_free(&u);
	return ret;
}
