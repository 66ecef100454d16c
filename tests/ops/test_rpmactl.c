// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_rpmactl.c -- rpmactl against a real rpmad holding a server and a
 * client (tests/ops/ops_peer): every command in both output forms shows
 * them right; a client killed with SIGKILL leaves every listing; evict
 * releases a live client and its next call fails; thousands of
 * registrations list page by page; exit codes.
 *
 * JSON output is checked by python3's parser (strict: one document, valid
 * UTF-8) and read back as flattened key/value pairs (th_json.h).
 */

#include <check.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "ops_pair.h"
#include "librpma.h"

#define KiB 1024

static struct test_daemon d;
static struct ops_pair pair;
static long spid, cpid;
static char comm[64];
static int port;
/* the server's file: a name that needs care */
static const char pmem_name[] = "pmem \"q\" \\ \t\xc3\xa9\xff.file";
/* the same as python's json reads it, escaped as flat_parse() prints it */
static const char pmem_name_flat[] = "pmem \"q\" \\\\ \\t\\xe9\\ufffd.file";
/* and as rpmactl's tables show it: control and invalid bytes as '?' */
static const char pmem_name_text[] = "pmem \"q\" \\ ?\xc3\xa9?.file";

/* "ready ROLE pid=N comm=C" -> N (and C into comm) */
static long
ready_pid(struct proc *p, const char *role)
{
	char prefix[32], line[256];
	(void) snprintf(prefix, sizeof(prefix), "ready %s ", role);
	if (proc_line(p, prefix, line, sizeof(line), TH_WAIT_MS)) {
		char rest[512] = "";
		(void) proc_line(p, "", rest, sizeof(rest), 100);
		ck_abort_msg("%s did not get ready (%s)", role, rest);
	}
	const char *c = strstr(line, "comm=");
	if (c)
		(void) snprintf(comm, sizeof(comm), "%s", c + 5);
	const char *pid = strstr(line, "pid=");
	ck_assert_ptr_nonnull(pid);
	return strtol(pid + 4, NULL, 10);
}

static void
setup_pair(void)
{
	ck_assert_int_eq(test_daemon_start_cfg(&d, "log_level = info\n"), 0);
	char pmem[512];
	(void) snprintf(pmem, sizeof(pmem), "%s/%s", d.dir, pmem_name);
	ops_pair_start(&pair, pmem);
	port = atoi(pair.port);
	cpid = ready_pid(&pair.client, "client");
	spid = ready_pid(&pair.server, "server");
}

static void
teardown_pair(void)
{
	ops_pair_stop(&pair);
	ck_assert_int_eq(test_daemon_stop(&d), 0);
}

/* rpmactl [--json] CMD; checks exit 0; the output (free it) */
static char *
ctl_ok(bool json, const char *cmd)
{
	struct run r;
	int ret = json ? rpmactl(&r, d.socket, "--json", cmd, NULL) :
		rpmactl(&r, d.socket, cmd, NULL);
	ck_assert_int_eq(ret, 0);
	ck_assert_msg(r.status == 0, "rpmactl %s%s: exit %d: %s",
			json ? "--json " : "", cmd, r.status, r.err);
	ck_assert_str_eq(r.err, "");
	char *out = r.out;
	free(r.err);
	return out;
}

/* rpmactl --json CMD, parsed */
static void
ctl_json(const char *cmd, struct flat *f)
{
	char *out = ctl_ok(true, cmd);
	ck_assert_msg(flat_parse(f, out) == 0, "rpmactl --json %s: not "
			"JSON", cmd);
	free(out);
}

static long
find_pid(const struct flat *f, const char *array, long pid, long nth)
{
	char p[32];
	(void) snprintf(p, sizeof(p), "%ld", pid);
	return flat_find(f, array, "pid", p, nth);
}

static long
count_pid(const struct flat *f, const char *array, long pid)
{
	long n = 0;
	while (find_pid(f, array, pid, n) >= 0)
		n++;
	return n;
}

