// SPDX-License-Identifier: BSD-3-Clause
/*
 * hostile_tls.c -- TLS on the software transport (issue 33, item 3):
 * before it, payloads, keys, addresses and pairing tokens crossed the wire
 * in clear, and a key sniffed on one connection was good on another.
 *
 *  - a sniffer: the client's rpmad connects through a relay the test
 *    controls, which keeps every byte both ways; the client reads the
 *    server's secret page and writes one of its own. Without TLS the
 *    relay sees both pages, the remote address and key of the reads and
 *    writes (a frame's raddr and rkey) and the HELLOs' magic; with tls =
 *    required (and with on, both rpmads speaking it) it sees none of them,
 *    only TLS records, and both rpmads log the key that authenticated;
 *  - forged peers: an rpmad with the right identity and the wrong key, one
 *    with an identity the server does not know, and a plain socket that
 *    speaks rpmad's wire: refused by a server with tls = required (the
 *    first two's clients see RPMA_CONN_REJECTED), the server application
 *    never sees a request;
 *  - an older rpmad without TLS, played with rpmad's own encoder: as the
 *    passive end it closes the TLS hellos it cannot read, and an rpmad with
 *    tls = on connects again in plain TCP and is served, with tls =
 *    required it gives up (RPMA_CONN_REJECTED); as the active end its plain
 *    HELLOs are answered with tls = on and refused with tls = required.
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "hostile.h"
#include "th_suite.h"
#include "wire_peer.h"

#define SECRET_SIZE (64 * 1024)
#define SERVER_SEED 3301
#define CLIENT_SEED 4409
#define FRAME_MS 10000

enum {
	TAG_DESC_PARENT = 100,	/* S -> parent: its descriptor */
	TAG_DONE,		/* C -> S */
	TAG_OUTCOME,		/* C -> parent: the connection's first event */
};

/* ----------------------------------------------------------- the keys */

static const char *const KEY_A = "rpmad-a";
static const char *const KEY_B = "rpmad-b";

/* hex of a key made from a seed (deterministic: the two files agree) */
static void
key_hex(unsigned seed, char *out)
{
	for (int i = 0; i < 32; i++)
		(void) sprintf(out + 2 * i, "%02x", (seed * 131 + (unsigned)i *
				17) & 0xff);
}

/* A keys file of `first` (the rpmad's own) and `other` (NULL: none). */
static void
keys_file(const char *path, const char *first, unsigned first_seed,
		const char *other, unsigned other_seed)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	char hex[65];
	key_hex(first_seed, hex);
	dprintf(fd, "# the keys of %s\n%s:%s\n", first, first, hex);
	if (other) {
		key_hex(other_seed, hex);
		dprintf(fd, "%s:%s\n", other, hex);
	}
	ck_assert_int_eq(close(fd), 0);
}

/* where a test's keys live: its own directory, removed at its end */
static char keydir[64];

static void
keydir_remove(void)
{
	char path[128];
	(void) snprintf(path, sizeof(path), "%s/a.psk", keydir);
	(void) unlink(path);
	(void) snprintf(path, sizeof(path), "%s/b.psk", keydir);
	(void) unlink(path);
	(void) rmdir(keydir);
}

/*
 * Two rpmads, A (the server's) with `mode_a` and B (the client's) with
 * `mode_b`, each with its own key first and the other's second (so each
 * knows the other); B's own is `b_identity` with the key of `b_seed`
 * (2: the one A knows as rpmad-b's).
 */
