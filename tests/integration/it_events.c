// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_events.c -- every connection event between applications on two
 * rpmads: ESTABLISHED with private data both ways, CLOSED on both sides
 * whichever side disconnects, REJECTED (by the server; nothing listening,
 * and a client that retries until the server listens, as fio does), no
 * answer within the configured timeout (librpma 0.12's RPMA_E_UNKNOWN),
 * LOST (the other application killed; the other host's rpmad killed) with
 * the outstanding work flushed, and LOST for an event that was announced
 * when the application's own rpmad went before telling which
 */

#include <arpa/inet.h>
#include <check.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "itest.h"
#include "th_suite.h"

enum { TAG_READY = 100, TAG_KILLED, TAG_GO, TAG_ANNOUNCED };

/* ============================================ established, private data */

/* as much as the transport carries: 255 and 200, or 56 and 196 (RDMA) */
#define CLI_PDATA_LEN it_pdata_max(false)
#define SRV_PDATA_LEN (it_pdata_max(true) < 200 ? it_pdata_max(true) : 200)
enum { SEED_CLI_PDATA = 5, SEED_SRV_PDATA = 6 };

static int
pdata_server(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn_req *req = it_next_req(ep, NULL);

	/* what the client sent, before accepting */
	struct rpma_conn_private_data pd = { NULL, 0 };
	IT_OK(rpma_conn_req_get_private_data(req, &pd));
	IT_EQ(pd.len, it_pdata_seen(CLI_PDATA_LEN, false));
	IT_ASSERT(pd.ptr != NULL);
	IT_EQ(it_check(pd.ptr, CLI_PDATA_LEN, SEED_CLI_PDATA), -1);

	/* the server's answer is copied: the buffer may go right away */
	uint8_t *mine = malloc(SRV_PDATA_LEN);
	IT_ASSERT(mine != NULL);
	it_fill(mine, SRV_PDATA_LEN, SEED_SRV_PDATA);
	struct rpma_conn_private_data answer = { mine, SRV_PDATA_LEN };
	struct rpma_conn *conn = NULL;
	IT_OK(rpma_conn_req_connect(&req, &answer, &conn));
	memset(mine, 0, SRV_PDATA_LEN);
	free(mine);
	it_expect_event(conn, RPMA_CONN_ESTABLISHED);

	/* the passive side's connection keeps the request's data */
	IT_OK(rpma_conn_get_private_data(conn, &pd));
	IT_EQ(pd.len, it_pdata_seen(CLI_PDATA_LEN, false));
	IT_EQ(it_check(pd.ptr, CLI_PDATA_LEN, SEED_CLI_PDATA), -1);

	it_await_close(&conn);
	IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

static int
pdata_client(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	(void) it_expect(IT_TAG_LISTENING, NULL, 0);
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_conn_req_new(peer, IT_ADDR, env->port, NULL, &req));
	uint8_t *mine = malloc(CLI_PDATA_LEN);
	IT_ASSERT(mine != NULL);
	it_fill(mine, CLI_PDATA_LEN, SEED_CLI_PDATA);
	struct rpma_conn_private_data pd = { mine, CLI_PDATA_LEN };
	struct rpma_conn *conn = NULL;
	IT_OK(rpma_conn_req_connect(&req, &pd, &conn));
	IT_ASSERT(req == NULL);
	memset(mine, 0, CLI_PDATA_LEN);
	free(mine);
	it_expect_event(conn, RPMA_CONN_ESTABLISHED);

	IT_OK(rpma_conn_get_private_data(conn, &pd));
	IT_EQ(pd.len, it_pdata_seen(SRV_PDATA_LEN, true));
	IT_ASSERT(pd.ptr != NULL);
	IT_EQ(it_check(pd.ptr, SRV_PDATA_LEN, SEED_SRV_PDATA), -1);

	it_close(&conn);
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

START_TEST(test_established_private_data)
{
	it_pair_test(2, pdata_server, pdata_client, NULL);
}
END_TEST

/* ============================================================ closed */

struct close_opts {
	int server_first;	/* which side calls rpma_conn_disconnect */
};

static int
close_server(const struct it_env *env, void *arg)
{
	const struct close_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn_req *req = it_next_req(ep, NULL);
	/* no private data sent: none to see */
	struct rpma_conn_private_data pd = { (void *)1, 1 };
	IT_OK(rpma_conn_req_get_private_data(req, &pd));
	IT_EQ(pd.len, it_pdata_seen(0, false));
	if (pd.len == 0)
		IT_ASSERT(pd.ptr == NULL);
	struct rpma_conn *conn = it_accept(&req, NULL);
	if (o->server_first)
		it_close(&conn);
	else
		it_await_close(&conn);
	IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

static int
close_client(const struct it_env *env, void *arg)
{
	const struct close_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	struct rpma_conn_private_data pd = { (void *)1, 1 };
	IT_OK(rpma_conn_get_private_data(conn, &pd));
	IT_EQ(pd.len, it_pdata_seen(0, true));
	if (o->server_first)
		it_await_close(&conn);
	else
		it_close(&conn);
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/* _i: 0 the client disconnects, 1 the server does; 2, 3 on one rpmad */
START_TEST(test_closed)
{
	struct close_opts o = { .server_first = _i % 2 };
	it_pair_test(_i < 2 ? 2 : 1, close_server, close_client, &o);
}
END_TEST

/* ========================================================== rejected */

static int
reject_server(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn_req *req = it_next_req(ep, NULL);
	IT_OK(rpma_conn_req_delete(&req));
	IT_ASSERT(req == NULL);
	/* the endpoint takes the next request as usual */
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_await_close(&conn);
	IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

static int
reject_client(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	(void) it_expect(IT_TAG_LISTENING, NULL, 0);
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_conn_req_new(peer, IT_ADDR, env->port, NULL, &req));
	struct rpma_conn *conn = NULL;
	IT_OK(rpma_conn_req_connect(&req, NULL, &conn));
	it_expect_event(conn, RPMA_CONN_REJECTED);
	IT_OK(rpma_conn_delete(&conn));

	/* again: this time the server accepts (it still listens) */
	IT_EQ(it_tell(IT_CLIENT, IT_TAG_LISTENING, NULL, 0), 0);
	conn = it_connect(peer, env, NULL, NULL);
	it_close(&conn);
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

START_TEST(test_rejected)
{
	it_pair_test(2, reject_server, reject_client, NULL);
}
END_TEST

/* ======================================================= unreachable */

/*
 * Nothing listens at env->port: the attempt is REJECTED, as an RDMA CM
 * peer without a listener answers (librpma 0.12 has no other event).
 */
static int
refused_client(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_conn_req_new(peer, IT_ADDR, env->port, NULL, &req));
	struct rpma_conn *conn = NULL;
	IT_OK(rpma_conn_req_connect(&req, NULL, &conn));
	it_expect_event(conn, RPMA_CONN_REJECTED);
	IT_OK(rpma_conn_delete(&conn));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/*
 * fio's client may start before its server: on RPMA_CONN_REJECTED it
 * deletes the connection and tries again (10 times, 5 s apart; here 0.2 s
 * apart). The server starts listening 2 s after the client's first try.
 */
#define RETRY_SERVER_DELAY_US (2 * 1000 * 1000)
#define RETRY_PAUSE_US (200 * 1000)
#define RETRY_MAX 100

static int
late_server(const struct it_env *env, void *arg)
{
	(void) it_expect(IT_TAG_READY, NULL, 0);	/* the client tried */
	(void) usleep(RETRY_SERVER_DELAY_US);
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, env->port, &ep));
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_ep_next_conn_req(ep, NULL, &req));
	struct rpma_conn *conn = it_accept(&req, NULL);
	it_expect_event(conn, RPMA_CONN_CLOSED);
	IT_OKS(rpma_conn_disconnect(conn), rpma_conn_delete(&conn),
			rpma_ep_shutdown(&ep), rpma_peer_delete(&peer));
	return 0;
}

static int
retrying_client(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_conn *conn = NULL;
	int rejected = 0;
	for (int i = 0; i < RETRY_MAX; i++) {
		struct rpma_conn_req *req = NULL;
		IT_OK(rpma_conn_req_new(peer, IT_ADDR, env->port, NULL, &req));
		IT_OK(rpma_conn_req_connect(&req, NULL, &conn));
		enum rpma_conn_event ev = it_next_event(conn, IT_WAIT_MS);
		if (i == 0)
			IT_EQ(it_tell(IT_SERVER, IT_TAG_READY, NULL, 0), 0);
		if (ev == RPMA_CONN_ESTABLISHED)
			break;
		IT_ASSERT_MSG(ev == RPMA_CONN_REJECTED, "try %d: event %s", i,
				rpma_utils_conn_event_2str(ev));
		rejected++;
		IT_OK(rpma_conn_delete(&conn));
		(void) usleep(RETRY_PAUSE_US);
	}
	IT_ASSERT_MSG(conn != NULL, "not connected after %d tries",
			RETRY_MAX);
	IT_ASSERT_MSG(rejected > 0, "the first try was not rejected");
	IT_OK(rpma_conn_disconnect(conn));
	it_expect_event(conn, RPMA_CONN_CLOSED);
	IT_OK(rpma_conn_delete(&conn));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

START_TEST(test_retry_until_listening)
{
	it_pair_test(2, late_server, retrying_client, NULL);
}
END_TEST

/*
 * Nothing answers: with a 300 ms connection timeout the attempt must end
 * well before the default 1 s would (a 700 ms margin for a slow host), the
 * way librpma 0.12 ends it on RDMA_CM_EVENT_UNREACHABLE:
 * rpma_conn_next_event fails with RPMA_E_UNKNOWN. Two ways to get there:
 * - a non-routable address (10.255.255.1): where the network drops the
 *   packets this is the timeout; where it has no route at all the
 *   failure comes at once, which is as good;
 * - a listener on 127.0.0.1 whose accept queue is full: the kernel drops
 *   further SYNs, so a connect hangs for sure and the timeout must end
 *   it (and not much before its time).
 */
#define BLACKHOLE_ADDR "10.255.255.1"
#define SILENT_TIMEOUT_MS 300
#define SILENT_MARGIN_MS 700

struct silent_opts {
	const char *addr;
	int hangs;	/* a connect there is known not to finish */
	int v0_12;	/* call rpma_conn_next_event@LIBRPMA_0.12 */
};

typedef int next_event_fn(struct rpma_conn *, enum rpma_conn_event *);

static int
silent_client(const struct it_env *env, void *arg)
{
	const struct silent_opts *o = arg;
	struct rpma_peer *peer = it_peer(o->addr, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_conn_cfg *cfg = NULL;
	IT_OK(rpma_conn_cfg_new(&cfg));
	IT_OK(rpma_conn_cfg_set_timeout(cfg, SILENT_TIMEOUT_MS));
	uint64_t start = it_now_ms();
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_conn_req_new(peer, o->addr, env->port, cfg, &req));
	struct rpma_conn *conn = NULL;
	IT_OK(rpma_conn_req_connect(&req, NULL, &conn));
	int fd = -1;
	IT_OK(rpma_conn_get_event_fd(conn, &fd));
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	IT_ASSERT(poll(&pfd, 1, IT_WAIT_MS) == 1);
	/*
	 * 1.x reports the event RPMA_CONN_UNREACHABLE; 0.12 had none and
	 * failed with RPMA_E_UNKNOWN, the event undefined
	 */
	next_event_fn *next_event = rpma_conn_next_event;
	if (o->v0_12)
		next_event = (next_event_fn *)dlvsym(RTLD_DEFAULT,
				"rpma_conn_next_event", "LIBRPMA_0.12");
	IT_ASSERT(next_event != NULL);
	enum rpma_conn_event ev = RPMA_CONN_ESTABLISHED;
	int ret = next_event(conn, &ev);
	uint64_t took = it_now_ms() - start;
	(void) fprintf(stderr, "it_events: %s:%s: %s after %llu ms (timeout "
			"%d ms)\n", o->addr, env->port, rpma_err_2str(ret),
			(unsigned long long)took, SILENT_TIMEOUT_MS);
	IT_ASSERT_MSG(o->v0_12 ?
			ret == RPMA_E_UNKNOWN && ev == RPMA_CONN_UNDEFINED :
			ret == 0 && ev == RPMA_CONN_UNREACHABLE,
			"%s, event %s after %llu ms", rpma_err_2str(ret),
			rpma_utils_conn_event_2str(ev),
			(unsigned long long)took);
	IT_ASSERT_MSG(took <= SILENT_TIMEOUT_MS + SILENT_MARGIN_MS,
			"the failure came after %llu ms, the timeout is %d ms",
			(unsigned long long)took, SILENT_TIMEOUT_MS);
	IT_ASSERT_MSG(!o->hangs || took >= SILENT_TIMEOUT_MS * 8 / 10,
			"the failure came after %llu ms, before the %d ms "
			"timeout", (unsigned long long)took, SILENT_TIMEOUT_MS);
	IT_OKS(rpma_conn_delete(&conn), rpma_conn_cfg_delete(&cfg),
			rpma_peer_delete(&peer));
	return 0;
}

static int
no_server(const struct it_env *env, void *arg)
{
	return 0;
}

#define FILLERS 8

/*
 * A listener at IT_ADDR:port whose accept queue is full: returns the
 * listener; fillers[] get the connections that fill it (-1 when unused).
 * Returns -1 when a further connect still completes (then this host
 * does not drop SYNs as expected).
 */
static int
silent_listener(const char *port, int fillers[FILLERS])
{
	for (int i = 0; i < FILLERS; i++)
		fillers[i] = -1;
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(ls, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)atoi(port)) };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(ls, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(ls, 0), 0);
	for (int i = 0; i < FILLERS; i++) {
		int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
				SOCK_CLOEXEC, 0);
		ck_assert_int_ge(c, 0);
		(void) connect(c, (struct sockaddr *)&sin, sizeof(sin));
		struct pollfd pfd = { .fd = c, .events = POLLOUT };
		if (poll(&pfd, 1, 100) == 0) {
			/* it hangs: the queue is full */
			(void) close(c);
			return ls;
		}
		fillers[i] = c;
	}
	(void) close(ls);
	return -1;
}

/*
 * _i % 3: 0 nothing listening, 1 a non-routable address, 2 a full
 * listener; _i >= 3: through LIBRPMA_0.12 (nothing listening is the same)
 */
START_TEST(test_unreachable)
{
	if (_i == 3)
		return;
	/*
	 * Over RDMA the non-routable address has no RDMA device (finding
	 * one already fails: rpma_utils_get_ibv_context, RPMA_E_PROVIDER),
	 * and a full TCP listener means nothing to the RDMA CM: only
	 * "nothing listening" is the same there
	 */
	if (_i % 3 != 0 && !it_transport_is("tcp"))
		return;
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 2), 0);
	struct silent_opts o = {
		.addr = _i % 3 == 1 ? BLACKHOLE_ADDR : IT_ADDR,
		.v0_12 = _i >= 3,
	};
	int ls = -1, fillers[FILLERS];
	if (_i % 3 == 2) {
		ls = silent_listener(env.port, fillers);
		ck_assert_msg(ls >= 0, "connects to a full listener complete "
				"here: cannot make a silent address");
		o.hangs = 1;
	}
	ck_assert_msg(it_run_pair(&env, no_server,
			_i % 3 ? silent_client : refused_client, &o) == 0,
			"%s", it_report());
	if (ls >= 0) {
		for (int i = 0; i < FILLERS; i++) {
			if (fillers[i] >= 0)
				(void) close(fillers[i]);
		}
		(void) close(ls);
	}
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ============================================================== lost */

