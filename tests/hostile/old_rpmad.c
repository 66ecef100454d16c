// SPDX-License-Identifier: BSD-3-Clause
/*
 * old_rpmad.c -- an rpmad of the previous wire version (1), played by the
 * test with rpmad's own encoder (wire_peer.h), against a real rpmad: a
 * cluster upgraded one host at a time keeps its links.
 *
 * Version 1, as its rpmads spoke it: a 32-byte HELLO without an rpmad id,
 * an ACCEPT that carries the private data alone, and liveness per
 * connection: each socket hears a HEARTBEAT when it was quiet for a
 * quarter of tcp_timeout_ms and is lost after seven eighths of silence. An
 * rpmad of version 1 closes the sockets of a HELLO it cannot read.
 *
 *  - old active: it connects to a server application on rpmad A with
 *    version-1 HELLOs; A answers in version 1, the old rpmad's write and
 *    read are served, both sockets hear heartbeats through two timeouts
 *    of otherwise idle time, and the goodbye closes the connection.
 *  - old passive: a client application on A connects to it; the first,
 *    version-2 HELLOs are closed unanswered, A connects again in version
 *    1, the private data of both directions arrives, the client's read is
 *    answered, both sockets hear heartbeats, and the client's disconnect
 *    says goodbye.
 */

#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "hostile.h"
#include "th_suite.h"
#include "wire_peer.h"

#define PAGE 4096
/* liveness at a pace a test can watch: a heartbeat every 750 ms */
#define TIMEOUT_MS 3000
#define CONFIG "tcp_timeout_ms = 3000\n"
#define FRAME_MS 5000
#define SEED_OLD 77
#define PDATA_C "from the new rpmad's client"
#define PDATA_OLD "from the old rpmad"

enum {
	TAG_DESC = 100,		/* S -> parent: address and key */
	TAG_WRITTEN,		/* parent -> S */
	TAG_S_DONE,
	TAG_C_READ,		/* C -> parent: its read is posted */
	TAG_C_DONE,
};

/* ------------------------------------------------ liveness, version 1 */

/*
 * `ms` of idle time as a version-1 rpmad spends it: a heartbeat on each
 * socket every quarter of the timeout; every frame that arrives must be
 * a heartbeat. Both sockets must hear at least one.
 */
static void
idle_as_v1(int p, int s, int ms)
{
	int fds[2] = { p, s };
	unsigned beats[2] = { 0, 0 };
	uint64_t end = it_now_ms() + (uint64_t)ms;
	uint64_t next_beat = 0;
	for (uint64_t now; (now = it_now_ms()) < end;) {
		if (now >= next_beat) {
			struct tcp_frame hb = { .type = TF_HEARTBEAT };
			wire_send_frame(p, &hb, NULL, 0);
			wire_send_frame(s, &hb, NULL, 0);
			next_beat = now + TIMEOUT_MS / 4;
		}
		struct pollfd pfd[2] = { { .fd = p, .events = POLLIN },
				{ .fd = s, .events = POLLIN } };
		if (poll(pfd, 2, 50) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			struct tcp_frame f;
			uint8_t junk[PAGE];
			ck_assert_msg(wire_recv_frame(fds[i], &f, junk,
					sizeof(junk), FRAME_MS) == 1, "rpmad "
					"closed the %s socket of a version-1 "
					"connection (%s)", i ? "secondary" :
					"primary", it_report());
			ck_assert_msg(f.type == TF_HEARTBEAT, "frame type %u "
					"on an idle connection", f.type);
			beats[i]++;
		}
	}
	ck_assert_msg(beats[0] > 0 && beats[1] > 0, "heartbeats heard in "
			"%d ms: %u on the primary, %u on the secondary (a "
			"version-1 rpmad watches each socket)", ms, beats[0],
			beats[1]);
}