static void
start_pair(struct it_env *env, const char *mode_a, const char *mode_b,
		const char *b_identity, unsigned b_seed)
{
	(void) snprintf(keydir, sizeof(keydir), "/tmp/rpmad-tls.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(keydir));
	char pa[128], pb[128], ca[300], cb[300];
	(void) snprintf(pa, sizeof(pa), "%s/a.psk", keydir);
	(void) snprintf(pb, sizeof(pb), "%s/b.psk", keydir);
	keys_file(pa, KEY_A, 1, KEY_B, 2);
	keys_file(pb, b_identity, b_seed, KEY_A, 1);
	(void) snprintf(ca, sizeof(ca), "tls = %s\ntls_psk_file = %s\n",
			mode_a, pa);
	(void) snprintf(cb, sizeof(cb), "tls = %s\ntls_psk_file = %s\n",
			mode_b, pb);
	ck_assert_int_eq(it_env_start_cfgs(env, 2, strcmp(mode_a, "off") ?
			ca : "", strcmp(mode_b, "off") ? cb : ""), 0);
}

/* the end of a test: the daemons exit cleanly, the keys go */
static void
stop_pair(struct it_env *env)
{
	ck_assert_int_eq(it_env_stop(env), 0);
	keydir_remove();
}

/* ------------------------------------------------------------ sniffer */

#define SNIFF_PAIRS 8

struct sniffer {
	int lfd;
	char port[16];
	int to_port;
	pthread_t thread;
	volatile int stop;
	pthread_mutex_t mu;
	uint8_t *cap;		/* everything, both ways, in arrival order */
	size_t len, cap_size;
	size_t first_len;	/* what the first socket's first bytes were */
	uint8_t first[8];
};

static void
capture(struct sniffer *s, const uint8_t *buf, size_t n)
{
	pthread_mutex_lock(&s->mu);
	if (s->len + n > s->cap_size) {
		size_t size = (s->len + n) * 2;
		uint8_t *bigger = realloc(s->cap, size);
		if (bigger) {
			s->cap = bigger;
			s->cap_size = size;
		}
	}
	if (s->len + n <= s->cap_size) {
		memcpy(s->cap + s->len, buf, n);
		s->len += n;
	}
	pthread_mutex_unlock(&s->mu);
}

static int
connect_to(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		(void) close(fd);
		return -1;
	}
	return fd;
}

