// SPDX-License-Identifier: BSD-3-Clause
/*
 * fail_freeze.c -- an rpmad that freezes (SIGSTOP) under idle connections
 * of the software transport, beside another that keeps going.
 *
 * A client application on rpmad B holds CONNS idle connections to a
 * server on rpmad A and CONNS to a server on rpmad C. The parent stops C.
 * A frozen process closes nothing and its kernel still answers TCP, so
 * only silence shows it: B's liveness of C (rpmad/transport/tcp/
 * tcp_liveness.c, one per remote rpmad) must end every connection to C as
 * RPMA_CONN_LOST within tcp_timeout_ms, not sooner than most of it (no
 * reset was involved), and none of the connections to A, which still
 * carry a message each after two more timeouts. C, resumed, ends its own
 * side.
 *
 * Over verbs an idle RC connection to a frozen host never notices (as
 * with librpma on a NIC): the software transport only.
 */

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "th_suite.h"

#define CONNS 8
#define TIMEOUT_MS 1000
/* found by silence: after 7/8 of the timeout, within it (checked every
 * eighth), plus room for a loaded host to wake the application */
#define LOST_AFTER_MS (TIMEOUT_MS / 2)
#define LOST_BOUND_MS (TIMEOUT_MS + 1000)
#define MSG 8

enum { TAG_A_LISTENING = 100, TAG_C_LISTENING, TAG_READY, TAG_FROZEN_AT,
	TAG_LOST, TAG_GO };

static char port_c[16];

/* the server on A: CONNS connections, then a message on each at GO */
static int
server_a(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = it_listen(peer, env);
	/* C listens after A, so that the client hears them in this order */
	IT_EQ(it_tell(IT_THIRD, TAG_A_LISTENING, NULL, 0), 0);
	struct rpma_conn *conn[CONNS];
	for (int i = 0; i < CONNS; i++) {
		struct rpma_conn_req *req = it_next_req(ep, NULL);
		conn[i] = it_accept(&req, NULL);
	}
	static char buf[MSG] = "alive";
	struct rpma_mr_local *mr;
	IT_OK(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_SEND, &mr));
	IT_EQ(it_tell(IT_PARENT, TAG_READY, NULL, 0), 0);
	IT_ASSERT(it_hear(TAG_GO, NULL, 0, IT_ROLE_MS) == 0);
	for (int i = 0; i < CONNS; i++) {
		struct rpma_cq *cq;
		IT_OK(rpma_conn_get_cq(conn[i], &cq));
		IT_OK(rpma_send(conn[i], mr, 0, MSG, RPMA_F_COMPLETION_ALWAYS,
				(void *)(uintptr_t)i));
		struct ibv_wc wc;
		it_wc_ok(conn[i], cq, (uint64_t)i, IBV_WC_SEND, &wc);
	}
	for (int i = 0; i < CONNS; i++)
		it_await_close(&conn[i]);
	IT_OKS(rpma_mr_dereg(&mr), rpma_ep_shutdown(&ep),
			rpma_peer_delete(&peer));
	return 0;
}