/* The next frame that is not a heartbeat. */
static void
recv_skipping_beats(int fd, struct tcp_frame *f, void *buf, size_t cap)
{
	do {
		ck_assert_msg(wire_recv_frame(fd, f, buf, cap, FRAME_MS) == 1,
				"no frame (%s)", it_report());
	} while (f->type == TF_HEARTBEAT);
}

/* ========================================= the old rpmad, active side */

static int
server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(PAGE);
	memset(buf, 0, PAGE);
	struct rpma_mr_local *mr = IT_REG(peer, buf, PAGE,
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC);
	uint8_t desc[32];
	IT_OK(rpma_mr_get_descriptor(mr, desc));
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, env->port, &ep));
	IT_EQ(it_tell(IT_PARENT, TAG_DESC, desc, sizeof(desc)), 0);

	struct rpma_conn_req *req = it_next_req(ep, NULL);
	struct rpma_conn_private_data pd = { 0 };
	IT_OK(rpma_conn_req_get_private_data(req, &pd));
	IT_EQ(pd.len, sizeof(PDATA_OLD));
	IT_ASSERT(memcmp(pd.ptr, PDATA_OLD, sizeof(PDATA_OLD)) == 0);
	struct rpma_conn *conn = it_accept(&req, NULL);
	IT_EQ(it_expect(TAG_WRITTEN, NULL, 0), 0);
	IT_EQ(it_check(buf, 64, SEED_OLD), -1);
	/* after the idle time: longer than it_expect_event waits */
	IT_EQ(it_next_event(conn, IT_ROLE_MS), RPMA_CONN_CLOSED);
	IT_OKS(rpma_conn_disconnect(conn), rpma_conn_delete(&conn),
			rpma_ep_shutdown(&ep), rpma_mr_dereg(&mr),
			rpma_peer_delete(&peer));
	free(buf);
	IT_EQ(it_tell(IT_PARENT, TAG_S_DONE, NULL, 0), 0);
	return 0;
}

START_TEST(test_old_active)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start_cfg(&env, 1, CONFIG), 0);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, &env.d[0],
			server, NULL), 0);
	uint8_t desc[32];
	ck_assert_msg(it_hear(TAG_DESC, desc, sizeof(desc), IT_ROLE_MS) ==
			(int)sizeof(desc), "%s", it_report());

	uint8_t token[TCP_TOKEN_SIZE];
	wire_token(token);
	int p = wire_connect(env.port), s = wire_connect(env.port);
	wire_hello_of(p, 1, HELLO_PRIMARY, token, PDATA_OLD,
			sizeof(PDATA_OLD));
	wire_hello_of(s, 1, HELLO_SECONDARY, token, NULL, 0);
	/* version 1's ACCEPT: the private data alone, here none */
	struct tcp_frame f;
	uint8_t buf[PAGE];
	ck_assert_msg(wire_recv_frame(p, &f, buf, sizeof(buf), IT_WAIT_MS) ==
			1, "no ACCEPT (%s)", it_report());
	ck_assert_int_eq(f.type, TF_ACCEPT);
	ck_assert_uint_eq(f.length, 0);
	struct tcp_frame ready = { .type = TF_READY };
	wire_send_frame(p, &ready, NULL, 0);

	/* a write into S's registration, then a read of it back */
	uint8_t data[64];
	it_fill(data, sizeof(data), SEED_OLD);
	struct tcp_frame wr = { .type = TF_WRITE, .length = sizeof(data),
			.seq = 1, .raddr = hu_desc_addr(desc),
			.rkey = hu_desc_key(desc) };
	wire_send_frame(p, &wr, data, sizeof(data));
	recv_skipping_beats(p, &f, buf, sizeof(buf));
	ck_assert_int_eq(f.type, TF_ACK);
	ck_assert_uint_eq(f.seq, 1);
	ck_assert_int_eq(it_tell(IT_SERVER, TAG_WRITTEN, NULL, 0), 0);

	idle_as_v1(p, s, 2 * TIMEOUT_MS);

	struct tcp_frame rd = { .type = TF_READ, .length = sizeof(data),
			.seq = 2, .raddr = hu_desc_addr(desc),
			.rkey = hu_desc_key(desc) };
	wire_send_frame(p, &rd, NULL, 0);
	recv_skipping_beats(p, &f, buf, sizeof(buf));
	ck_assert_int_eq(f.type, TF_READ_RESP);
	ck_assert_uint_eq(f.seq, 2);
	ck_assert_uint_eq(f.length, sizeof(data));
	ck_assert(memcmp(buf, data, sizeof(data)) == 0);

	/* the goodbye follows the active side's operations: the primary */
	struct tcp_frame bye = { .type = TF_DISCONNECT };
	wire_send_frame(p, &bye, NULL, 0);
	recv_skipping_beats(s, &f, buf, sizeof(buf));
	ck_assert_int_eq(f.type, TF_DISCONNECT);
	ck_assert_msg(it_hear(TAG_S_DONE, NULL, 0, IT_ROLE_MS) == 0, "%s",
			it_report());
	(void) close(p);
	(void) close(s);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	ck_assert_int_eq(test_daemon_log_count(&env.d[0], "broke the protocol"),
			0);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ======================================== the old rpmad, passive side */

