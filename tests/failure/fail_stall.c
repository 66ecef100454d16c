// SPDX-License-Identifier: BSD-3-Clause
/*
 * fail_stall.c -- a slow rpmad is not a dead one (issue 19, item 4).
 *
 * A client application on rpmad B is connected to a server on rpmad A.
 * The parent stops B (SIGSTOP) and lets it go on (SIGCONT):
 * - between calls, with a write posted while B stands still: it completes
 *   once B goes on;
 * - during calls: rpma_mr_reg, rpma_peer_new and rpma_mr_dereg each fail
 *   alone (RPMA_E_PROVIDER) after B's reply_timeout_ms; afterwards every
 *   object of the process works, the dereg retried succeeds, and B holds
 *   exactly what the process holds: what the late answers made (a
 *   registration, a peer) was undone;
 * - during rpma_conn_next_event, its notification read already: the call
 *   fails alone, and the next one returns the event (the server's
 *   disconnect) that came late.
 * And a stopped rpmad that is killed ends the session: a call waiting for
 * it returns at once, long before its time-out.
 *
 * B's reply_timeout_ms is short (STALL_REPLY_MS) so that the test is; the
 * liveness time-out between the rpmads is long, so that A does not take a
 * stopped B for a dead host (that is fail_freeze's subject).
 */

#include <check.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"
#include "th_logcap.h"
#include "th_suite.h"

/* how long B's clients wait for an answer */
#define STALL_REPLY_MS 1500
/* how long B stands still between calls: longer than a reply may take */
#define STOP_MS (2 * STALL_REPLY_MS)
#define BUF 4096

enum { TAG_READY = 100, TAG_STOPPED, TAG_CALLED, TAG_RESUMED, TAG_DISCONNECT,
	TAG_CHECK, TAG_CHECKED, TAG_DONE };

/* ------------------------------------------------------ the applications */

static int
server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(BUF);
	struct rpma_mr_local *mr = IT_REG(peer, buf, BUF,
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, NULL);

	IT_ASSERT(it_hear(TAG_DISCONNECT, NULL, 0, IT_ROLE_MS) == 0);
	/* what the client wrote, stops and all */
	IT_EQ(it_check(buf, BUF / 2, 1), -1);
	IT_EQ(it_check(buf + BUF / 2, BUF / 2, 2), -1);
	IT_OK(rpma_conn_disconnect(conn));
	it_expect_event(conn, RPMA_CONN_CLOSED);
	IT_OKS(rpma_conn_delete(&conn), rpma_ep_shutdown(&ep),
			rpma_mr_dereg(&mr), rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

/* Tells the parent `tag`, hears that B stands still. */
static void
stop_b(uint32_t tag)
{
	IT_EQ(it_tell(IT_PARENT, tag, NULL, 0), 0);
	IT_ASSERT(it_hear(TAG_STOPPED, NULL, 0, IT_ROLE_MS) == 0);
}

/* Tells the parent the calls are done, hears that B goes on. */
static void
resume_b(void)
{
	IT_EQ(it_tell(IT_PARENT, TAG_CALLED, NULL, 0), 0);
	IT_ASSERT(it_hear(TAG_RESUMED, NULL, 0, IT_ROLE_MS) == 0);
}

static void
write_half(struct rpma_conn *conn, struct rpma_mr_remote *rmr,
		struct rpma_mr_local *mr, uint8_t *buf, int half)
{
	size_t off = (size_t)half * (BUF / 2);
	it_fill(buf + off, BUF / 2, (uint32_t)half + 1);
	IT_OK(rpma_write(conn, rmr, off, mr, off, BUF / 2,
			RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)half));
}

