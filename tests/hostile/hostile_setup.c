// SPDX-License-Identifier: BSD-3-Clause
/*
 * hostile_setup.c -- forged connection requests against a server's
 * endpoint (issue 20, items 2, 3 and 6), replayed with plain TCP sockets
 * that speak rpmad's wire from another host's address (127.0.0.2):
 *  - a request that reaches the endpoint and is never completed (no READY
 *    after the server's ACCEPT) holds a single-threaded server for
 *    setup_timeout_ms at most, ending RPMA_CONN_LOST (an outcome
 *    rpma_conn_next_event documents), and a legitimate client queued
 *    behind several of them is served after one: requests are handed
 *    out one origin after another;
 *  - 1,100 forged requests fill the 1,024 places of an endpoint and the
 *    rest are refused, but three legitimate clients from another host
 *    still get in, each taking a forged request's place; the warnings
 *    are the forger's share of the log, never the server's;
 *  - malformed frames and HELLOs of another wire version from one host
 *    make at most RATELIMIT_BURST lines a window, and every line held
 *    back is counted in a "suppressed N messages caused by" line;
 *  - forged connections a server accepts, each established and lost at
 *    once, from one host, at log_level info and debug (issue 33: 30,123
 *    lines in 10 s at info): the same bound, every line the forger's.
 * The same deadlines on the verbs transport are tested on the fakes
 * (tests/verbs/test_verbs.c, test_setup_deadlines).
 */

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hostile.h"
#include "th_suite.h"
#include "wire_peer.h"

#define FORGER "127.0.0.2"	/* another host, as far as rpmad can tell */
#define SETUP_MS 1000		/* setup_timeout_ms of these rpmads */
#define LEGIT "legit"
#define FORGED "forged"
/* places at an endpoint (rpmad/objects/ep.h) */
#define BACKLOG 1024
#define BURST 20		/* lines per window (rpmad/core/ratelimit.h) */
#define WINDOW_MS 10000

/*
 * How long a role waits for the parent's word: the whole flood comes
 * first, and on a loaded machine (make -j check, sanitizers) that takes
 * far longer than a message usually may.
 */
#define GO_WAIT_MS 90000

enum {
	TAG_LISTENING = 100,	/* server -> parent */
	TAG_GO,			/* parent -> a role */
	TAG_SERVED,		/* server -> parent: int */
};

/* ---------------------------------------------------------- forging */

/* In a role: waits for the parent's TAG_GO. */
static void
await_go(void)
{
	IT_ASSERT_MSG(it_hear(TAG_GO, NULL, 0, GO_WAIT_MS) >= 0,
			"no word to go within %d ms", GO_WAIT_MS);
}

/* A forged request: both sockets and their HELLOs; it never says READY. */
struct forged {
	int p, s;
};

/* 0, or -1 when rpmad refused a socket (its listen queue is full). */
static int
forge(struct forged *f, const char *port)
{
	uint8_t token[TCP_TOKEN_SIZE];
	wire_token(token);
	f->p = wire_connect_from(FORGER, port);
	f->s = f->p >= 0 ? wire_connect_from(FORGER, port) : -1;
	if (f->s < 0) {
		if (f->p >= 0)
			(void) close(f->p);
		return -1;
	}
	wire_hello(f->p, HELLO_PRIMARY, token, FORGED, sizeof(FORGED));
	wire_hello(f->s, HELLO_SECONDARY, token, NULL, 0);
	return 0;
}

static void
forged_close(struct forged *f)
{
	(void) close(f->p);
	(void) close(f->s);
}

/* The private data the request carries says who sent it. */
static bool
is_legit(struct rpma_conn_req *req)
{
	struct rpma_conn_private_data pd;
	IT_OK(rpma_conn_req_get_private_data(req, &pd));
	return pd.len >= sizeof(LEGIT) && memcmp(pd.ptr, LEGIT,
			sizeof(LEGIT)) == 0;
}