/*
 * Both sides connect; the "observer" has receives posted and (unless both
 * observe) a send that waits for a receive the other side never posts.
 * The parent then kills the other application, or the other host's rpmad:
 * the observer must see RPMA_CONN_LOST and every outstanding work request
 * completed with IBV_WC_WR_FLUSH_ERR; nothing can be posted any more.
 */
enum lost_how { KILL_SERVER_APP, KILL_CLIENT_APP, KILL_SERVER_DAEMON };
#define LOST_HOWS 3

struct lost_opts {
	enum lost_how how;
	bool one_daemon;	/* both sides on one rpmad */
};

#define N_RECV 3
#define WR_SEND 0x5100
#define WR_RECV 0x5200

/* The observer's part: post, report ready, see it break. */
/*
 * What the observer sees: LOST when its own rpmad died (the library
 * finds its session gone), else what the transport says of a peer that
 * died (it_peer_gone_event).
 */
static enum rpma_conn_event
loss_event(bool own_daemon_died)
{
	return own_daemon_died ? RPMA_CONN_LOST : it_peer_gone_event();
}

static void
observe_loss(struct rpma_conn *conn, struct rpma_peer *peer, int with_send,
		enum rpma_conn_event want_event)
{
	uint8_t *buf = it_alloc(4096);
	struct rpma_mr_local *mr = IT_REG(peer, buf, 4096,
			RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	for (int i = 0; i < N_RECV; i++)
		IT_OK(rpma_recv(conn, mr, (size_t)i * 64, 64,
				(void *)(uintptr_t)(WR_RECV + i)));
	if (with_send)
		IT_OK(rpma_send(conn, mr, 2048, 64, RPMA_F_COMPLETION_ALWAYS,
				(void *)WR_SEND));
	/* the send waits for a receive: nothing completes yet */
	it_no_wc(cq, 50);
	IT_EQ(it_tell(IT_PARENT, TAG_READY, NULL, 0), 0);

	enum rpma_conn_event ev = it_next_event(conn, IT_WAIT_MS);
	IT_ASSERT_MSG(ev == want_event, "event %s, wanted %s",
			rpma_utils_conn_event_2str(ev),
			rpma_utils_conn_event_2str(want_event));

	/* everything outstanding is flushed, each exactly once */
	int seen[N_RECV + 1] = { 0 };
	int want = N_RECV + (with_send ? 1 : 0);
	for (int n = 0; n < want; n++) {
		struct ibv_wc wc;
		it_wc(cq, &wc);
		IT_ASSERT_MSG(wc.status == IBV_WC_WR_FLUSH_ERR, "wr_id %#llx: "
				"status %s, wanted WR_FLUSH_ERR",
				(unsigned long long)wc.wr_id,
				ibv_wc_status_str(wc.status));
		if (wc.wr_id == WR_SEND) {
			IT_EQ(wc.opcode, IBV_WC_SEND);
			IT_EQ(seen[N_RECV]++, 0);
		} else {
			uint64_t i = wc.wr_id - WR_RECV;
			IT_ASSERT_MSG(i < N_RECV, "wr_id %#llx",
					(unsigned long long)wc.wr_id);
			IT_EQ(wc.opcode, IBV_WC_RECV);
			IT_EQ(seen[i]++, 0);
		}
	}
	struct ibv_wc wc;
	int ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
	IT_ASSERT_MSG(ret != 0, "one more completion: wr_id %#llx status %s",
			(unsigned long long)wc.wr_id,
			ibv_wc_status_str(wc.status));

	/* a broken connection takes no more work (or flushes it at once) */
	ret = rpma_send(conn, mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, (void *)1);
	if (ret == 0) {
		it_wc(cq, &wc);
		IT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	}

	(void) rpma_conn_disconnect(conn);
	IT_OK(rpma_conn_delete(&conn));
	IT_OK(rpma_mr_dereg(&mr));
	free(buf);
}

/* The side that gets killed: wait for it. */
static void
be_victim(void)
{
	IT_EQ(it_tell(IT_PARENT, TAG_READY, NULL, 0), 0);
	(void) it_hear(TAG_KILLED, NULL, 0, IT_ROLE_MS);
}

static int
lost_server(const struct it_env *env, void *arg)
{
	const struct lost_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);