static void
expect(const struct flat *f, const char *want, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
expect(const struct flat *f, const char *want, const char *fmt, ...)
{
	char path[256];
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	const char *v = flat_get(f, "%s", path);
	ck_assert_msg(v != NULL, "%s: missing", path);
	ck_assert_msg(strcmp(v, want) == 0, "%s: '%s', expected '%s'", path,
			v, want);
}

static void
expect_num(const struct flat *f, long long want, const char *path)
{
	char w[32];
	(void) snprintf(w, sizeof(w), "%lld", want);
	expect(f, w, "%s", path);
}

static char *
str_of(long v)
{
	static char buf[4][32];
	static int i;
	char *b = buf[i++ % 4];
	(void) snprintf(b, sizeof(buf[0]), "%ld", v);
	return b;
}

/* ------------------------------------------------------------ listings */

START_TEST(test_status)
{
	struct flat f;
	ctl_json("status", &f);
	expect(&f, d.socket, "socket");
	expect(&f, "false", "socket_activated");
	expect(&f, d.config, "config");
	expect(&f, "false", "config_absent");
	expect(&f, "tcp", "transport");
	expect(&f, "info", "log_level");
	expect(&f, "rpmad_tcp", "devices.0.name");
	/* server, client and the rpmactl asking */
	expect_num(&f, 3, "resources.clients");
	expect_num(&f, 2, "resources.peers");
	expect_num(&f, 3, "resources.mrs");
	expect_num(&f, 64 * KiB + 8 * KiB + 16 * KiB, "resources.pinned_bytes");
	expect_num(&f, 1, "resources.endpoints");
	expect_num(&f, 2, "resources.connections");
	expect_num(&f, 0, "resources.conn_requests");
	expect_num(&f, 1024, "limits_per_user.max_connections");
	/* a quarter of the host's memory by default */
	expect(&f, "false", "limits_per_user.max_registered_bytes_memlock");
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	expect_num(&f, (long long)pages * psize / 4,
			"limits_per_user.max_registered_bytes");
	expect_num(&f, 0, "refused.limits");
	ck_assert_ptr_nonnull(flat_get(&f, "uptime_ms"));
	ck_assert_ptr_nonnull(flat_get(&f, "version"));
	flat_free(&f);

	char *out = ctl_ok(false, "status");
	ck_assert_uint_eq(count_lines_with(out, "socket:", d.socket, NULL), 1);
	ck_assert_uint_eq(count_lines_with(out, "transport:", "tcp", NULL), 1);
	ck_assert_uint_eq(count_lines_with(out, "clients:", "3", NULL), 1);
	ck_assert_uint_eq(count_lines_with(out, "registrations:", "3",
			"88.0 KiB pinned", NULL), 1);
	ck_assert_uint_eq(count_lines_with(out, "endpoints:", "1", NULL), 1);
	ck_assert_uint_eq(count_lines_with(out, "connections:", "2", NULL),
			1);
	ck_assert_uint_eq(count_lines_with(out, "devices:", "rpmad_tcp",
			"3 registrations", "88.0 KiB pinned", NULL), 1);
	free(out);
}
END_TEST

START_TEST(test_clients)
{
	struct flat f;
	ctl_json("clients", &f);
	ck_assert_int_eq(flat_len(&f, "clients"), 3);
	long s = find_pid(&f, "clients", spid, 0);
	long c = find_pid(&f, "clients", cpid, 0);
	ck_assert_int_ge(s, 0);
	ck_assert_int_ge(c, 0);
	expect(&f, comm, "clients.%ld.command", s);
	expect(&f, "0", "clients.%ld.uid", s);
	expect(&f, "root", "clients.%ld.user", s);
	expect(&f, "true", "clients.%ld.admin", s);
	/* what the library said at hello: built here against librpma.h */
	expect(&f, "librpmaclient " PACKAGE_VERSION, "clients.%ld.library", s);
	expect(&f, "1.0", "clients.%ld.api", s);
	expect(&f, "1.0", "clients.%ld.api", c);
	expect(&f, "1", "clients.%ld.resources.peers", s);
	expect(&f, "2", "clients.%ld.resources.mrs", s);
	expect(&f, str_of(72 * KiB), "clients.%ld.resources.pinned_bytes", s);
	expect(&f, "1", "clients.%ld.resources.endpoints", s);
	expect(&f, "1", "clients.%ld.resources.connections", s);
	expect(&f, comm, "clients.%ld.command", c);
	expect(&f, "1", "clients.%ld.resources.mrs", c);
	expect(&f, str_of(16 * KiB), "clients.%ld.resources.pinned_bytes", c);
	expect(&f, "0", "clients.%ld.resources.endpoints", c);
	expect(&f, "1", "clients.%ld.resources.connections", c);
	ck_assert_int_ge(flat_find(&f, "clients", "command", "rpmactl", 0), 0);
	flat_free(&f);

	char *out = ctl_ok(false, "clients");
	ck_assert_ptr_nonnull(strstr(out, "PID"));
	ck_assert_uint_eq(count_lines_with(out, str_of(spid), comm, "root",
			" 1.0 ", "72.0 KiB", NULL), 1);
	ck_assert_uint_eq(count_lines_with(out, str_of(cpid), comm, "root",
			"16.0 KiB", NULL), 1);
	free(out);
}
END_TEST

START_TEST(test_connections)
{
	struct flat f;
	ctl_json("connections", &f);
	ck_assert_int_eq(flat_len(&f, "connections"), 2);
	long s = find_pid(&f, "connections", spid, 0);
	long c = find_pid(&f, "connections", cpid, 0);
	ck_assert_int_ge(s, 0);
	ck_assert_int_ge(c, 0);
	char at_port[64];
	(void) snprintf(at_port, sizeof(at_port), "127.0.0.1:%d", port);

	expect(&f, "passive", "connections.%ld.role", s);
	expect(&f, "established", "connections.%ld.state", s);
	expect(&f, comm, "connections.%ld.command", s);
	expect(&f, "tcp", "connections.%ld.transport", s);
	expect(&f, at_port, "connections.%ld.local_address", s);
	expect(&f, "1", "connections.%ld.operations.recvs", s);
	expect(&f, "64", "connections.%ld.operations.bytes_received", s);
	expect(&f, "0", "connections.%ld.operations.errors", s);

	expect(&f, "active", "connections.%ld.role", c);
	expect(&f, "established", "connections.%ld.state", c);
	expect(&f, at_port, "connections.%ld.remote_address", c);
	expect(&f, "1", "connections.%ld.operations.reads", c);
	expect(&f, str_of(4 * KiB), "connections.%ld.operations.bytes_read",
			c);
	expect(&f, "2", "connections.%ld.operations.writes", c);
	expect(&f, str_of(8 * KiB),
			"connections.%ld.operations.bytes_written", c);
	expect(&f, "1", "connections.%ld.operations.flushes", c);
	expect(&f, "1", "connections.%ld.operations.sends", c);
	expect(&f, "64", "connections.%ld.operations.bytes_sent", c);
	expect(&f, "0", "connections.%ld.operations.atomic_writes", c);
	expect(&f, "0", "connections.%ld.operations.errors", c);

	/* the two ends of one TCP pair */
	const char *c_local = flat_get(&f, "connections.%ld.local_address", c);
	ck_assert_ptr_nonnull(c_local);
	expect(&f, c_local, "connections.%ld.remote_address", s);
	const char *sq = flat_get(&f, "connections.%ld.qp_num", s);
	const char *cq = flat_get(&f, "connections.%ld.qp_num", c);
	ck_assert(sq && cq && strcmp(sq, "0") && strcmp(cq, "0"));
	char sqn[32], cqn[32];
	(void) snprintf(sqn, sizeof(sqn), "%s", sq);
	(void) snprintf(cqn, sizeof(cqn), "%s", cq);
	flat_free(&f);

	char *out = ctl_ok(false, "connections");
	ck_assert_uint_eq(count_lines_with(out, str_of(cpid), comm, "active",
			"established", cqn, at_port, "1 (4.0 KiB)",
			"2 (8.0 KiB)", "1 (64 B)", NULL), 1);
	ck_assert_uint_eq(count_lines_with(out, str_of(spid), "passive",
			"established", sqn, at_port, "1 (64 B)", NULL), 1);
	free(out);
}
END_TEST

START_TEST(test_mrs)
{
	struct flat f;
	ctl_json("mrs", &f);
	ck_assert_int_eq(flat_len(&f, "mrs"), 3);
	ck_assert_int_eq(count_pid(&f, "mrs", spid), 2);
	ck_assert_int_eq(count_pid(&f, "mrs", cpid), 1);

	char flat_path[600];
	(void) snprintf(flat_path, sizeof(flat_path), "%s/%s", d.dir,
			pmem_name_flat);
	long file = flat_find(&f, "mrs", "backing", flat_path, 0);
	ck_assert_msg(file >= 0, "no registration backed by %s", flat_path);
	expect(&f, str_of(spid), "mrs.%ld.pid", file);
	expect(&f, comm, "mrs.%ld.command", file);
	expect(&f, str_of(64 * KiB), "mrs.%ld.length", file);
	expect(&f, str_of(64 * KiB), "mrs.%ld.pinned_bytes", file);
	expect(&f, "rpmad_tcp", "mrs.%ld.device", file);
	expect(&f, "4", "mrs.%ld.usage.#", file);
	expect(&f, "READ_SRC", "mrs.%ld.usage.0", file);
	expect(&f, "WRITE_DST", "mrs.%ld.usage.1", file);
	expect(&f, "FLUSH_TYPE_VISIBILITY", "mrs.%ld.usage.2", file);
	expect(&f, "FLUSH_TYPE_PERSISTENT", "mrs.%ld.usage.3", file);
	expect(&f, str_of(RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT),
			"mrs.%ld.usage_bits", file);

	long msgs = find_pid(&f, "mrs", spid, 0);
	if (msgs == file)
		msgs = find_pid(&f, "mrs", spid, 1);
	expect(&f, "anonymous", "mrs.%ld.backing", msgs);
	expect(&f, str_of(8 * KiB), "mrs.%ld.length", msgs);
	expect(&f, "SEND", "mrs.%ld.usage.0", msgs);
	expect(&f, "RECV", "mrs.%ld.usage.1", msgs);

	long c = find_pid(&f, "mrs", cpid, 0);
	expect(&f, "anonymous", "mrs.%ld.backing", c);
	expect(&f, str_of(16 * KiB), "mrs.%ld.pinned_bytes", c);
	expect(&f, "3", "mrs.%ld.usage.#", c);
	expect(&f, "READ_DST", "mrs.%ld.usage.0", c);
	expect(&f, "WRITE_SRC", "mrs.%ld.usage.1", c);
	expect(&f, "SEND", "mrs.%ld.usage.2", c);
	flat_free(&f);

	char *out = ctl_ok(false, "mrs");
	ck_assert_uint_eq(count_lines_with(out, str_of(spid), "64.0 KiB",
			"READ_SRC|WRITE_DST|FLUSH_TYPE_VISIBILITY|"
			"FLUSH_TYPE_PERSISTENT", pmem_name_text, NULL), 1);
	ck_assert_uint_eq(count_lines_with(out, str_of(spid), "8.0 KiB",
			"SEND|RECV", "anonymous", NULL), 1);
	ck_assert_uint_eq(count_lines_with(out, str_of(cpid), "16.0 KiB",
			"READ_DST|WRITE_SRC|SEND", "anonymous", NULL), 1);
	/* nothing a terminal would act on */
	ck_assert_ptr_null(strchr(out, '\t'));
	free(out);
}
END_TEST

START_TEST(test_endpoints)
{
	struct flat f;
	ctl_json("endpoints", &f);
	ck_assert_int_eq(flat_len(&f, "endpoints"), 1);
	expect(&f, str_of(spid), "endpoints.0.pid");
	expect(&f, comm, "endpoints.0.command");
	expect(&f, "127.0.0.1", "endpoints.0.address");
	expect(&f, str_of(port), "endpoints.0.port");
	expect(&f, "tcp", "endpoints.0.transport");
	expect(&f, "0", "endpoints.0.pending_requests");
	flat_free(&f);

	char *out = ctl_ok(false, "endpoints");
	ck_assert_uint_eq(count_lines_with(out, str_of(spid), comm,
			"127.0.0.1", str_of(port), "tcp", NULL), 1);
	free(out);
}
END_TEST

START_TEST(test_stats)
{
	struct flat f;
	ctl_json("stats", &f);
	expect(&f, "1", "operations.reads");
	expect(&f, str_of(4 * KiB), "operations.bytes_read");
	expect(&f, "2", "operations.writes");
	expect(&f, str_of(8 * KiB), "operations.bytes_written");
	expect(&f, "1", "operations.flushes");
	expect(&f, "1", "operations.sends");
	expect(&f, "1", "operations.recvs");
	expect(&f, "0", "operations.errors");
	long n = flat_len(&f, "flush_latency_us");
	ck_assert_int_gt(n, 1);
	long flushes = 0;
	for (long i = 0; i < n; i++) {
		const char *v = flat_get(&f, "flush_latency_us.%ld.count", i);
		ck_assert_ptr_nonnull(v);
		flushes += strtol(v, NULL, 10);
	}
	ck_assert_int_eq(flushes, 1);
	expect(&f, "0", "flush_latency_us.0.from");
	expect(&f, "1", "flush_latency_us.0.below");
	expect(&f, "null", "flush_latency_us.%ld.below", n - 1);
	ck_assert_ptr_nonnull(flat_get(&f, "requests"));
	flat_free(&f);

	char *out = ctl_ok(false, "stats");
	/* both ends are on this rpmad: posted once, served once */
	ck_assert_uint_eq(count_lines_with(out, "write", "2", "8.0 KiB",
			NULL), 2);
	ck_assert_uint_eq(count_lines_with(out, "served write", "2",
			"8.0 KiB", NULL), 1);
	ck_assert_uint_eq(count_lines_with(out, "flush", "1", NULL), 2);
	ck_assert_uint_eq(count_lines_with(out, "served flush", "1", NULL), 1);
	/* the histogram's one flush: a row with a bar */
	ck_assert_uint_eq(count_lines_with(out, " us", "  1  #", NULL) +
			count_lines_with(out, " ms", "  1  #", NULL), 1);
	free(out);
}
END_TEST

/* ------------------------------------------------------------ going away */

/* whether any listing still names pid */
static bool
listed_anywhere(long pid)
{
	static const char *const cmds[] = { "clients", "connections", "mrs",
		"endpoints" };
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct flat f;
		ctl_json(cmds[i], &f);
		bool found = find_pid(&f, cmds[i], pid, 0) >= 0;
		flat_free(&f);
		char *out = ctl_ok(false, cmds[i]);
		found |= count_lines_with(out, str_of(pid), NULL) > 0;
		free(out);
		if (found)
			return true;
	}
	return false;
}