/* the server on C: CONNS connections; once C is resumed, they end */
static int
server_c(const struct it_env *env, void *arg)
{
	(void) env;
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep;
	IT_ASSERT(it_hear(TAG_A_LISTENING, NULL, 0, IT_WAIT_MS) == 0);
	IT_OK(rpma_ep_listen(peer, IT_ADDR, port_c, &ep));
	IT_EQ(it_tell(IT_CLIENT, TAG_C_LISTENING, NULL, 0), 0);
	struct rpma_conn *conn[CONNS];
	for (int i = 0; i < CONNS; i++) {
		struct rpma_conn_req *req = it_next_req(ep, NULL);
		conn[i] = it_accept(&req, NULL);
	}
	IT_EQ(it_tell(IT_PARENT, TAG_READY, NULL, 0), 0);
	for (int i = 0; i < CONNS; i++) {
		enum rpma_conn_event ev = it_next_event(conn[i], IT_ROLE_MS);
		IT_ASSERT_MSG(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED,
				"connection %d at the frozen rpmad: %s", i,
				rpma_utils_conn_event_2str(ev));
		IT_OK(rpma_conn_delete(&conn[i]));
	}
	IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

static int
client(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR,
			RPMA_UTIL_IBV_CONTEXT_REMOTE);
	IT_ASSERT(it_hear(IT_TAG_LISTENING, NULL, 0, IT_WAIT_MS) == 0);
	IT_ASSERT(it_hear(TAG_C_LISTENING, NULL, 0, IT_WAIT_MS) == 0);
	struct rpma_conn *to_a[CONNS], *to_c[CONNS];
	for (int i = 0; i < CONNS; i++) {
		to_a[i] = it_connect_to(peer, env->port, NULL, NULL);
		to_c[i] = it_connect_to(peer, port_c, NULL, NULL);
	}
	static char buf[CONNS][MSG];
	struct rpma_mr_local *mr;
	IT_OK(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_RECV, &mr));
	for (int i = 0; i < CONNS; i++)
		IT_OK(rpma_recv(to_a[i], mr, (size_t)i * MSG, MSG,
				(void *)(uintptr_t)i));
	IT_EQ(it_tell(IT_PARENT, TAG_READY, NULL, 0), 0);

	uint64_t frozen_at = 0;
	IT_EQ(it_expect(TAG_FROZEN_AT, &frozen_at, sizeof(frozen_at)),
			sizeof(frozen_at));
	for (int i = 0; i < CONNS; i++) {
		enum rpma_conn_event ev = it_next_event(to_c[i],
				LOST_BOUND_MS + IT_WAIT_MS);
		uint64_t after = it_now_ms() - frozen_at;
		(void) fprintf(stderr, "fail_freeze: connection %d to the "
				"frozen rpmad: %s after %llu ms\n", i,
				rpma_utils_conn_event_2str(ev),
				(unsigned long long)after);
		IT_ASSERT_MSG(ev == RPMA_CONN_LOST, "connection %d to the "
				"frozen rpmad: %s", i,
				rpma_utils_conn_event_2str(ev));
		IT_ASSERT_MSG(after <= LOST_BOUND_MS, "LOST after %llu ms "
				"(bound %d)", (unsigned long long)after,
				LOST_BOUND_MS);
		IT_ASSERT_MSG(after >= LOST_AFTER_MS, "LOST after %llu ms: "
				"sooner than silence shows (%d)",
				(unsigned long long)after, LOST_AFTER_MS);
		IT_OK(rpma_conn_delete(&to_c[i]));
	}
	IT_EQ(it_tell(IT_PARENT, TAG_LOST, NULL, 0), 0);

	/* the connections to A lived on: each gets its message */
	IT_ASSERT(it_hear(TAG_GO, NULL, 0, IT_ROLE_MS) == 0);
	for (int i = 0; i < CONNS; i++) {
		struct rpma_cq *cq;
		IT_OK(rpma_conn_get_cq(to_a[i], &cq));
		struct ibv_wc wc;
		it_wc_ok(to_a[i], cq, (uint64_t)i, IBV_WC_RECV, &wc);
		IT_ASSERT(memcmp(buf[i], "alive", 6) == 0);
	}
	for (int i = 0; i < CONNS; i++)
		it_close(&to_a[i]);
	IT_OK(rpma_mr_dereg(&mr));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

START_TEST(test_frozen_rpmad)
{
	if (!it_transport_is("tcp"))
		return;
	char config[64];
	(void) snprintf(config, sizeof(config), "tcp_timeout_ms = %d\n",
			TIMEOUT_MS);
	struct it_env env;
	ck_assert_int_eq(it_env_start_cfg(&env, 2, config), 0);

	/* C, a third rpmad with the same configuration */
	char path[300];
	(void) snprintf(path, sizeof(path), "%s/c.conf", env.dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(config, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	struct test_daemon c;
	const char *const args[] = { "--config", path, NULL };
	ck_assert_int_eq(test_daemon_start(&c, args), 0);
	ck_assert_int_eq(it_free_port(port_c, sizeof(port_c)), 0);
	ck_assert_str_ne(port_c, env.port);

	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			server_a, NULL), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_THIRD, &env, &c, server_c,
			NULL), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli, client,
			NULL), 0);
	ck_assert_msg(it_group_hear(&g, TAG_READY, 3) == 0, "%s",
			it_report());

	uint64_t frozen_at = it_now_ms();
	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_FROZEN_AT, &frozen_at,
			sizeof(frozen_at)), 0);
	ck_assert_int_eq(kill(c.pid, SIGSTOP), 0);
	ck_assert_msg(it_group_hear_within(&g, TAG_LOST, 1,
			LOST_BOUND_MS + 2 * IT_WAIT_MS) == 0, "%s", it_report());
	/* long enough for a connection to A to be taken for lost too */
	(void) usleep(2 * TIMEOUT_MS * 1000);
	ck_assert_int_eq(kill(c.pid, SIGCONT), 0);
	ck_assert_int_eq(it_tell_both(TAG_GO, NULL, 0), 0);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	ck_assert_int_eq(test_daemon_alive(&c), 1);
	ck_assert_int_eq(test_daemon_stop(&c), 0);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_freeze[] = { test_frozen_rpmad, NULL };
	const struct th_tcase tcases[] = {
		{ "freeze", .tests = tc_freeze, .create = it_tcase_create },
	};
	return check_run(th_suite("failure: a frozen rpmad", tcases,
					 TH_N(tcases)),
			CK_ENV);
}
