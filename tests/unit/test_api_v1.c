// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_api_v1.c -- the functions librpma 1.x added, each documented error
 * of each: the configuration of a shared completion channel and of a
 * shared RQ, the shared channel itself (rpma_conn_get_compl_fd,
 * rpma_conn_wait, and what it changes in rpma_cq_wait and rpma_cq_get_fd),
 * rpma_atomic_write, and shared receive queues (shared by connections,
 * in order, receive not ready, with and without their own receive CQ).
 */

#include <poll.h>
#include <stdint.h>
#include <string.h>

#include "api_helpers.h"

#define BUF_SIZE 4096
#define ALWAYS RPMA_F_COMPLETION_ALWAYS

/* ------------------------------------------------- configuration objects */

START_TEST(conn_cfg_compl_channel)
{
	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);
	bool shared = true;
	ck_assert_int_eq(rpma_conn_cfg_get_compl_channel(NULL, &shared),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_cfg_get_compl_channel(cfg, NULL),
			RPMA_E_INVAL);
	ck_assert(shared);	/* untouched on failure */
	ck_assert_int_eq(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	ck_assert(!shared);	/* rpma_conn_cfg_new's default */
	ck_assert_int_eq(rpma_conn_cfg_set_compl_channel(NULL, true),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_cfg_set_compl_channel(cfg, true), 0);
	ck_assert_int_eq(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	ck_assert(shared);
	ck_assert_int_eq(rpma_conn_cfg_set_compl_channel(cfg, false), 0);
	ck_assert_int_eq(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	ck_assert(!shared);
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
}
END_TEST

START_TEST(conn_cfg_srq)
{
	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);
	struct rpma_srq *srq = (struct rpma_srq *)0x1;
	ck_assert_int_eq(rpma_conn_cfg_get_srq(NULL, &srq), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_cfg_get_srq(cfg, NULL), RPMA_E_INVAL);
	ck_assert_ptr_eq(srq, (struct rpma_srq *)0x1);
	ck_assert_int_eq(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	ck_assert_ptr_null(srq);	/* the default: none */
	struct rpma_srq *some = (struct rpma_srq *)0x1000;
	ck_assert_int_eq(rpma_conn_cfg_set_srq(NULL, some), RPMA_E_INVAL);
	/* native 1.x refuses a NULL srq too */
	ck_assert_int_eq(rpma_conn_cfg_set_srq(cfg, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_cfg_set_srq(cfg, some), 0);
	ck_assert_int_eq(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	ck_assert_ptr_eq(srq, some);
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
}
END_TEST

START_TEST(srq_cfg)
{
	struct rpma_srq_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_srq_cfg_new(NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_srq_cfg_new(&cfg), 0);
	ck_assert_ptr_nonnull(cfg);

	uint32_t v = 7;
	ck_assert_int_eq(rpma_srq_cfg_get_rq_size(NULL, &v), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_srq_cfg_get_rq_size(cfg, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_srq_cfg_get_rcq_size(NULL, &v), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_srq_cfg_get_rcq_size(cfg, NULL), RPMA_E_INVAL);
	ck_assert_uint_eq(v, 7);
	/* the defaults of rpma_srq_cfg_new(3) */
	ck_assert_int_eq(rpma_srq_cfg_get_rq_size(cfg, &v), 0);
	ck_assert_uint_eq(v, 100);
	ck_assert_int_eq(rpma_srq_cfg_get_rcq_size(cfg, &v), 0);
	ck_assert_uint_eq(v, 100);

	ck_assert_int_eq(rpma_srq_cfg_set_rq_size(NULL, 5), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_srq_cfg_set_rcq_size(NULL, 5), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_srq_cfg_set_rq_size(cfg, 5), 0);
	ck_assert_int_eq(rpma_srq_cfg_set_rcq_size(cfg, 0), 0);
	ck_assert_int_eq(rpma_srq_cfg_get_rq_size(cfg, &v), 0);
	ck_assert_uint_eq(v, 5);
	ck_assert_int_eq(rpma_srq_cfg_get_rcq_size(cfg, &v), 0);
	ck_assert_uint_eq(v, 0);

	ck_assert_int_eq(rpma_srq_cfg_delete(NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_srq_cfg_delete(&cfg), 0);
	ck_assert_ptr_null(cfg);
	/* deleting nothing is no error */
	ck_assert_int_eq(rpma_srq_cfg_delete(&cfg), 0);
}
END_TEST

/* --------------------------------------------- the shared channel itself */

struct env {
	struct api_pair p;
	struct rpma_mr_local *mr;	/* send and receive buffers */
	char *buf;
};

/* a connected pair whose both sides share their channel; rcq_size 0/16 */
static void
env_open(struct env *e, uint32_t rcq_size)
{
	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_compl_channel(cfg, true), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_rcq_size(cfg, rcq_size), 0);
	api_pair_connect(&e->p, cfg, NULL);
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
	e->buf = api_buf(BUF_SIZE);
	ck_assert_int_eq(rpma_mr_reg(e->p.peer, e->buf, BUF_SIZE,
			RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &e->mr), 0);
}

static void
env_close(struct env *e)
{
	ck_assert_int_eq(rpma_mr_dereg(&e->mr), 0);
	api_pair_close(&e->p);
}

START_TEST(compl_fd_args)
{
	struct env e;
	env_open(&e, 16);
	int fd = -77;
	ck_assert_int_eq(rpma_conn_get_compl_fd(NULL, &fd), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_get_compl_fd(e.p.client, NULL),
			RPMA_E_INVAL);
	ck_assert_int_eq(fd, -77);
	ck_assert_int_eq(rpma_conn_get_compl_fd(e.p.client, &fd), 0);
	ck_assert_int_ge(fd, 0);

	/* both queues hand out the channel's descriptor, as 1.x does */
	struct rpma_cq *cq = NULL, *rcq = NULL;
	int cq_fd = -1, rcq_fd = -1;
	ck_assert_int_eq(rpma_conn_get_cq(e.p.client, &cq), 0);
	ck_assert_int_eq(rpma_conn_get_rcq(e.p.client, &rcq), 0);
	ck_assert_ptr_nonnull(rcq);
	ck_assert_int_eq(rpma_cq_get_fd(cq, &cq_fd), 0);
	ck_assert_int_eq(rpma_cq_get_fd(rcq, &rcq_fd), 0);
	ck_assert_int_eq(cq_fd, fd);
	ck_assert_int_eq(rcq_fd, fd);
	/* and neither can be waited for alone */
	ck_assert_int_eq(rpma_cq_wait(cq), RPMA_E_SHARED_CHANNEL);
	ck_assert_int_eq(rpma_cq_wait(rcq), RPMA_E_SHARED_CHANNEL);
	env_close(&e);
}
END_TEST

START_TEST(not_shared)
{
	struct api_pair p;
	api_pair_connect(&p, NULL, NULL);
	int fd = -77;
	ck_assert_int_eq(rpma_conn_get_compl_fd(p.client, &fd),
			RPMA_E_NOT_SHARED_CHNL);
	ck_assert_int_eq(fd, -77);
	struct rpma_cq *cq = (struct rpma_cq *)0x1;
	bool is_rcq = true;
	ck_assert_int_eq(rpma_conn_wait(p.client, 0, &cq, &is_rcq),
			RPMA_E_NOT_SHARED_CHNL);
	ck_assert_ptr_eq(cq, (struct rpma_cq *)0x1);
	api_pair_close(&p);
}
END_TEST

START_TEST(wait_args)
{
	struct env e;
	env_open(&e, 16);
	struct rpma_cq *cq = NULL;
	ck_assert_int_eq(rpma_conn_wait(NULL, 0, &cq, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_wait(e.p.client, 0, NULL, NULL),
			RPMA_E_INVAL);
	/* nothing pending on a non-blocking channel */
	int fd = -1;
	ck_assert_int_eq(rpma_conn_get_compl_fd(e.p.client, &fd), 0);
	api_set_nonblock(fd);
	ck_assert_int_eq(rpma_conn_wait(e.p.client, 0, &cq, NULL),
			RPMA_E_NO_COMPLETION);
	ck_assert_ptr_null(cq);
	api_set_block(fd);
	env_close(&e);
}
END_TEST

/* one message, client to server; each side's wait says which queue */
static void
ping(struct env *e, bool with_rcq)
{
	ck_assert_int_eq(rpma_recv(e->p.server, e->mr, 0, 64, (void *)0x11),
			0);
	memcpy(e->buf + 64, "hello", 6);
	ck_assert_int_eq(rpma_send(e->p.client, e->mr, 64, 6, ALWAYS,
			(void *)0x22), 0);

	struct rpma_cq *cq = NULL;
	bool is_rcq = !with_rcq;
	struct ibv_wc wc;
	/* the server: a receive, on its RCQ when it has one */
	ck_assert_int_eq(rpma_conn_wait(e->p.server, 0, &cq, &is_rcq), 0);
	ck_assert_int_eq(is_rcq, with_rcq);
	struct rpma_cq *expect = NULL;
	if (with_rcq)
		ck_assert_int_eq(rpma_conn_get_rcq(e->p.server, &expect), 0);
	else
		ck_assert_int_eq(rpma_conn_get_cq(e->p.server, &expect), 0);
	ck_assert_ptr_eq(cq, expect);
	ck_assert_int_eq(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
	ck_assert_uint_eq(wc.wr_id, 0x11);
	ck_assert_str_eq(e->buf, "hello");

	/* the client: the send, on its CQ; is_rcq may be NULL */
	cq = NULL;
	ck_assert_int_eq(rpma_conn_wait(e->p.client, 0, &cq, NULL), 0);
	ck_assert_int_eq(rpma_conn_get_cq(e->p.client, &expect), 0);
	ck_assert_ptr_eq(cq, expect);
	ck_assert_int_eq(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
	ck_assert_int_eq(wc.opcode, IBV_WC_SEND);
	ck_assert_uint_eq(wc.wr_id, 0x22);
}

START_TEST(wait_which_queue)
{
	struct env e;
	env_open(&e, _i ? 16 : 0);
	for (int round = 0; round < 3; round++)
		ping(&e, _i != 0);
	env_close(&e);
}
END_TEST

/*
 * A program may poll the channel's descriptor before it waits: native
 * librpma arms both queues when it makes them, so the descriptor becomes
 * readable with the first completion.
 */
START_TEST(poll_before_wait)
{
	struct env e;
	env_open(&e, 16);
	int fd = -1;
	ck_assert_int_eq(rpma_conn_get_compl_fd(e.p.server, &fd), 0);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	ck_assert_int_eq(rpma_recv(e.p.server, e.mr, 0, 64, NULL), 0);
	ck_assert_int_eq(rpma_send(e.p.client, e.mr, 64, 8, ALWAYS, NULL), 0);
	ck_assert_int_eq(poll(&pfd, 1, API_TEST_TIMEOUT * 1000), 1);
	struct rpma_cq *cq = NULL;
	bool is_rcq = false;
	ck_assert_int_eq(rpma_conn_wait(e.p.server, 0, &cq, &is_rcq), 0);
	ck_assert(is_rcq);
	struct ibv_wc wc;
	ck_assert_int_eq(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
	ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
	/* the same again: the queue was armed anew */
	ck_assert_int_eq(rpma_recv(e.p.server, e.mr, 0, 64, NULL), 0);
	ck_assert_int_eq(rpma_send(e.p.client, e.mr, 64, 8, ALWAYS, NULL), 0);
	ck_assert_int_eq(poll(&pfd, 1, API_TEST_TIMEOUT * 1000), 1);
	ck_assert_int_eq(rpma_conn_wait(e.p.server, 0, &cq, &is_rcq), 0);
	ck_assert(is_rcq);
	ck_assert_int_eq(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
	env_close(&e);
}
END_TEST

/* RPMA_E_PROVIDER: rpmad went, nothing outstanding will ever complete */
START_TEST(wait_rpmad_gone)
{
	struct env e;
	env_open(&e, 16);
	ck_assert_int_eq(rpma_recv(e.p.server, e.mr, 0, 64, (void *)0x42), 0);
	test_daemon_kill(api_daemon());
	struct rpma_cq *cq = NULL;
	bool is_rcq = false;
	/* the receive is flushed first */
	ck_assert_int_eq(rpma_conn_wait(e.p.server, 0, &cq, &is_rcq), 0);
	ck_assert(is_rcq);
	struct ibv_wc wc;
	ck_assert_int_eq(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
	ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(rpma_conn_wait(e.p.server, 0, &cq, &is_rcq),
			RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_conn_wait(e.p.client, 0, &cq, NULL),
			RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_conn_delete(&e.p.client), 0);
	ck_assert_int_eq(rpma_conn_delete(&e.p.server), 0);
	ck_assert_int_eq(rpma_ep_shutdown(&e.p.ep), 0);
	ck_assert_int_eq(rpma_mr_dereg(&e.mr), 0);
	ck_assert_int_eq(rpma_peer_delete(&e.p.peer), 0);
}
END_TEST

/* ------------------------------------------------ arguments of the rest */

START_TEST(atomic_write_args)
{
	struct env e;
	env_open(&e, 0);
	struct rpma_mr_local *target = NULL;
	ck_assert_int_eq(rpma_mr_reg(e.p.peer, api_buf(BUF_SIZE), BUF_SIZE,
			RPMA_MR_USAGE_WRITE_DST, &target), 0);
	uint8_t desc[21];
	struct rpma_mr_remote *remote = NULL;
	ck_assert_int_eq(rpma_mr_get_descriptor(target, desc), 0);
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, sizeof(desc),
			&remote), 0);
	const char v[8] = "12345678";
	ck_assert_int_eq(rpma_atomic_write(NULL, remote, 0, v, ALWAYS, NULL),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_atomic_write(e.p.client, NULL, 0, v, ALWAYS,
			NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_atomic_write(e.p.client, remote, 0, NULL,
			ALWAYS, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_atomic_write(e.p.client, remote, 4, v, ALWAYS,
			NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_atomic_write(e.p.client, remote, 0, v, 0, NULL),
			RPMA_E_INVAL);
	/*
	 * RPMA_E_PROVIDER: the send queue is full (10 by default, none
	 * collected); a failed post takes no staging slot, and after the
	 * completions are collected the writes go on
	 */
	int posted = 0, ret;
	while ((ret = rpma_atomic_write(e.p.client, remote, 8, v, ALWAYS,
			NULL)) == 0)
		posted++;
	ck_assert_int_eq(ret, RPMA_E_PROVIDER);
	ck_assert_int_ge(posted, 10);
	struct rpma_cq *cq = NULL;
	ck_assert_int_eq(rpma_conn_get_cq(e.p.client, &cq), 0);
	for (int k = 0; k < posted; k++) {
		struct ibv_wc wc;
		int got;
		while ((got = rpma_cq_get_wc(cq, 1, &wc, NULL)) ==
				RPMA_E_NO_COMPLETION) {
			struct rpma_cq *which = NULL;
			ck_assert_int_eq(rpma_conn_wait(e.p.client, 0, &which,
					NULL), 0);
			ck_assert_ptr_eq(which, cq);
		}
		ck_assert_int_eq(got, 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	}
	ck_assert_int_eq(rpma_atomic_write(e.p.client, remote, 8, v, ALWAYS,
			NULL), 0);
	ck_assert_int_eq(rpma_mr_remote_delete(&remote), 0);
	ck_assert_int_eq(rpma_mr_dereg(&target), 0);
	env_close(&e);
}
END_TEST

/*
 * The 8 bytes are taken when the call posts them: the caller's buffer is
 * overwritten right after each call, and many writes without a completion
 * of their own (RPMA_F_COMPLETION_ON_ERROR) go out before one that has
 * one, so that the library's staging slots come round several times.
 */
START_TEST(atomic_write_lands)
{
	struct env e;
	env_open(&e, 0);
	uint64_t *target_buf = api_buf(BUF_SIZE);
	struct rpma_mr_local *target = NULL;
	ck_assert_int_eq(rpma_mr_reg(e.p.peer, target_buf, BUF_SIZE,
			RPMA_MR_USAGE_WRITE_DST, &target), 0);
	uint8_t desc[21];
	struct rpma_mr_remote *remote = NULL;
	ck_assert_int_eq(rpma_mr_get_descriptor(target, desc), 0);
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, sizeof(desc),
			&remote), 0);
	struct rpma_cq *cq = NULL;
	ck_assert_int_eq(rpma_conn_get_cq(e.p.client, &cq), 0);

	/* rounds of up to 8 writes (the default send queue holds 10) */
	const int writes = 64;
	int posted = 0;
	while (posted < writes) {
		int batch = writes - posted < 8 ? writes - posted : 8;
		for (int i = 0; i < batch; i++, posted++) {
			char v[8];
			uint64_t val = 0x1000 + (uint64_t)posted;
			memcpy(v, &val, sizeof(val));
			int last = i == batch - 1;
			ck_assert_int_eq(rpma_atomic_write(e.p.client, remote,
					(size_t)(posted % 32) * 8, v,
					last ? ALWAYS :
					RPMA_F_COMPLETION_ON_ERROR,
					(void *)(uintptr_t)posted), 0);
			memset(v, 0xee, sizeof(v));
		}
		struct rpma_cq *got = NULL;
		ck_assert_int_eq(rpma_conn_wait(e.p.client, 0, &got, NULL), 0);
		ck_assert_ptr_eq(got, cq);
		struct ibv_wc wc;
		ck_assert_int_eq(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, IBV_WC_RDMA_WRITE);
		ck_assert_uint_eq(wc.wr_id, (uint64_t)posted - 1);
	}
	/* the last value at each of the 32 places */
	for (int k = 0; k < 32; k++)
		ck_assert_uint_eq(target_buf[k], 0x1000 + 32 + (uint64_t)k);

	ck_assert_int_eq(rpma_mr_remote_delete(&remote), 0);
	ck_assert_int_eq(rpma_mr_dereg(&target), 0);
	env_close(&e);
}
END_TEST

START_TEST(srq_args)
{
	struct rpma_peer *peer = api_peer();
	struct rpma_srq *srq = NULL;
	ck_assert_int_eq(rpma_srq_new(NULL, NULL, &srq), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_srq_new(peer, NULL, NULL), RPMA_E_INVAL);
	ck_assert_ptr_null(srq);
	ck_assert_int_eq(rpma_srq_delete(NULL), RPMA_E_INVAL);
	/* nothing to delete */
	ck_assert_int_eq(rpma_srq_delete(&srq), 0);

	/* the defaults: a receive CQ of its own */
	ck_assert_int_eq(rpma_srq_new(peer, NULL, &srq), 0);
	struct rpma_cq *rcq = (struct rpma_cq *)0x1;
	ck_assert_int_eq(rpma_srq_get_rcq(NULL, &rcq), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_srq_get_rcq(srq, NULL), RPMA_E_INVAL);
	ck_assert_ptr_eq(rcq, (struct rpma_cq *)0x1);
	ck_assert_int_eq(rpma_srq_get_rcq(srq, &rcq), 0);
	ck_assert_ptr_nonnull(rcq);
	ck_assert_int_eq(rpma_srq_recv(NULL, NULL, 0, 0, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_srq_recv(srq, NULL, 0, 8, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_srq_recv(srq, NULL, 8, 0, NULL), RPMA_E_INVAL);
	/* a receive of no data is one */
	ck_assert_int_eq(rpma_srq_recv(srq, NULL, 0, 0, NULL), 0);
	ck_assert_int_eq(rpma_srq_delete(&srq), 0);
	ck_assert_ptr_null(srq);

	/* RPMA_E_PROVIDER: a queue the device (here rpmad) cannot make */
	struct rpma_srq_cfg *big = NULL;
	ck_assert_int_eq(rpma_srq_cfg_new(&big), 0);
	ck_assert_int_eq(rpma_srq_cfg_set_rq_size(big, UINT32_MAX), 0);
	srq = (struct rpma_srq *)0x1;
	ck_assert_int_eq(rpma_srq_new(peer, big, &srq), RPMA_E_PROVIDER);
	ck_assert_ptr_eq(srq, (struct rpma_srq *)0x1);
	ck_assert_int_eq(rpma_srq_cfg_delete(&big), 0);
	srq = NULL;

	/* rcq_size 0: none */
	struct rpma_srq_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_srq_cfg_new(&cfg), 0);
	ck_assert_int_eq(rpma_srq_cfg_set_rcq_size(cfg, 0), 0);
	ck_assert_int_eq(rpma_srq_cfg_set_rq_size(cfg, 2), 0);
	ck_assert_int_eq(rpma_srq_new(peer, cfg, &srq), 0);
	ck_assert_int_eq(rpma_srq_get_rcq(srq, &rcq), 0);
	ck_assert_ptr_null(rcq);
	/* RPMA_E_PROVIDER: full (2 entries) */
	ck_assert_int_eq(rpma_srq_recv(srq, NULL, 0, 0, NULL), 0);
	ck_assert_int_eq(rpma_srq_recv(srq, NULL, 0, 0, NULL), 0);
	ck_assert_int_eq(rpma_srq_recv(srq, NULL, 0, 0, NULL),
			RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_srq_delete(&srq), 0);
	ck_assert_int_eq(rpma_srq_cfg_delete(&cfg), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/* ------------------------------------------------- shared receive queues */

#define N_CONNS 2

/* N_CONNS clients, each to a server connection made with one shared RQ */
struct srq_env {
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_srq *srq;
	struct rpma_conn *client[N_CONNS], *server[N_CONNS];
	struct rpma_mr_local *mr;
	char *buf;
};

static enum rpma_conn_event
event_of(struct rpma_conn *conn)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	ck_assert_int_eq(rpma_conn_next_event(conn, &ev), 0);
	return ev;
}

/* rcq_size: the shared RQ's; server_rcq: the server connections' */
static void
srq_open(struct srq_env *e, uint32_t rq_size, uint32_t rcq_size,
		uint32_t server_rcq)
{
	memset(e, 0, sizeof(*e));
	e->peer = api_peer();
	struct rpma_srq_cfg *scfg = NULL;
	ck_assert_int_eq(rpma_srq_cfg_new(&scfg), 0);
	ck_assert_int_eq(rpma_srq_cfg_set_rq_size(scfg, rq_size), 0);
	ck_assert_int_eq(rpma_srq_cfg_set_rcq_size(scfg, rcq_size), 0);
	ck_assert_int_eq(rpma_srq_new(e->peer, scfg, &e->srq), 0);
	ck_assert_int_eq(rpma_srq_cfg_delete(&scfg), 0);

	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_srq(cfg, e->srq), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_rcq_size(cfg, server_rcq), 0);
	char port[16];
	api_free_port(port);
	ck_assert_int_eq(rpma_ep_listen(e->peer, API_LOCAL_ADDR, port,
			&e->ep), 0);
	for (int i = 0; i < N_CONNS; i++) {
		struct rpma_conn_req *req = NULL;
		ck_assert_int_eq(rpma_conn_req_new(e->peer, API_LOCAL_ADDR,
				port, NULL, &req), 0);
		ck_assert_int_eq(rpma_conn_req_connect(&req, NULL,
				&e->client[i]), 0);
		ck_assert_int_eq(rpma_ep_next_conn_req(e->ep, cfg, &req), 0);
		ck_assert_int_eq(rpma_conn_req_connect(&req, NULL,
				&e->server[i]), 0);
		ck_assert_int_eq(event_of(e->client[i]),
				RPMA_CONN_ESTABLISHED);
		ck_assert_int_eq(event_of(e->server[i]),
				RPMA_CONN_ESTABLISHED);
	}
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
	e->buf = api_buf(BUF_SIZE);
	ck_assert_int_eq(rpma_mr_reg(e->peer, e->buf, BUF_SIZE,
			RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &e->mr), 0);
}

static void
srq_close(struct srq_env *e)
{
	for (int i = 0; i < N_CONNS; i++) {
		ck_assert_int_eq(rpma_conn_disconnect(e->client[i]), 0);
		ck_assert_int_eq(event_of(e->client[i]), RPMA_CONN_CLOSED);
		ck_assert_int_eq(event_of(e->server[i]), RPMA_CONN_CLOSED);
		ck_assert_int_eq(rpma_conn_delete(&e->client[i]), 0);
		ck_assert_int_eq(rpma_conn_delete(&e->server[i]), 0);
	}
	ck_assert_int_eq(rpma_srq_delete(&e->srq), 0);
	ck_assert_int_eq(rpma_mr_dereg(&e->mr), 0);
	ck_assert_int_eq(rpma_ep_shutdown(&e->ep), 0);
	ck_assert_int_eq(rpma_peer_delete(&e->peer), 0);
}

/* client i sends 8 bytes "<tag>" from the upper half and sees it done */
static void
send_from(struct srq_env *e, int i, const char *tag)
{
	char *src = e->buf + BUF_SIZE / 2 + i * 64;
	(void) snprintf(src, 8, "%s", tag);
	ck_assert_int_eq(rpma_send(e->client[i], e->mr, BUF_SIZE / 2 +
			(size_t)i * 64, 8, ALWAYS, NULL), 0);
	struct rpma_cq *cq = NULL;
	ck_assert_int_eq(rpma_conn_get_cq(e->client[i], &cq), 0);
	ck_assert_int_eq(rpma_cq_wait(cq), 0);
	struct ibv_wc wc;
	ck_assert_int_eq(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
	ck_assert_int_eq(wc.opcode, IBV_WC_SEND);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
}

static void
next_wc(struct rpma_cq *cq, struct ibv_wc *wc)
{
	int ret;
	while ((ret = rpma_cq_get_wc(cq, 1, wc, NULL)) ==
			RPMA_E_NO_COMPLETION)
		ck_assert_int_eq(rpma_cq_wait(cq), 0);
	ck_assert_int_eq(ret, 0);
}

/*
 * Both connections' messages take the queue's buffers in the order they
 * were posted, whichever connection they came on; the completions say
 * which connection received each (qp_num).
 */
START_TEST(srq_shared_in_order)
{
	struct srq_env e;
	srq_open(&e, 8, 8, 0);
	struct rpma_cq *rcq = NULL;
	ck_assert_int_eq(rpma_srq_get_rcq(e.srq, &rcq), 0);
	/* the server connections have no receive CQ of their own */
	struct rpma_cq *none = (struct rpma_cq *)0x1;
	ck_assert_int_eq(rpma_conn_get_rcq(e.server[0], &none), 0);
	ck_assert_ptr_null(none);
	/* nor a receive queue */
	ck_assert_int_eq(rpma_recv(e.server[0], e.mr, 0, 8, NULL),
			RPMA_E_PROVIDER);

	for (uintptr_t k = 0; k < 4; k++)
		ck_assert_int_eq(rpma_srq_recv(e.srq, e.mr, k * 64, 64,
				(void *)(k + 1)), 0);
	const char *tags[] = { "a1", "b1", "a2", "b2" };
	for (int k = 0; k < 4; k++)
		send_from(&e, k % 2, tags[k]);
	for (int k = 0; k < 4; k++) {
		struct ibv_wc wc;
		next_wc(rcq, &wc);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
		ck_assert_uint_eq(wc.wr_id, (uint64_t)k + 1);
		ck_assert_uint_eq(wc.byte_len, 8);
		uint32_t qpn = 0;
		ck_assert_int_eq(rpma_conn_get_qp_num(e.server[k % 2], &qpn),
				0);
		ck_assert_uint_eq(wc.qp_num, qpn);
		ck_assert_str_eq(e.buf + k * 64, tags[k]);
	}
	srq_close(&e);
}
END_TEST

/*
 * Receive not ready: a message waits for a buffer posted after it came,
 * and one posted later still lands it.
 */
START_TEST(srq_receive_not_ready)
{
	struct srq_env e;
	srq_open(&e, 4, 4, 0);
	struct rpma_cq *rcq = NULL, *ccq = NULL;
	ck_assert_int_eq(rpma_srq_get_rcq(e.srq, &rcq), 0);
	ck_assert_int_eq(rpma_conn_get_cq(e.client[1], &ccq), 0);
	memcpy(e.buf + BUF_SIZE / 2 + 64, "late", 5);
	ck_assert_int_eq(rpma_send(e.client[1], e.mr, BUF_SIZE / 2 + 64, 5,
			ALWAYS, (void *)0x5), 0);
	struct ibv_wc wc;
	ck_assert_int_eq(rpma_cq_get_wc(rcq, 1, &wc, NULL),
			RPMA_E_NO_COMPLETION);
	ck_assert_int_eq(rpma_srq_recv(e.srq, e.mr, 0, 64, (void *)0x7), 0);
	next_wc(rcq, &wc);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 0x7);
	ck_assert_str_eq(e.buf, "late");
	next_wc(ccq, &wc);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 0x5);
	srq_close(&e);
}
END_TEST

/*
 * _i 0: a shared RQ without a receive CQ: the completions go to the
 * receiving connection's CQ; _i 1: to its receive CQ. Many more messages
 * than the queue holds: each completion taken frees the queue's slot.
 */
START_TEST(srq_without_rcq)
{
	struct srq_env e;
	srq_open(&e, 2, 0, _i ? 4 : 0);
	struct rpma_cq *rcq = (struct rpma_cq *)0x1;
	ck_assert_int_eq(rpma_srq_get_rcq(e.srq, &rcq), 0);
	ck_assert_ptr_null(rcq);
	for (int k = 0; k < 12; k++) {
		int i = k % N_CONNS;
		ck_assert_int_eq(rpma_srq_recv(e.srq, e.mr, 0, 64,
				(void *)(uintptr_t)(k + 1)), 0);
		send_from(&e, i, k % 2 ? "odd" : "even");
		struct rpma_cq *cq = NULL;
		if (_i)
			ck_assert_int_eq(rpma_conn_get_rcq(e.server[i], &cq),
					0);
		else
			ck_assert_int_eq(rpma_conn_get_cq(e.server[i], &cq),
					0);
		ck_assert_ptr_nonnull(cq);
		struct ibv_wc wc;
		next_wc(cq, &wc);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
		ck_assert_uint_eq(wc.wr_id, (uint64_t)k + 1);
		ck_assert_str_eq(e.buf, k % 2 ? "odd" : "even");
	}
	srq_close(&e);
}
END_TEST

/* what 1.x refuses around a shared RQ */
START_TEST(srq_refusals)
{
	struct srq_env e;
	srq_open(&e, 4, 4, 0);
	/* a shared channel with a shared RQ that has its own receive CQ */
	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_srq(cfg, e.srq), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_compl_channel(cfg, true), 0);
	struct rpma_conn_req *req = NULL;
	char port[16];
	api_free_port(port);
	ck_assert_int_eq(rpma_conn_req_new(e.peer, API_LOCAL_ADDR, port, cfg,
			&req), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_ep_next_conn_req(e.ep, cfg, &req),
			RPMA_E_INVAL);
	ck_assert_ptr_null(req);
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);

	/* deleting it while connections use it: gone here, refused there */
	struct rpma_srq *srq = e.srq;
	ck_assert_int_eq(rpma_srq_delete(&srq), RPMA_E_PROVIDER);
	ck_assert_ptr_null(srq);
	for (int i = 0; i < N_CONNS; i++) {
		ck_assert_int_eq(rpma_conn_disconnect(e.client[i]), 0);
		ck_assert_int_eq(event_of(e.client[i]), RPMA_CONN_CLOSED);
		ck_assert_int_eq(event_of(e.server[i]), RPMA_CONN_CLOSED);
		ck_assert_int_eq(rpma_conn_delete(&e.client[i]), 0);
		ck_assert_int_eq(rpma_conn_delete(&e.server[i]), 0);
	}
	ck_assert_int_eq(rpma_mr_dereg(&e.mr), 0);
	ck_assert_int_eq(rpma_ep_shutdown(&e.ep), 0);
	/*
	 * as native 1.x, whose ibv_srq stays when ibv_destroy_srq failed:
	 * the queue is still in the peer, which cannot go (the session's
	 * end takes both)
	 */
	ck_assert_int_eq(rpma_peer_delete(&e.peer), RPMA_E_PROVIDER);
	/* the session's end takes both: then the peer goes here too */
	test_daemon_kill(api_daemon());
	ck_assert_int_eq(rpma_peer_delete(&e.peer), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_cfg[] = { conn_cfg_compl_channel, conn_cfg_srq,
		srq_cfg, NULL };
	const struct th_test tc_compl_channel[] = { TH_TEST(compl_fd_args),
		TH_TEST(not_shared), TH_TEST(wait_args),
		TH_LOOP(wait_which_queue, 0, 2), TH_TEST(poll_before_wait),
		TH_TEST(atomic_write_args), TH_TEST(atomic_write_lands),
		TH_TEST(srq_args), TH_TEST(srq_shared_in_order),
		TH_TEST(srq_receive_not_ready), TH_LOOP(srq_without_rcq, 0, 2),
		TH_END };
	const TTest *const tc_rpmad_gone[] = { wait_rpmad_gone, srq_refusals,
		NULL };
	const struct th_tcase tcases[] = {
		{ "cfg", .tests = tc_cfg, .create = api_tcase_none },
		{ "compl_channel", .steps = tc_compl_channel,
				.create = api_tcase_shared },
		{ "rpmad_gone", .tests = tc_rpmad_gone,
				.create = api_tcase_own },
	};
	return api_run(th_suite("api_v1", tcases, TH_N(tcases)));
}
