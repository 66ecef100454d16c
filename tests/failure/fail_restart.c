// SPDX-License-Identifier: BSD-3-Clause
/*
 * fail_restart.c -- rpmad restarted under running applications.
 *
 * A server application on rpmad A and a client application on rpmad B
 * are connected, with receives outstanding and threads blocked in
 * rpma_cq_wait, rpma_conn_next_event and (the server) rpma_ep_next_conn_req.
 * Then A is killed (SIGKILL) or stopped (SIGTERM) and started again on
 * the same socket. Checked:
 * - every blocked call returns within RESTART_BOUND_MS: the event is
 *   RPMA_CONN_LOST (CLOSED accepted on the client, whose rpmad may have
 *   been told goodbye), rpma_cq_wait returns and the receives complete
 *   with IBV_WC_WR_FLUSH_ERR, rpma_ep_next_conn_req fails with
 *   RPMA_E_PROVIDER; called again, they fail at once;
 * - posting fails with RPMA_E_PROVIDER, and so do calls that make new
 *   objects from old ones;
 * - the same processes make new objects that work with the new rpmad
 *   (the library opens a new session): the server first, before deleting
 *   the old ones; the client after deleting its old connection, on its
 *   old peer (its rpmad B never went away);
 * - deleting every old object succeeds;
 * - new processes work with the new rpmad;
 * - rpmad B, which stayed, and the new A end up holding nothing.
 * And a device handle from before the restart makes peers after it.
 */

#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "footprint.h"
#include "itest.h"
#include "th_suite.h"

/*
 * How soon after rpmad's end the blocked calls must return. They wait on
 * socket-pair ends that rpmad holds (docs/internals.md, "Notification
 * descriptors"); the kernel closes them when rpmad dies, or rpmad does
 * when it shuts down, so each call sees end-of-file at once. The other
 * rpmad sees the TCP sockets close or a goodbye just as soon. 2 s is room
 * for a loaded host; a SIGTERMed rpmad also has to finish its shutdown.
 */
#define RESTART_BOUND_MS 2000

#define N_RECV 4
#define BUF 8192
#define WR_RECV 0x7700

enum { TAG_READY = 100, TAG_KILL_AT, TAG_RESTARTED };

enum how { HOW_SIGKILL, HOW_SIGTERM, HOWS };

struct restart_opts {
	enum how how;
};

/* ------------------------------------------------- blocked calls */

enum call { CALL_CQ_WAIT, CALL_NEXT_EVENT, CALL_NEXT_REQ, CALLS };

static const char *const call_names[CALLS] = {
	"rpma_cq_wait", "rpma_conn_next_event", "rpma_ep_next_conn_req",
};

struct blocked {
	enum call call;
	struct rpma_cq *cq;
	struct rpma_conn *conn;
	struct rpma_ep *ep;
	pthread_t thread;
	bool started;
	int ret;
	enum rpma_conn_event event;
	_Atomic uint64_t t_done;	/* 0 while blocked */
};

static void *
blocked_main(void *arg)
{
	struct blocked *b = arg;
	struct rpma_conn_req *req = NULL;
	switch (b->call) {
	case CALL_CQ_WAIT:
		b->ret = rpma_cq_wait(b->cq);
		break;
	case CALL_NEXT_EVENT:
		b->ret = rpma_conn_next_event(b->conn, &b->event);
		break;
	default:
		b->ret = rpma_ep_next_conn_req(b->ep, NULL, &req);
		if (req)	/* not expected: the check fails on b->ret */
			(void) rpma_conn_req_delete(&req);
		break;
	}
	atomic_store(&b->t_done, it_now_ms());
	return NULL;
}

/* Starts the calls that have their object; they must stay blocked. */
static void
block(struct blocked b[CALLS])
{
	for (int i = 0; i < CALLS; i++) {
		b[i].call = (enum call)i;
		if (i == CALL_NEXT_REQ && b[i].ep == NULL)
			continue;
		IT_EQ(pthread_create(&b[i].thread, NULL, blocked_main, &b[i]),
				0);
		b[i].started = true;
	}
	/* long enough for each to reach its recv() */
	it_sleep_ms(100);
	for (int i = 0; i < CALLS; i++)
		IT_ASSERT_MSG(!b[i].started || atomic_load(&b[i].t_done) == 0,
				"%s returned %d before rpmad went away",
				call_names[i], b[i].ret);
}