/* ------------------------------------------------------------ roles */

/* How many requests wait at the endpoint (one byte each). */
static void
wait_pending(struct rpma_ep *ep, int n)
{
	int fd, avail = 0;
	IT_OK(rpma_ep_get_fd(ep, &fd));
	for (int waited = 0; waited < IT_ROLE_MS; waited += 10) {
		if (ioctl(fd, FIONREAD, &avail) == 0 && avail >= n)
			return;
		it_sleep_ms(10);
	}
	IT_ASSERT_MSG(0, "%d requests wait, not %d", avail, n);
}

/*
 * A single-threaded server, as the upstream examples are: it accepts the
 * requests one at a time and waits for each one's outcome. arg: how many
 * requests to wait for before it starts. Tells the parent where in line
 * the legitimate one came.
 */
static int
patient_server(const struct it_env *env, void *arg)
{
	int want = *(const int *)arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, env->port, &ep));
	IT_EQ(it_tell(IT_PARENT, TAG_LISTENING, NULL, 0), 0);
	wait_pending(ep, want);

	int legit_at = -1;
	for (int i = 0; i < want; i++) {
		struct rpma_conn_req *req = it_next_req(ep, NULL);
		bool legit = is_legit(req);
		struct rpma_conn *conn = NULL;
		IT_OK(rpma_conn_req_connect(&req, NULL, &conn));
		/* a forged one: no longer than the deadline, and then LOST */
		enum rpma_conn_event ev = it_next_event(conn, 10 * SETUP_MS);
		if (legit) {
			IT_EQ(ev, RPMA_CONN_ESTABLISHED);
			legit_at = i;
			it_await_close(&conn);
		} else {
			IT_ASSERT_MSG(ev == RPMA_CONN_LOST, "a forged request "
					"ended %s",
					rpma_utils_conn_event_2str(ev));
			IT_OK(rpma_conn_delete(&conn));
		}
	}
	IT_EQ(it_tell(IT_PARENT, TAG_SERVED, &legit_at, sizeof(legit_at)), 0);
	IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/*
 * The server under a flood: it waits for the parent's word, refuses
 * every forged request and accepts the three legitimate ones.
 */
static int
flooded_server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, env->port, &ep));
	IT_EQ(it_tell(IT_PARENT, TAG_LISTENING, NULL, 0), 0);
	await_go();

	struct rpma_conn *legit[3];
	int n = 0, forged = 0;
	while (n < 3) {
		struct rpma_conn_req *req = it_next_req(ep, NULL);
		if (!is_legit(req)) {
			forged++;
			IT_OK(rpma_conn_req_delete(&req));
			continue;
		}
		legit[n++] = it_accept(&req, NULL);
	}
	for (int i = 0; i < 3; i++)
		it_await_close(&legit[i]);
	IT_EQ(it_tell(IT_PARENT, TAG_SERVED, &forged, sizeof(forged)), 0);
	IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/* A legitimate client: on the parent's word, connects and closes. */
static int
legit_client(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR,
			RPMA_UTIL_IBV_CONTEXT_REMOTE);
	await_go();
	struct rpma_conn_private_data pd = { (void *)LEGIT, sizeof(LEGIT) };
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_conn_req_new(peer, IT_ADDR, env->port, NULL, &req));
	struct rpma_conn *conn = NULL;
	IT_OK(rpma_conn_req_connect(&req, &pd, &conn));
	/* served after the forged requests ahead of it, one each */
	enum rpma_conn_event ev = it_next_event(conn, IT_ROLE_MS);
	IT_ASSERT_MSG(ev == RPMA_CONN_ESTABLISHED, "the legitimate client: "
			"%s", rpma_utils_conn_event_2str(ev));
	it_close(&conn);
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/* ------------------------------------------------------------ the log */