static int
client(const struct it_env *env, void *arg)
{
	(void) arg;
	IT_OK(th_log_capture());
	struct ibv_context *dev;
	IT_OK(rpma_utils_get_ibv_context(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE,
			&dev));
	struct rpma_peer *peer = NULL;
	IT_OK(rpma_peer_new(dev, &peer));
	uint8_t *buf = it_alloc(BUF);
	uint8_t *spare = it_alloc(BUF);
	struct rpma_mr_local *mr = NULL, *extra = NULL, *late = NULL;
	IT_OK(rpma_mr_reg(peer, buf, BUF, RPMA_MR_USAGE_WRITE_SRC, &mr));
	IT_OK(rpma_mr_reg(peer, spare, BUF, RPMA_MR_USAGE_READ_SRC, &extra));
	struct rpma_mr_remote *rmr;
	struct rpma_cq *cq;
	struct rpma_conn *conn = it_connect_mr(peer, env, &rmr, &cq);
	struct ibv_wc wc;

	/* 1. B stands still between calls; the data path waits for it */
	stop_b(TAG_READY);
	write_half(conn, rmr, mr, buf, 0);
	resume_b();
	it_wc_ok(conn, cq, 0, IBV_WC_RDMA_WRITE, &wc);

	/* 2. B stands still during calls: each fails alone */
	stop_b(TAG_READY);
	th_log_clear();
	IT_ERR(RPMA_E_PROVIDER, rpma_mr_reg(peer, spare, BUF,
			RPMA_MR_USAGE_READ_SRC, &late));
	IT_ASSERT(late == NULL);
	struct rpma_peer *peer2 = NULL;
	IT_ERR(RPMA_E_PROVIDER, rpma_peer_new(dev, &peer2));
	IT_ERR(RPMA_E_PROVIDER, rpma_mr_dereg(&extra));
	IT_ASSERT(extra != NULL);
	char want[64];
	(void) snprintf(want, sizeof(want), "did not answer within %d ms",
			STALL_REPLY_MS);
	const char *stay = "the session and its objects stay";
	IT_ASSERT_MSG(strstr(th_logged, want) && strstr(th_logged, stay), "%s",
			th_logged);
	resume_b();
	/* the dereg that came late happened: retried, it is done */
	IT_OK(rpma_mr_dereg(&extra));
	/* the connection, the peer and the registrations work */
	write_half(conn, rmr, mr, buf, 1);
	it_wc_ok(conn, cq, 1, IBV_WC_RDMA_WRITE, &wc);
	IT_OK(rpma_mr_reg(peer, spare, BUF, RPMA_MR_USAGE_READ_SRC, &late));
	IT_OK(rpma_mr_dereg(&late));
	IT_OK(rpma_peer_new(dev, &peer2));
	IT_OK(rpma_peer_delete(&peer2));
	/* B holds what this process holds: one peer, one registration */
	IT_EQ(it_tell(IT_PARENT, TAG_CHECK, NULL, 0), 0);
	IT_ASSERT(it_hear(TAG_CHECKED, NULL, 0, IT_ROLE_MS) == 0);

	/* 3. B stands still while an event is fetched */
	IT_EQ(it_tell(IT_SERVER, TAG_DISCONNECT, NULL, 0), 0);
	int fd;
	IT_OK(rpma_conn_get_event_fd(conn, &fd));
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	IT_EQ(poll(&pfd, 1, IT_WAIT_MS), 1);
	stop_b(TAG_READY);
	enum rpma_conn_event ev;
	IT_ERR(RPMA_E_PROVIDER, rpma_conn_next_event(conn, &ev));
	resume_b();
	IT_OK(rpma_conn_next_event(conn, &ev));
	IT_ASSERT_MSG(ev == RPMA_CONN_CLOSED, "%s",
			rpma_utils_conn_event_2str(ev));
	IT_OK(rpma_conn_disconnect(conn));
	IT_OK(rpma_conn_delete(&conn));

	IT_OKS(rpma_mr_remote_delete(&rmr), rpma_mr_dereg(&mr),
			rpma_peer_delete(&peer));
	free(buf);
	free(spare);
	return 0;
}

/* The parent's part of a stop: stop B, wait for the calls, let it go. */
static void
stop_and_go(struct it_group *g, const struct test_daemon *b, bool pause)
{
	ck_assert_msg(it_group_hear(g, TAG_READY, 1) == 0, "%s", it_report());
	ck_assert_int_eq(kill(b->pid, SIGSTOP), 0);
	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_STOPPED, NULL, 0), 0);
	ck_assert_msg(it_group_hear_within(g, TAG_CALLED, 1,
			IT_WAIT_MS + 4 * STALL_REPLY_MS) == 0, "%s",
			it_report());
	if (pause)
		(void) usleep(STOP_MS * 1000);
	ck_assert_int_eq(kill(b->pid, SIGCONT), 0);
	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_RESUMED, NULL, 0), 0);
}