/*
 * Waits for every blocked call to return (bounded) and checks how it
 * returned, and how soon after `kill_at`.
 */
static void
unblocked(struct blocked b[CALLS], uint64_t kill_at, bool closed_ok)
{
	uint64_t end = kill_at + IT_WAIT_MS;
	for (int i = 0; i < CALLS; i++) {
		if (!b[i].started)
			continue;
		while (atomic_load(&b[i].t_done) == 0) {
			IT_ASSERT_MSG(it_now_ms() < end, "%s still blocked %d "
					"ms after rpmad went away",
					call_names[i], IT_WAIT_MS);
			it_sleep_ms(1);
		}
		IT_EQ(pthread_join(b[i].thread, NULL), 0);
		uint64_t took = atomic_load(&b[i].t_done) - kill_at;
		(void) fprintf(stderr, "fail_restart: %s: %s returned %d "
				"(%s) after %llu ms (bound %d ms)\n",
				it_role_name(it_role()), call_names[i],
				b[i].ret, i == CALL_NEXT_EVENT && b[i].ret == 0
				? rpma_utils_conn_event_2str(b[i].event) :
				rpma_err_2str(b[i].ret),
				(unsigned long long)took, RESTART_BOUND_MS);
		IT_ASSERT_MSG(took <= RESTART_BOUND_MS, "%s returned %llu ms "
				"after rpmad went away (bound %d ms)",
				call_names[i], (unsigned long long)took,
				RESTART_BOUND_MS);
	}
	IT_OK(b[CALL_CQ_WAIT].ret);
	IT_OK(b[CALL_NEXT_EVENT].ret);
	enum rpma_conn_event ev = b[CALL_NEXT_EVENT].event;
	IT_ASSERT_MSG(ev == RPMA_CONN_LOST || (closed_ok &&
			ev == RPMA_CONN_CLOSED), "event %s",
			rpma_utils_conn_event_2str(ev));
	if (b[CALL_NEXT_REQ].started)
		IT_ERR(RPMA_E_PROVIDER, b[CALL_NEXT_REQ].ret);
}

/* ------------------------------------------------- the applications */

/* The receives outstanding when rpmad went away all fail, in order. */
static void
expect_flushed(struct rpma_cq *cq)
{
	for (int i = 0; i < N_RECV; i++) {
		struct ibv_wc wc;
		it_wc(cq, &wc);
		IT_EQ(wc.wr_id, WR_RECV + i);
		IT_EQ(wc.opcode, IBV_WC_RECV);
		IT_ASSERT_MSG(wc.status == IBV_WC_WR_FLUSH_ERR, "receive %d: "
				"%s", i, ibv_wc_status_str(wc.status));
	}
}

/*
 * After the loss posting fails. Where rpmad itself went away (the
 * server's), the blocking calls fail at once as well; the client's rpmad
 * lives on, its queue is only quiet (its fd is made non-blocking first).
 */