struct log_tally {
	size_t lines;		/* lines that contain `what` */
	size_t forger;		/* lines charged to FORGER, any */
	size_t from_others;	/* of those, lines not charged to FORGER */
	unsigned long long suppressed;	/* said in "caused by FORGER" */
	size_t reports;		/* how many such lines */
	size_t server_share;	/* "messages from uid" lines */
};

static void
tally_log(const struct test_daemon *d, const char *what, struct log_tally *t)
{
	memset(t, 0, sizeof(*t));
	FILE *f = fopen(d->log, "r");
	ck_assert_ptr_nonnull(f);
	char line[2048];
	while (fgets(line, sizeof(line), f)) {
		unsigned long long n;
		char *s = strstr(line, "suppressed ");
		if (s && strstr(line, "messages caused by " FORGER "\n") &&
				sscanf(s, "suppressed %llu", &n) == 1) {
			t->suppressed += n;
			t->reports++;
		}
		if (strstr(line, "messages from uid"))
			t->server_share++;
		if (strstr(line, "(from " FORGER ")"))
			t->forger++;
		if (!strstr(line, what))
			continue;
		t->lines++;
		if (!strstr(line, "(from " FORGER ")"))
			t->from_others++;
	}
	(void) fclose(f);
}

/* ------------------------------------------------------------ tests */

START_TEST(test_unfinished_requests)
{
	struct it_env env;
	char cfg[64];
	(void) snprintf(cfg, sizeof(cfg), "setup_timeout_ms = %d\n", SETUP_MS);
	ck_assert_int_eq(it_env_start_cfg(&env, 2, cfg), 0);
	const int forged_n = 3;
	int want = forged_n + 1;
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			patient_server, &want), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			legit_client, NULL), 0);
	ck_assert_msg(it_group_hear(&g, TAG_LISTENING, 1) == 0, "%s",
			it_report());

	/* forged requests first, then the legitimate one behind them */
	struct forged f[3];
	for (int i = 0; i < forged_n; i++)
		ck_assert_int_eq(forge(&f[i], env.port), 0);
	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_GO, NULL, 0), 0);

	int at = -1;
	ck_assert_msg(it_hear(TAG_SERVED, &at, sizeof(at), IT_ROLE_MS +
			forged_n * 10 * SETUP_MS) == sizeof(at), "%s",
			it_report());
	/* one forged request ahead of it, not all three */
	ck_assert_int_eq(at, 1);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());

	/* each forged one was accepted, then dropped at the deadline */
	for (int i = 0; i < forged_n; i++) {
		struct tcp_frame fr;
		uint8_t pd[TCP_PDATA_MAX + 8];
		ck_assert_int_eq(wire_recv_frame(f[i].p, &fr, pd, sizeof(pd),
				IT_WAIT_MS), 1);
		ck_assert_int_eq(fr.type, TF_ACCEPT);
		ck_assert(wire_closed_within(f[i].p, IT_WAIT_MS));
		forged_close(&f[i]);
	}
	struct log_tally t;
	tally_log(env.srv, "did not confirm the accepted connection", &t);
	ck_assert_uint_eq(t.lines, (size_t)forged_n);
	ck_assert_uint_eq(t.from_others, 0);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