START_TEST(test_stalls)
{
	char config[128];
	(void) snprintf(config, sizeof(config), "reply_timeout_ms = %d\n"
			"tcp_timeout_ms = 60000\n", STALL_REPLY_MS);
	struct it_env env;
	ck_assert_int_eq(it_env_start_cfg(&env, 2, config), 0);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv, server,
			NULL), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli, client,
			NULL), 0);

	stop_and_go(&g, env.cli, true);
	stop_and_go(&g, env.cli, false);

	ck_assert_msg(it_group_hear(&g, TAG_CHECK, 1) == 0, "%s", it_report());
	struct it_admin adm;
	struct it_counts c;
	ck_assert_int_eq(it_admin_open(&adm, env.cli), 0);
	ck_assert_int_eq(it_admin_client(&adm, it_group_pid(&g, IT_CLIENT),
			&c), 1);
	it_admin_close(&adm);
	ck_assert_msg(c.peers == 1 && c.mrs == 1 && c.connections == 1,
			"B holds %u peers, %u registrations, %u connections "
			"for the client", c.peers, c.mrs, c.connections);
	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_CHECKED, NULL, 0), 0);

	stop_and_go(&g, env.cli, false);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ------------------------------------------ a stopped rpmad killed */

static int
waiter(const struct it_env *env, void *arg)
{
	(void) env;
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(BUF);
	stop_b(TAG_READY);
	IT_EQ(it_tell(IT_PARENT, TAG_CALLED, NULL, 0), 0);
	uint64_t start = it_now_ms();
	struct rpma_mr_local *mr = NULL;
	IT_ERR(RPMA_E_PROVIDER, rpma_mr_reg(peer, buf, BUF,
			RPMA_MR_USAGE_READ_SRC, &mr));
	uint64_t took = it_now_ms() - start;
	(void) fprintf(stderr, "fail_stall: rpma_mr_reg returned after %llu ms "
			"(its time-out: %d ms)\n", (unsigned long long)took,
			IT_ROLE_MS);
	/* the end of the socket, not the time-out, ended it */
	IT_ASSERT_MSG(took < IT_ROLE_MS / 2, "%llu ms",
			(unsigned long long)took);
	/* the session is over: the peer with it */
	IT_ERR(RPMA_E_PROVIDER, rpma_mr_reg(peer, buf, BUF,
			RPMA_MR_USAGE_READ_SRC, &mr));
	IT_OK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

START_TEST(test_stopped_then_killed)
{
	char config[64];
	(void) snprintf(config, sizeof(config), "reply_timeout_ms = %d\n",
			IT_ROLE_MS);
	struct it_env env;
	ck_assert_int_eq(it_env_start_cfg(&env, 1, config), 0);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli, waiter,
			NULL), 0);
	ck_assert_msg(it_group_hear(&g, TAG_READY, 1) == 0, "%s", it_report());
	ck_assert_int_eq(kill(env.cli->pid, SIGSTOP), 0);
	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_STOPPED, NULL, 0), 0);
	ck_assert_msg(it_group_hear(&g, TAG_CALLED, 1) == 0, "%s", it_report());
	/* let the call start waiting, then kill the stopped rpmad */
	(void) usleep(500 * 1000);
	test_daemon_kill(env.cli);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	(void) it_env_stop(&env);
}
END_TEST

int
main(void)
{
	const TTest *const tc_stall[] = { test_stalls, test_stopped_then_killed,
		NULL };
	const struct th_tcase tcases[] = {
		{ "stall", .tests = tc_stall, .create = it_tcase_create,
				.timeout = 60 },
	};
	return check_run(th_suite("failure: a stalled rpmad", tcases,
					 TH_N(tcases)),
			CK_ENV);
}