static void
broken_for_good(struct rpma_conn *conn, struct rpma_cq *cq,
		struct rpma_mr_local *mr, struct rpma_ep *ep, bool rpmad_gone)
{
	IT_ERR(RPMA_E_PROVIDER, rpma_recv(conn, mr, 0, 64, NULL));
	IT_ERR(RPMA_E_PROVIDER, rpma_send(conn, mr, 0, 64,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	struct ibv_wc wc;
	int ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
	IT_ASSERT_MSG(ret == RPMA_E_PROVIDER || ret == RPMA_E_NO_COMPLETION,
			"rpma_cq_get_wc: %d", ret);
	uint64_t start = it_now_ms();
	ret = rpma_cq_wait(cq);
	IT_ASSERT_MSG(ret == (rpmad_gone ? RPMA_E_PROVIDER :
			RPMA_E_NO_COMPLETION), "rpma_cq_wait: %d", ret);
	if (rpmad_gone) {
		enum rpma_conn_event ev;
		IT_ERR(RPMA_E_PROVIDER, rpma_conn_next_event(conn, &ev));
		struct rpma_conn_req *req = NULL;
		IT_ERR(RPMA_E_PROVIDER, rpma_ep_next_conn_req(ep, NULL, &req));
	}
	IT_ASSERT(it_now_ms() - start < RESTART_BOUND_MS);
}

/* The client's cq wait must not block on a live rpmad: make it return. */
static void
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	IT_ASSERT(fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0);
}

static void
post_recvs(struct rpma_conn *conn, struct rpma_mr_local *mr)
{
	for (int i = 0; i < N_RECV; i++)
		IT_OK(rpma_recv(conn, mr, (size_t)i * 64, 64,
				(void *)(uintptr_t)(WR_RECV + i)));
}

static uint64_t
hear_kill(void)
{
	uint64_t at = 0;
	IT_EQ(it_expect(TAG_KILL_AT, &at, sizeof(at)), sizeof(at));
	return at;
}

static void
hear_restarted(void)
{
	IT_ASSERT_MSG(it_hear(TAG_RESTARTED, NULL, 0, IT_ROLE_MS) == 0,
			"no word of the restart");
}

/* A registration the other side writes and reads. */
static struct rpma_mr_local *
target_mr(struct rpma_peer *peer, uint8_t *buf)
{
	struct rpma_mr_local *mr = IT_REG(peer, buf, BUF,
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
					RPMA_MR_USAGE_RECV |
					RPMA_MR_USAGE_SEND);
	return mr;
}

/* Write a pattern to the server, read it back. */
static void
round_trip(struct rpma_conn *conn, struct rpma_peer *peer, uint32_t seed)
{
	struct it_desc desc;
	it_expect_desc(&desc);
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);
	uint8_t *buf = it_alloc(2 * BUF);
	struct rpma_mr_local *mr = IT_REG(peer, buf, 2 * BUF,
			RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	struct ibv_wc wc;
	it_fill(buf, BUF, seed);
	IT_OK(rpma_write(conn, rmr, 0, mr, 0, BUF, RPMA_F_COMPLETION_ALWAYS,
			(void *)1));
	it_wc_ok(conn, cq, 1, IBV_WC_RDMA_WRITE, &wc);
	IT_OK(rpma_read(conn, mr, BUF, rmr, 0, BUF, RPMA_F_COMPLETION_ALWAYS,
			(void *)2));
	it_wc_ok(conn, cq, 2, IBV_WC_RDMA_READ, &wc);
	IT_EQ(it_check(buf + BUF, BUF, seed), -1);
	IT_OK(rpma_mr_dereg(&mr));
	IT_OK(rpma_mr_remote_delete(&rmr));
	free(buf);
}

/* A server of one connection on an existing peer: accept, serve, close. */
static void
serve_once(struct rpma_peer *peer, const struct it_env *env)
{
	uint8_t *buf = it_alloc(BUF);
	struct rpma_mr_local *mr = target_mr(peer, buf);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, NULL);
	it_await_close(&conn);
	IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_mr_dereg(&mr));
	free(buf);
}