START_TEST(test_forged_flood)
{
	/* the forger's sockets: two per request */
	struct rlimit rl = { 8192, 8192 };
	(void) setrlimit(RLIMIT_NOFILE, &rl);
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 2), 0);
	pid_t pid = env.srv->pid;
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			flooded_server, NULL), 0);
	const enum it_role clients[3] = { IT_CLIENT, IT_THIRD, IT_FOURTH };
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(it_group_spawn(&g, clients[i], &env, env.cli,
				legit_client, NULL), 0);
	ck_assert_msg(it_group_hear(&g, TAG_LISTENING, 1) == 0, "%s",
			it_report());
	struct it_admin a;
	ck_assert_int_eq(it_admin_open(&a, env.srv), 0);

	/*
	 * The endpoint fills with forged requests, a batch at a time: a
	 * burst of sockets larger than rpmad pairs at once would push out
	 * the forger's own oldest (and cost a slow build its time-out).
	 */
	enum { MAX_FORGED = 3000, BATCH = 32 };
	static struct forged f[MAX_FORGED];
	int n = 0, pending = 0, refused = 0;
	while (pending < BACKLOG && n < MAX_FORGED) {
		int batch = BACKLOG - pending < BATCH ? BACKLOG - pending : BATCH;
		for (int i = 0; i < batch && n < MAX_FORGED; i++) {
			if (forge(&f[n], env.port) == 0) {
				n++;
				refused = 0;
				continue;
			}
			/* the listener gone (a role died): say so, not hang */
			ck_assert_msg(++refused < 100,
					"rpmad refused the forger %d "
					"times in a row: %s",
					refused, it_report());
		}
		int want = pending + batch;
		for (int waited = 0; waited < IT_WAIT_MS; waited += 10) {
			pending = it_admin_ep_pending(&a, env.port, NULL);
			if (pending >= want)
				break;
			it_sleep_ms(10);
		}
	}
	ck_assert_int_eq(it_admin_ep_pending(&a, env.port, NULL), BACKLOG);
	/* more of the forger's are refused: it has every place already */
	for (int i = 0; i < 76; i++) {
		struct forged x;
		ck_assert_int_eq(forge(&x, env.port), 0);
		struct tcp_frame fr;
		uint8_t pd[TCP_PDATA_MAX + 8];
		ck_assert_int_eq(wire_recv_frame(x.p, &fr, pd, sizeof(pd),
				IT_WAIT_MS), 1);
		ck_assert_int_eq(fr.type, TF_REJECT);
		forged_close(&x);
	}

	/* another host's clients still get places, forged ones give way */
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(it_tell(clients[i], TAG_GO, NULL, 0), 0);
	int legit = 0;
	for (int waited = 0; legit < 3 && waited < IT_ROLE_MS; waited += 10) {
		legit = it_admin_ep_pending(&a, env.port, "127.0.0.1");
		if (legit < 3)
			it_sleep_ms(10);
	}
	ck_assert_msg(legit == 3, "%d legitimate requests wait", legit);
	ck_assert_int_eq(it_admin_ep_pending(&a, env.port, FORGER),
			BACKLOG - 3);
	ck_assert_int_eq(it_admin_ep_pending(&a, env.port, NULL), BACKLOG);
	ck_assert_int_eq(it_tell(IT_SERVER, TAG_GO, NULL, 0), 0);

	int forged_seen = -1;
	ck_assert_msg(it_hear(TAG_SERVED, &forged_seen, sizeof(forged_seen),
			IT_ROLE_MS) == sizeof(forged_seen), "%s", it_report());
	/* handed out in turns: at most one forged request before each */
	ck_assert_int_le(forged_seen, 3);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	it_admin_close(&a);
	for (int i = 0; i < n; i++)
		forged_close(&f[i]);

	/*
	 * The refusals (and the dropped sockets of a forger that opens them
	 * faster than it pairs them) are the forger's lines, never the
	 * server's share: a burst a window for all of them.
	 */
	struct log_tally t;
	tally_log(env.srv, "requests wait", &t);
	ck_assert_uint_eq(t.from_others, 0);
	ck_assert_uint_eq(t.server_share, 0);
	ck_assert_uint_ge(t.forger, 1);
	ck_assert_uint_le(t.forger, BURST * 3);
	ck_assert_int_eq(it_daemon_serves(env.srv, pid), 0);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* A frame no decoder takes, on a socket of its own. */
static void
malformed(const char *port)
{
	int fd = wire_connect_from(FORGER, port);
	ck_assert_int_ge(fd, 0);
	uint8_t junk[TCP_FRAME_SIZE];
	memset(junk, 0xff, sizeof(junk));
	wire_send_all(fd, junk, sizeof(junk));
	ck_assert(wire_closed_within(fd, IT_WAIT_MS));
	(void) close(fd);
}

