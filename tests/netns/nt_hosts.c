// SPDX-License-Identifier: BSD-3-Clause
/*
 * nt_hosts.c -- two hosts for real: rpmad A in one network namespace
 * (NS_ADDR_A), rpmad B in another (NS_ADDR_B), joined by a veth pair; the
 * connection between them has no other way to go.
 *
 * - exchange: a server application on A and a client application on B
 *   write to a file-backed registration, flush it persistently (and the
 *   file holds the data), read it back, and send messages both ways;
 * - cut: with tcp_timeout_ms = CUT_TIMEOUT_MS, the link goes down in the
 *   middle of a stream of every kind of work (and, second case, under an
 *   idle connection): both applications see RPMA_CONN_LOST and every
 *   outstanding work request fail within the bound below; both rpmads
 *   let go of the connection; once the link is back, new connections work.
 *
 * Skips (77) where network namespaces cannot be made.
 */

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "footprint.h"
#include "fstream.h"
#include "itest.h"
#include "netns_env.h"
#include "th_suite.h"

/* made by main before the runner forks the tests */
static struct ns_hosts hosts;

/* Ports of the endpoints, inside namespace A: nothing else uses them. */
#define PORT_EXCHANGE "47011"
#define PORT_STREAM "47012"

enum { TAG_READY = 100, TAG_CUT_AT, TAG_CONN_GONE, TAG_GO };

/* ------------------------------------------------ the two hosts */

/*
 * Like it_env_start_cfg, with daemon i inside namespace i: the server
 * role uses A, the client role B.
 */
static void
hosts_env_start(struct it_env *env, const char *config)
{
	/* an earlier test that failed may have left the link down */
	ck_assert_int_eq(ns_link(&hosts, 0, true), 0);
	ck_assert_int_eq(ns_link(&hosts, 1, true), 0);
	it_init();
	memset(env, 0, sizeof(*env));
	(void) snprintf(env->dir, sizeof(env->dir), "%s/scratch.XXXXXX",
			hosts.dir);
	ck_assert_ptr_nonnull(mkdtemp(env->dir));
	(void) snprintf(env->port, sizeof(env->port), "%s", PORT_EXCHANGE);
	for (int i = 0; i < 2; i++) {
		ck_assert_msg(ns_daemon_start(&hosts, i, &env->d[i], config) ==
						0,
				"rpmad did not start in %s", hosts.ns[i]);
		env->ndaemons = i + 1;
		ck_assert_msg(ns_holds(&hosts, i, env->d[i].pid), "rpmad %d "
				"is not inside %s", (int)env->d[i].pid,
				hosts.ns[i]);
	}
	env->srv = &env->d[0];
	env->cli = &env->d[1];
}

static void
admin_config(char *buf, size_t len, unsigned timeout_ms)
{
	int n = snprintf(buf, len, "admin_groups = %u\n", (unsigned)getgid());
	if (timeout_ms)
		(void) snprintf(buf + n, len - (size_t)n,
				"tcp_timeout_ms = %u\n", timeout_ms);
}

/* ------------------------------------------------ connecting */

static struct rpma_ep *
listen_at_a(struct rpma_peer *peer, const char *port)
{
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, NS_ADDR_A, port, &ep));
	IT_EQ(it_tell(IT_CLIENT, IT_TAG_LISTENING, NULL, 0), 0);
	return ep;
}

static struct rpma_conn *
connect_to_a(struct rpma_peer *peer, const char *port,
		const struct rpma_conn_cfg *cfg)
{
	(void) it_expect(IT_TAG_LISTENING, NULL, 0);
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_conn_req_new(peer, NS_ADDR_A, port, cfg, &req));
	struct rpma_conn *conn = NULL;
	IT_OK(rpma_conn_req_connect(&req, NULL, &conn));
	it_expect_event(conn, RPMA_CONN_ESTABLISHED);
	return conn;
}

/* ------------------------------------------------ exchange */

#define PM_SIZE 65536
#define DATA_OFF 4096
#define DATA_LEN 16384
#define MSG_LEN 512
enum { SEED_DATA = 31, SEED_ASK, SEED_ANSWER };
enum { WR_WRITE = 1, WR_FLUSH, WR_READ, WR_SEND, WR_RECV };