static int
client(const struct it_env *env, void *arg)
{
	(void) env;
	const char *port = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(PAGE);
	memset(buf, 0, PAGE);
	struct rpma_mr_local *mr =
			IT_REG(peer, buf, PAGE, RPMA_MR_USAGE_READ_DST);
	/* the old rpmad's registration: 0x1000 bytes at 0x1000, key 0x42 */
	uint8_t rdesc[21];
	memset(rdesc, 0, sizeof(rdesc));
	rdesc[1] = 0x10;
	rdesc[9] = 0x10;
	rdesc[16] = 0x42;
	rdesc[20] = RPMA_MR_USAGE_READ_SRC;
	struct rpma_mr_remote *rmr = NULL;
	IT_OK(rpma_mr_remote_from_descriptor(rdesc, sizeof(rdesc), &rmr));

	struct rpma_conn_private_data pd = { .ptr = PDATA_C,
			.len = sizeof(PDATA_C) };
	struct rpma_conn *conn = it_connect_to(peer, port, NULL, &pd);
	struct rpma_conn_private_data got = { 0 };
	IT_OK(rpma_conn_get_private_data(conn, &got));
	IT_EQ(got.len, sizeof(PDATA_OLD));
	IT_ASSERT(memcmp(got.ptr, PDATA_OLD, sizeof(PDATA_OLD)) == 0);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	IT_OK(rpma_read(conn, mr, 0, rmr, 0, 64, RPMA_F_COMPLETION_ALWAYS,
			(void *)7));
	IT_EQ(it_tell(IT_PARENT, TAG_C_READ, NULL, 0), 0);
	struct ibv_wc wc;
	it_wc_ok(conn, cq, 7, IBV_WC_RDMA_READ, &wc);
	IT_EQ(it_check(buf, 64, SEED_OLD), -1);
	/* idle while the old rpmad watches its sockets */
	IT_EQ(it_hear(TAG_C_DONE, NULL, 0, IT_ROLE_MS), 0);
	it_client_end(&conn, &rmr, &mr, &peer, buf);
	return 0;
}

/* Two sockets accepted, with their HELLOs: [0] primary, [1] secondary. */
static void
accept_pair(int lfd, int fds[2], struct tcp_hello hello[2], uint8_t *pdata)
{
	int got[2];
	struct tcp_hello h[2];
	for (int i = 0; i < 2; i++) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		ck_assert_msg(poll(&pfd, 1, IT_WAIT_MS) == 1, "no connection "
				"from rpmad (%s)", it_report());
		got[i] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		ck_assert_int_ge(got[i], 0);
		struct tcp_frame f;
		uint8_t buf[TCP_HELLO_SIZE + TCP_PDATA_MAX];
		ck_assert_int_eq(wire_recv_frame(got[i], &f, buf, sizeof(buf),
				FRAME_MS), 1);
		ck_assert_int_eq(f.type, TF_HELLO);
		ck_assert_int_eq(tcp_hello_decode(buf, f.length, &h[i]), 0);
		if (h[i].role == HELLO_PRIMARY && pdata)
			memcpy(pdata, buf + tcp_hello_size(h[i].version),
					h[i].pdata_len);
	}
	ck_assert_int_ne(h[0].role, h[1].role);
	int prim = h[0].role == HELLO_PRIMARY ? 0 : 1;
	fds[0] = got[prim];
	fds[1] = got[1 - prim];
	hello[0] = h[prim];
	hello[1] = h[1 - prim];
}

