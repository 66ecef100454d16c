// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_api_conn.c -- the functions of an established connection:
 * rpma_conn_get_event_fd, rpma_conn_next_event, rpma_conn_get_private_data,
 * rpma_conn_apply_remote_peer_cfg, rpma_conn_get_qp_num, rpma_conn_get_cq,
 * rpma_conn_get_rcq, rpma_conn_disconnect, rpma_conn_delete: arguments,
 * non-blocking events, rpmad going away
 */

#include <fcntl.h>
#include <stdint.h>
#include <string.h>

#include "api_helpers.h"

#define UNTOUCHED_CQ ((struct rpma_cq *)(uintptr_t)0x5a5a5a5a)

START_TEST(getters_args)
{
	struct api_pair p;
	api_pair_connect(&p, NULL, NULL);
	struct rpma_peer_cfg *pcfg = NULL;
	ck_assert_int_eq(rpma_peer_cfg_new(&pcfg), 0);

	int fd = -77;
	ck_assert_int_eq(rpma_conn_get_event_fd(NULL, &fd), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_get_event_fd(p.client, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(fd, -77);

	uint32_t qp_num = 77;
	ck_assert_int_eq(rpma_conn_get_qp_num(NULL, &qp_num), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_get_qp_num(p.client, NULL), RPMA_E_INVAL);
	ck_assert_uint_eq(qp_num, 77);

	struct rpma_cq *cq = UNTOUCHED_CQ;
	ck_assert_int_eq(rpma_conn_get_cq(NULL, &cq), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_get_cq(p.client, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_get_rcq(NULL, &cq), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_get_rcq(p.client, NULL), RPMA_E_INVAL);
	ck_assert_ptr_eq(cq, UNTOUCHED_CQ);

	struct rpma_conn_private_data pd = { .ptr = (void *)0x77, .len = 77 };
	ck_assert_int_eq(rpma_conn_get_private_data(NULL, &pd), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_get_private_data(p.client, NULL),
			RPMA_E_INVAL);
	ck_assert_ptr_eq(pd.ptr, (void *)0x77);
	ck_assert_uint_eq(pd.len, 77);

	ck_assert_int_eq(rpma_conn_apply_remote_peer_cfg(NULL, pcfg),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_apply_remote_peer_cfg(p.client, NULL),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_apply_remote_peer_cfg(p.client, pcfg), 0);

	ck_assert_int_eq(rpma_peer_cfg_delete(&pcfg), 0);
	api_pair_close(&p);
}
END_TEST

START_TEST(getters_values)
{
	uint8_t hello[] = "hello from the client";
	struct rpma_conn_private_data mine = { .ptr = hello,
			.len = sizeof(hello) };
	struct api_pair p;
	api_pair_connect(&p, NULL, &mine);

	int cfd = -1, sfd = -1;
	ck_assert_int_eq(rpma_conn_get_event_fd(p.client, &cfd), 0);
	ck_assert_int_eq(rpma_conn_get_event_fd(p.server, &sfd), 0);
	ck_assert_int_ge(fcntl(cfd, F_GETFD), 0);
	ck_assert_int_ne(cfd, sfd);

	uint32_t cq_num = 0, sq_num = 0;
	ck_assert_int_eq(rpma_conn_get_qp_num(p.client, &cq_num), 0);
	ck_assert_int_eq(rpma_conn_get_qp_num(p.server, &sq_num), 0);
	ck_assert_uint_ne(cq_num, sq_num);

	/* no receive CQ unless configured */
	struct rpma_cq *cq = NULL, *rcq = UNTOUCHED_CQ;
	ck_assert_int_eq(rpma_conn_get_cq(p.client, &cq), 0);
	ck_assert_ptr_nonnull(cq);
	ck_assert_int_eq(rpma_conn_get_rcq(p.client, &rcq), 0);
	ck_assert_ptr_null(rcq);

	/* the server got the client's private data; the client none */
	struct rpma_conn_private_data pd;
	ck_assert_int_eq(rpma_conn_get_private_data(p.server, &pd), 0);
	ck_assert_uint_eq(pd.len, sizeof(hello));
	ck_assert_mem_eq(pd.ptr, hello, sizeof(hello));
	ck_assert_int_eq(rpma_conn_get_private_data(p.client, &pd), 0);
	ck_assert_uint_eq(pd.len, 0);

	api_pair_close(&p);
}
END_TEST

START_TEST(rcq_when_configured)
{
	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_rcq_size(cfg, 5), 0);
	struct api_pair p;
	api_pair_connect(&p, cfg, NULL);

	struct rpma_cq *cq = NULL, *rcq = NULL;
	ck_assert_int_eq(rpma_conn_get_cq(p.server, &cq), 0);
	ck_assert_int_eq(rpma_conn_get_rcq(p.server, &rcq), 0);
	ck_assert_ptr_nonnull(rcq);
	ck_assert_ptr_ne(cq, rcq);
	int fd1 = -1, fd2 = -1;
	ck_assert_int_eq(rpma_cq_get_fd(cq, &fd1), 0);
	ck_assert_int_eq(rpma_cq_get_fd(rcq, &fd2), 0);
	ck_assert_int_ne(fd1, fd2);

	api_pair_close(&p);
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
}
END_TEST

START_TEST(next_event_args_and_no_event)
{
	struct api_pair p;
	api_pair_connect(&p, NULL, NULL);

	enum rpma_conn_event ev = (enum rpma_conn_event)77;
	ck_assert_int_eq(rpma_conn_next_event(NULL, &ev), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_next_event(p.client, NULL), RPMA_E_INVAL);

	int fd;
	ck_assert_int_eq(rpma_conn_get_event_fd(p.client, &fd), 0);
	api_set_nonblock(fd);
	/* librpma 0.12: rdma_get_cm_event fails, RPMA_E_PROVIDER */
	ck_assert_int_eq(rpma_conn_next_event(p.client, &ev),
			RPMA_E_PROVIDER);
	ck_assert_int_eq(ev, 77);

	api_pair_close(&p);
}
END_TEST

START_TEST(disconnect_delete_args)
{
	ck_assert_int_eq(rpma_conn_disconnect(NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_delete(NULL), RPMA_E_INVAL);
	struct rpma_conn *conn = NULL;
	ck_assert_int_eq(rpma_conn_delete(&conn), 0);
	ck_assert_ptr_null(conn);
}
END_TEST

START_TEST(rpmad_gone)
{
	struct test_daemon *d = api_daemon();
	struct api_pair p;
	api_pair_connect(&p, NULL, NULL);
	test_daemon_kill(d);

	/* the loss is reported once, then there is nothing more */
	struct rpma_conn *conns[2] = { p.client, p.server };
	for (int i = 0; i < 2; i++) {
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		ck_assert_int_eq(rpma_conn_next_event(conns[i], &ev), 0);
		ck_assert_int_eq(ev, RPMA_CONN_LOST);
		ck_assert_int_eq(rpma_conn_next_event(conns[i], &ev),
				RPMA_E_PROVIDER);
		ck_assert_int_eq(rpma_conn_disconnect(conns[i]), 0);
	}
	ck_assert_int_eq(rpma_conn_delete(&p.client), 0);
	ck_assert_int_eq(rpma_conn_delete(&p.server), 0);
	ck_assert_ptr_null(p.client);
	ck_assert_int_eq(rpma_ep_shutdown(&p.ep), 0);
	ck_assert_int_eq(rpma_peer_delete(&p.peer), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_conn[] = { getters_args, getters_values,
		rcq_when_configured, next_event_args_and_no_event,
		disconnect_delete_args, NULL };
	const TTest *const tc_rpmad_gone[] = { rpmad_gone, NULL };
	const struct th_tcase tcases[] = {
		{ "conn", .tests = tc_conn, .create = api_tcase_shared },
		{ "rpmad_gone", .tests = tc_rpmad_gone,
				.create = api_tcase_own },
	};
	return api_run(th_suite("api_conn", tcases, TH_N(tcases)));
}
