// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_api_ep.c -- rpma_ep_listen, rpma_ep_get_fd, rpma_ep_next_conn_req,
 * rpma_ep_shutdown: arguments, addresses and ports rpmad cannot listen on,
 * non-blocking use, bad queue sizes, the endpoint and connection quotas,
 * rpmad going away
 */

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api_helpers.h"

#define UNTOUCHED_EP ((struct rpma_ep *)(uintptr_t)0x5a5a5a5a)
#define UNTOUCHED_REQ ((struct rpma_conn_req *)(uintptr_t)0x5a5a5a5a)

START_TEST(listen_args)
{
	struct rpma_peer *peer = api_peer();
	char port[16];
	api_free_port(port);
	struct rpma_ep *ep = UNTOUCHED_EP;

	ck_assert_int_eq(rpma_ep_listen(NULL, API_LOCAL_ADDR, port, &ep),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_ep_listen(peer, NULL, port, &ep), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, NULL, &ep),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port, NULL),
			RPMA_E_INVAL);
	ck_assert_ptr_eq(ep, UNTOUCHED_EP);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

START_TEST(listen_where_impossible)
{
	struct rpma_peer *peer = api_peer();
	char port[16];
	api_free_port(port);
	struct rpma_ep *ep = UNTOUCHED_EP;

	/* not an address of this host */
	ck_assert_int_eq(rpma_ep_listen(peer, API_FOREIGN_ADDR, port, &ep),
			RPMA_E_PROVIDER);
	/* no such host, no such service */
	ck_assert_int_eq(rpma_ep_listen(peer, API_UNRESOLVABLE, port, &ep),
			RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR,
			"no-such-service", &ep), RPMA_E_PROVIDER);
	ck_assert_ptr_eq(ep, UNTOUCHED_EP);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

