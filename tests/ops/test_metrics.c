// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_metrics.c -- `rpmactl metrics` is Prometheus text that a real
 * parser (python3-prometheus-client's text_string_to_metric_families)
 * accepts, with the families, types, labels and values of what rpmad
 * holds: a server and a client (tests/ops/ops_peer) on one rpmad, and a
 * client refused by max_registered_bytes. The systemd units that write
 * the metrics for node_exporter are checked by systemd-analyze.
 */

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "ops_pair.h"

/*
 * The parser, given the text on stdin, prints one line per family
 * ("family NAME TYPE") and per sample ("NAME{l1=v1,l2=v2} VALUE", labels
 * sorted, value as an integer when it is one). Debian's
 * python3-prometheus-client is installed for the system's python3, so
 * /usr/bin/python3 rather than whichever python3 comes first in PATH.
 */
static const char parser[] =
	"import sys\n"
	"from prometheus_client.parser import text_string_to_metric_families\n"
	"for f in text_string_to_metric_families(sys.stdin.read()):\n"
	"    print('family', f.name, f.type)\n"
	"    for s in f.samples:\n"
	"        labels = ','.join('%s=%s' % kv for kv in sorted(s.labels.items()))\n"
	"        v = int(s.value) if s.value == int(s.value) else s.value\n"
	"        print('%s{%s} %s' % (s.name, labels, v))\n";

static struct test_daemon d;
static struct ops_pair pair;

static void
wait_ready(struct proc *p, const char *prefix)
{
	char line[256];
	if (proc_line(p, prefix, line, sizeof(line), TH_WAIT_MS)) {
		char rest[512] = "";
		(void) proc_line(p, "", rest, sizeof(rest), 100);
		ck_abort_msg("no '%s' (%s)", prefix, rest);
	}
}

/* rpmactl metrics through the parser: its lines (free them) */
static char *
parsed_metrics(void)
{
	struct run r;
	ck_assert_int_eq(rpmactl(&r, d.socket, "metrics", NULL), 0);
	ck_assert_msg(r.status == 0, "rpmactl metrics: exit %d: %s",
			r.status, r.err);
	char path[400];
	(void) snprintf(path, sizeof(path), "%s/metrics.prom", d.dir);
	ck_assert_int_eq(write_text(path, r.out), 0);
	run_free(&r);

	char cmd[1024];
	(void) snprintf(cmd, sizeof(cmd), "exec /usr/bin/python3 -c \"$0\" "
			"< '%s'", path);
	char *argv[] = { "sh", "-c", cmd, (char *)parser, NULL };
	ck_assert_int_eq(run_cmd(&r, argv, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_msg(r.status == 0, "the parser refused the text: %s",
			r.err);
	char *out = r.out;
	free(r.err);
	return out;
}

/* the whole line `want` is in `text` */
static void
expect_line(const char *text, const char *want)
{
	size_t n = strlen(want);
	for (const char *p = text; (p = strstr(p, want)) != NULL; p++) {
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' ||
				p[n] == '\0'))
			return;
	}
	ck_abort_msg("no line '%s' in:\n%s", want, text);
}

static void
setup_pair(void)
{
	ck_assert_int_eq(test_daemon_start_cfg(&d, NULL), 0);
	char pmem[512];
	(void) snprintf(pmem, sizeof(pmem), "%s/pmem.file", d.dir);
	ops_pair_start(&pair, pmem);
	wait_ready(&pair.client, "ready client");
	wait_ready(&pair.server, "ready server");
}

static void
teardown_pair(void)
{
	ops_pair_stop(&pair);
	ck_assert_int_eq(test_daemon_stop(&d), 0);
}

START_TEST(test_pair)
{
	char *m = parsed_metrics();
	char root[64], line[256];
	(void) snprintf(root, sizeof(root), "uid=0,user=root");

	/* every family with its type */
	static const char *const families[] = {
		"rpmad_up gauge", "rpmad_info gauge",
		"rpmad_uptime_seconds gauge", "rpmad_clients gauge",
		"rpmad_peers gauge", "rpmad_registrations gauge",
		"rpmad_pinned_bytes gauge", "rpmad_endpoints gauge",
		"rpmad_connection_requests gauge", "rpmad_connections gauge",
		"rpmad_limit gauge",
		/* the parser names counters without _total */
		"rpmad_operations counter", "rpmad_operation_bytes counter",
		"rpmad_operation_errors counter",
		"rpmad_served_operations counter",
		"rpmad_served_bytes counter", "rpmad_refusals counter",
		"rpmad_evictions counter", "rpmad_control_requests counter",
		"rpmad_control_request_errors counter",
		"rpmad_sessions counter", "rpmad_config_reloads counter",
		"rpmad_flush_latency_seconds histogram",
	};
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		(void) snprintf(line, sizeof(line), "family %s", families[i]);
		expect_line(m, line);
	}
	expect_line(m, "rpmad_up{} 1");
	expect_line(m, "rpmad_info{transport=tcp,version=" PACKAGE_VERSION
			"} 1");

	/* the two processes (not rpmactl) and what they hold, per user */
	static const struct { const char *name; long v; } held[] = {
		{ "rpmad_clients", 2 },
		{ "rpmad_peers", 2 },
		{ "rpmad_registrations", 3 },
		/* server: 64 KiB file + 8 KiB messages; client: 16 KiB */
		{ "rpmad_pinned_bytes", 88 * 1024 },
		{ "rpmad_endpoints", 1 },
		{ "rpmad_connection_requests", 0 },
	};
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++) {
		(void) snprintf(line, sizeof(line), "%s{%s} %ld",
				held[i].name, root, held[i].v);
		expect_line(m, line);
	}
	(void) snprintf(line, sizeof(line),
			"rpmad_connections{state=established,%s} 2", root);
	expect_line(m, line);

	/* the client's operations, posted and served on this one rpmad */
	expect_line(m, "rpmad_operations_total{kind=write} 2");
	expect_line(m, "rpmad_operations_total{kind=read} 1");
	expect_line(m, "rpmad_operations_total{kind=flush} 1");
	expect_line(m, "rpmad_operations_total{kind=send} 1");
	expect_line(m, "rpmad_operations_total{kind=recv} 1");
	expect_line(m, "rpmad_operation_bytes_total{kind=write} 8192");
	expect_line(m, "rpmad_operation_bytes_total{kind=read} 4096");
	expect_line(m, "rpmad_operation_errors_total{} 0");
	expect_line(m, "rpmad_served_operations_total{kind=write} 2");
	expect_line(m, "rpmad_served_operations_total{kind=flush} 1");
	expect_line(m, "rpmad_served_bytes_total{kind=write} 8192");
	expect_line(m, "rpmad_refusals_total{limit=max_registered_bytes} 0");
	expect_line(m, "rpmad_evictions_total{} 0");
	/* the one flush: counted, in the +Inf bucket, and its time summed */
	expect_line(m, "rpmad_flush_latency_seconds_count{} 1");
	expect_line(m, "rpmad_flush_latency_seconds_bucket{le=+Inf} 1");
	ck_assert_ptr_nonnull(strstr(m, "rpmad_flush_latency_seconds_sum{} "));
	ck_assert_ptr_null(strstr(m, "rpmad_flush_latency_seconds_sum{} 0\n"));
	free(m);
}
END_TEST

