// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_fds.c -- the three kinds of descriptors an application can wait on
 * (rpma_ep_get_fd, rpma_conn_get_event_fd, rpma_cq_get_fd for the CQ and
 * the receive CQ), set O_NONBLOCK and watched with epoll: "nothing yet"
 * answers when nothing is pending (RPMA_E_NO_EVENT from
 * rpma_ep_next_conn_req, RPMA_E_NO_COMPLETION, and RPMA_E_PROVIDER from
 * rpma_conn_next_event, as librpma 0.12), readiness in epoll when
 * something is
 */

#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "itest.h"
#include "th_suite.h"

enum { TAG_SENT_BACK = 100 };

/* What an epoll entry stands for (its data.u32). */
enum { FD_EP = 1, FD_EVENT, FD_CQ, FD_RCQ };

static void
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	IT_ASSERT(fl >= 0);
	IT_EQ(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
}

static void
watch(int epfd, int fd, uint32_t what)
{
	set_nonblock(fd);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = what };
	IT_EQ(epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev), 0);
}

/* Nothing of the watched descriptors may be ready. */
static void
expect_quiet(int epfd)
{
	struct epoll_event ev[4];
	int n = epoll_wait(epfd, ev, 4, 0);
	IT_ASSERT_MSG(n == 0, "%d descriptor(s) ready, the first stands for "
			"%u", n, n > 0 ? ev[0].data.u32 : 0);
}

/* Waits (bounded) until the descriptor standing for `what` is ready. */
static void
expect_ready(int epfd, uint32_t what)
{
	uint64_t end = it_now_ms() + IT_WAIT_MS;
	for (;;) {
		uint64_t now = it_now_ms();
		IT_ASSERT_MSG(now < end, "descriptor %u not ready within %d ms",
				what, IT_WAIT_MS);
		struct epoll_event ev[4];
		int n = epoll_wait(epfd, ev, 4, (int)(end - now));
		for (int i = 0; i < n; i++) {
			if (ev[i].data.u32 == what)
				return;
		}
		/* others may be ready too (level-triggered): look again */
		if (n > 0)
			it_sleep_ms(1);
	}
}

/*
 * One completion, the non-blocking way: rpma_cq_wait arms the CQ (or
 * finds something pending); when it had to arm, the descriptor becomes
 * ready once a completion comes.
 */
static void
wait_wc(int epfd, uint32_t what, struct rpma_cq *cq, struct ibv_wc *wc)
{
	int ret = rpma_cq_wait(cq);
	if (ret == RPMA_E_NO_COMPLETION) {
		expect_ready(epfd, what);
		ret = rpma_cq_wait(cq);
	}
	IT_OK(ret);
	IT_OK(rpma_cq_get_wc(cq, 1, wc, NULL));
	IT_EQ(wc->status, IBV_WC_SUCCESS);
}

/*
 * What both roles hold: a peer, a buffer registered for messages, and
 * an epoll instance that watches the library's descriptors.
 */
struct role {
	struct rpma_peer *peer;
	uint8_t *buf;
	struct rpma_mr_local *mr;
	int epfd;
};

static void
role_open(struct role *r, enum rpma_util_ibv_context_type type)
{
	r->peer = it_peer(IT_ADDR, type);
	r->buf = it_alloc(4096);
	r->mr = IT_REG(r->peer, r->buf, 4096,
			RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND);
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	IT_ASSERT(r->epfd >= 0);
}

static void
role_close(struct role *r)
{
	IT_EQ(close(r->epfd), 0);
	IT_OK(rpma_mr_dereg(&r->mr));
	IT_OK(rpma_peer_delete(&r->peer));
	free(r->buf);
}