START_TEST(listen_port_in_use)
{
	struct rpma_peer *peer = api_peer();
	char port[16];
	api_free_port(port);

	/* somebody else listens there */
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(s, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)atoi(port));
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(s, 1), 0);
	ck_assert_int_eq(th_log_capture(), 0);
	struct rpma_ep *ep = UNTOUCHED_EP;
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port, &ep),
			RPMA_E_PROVIDER);
	ck_assert_ptr_eq(ep, UNTOUCHED_EP);
	ck_assert_ptr_nonnull(th_log_find(port));
	(void) close(s);

	/* one endpoint of ours listens there */
	ep = NULL;
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port, &ep), 0);
	struct rpma_ep *ep2 = UNTOUCHED_EP;
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port, &ep2),
			RPMA_E_PROVIDER);
	ck_assert_ptr_eq(ep2, UNTOUCHED_EP);

	/* after a shutdown the port is free again */
	ck_assert_int_eq(rpma_ep_shutdown(&ep), 0);
	ck_assert_ptr_null(ep);
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port, &ep), 0);
	ck_assert_int_eq(rpma_ep_shutdown(&ep), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

START_TEST(get_fd_and_shutdown_args)
{
	struct rpma_peer *peer = api_peer();
	char port[16];
	api_free_port(port);
	struct rpma_ep *ep = NULL;
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port, &ep), 0);

	int fd = -77;
	ck_assert_int_eq(rpma_ep_get_fd(NULL, &fd), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_ep_get_fd(ep, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(fd, -77);
	ck_assert_int_eq(rpma_ep_get_fd(ep, &fd), 0);
	ck_assert_int_ge(fcntl(fd, F_GETFD), 0);

	ck_assert_int_eq(rpma_ep_shutdown(NULL), RPMA_E_INVAL);
	struct rpma_ep *none = NULL;
	ck_assert_int_eq(rpma_ep_shutdown(&none), 0);
	ck_assert_int_eq(rpma_ep_shutdown(&ep), 0);
	ck_assert_ptr_null(ep);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

START_TEST(next_conn_req_args_and_no_event)
{
	struct rpma_peer *peer = api_peer();
	char port[16];
	api_free_port(port);
	struct rpma_ep *ep = NULL;
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port, &ep), 0);

	struct rpma_conn_req *req = UNTOUCHED_REQ;
	ck_assert_int_eq(rpma_ep_next_conn_req(NULL, NULL, &req),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_ep_next_conn_req(ep, NULL, NULL), RPMA_E_INVAL);

	int fd;
	ck_assert_int_eq(rpma_ep_get_fd(ep, &fd), 0);
	api_set_nonblock(fd);
	ck_assert_int_eq(rpma_ep_next_conn_req(ep, NULL, &req),
			RPMA_E_NO_EVENT);
	ck_assert_ptr_eq(req, UNTOUCHED_REQ);

	ck_assert_int_eq(rpma_ep_shutdown(&ep), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/*
 * More requests wait than a notification socket of default size holds
 * bytes for (about 278): every one still reaches rpma_ep_next_conn_req.
 */
START_TEST(many_pending)
{
	enum { N = 600 };
	struct rpma_peer *peer = api_peer();
	char port[16];
	api_free_port(port);
	struct rpma_ep *ep = NULL;
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port, &ep), 0);
	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);
	/* the requests wait for the application, not for a time-out */
	ck_assert_int_eq(rpma_conn_cfg_set_timeout(cfg, 60000), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_sq_size(cfg, 2), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_rq_size(cfg, 2), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_cq_size(cfg, 2), 0);

	static struct rpma_conn *clients[N];
	for (int i = 0; i < N; i++) {
		struct rpma_conn_req *req = NULL;
		ck_assert_int_eq(rpma_conn_req_new(peer, API_LOCAL_ADDR, port,
				cfg, &req), 0);
		ck_assert_int_eq(rpma_conn_req_connect(&req, NULL,
				&clients[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		struct rpma_conn_req *req = NULL;
		ck_assert_int_eq(rpma_ep_next_conn_req(ep, cfg, &req), 0);
		ck_assert_int_eq(rpma_conn_req_delete(&req), 0);
	}
	/* and nothing more */
	int fd;
	ck_assert_int_eq(rpma_ep_get_fd(ep, &fd), 0);
	api_set_nonblock(fd);
	struct rpma_conn_req *req = NULL;
	ck_assert_int_eq(rpma_ep_next_conn_req(ep, cfg, &req), RPMA_E_NO_EVENT);

	for (int i = 0; i < N; i++) {
		enum rpma_conn_event ev;
		ck_assert_int_eq(rpma_conn_next_event(clients[i], &ev), 0);
		ck_assert_int_eq(ev, RPMA_CONN_REJECTED);
		ck_assert_int_eq(rpma_conn_delete(&clients[i]), 0);
	}
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
	ck_assert_int_eq(rpma_ep_shutdown(&ep), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/* An incoming request with impossible queue sizes stays for a later try. */
START_TEST(next_conn_req_bad_sizes)
{
	struct api_pair p;
	api_pair_request(&p, NULL, NULL);

	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);
	struct rpma_conn_req *req = UNTOUCHED_REQ;

	ck_assert_int_eq(rpma_conn_cfg_set_cq_size(cfg, 0), 0);
	ck_assert_int_eq(rpma_ep_next_conn_req(p.ep, cfg, &req),
			RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_conn_cfg_set_cq_size(cfg, 32769), 0);
	ck_assert_int_eq(rpma_ep_next_conn_req(p.ep, cfg, &req),
			RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_conn_cfg_set_cq_size(cfg, 10), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_sq_size(cfg, 32769), 0);
	ck_assert_int_eq(rpma_ep_next_conn_req(p.ep, cfg, &req),
			RPMA_E_PROVIDER);
	ck_assert_ptr_eq(req, UNTOUCHED_REQ);

	/* the request is still there */
	ck_assert_int_eq(rpma_conn_cfg_set_sq_size(cfg, 32768), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_cq_size(cfg, 32768), 0);
	ck_assert_int_eq(rpma_ep_next_conn_req(p.ep, cfg, &req), 0);
	ck_assert_ptr_nonnull(req);

	/* rejecting it tells the client */
	ck_assert_int_eq(rpma_conn_req_delete(&req), 0);
	ck_assert_ptr_null(req);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	ck_assert_int_eq(rpma_conn_next_event(p.client, &ev), 0);
	ck_assert_int_eq(ev, RPMA_CONN_REJECTED);

	ck_assert_int_eq(rpma_conn_delete(&p.client), 0);
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
	ck_assert_int_eq(rpma_ep_shutdown(&p.ep), 0);
	ck_assert_int_eq(rpma_peer_delete(&p.peer), 0);
}
END_TEST

/* -------------------------------------- quotas: max_endpoints = 1 ... */

START_TEST(listen_quota)
{
	struct rpma_peer *peer = api_peer();
	char port[16], port2[16];
	api_free_port(port);
	struct rpma_ep *ep = NULL, *ep2 = UNTOUCHED_EP;
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port, &ep), 0);
	api_free_port(port2);
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port2, &ep2),
			RPMA_E_NOMEM);
	ck_assert_ptr_eq(ep2, UNTOUCHED_EP);
	ck_assert_int_eq(rpma_ep_shutdown(&ep), 0);
	ep2 = NULL;
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port2, &ep2), 0);
	ck_assert_int_eq(rpma_ep_shutdown(&ep2), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

/* ... and max_connections = 1: the client's request uses it up */
START_TEST(next_conn_req_quota)
{
	struct api_pair p;
	api_pair_request(&p, NULL, NULL);

	struct rpma_conn_req *req = UNTOUCHED_REQ;
	ck_assert_int_eq(rpma_ep_next_conn_req(p.ep, NULL, &req), RPMA_E_NOMEM);
	ck_assert_ptr_eq(req, UNTOUCHED_REQ);
	/* the request was announced again: no hang, the same answer */
	int fd;
	ck_assert_int_eq(rpma_ep_get_fd(p.ep, &fd), 0);
	api_set_nonblock(fd);
	ck_assert_int_eq(rpma_ep_next_conn_req(p.ep, NULL, &req), RPMA_E_NOMEM);

	ck_assert_int_eq(rpma_conn_delete(&p.client), 0);
	ck_assert_int_eq(rpma_ep_shutdown(&p.ep), 0);
	ck_assert_int_eq(rpma_peer_delete(&p.peer), 0);
}
END_TEST

/* ------------------------------------------------------- rpmad gone */

START_TEST(rpmad_gone)
{
	struct test_daemon *d = api_daemon();
	struct rpma_peer *peer = api_peer();
	char port[16];
	api_free_port(port);
	struct rpma_ep *ep = NULL;
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port, &ep), 0);

	test_daemon_kill(d);
	/* a blocking wait ends: the descriptor reaches its end */
	struct rpma_conn_req *req = UNTOUCHED_REQ;
	ck_assert_int_eq(rpma_ep_next_conn_req(ep, NULL, &req),
			RPMA_E_PROVIDER);
	ck_assert_ptr_eq(req, UNTOUCHED_REQ);
	struct rpma_ep *ep2 = UNTOUCHED_EP;
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port, &ep2),
			RPMA_E_PROVIDER);
	ck_assert_ptr_eq(ep2, UNTOUCHED_EP);

	ck_assert_int_eq(rpma_ep_shutdown(&ep), 0);
	ck_assert_ptr_null(ep);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_ep[] = { listen_args, listen_where_impossible,
		listen_port_in_use, get_fd_and_shutdown_args,
		next_conn_req_args_and_no_event, next_conn_req_bad_sizes,
		NULL };
	const TTest *const tc_many[] = { many_pending, NULL };
	const TTest *const tc_quota[] = { listen_quota, next_conn_req_quota,
		NULL };
	const TTest *const tc_rpmad_gone[] = { rpmad_gone, NULL };
	const struct th_tcase tcases[] = {
		{ "ep", .tests = tc_ep, .create = api_tcase_shared },
		{ "many", .tests = tc_many, .create = api_tcase_shared,
				.timeout = 300 },
		{ "quota", .tests = tc_quota, .create = api_tcase_limited },
		{ "rpmad_gone", .tests = tc_rpmad_gone,
				.create = api_tcase_own },
	};
	return api_run(th_suite("api_ep", tcases, TH_N(tcases)));
}
