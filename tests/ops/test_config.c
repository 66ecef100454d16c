// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_config.c -- rpmad's configuration file: a bad file stops rpmad from
 * starting (every problem named with file and line), --check-config, the
 * sample file, reloads on SIGHUP (a good file changes what it says; a bad
 * one keeps the settings in use and says so), options winning over the file
 */

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "librpma.h"

/* every key of rpmad.conf; each must be in the sample and the man page */
static const char *const keys[] = {
	"socket", "socket_group", "socket_mode", "transport", "log_level",
	"poll_spin_us", "tcp_timeout_ms", "rnr_timeout_ms", "memory_timeout_ms",
	"reply_timeout_ms",
	"setup_timeout_ms", "accept_timeout_ms", "file_user", "max_connections",
	"max_endpoints", "max_registered_bytes", "max_pending_requests",
	"max_descriptors", "allow_connect", "allow_listen", "allow_users",
	"allow_groups", "admin_groups", "weight", "max_bandwidth",
	"drain_timeout_s", "tls", "tls_psk_file",
};

static const char *
rpmad_bin(void)
{
	const char *bin = getenv("RPMAD_BIN");
	return bin && *bin ? bin : "rpmad";
}

/* rpmad with these arguments, expected to exit by itself */
static void
run_rpmad(struct run *r, char *const args[])
{
	char *argv[16] = { (char *)rpmad_bin() };
	int argc = 1;
	for (int i = 0; args[i] && argc < 15; i++)
		argv[argc++] = args[i];
	argv[argc] = NULL;
	ck_assert_int_eq(run_cmd(r, argv, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
}

static char dir[256];

static void
setup_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	(void) snprintf(dir, sizeof(dir), "%s/rpmad-conf.XXXXXX",
			tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown_dir(void)
{
	char *rm[] = { "rm", "-rf", dir, NULL };
	struct run r;
	if (run_cmd(&r, rm, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS) == 0)
		run_free(&r);
}

static const char *
tmp_file(const char *name, const char *text)
{
	static char path[512];
	(void) snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(write_text(path, text), 0);
	return path;
}

START_TEST(test_bad_file_refused)
{
	char conf[512];
	(void) snprintf(conf, sizeof(conf), "%s", tmp_file("bad.conf",
			"# a comment\n"
			"bogus = 1\n"
			"max_connections = -3\n"
			"log_level = loud\n"
			"no equals sign here\n"
			"socket = relative/path\n"
			"max_endpoints = 010\n"
			"allow_users = root, no-such-user-here\n"
			"max_registered_bytes = 64K\n"));
	char sock[600];
	(void) snprintf(sock, sizeof(sock), "%s/never.sock", dir);
	struct run r;
	char *args[] = { "--foreground", "--transport", "tcp", "--socket",
		sock, "--config", conf, NULL };
	run_rpmad(&r, args);
	ck_assert_int_eq(r.status, 78);	/* EX_CONFIG */
	static const char *const want[] = {
		":2: unknown key 'bogus'",
		":3: bad value '-3' for max_connections",
		":4: bad value 'loud' for log_level",
		":5: expected 'key = value'",
		":6: bad value 'relative/path' for socket",
		":8: unknown user 'no-such-user-here'",
		"6 errors",
		"not starting",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char line[700];
		(void) snprintf(line, sizeof(line), "%s%s", want[i][0] == ':' ?
				conf : "", want[i]);
		ck_assert_msg(strstr(r.err, line), "missing \"%s\" in:\n%s",
				line, r.err);
	}
	/* 010 is ten, not eight, and fine; 64K is fine */
	ck_assert_ptr_null(strstr(r.err, ":7:"));
	ck_assert_ptr_null(strstr(r.err, ":9:"));
	ck_assert_int_ne(access(sock, F_OK), 0);
	run_free(&r);

	/* a file given by name must exist; the default one may be missing */
	char missing[600];
	(void) snprintf(missing, sizeof(missing), "%s/missing.conf", dir);
	char *args2[] = { "--check-config", "--config", missing, NULL };
	run_rpmad(&r, args2);
	ck_assert_int_eq(r.status, 78);
	ck_assert_ptr_nonnull(strstr(r.err, "cannot read"));
	run_free(&r);
}
END_TEST

START_TEST(test_check_config)
{
	struct run r;
	const char *good = tmp_file("good.conf", "log_level = info\n"
			"max_connections = 4 # trailing comment\n"
			"  allow_groups = root , 4242\n");
	char *args[] = { "--check-config", "--config", (char *)good, NULL };
	run_rpmad(&r, args);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "valid"));
	run_free(&r);

	const char *bad = tmp_file("bad2.conf", "transport = carrier-pigeon\n");
	char *args2[] = { "--check-config", "--config", (char *)bad, NULL };
	run_rpmad(&r, args2);
	ck_assert_int_eq(r.status, 78);
	ck_assert_ptr_nonnull(strstr(r.err, "bad value 'carrier-pigeon' for "
			"transport"));
	run_free(&r);

	char *args3[] = { "--bogus-option", NULL };
	run_rpmad(&r, args3);
	ck_assert_int_eq(r.status, 2);
	run_free(&r);

	/* weights: 1 to 100, for everyone and in sections */
	const char *weights = tmp_file("weights.conf", "weight = 2\n"
			"max_bandwidth = 1G\n"
			"[user 4242]\nweight = 100\nmax_bandwidth = 0\n"
			"[group 4242]\nweight = 1\nmax_bandwidth = 512M\n");
	char *args5[] = { "--check-config", "--config", (char *)weights,
		NULL };
	run_rpmad(&r, args5);
	ck_assert_msg(r.status == 0, "%s", r.err);
	run_free(&r);
	const char *heavy = tmp_file("heavy.conf", "weight = 0\n"
			"[user 4242]\nweight = 101\nmax_bandwidth = fast\n");
	char *args6[] = { "--check-config", "--config", (char *)heavy, NULL };
	run_rpmad(&r, args6);
	ck_assert_int_eq(r.status, 78);
	ck_assert_msg(strstr(r.err, ":1: bad value '0' for weight") &&
			strstr(r.err, ":3: bad value '101' for weight") &&
			strstr(r.err, ":4: bad value 'fast' for "
				"max_bandwidth"), "%s", r.err);
	run_free(&r);

	/* the default file: on a host without one, say that defaults apply */
	if (access("/etc/rpmad/rpmad.conf", F_OK) != 0 && errno == ENOENT) {
		char *args4[] = { "--check-config", NULL };
		run_rpmad(&r, args4);
		ck_assert_msg(r.status == 0, "%s", r.err);
		ck_assert_msg(strstr(r.out, "/etc/rpmad/rpmad.conf: absent; "
				"the built-in defaults apply"), "%s", r.out);
		run_free(&r);
	}
}
END_TEST

/* The sample as shipped, and with every setting uncommented, is valid. */
START_TEST(test_sample_file)
{
	const char *sample = srcdir_path("etc/rpmad.conf.example");
	char *text = read_text(sample);
	ck_assert_ptr_nonnull(text);

	struct run r;
	char *args[] = { "--check-config", "--config", (char *)sample, NULL };
	run_rpmad(&r, args);
	ck_assert_msg(r.status == 0, "%s", r.err);
	run_free(&r);

	/* "#key = value" lines are the settings */
	char *all = calloc(1, strlen(text) + 1);
	ck_assert_ptr_nonnull(all);
	size_t settings = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '#' && line[1] >= 'a' && line[1] <= 'z' &&
				strstr(line, " =")) {
			strcat(all, line + 1);
			strcat(all, "\n");
			settings++;
		}
	}
	ck_assert_uint_eq(settings, sizeof(keys) / sizeof(keys[0]));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char want[64];
		(void) snprintf(want, sizeof(want), "%s =", keys[i]);
		ck_assert_msg(count_lines_with(all, want, NULL) == 1,
				"the sample does not show %s", keys[i]);
	}
	const char *conf = tmp_file("sample-all.conf", all);
	char *args2[] = { "--check-config", "--config", (char *)conf, NULL };
	run_rpmad(&r, args2);
	ck_assert_msg(r.status == 0, "uncommented sample: %s", r.err);
	run_free(&r);
	free(all);
	free(text);

	/* and rpmad.conf(5) describes every key */
	char *man = read_text(srcdir_path("man/rpmad.conf.5"));
	ck_assert_ptr_nonnull(man);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char want[64];
		(void) snprintf(want, sizeof(want), ".B %s\n", keys[i]);
		ck_assert_msg(strstr(man, want), "rpmad.conf(5) lacks %s",
				keys[i]);
	}
	free(man);
}
END_TEST

