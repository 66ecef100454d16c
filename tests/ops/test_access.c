// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_access.c -- limits per user (max_connections, max_endpoints,
 * max_registered_bytes): RPMA_E_NOMEM and rpmad's reason in the client's
 * log), who may use rpmad (allow_users, allow_groups: others get
 * RPMA_E_PROVIDER and rpmad logs the refusal), who may administer it
 * (admin_groups: rpmactl exits 4 with a clear message for anyone else),
 * and the socket's own mode.
 *
 * Other users are played by forked children that drop to uid 65534 with
 * chosen groups (the tests run as root; without root they skip).
 */

#include <check.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "librpma.h"
#include "th_child.h"
#include "th_logcap.h"
#include "th_peer.h"

#define NOBODY 65534
#define KiB 1024

static struct test_daemon d;

static void
stop(void)
{
	ck_assert_int_eq(test_daemon_stop(&d), 0);
}

/* ------------------------------------------------------------ limits */

START_TEST(test_max_connections)
{
	th_log_daemon_start(&d, "max_connections = 2\n");
	struct rpma_peer *peer = th_local_peer();
	ck_assert_ptr_nonnull(peer);
	char port[16];
	ck_assert_int_eq(it_free_port(port, sizeof(port)), 0);
	struct rpma_conn_req *req[3] = { NULL };
	ck_assert_int_eq(rpma_conn_req_new(peer, "127.0.0.1", port, NULL,
			&req[0]), 0);
	ck_assert_int_eq(rpma_conn_req_new(peer, "127.0.0.1", port, NULL,
			&req[1]), 0);
	ck_assert_int_eq(rpma_conn_req_new(peer, "127.0.0.1", port, NULL,
			&req[2]), RPMA_E_NOMEM);
	ck_assert_ptr_null(req[2]);
	ck_assert_msg(strstr(th_logged,
				      "uid 0 has 2 connections (all its "
				      "clients together), its limit: "
				      "max_connections = 2"),
			"th_logged: %s", th_logged);
	/* a freed slot is usable again */
	ck_assert_int_eq(rpma_conn_req_delete(&req[0]), 0);
	ck_assert_int_eq(rpma_conn_req_new(peer, "127.0.0.1", port, NULL,
			&req[2]), 0);
	ck_assert_int_eq(rpma_conn_req_delete(&req[1]), 0);
	ck_assert_int_eq(rpma_conn_req_delete(&req[2]), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
	stop();
}
END_TEST

START_TEST(test_max_endpoints)
{
	th_log_daemon_start(&d, "max_endpoints = 1\n");
	struct rpma_peer *peer = th_local_peer();
	ck_assert_ptr_nonnull(peer);
	char p1[16], p2[16];
	ck_assert_int_eq(it_free_port(p1, sizeof(p1)), 0);
	ck_assert_int_eq(it_free_port(p2, sizeof(p2)), 0);
	struct rpma_ep *ep = NULL, *ep2 = NULL;
	ck_assert_int_eq(rpma_ep_listen(peer, "127.0.0.1", p1, &ep), 0);
	ck_assert_int_eq(rpma_ep_listen(peer, "127.0.0.1", p2, &ep2),
			RPMA_E_NOMEM);
	ck_assert_msg(strstr(th_logged,
				      "uid 0 has 1 endpoints (all its clients "
				      "together), its limit: "
				      "max_endpoints = 1"),
			"th_logged: %s", th_logged);
	ck_assert_int_eq(rpma_ep_shutdown(&ep), 0);
	ck_assert_int_eq(rpma_ep_listen(peer, "127.0.0.1", p2, &ep2), 0);
	ck_assert_int_eq(rpma_ep_shutdown(&ep2), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
	stop();
}
END_TEST

START_TEST(test_max_registered_bytes)
{
	th_log_daemon_start(&d, "max_registered_bytes = 16K\n");
	struct rpma_peer *peer = th_local_peer();
	ck_assert_ptr_nonnull(peer);
	char *buf = aligned_alloc(4 * KiB, 32 * KiB);
	ck_assert_ptr_nonnull(buf);
	memset(buf, 1, 32 * KiB);
	struct rpma_mr_local *a = NULL, *b = NULL, *c = NULL;
	ck_assert_int_eq(rpma_mr_reg(peer, buf, 8 * KiB,
			RPMA_MR_USAGE_READ_SRC, &a), 0);
	/* 100 bytes across a page boundary pin two pages: 16 KiB in all */
	ck_assert_int_eq(rpma_mr_reg(peer, buf + 12 * KiB - 50, 100,
			RPMA_MR_USAGE_READ_SRC, &b), 0);
	ck_assert_int_eq(rpma_mr_reg(peer, buf + 16 * KiB, 1,
			RPMA_MR_USAGE_READ_SRC, &c), RPMA_E_NOMEM);
	ck_assert_msg(strstr(th_logged,
				      "over its limit: max_registered_bytes = "
				      "16384"),
			"th_logged: %s", th_logged);
	ck_assert_int_eq(rpma_mr_dereg(&b), 0);
	ck_assert_int_eq(rpma_mr_reg(peer, buf + 16 * KiB, 1,
			RPMA_MR_USAGE_READ_SRC, &c), 0);
	ck_assert_int_eq(rpma_mr_dereg(&c), 0);
	ck_assert_int_eq(rpma_mr_dereg(&a), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
	free(buf);
	stop();
}
END_TEST

/* ------------------------------------------------------------ other users */

/*
 * In a child running as uid NOBODY with the given groups: make a peer.
 * Returns the librpma result (or 1 when the child failed otherwise); the
 * child's librpma log goes to `log` (may be NULL).
 */
static int
as_nobody(const gid_t *groups, size_t n, char *log, size_t loglen)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		(void) close(p[0]);
		if (setgroups(n, groups) || setgid(NOBODY) || setuid(NOBODY))
			_exit(1);
		th_log_clear();
		struct ibv_context *dev;
		struct rpma_peer *peer = NULL;
		int ret = rpma_utils_get_ibv_context("127.0.0.1",
				RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev);
		if (ret == 0)
			ret = rpma_peer_new(dev, &peer);
		if (peer)
			(void) rpma_peer_delete(&peer);
		(void) write(p[1], th_logged, strlen(th_logged));
		_exit(ret == 0 ? 0 : ret == RPMA_E_PROVIDER ? 2 : 3);
	}
	(void) close(p[1]);
	char buf[4096];
	ssize_t got = read(p[0], buf, sizeof(buf) - 1);
	buf[got > 0 ? got : 0] = '\0';
	(void) close(p[0]);
	if (log)
		(void) snprintf(log, loglen, "%s", buf);
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	switch (WEXITSTATUS(status)) {
	case 0:
		return 0;
	case 2:
		return RPMA_E_PROVIDER;
	default:
		return 1;
	}
}

START_TEST(test_allow_lists)
{
	if (!child_can_play_users())
		return;
	th_log_daemon_start(&d,
			"socket_mode = 0666\nlog_level = info\n"
			"allow_users = 12345\nallow_groups = 4242\n");

	/* neither listed nor in a listed group: refused */
	char log[4096];
	ck_assert_int_eq(as_nobody(NULL, 0, log, sizeof(log)),
			RPMA_E_PROVIDER);
	ck_assert_msg(strstr(log, "uid 65534 may not use this rpmad "
			"(allow_users/allow_groups)"), "client log: %s", log);
	ck_assert(wait_text(d.log,
			"refused: uid 65534 (gid 65534) is not in "
			"allow_users and has no group of allow_groups",
			TH_WAIT_MS));

	/* a supplementary group of allow_groups: admitted */
	gid_t g = 4242;
	ck_assert_int_eq(as_nobody(&g, 1, log, sizeof(log)), 0);
	ck_assert(wait_text(d.log, "allowed: group 4242 in allow_groups",
			TH_WAIT_MS));

	/* root always */
	struct rpma_peer *peer = th_local_peer();
	ck_assert_ptr_nonnull(peer);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
	stop();

	/* listed by uid */
	th_log_daemon_start(&d, "socket_mode = 0666\nallow_users = 65534\n");
	ck_assert_int_eq(as_nobody(NULL, 0, NULL, 0), 0);
	stop();
}
END_TEST

/* a copy of rpmactl other users can run (the build tree may be closed) */
static const char *
rpmactl_copy(void)
{
	static char path[400];
	(void) snprintf(path, sizeof(path), "%s/rpmactl", d.dir);
	const char *bin = getenv("RPMACTL_BIN");
	char *cp[] = { "cp", (char *)(bin ? bin : "rpmactl"), path, NULL };
	struct run r;
	ck_assert_int_eq(run_cmd(&r, cp, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_int_eq(r.status, 0);
	run_free(&r);
	ck_assert_int_eq(chmod(path, 0755), 0);
	return path;
}

static void
rpmactl_as_nobody(struct run *r, const gid_t *groups, size_t n,
		const char *cmd, const char *arg)
{
	char *argv[] = { (char *)rpmactl_copy(), "--socket", d.socket,
		(char *)cmd, (char *)arg, NULL };
	ck_assert_int_eq(run_cmd(r, argv, NOBODY, NOBODY, groups, n,
					 TH_WAIT_MS),
			0);
}

START_TEST(test_admin_groups)
{
	if (!child_can_play_users())
		return;
	th_log_daemon_start(&d, "socket_mode = 0666\nadmin_groups = 4243\n");
	struct run r;
	static const char *const cmds[] = { "status", "clients",
		"connections", "mrs", "endpoints", "stats" };
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		rpmactl_as_nobody(&r, NULL, 0, cmds[i], NULL);
		ck_assert_msg(r.status == 4, "%s: exit %d", cmds[i], r.status);
		ck_assert_str_eq(r.out, "");
		ck_assert_msg(strstr(r.err, "permission denied: admin requests "
				"need root or a group of admin_groups"),
				"%s: %s", cmds[i], r.err);
		ck_assert_ptr_nonnull(strstr(r.err, "admin_groups of "
				"rpmad.conf(5)"));
		run_free(&r);
	}
	rpmactl_as_nobody(&r, NULL, 0, "evict", "1");
	ck_assert_int_eq(r.status, 4);
	run_free(&r);

	/* a member of admin_groups may */
	gid_t g = 4243;
	rpmactl_as_nobody(&r, &g, 1, "status", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, d.socket));
	run_free(&r);
	rpmactl_as_nobody(&r, &g, 1, "clients", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(count_lines_with(r.out, "65534", "rpmactl", "yes",
			NULL), 1);
	run_free(&r);
	stop();

	/* not allowed to use rpmad at all: also 4, with the reason */
	th_log_daemon_start(&d, "socket_mode = 0666\nallow_users = 12345\n");
	rpmactl_as_nobody(&r, NULL, 0, "status", NULL);
	ck_assert_int_eq(r.status, 4);
	ck_assert_ptr_nonnull(strstr(r.err, "uid 65534 may not use this "
			"rpmad"));
	run_free(&r);
	stop();
}
END_TEST

START_TEST(test_socket_mode)
{
	if (!child_can_play_users())
		return;
	/* the default 0660 root:root keeps others out before rpmad is asked */
	th_log_daemon_start(&d, NULL);
	struct stat st;
	ck_assert_int_eq(stat(d.socket, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0660);
	struct run r;
	rpmactl_as_nobody(&r, NULL, 0, "status", NULL);
	ck_assert_int_eq(r.status, 4);
	ck_assert_ptr_nonnull(strstr(r.err, "Permission denied"));
	ck_assert_ptr_nonnull(strstr(r.err, "group and mode"));
	run_free(&r);
	ck_assert_int_eq(as_nobody(NULL, 0, NULL, 0), RPMA_E_PROVIDER);

	stop();

	/* socket_group and socket_mode, and again after a reload */
	th_log_daemon_start(&d, "socket_group = 4244\nsocket_mode = 0606\n");
	ck_assert_int_eq(stat(d.socket, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0606);
	ck_assert_uint_eq(st.st_gid, 4244);
	ck_assert_int_eq(write_text(d.config, "socket_group = 4245\n"
			"socket_mode = 0660\n"), 0);
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	ck_assert(wait_text(d.log, "socket_mode 0606 -> 0660", TH_WAIT_MS));
	ck_assert_int_eq(stat(d.socket, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0660);
	ck_assert_uint_eq(st.st_gid, 4245);
	/* a member of the socket's group gets in */
	gid_t g = 4245;
	rpmactl_as_nobody(&r, &g, 1, "status", NULL);
	ck_assert_int_eq(r.status, 4);	/* in, but not an admin */
	ck_assert_ptr_nonnull(strstr(r.err, "admin_groups"));
	run_free(&r);
	ck_assert_int_eq(as_nobody(&g, 1, NULL, 0), 0);
	stop();
}
END_TEST

int
main(void)
{
	const TTest *const tc_limits[] = { test_max_connections,
		test_max_endpoints, test_max_registered_bytes, NULL };
	const TTest *const tc_users[] = { test_allow_lists, test_admin_groups,
		test_socket_mode, NULL };
	const struct th_tcase tcases[] = {
		{ "limits", .tests = tc_limits, .timeout = 60 },
		{ "users", .tests = tc_users, .timeout = 60 },
	};
	return check_run(th_suite("access", tcases, TH_N(tcases)), CK_NORMAL);
}
