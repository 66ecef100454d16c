// SPDX-License-Identifier: BSD-3-Clause
/*
 * cmd_stats.c -- rpmactl stats: operations by kind since rpmad started,
 * control requests, and how long persistent and visibility flushes took
 */

#include <inttypes.h>
#include <stdio.h>

#include "commands.h"
#include "format.h"
#include "json.h"
#include "table.h"

/* Bucket i holds flushes below 2^i microseconds; the last one the rest. */
static void
bucket_bounds(size_t i, size_t n, uint64_t *lo, uint64_t *hi, bool *open)
{
	*lo = i == 0 ? 0 : 1ull << (i - 1);
	*hi = 1ull << i;
	*open = i + 1 == n;
}

static void
print_json(struct cmd_ctx *x, const Rpmad__StatsReply *st)
{
	static const Rpmad__OpCounters none = RPMAD__OP_COUNTERS__INIT;
	const Rpmad__OpCounters *o = st->totals ? st->totals : &none;
	struct json j;
	json_init(&j, x->out);
	json_object_begin(&j);
	json_key(&j, "operations");
	json_object_begin(&j);
	json_kv_u64(&j, "reads", o->reads);
	json_kv_u64(&j, "bytes_read", o->bytes_read);
	json_kv_u64(&j, "writes", o->writes);
	json_kv_u64(&j, "bytes_written", o->bytes_written);
	json_kv_u64(&j, "atomic_writes", o->atomic_writes);
	json_kv_u64(&j, "flushes", o->flushes);
	json_kv_u64(&j, "sends", o->sends);
	json_kv_u64(&j, "bytes_sent", o->bytes_sent);
	json_kv_u64(&j, "recvs", o->recvs);
	json_kv_u64(&j, "bytes_received", o->bytes_received);
	json_kv_u64(&j, "errors", o->errors);
	json_kv_u64(&j, "served_reads", o->served_reads);
	json_kv_u64(&j, "served_bytes_read", o->served_bytes_read);
	json_kv_u64(&j, "served_writes", o->served_writes);
	json_kv_u64(&j, "served_bytes_written", o->served_bytes_written);
	json_kv_u64(&j, "served_atomic_writes", o->served_atomic_writes);
	json_kv_u64(&j, "served_flushes", o->served_flushes);
	json_object_end(&j);
	json_kv_u64(&j, "requests", st->requests);
	json_kv_u64(&j, "request_errors", st->request_errors);
	json_kv_u64(&j, "clients_since_start", st->sessions_total);
	json_kv_u64(&j, "clients_without_hello", st->sessions_silent);
	json_key(&j, "refused");
	json_object_begin(&j);
	json_kv_u64(&j, "max_connections", st->refused_max_connections);
	json_kv_u64(&j, "max_endpoints", st->refused_max_endpoints);
	json_kv_u64(&j, "max_registered_bytes",
			st->refused_max_registered_bytes);
	json_kv_u64(&j, "allow_users_groups", st->refused_allow_lists);
	json_kv_u64(&j, "admin_groups", st->refused_admin_groups);
	json_kv_u64(&j, "max_descriptors", st->refused_max_descriptors);
	json_kv_u64(&j, "rpmad_out_of_descriptors",
			st->refused_no_descriptors);
	json_object_end(&j);

	json_key(&j, "flush_latency_us");
	json_array_begin(&j);
	for (size_t i = 0; i < st->n_flush_latency_buckets; i++) {
		uint64_t lo, hi;
		bool open;
		bucket_bounds(i, st->n_flush_latency_buckets, &lo, &hi, &open);
		json_object_begin(&j);
		json_kv_u64(&j, "from", lo);
		json_key(&j, "below");
		if (open)
			json_null(&j);
		else
			json_u64(&j, hi);
		json_kv_u64(&j, "count", st->flush_latency_buckets[i]);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_end(&j);
}

static const struct table_column op_cols[] = {
	{ "OPERATION", false }, { "COUNT", true }, { "BYTES", true },
};

static const struct table_column lat_cols[] = {
	{ "FLUSH LATENCY", false }, { "COUNT", true }, { "", false },
};

/* a bar of up to 40 '#' for count out of max */
static void
bar(uint64_t count, uint64_t max, char *buf, size_t len)
{
	size_t n = max ? (size_t)((count * 40 + max - 1) / max) : 0;
	if (n >= len)
		n = len - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = '#';
	buf[n] = '\0';
}

static const char *
us_text(uint64_t us, char *buf, size_t len)
{
	if (us >= 1000000 && us % 1000000 == 0)
		(void) snprintf(buf, len, "%" PRIu64 " s", us / 1000000);
	else if (us >= 1000 && us % 1000 == 0)
		(void) snprintf(buf, len, "%" PRIu64 " ms", us / 1000);
	else
		(void) snprintf(buf, len, "%" PRIu64 " us", us);
	return buf;
}

static int
print_text(struct cmd_ctx *x, const Rpmad__StatsReply *st)
{
	static const Rpmad__OpCounters none = RPMAD__OP_COUNTERS__INIT;
	const Rpmad__OpCounters *o = st->totals ? st->totals : &none;
	struct table *t = table_new(op_cols, 3);
	if (t == NULL)
		return EXIT_REFUSED;
	const struct {
		const char *name;
		uint64_t count, bytes;
		bool has_bytes;
	} rows[] = {
		{ "read", o->reads, o->bytes_read, true },
		{ "write", o->writes, o->bytes_written, true },
		{ "atomic write", o->atomic_writes, 0, false },
		{ "flush", o->flushes, 0, false },
		{ "send", o->sends, o->bytes_sent, true },
		{ "recv", o->recvs, o->bytes_received, true },
		{ "errors", o->errors, 0, false },
		{ "served read", o->served_reads, o->served_bytes_read, true },
		{ "served write", o->served_writes, o->served_bytes_written,
			true },
		{ "served atomic write", o->served_atomic_writes, 0, false },
		{ "served flush", o->served_flushes, 0, false },
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char b[32];
		bad |= table_cell(t, "%s", rows[i].name);
		bad |= table_cell(t, "%" PRIu64, rows[i].count);
		bad |= table_cell(t, "%s", rows[i].has_bytes ?
				format_bytes(rows[i].bytes, b, sizeof(b)) :
				"-");
	}
	if (!bad)
		table_print(t, x->out);
	table_free(t);
	if (bad)
		return EXIT_REFUSED;

	(void) fprintf(x->out, "\ncontrol requests: %" PRIu64 " (%" PRIu64
			" failed); clients since start: %" PRIu64 " (%" PRIu64
			" ended without a hello)\n", st->requests,
			st->request_errors, st->sessions_total,
			st->sessions_silent);
	if (st->refused_no_descriptors)
		(void) fprintf(x->out, "clients turned away while rpmad was "
				"out of descriptors: %" PRIu64 "\n",
				st->refused_no_descriptors);

	/* the histogram: from the first to the last non-empty bucket */
	size_t n = st->n_flush_latency_buckets, first = n, last = 0;
	uint64_t max = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t c = st->flush_latency_buckets[i];
		if (c == 0)
			continue;
		if (first == n)
			first = i;
		last = i;
		if (c > max)
			max = c;
	}
	if (first == n) {
		(void) fprintf(x->out, "\nflush latency: no flushes yet\n");
		return EXIT_OK;
	}
	(void) fputc('\n', x->out);
	if ((t = table_new(lat_cols, 3)) == NULL)
		return EXIT_REFUSED;
	for (size_t i = first; i <= last; i++) {
		uint64_t lo, hi;
		bool open;
		bucket_bounds(i, n, &lo, &hi, &open);
		char a[32], b[32], hashes[48];
		if (open)
			bad |= table_cell(t, ">= %s", us_text(lo, a,
					sizeof(a)));
		else if (i == 0)
			bad |= table_cell(t, "< %s", us_text(hi, b,
					sizeof(b)));
		else
			bad |= table_cell(t, "%s .. < %s", us_text(lo, a,
					sizeof(a)), us_text(hi, b, sizeof(b)));
		bad |= table_cell(t, "%" PRIu64, st->flush_latency_buckets[i]);
		bar(st->flush_latency_buckets[i], max, hashes, sizeof(hashes));
		bad |= table_cell(t, "%s", hashes);
	}
	if (!bad)
		table_print(t, x->out);
	table_free(t);
	return bad ? EXIT_REFUSED : EXIT_OK;
}

int
cmd_stats(struct cmd_ctx *x)
{
	Rpmad__Response *resp;
	int ret = client_query(x->client, RPMAD__ADMIN_QUERY__KIND__STATS,
			&resp);
	if (ret)
		return ret;
	const Rpmad__StatsReply *st = resp->admin->stats;
	if (st == NULL) {
		(void) fprintf(stderr, "rpmactl: rpmad sent no statistics\n");
		ret = EXIT_REFUSED;
	} else if (x->json) {
		print_json(x, st);
	} else {
		ret = print_text(x, st);
	}
	rpmad__response__free_unpacked(resp, NULL);
	return ret;
}
