// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_api_nomem.c -- RPMA_E_NOMEM: the library's allocations fail on
 * demand. This program replaces malloc, calloc and realloc (forwarding to
 * glibc's) so that the k-th allocation inside one API call fails; each k
 * runs in its own process. Every failure must end in a clean error (never
 * a crash or a half-made object), and a failure of the call's first
 * allocation must be RPMA_E_NOMEM.
 *
 * AddressSanitizer owns malloc, so under --enable-sanitizers the program
 * reports itself skipped (exit status 77).
 */

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_helpers.h"

#if defined(__SANITIZE_ADDRESS__)
#define NOMEM_UNSUPPORTED 1
#endif

#ifndef NOMEM_UNSUPPORTED

/* glibc's own allocator, under the names it exports for this purpose */
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *ptr, size_t size);

/* allocations to let through before one fails; -1: none fails */
static _Atomic long countdown = -1;
static _Atomic int failures;

static int
fail_now(void)
{
	long c = atomic_load(&countdown);
	if (c < 0)
		return 0;
	if (c == 0) {
		atomic_store(&countdown, -1);
		atomic_fetch_add(&failures, 1);
		return 1;
	}
	atomic_store(&countdown, c - 1);
	return 0;
}

void *
malloc(size_t size)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(size);
}

void *
calloc(size_t n, size_t size)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(n, size);
}

void *
realloc(void *ptr, size_t size)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(ptr, size);
}

/* the k-th allocation from now on fails (k = 0: the next one) */
static void
arm(long k)
{
	atomic_store(&failures, 0);
	atomic_store(&countdown, k);
}

/* stops failing; whether an allocation failed since arm() */
static int
disarm(void)
{
	atomic_store(&countdown, -1);
	return atomic_load(&failures);
}

/* how many k each daemon-backed call is tried with */
#define SWEEP 8

/* k = 0 must give RPMA_E_NOMEM; any k a clean result */
static void
check_result(int k, int ret, int failed, int provider_ok)
{
	if (k == 0)
		ck_assert_msg(ret == RPMA_E_NOMEM, "k=0: %d", ret);
	if (!failed) {
		ck_assert_int_eq(ret, 0);
		return;
	}
	ck_assert_msg(ret == 0 || ret == RPMA_E_NOMEM ||
			(provider_ok && ret == RPMA_E_PROVIDER),
			"k=%d: %d", k, ret);
}

/* ------------------------------------------------- without a daemon */

START_TEST(cfg_objects)
{
	struct rpma_conn_cfg *cfg = (void *)0x77;
	arm(0);
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), RPMA_E_NOMEM);
	ck_assert(disarm());
	ck_assert_ptr_eq(cfg, (void *)0x77);

	struct rpma_peer_cfg *pcfg = (void *)0x77;
	arm(0);
	ck_assert_int_eq(rpma_peer_cfg_new(&pcfg), RPMA_E_NOMEM);
	ck_assert(disarm());
	ck_assert_ptr_eq(pcfg, (void *)0x77);

	uint8_t byte = 1;
	arm(0);
	ck_assert_int_eq(rpma_peer_cfg_from_descriptor(&byte, 1, &pcfg),
			RPMA_E_NOMEM);
	ck_assert(disarm());
	ck_assert_ptr_eq(pcfg, (void *)0x77);

	/* 1.x */
	struct rpma_srq_cfg *scfg = (void *)0x77;
	arm(0);
	ck_assert_int_eq(rpma_srq_cfg_new(&scfg), RPMA_E_NOMEM);
	ck_assert(disarm());
	ck_assert_ptr_eq(scfg, (void *)0x77);
}
END_TEST

START_TEST(mr_remote)
{
	uint8_t desc[21] = { 0 };
	desc[9] = 1;	/* length 256 */
	desc[20] = RPMA_MR_USAGE_READ_SRC;
	struct rpma_mr_remote *mr = (void *)0x77;
	arm(0);
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, sizeof(desc),
			&mr), RPMA_E_NOMEM);
	ck_assert(disarm());
	ck_assert_ptr_eq(mr, (void *)0x77);
}
END_TEST