static void *
sniff_thread(void *arg)
{
	struct sniffer *s = arg;
	int a[SNIFF_PAIRS], b[SNIFF_PAIRS], n = 0;
	uint8_t buf[65536];
	while (!s->stop) {
		struct pollfd p[1 + 2 * SNIFF_PAIRS];
		p[0] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
		for (int i = 0; i < n; i++) {
			p[1 + 2 * i] = (struct pollfd){ .fd = a[i],
				.events = POLLIN };
			p[2 + 2 * i] = (struct pollfd){ .fd = b[i],
				.events = POLLIN };
		}
		if (poll(p, (nfds_t)(1 + 2 * n), 50) <= 0)
			continue;
		if ((p[0].revents & POLLIN) && n < SNIFF_PAIRS) {
			int c = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
			int d = c >= 0 ? connect_to(s->to_port) : -1;
			if (d >= 0) {
				a[n] = c;
				b[n] = d;
				n++;
			} else if (c >= 0) {
				(void) close(c);
			}
		}
		for (int i = 0; i < 2 * n; i++) {
			if (!(p[1 + i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			int from = p[1 + i].fd;
			int to = (i % 2) ? a[i / 2] : b[i / 2];
			ssize_t r = read(from, buf, sizeof(buf));
			if (r <= 0) {
				/* one end is gone: so is the other */
				(void) shutdown(to, SHUT_RDWR);
				(void) shutdown(from, SHUT_RDWR);
				continue;
			}
			if (s->len == 0 && i == 0) {
				s->first_len = (size_t)r < sizeof(s->first) ?
					(size_t)r : sizeof(s->first);
				memcpy(s->first, buf, s->first_len);
			}
			capture(s, buf, (size_t)r);
			for (ssize_t w = 0; w < r;) {
				ssize_t k = write(to, buf + w, (size_t)(r - w));
				if (k <= 0)
					break;
				w += k;
			}
		}
	}
	for (int i = 0; i < n; i++) {
		(void) close(a[i]);
		(void) close(b[i]);
	}
	return NULL;
}

static void
sniffer_start(struct sniffer *s, const char *to_port)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	s->to_port = atoi(to_port);
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	ck_assert_int_eq(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(s->lfd, 16), 0);
	ck_assert_int_eq(getsockname(s->lfd, (struct sockaddr *)&a, &len), 0);
	(void) snprintf(s->port, sizeof(s->port), "%u",
			(unsigned)ntohs(a.sin_port));
	ck_assert_int_eq(pthread_create(&s->thread, NULL, sniff_thread, s),
			0);
}

static void
sniffer_stop(struct sniffer *s)
{
	s->stop = 1;
	ck_assert_int_eq(pthread_join(s->thread, NULL), 0);
	(void) close(s->lfd);
}

static bool
seen(const struct sniffer *s, const void *what, size_t len)
{
	return len && s->len >= len &&
		memmem(s->cap, s->len, what, len) != NULL;
}

/* ------------------------------------------------------------ roles */

/* the server: a secret page for the client to read, and one to write */
static int
secret_server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(2 * SECRET_SIZE);
	it_fill(buf, SECRET_SIZE, SERVER_SEED);
	memset(buf + SECRET_SIZE, 0, SECRET_SIZE);
	struct rpma_mr_local *mr = IT_REG(peer, buf, 2 * SECRET_SIZE,
			RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
					RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	uint8_t desc[32];
	IT_OK(rpma_mr_get_descriptor(mr, desc));
	IT_EQ(it_tell(IT_PARENT, TAG_DESC_PARENT, desc, 21), 0);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, NULL);
	IT_EQ(it_hear(TAG_DONE, NULL, 0, IT_ROLE_MS), 0);
	/* what the client wrote arrived */
	IT_EQ(it_check(buf + SECRET_SIZE, SECRET_SIZE, CLIENT_SEED), -1);
	it_await_close(&conn);
	IT_OKS(rpma_ep_shutdown(&ep), rpma_mr_dereg(&mr),
			rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

/* the client, through the port in arg: reads the secret, writes its own */
static int
sniffed_client(const struct it_env *env, void *arg)
{
	(void) env;
	const char *port = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(2 * SECRET_SIZE);
	memset(buf, 0, SECRET_SIZE);
	it_fill(buf + SECRET_SIZE, SECRET_SIZE, CLIENT_SEED);
	struct rpma_mr_local *mr = IT_REG(peer, buf, 2 * SECRET_SIZE,
			RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC);
	(void) it_expect(IT_TAG_LISTENING, NULL, 0);
	struct rpma_conn *conn = it_connect_to(peer, port, NULL, NULL);
	struct it_desc desc;
	it_expect_desc(&desc);
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	IT_OK(rpma_read(conn, mr, 0, rmr, 0, SECRET_SIZE,
			RPMA_F_COMPLETION_ALWAYS, (void *)1));
	struct ibv_wc wc;
	it_wc_ok(conn, cq, 1, IBV_WC_RDMA_READ, &wc);
	IT_EQ(it_check(buf, SECRET_SIZE, SERVER_SEED), -1);
	IT_OK(rpma_write(conn, rmr, SECRET_SIZE, mr, SECRET_SIZE, SECRET_SIZE,
			RPMA_F_COMPLETION_ON_ERROR, NULL));
	IT_OK(rpma_flush(conn, rmr, SECRET_SIZE, SECRET_SIZE,
			RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			(void *)2));
	it_wc_ok(conn, cq, 2, IBV_WC_RDMA_READ, &wc);
	IT_EQ(it_tell(IT_SERVER, TAG_DONE, NULL, 0), 0);
	it_client_end(&conn, &rmr, &mr, &peer, buf);
	return 0;
}

/* ------------------------------------------------------------ tests */

static const char *const modes[][2] = {
	{ "off", "off" },		/* the control: all in clear */
	{ "required", "required" },
	{ "on", "on" },
};

START_TEST(test_sniffed)
{
	struct it_env env;
	start_pair(&env, modes[_i][0], modes[_i][1], KEY_B, 2);
	struct sniffer sn;
	sniffer_start(&sn, env.port);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			secret_server, NULL), 0);
	uint8_t desc[21];
	ck_assert_int_eq(it_hear(TAG_DESC_PARENT, desc, sizeof(desc),
			IT_ROLE_MS), (int)sizeof(desc));
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			sniffed_client, sn.port), 0);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	sniffer_stop(&sn);

	/* what a sniffer looks for: the pages, a frame's raddr + rkey */
	uint8_t secret[SECRET_SIZE], written[SECRET_SIZE], where[12];
	it_fill(secret, sizeof(secret), SERVER_SEED);
	it_fill(written, sizeof(written), CLIENT_SEED);
	memcpy(where, desc, 8);			/* raddr */
	memcpy(where + 8, desc + 16, 4);	/* rkey */
	static const uint8_t magic[] = { 'R', 'P', 'M', 'A' };
	bool tls = _i != 0;
	ck_assert_uint_gt(sn.len, 2 * SECRET_SIZE);
	ck_assert_msg(seen(&sn, secret + 4096, 256) == !tls, "the secret "
			"page %s on the wire", tls ? "shows" : "does not show");
	ck_assert_msg(seen(&sn, written + 4096, 256) == !tls, "the written "
			"page %s on the wire", tls ? "shows" : "does not show");
	ck_assert_msg(seen(&sn, where, sizeof(where)) == !tls, "the remote "
			"address and key %s on the wire", tls ? "show" :
			"do not show");
	ck_assert_msg(seen(&sn, magic, sizeof(magic)) == !tls, "a HELLO "
			"(with its pairing token) %s on the wire", tls ?
			"shows" : "does not show");
	if (tls) {
		/* a TLS record, a handshake, and both logs name the keys */
		ck_assert_uint_eq(sn.first[0], 0x16);
		ck_assert_uint_eq(sn.first[1], 0x03);
		ck_assert_int_ge(test_daemon_log_count(env.srv,
						 "TLS 1.3 with the key "
						 "of 'rpmad-b'"),
				1);
		ck_assert_int_ge(test_daemon_log_count(env.cli,
						 "TLS 1.3 with the key "
						 "of 'rpmad-b'"),
				1);
	}
	free(sn.cap);
	stop_pair(&env);
}
END_TEST