static int
server(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(BUF);
	struct rpma_mr_local *mr = target_mr(peer, buf);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, NULL);
	post_recvs(conn, mr);

	struct blocked b[CALLS];
	memset(b, 0, sizeof(b));
	IT_OK(rpma_conn_get_cq(conn, &b[0].cq));
	b[CALL_NEXT_EVENT].conn = conn;
	b[CALL_NEXT_REQ].ep = ep;
	block(b);
	IT_EQ(it_tell(IT_PARENT, TAG_READY, NULL, 0), 0);

	/* rpmad goes away */
	uint64_t kill_at = hear_kill();
	unblocked(b, kill_at, false);
	expect_flushed(b[0].cq);
	broken_for_good(conn, b[0].cq, mr, ep, true);

	/*
	 * A new rpmad: new objects first, in this process. Nothing above
	 * asked rpmad anything, so this is the library's first request
	 * since the old session ended.
	 */
	hear_restarted();
	struct rpma_peer *peer2 = it_peer(IT_ADDR,
			RPMA_UTIL_IBV_CONTEXT_LOCAL);
	serve_once(peer2, env);
	/* old objects make nothing new */
	struct rpma_ep *ep2 = NULL;
	IT_ERR(RPMA_E_PROVIDER, rpma_ep_listen(peer, IT_ADDR, env->port,
			&ep2));

	/* the old objects go, each without an error */
	IT_OKS(rpma_conn_disconnect(conn), rpma_conn_delete(&conn),
			rpma_mr_dereg(&mr), rpma_ep_shutdown(&ep),
			rpma_peer_delete(&peer), rpma_peer_delete(&peer2));
	free(buf);
	return 0;
}

static int
client(const struct it_env *env, void *arg)
{
	const struct restart_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR,
			RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(BUF);
	struct rpma_mr_local *mr = target_mr(peer, buf);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	struct it_desc desc;
	it_expect_desc(&desc);
	post_recvs(conn, mr);

	struct blocked b[CALLS];
	memset(b, 0, sizeof(b));
	IT_OK(rpma_conn_get_cq(conn, &b[0].cq));
	b[CALL_NEXT_EVENT].conn = conn;
	block(b);
	IT_EQ(it_tell(IT_PARENT, TAG_READY, NULL, 0), 0);

	/* the server's rpmad goes away (ours stays) */
	uint64_t kill_at = hear_kill();
	/* CLOSED: told goodbye by rpmad (SIGTERM), or by A's kernel (RDMA) */
	unblocked(b, kill_at, o->how == HOW_SIGTERM ||
			it_peer_gone_event() == RPMA_CONN_CLOSED);
	expect_flushed(b[0].cq);
	int fd = -1;
	IT_OK(rpma_cq_get_fd(b[0].cq, &fd));
	set_nonblock(fd);
	broken_for_good(conn, b[0].cq, mr, NULL, false);

	/* old connection first, then a new one on the same peer */
	IT_OK(rpma_conn_disconnect(conn));
	IT_OK(rpma_conn_delete(&conn));
	hear_restarted();
	conn = it_connect(peer, env, NULL, NULL);
	round_trip(conn, peer, 21);
	it_close(&conn);

	IT_OK(rpma_mr_dereg(&mr));
	IT_OK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

/* New processes, after the restart. */
static int
new_server(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	serve_once(peer, env);
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

static int
new_client(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR,
			RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	round_trip(conn, peer, 22);
	it_close(&conn);
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/*
 * The device handle outlives rpmad (issue 19, item 5): a handle looked up
 * before the restart makes a peer after it, as a fresh lookup's would; a
 * fresh lookup gives the same handle back, and the peer serves.
 */
static int
handle_server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct ibv_context *dev = NULL, *again = NULL;
	IT_OK(rpma_utils_get_ibv_context(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&dev));
	char name[sizeof(dev->device->name)];
	(void) snprintf(name, sizeof(name), "%s", dev->device->name);
	struct rpma_peer *peer = NULL;
	IT_OK(rpma_peer_new(dev, &peer));
	IT_EQ(it_tell(IT_PARENT, TAG_READY, NULL, 0), 0);

	hear_restarted();
	/* the peer went with the old rpmad; the handle did not */
	struct rpma_mr_local *mr = NULL;
	uint8_t *buf = it_alloc(BUF);
	IT_ERR(RPMA_E_PROVIDER, rpma_mr_reg(peer, buf, BUF,
			RPMA_MR_USAGE_READ_SRC, &mr));
	IT_OK(rpma_peer_delete(&peer));
	IT_OK(rpma_peer_new(dev, &peer));
	int odp = -1;
	IT_OK(rpma_utils_ibv_context_is_odp_capable(dev, &odp));
	IT_ASSERT(odp == 0 || odp == 1);
	IT_ASSERT_MSG(strcmp(dev->device->name, name) == 0, "%s, was %s",
			dev->device->name, name);
	IT_OK(rpma_utils_get_ibv_context(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&again));
	IT_ASSERT(again == dev);
	serve_once(peer, env);
	IT_OK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

START_TEST(test_device_handle_outlives_restart)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 2), 0);
	struct test_daemon *a = env.srv;
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, a, handle_server,
			NULL), 0);
	ck_assert_msg(it_group_hear(&g, TAG_READY, 1) == 0, "%s",
			it_report());
	test_daemon_kill(a);
	ck_assert_msg(test_daemon_restart(a, NULL) == 0, "rpmad did not start "
			"again on %s", a->socket);
	ck_assert_int_eq(it_tell(IT_SERVER, TAG_RESTARTED, NULL, 0), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			new_client, NULL), 0);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ------------------------------------------------- the parent */