/* a registration over max_registered_bytes is counted as a refusal */
START_TEST(test_refusal)
{
	ck_assert_int_eq(test_daemon_start_cfg(&d,
					 "max_registered_bytes = 8192\n"),
			0);
	/* three registrations of a page each: the third is refused */
	char *argv[] = { (char *) ops_peer_bin(), "many", "127.0.0.1", "3",
		NULL };
	struct run r;
	ck_assert_int_eq(run_cmd(&r, argv, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_msg(r.status != 0, "ops_peer many 3 passed the limit");
	run_free(&r);
	char *m = parsed_metrics();
	expect_line(m, "rpmad_refusals_total{limit=max_registered_bytes} 1");
	expect_line(m, "rpmad_refusals_total{limit=max_connections} 0");
	expect_line(m, "rpmad_limit{limit=max_registered_bytes} 8192");
	/* nobody holds anything now: no per-user samples */
	ck_assert_ptr_null(strstr(m, "rpmad_clients{"));
	expect_line(m, "rpmad_flush_latency_seconds_count{} 0");
	free(m);
	ck_assert_int_eq(test_daemon_stop(&d), 0);
}
END_TEST

/* the textfile units are valid units (when systemd-analyze is here) */
START_TEST(test_units)
{
	if (!th_ck_have_program("systemd-analyze"))
		return;
	char *argv[] = { "systemd-analyze", "verify", "--man=no",
		(char *) builddir_path("systemd/rpmad-metrics.service"),
		(char *) srcdir_path("systemd/rpmad-metrics.timer"), NULL };
	struct run r;
	ck_assert_int_eq(run_cmd(&r, argv, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	/* it also complains about the binaries not being installed yet */
	ck_assert_ptr_null(strstr(r.err, "Unknown key"));
	ck_assert_ptr_null(strstr(r.err, "nknown section"));
	ck_assert_ptr_null(strstr(r.err, "Failed to parse"));
	ck_assert_ptr_null(strstr(r.err, "Invalid"));
	run_free(&r);
}
END_TEST

int
main(void)
{
	const TTest *const tc_pair[] = { test_pair, NULL };
	const TTest *const tc_refusal[] = { test_refusal, NULL };
	const TTest *const tc_units[] = { test_units, NULL };
	const struct th_tcase tcases[] = {
		{ "pair", .tests = tc_pair, .timeout = 60, .setup = setup_pair,
				.teardown = teardown_pair },
		{ "refusal", .tests = tc_refusal, .timeout = 60 },
		{ "units", .tests = tc_units, .timeout = 60 },
	};
	return check_run(th_suite("metrics", tcases, TH_N(tcases)), CK_NORMAL);
}