static int
exchange_server(const struct it_env *env, void *arg)
{
	const char *port = arg;
	struct rpma_peer *peer = it_peer(NS_ADDR_A,
			RPMA_UTIL_IBV_CONTEXT_LOCAL);
	int fd;
	void *pm = it_file_map(env, "exchange.pmem", PM_SIZE, &fd);
	struct rpma_mr_local *pm_mr = IT_REG(peer, pm, PM_SIZE,
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
					RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	struct rpma_peer_cfg *pcfg = NULL;
	IT_OK(rpma_peer_cfg_new(&pcfg));
	IT_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	uint8_t *msg = it_alloc(2 * MSG_LEN);
	struct rpma_mr_local *msg_mr = IT_REG(peer, msg, 2 * MSG_LEN,
			RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV);

	struct rpma_ep *ep = listen_at_a(peer, port);
	struct rpma_conn_req *req = it_next_req(ep, NULL);
	/* the client's message may come before anything else is posted */
	IT_OK(rpma_conn_req_recv(req, msg_mr, 0, MSG_LEN, (void *)WR_RECV));
	struct rpma_conn *conn = it_accept(&req, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	it_send_desc(IT_CLIENT, pm_mr, pcfg);

	struct ibv_wc wc;
	it_wc_ok(conn, cq, WR_RECV, IBV_WC_RECV, &wc);
	IT_EQ(wc.byte_len, MSG_LEN);
	IT_EQ(it_check(msg, MSG_LEN, SEED_ASK), -1);
	it_fill(msg + MSG_LEN, MSG_LEN, SEED_ANSWER);
	IT_OK(rpma_send(conn, msg_mr, MSG_LEN, MSG_LEN,
			RPMA_F_COMPLETION_ALWAYS, (void *)WR_SEND));
	it_wc_ok(conn, cq, WR_SEND, IBV_WC_SEND, &wc);
	it_await_close(&conn);

	/* what the client flushed is in the file */
	uint8_t *file = it_alloc(DATA_LEN);
	IT_EQ(pread(fd, file, DATA_LEN, DATA_OFF), DATA_LEN);
	IT_EQ(it_check(file, DATA_LEN, SEED_DATA), -1);
	free(file);

	IT_OKS(rpma_ep_shutdown(&ep), rpma_mr_dereg(&msg_mr),
			rpma_mr_dereg(&pm_mr), rpma_peer_cfg_delete(&pcfg),
			rpma_peer_delete(&peer));
	IT_EQ(munmap(pm, PM_SIZE), 0);
	IT_EQ(close(fd), 0);
	free(msg);
	return 0;
}

static int
exchange_client(const struct it_env *env, void *arg)
{
	const char *port = arg;
	struct rpma_peer *peer = it_peer(NS_ADDR_A,
			RPMA_UTIL_IBV_CONTEXT_REMOTE);
	size_t size = 2 * DATA_LEN + 2 * MSG_LEN;
	uint8_t *buf = it_alloc(size);
	uint8_t *back = buf + DATA_LEN, *ask = buf + 2 * DATA_LEN;
	uint8_t *answer = ask + MSG_LEN;
	struct rpma_mr_local *mr = IT_REG(peer, buf, size,
			RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST |
					RPMA_MR_USAGE_SEND |
					RPMA_MR_USAGE_RECV);
	struct rpma_conn *conn = connect_to_a(peer, port, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	IT_OK(rpma_recv(conn, mr, (size_t)(answer - buf), MSG_LEN,
			(void *)WR_RECV));
	struct it_desc desc;
	it_expect_desc(&desc);
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);
	IT_ASSERT(desc.pcfg_len > 0);
	struct rpma_peer_cfg *pcfg = NULL;
	IT_OK(rpma_peer_cfg_from_descriptor(desc.pcfg, desc.pcfg_len, &pcfg));
	IT_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	IT_OK(rpma_peer_cfg_delete(&pcfg));

	/* write, flush to persistence, read back */
	struct ibv_wc wc;
	it_fill(buf, DATA_LEN, SEED_DATA);
	IT_OK(rpma_write(conn, rmr, DATA_OFF, mr, 0, DATA_LEN,
			RPMA_F_COMPLETION_ON_ERROR, (void *)WR_WRITE));
	IT_OK(rpma_flush(conn, rmr, DATA_OFF, DATA_LEN,
			RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			(void *)WR_FLUSH));
	it_wc_ok(conn, cq, WR_FLUSH, IBV_WC_RDMA_READ, &wc);
	IT_OK(rpma_read(conn, mr, DATA_LEN, rmr, DATA_OFF, DATA_LEN,
			RPMA_F_COMPLETION_ALWAYS, (void *)WR_READ));
	it_wc_ok(conn, cq, WR_READ, IBV_WC_RDMA_READ, &wc);
	IT_EQ(it_check(back, DATA_LEN, SEED_DATA), -1);

	/* a message and its answer */
	it_fill(ask, MSG_LEN, SEED_ASK);
	IT_OK(rpma_send(conn, mr, (size_t)(ask - buf), MSG_LEN,
			RPMA_F_COMPLETION_ALWAYS, (void *)WR_SEND));
	it_wc_ok(conn, cq, WR_SEND, IBV_WC_SEND, &wc);
	it_wc_ok(conn, cq, WR_RECV, IBV_WC_RECV, &wc);
	IT_EQ(wc.byte_len, MSG_LEN);
	IT_EQ(it_check(answer, MSG_LEN, SEED_ANSWER), -1);

	it_client_end(&conn, &rmr, &mr, &peer, buf);
	return 0;
}

START_TEST(test_exchange)
{
	struct it_env env;
	char config[128];
	admin_config(config, sizeof(config), 0);
	hosts_env_start(&env, config);
	ck_assert_msg(it_run_pair(&env, exchange_server, exchange_client,
			(void *)PORT_EXCHANGE) == 0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ------------------------------------------------ cut */

/*
 * No reset crosses a cut link: each rpmad finds the cut on its own, by
 * silence (rpmad/transport/tcp/tcp_liveness.c). Each rpmad sends the
 * other a heartbeat every quarter of tcp_timeout_ms, and one that heard
 * nothing from the other on any socket for seven eighths of it, checked
 * every eighth, ends its connections as LOST -- so within tcp_timeout_ms
 * of the last byte that arrived, which was just before the cut, busy or
 * idle (seen here: 0.88-1.0 s for 1000 ms). The bound is
 * that timeout plus 500 ms for a loaded host to run the check and wake the
 * application.
 */
#define CUT_TIMEOUT_MS 1000
#define CUT_DETECT_MS CUT_TIMEOUT_MS
#define CUT_MARGIN_MS 500
#define CUT_BOUND_MS (CUT_DETECT_MS + CUT_MARGIN_MS)

#define WARMUP 200

struct cut_opts {
	bool idle;	/* nothing in flight when the link goes */
};

static int
cut_role(const struct it_env *env, void *arg)
{
	const struct cut_opts *o = arg;
	bool server = it_role() == IT_SERVER;
	struct rpma_peer *peer = it_role_peer(NS_ADDR_A);
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn;
	if (server) {
		ep = listen_at_a(peer, PORT_STREAM);
		struct rpma_conn_req *req = it_next_req(ep, fs_conn_cfg());
		conn = it_accept(&req, NULL);
	} else {
		conn = connect_to_a(peer, PORT_STREAM, fs_conn_cfg());
	}
	struct fs_stream s;
	fs_init(&s, peer, conn);
	it_send_desc(server ? IT_CLIENT : IT_SERVER, s.mr, NULL);
	struct it_desc desc;
	it_expect_desc(&desc);
	fs_set_remote(&s, &desc);
	if (!o->idle)
		fs_run_ok(&s, WARMUP);
	IT_EQ(it_tell(IT_PARENT, TAG_READY, NULL, 0), 0);

	if (o->idle)
		fs_idle_until_broken(&s, IT_ROLE_MS);
	else
		fs_run_until_broken(&s, IT_ROLE_MS);
	uint64_t cut_at = 0;
	IT_EQ(it_expect(TAG_CUT_AT, &cut_at, sizeof(cut_at)), sizeof(cut_at));
	IT_ASSERT_MSG(s.res.t_break >= cut_at, "the connection broke (%s) "
			"before the cut", s.res.cause);
	fs_drain(&s, IT_WAIT_MS);
	char who[96];
	(void) snprintf(who, sizeof(who), "nt_hosts: link cut (%s, "
			"tcp_timeout_ms %d): %s", o->idle ? "idle" : "stream",
			CUT_TIMEOUT_MS, it_role_name(it_role()));
	fs_report(&s, who, cut_at);
	IT_ASSERT_MSG(s.res.event == RPMA_CONN_LOST, "event %s, wanted LOST",
			rpma_utils_conn_event_2str(s.res.event));
	IT_ASSERT_MSG(s.res.t_event - cut_at <= CUT_BOUND_MS, "LOST came %llu "
			"ms after the cut (bound %d ms)",
			(unsigned long long)(s.res.t_event - cut_at),
			CUT_BOUND_MS);
	IT_ASSERT_MSG(s.res.t_flushed - cut_at <= CUT_BOUND_MS, "the last "
			"outstanding work failed %llu ms after the cut (bound "
			"%d ms)", (unsigned long long)(s.res.t_flushed - cut_at),
			CUT_BOUND_MS);
	IT_ASSERT(s.res.failed[FS_RECV] > 0);
	fs_posts_fail(&s);
	fs_fini(&s);

	IT_EQ(it_tell(IT_PARENT, TAG_CONN_GONE, NULL, 0), 0);
	IT_ASSERT(it_hear(TAG_GO, NULL, 0, IT_ROLE_MS) == 0);
	if (ep)
		IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/* _i: 0 in the middle of a stream, 1 under an idle connection */
START_TEST(test_cut)
{
	struct cut_opts o = { .idle = _i == 1 };
	struct it_env env;
	char config[128];
	admin_config(config, sizeof(config), CUT_TIMEOUT_MS);
	hosts_env_start(&env, config);
	struct it_admin adm[2];
	struct footprint empty[2];
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(it_admin_open(&adm[i], &env.d[i]), 0);
		footprint_now(&adm[i], env.d[i].pid, &empty[i]);
	}

	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			cut_role, &o), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			cut_role, &o), 0);
	ck_assert_msg(it_group_hear(&g, TAG_READY, 2) == 0, "%s",
			it_report());

	uint64_t cut_at = it_now_ms();
	ck_assert_int_eq(it_tell_both(TAG_CUT_AT, &cut_at, sizeof(cut_at)), 0);
	ck_assert_int_eq(ns_link(&hosts, 0, false), 0);

	/* both rpmads let go of the connection the applications deleted */
	ck_assert_msg(it_group_hear(&g, TAG_CONN_GONE, 2) == 0, "%s",
			it_report());
	for (int i = 0; i < 2; i++)
		(void) footprint_expect_no_conns(&adm[i], IT_WAIT_MS,
				i ? "rpmad B after the cut" :
				"rpmad A after the cut");
	ck_assert_int_eq(it_tell_both(TAG_GO, NULL, 0), 0);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());

	/* the link comes back: so do new connections */
	ck_assert_int_eq(ns_link(&hosts, 0, true), 0);
	ck_assert_msg(it_run_pair(&env, exchange_server, exchange_client,
			(void *)PORT_EXCHANGE) == 0, "%s", it_report());

	for (int i = 0; i < 2; i++) {
		(void) footprint_expect(&adm[i], env.d[i].pid, &empty[i],
				IT_WAIT_MS, i ? "rpmad B at the end" :
				"rpmad A at the end");
		it_admin_close(&adm[i]);
	}
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

static Suite *
hosts_suite(void)
{
	const struct th_test tc_hosts[] = { TH_TEST(test_exchange),
		TH_LOOP(test_cut, 0, 2), TH_END };
	const struct th_tcase tcases[] = {
		{ "hosts", .steps = tc_hosts, .create = it_tcase_create },
	};
	return th_suite("two hosts (network namespaces)", tcases, TH_N(tcases));
}

int
main(void)
{
	return ns_main(&hosts, hosts_suite);
}