/*
 * max_registered_bytes has one default, and every document says which:
 * what the binary uses (rpmactl status of an rpmad without settings) is a
 * quarter of the host's physical memory, the sample shows it as "25%"
 * (which means the same figure when set), and each page that speaks of
 * the default names it in the same words.
 */
START_TEST(test_registered_default_documented)
{
	struct test_daemon od;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	char quarter[32];
	(void) snprintf(quarter, sizeof(quarter), "%lld",
			(long long)pages * psize / 4);
	const char *const configs[] = { NULL, "max_registered_bytes = 25%\n" };
	for (size_t i = 0; i < 2; i++) {
		ck_assert_int_eq(test_daemon_start_cfg(&od, configs[i]), 0);
		struct flat f;
		rpmactl_json(&f, od.socket, "status");
		const char *v = flat_get(&f,
				"limits_per_user.max_registered_bytes");
		ck_assert_msg(v && strcmp(v, quarter) == 0, "%s: %s, not %s",
				configs[i] ? configs[i] : "(defaults)", v, quarter);
		flat_free(&f);
		ck_assert_int_eq(test_daemon_stop(&od), 0);
	}

	char *sample = read_text(srcdir_path("etc/rpmad.conf.example"));
	ck_assert_ptr_nonnull(sample);
	ck_assert_uint_eq(count_lines_with(sample, "#max_registered_bytes = ",
			NULL), 1);
	ck_assert_uint_eq(count_lines_with(sample,
			"#max_registered_bytes = 25%", NULL), 1);
	free(sample);

	static const char *const docs[] = {
		"man/rpmad.8",
		"man/rpmad.conf.5",
		"man/librpmaclient.7",
		"docs/internals.md",
		"docs/operations.md",
		"etc/rpmad.conf.example",
		"docs/containers.md",
		"systemd/rpmad.service.in",
	};
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		char *text = read_text(srcdir_path(docs[i]));
		ck_assert_ptr_nonnull(text);
		/* one line of prose: line breaks and comment marks go */
		char *out = text;
		for (const char *in = text; *in; in++) {
			if (*in == '\n') {
				while (in[1] == '#' || in[1] == ' ')
					in++;
				*out++ = ' ';
			} else {
				*out++ = *in;
			}
		}
		*out = '\0';
		ck_assert_msg(strstr(text, "a quarter of the host's physical "
				"memory"), "%s does not name the default of "
				"max_registered_bytes", docs[i]);
		free(text);
	}
}
END_TEST

