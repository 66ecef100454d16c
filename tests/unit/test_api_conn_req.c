// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_api_conn_req.c -- rpma_conn_req_new, rpma_conn_req_delete,
 * rpma_conn_req_connect, rpma_conn_req_recv,
 * rpma_conn_req_get_private_data: arguments, queue sizes rpmad refuses,
 * the connection quota, rpmad going away
 */

#include <stdint.h>
#include <string.h>

#include "api_helpers.h"

#define UNTOUCHED_REQ ((struct rpma_conn_req *)(uintptr_t)0x5a5a5a5a)
#define UNTOUCHED_CONN ((struct rpma_conn *)(uintptr_t)0x5a5a5a5a)

/* an outgoing request to a port nobody listens on (not connected yet) */
static struct rpma_conn_req *
outgoing(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg)
{
	char port[16];
	api_free_port(port);
	struct rpma_conn_req *req = NULL;
	ck_assert_int_eq(rpma_conn_req_new(peer, API_LOCAL_ADDR, port, cfg,
			&req), 0);
	ck_assert_ptr_nonnull(req);
	return req;
}

START_TEST(new_args)
{
	struct rpma_peer *peer = api_peer();
	struct rpma_conn_req *req = UNTOUCHED_REQ;
	ck_assert_int_eq(rpma_conn_req_new(NULL, API_LOCAL_ADDR, "7204", NULL,
			&req), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_req_new(peer, NULL, "7204", NULL, &req),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_req_new(peer, API_LOCAL_ADDR, NULL, NULL,
			&req), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_req_new(peer, API_LOCAL_ADDR, "7204", NULL,
			NULL), RPMA_E_INVAL);
	ck_assert_ptr_eq(req, UNTOUCHED_REQ);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

START_TEST(new_unresolvable)
{
	struct rpma_peer *peer = api_peer();
	struct rpma_conn_req *req = UNTOUCHED_REQ;
	ck_assert_int_eq(rpma_conn_req_new(peer, API_UNRESOLVABLE, "7204",
			NULL, &req), RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_conn_req_new(peer, API_LOCAL_ADDR,
			"no-such-service", NULL, &req), RPMA_E_PROVIDER);
	ck_assert_ptr_eq(req, UNTOUCHED_REQ);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

typedef int set_fn(struct rpma_conn_cfg *, uint32_t);
static set_fn *const setters[] = {
	rpma_conn_cfg_set_cq_size, rpma_conn_cfg_set_rcq_size,
	rpma_conn_cfg_set_sq_size, rpma_conn_cfg_set_rq_size,
};

/* Queue sizes rpmad cannot give: cq 0, anything above 32768. */
START_TEST(new_queue_sizes)
{
	struct rpma_peer *peer = api_peer();
	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);
	struct rpma_conn_req *req = UNTOUCHED_REQ;
	ck_assert_int_eq(th_log_capture(), 0);

	ck_assert_int_eq(rpma_conn_cfg_set_cq_size(cfg, 0), 0);
	ck_assert_int_eq(rpma_conn_req_new(peer, API_LOCAL_ADDR, "7204", cfg,
			&req), RPMA_E_PROVIDER);
	ck_assert_uint_gt(th_log_count(), 0);
	for (size_t i = 0; i < sizeof(setters) / sizeof(setters[0]); i++) {
		ck_assert_int_eq(rpma_conn_cfg_set_cq_size(cfg, 10), 0);
		ck_assert_int_eq(setters[i](cfg, 32769), 0);
		ck_assert_int_eq(rpma_conn_req_new(peer, API_LOCAL_ADDR, "7204",
				cfg, &req), RPMA_E_PROVIDER);
		ck_assert_int_eq(setters[i](cfg, UINT32_MAX), 0);
		ck_assert_int_eq(rpma_conn_req_new(peer, API_LOCAL_ADDR, "7204",
				cfg, &req), RPMA_E_PROVIDER);
		ck_assert_int_eq(setters[i](cfg, 10), 0);
	}
	ck_assert_ptr_eq(req, UNTOUCHED_REQ);

	/* the limits themselves are fine; so are empty SQ, RQ and RCQ */
	for (size_t i = 0; i < sizeof(setters) / sizeof(setters[0]); i++)
		ck_assert_int_eq(setters[i](cfg, 32768), 0);
	req = outgoing(peer, cfg);
	ck_assert_int_eq(rpma_conn_req_delete(&req), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_sq_size(cfg, 0), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_rq_size(cfg, 0), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_rcq_size(cfg, 0), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_cq_size(cfg, 1), 0);
	req = outgoing(peer, cfg);
	ck_assert_int_eq(rpma_conn_req_delete(&req), 0);

	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

START_TEST(delete_args)
{
	ck_assert_int_eq(rpma_conn_req_delete(NULL), RPMA_E_INVAL);
	struct rpma_conn_req *req = NULL;
	ck_assert_int_eq(rpma_conn_req_delete(&req), 0);

	struct rpma_peer *peer = api_peer();
	req = outgoing(peer, NULL);
	ck_assert_int_eq(rpma_conn_req_delete(&req), 0);
	ck_assert_ptr_null(req);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

START_TEST(connect_args)
{
	struct rpma_peer *peer = api_peer();
	struct rpma_conn_req *req = outgoing(peer, NULL);
	struct rpma_conn_req *none = NULL;
	struct rpma_conn *conn = UNTOUCHED_CONN;

	ck_assert_int_eq(rpma_conn_req_connect(NULL, NULL, &conn),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_req_connect(&none, NULL, &conn),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_req_connect(&req, NULL, NULL),
			RPMA_E_INVAL);
	/* private data with a length of 0, or without bytes */
	char bytes[4] = "abc";
	struct rpma_conn_private_data empty = { .ptr = bytes, .len = 0 };
	struct rpma_conn_private_data no_ptr = { .ptr = NULL, .len = 3 };
	ck_assert_int_eq(rpma_conn_req_connect(&req, &empty, &conn),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_req_connect(&req, &no_ptr, &conn),
			RPMA_E_INVAL);
	ck_assert_ptr_eq(conn, UNTOUCHED_CONN);

	/* argument errors do not consume the request */
	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(rpma_conn_req_delete(&req), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/* Nothing listens at the address: REJECTED, as librpma 0.12 on RDMA. */
START_TEST(connect_nothing_listening)
{
	struct rpma_peer *peer = api_peer();
	struct rpma_conn_req *req = outgoing(peer, NULL);
	struct rpma_conn *conn = NULL;
	ck_assert_int_eq(rpma_conn_req_connect(&req, NULL, &conn), 0);
	ck_assert_ptr_null(req);	/* consumed */
	ck_assert_ptr_nonnull(conn);

	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	ck_assert_int_eq(rpma_conn_next_event(conn, &ev), 0);
	ck_assert_int_eq(ev, RPMA_CONN_REJECTED);
	ck_assert_int_eq(rpma_conn_delete(&conn), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/*
 * The client gave up before the server accepted: accepting either fails
 * with RPMA_E_PROVIDER or succeeds and the connection reports the loss.
 */
START_TEST(connect_client_gave_up)
{
	struct api_pair p;
	api_pair_request(&p, NULL, NULL);
	struct rpma_conn_req *sreq = NULL;
	ck_assert_int_eq(rpma_ep_next_conn_req(p.ep, NULL, &sreq), 0);

	ck_assert_int_eq(rpma_conn_delete(&p.client), 0);
	int ret = rpma_conn_req_connect(&sreq, NULL, &p.server);
	ck_assert_ptr_null(sreq);	/* consumed either way */
	if (ret == 0) {
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		ck_assert_int_eq(rpma_conn_next_event(p.server, &ev), 0);
		ck_assert_int_eq(ev, RPMA_CONN_LOST);
		ck_assert_int_eq(rpma_conn_delete(&p.server), 0);
	} else {
		ck_assert_int_eq(ret, RPMA_E_PROVIDER);
	}
	ck_assert_int_eq(rpma_ep_shutdown(&p.ep), 0);
	ck_assert_int_eq(rpma_peer_delete(&p.peer), 0);
}
END_TEST

START_TEST(recv_args_and_full)
{
	struct rpma_peer *peer = api_peer();
	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_rq_size(cfg, 2), 0);
	struct rpma_conn_req *req = outgoing(peer, cfg);
	char *buf = api_buf(4096);
	struct rpma_mr_local *mr = NULL;
	ck_assert_int_eq(rpma_mr_reg(peer, buf, 4096, RPMA_MR_USAGE_RECV,
			&mr), 0);

	ck_assert_int_eq(rpma_conn_req_recv(NULL, mr, 0, 8, NULL),
			RPMA_E_INVAL);
	/* our decision (as librpma's code): a receive needs a buffer */
	ck_assert_int_eq(rpma_conn_req_recv(req, NULL, 0, 8, NULL),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_req_recv(req, mr, 0,
			(size_t)UINT32_MAX + 1, NULL), RPMA_E_INVAL);

	/* a NULL op_context is a valid work request id of 0 */
	ck_assert_int_eq(rpma_conn_req_recv(req, mr, 0, 8, NULL), 0);
	ck_assert_int_eq(rpma_conn_req_recv(req, mr, 8, 8, (void *)0x1), 0);
	/* the receive queue (2 entries) is full */
	ck_assert_int_eq(rpma_conn_req_recv(req, mr, 16, 8, (void *)0x2),
			RPMA_E_PROVIDER);

	ck_assert_int_eq(rpma_conn_req_delete(&req), 0);
	ck_assert_int_eq(rpma_mr_dereg(&mr), 0);
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

START_TEST(get_private_data)
{
	struct rpma_peer *peer = api_peer();
	char port[16];
	api_free_port(port);
	struct rpma_ep *ep = NULL;
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port, &ep), 0);
	struct rpma_conn_req *creq = NULL, *sreq = NULL;
	ck_assert_int_eq(rpma_conn_req_new(peer, API_LOCAL_ADDR, port, NULL,
			&creq), 0);

	struct rpma_conn_private_data pd = { .ptr = (void *)0x77, .len = 77 };
	ck_assert_int_eq(rpma_conn_req_get_private_data(NULL, &pd),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_req_get_private_data(creq, NULL),
			RPMA_E_INVAL);
	ck_assert_ptr_eq(pd.ptr, (void *)0x77);
	/* an outgoing request has none */
	ck_assert_int_eq(rpma_conn_req_get_private_data(creq, &pd), 0);
	ck_assert_uint_eq(pd.len, 0);

	/* an incoming one has the client's, all 255 bytes of it */
	uint8_t bytes[255];
	for (unsigned i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i ^ 0x5a);
	struct rpma_conn_private_data mine = { .ptr = bytes, .len = 255 };
	struct rpma_conn *client = NULL;
	ck_assert_int_eq(rpma_conn_req_connect(&creq, &mine, &client), 0);
	ck_assert_int_eq(rpma_ep_next_conn_req(ep, NULL, &sreq), 0);
	ck_assert_int_eq(rpma_conn_req_get_private_data(sreq, &pd), 0);
	ck_assert_uint_eq(pd.len, 255);
	ck_assert_mem_eq(pd.ptr, bytes, 255);
	ck_assert_ptr_ne(pd.ptr, bytes);	/* a copy of its own */

	ck_assert_int_eq(rpma_conn_req_delete(&sreq), 0);
	ck_assert_int_eq(rpma_conn_delete(&client), 0);
	ck_assert_int_eq(rpma_ep_shutdown(&ep), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/* max_connections = 1 */
START_TEST(new_quota)
{
	struct rpma_peer *peer = api_peer();
	struct rpma_conn_req *req = outgoing(peer, NULL);
	struct rpma_conn_req *req2 = UNTOUCHED_REQ;
	ck_assert_int_eq(rpma_conn_req_new(peer, API_LOCAL_ADDR, "7204", NULL,
			&req2), RPMA_E_NOMEM);
	ck_assert_ptr_eq(req2, UNTOUCHED_REQ);
	ck_assert_int_eq(rpma_conn_req_delete(&req), 0);
	req = outgoing(peer, NULL);
	ck_assert_int_eq(rpma_conn_req_delete(&req), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

START_TEST(rpmad_gone)
{
	struct test_daemon *d = api_daemon();
	struct rpma_peer *peer = api_peer();
	struct rpma_conn_req *req = outgoing(peer, NULL);
	struct rpma_conn_req *req2 = outgoing(peer, NULL);
	test_daemon_kill(d);

	struct rpma_conn *conn = UNTOUCHED_CONN;
	ck_assert_int_eq(rpma_conn_req_connect(&req, NULL, &conn),
			RPMA_E_PROVIDER);
	ck_assert_ptr_null(req);	/* consumed on failure too */
	ck_assert_ptr_eq(conn, UNTOUCHED_CONN);
	struct rpma_conn_req *req3 = UNTOUCHED_REQ;
	ck_assert_int_eq(rpma_conn_req_new(peer, API_LOCAL_ADDR, "7204", NULL,
			&req3), RPMA_E_PROVIDER);
	ck_assert_ptr_eq(req3, UNTOUCHED_REQ);

	ck_assert_int_eq(rpma_conn_req_delete(&req2), 0);
	ck_assert_ptr_null(req2);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_conn_req[] = { new_args, new_unresolvable,
		new_queue_sizes, delete_args, connect_args,
		connect_nothing_listening, connect_client_gave_up,
		recv_args_and_full, get_private_data, NULL };
	const TTest *const tc_quota[] = { new_quota, NULL };
	const TTest *const tc_rpmad_gone[] = { rpmad_gone, NULL };
	const struct th_tcase tcases[] = {
		{ "conn_req", .tests = tc_conn_req,
				.create = api_tcase_shared },
		{ "quota", .tests = tc_quota, .create = api_tcase_limited },
		{ "rpmad_gone", .tests = tc_rpmad_gone,
				.create = api_tcase_own },
	};
	return api_run(th_suite("api_conn_req", tcases, TH_N(tcases)));
}