static int
fds_server(const struct it_env *env, void *arg)
{
	struct role r;
	role_open(&r, RPMA_UTIL_IBV_CONTEXT_LOCAL);

	/* endpoint: no request yet */
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(r.peer, IT_ADDR, env->port, &ep));
	int fd = -1;
	IT_OK(rpma_ep_get_fd(ep, &fd));
	watch(r.epfd, fd, FD_EP);
	struct rpma_conn_req *req = NULL;
	IT_ERR(RPMA_E_NO_EVENT, rpma_ep_next_conn_req(ep, NULL, &req));
	expect_quiet(r.epfd);
	IT_EQ(it_tell(IT_CLIENT, IT_TAG_LISTENING, NULL, 0), 0);
	expect_ready(r.epfd, FD_EP);
	struct rpma_conn_cfg *cfg = NULL;
	IT_OK(rpma_conn_cfg_new(&cfg));
	IT_OK(rpma_conn_cfg_set_rcq_size(cfg, 4));
	IT_OK(rpma_ep_next_conn_req(ep, cfg, &req));
	expect_quiet(r.epfd);
	struct rpma_conn_req *none = NULL;
	IT_ERR(RPMA_E_NO_EVENT, rpma_ep_next_conn_req(ep, cfg, &none));

	/* connection events */
	IT_OK(rpma_conn_req_recv(req, r.mr, 0, 64, (void *) 0x9001));
	struct rpma_conn *conn = NULL;
	IT_OK(rpma_conn_req_connect(&req, NULL, &conn));
	IT_OK(rpma_conn_get_event_fd(conn, &fd));
	watch(r.epfd, fd, FD_EVENT);
	expect_ready(r.epfd, FD_EVENT);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	IT_OK(rpma_conn_next_event(conn, &ev));
	IT_EQ(ev, RPMA_CONN_ESTABLISHED);
	IT_ERR(RPMA_E_PROVIDER, rpma_conn_next_event(conn, &ev));
	expect_quiet(r.epfd);

	/* completion queues: receives go to the RCQ, the send to the CQ */
	struct rpma_cq *cq = NULL, *rcq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	IT_OK(rpma_conn_get_rcq(conn, &rcq));
	IT_ASSERT(rcq != NULL);
	IT_OK(rpma_cq_get_fd(cq, &fd));
	watch(r.epfd, fd, FD_CQ);
	int rfd = -1;
	IT_OK(rpma_cq_get_fd(rcq, &rfd));
	IT_ASSERT(rfd != fd);
	watch(r.epfd, rfd, FD_RCQ);
	struct ibv_wc wc;
	IT_ERR(RPMA_E_NO_COMPLETION, rpma_cq_wait(cq));
	IT_ERR(RPMA_E_NO_COMPLETION, rpma_cq_wait(rcq));
	IT_ERR(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(rcq, 1, &wc, NULL));
	expect_quiet(r.epfd);

	IT_EQ(it_tell(IT_CLIENT, IT_TAG_GO, NULL, 0), 0);
	expect_ready(r.epfd, FD_RCQ);
	wait_wc(r.epfd, FD_RCQ, rcq, &wc);
	IT_EQ(wc.wr_id, 0x9001);
	IT_EQ(wc.opcode, IBV_WC_RECV);
	IT_EQ(wc.byte_len, 32);
	IT_EQ(it_check(r.buf, 32, 21), -1);
	IT_ERR(RPMA_E_NO_COMPLETION, rpma_cq_wait(rcq));
	expect_quiet(r.epfd);

	it_fill(r.buf + 1024, 48, 22);
	IT_OK(rpma_send(conn, r.mr, 1024, 48, RPMA_F_COMPLETION_ALWAYS,
			(void *) 0x9002));
	expect_ready(r.epfd, FD_CQ);
	wait_wc(r.epfd, FD_CQ, cq, &wc);
	IT_EQ(wc.wr_id, 0x9002);
	IT_EQ(wc.opcode, IBV_WC_SEND);
	IT_ERR(RPMA_E_NO_COMPLETION, rpma_cq_wait(cq));
	IT_ERR(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(cq, 1, &wc, NULL));
	expect_quiet(r.epfd);

	/* the client disconnects */
	IT_EQ(it_tell(IT_CLIENT, TAG_SENT_BACK, NULL, 0), 0);
	expect_ready(r.epfd, FD_EVENT);
	IT_OK(rpma_conn_next_event(conn, &ev));
	IT_EQ(ev, RPMA_CONN_CLOSED);
	IT_OK(rpma_conn_disconnect(conn));
	IT_OK(rpma_conn_delete(&conn));

	IT_OKS(rpma_conn_cfg_delete(&cfg), rpma_ep_shutdown(&ep));
	role_close(&r);
	return 0;
}