	switch (o->how) {
	case KILL_SERVER_APP:
		be_victim();
		IT_ASSERT_MSG(0, "still alive");
		break;
	case KILL_CLIENT_APP:
		observe_loss(conn, peer, 1, loss_event(false));
		break;
	case KILL_SERVER_DAEMON:
		/*
		 * Our own rpmad dies: the library finds its side gone and
		 * flushes our receives itself. (No sends on either side
		 * here: they would meet the other side's receives.)
		 */
		observe_loss(conn, peer, 0, loss_event(true));
		/* new objects need a daemon: an error, not a hang */
		struct ibv_context *dev = NULL;
		IT_ERR(RPMA_E_PROVIDER, rpma_utils_get_ibv_context(IT_ADDR,
				RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev));
		break;
	}
	IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

static int
lost_client(const struct it_env *env, void *arg)
{
	const struct lost_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	if (o->how == KILL_CLIENT_APP) {
		be_victim();
		IT_ASSERT_MSG(0, "still alive");
	}
	observe_loss(conn, peer, o->how != KILL_SERVER_DAEMON,
			loss_event(o->how == KILL_SERVER_DAEMON && o->one_daemon));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/*
 * _i: enum lost_how between two rpmads; then the same with one rpmad,
 * where KILL_SERVER_DAEMON takes both sides' daemon away
 */
START_TEST(test_lost)
{
	struct lost_opts o = { .how = (enum lost_how)(_i % LOST_HOWS),
		.one_daemon = _i >= LOST_HOWS };
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, _i < LOST_HOWS ? 2 : 1), 0);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			lost_server, &o), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			lost_client, &o), 0);
	ck_assert_msg(it_group_hear(&g, TAG_READY, 2) == 0, "%s",
			it_report());
	switch (o.how) {
	case KILL_SERVER_APP:
		it_group_kill(&g, IT_SERVER);
		break;
	case KILL_CLIENT_APP:
		it_group_kill(&g, IT_CLIENT);
		break;
	case KILL_SERVER_DAEMON:
		test_daemon_kill(env.srv);
		break;
	}
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ============================================= announced, rpmad gone */