/* A HELLO of a wire version newer than rpmad's, on a socket of its own. */
static void
old_hello(const char *port)
{
	int fd = wire_connect_from(FORGER, port);
	ck_assert_int_ge(fd, 0);
	struct tcp_hello h = { .magic = TCP_WIRE_MAGIC,
			.version = TCP_WIRE_VERSION + 1, .role = HELLO_PRIMARY };
	uint8_t buf[TCP_HELLO_SIZE];
	tcp_hello_encode(&h, buf);
	struct tcp_frame fr = { .type = TF_HELLO, .length = sizeof(buf) };
	wire_send_frame(fd, &fr, buf, sizeof(buf));
	ck_assert(wire_closed_within(fd, IT_WAIT_MS));
	(void) close(fd);
}

/* listens until the parent's word */
static int
quiet_server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, env->port, &ep));
	IT_EQ(it_tell(IT_PARENT, TAG_LISTENING, NULL, 0), 0);
	/* as long as the flood takes */
	IT_ASSERT(it_hear(TAG_GO, NULL, 0, 10 * IT_ROLE_MS) == 0);
	IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

START_TEST(test_log_flood)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 1), 0);
	pid_t pid = env.srv->pid;
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			quiet_server, NULL), 0);
	ck_assert_msg(it_group_hear(&g, TAG_LISTENING, 1) == 0, "%s",
			it_report());

	enum { EACH = 500 };
	uint64_t start = it_now_ms();
	for (int i = 0; i < EACH; i++) {
		malformed(env.port);
		old_hello(env.port);
	}
	uint64_t took = it_now_ms() - start;

	/* every line is either in the log or in a count, once the windows end */
	struct log_tally t;
	for (int waited = 0; waited <= 2 * WINDOW_MS; waited += 100) {
		tally_log(env.srv, "broke the protocol", &t);
		if (t.lines + t.suppressed >= 2 * EACH)
			break;
		it_sleep_ms(100);
	}
	ck_assert_uint_eq(t.lines + t.suppressed, 2 * EACH);
	size_t windows = (size_t)(took / WINDOW_MS) + 2;
	ck_assert_msg(t.lines <= BURST * windows, "%zu lines in %llu ms",
			t.lines, (unsigned long long)took);
	ck_assert_uint_eq(t.from_others, 0);
	ck_assert_uint_ge(t.reports, 1);

	ck_assert_int_eq(it_tell(IT_SERVER, TAG_GO, NULL, 0), 0);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	ck_assert_int_eq(it_daemon_serves(env.srv, pid), 0);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ------------------------------------------- accepted forged connections */

#define STOP "stop"
#define FLOOD_MS 3000

/*
 * A server that accepts every request and waits for its end, as a
 * trusting application does, until one says STOP; tells the parent how
 * many it served.
 */
static int
accepting_server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, env->port, &ep));
	IT_EQ(it_tell(IT_PARENT, TAG_LISTENING, NULL, 0), 0);
	int served = 0;
	for (bool stop = false; !stop; served++) {
		struct rpma_conn_req *req = it_next_req(ep, NULL);
		struct rpma_conn_private_data pd;
		IT_OK(rpma_conn_req_get_private_data(req, &pd));
		stop = pd.len >= sizeof(STOP) && memcmp(pd.ptr, STOP,
				sizeof(STOP)) == 0;
		struct rpma_conn *conn = NULL;
		IT_OK(rpma_conn_req_connect(&req, NULL, &conn));
		enum rpma_conn_event ev;
		do {
			ev = it_next_event(conn, 10 * SETUP_MS);
		} while (ev == RPMA_CONN_ESTABLISHED);
		IT_OK(rpma_conn_delete(&conn));
	}
	IT_EQ(it_tell(IT_PARENT, TAG_SERVED, &served, sizeof(served)), 0);
	IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/* A forged connection the server accepts: READY after its ACCEPT, gone. */