/* -------------------------------------------------- with a daemon */

START_TEST(get_ibv_context)
{
	(void) api_ctx();	/* the session exists */
	struct ibv_context *ctx = (void *)0x77;
	arm(_i);
	int ret = rpma_utils_get_ibv_context(API_LOCAL_ADDR,
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx);
	check_result(_i, ret, disarm(), 1);
	if (ret)
		ck_assert_ptr_eq(ctx, (void *)0x77);
	/* the library recovers */
	(void) api_ctx();
}
END_TEST

START_TEST(peer_new)
{
	struct ibv_context *ctx = api_ctx();
	struct rpma_peer *peer = (void *)0x77;
	arm(_i);
	int ret = rpma_peer_new(ctx, &peer);
	check_result(_i, ret, disarm(), 1);
	if (ret == 0)
		ck_assert_int_eq(rpma_peer_delete(&peer), 0);
	else
		ck_assert_ptr_eq(peer, (void *)0x77);
	peer = api_peer();
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

START_TEST(mr_reg)
{
	struct rpma_peer *peer = api_peer();
	void *buf = api_buf(8192);
	struct rpma_mr_local *mr = (void *)0x77;
	arm(_i);
	int ret = rpma_mr_reg(peer, buf, 8192, RPMA_MR_USAGE_READ_SRC, &mr);
	check_result(_i, ret, disarm(), 1);
	if (ret == 0)
		ck_assert_int_eq(rpma_mr_dereg(&mr), 0);
	else
		ck_assert_ptr_eq(mr, (void *)0x77);
	(void) rpma_peer_delete(&peer);
}
END_TEST

START_TEST(ep_listen)
{
	struct rpma_peer *peer = api_peer();
	char port[16];
	api_free_port(port);
	struct rpma_ep *ep = (void *)0x77;
	arm(_i);
	int ret = rpma_ep_listen(peer, API_LOCAL_ADDR, port, &ep);
	check_result(_i, ret, disarm(), 1);
	if (ret == 0)
		ck_assert_int_eq(rpma_ep_shutdown(&ep), 0);
	else
		ck_assert_ptr_eq(ep, (void *)0x77);
	(void) rpma_peer_delete(&peer);
}
END_TEST

START_TEST(conn_req_new)
{
	struct rpma_peer *peer = api_peer();
	struct rpma_conn_req *req = (void *)0x77;
	arm(_i);
	int ret = rpma_conn_req_new(peer, API_LOCAL_ADDR, "7204", NULL, &req);
	check_result(_i, ret, disarm(), 1);
	if (ret == 0)
		ck_assert_int_eq(rpma_conn_req_delete(&req), 0);
	else
		ck_assert_ptr_eq(req, (void *)0x77);
	(void) rpma_peer_delete(&peer);
}
END_TEST

/* 1.x: a shared RQ, and a connection with a shared completion channel */
START_TEST(srq_new)
{
	struct rpma_peer *peer = api_peer();
	struct rpma_srq *srq = (void *)0x77;
	arm(_i);
	int ret = rpma_srq_new(peer, NULL, &srq);
	check_result(_i, ret, disarm(), 1);
	if (ret == 0)
		ck_assert_int_eq(rpma_srq_delete(&srq), 0);
	else
		ck_assert_ptr_eq(srq, (void *)0x77);
	(void) rpma_peer_delete(&peer);
}
END_TEST

START_TEST(conn_req_new_shared_channel)
{
	struct rpma_peer *peer = api_peer();
	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_compl_channel(cfg, true), 0);
	struct rpma_conn_req *req = (void *)0x77;
	arm(_i);
	int ret = rpma_conn_req_new(peer, API_LOCAL_ADDR, "7204", cfg, &req);
	check_result(_i, ret, disarm(), 1);
	if (ret == 0)
		ck_assert_int_eq(rpma_conn_req_delete(&req), 0);
	else
		ck_assert_ptr_eq(req, (void *)0x77);
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
	(void) rpma_peer_delete(&peer);
}
END_TEST

