// SPDX-License-Identifier: BSD-3-Clause
/*
 * api_helpers.c -- daemon fixtures, a connected pair, log capture
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "api_helpers.h"
#include "th_suite.h"
#include "th_wait.h"

/* ------------------------------------------------------------- daemon */

static struct test_daemon daemon_state;
static int daemon_started;

static void
start_with_config(const char *text)
{
	daemon_started = test_daemon_start_opts(&daemon_state,
					 &(struct test_daemon_opts){
							 .config = text }) == 0;
	if (!daemon_started)
		fprintf(stderr, "cannot start rpmad (RPMAD_BIN=%s)\n",
				getenv("RPMAD_BIN") ? getenv("RPMAD_BIN") : "");
}

void
api_daemon_setup(void)
{
	start_with_config(NULL);
}

void
api_daemon_setup_limited(void)
{
	start_with_config("max_endpoints = 1\n"
			"max_connections = 1\n"
			"max_registered_bytes = 64K\n");
}

void
api_daemon_teardown(void)
{
	if (daemon_started) {
		int status = test_daemon_stop(&daemon_state);
		/* a sanitizer report or a crash at exit shows up here */
		if (status != 0)
			fprintf(stderr, "rpmad exited with status 0x%x\n",
					status);
	}
	daemon_started = 0;
}

struct test_daemon *
api_daemon(void)
{
	ck_assert_msg(daemon_started, "rpmad did not start");
	return &daemon_state;
}

/* ------------------------------------------------------- device, peer */

struct ibv_context *
api_ctx(void)
{
	(void) api_daemon();
	struct ibv_context *ctx = NULL;
	ck_assert_int_eq(rpma_utils_get_ibv_context(API_LOCAL_ADDR,
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	ck_assert_ptr_nonnull(ctx);
	return ctx;
}

struct rpma_peer *
api_peer(void)
{
	struct rpma_peer *peer = NULL;
	ck_assert_int_eq(rpma_peer_new(api_ctx(), &peer), 0);
	ck_assert_ptr_nonnull(peer);
	return peer;
}

void
api_free_port(char port[16])
{
	ck_assert_int_eq(it_free_port(port, 16), 0);
}

void *
api_buf(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	return p;
}

void
api_set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	ck_assert_int_ge(flags, 0);
	ck_assert_int_eq(fcntl(fd, F_SETFL, flags | O_NONBLOCK), 0);
}

void
api_set_block(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	ck_assert_int_ge(flags, 0);
	ck_assert_int_eq(fcntl(fd, F_SETFL, flags & ~O_NONBLOCK), 0);
}

/* ---------------------------------------------------------------- pair */

/* Waits (bounded by the test's timeout) for the next event of conn. */
static enum rpma_conn_event
next_event(struct rpma_conn *conn)
{
	int fd = -1;
	ck_assert_int_eq(rpma_conn_get_event_fd(conn, &fd), 0);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ck_assert_int_eq(poll(&pfd, 1, API_TEST_TIMEOUT * 1000), 1);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	ck_assert_int_eq(rpma_conn_next_event(conn, &ev), 0);
	return ev;
}

void
api_pair_request(struct api_pair *p, const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata)
{
	memset(p, 0, sizeof(*p));
	p->peer = api_peer();
	api_free_port(p->port);
	ck_assert_int_eq(rpma_ep_listen(p->peer, API_LOCAL_ADDR, p->port,
			&p->ep), 0);

	struct rpma_conn_req *creq = NULL;
	ck_assert_int_eq(rpma_conn_req_new(p->peer, API_LOCAL_ADDR, p->port,
			cfg, &creq), 0);
	ck_assert_int_eq(rpma_conn_req_connect(&creq, pdata, &p->client), 0);
}

void
api_pair_connect(struct api_pair *p, const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata)
{
	api_pair_request(p, cfg, pdata);
	struct rpma_conn_req *sreq = NULL;
	ck_assert_int_eq(rpma_ep_next_conn_req(p->ep, cfg, &sreq), 0);
	ck_assert_int_eq(rpma_conn_req_connect(&sreq, NULL, &p->server), 0);

	ck_assert_int_eq(next_event(p->client), RPMA_CONN_ESTABLISHED);
	ck_assert_int_eq(next_event(p->server), RPMA_CONN_ESTABLISHED);
}

void
api_pair_close(struct api_pair *p)
{
	ck_assert_int_eq(rpma_conn_disconnect(p->client), 0);
	ck_assert_int_eq(next_event(p->client), RPMA_CONN_CLOSED);
	ck_assert_int_eq(next_event(p->server), RPMA_CONN_CLOSED);
	ck_assert_int_eq(rpma_conn_disconnect(p->server), 0);
	api_pair_delete(p);
}

void
api_pair_delete(struct api_pair *p)
{
	ck_assert_int_eq(rpma_conn_delete(&p->client), 0);
	ck_assert_int_eq(rpma_conn_delete(&p->server), 0);
	ck_assert_int_eq(rpma_ep_shutdown(&p->ep), 0);
	ck_assert_int_eq(rpma_peer_delete(&p->peer), 0);
}

/* ----------------------------------------------------- registrations */

void
api_rma_open(struct api_rma *e, const struct rpma_conn_cfg *cfg, void *target,
		size_t size, int usage)
{
	api_pair_connect(&e->p, cfg, NULL);
	ck_assert_int_eq(rpma_mr_reg(e->p.peer, api_buf(size), size, 0xff,
					 &e->local),
			0);
	ck_assert_int_eq(rpma_mr_reg(e->p.peer, target, size, usage,
					 &e->target),
			0);
	uint8_t desc[21];
	ck_assert_int_eq(rpma_mr_get_descriptor(e->target, desc), 0);
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, sizeof(desc),
					 &e->remote),
			0);
}