static void
forge_accepted(const char *port, const char *pdata)
{
	uint8_t token[TCP_TOKEN_SIZE];
	wire_token(token);
	int p = wire_connect_from(FORGER, port);
	int sec = wire_connect_from(FORGER, port);
	ck_assert(p >= 0 && sec >= 0);
	wire_hello(p, HELLO_PRIMARY, token, pdata, (uint8_t)strlen(pdata) + 1);
	wire_hello(sec, HELLO_SECONDARY, token, NULL, 0);
	struct tcp_frame fr;
	uint8_t buf[TCP_PDATA_MAX + 16];
	ck_assert_int_eq(wire_recv_frame(p, &fr, buf, sizeof(buf),
			10 * SETUP_MS), 1);
	ck_assert_int_eq(fr.type, TF_ACCEPT);
	struct tcp_frame ready = { .type = TF_READY };
	wire_send_frame(p, &ready, NULL, 0);
	(void) close(p);
	(void) close(sec);
}

/* _i: 0 log_level = info, 1 debug */
START_TEST(test_accepted_flood)
{
	ck_assert_int_eq(setenv("RPMAD_TEST_LOG_LEVEL", _i ? "debug" : "info",
			1), 0);
	struct it_env env;
	int started = it_env_start(&env, 1);
	(void) unsetenv("RPMAD_TEST_LOG_LEVEL");
	ck_assert_int_eq(started, 0);
	pid_t pid = env.srv->pid;
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			accepting_server, NULL), 0);
	ck_assert_msg(it_group_hear(&g, TAG_LISTENING, 1) == 0, "%s",
			it_report());

	int forged = 0;
	uint64_t start = it_now_ms();
	while (it_now_ms() - start < FLOOD_MS) {
		forge_accepted(env.port, FORGED);
		forged++;
	}
	forge_accepted(env.port, STOP);
	forged++;
	int served = 0;
	ck_assert_msg(it_hear(TAG_SERVED, &served, sizeof(served),
			IT_ROLE_MS) == sizeof(served), "%s", it_report());
	ck_assert_int_eq(served, forged);
	uint64_t took = it_now_ms() - start;

	/*
	 * each one lost (and established, unless its secondary socket's end
	 * is read before the READY): a line or more, in the log or counted
	 */
	struct log_tally t;
	for (int waited = 0; waited <= 2 * WINDOW_MS; waited += 100) {
		tally_log(env.srv, "connection qp", &t);
		if (t.reports >= 1 && t.lines + t.suppressed >= (size_t)forged)
			break;
		it_sleep_ms(100);
	}
	ck_assert_msg(t.lines + t.suppressed >= (size_t)forged,
			"%zu lines and %llu suppressed of %d connections",
			t.lines, t.suppressed, forged);
	size_t windows = (size_t)(took / WINDOW_MS) + 2;
	ck_assert_msg(t.forger <= BURST * windows, "%zu lines of %s in %llu "
			"ms (%d connections) at %s", t.forger, FORGER,
			(unsigned long long)took, forged,
			_i ? "debug" : "info");
	ck_assert_msg(t.from_others == 0, "%zu lines about the forger's "
			"connections were not its share", t.from_others);
	ck_assert_uint_ge(t.reports, 1);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	ck_assert_int_eq(it_daemon_serves(env.srv, pid), 0);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

int
main(void)
{
	const struct th_test tc_setup[] = { TH_TEST(test_unfinished_requests),
		TH_TEST(test_forged_flood), TH_TEST(test_log_flood),
		TH_LOOP(test_accepted_flood, 0, 2), TH_END };
	const struct th_tcase tcases[] = {
		/* a flood of 1,100 forged requests, its windows of log lines */
		{ "setup", .steps = tc_setup, .create = it_tcase_create,
				.timeout = 120 },
	};
	return check_run_forked(th_suite("hostile_setup", tcases, TH_N(tcases)),
			CK_NORMAL);
}