/* a client whose connection must end with `want` (arg) */
static int
refused_client(const struct it_env *env, void *arg)
{
	enum rpma_conn_event want = *(const enum rpma_conn_event *)arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_conn_req_new(peer, IT_ADDR, env->port, NULL, &req));
	struct rpma_conn *conn = NULL;
	IT_OK(rpma_conn_req_connect(&req, NULL, &conn));
	enum rpma_conn_event ev = it_next_event(conn, IT_ROLE_MS);
	IT_ASSERT_MSG(ev == want, "event %s, not %s",
			rpma_utils_conn_event_2str(ev),
			rpma_utils_conn_event_2str(want));
	(void) rpma_conn_delete(&conn);
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/* no request waits at the endpoint (a byte of its descriptor each) */
static void
no_request(struct rpma_ep *ep)
{
	int fd, avail = -1;
	IT_OK(rpma_ep_get_fd(ep, &fd));
	IT_EQ(ioctl(fd, FIONREAD, &avail), 0);
	IT_EQ(avail, 0);
}

/* a server that listens, and must see no request until the parent's word */
static int
untouched_server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, env->port, &ep));
	IT_EQ(it_tell(IT_PARENT, IT_TAG_LISTENING, NULL, 0), 0);
	IT_EQ(it_hear(TAG_DONE, NULL, 0, 4 * IT_ROLE_MS), 0);
	no_request(ep);
	IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/*
 * _i: 0 the right identity with a wrong key, 1 an identity the server
 * does not know
 */
START_TEST(test_forged_peer)
{
	struct it_env env;
	start_pair(&env, "required", "required", _i ? "rpmad-x" : KEY_B,
			_i ? 2 : 99);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			untouched_server, NULL), 0);
	ck_assert_int_eq(it_hear(IT_TAG_LISTENING, NULL, 0, IT_ROLE_MS), 0);
	enum rpma_conn_event want = RPMA_CONN_REJECTED;
	pid_t c = it_spawn(IT_CLIENT, &env, env.cli, refused_client, &want);
	ck_assert_int_gt(c, 0);
	ck_assert_msg(it_join(c, IT_ROLE_MS) == 0, "%s", it_report());

	/* and a plain socket that speaks the wire, from another host */
	uint8_t token[TCP_TOKEN_SIZE];
	wire_token(token);
	int p = wire_connect_from("127.0.0.2", env.port);
	int s = wire_connect_from("127.0.0.2", env.port);
	ck_assert(p >= 0 && s >= 0);
	wire_hello(p, HELLO_PRIMARY, token, "forged", 7);
	wire_hello(s, HELLO_SECONDARY, token, NULL, 0);
	ck_assert(wire_closed_within(p, IT_WAIT_MS));
	ck_assert(wire_closed_within(s, IT_WAIT_MS));
	(void) close(p);
	(void) close(s);
	ck_assert_int_ge(test_daemon_log_count(env.srv,
					 "a TLS handshake failed"),
			1);
	ck_assert_int_ge(test_daemon_log_count(env.srv,
					 "without TLS refused (tls = "
					 "required) (from 127.0.0.2)"),
			1);

	ck_assert_int_eq(it_tell(IT_SERVER, TAG_DONE, NULL, 0), 0);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	stop_pair(&env);
}
END_TEST

/* --------------------------------------------- an older rpmad, no TLS */