/* registrations go first: the peer cannot go while they exist */
static void
rma_dereg(struct api_rma *e)
{
	ck_assert_int_eq(rpma_mr_remote_delete(&e->remote), 0);
	ck_assert_int_eq(rpma_mr_dereg(&e->target), 0);
	ck_assert_int_eq(rpma_mr_dereg(&e->local), 0);
}

void
api_rma_close(struct api_rma *e)
{
	rma_dereg(e);
	api_pair_close(&e->p);
}

void
api_rma_delete(struct api_rma *e)
{
	rma_dereg(e);
	api_pair_delete(&e->p);
}

TCase *
api_tcase_create(const char *name, enum api_daemon_kind daemon)
{
	TCase *tc = tcase_create(name);
	switch (daemon) {
	case API_NO_DAEMON:
		break;
	case API_SHARED_DAEMON:
		tcase_add_unchecked_fixture(tc, api_daemon_setup,
				api_daemon_teardown);
		break;
	case API_LIMITED_DAEMON:
		tcase_add_unchecked_fixture(tc, api_daemon_setup_limited,
				api_daemon_teardown);
		break;
	case API_OWN_DAEMON:
		tcase_add_checked_fixture(tc, api_daemon_setup,
				api_daemon_teardown);
		break;
	}
	tcase_set_timeout(tc, API_TEST_TIMEOUT);
	return tc;
}

TCase *
api_tcase_none(const char *name)
{
	return api_tcase_create(name, API_NO_DAEMON);
}

TCase *
api_tcase_shared(const char *name)
{
	return api_tcase_create(name, API_SHARED_DAEMON);
}

TCase *
api_tcase_limited(const char *name)
{
	return api_tcase_create(name, API_LIMITED_DAEMON);
}

TCase *
api_tcase_own(const char *name)
{
	return api_tcase_create(name, API_OWN_DAEMON);
}

int
api_run(Suite *s)
{
	/* one process per test: the library's one control connection each */
	return check_run_forked(s, CK_NORMAL);
}