/*
 * The client's disconnect announces CLOSED to the server (a byte on its
 * event descriptor); the server's rpmad is killed before the server asks
 * which event it was. Its side is gone: LOST, as when the stream ends,
 * not a provider error (rpmad's drain deadline after an upgrade ends
 * sessions so, in the middle of their events).
 */
static int
announced_server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	IT_EQ(it_tell(IT_PARENT, TAG_READY, NULL, 0), 0);
	int fd = -1;
	IT_OK(rpma_conn_get_event_fd(conn, &fd));
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	IT_EQ(poll(&pfd, 1, IT_WAIT_MS), 1);
	IT_EQ(it_tell(IT_PARENT, TAG_ANNOUNCED, NULL, 0), 0);
	(void) it_expect(TAG_KILLED, NULL, 0);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	IT_OK(rpma_conn_next_event(conn, &ev));
	IT_ASSERT_MSG(ev == RPMA_CONN_LOST, "event %s",
			rpma_utils_conn_event_2str(ev));
	/* and it is said once */
	IT_ERR(RPMA_E_PROVIDER, rpma_conn_next_event(conn, &ev));
	IT_OKS(rpma_conn_delete(&conn), rpma_ep_shutdown(&ep),
			rpma_peer_delete(&peer));
	return 0;
}