START_TEST(conn_req_connect)
{
	struct rpma_peer *peer = api_peer();
	char port[16];
	api_free_port(port);
	struct rpma_conn_req *req = NULL;
	ck_assert_int_eq(rpma_conn_req_new(peer, API_LOCAL_ADDR, port, NULL,
			&req), 0);
	struct rpma_conn *conn = (void *)0x77;
	arm(_i);
	int ret = rpma_conn_req_connect(&req, NULL, &conn);
	check_result(_i, ret, disarm(), 1);
	ck_assert_ptr_null(req);	/* consumed either way */
	if (ret == 0)
		ck_assert_int_eq(rpma_conn_delete(&conn), 0);
	else
		ck_assert_ptr_eq(conn, (void *)0x77);
	(void) rpma_peer_delete(&peer);
}
END_TEST

START_TEST(conn_next_event)
{
	/* a connection with an event waiting: nobody listens there */
	struct rpma_peer *peer = api_peer();
	char port[16];
	api_free_port(port);
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	ck_assert_int_eq(rpma_conn_req_new(peer, API_LOCAL_ADDR, port, NULL,
			&req), 0);
	ck_assert_int_eq(rpma_conn_req_connect(&req, NULL, &conn), 0);
	int fd;
	ck_assert_int_eq(rpma_conn_get_event_fd(conn, &fd), 0);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ck_assert_int_eq(poll(&pfd, 1, API_TEST_TIMEOUT * 1000), 1);

	enum rpma_conn_event ev = (enum rpma_conn_event)77;
	arm(_i);
	int ret = rpma_conn_next_event(conn, &ev);
	check_result(_i, ret, disarm(), 1);
	if (ret == 0)
		ck_assert_int_eq(ev, RPMA_CONN_REJECTED);
	(void) rpma_conn_delete(&conn);
	(void) rpma_peer_delete(&peer);
}
END_TEST

/*
 * An allocation that fails before a request was even sent leaves the
 * session to rpmad alone: objects made earlier keep working.
 */
START_TEST(session_survives_nomem)
{
	struct rpma_peer *peer = api_peer();
	struct ibv_context *ctx = NULL;
	arm(0);
	ck_assert_int_eq(rpma_utils_get_ibv_context(API_LOCAL_ADDR,
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), RPMA_E_NOMEM);
	ck_assert(disarm());

	struct rpma_mr_local *mr = NULL;
	ck_assert_int_eq(rpma_mr_reg(peer, api_buf(4096), 4096,
			RPMA_MR_USAGE_READ_SRC, &mr), 0);
	ck_assert_int_eq(rpma_mr_dereg(&mr), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_no_daemon[] = { cfg_objects, mr_remote, NULL };
	const struct th_test tc_daemon[] = { TH_LOOP(get_ibv_context, 0, SWEEP),
		TH_LOOP(peer_new, 0, SWEEP), TH_LOOP(mr_reg, 0, SWEEP),
		TH_LOOP(ep_listen, 0, SWEEP), TH_LOOP(conn_req_new, 0, SWEEP),
		TH_LOOP(srq_new, 0, SWEEP),
		TH_LOOP(conn_req_new_shared_channel, 0, SWEEP),
		TH_LOOP(conn_req_connect, 0, SWEEP),
		TH_LOOP(conn_next_event, 0, SWEEP),
		TH_TEST(session_survives_nomem), TH_END };
	const struct th_tcase tcases[] = {
		{ "no_daemon", .tests = tc_no_daemon },
		{ "daemon", .steps = tc_daemon, .create = api_tcase_shared },
	};
	return api_run(th_suite("api_nomem", tcases, TH_N(tcases)));
}

#else /* NOMEM_UNSUPPORTED */

int
main(void)
{
	printf("allocation failures cannot be injected under "
			"AddressSanitizer: skipped\n");
	return 77;
}

#endif