/* _i: enum how */
START_TEST(test_restart_under_apps)
{
	struct restart_opts o = { .how = (enum how)_i };
	struct it_env env;
	char config[64];
	(void) snprintf(config, sizeof(config), "admin_groups = %u\n",
			(unsigned)getgid());
	ck_assert_int_eq(it_env_start_cfg(&env, 2, config), 0);
	ck_assert_int_eq(it_free_port(env.port, sizeof(env.port)), 0);
	struct test_daemon *a = env.srv, *b = env.cli;
	struct it_admin adm_a, adm_b;
	ck_assert_int_eq(it_admin_open(&adm_b, b), 0);
	struct footprint empty_a, empty_b;
	footprint_now(&adm_b, b->pid, &empty_b);

	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, a, server, &o),
			0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, b, client, &o),
			0);
	ck_assert_msg(it_group_hear(&g, TAG_READY, 2) == 0, "%s",
			it_report());

	uint64_t kill_at = it_now_ms();
	ck_assert_int_eq(it_tell_both(TAG_KILL_AT, &kill_at, sizeof(kill_at)),
			0);
	if (o.how == HOW_SIGKILL) {
		test_daemon_kill(a);
	} else {
		ck_assert_int_eq(kill(a->pid, SIGTERM), 0);
		int code = it_join(a->pid, IT_WAIT_MS);
		a->pid = 0;
		ck_assert_msg(code == 0, "rpmad ended with %d after SIGTERM",
				code);
	}
	/* as it_env_start_cfg started it: its transport, its configuration */
	ck_assert_msg(test_daemon_restart(a, NULL) == 0,
			"rpmad did not "
			"start again on %s",
			a->socket);
	ck_assert_int_eq(it_admin_open(&adm_a, a), 0);
	footprint_now(&adm_a, a->pid, &empty_a);
	ck_assert_int_eq(empty_a.counts.sessions, 0);
	/* the client first: the server's new endpoint then tells it */
	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_RESTARTED, NULL, 0), 0);
	ck_assert_int_eq(it_tell(IT_SERVER, TAG_RESTARTED, NULL, 0), 0);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());

	/* new processes on the new rpmad */
	ck_assert_msg(it_run_pair(&env, new_server, new_client, NULL) == 0,
			"%s", it_report());

	(void) footprint_expect(&adm_a, a->pid, &empty_a, IT_WAIT_MS,
			"the restarted rpmad at the end");
	(void) footprint_expect(&adm_b, b->pid, &empty_b, IT_WAIT_MS,
			"the rpmad that stayed, at the end");
	it_admin_close(&adm_a);
	it_admin_close(&adm_b);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

int
main(void)
{
	const struct th_test tc_restart[] = { TH_LOOP(test_restart_under_apps,
							      0, HOWS),
		TH_TEST(test_device_handle_outlives_restart), TH_END };
	const struct th_tcase tcases[] = {
		{ "restart", .steps = tc_restart, .create = it_tcase_create },
	};
	return check_run(th_suite("failure: rpmad restarted", tcases,
					 TH_N(tcases)),
			CK_ENV);
}