START_TEST(test_old_passive)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start_cfg(&env, 1, CONFIG), 0);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(lfd, 0);
	int one = 1;
	(void) setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	char port[16];
	ck_assert_int_eq(it_free_port(port, sizeof(port)), 0);
	struct sockaddr_in sin = { .sin_family = AF_INET,
			.sin_port = htons((uint16_t)atoi(port)) };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 16), 0);

	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, &env.d[0],
			client, port), 0);
	/* the newest version first: closed unread, as version 1 does */
	int fds[2];
	struct tcp_hello h[2];
	accept_pair(lfd, fds, h, NULL);
	ck_assert_uint_eq(h[0].version, TCP_WIRE_VERSION);
	(void) close(fds[0]);
	(void) close(fds[1]);
	/* then version 1, with the same private data */
	uint8_t pdata[TCP_PDATA_MAX];
	accept_pair(lfd, fds, h, pdata);
	ck_assert_uint_eq(h[0].version, 1);
	ck_assert_uint_eq(h[1].version, 1);
	ck_assert_uint_eq(h[0].daemon_id, 0);
	ck_assert_uint_eq(h[0].pdata_len, sizeof(PDATA_C));
	ck_assert(memcmp(pdata, PDATA_C, sizeof(PDATA_C)) == 0);
	int p = fds[0], s = fds[1];
	struct tcp_frame acc = { .type = TF_ACCEPT,
			.length = sizeof(PDATA_OLD) };
	wire_send_frame(p, &acc, PDATA_OLD, sizeof(PDATA_OLD));
	struct tcp_frame f;
	uint8_t buf[PAGE];
	recv_skipping_beats(p, &f, buf, sizeof(buf));
	ck_assert_int_eq(f.type, TF_READY);

	/* the client's read of 64 bytes at 0x1000, key 0x42 */
	ck_assert_msg(it_hear(TAG_C_READ, NULL, 0, IT_ROLE_MS) == 0, "%s",
			it_report());
	recv_skipping_beats(p, &f, buf, sizeof(buf));
	ck_assert_int_eq(f.type, TF_READ);
	ck_assert_uint_eq(f.raddr, 0x1000);
	ck_assert_uint_eq(f.rkey, 0x42);
	ck_assert_uint_eq(f.length, 64);
	struct tcp_frame resp = { .type = TF_READ_RESP, .seq = f.seq,
			.length = 64 };
	uint8_t data[64];
	it_fill(data, sizeof(data), SEED_OLD);
	wire_send_frame(p, &resp, data, sizeof(data));

	idle_as_v1(p, s, 2 * TIMEOUT_MS);

	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_C_DONE, NULL, 0), 0);
	/* the active side's goodbye comes on the primary; answered there */
	recv_skipping_beats(p, &f, buf, sizeof(buf));
	ck_assert_int_eq(f.type, TF_DISCONNECT);
	struct tcp_frame bye = { .type = TF_DISCONNECT };
	wire_send_frame(s, &bye, NULL, 0);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	(void) close(p);
	(void) close(s);
	(void) close(lfd);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_wire_v1[] = { test_old_active, test_old_passive,
		NULL };
	const struct th_tcase tcases[] = {
		{ "wire_v1", .tests = tc_wire_v1, .create = it_tcase_create },
	};
	return check_run_forked(th_suite("old_rpmad", tcases, TH_N(tcases)),
			CK_NORMAL);
}