START_TEST(test_sigkill_leaves_listings)
{
	ck_assert(listed_anywhere(cpid));
	(void) proc_end(&pair.client, SIGKILL);
	/* rpmad sees the socket close at once; allow for a loaded machine */
	bool gone = false;
	for (int i = 0; i < 50 && !gone; i++) {
		gone = !listed_anywhere(cpid);
		if (!gone)
			it_sleep_ms(100);
	}
	ck_assert_msg(gone, "pid %ld is still listed after SIGKILL", cpid);

	struct flat f;
	ctl_json("status", &f);
	expect_num(&f, 2, "resources.mrs");
	expect_num(&f, 72 * KiB, "resources.pinned_bytes");
	expect_num(&f, 1, "resources.connections");
	flat_free(&f);
	/* the server's end is still its own, and no longer established */
	ctl_json("connections", &f);
	ck_assert_int_eq(flat_len(&f, "connections"), 1);
	expect(&f, str_of(spid), "connections.0.pid");
	const char *state = flat_get(&f, "connections.0.state");
	ck_assert_ptr_nonnull(state);
	ck_assert_str_ne(state, "established");
	flat_free(&f);
}
END_TEST

START_TEST(test_evict)
{
	struct run r;
	ck_assert_int_eq(rpmactl(&r, d.socket, "evict", str_of(spid), NULL),
			0);
	ck_assert_msg(r.status == 0, "evict: %d %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, str_of(spid)));
	run_free(&r);
	ck_assert(!listed_anywhere(spid));
	ck_assert(wait_text(d.log, "evicted by", TH_WAIT_MS));

	struct flat f;
	ctl_json("status", &f);
	expect_num(&f, 1, "resources.mrs");
	expect_num(&f, 0, "resources.endpoints");
	expect_num(&f, 1, "evictions");
	flat_free(&f);

	/* the evicted process lives on; its next call fails */
	ck_assert_int_eq(proc_send(&pair.server, "reg\n"), 0);
	char line[128];
	ck_assert_int_eq(proc_line(&pair.server, "reg ", line, sizeof(line),
					 TH_WAIT_MS),
			0);
	char want[32];
	(void) snprintf(want, sizeof(want), "reg %d", RPMA_E_PROVIDER);
	ck_assert_str_eq(line, want);

	/* the client stays, its connection lost */
	ck_assert_int_eq(proc_send(&pair.client, "reg\n"), 0);
	ck_assert_int_eq(proc_line(&pair.client, "reg ", line, sizeof(line),
					 TH_WAIT_MS),
			0);
	ck_assert_str_eq(line, "reg 0");

	/* nobody there: refused (1); JSON form too */
	ck_assert_int_eq(rpmactl(&r, d.socket, "--json", "evict",
			str_of(spid), NULL), 0);
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	ck_assert_ptr_nonnull(strstr(r.err, "no client with pid"));
	run_free(&r);
	ck_assert_int_eq(rpmactl(&r, d.socket, "--json", "evict",
			str_of(cpid), NULL), 0);
	ck_assert_int_eq(r.status, 0);
	struct flat g;
	ck_assert_int_eq(flat_parse(&g, r.out), 0);
	expect(&g, str_of(cpid), "evicted");
	flat_free(&g);
	run_free(&r);
}
END_TEST

/* ------------------------------------------------------------ paging */

#define MANY 2000

static struct proc many;
static long mpid;

static void
setup_many(void)
{
	ck_assert_int_eq(test_daemon_start_cfg(&d, NULL), 0);
	char n[16];
	(void) snprintf(n, sizeof(n), "%d", MANY);
	char *argv[] = { (char *) ops_peer_bin(), "many", "127.0.0.1", n,
		NULL };
	ck_assert_int_eq(proc_start(&many, argv, NULL, NULL), 0);
	mpid = ready_pid(&many, "many");
}

static void
teardown_many(void)
{
	(void) proc_end(&many, SIGKILL);
	ck_assert_int_eq(test_daemon_stop(&d), 0);
}

START_TEST(test_thousands_of_registrations)
{
	struct flat f;
	ctl_json("status", &f);
	expect_num(&f, MANY, "resources.mrs");
	expect_num(&f, (long long)MANY * 4 * KiB, "resources.pinned_bytes");
	flat_free(&f);

	/* rpmad's own page size, then tiny pages: the same listing */
	static const char *const sizes[] = { NULL, "7" };
	for (size_t i = 0; i < 2; i++) {
		struct run r;
		if (sizes[i])
			ck_assert_int_eq(rpmactl(&r, d.socket, "--json",
					"--page-size", sizes[i], "mrs", NULL),
					0);
		else
			ck_assert_int_eq(rpmactl(&r, d.socket, "--json", "mrs",
					NULL), 0);
		ck_assert_msg(r.status == 0, "mrs: %s", r.err);
		ck_assert_int_eq(flat_parse(&f, r.out), 0);
		run_free(&r);
		ck_assert_int_eq(flat_len(&f, "mrs"), MANY);
		/* every registration once, in the order they were made */
		unsigned long long prev = 0;
		for (long k = 0; k < MANY; k++) {
			expect(&f, str_of(mpid), "mrs.%ld.pid", k);
			expect(&f, "100", "mrs.%ld.length", k);
			const char *a = flat_get(&f, "mrs.%ld.addr", k);
			ck_assert_ptr_nonnull(a);
			unsigned long long addr = strtoull(a, NULL, 10);
			ck_assert_uint_eq(addr, prev ? prev + 4096 : addr);
			prev = addr;
		}
		flat_free(&f);
	}

	char *out = ctl_ok(false, "mrs");
	ck_assert_uint_eq(count_lines_with(out, str_of(mpid), "100 B",
			"READ_SRC", "anonymous", NULL), MANY);
	free(out);

	/* small pages for the other listings too */
	struct run r;
	ck_assert_int_eq(rpmactl(&r, d.socket, "--json", "--page-size", "1",
			"clients", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(flat_parse(&f, r.out), 0);
	ck_assert_int_eq(flat_len(&f, "clients"), 2);
	ck_assert_int_ge(find_pid(&f, "clients", mpid, 0), 0);
	flat_free(&f);
	run_free(&r);
}
END_TEST

/* ------------------------------------------------------------ exit codes */

START_TEST(test_exit_codes)
{
	struct run r;
	/* 3: nobody at the socket */
	ck_assert_int_eq(rpmactl(&r, "/nonexistent/rpmad.sock", "status",
			NULL), 0);
	ck_assert_int_eq(r.status, 3);
	ck_assert_ptr_nonnull(strstr(r.err, "cannot reach rpmad at "
			"/nonexistent/rpmad.sock"));
	ck_assert_str_eq(r.out, "");
	run_free(&r);

	/* 2: usage */
	static const char *const bad[][3] = {
		{ "frobnicate", NULL, NULL },
		{ "evict", NULL, NULL },
		{ "evict", "abc", NULL },
		{ "evict", "-5", NULL },
		{ "status", "extra", NULL },
		{ "--timeout", "0", "status" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(rpmactl(&r, "/nonexistent/rpmad.sock",
				bad[i][0], bad[i][1], bad[i][2], NULL), 0);
		ck_assert_msg(r.status == 2, "%s %s: exit %d", bad[i][0],
				bad[i][1] ? bad[i][1] : "", r.status);
		run_free(&r);
	}
	const char *bin = getenv("RPMACTL_BIN");
	char *none[] = { (char *)(bin ? bin : "rpmactl"), NULL };
	ck_assert_int_eq(run_cmd(&r, none, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "usage:"));
	run_free(&r);
	char *help[] = { (char *)(bin ? bin : "rpmactl"), "--help", NULL };
	ck_assert_int_eq(run_cmd(&r, help, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "exit status"));
	run_free(&r);

	/* $RPMAD_SOCKET is the default socket */
	ck_assert_int_eq(test_daemon_start_cfg(&d, NULL), 0);
	char *plain[] = { (char *)(bin ? bin : "rpmactl"), "status", NULL };
	ck_assert_int_eq(run_cmd(&r, plain, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, d.socket));
	run_free(&r);
	/* 3: rpmad went away */
	(void) test_daemon_stop(&d);
	ck_assert_int_eq(run_cmd(&r, plain, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_int_eq(r.status, 3);
	run_free(&r);
}
END_TEST

int
main(void)
{
	const TTest *const tc_pair[] = { test_status, test_clients,
		test_connections, test_mrs, test_endpoints, test_stats,
		test_sigkill_leaves_listings, test_evict, NULL };
	const TTest *const tc_many[] = { test_thousands_of_registrations,
		NULL };
	const TTest *const tc_exit[] = { test_exit_codes, NULL };
	const struct th_tcase tcases[] = {
		{ "pair", .tests = tc_pair, .timeout = 60, .setup = setup_pair,
				.teardown = teardown_pair },
		/*
		 * 2000 registrations made, listed twice (once in 286 pages)
		 * and parsed: about two minutes of CPU under ASan, which two
		 * loaded cores stretch further
		 */
		{ "many", .tests = tc_many, .timeout = 300, .setup = setup_many,
				.teardown = teardown_many },
		{ "exit", .tests = tc_exit, .timeout = 60 },
	};
	return check_run(th_suite("rpmactl", tcases, TH_N(tcases)), CK_NORMAL);
}