/* ------------------------------------------------------------ reloads */

static struct test_daemon d;

static void
expect(const struct flat *f, const char *path, const char *want)
{
	const char *v = flat_get(f, "%s", path);
	ck_assert_msg(v && strcmp(v, want) == 0, "%s: %s, expected %s", path,
			v ? v : "(missing)", want);
}

/* How many connection requests this process can make now (up to 4). */
static int
conn_reqs_allowed(void)
{
	struct ibv_context *dev;
	struct rpma_peer *peer;
	ck_assert_int_eq(rpma_utils_get_ibv_context("127.0.0.1",
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev), 0);
	ck_assert_int_eq(rpma_peer_new(dev, &peer), 0);
	char port[16];
	ck_assert_int_eq(it_free_port(port, sizeof(port)), 0);
	struct rpma_conn_req *reqs[4] = { NULL };
	int n = 0;
	while (n < 4) {
		int ret = rpma_conn_req_new(peer, "127.0.0.1", port, NULL,
				&reqs[n]);
		if (ret) {
			ck_assert_int_eq(ret, RPMA_E_NOMEM);
			break;
		}
		n++;
	}
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(rpma_conn_req_delete(&reqs[i]), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
	return n;
}

static void
hup_and_wait(const char *log_text)
{
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	ck_assert_msg(wait_text(d.log, log_text, TH_WAIT_MS),
			"no \"%s\" in the log", log_text);
}

START_TEST(test_reload)
{
	const char *cfg = "log_level = notice\n"
			  "max_connections = 1\n"
			  "max_registered_bytes = memlock\n";
	ck_assert_int_eq(test_daemon_start_cfg(&d, cfg), 0);
	struct flat f;
	rpmactl_json(&f, d.socket, "status");
	expect(&f, "log_level", "notice");
	expect(&f, "limits_per_user.max_connections", "1");
	expect(&f, "reloads", "0");
	flat_free(&f);
	ck_assert_int_eq(conn_reqs_allowed(), 1);

	/* a good file: applied, and the log says what changed */
	ck_assert_int_eq(write_text(d.config, "log_level = debug\n"
			"max_connections = 3\nmax_registered_bytes = 1M\n"),
			0);
	hup_and_wait("applied: log_level notice -> debug, max_connections "
			"1 -> 3, max_registered_bytes memlock -> 1048576");
	rpmactl_json(&f, d.socket, "status");
	expect(&f, "log_level", "debug");
	expect(&f, "limits_per_user.max_connections", "3");
	expect(&f, "limits_per_user.max_registered_bytes", "1048576");
	expect(&f, "reloads", "1");
	expect(&f, "last_reload_failed", "false");
	flat_free(&f);
	ck_assert_int_eq(conn_reqs_allowed(), 3);
	/* debug lines appear now */
	ck_assert(wait_text(d.log, "rpmad[debug]", TH_WAIT_MS));

	/* a bad file: the settings in use stay, and rpmad says so */
	ck_assert_int_eq(write_text(d.config, "log_level = debug\n"
			"max_connections = lots\n"), 0);
	hup_and_wait("has errors; keeping the old configuration");
	char *log = read_text(d.log);
	ck_assert_ptr_nonnull(strstr(log, ":2: bad value 'lots' for "
			"max_connections"));
	free(log);
	ck_assert(test_daemon_alive(&d));
	rpmactl_json(&f, d.socket, "status");
	expect(&f, "limits_per_user.max_connections", "3");
	expect(&f, "last_reload_failed", "true");
	expect(&f, "reloads", "1");
	flat_free(&f);
	ck_assert_int_eq(conn_reqs_allowed(), 3);

	/* fixed: applied again */
	ck_assert_int_eq(write_text(d.config, "max_connections = 2\n"), 0);
	hup_and_wait("max_connections 3 -> 2");
	rpmactl_json(&f, d.socket, "status");
	expect(&f, "limits_per_user.max_connections", "2");
	expect(&f, "log_level", "notice");
	expect(&f, "last_reload_failed", "false");
	expect(&f, "reloads", "2");
	flat_free(&f);
	ck_assert_int_eq(conn_reqs_allowed(), 2);
	ck_assert_int_eq(test_daemon_stop(&d), 0);
}
END_TEST

/* --log-level (and --socket, --transport) win over the file, always. */
START_TEST(test_options_win)
{
	char *extra[] = { "--log-level", "info", NULL };
	struct test_daemon_opts o = {
		.config = "log_level = err\ntransport = verbs\n",
		.args = (const char *const *) extra,
		.cfg_log_level = true,
	};
	ck_assert_int_eq(test_daemon_start_opts(&d, &o), 0);
	struct flat f;
	rpmactl_json(&f, d.socket, "status");
	expect(&f, "log_level", "info");
	expect(&f, "transport", "tcp");
	expect(&f, "socket", d.socket);
	flat_free(&f);
	ck_assert_int_eq(write_text(d.config, "log_level = warning\n"
			"socket = /run/elsewhere.sock\n"), 0);
	hup_and_wait("applied: nothing changed");
	rpmactl_json(&f, d.socket, "status");
	expect(&f, "log_level", "info");
	expect(&f, "socket", d.socket);
	flat_free(&f);
	ck_assert_int_eq(test_daemon_stop(&d), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_file[] = { test_bad_file_refused,
		test_check_config, test_sample_file,
		test_registered_default_documented, NULL };
	const TTest *const tc_reload[] = { test_reload, test_options_win,
		NULL };
	const struct th_tcase tcases[] = {
		{ "file", .tests = tc_file, .timeout = 60, .setup = setup_dir,
				.teardown = teardown_dir },
		{ "reload", .tests = tc_reload, .timeout = 60 },
	};
	return check_run(th_suite("config", tcases, TH_N(tcases)), CK_NORMAL);
}