static int
announced_client(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	(void) it_expect(TAG_GO, NULL, 0);
	IT_OK(rpma_conn_disconnect(conn));
	enum rpma_conn_event ev = it_next_event(conn, IT_WAIT_MS);
	IT_ASSERT_MSG(ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST,
			"event %s", rpma_utils_conn_event_2str(ev));
	IT_OK(rpma_conn_delete(&conn));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

START_TEST(test_announced_then_rpmad_gone)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 2), 0);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			announced_server, NULL), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			announced_client, NULL), 0);
	ck_assert_msg(it_group_hear(&g, TAG_READY, 1) == 0, "%s",
			it_report());
	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_GO, NULL, 0), 0);
	ck_assert_msg(it_group_hear(&g, TAG_ANNOUNCED, 1) == 0, "%s",
			it_report());
	test_daemon_kill(env.srv);
	ck_assert_int_eq(it_tell(IT_SERVER, TAG_KILLED, NULL, 0), 0);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

int
main(void)
{
	const struct th_test tc_events[] = {
		TH_TEST(test_established_private_data),
		TH_LOOP(test_closed, 0, 4), TH_TEST(test_rejected),
		TH_LOOP(test_unreachable, 0, 6),
		TH_TEST(test_retry_until_listening),
		TH_LOOP(test_lost, 0, 2 * LOST_HOWS),
		TH_TEST(test_announced_then_rpmad_gone), TH_END
	};
	const struct th_tcase tcases[] = {
		{ "events", .steps = tc_events, .create = it_tcase_create },
	};
	return check_run(th_suite("integration: connection events", tcases,
					 TH_N(tcases)),
			CK_ENV);
}