static int
listen_any(char *port, size_t len)
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(l, 16), 0);
	ck_assert_int_eq(getsockname(l, (struct sockaddr *)&a, &alen), 0);
	(void) snprintf(port, len, "%u", (unsigned)ntohs(a.sin_port));
	return l;
}

/* the next socket at l within ms, or -1 */
static int
accept_within(int l, int ms)
{
	struct pollfd p = { .fd = l, .events = POLLIN };
	if (poll(&p, 1, ms) != 1)
		return -1;
	return accept4(l, NULL, NULL, SOCK_CLOEXEC);
}

/* the first byte a socket sends, within ms (-1: none) */
static int
first_byte(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint8_t b;
	if (poll(&p, 1, ms) != 1 || recv(fd, &b, 1, MSG_PEEK) != 1)
		return -1;
	return b;
}

/* a client that connects to the old rpmad's port (arg) and ends so */
struct old_passive {
	char port[16];
	enum rpma_conn_event want;
};

static int
old_passive_client(const struct it_env *env, void *arg)
{
	(void) env;
	const struct old_passive *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_conn_req_new(peer, IT_ADDR, o->port, NULL, &req));
	struct rpma_conn *conn = NULL;
	IT_OK(rpma_conn_req_connect(&req, NULL, &conn));
	enum rpma_conn_event ev = it_next_event(conn, IT_ROLE_MS);
	IT_EQ(it_tell(IT_PARENT, TAG_OUTCOME, &ev, sizeof(ev)), 0);
	IT_ASSERT_MSG(ev == o->want, "event %s, not %s",
			rpma_utils_conn_event_2str(ev),
			rpma_utils_conn_event_2str(o->want));
	if (ev == RPMA_CONN_ESTABLISHED) {
		(void) rpma_conn_disconnect(conn);
		(void) it_next_event(conn, IT_WAIT_MS);
	}
	(void) rpma_conn_delete(&conn);
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/*
 * The old rpmad is passive: a client of B (tls = on: 0, required: 1)
 * connects to it. It closes the TLS hellos as garbage, as it did; with
 * on, the plain HELLOs that follow are answered.
 */
START_TEST(test_old_passive)
{
	struct it_env env;
	start_pair(&env, "on", _i ? "required" : "on", KEY_B, 2);
	struct old_passive o = { .want = _i ? RPMA_CONN_REJECTED :
		RPMA_CONN_ESTABLISHED };
	int l = listen_any(o.port, sizeof(o.port));
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			old_passive_client, &o), 0);
	/*
	 * The TLS attempt: sockets that open with a TLS record, closed unread
	 * (B gives the other up when the first fails, so it may be gone by
	 * the time it is looked at); then, with on, two plain HELLOs.
	 */
	int tls_seen = 0, fd[2] = { -1, -1 }, nplain = 0;
	while (nplain < 2) {
		int c = accept_within(l, _i ? 2000 : IT_WAIT_MS);
		if (c < 0)
			break;
		int b = first_byte(c, IT_WAIT_MS);
		if (b == TF_HELLO) {
			fd[nplain++] = c;
			continue;
		}
		tls_seen += b == 0x16;
		(void) close(c);
	}
	ck_assert_int_ge(tls_seen, 1);
	ck_assert_int_eq(nplain, _i ? 0 : 2);
	if (!_i) {
		struct tcp_frame f;
		uint8_t buf[TCP_HELLO_SIZE + TCP_PDATA_MAX];
		uint8_t role[2];
		for (int i = 0; i < 2; i++) {
			ck_assert_int_eq(wire_recv_frame(fd[i], &f, buf,
					sizeof(buf), FRAME_MS), 1);
			ck_assert_int_eq(f.type, TF_HELLO);
			struct tcp_hello h;
			ck_assert_int_eq(tcp_hello_decode(buf, f.length, &h),
					0);
			role[i] = h.role;
		}
		/* the primary first */
		ck_assert_uint_ne(role[0], role[1]);
		if (role[0] == HELLO_SECONDARY) {
			int t = fd[0];
			fd[0] = fd[1];
			fd[1] = t;
		}
		/* ACCEPT (our id, no private data) on the primary */
		uint8_t id[TCP_ACCEPT_ID_SIZE] = { 1, 2, 3, 4, 5, 6, 7, 8 };
		struct tcp_frame acc = { .type = TF_ACCEPT,
			.length = sizeof(id) };
		wire_send_frame(fd[0], &acc, id, sizeof(id));
		ck_assert_int_eq(wire_recv_frame(fd[0], &f, buf, sizeof(buf),
				FRAME_MS), 1);
		ck_assert_int_eq(f.type, TF_READY);
		/* the client's goodbye, answered in kind */
		do {
			ck_assert_int_eq(wire_recv_frame(fd[0], &f, buf,
					sizeof(buf), FRAME_MS), 1);
		} while (f.type == TF_HEARTBEAT);
		ck_assert_int_eq(f.type, TF_DISCONNECT);
		struct tcp_frame bye = { .type = TF_DISCONNECT };
		wire_send_frame(fd[1], &bye, NULL, 0);
		(void) wire_closed_within(fd[0], IT_WAIT_MS);
		(void) close(fd[0]);
		(void) close(fd[1]);
	}
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	(void) close(l);
	stop_pair(&env);
}
END_TEST