static int
fds_client(const struct it_env *env, void *arg)
{
	struct role r;
	role_open(&r, RPMA_UTIL_IBV_CONTEXT_REMOTE);

	(void) it_expect(IT_TAG_LISTENING, NULL, 0);
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_conn_req_new(r.peer, IT_ADDR, env->port, NULL, &req));
	struct rpma_conn *conn = NULL;
	IT_OK(rpma_conn_req_connect(&req, NULL, &conn));
	int fd = -1;
	IT_OK(rpma_conn_get_event_fd(conn, &fd));
	watch(r.epfd, fd, FD_EVENT);
	expect_ready(r.epfd, FD_EVENT);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	IT_OK(rpma_conn_next_event(conn, &ev));
	IT_EQ(ev, RPMA_CONN_ESTABLISHED);
	IT_ERR(RPMA_E_PROVIDER, rpma_conn_next_event(conn, &ev));

	struct rpma_cq *cq = NULL, *rcq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	IT_OK(rpma_conn_get_rcq(conn, &rcq));
	IT_ASSERT(rcq == NULL);
	IT_OK(rpma_cq_get_fd(cq, &fd));
	watch(r.epfd, fd, FD_CQ);
	IT_ERR(RPMA_E_NO_COMPLETION, rpma_cq_wait(cq));
	expect_quiet(r.epfd);

	IT_OK(rpma_recv(conn, r.mr, 2048, 64, (void *) 0x9102));
	(void) it_expect(IT_TAG_GO, NULL, 0);
	it_fill(r.buf, 32, 21);
	IT_OK(rpma_send(conn, r.mr, 0, 32, RPMA_F_COMPLETION_ALWAYS,
			(void *) 0x9101));
	struct ibv_wc wc;
	expect_ready(r.epfd, FD_CQ);
	wait_wc(r.epfd, FD_CQ, cq, &wc);
	IT_EQ(wc.wr_id, 0x9101);
	IT_EQ(wc.opcode, IBV_WC_SEND);

	/* the answer: a receive on the same (only) CQ */
	wait_wc(r.epfd, FD_CQ, cq, &wc);
	(void) it_expect(TAG_SENT_BACK, NULL, 0);
	IT_EQ(wc.wr_id, 0x9102);
	IT_EQ(wc.opcode, IBV_WC_RECV);
	IT_EQ(wc.byte_len, 48);
	IT_EQ(it_check(r.buf + 2048, 48, 22), -1);

	IT_OK(rpma_conn_disconnect(conn));
	expect_ready(r.epfd, FD_EVENT);
	IT_OK(rpma_conn_next_event(conn, &ev));
	IT_EQ(ev, RPMA_CONN_CLOSED);
	IT_OK(rpma_conn_delete(&conn));

	role_close(&r);
	return 0;
}

/* _i: 0 two rpmads, 1 one rpmad */
START_TEST(test_nonblocking_epoll)
{
	it_pair_test(_i ? 1 : 2, fds_server, fds_client, NULL);
}
END_TEST

int
main(void)
{
	const struct th_test tc_fds[] = { TH_LOOP(test_nonblocking_epoll, 0, 2),
		TH_END };
	const struct th_tcase tcases[] = {
		{ "fds", .steps = tc_fds, .create = it_tcase_create },
	};
	return check_run(th_suite("integration: descriptors", tcases,
					 TH_N(tcases)),
			CK_ENV);
}
