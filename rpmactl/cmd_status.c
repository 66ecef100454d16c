// SPDX-License-Identifier: BSD-3-Clause
/*
 * cmd_status.c -- rpmactl status: what rpmad is, how it runs, what it holds
 */

#include <stdio.h>

#include "commands.h"
#include "format.h"
#include "json.h"

static const char *
limit_text(uint64_t v, bool bytes, char *buf, size_t len)
{
	if (v == 0)
		return "none";
	if (bytes && v == UINT64_MAX)
		return "memlock";
	if (bytes)
		return format_bytes(v, buf, len);
	(void) snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

static void
print_json(struct cmd_ctx *x, const Rpmad__StatusReply *st)
{
	struct json j;
	json_init(&j, x->out);
	json_object_begin(&j);
	json_kv_string(&j, "version", st->version);
	json_kv_u64(&j, "pid", st->pid);
	json_kv_u64(&j, "uptime_ms", st->uptime_ms);
	json_kv_string(&j, "socket", st->socket);
	json_kv_bool(&j, "socket_activated", st->socket_activated);
	json_kv_string(&j, "config", st->config_path);
	json_kv_bool(&j, "config_absent", st->config_absent);
	json_kv_u64(&j, "reloads", st->reloads);
	json_kv_bool(&j, "last_reload_failed", st->last_reload_failed);
	json_kv_string(&j, "transport", st->transport);
	json_kv_string(&j, "log_level", st->log_level);
	json_kv_bool(&j, "draining", st->draining);
	json_key(&j, "draining_pids");
	json_array_begin(&j);
	for (size_t i = 0; i < st->n_draining_pids; i++)
		json_u64(&j, st->draining_pids[i]);
	json_array_end(&j);

	json_key(&j, "devices");
	json_array_begin(&j);
	for (size_t i = 0; i < st->n_devices; i++) {
		const Rpmad__DeviceStatus *d = st->devices[i];
		json_object_begin(&j);
		json_kv_string(&j, "name", d->name);
		json_kv_string(&j, "transport", d->transport);
		json_kv_bool(&j, "odp_capable", d->odp_capable);
		json_kv_u64(&j, "registrations", d->registrations);
		json_kv_u64(&j, "pinned_bytes", d->pinned_bytes);
		json_object_end(&j);
	}
	json_array_end(&j);

	const Rpmad__ResourceCounts *c = st->counts;
	json_key(&j, "resources");
	json_object_begin(&j);
	json_kv_u64(&j, "clients", c ? c->sessions : 0);
	json_kv_u64(&j, "peers", c ? c->peers : 0);
	json_kv_u64(&j, "mrs", c ? c->mrs : 0);
	json_kv_u64(&j, "pinned_bytes", c ? c->pinned_bytes : 0);
	json_kv_u64(&j, "endpoints", c ? c->endpoints : 0);
	json_kv_u64(&j, "conn_requests", c ? c->conn_reqs : 0);
	json_kv_u64(&j, "connections", c ? c->connections : 0);
	json_object_end(&j);

	/* all clients of one uid together; 0: no limit */
	json_key(&j, "limits_per_user");
	json_object_begin(&j);
	json_kv_u64(&j, "max_connections", st->max_connections);
	json_kv_u64(&j, "max_endpoints", st->max_endpoints);
	json_kv_u64(&j, "max_pending_requests", st->max_pending_requests);
	json_kv_u64(&j, "max_descriptors", st->max_descriptors);
	bool memlock = st->max_registered_bytes == UINT64_MAX;
	json_kv_u64(&j, "max_registered_bytes", memlock ? 0 :
			st->max_registered_bytes);
	/* true: each client's own RLIMIT_MEMLOCK is the limit */
	json_kv_bool(&j, "max_registered_bytes_memlock", memlock);
	json_object_end(&j);

	json_key(&j, "refused");
	json_object_begin(&j);
	json_kv_u64(&j, "limits", st->refused_limits);
	json_kv_u64(&j, "allow_connect", st->refused_connect);
	json_kv_u64(&j, "allow_listen", st->refused_listen);
	json_kv_u64(&j, "log_lines_suppressed", st->log_suppressed);
	json_kv_u64(&j, "remote_log_lines_suppressed",
			st->log_suppressed_remote);
	json_object_end(&j);

	json_kv_u64(&j, "evictions", st->evictions);
	json_object_end(&j);
	json_end(&j);
}

/* "name:  value" lines, the values lined up */
#define ROW "%-18s %s\n"

static void
print_text(struct cmd_ctx *x, const Rpmad__StatusReply *st)
{
	FILE *f = x->out;
	char a[64], b[64], c3[64], p[1024];
	(void) fprintf(f, ROW, "version:", format_printable(st->version, p,
			sizeof(p)));
	(void) snprintf(a, sizeof(a), "%u", st->pid);
	(void) fprintf(f, ROW, "pid:", a);
	(void) fprintf(f, ROW, "uptime:", format_duration(st->uptime_ms, a,
			sizeof(a)));
	(void) fprintf(f, "%-18s %s%s\n", "socket:",
			format_printable(st->socket, p, sizeof(p)),
			st->socket_activated ? " (socket activation)" : "");
	(void) fprintf(f, "%-18s %s", "config:", st->config_path &&
			*st->config_path ? format_printable(st->config_path,
				p, sizeof(p)) : "-");
	(void) fprintf(f, " (%s%llu reload%s%s)\n",
			st->config_absent ? "absent: built-in defaults; " : "",
			(unsigned long long)st->reloads,
			st->reloads == 1 ? "" : "s",
			st->last_reload_failed ? "; the last one FAILED, "
			"the configuration before it is in use" : "");
	(void) fprintf(f, ROW, "transport:", format_printable(st->transport,
			p, sizeof(p)));
	(void) fprintf(f, ROW, "log level:", format_printable(st->log_level,
			p, sizeof(p)));
	if (st->draining)
		(void) fprintf(f, ROW, "upgrade:", "handed its socket to a "
				"newer rpmad: serves its clients until they end");
	for (size_t i = 0; i < st->n_draining_pids; i++)
		(void) fprintf(f, "%-18s pid %u (an older rpmad serving its "
				"clients until they end)\n", i ? "" :
				"draining:", st->draining_pids[i]);
	for (size_t i = 0; i < st->n_devices; i++) {
		const Rpmad__DeviceStatus *d = st->devices[i];
		char name[128], tp[64], pinned[32];
		(void) fprintf(f, "%-18s %s (%s%s): %u registration%s, %s "
				"pinned\n", i ? "" : "devices:",
				format_printable(d->name, name, sizeof(name)),
				format_printable(d->transport, tp, sizeof(tp)),
				d->odp_capable ? ", on-demand paging" : "",
				d->registrations, d->registrations == 1 ? "" :
				"s", format_bytes(d->pinned_bytes, pinned,
					sizeof(pinned)));
	}
	if (st->n_devices == 0)
		(void) fprintf(f, ROW, "devices:", "none");

	const Rpmad__ResourceCounts *c = st->counts;
	if (c) {
		(void) snprintf(a, sizeof(a), "%u", c->sessions);
		(void) fprintf(f, ROW, "clients:", a);
		(void) snprintf(a, sizeof(a), "%u", c->peers);
		(void) fprintf(f, ROW, "peers:", a);
		(void) fprintf(f, "%-18s %u (%s pinned)\n", "registrations:",
				c->mrs, format_bytes(c->pinned_bytes, b,
					sizeof(b)));
		(void) snprintf(a, sizeof(a), "%u", c->endpoints);
		(void) fprintf(f, ROW, "endpoints:", a);
		(void) fprintf(f, "%-18s %u (and %u request%s)\n",
				"connections:", c->connections, c->conn_reqs,
				c->conn_reqs == 1 ? "" : "s");
	}
	char d[32], e[32];
	(void) fprintf(f, "%-18s connections %s, endpoints %s, requests "
			"%s, descriptors %s, registered %s\n",
			"limits per user:",
			limit_text(st->max_connections, false, a, sizeof(a)),
			limit_text(st->max_endpoints, false, b, sizeof(b)),
			limit_text(st->max_pending_requests, false, d,
				sizeof(d)),
			limit_text(st->max_descriptors, false, e, sizeof(e)),
			limit_text(st->max_registered_bytes, true, c3,
				sizeof(c3)));
	(void) fprintf(f, "%-18s %llu by limits, %llu by allow_connect, "
			"%llu by allow_listen; %llu log lines held back "
			"(and %llu of remote hosts)\n",
			"refused:", (unsigned long long)st->refused_limits,
			(unsigned long long)st->refused_connect,
			(unsigned long long)st->refused_listen,
			(unsigned long long)st->log_suppressed,
			(unsigned long long)st->log_suppressed_remote);
	(void) snprintf(a, sizeof(a), "%llu",
			(unsigned long long)st->evictions);
	(void) fprintf(f, ROW, "evictions:", a);
}

int
cmd_status(struct cmd_ctx *x)
{
	Rpmad__Response *resp;
	int ret = client_query(x->client, RPMAD__ADMIN_QUERY__KIND__STATUS,
			&resp);
	if (ret)
		return ret;
	const Rpmad__StatusReply *st = resp->admin->status;
	if (st == NULL) {
		(void) fprintf(stderr, "rpmactl: rpmad sent no status\n");
		ret = EXIT_REFUSED;
	} else if (x->json) {
		print_json(x, st);
	} else {
		print_text(x, st);
	}
	rpmad__response__free_unpacked(resp, NULL);
	return ret;
}