/* a server that accepts one request (arg: whether one must come) */
static int
old_active_server(const struct it_env *env, void *arg)
{
	bool comes = *(const bool *)arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, env->port, &ep));
	IT_EQ(it_tell(IT_PARENT, IT_TAG_LISTENING, NULL, 0), 0);
	if (comes) {
		struct rpma_conn_req *req = it_next_req(ep, NULL);
		struct rpma_conn *conn = NULL;
		IT_OK(rpma_conn_req_connect(&req, NULL, &conn));
		it_expect_event(conn, RPMA_CONN_ESTABLISHED);
		enum rpma_conn_event ev = it_next_event(conn, IT_ROLE_MS);
		IT_ASSERT(ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST);
		(void) rpma_conn_delete(&conn);
	} else {
		IT_EQ(it_hear(TAG_DONE, NULL, 0, IT_ROLE_MS), 0);
		no_request(ep);
	}
	IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	return 0;
}

/*
 * The old rpmad is active: its plain HELLOs reach A (tls = on: 0,
 * required: 1).
 */
START_TEST(test_old_active)
{
	struct it_env env;
	start_pair(&env, _i ? "required" : "on", "on", KEY_B, 2);
	bool comes = !_i;
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			old_active_server, &comes), 0);
	ck_assert_int_eq(it_hear(IT_TAG_LISTENING, NULL, 0, IT_ROLE_MS), 0);
	uint8_t token[TCP_TOKEN_SIZE];
	wire_token(token);
	int p = wire_connect(env.port), s = wire_connect(env.port);
	ck_assert(p >= 0 && s >= 0);
	wire_hello(p, HELLO_PRIMARY, token, NULL, 0);
	wire_hello(s, HELLO_SECONDARY, token, NULL, 0);
	if (_i) {
		ck_assert(wire_closed_within(p, IT_WAIT_MS));
		ck_assert(wire_closed_within(s, IT_WAIT_MS));
		ck_assert_int_eq(it_tell(IT_SERVER, TAG_DONE, NULL, 0), 0);
	} else {
		struct tcp_frame f;
		uint8_t buf[TCP_HELLO_SIZE + TCP_PDATA_MAX];
		ck_assert_int_eq(wire_recv_frame(p, &f, buf, sizeof(buf),
				FRAME_MS), 1);
		ck_assert_int_eq(f.type, TF_ACCEPT);
		struct tcp_frame ready = { .type = TF_READY };
		wire_send_frame(p, &ready, NULL, 0);
		struct tcp_frame bye = { .type = TF_DISCONNECT };
		wire_send_frame(p, &bye, NULL, 0);
		do {
			ck_assert_int_eq(wire_recv_frame(s, &f, buf,
					sizeof(buf), FRAME_MS), 1);
		} while (f.type == TF_HEARTBEAT);
		ck_assert_int_eq(f.type, TF_DISCONNECT);
	}
	(void) close(p);
	(void) close(s);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	stop_pair(&env);
}
END_TEST

int
main(void)
{
	const struct th_test tc_tls[] = { TH_LOOP(test_sniffed, 0, 3),
		TH_LOOP(test_forged_peer, 0, 2),
		TH_LOOP(test_old_passive, 0, 2), TH_LOOP(test_old_active, 0, 2),
		TH_END };
	const struct th_tcase tcases[] = {
		{ "tls", .steps = tc_tls, .create = it_tcase_create,
				.timeout = 60 },
	};
	return check_run_forked(th_suite("hostile_tls", tcases, TH_N(tcases)),
			CK_NORMAL);
}
