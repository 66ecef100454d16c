// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_api_cq.c -- rpma_cq_get_fd, rpma_cq_wait, rpma_cq_get_wc: arguments,
 * the num_entries rules, non-blocking waits, an empty queue, the
 * completions rpmad going away leaves behind
 */

#include <stdint.h>
#include <string.h>

#include "api_helpers.h"

#define BUF_SIZE 4096
#define ALWAYS RPMA_F_COMPLETION_ALWAYS

/* api_rma_open of BUF_SIZE bytes on defaults; the client's CQ */
static struct rpma_cq *
env_open(struct api_rma *e)
{
	api_rma_open(e, NULL, api_buf(BUF_SIZE), BUF_SIZE, 0xff);
	struct rpma_cq *cq = NULL;
	ck_assert_int_eq(rpma_conn_get_cq(e->p.client, &cq), 0);
	return cq;
}

START_TEST(get_fd_and_wait_args)
{
	struct api_rma e;
	struct rpma_cq *cq = env_open(&e);
	int fd = -77;
	ck_assert_int_eq(rpma_cq_get_fd(NULL, &fd), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_cq_get_fd(cq, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(fd, -77);
	ck_assert_int_eq(rpma_cq_get_fd(cq, &fd), 0);
	ck_assert_int_ge(fd, 0);

	ck_assert_int_eq(rpma_cq_wait(NULL), RPMA_E_INVAL);
	/* non-blocking with nothing to report */
	api_set_nonblock(fd);
	ck_assert_int_eq(rpma_cq_wait(cq), RPMA_E_NO_COMPLETION);
	ck_assert_int_eq(rpma_cq_wait(cq), RPMA_E_NO_COMPLETION);
	api_rma_close(&e);
}
END_TEST

START_TEST(get_wc_args)
{
	struct api_rma e;
	struct rpma_cq *cq = env_open(&e);
	struct ibv_wc wc[4];
	int got = 77;

	ck_assert_int_eq(rpma_cq_get_wc(NULL, 1, wc, &got), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_cq_get_wc(cq, 1, NULL, &got), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_cq_get_wc(cq, 0, wc, &got), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_cq_get_wc(cq, -1, wc, &got), RPMA_E_INVAL);
	/* more than one entry needs somewhere to say how many came */
	ck_assert_int_eq(rpma_cq_get_wc(cq, 2, wc, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(got, 77);

	/* an empty queue */
	ck_assert_int_eq(rpma_cq_get_wc(cq, 1, wc, NULL), RPMA_E_NO_COMPLETION);
	ck_assert_int_eq(rpma_cq_get_wc(cq, 4, wc, &got), RPMA_E_NO_COMPLETION);
	/* none came (librpma leaves the count as it was) */
	ck_assert_int_eq(got, 0);
	api_rma_close(&e);
}
END_TEST

/* Collects `n` completions, at most `max` per call; checks each. */
static void
collect(struct rpma_cq *cq, int n, int max, enum ibv_wc_opcode opcode)
{
	int seen = 0;
	while (seen < n) {
		ck_assert_int_eq(rpma_cq_wait(cq), 0);
		for (;;) {
			struct ibv_wc wc[8];
			int got = -1;
			int ret = rpma_cq_get_wc(cq, max, wc,
					max > 1 ? &got : NULL);
			if (ret == RPMA_E_NO_COMPLETION)
				break;
			ck_assert_int_eq(ret, 0);
			if (max == 1)
				got = 1;
			ck_assert_int_ge(got, 1);
			ck_assert_int_le(got, max);
			for (int i = 0; i < got; i++) {
				ck_assert_int_eq(wc[i].status, IBV_WC_SUCCESS);
				ck_assert_int_eq(wc[i].opcode, opcode);
				/* in the order of posting */
				ck_assert_uint_eq(wc[i].wr_id,
						(uint64_t)(0x100 + seen));
				seen++;
			}
		}
	}
	ck_assert_int_eq(seen, n);
}

START_TEST(get_wc_one_without_count)
{
	struct api_rma e;
	struct rpma_cq *cq = env_open(&e);
	ck_assert_int_eq(rpma_write(e.p.client, e.remote, 0, e.local, 0, 64,
			ALWAYS, (void *)0x100), 0);
	collect(cq, 1, 1, IBV_WC_RDMA_WRITE);
	struct ibv_wc wc;
	ck_assert_int_eq(rpma_cq_get_wc(cq, 1, &wc, NULL),
			RPMA_E_NO_COMPLETION);
	api_rma_close(&e);
}
END_TEST

START_TEST(get_wc_many)
{
	struct api_rma e;
	struct rpma_cq *cq = env_open(&e);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(rpma_read(e.p.client, e.local, 64 * i,
				e.remote, 64 * i, 64, ALWAYS,
				(void *)(uintptr_t)(0x100 + i)), 0);
	collect(cq, 5, 8, IBV_WC_RDMA_READ);
	api_rma_close(&e);
}
END_TEST

/* 0-byte operations: no registrations, a completion all the same */
START_TEST(zero_byte_operations)
{
	struct api_rma e;
	struct rpma_cq *cq = env_open(&e);
	ck_assert_int_eq(rpma_read(e.p.client, NULL, 0, NULL, 0, 0, ALWAYS,
			(void *)0x100), 0);
	collect(cq, 1, 1, IBV_WC_RDMA_READ);
	ck_assert_int_eq(rpma_write(e.p.client, NULL, 0, NULL, 0, 0, ALWAYS,
			(void *)0x101), 0);
	struct ibv_wc wc;
	ck_assert_int_eq(rpma_cq_wait(cq), 0);
	ck_assert_int_eq(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 0x101);
	api_rma_close(&e);
}
END_TEST

/*
 * rpma_cq_wait returning 0 means a completion is there, whatever old
 * notifications are in flight: some rounds collect by polling alone (rpmad
 * then uses an arming nobody waits on), and the others wait, with the
 * descriptor blocking and non-blocking. Programs read rpma_cq_get_wc's
 * results right after a wait (the upstream ping-pong example does).
 */
START_TEST(wait_means_a_completion)
{
	struct api_rma e;
	struct rpma_cq *cq = env_open(&e);
	int fd;
	ck_assert_int_eq(rpma_cq_get_fd(cq, &fd), 0);
	for (int i = 0; i < 3000; i++) {
		struct ibv_wc wc;
		ck_assert_int_eq(rpma_write(e.p.client, e.remote, 0, e.local,
				0, 8, ALWAYS, (void *)(uintptr_t)i), 0);
		int ret;
		switch (i % 3) {
		case 0: /* polling only; then a wait finds nothing */
			while ((ret = rpma_cq_get_wc(cq, 1, &wc, NULL)) ==
					RPMA_E_NO_COMPLETION)
				;
			api_set_nonblock(fd);
			ck_assert_int_eq(rpma_cq_wait(cq),
					RPMA_E_NO_COMPLETION);
			api_set_block(fd);
			break;
		case 1: /* a blocking wait */
			ck_assert_int_eq(rpma_cq_wait(cq), 0);
			ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
			break;
		default: /* a non-blocking one, until it reports */
			api_set_nonblock(fd);
			while ((ret = rpma_cq_wait(cq)) == RPMA_E_NO_COMPLETION)
				;
			ck_assert_int_eq(ret, 0);
			ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
			api_set_block(fd);
			break;
		}
		ck_assert_msg(ret == 0, "round %d: %d", i, ret);
		ck_assert_uint_eq(wc.wr_id, (uint64_t)i);
	}
	/* nothing left, and a non-blocking wait says so */
	api_set_nonblock(fd);
	ck_assert_int_eq(rpma_cq_wait(cq), RPMA_E_NO_COMPLETION);
	api_rma_close(&e);
}
END_TEST

/* rpmad went away: the outstanding receive completes as flushed, then the
 * queue reports that nothing will ever come */
START_TEST(rpmad_gone)
{
	struct test_daemon *d = api_daemon();
	struct api_rma e;
	struct rpma_cq *cq = env_open(&e);
	struct rpma_cq *scq = NULL;
	ck_assert_int_eq(rpma_conn_get_cq(e.p.server, &scq), 0);
	ck_assert_int_eq(rpma_recv(e.p.server, e.local, 0, 64, (void *)0x42),
			0);
	test_daemon_kill(d);

	ck_assert_int_eq(rpma_cq_wait(scq), 0);
	struct ibv_wc wc;
	ck_assert_int_eq(rpma_cq_get_wc(scq, 1, &wc, NULL), 0);
	ck_assert_uint_eq(wc.wr_id, 0x42);
	ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(rpma_cq_get_wc(scq, 1, &wc, NULL), RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_cq_wait(scq), RPMA_E_PROVIDER);
	/* the client's queue had nothing outstanding */
	ck_assert_int_eq(rpma_cq_wait(cq), RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_cq_get_wc(cq, 1, &wc, NULL), RPMA_E_PROVIDER);
	/* and nothing can be posted any more */
	ck_assert_int_eq(rpma_write(e.p.client, e.remote, 0, e.local, 0, 8,
			ALWAYS, NULL), RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_recv(e.p.server, e.local, 0, 8, NULL),
			RPMA_E_PROVIDER);

	api_rma_delete(&e);
}
END_TEST

int
main(void)
{
	const TTest *const tc_cq[] = { get_fd_and_wait_args, get_wc_args,
		get_wc_one_without_count, get_wc_many, zero_byte_operations,
		wait_means_a_completion, NULL };
	const TTest *const tc_rpmad_gone[] = { rpmad_gone, NULL };
	const struct th_tcase tcases[] = {
		{ "cq", .tests = tc_cq, .create = api_tcase_shared },
		{ "rpmad_gone", .tests = tc_rpmad_gone,
				.create = api_tcase_own },
	};
	return api_run(th_suite("api_cq", tcases, TH_N(tcases)));
}
