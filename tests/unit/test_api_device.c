// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_api_device.c -- rpma_utils_get_ibv_context,
 * rpma_utils_ibv_context_is_odp_capable, rpma_peer_new, rpma_peer_delete:
 * against a real rpmad, without one, and after it went away
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api_helpers.h"

#define UNTOUCHED_CTX ((struct ibv_context *)(uintptr_t)0x5a5a5a5a)
#define UNTOUCHED_PEER ((struct rpma_peer *)(uintptr_t)0x5a5a5a5a)

/* ---------------------------------------------------------- with rpmad */

START_TEST(get_ibv_context_args)
{
	struct ibv_context *ctx = UNTOUCHED_CTX;
	ck_assert_int_eq(rpma_utils_get_ibv_context(NULL,
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_utils_get_ibv_context(API_LOCAL_ADDR,
			RPMA_UTIL_IBV_CONTEXT_LOCAL, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_utils_get_ibv_context(API_LOCAL_ADDR,
			(enum rpma_util_ibv_context_type)2, &ctx),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_utils_get_ibv_context(API_LOCAL_ADDR,
			(enum rpma_util_ibv_context_type)-1, &ctx),
			RPMA_E_INVAL);
	ck_assert_ptr_eq(ctx, UNTOUCHED_CTX);
}
END_TEST

START_TEST(get_ibv_context_local_and_remote)
{
	(void) api_daemon();
	struct ibv_context *local = NULL, *remote = NULL, *again = NULL;
	ck_assert_int_eq(rpma_utils_get_ibv_context(API_LOCAL_ADDR,
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &local), 0);
	ck_assert_ptr_nonnull(local);
	ck_assert_int_eq(rpma_utils_get_ibv_context(API_LOCAL_ADDR,
			RPMA_UTIL_IBV_CONTEXT_REMOTE, &remote), 0);
	ck_assert_ptr_nonnull(remote);
	/* one device serves both: the same context, as verbs would give */
	ck_assert_ptr_eq(local, remote);
	ck_assert_int_eq(rpma_utils_get_ibv_context(API_LOCAL_ADDR,
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &again), 0);
	ck_assert_ptr_eq(local, again);
	/* applications may ask for the device's name */
	ck_assert_ptr_nonnull(local->device);
	ck_assert_int_ne(local->device->name[0], '\0');
}
END_TEST

START_TEST(get_ibv_context_not_local)
{
	(void) api_daemon();
	ck_assert_int_eq(th_log_capture(), 0);
	struct ibv_context *ctx = UNTOUCHED_CTX;
	ck_assert_int_eq(rpma_utils_get_ibv_context(API_FOREIGN_ADDR,
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), RPMA_E_PROVIDER);
	ck_assert_ptr_eq(ctx, UNTOUCHED_CTX);
	/* the daemon's reason reaches the log */
	const struct th_log_entry *e = th_log_find(API_FOREIGN_ADDR);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->level, RPMA_LOG_LEVEL_ERROR);
	ck_assert_ptr_nonnull(strstr(e->msg, "rpmad"));
}
END_TEST

START_TEST(get_ibv_context_unresolvable)
{
	(void) api_daemon();
	struct ibv_context *ctx = UNTOUCHED_CTX;
	ck_assert_int_eq(rpma_utils_get_ibv_context(API_UNRESOLVABLE,
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_utils_get_ibv_context(API_UNRESOLVABLE,
			RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx), RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_utils_get_ibv_context("300.1.2.3",
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), RPMA_E_PROVIDER);
	ck_assert_ptr_eq(ctx, UNTOUCHED_CTX);
	/* an empty address is refused by rpmad as no address at all */
	ck_assert_int_eq(rpma_utils_get_ibv_context("",
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), RPMA_E_INVAL);
	ck_assert_ptr_eq(ctx, UNTOUCHED_CTX);
}
END_TEST

START_TEST(odp_capable)
{
	struct ibv_context *ctx = api_ctx();
	int odp = 77;
	ck_assert_int_eq(rpma_utils_ibv_context_is_odp_capable(NULL, &odp),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_utils_ibv_context_is_odp_capable(ctx, NULL),
			RPMA_E_INVAL);
	/* a context that rpma_utils_get_ibv_context() did not hand out */
	struct ibv_context foreign;
	memset(&foreign, 0, sizeof(foreign));
	ck_assert_int_eq(rpma_utils_ibv_context_is_odp_capable(&foreign,
			&odp), RPMA_E_INVAL);
	ck_assert_int_eq(odp, 77);

	ck_assert_int_eq(rpma_utils_ibv_context_is_odp_capable(ctx, &odp), 0);
	/* the software device has no on-demand paging */
	ck_assert_int_eq(odp, 0);
}
END_TEST

START_TEST(peer_new_args)
{
	struct ibv_context *ctx = api_ctx();
	struct rpma_peer *peer = UNTOUCHED_PEER;
	ck_assert_int_eq(rpma_peer_new(NULL, &peer), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_peer_new(ctx, NULL), RPMA_E_INVAL);
	struct ibv_context foreign;
	memset(&foreign, 0, sizeof(foreign));
	ck_assert_int_eq(rpma_peer_new(&foreign, &peer), RPMA_E_INVAL);
	ck_assert_ptr_eq(peer, UNTOUCHED_PEER);
}
END_TEST

START_TEST(peer_new_delete)
{
	struct ibv_context *ctx = api_ctx();
	struct rpma_peer *a = NULL, *b = NULL;
	ck_assert_int_eq(rpma_peer_new(ctx, &a), 0);
	ck_assert_int_eq(rpma_peer_new(ctx, &b), 0);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_ne(a, b);

	ck_assert_int_eq(rpma_peer_delete(NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_peer_delete(&a), 0);
	ck_assert_ptr_null(a);
	ck_assert_int_eq(rpma_peer_delete(&a), 0);	/* *peer_ptr NULL */
	ck_assert_int_eq(rpma_peer_delete(&b), 0);
}
END_TEST

/* A peer still used by a registration or an endpoint cannot go. */
START_TEST(peer_delete_in_use)
{
	struct rpma_peer *peer = api_peer();
	char *buf = api_buf(8192);
	struct rpma_mr_local *mr = NULL;
	ck_assert_int_eq(rpma_mr_reg(peer, buf, (8192),
			RPMA_MR_USAGE_READ_SRC, &mr), 0);

	struct rpma_peer *p = peer;
	ck_assert_int_eq(rpma_peer_delete(&p), RPMA_E_PROVIDER);
	ck_assert_ptr_eq(p, peer);	/* not set to NULL on failure */
	ck_assert_int_eq(rpma_mr_dereg(&mr), 0);

	char port[16];
	api_free_port(port);
	struct rpma_ep *ep = NULL;
	ck_assert_int_eq(rpma_ep_listen(peer, API_LOCAL_ADDR, port, &ep), 0);
	ck_assert_int_eq(rpma_peer_delete(&p), RPMA_E_PROVIDER);
	ck_assert_ptr_eq(p, peer);
	ck_assert_int_eq(rpma_ep_shutdown(&ep), 0);

	ck_assert_int_eq(rpma_peer_delete(&p), 0);
	ck_assert_ptr_null(p);
}
END_TEST

/* -------------------------------------------------------- no rpmad at all */

/* Reaching no rpmad at `path` fails at once and says where and why. */
static void
check_unreachable(const char *path, const char *why)
{
	(void) setenv("RPMAD_SOCKET", path, 1);
	ck_assert_int_eq(th_log_capture(), 0);

	struct ibv_context *ctx = UNTOUCHED_CTX;
	double t0 = (double) it_now_ms();
	int ret = rpma_utils_get_ibv_context(API_LOCAL_ADDR,
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx);
	double elapsed = (double) it_now_ms() - t0;

	ck_assert_int_eq(ret, RPMA_E_PROVIDER);
	ck_assert_ptr_eq(ctx, UNTOUCHED_CTX);
	/* a liveness bound (no waiting, no retrying), not a performance one */
	ck_assert_msg(elapsed < 1000.0, "took %.0f ms", elapsed);

	const struct th_log_entry *e = th_log_find(path);
	ck_assert_msg(e != NULL, "no log line names %s", path);
	ck_assert_msg(strstr(e->msg, why) != NULL, "\"%s\" lacks \"%s\"",
			e->msg, why);
	ck_assert_int_le(e->level, RPMA_LOG_LEVEL_ERROR);
}

START_TEST(no_rpmad_socket_missing)
{
	char dir[] = "/tmp/rpma-unit-nodaemon.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[128];
	(void) snprintf(path, sizeof(path), "%s/rpmad.sock", dir);

	check_unreachable(path, strerror(ENOENT));
	(void) rmdir(dir);
}
END_TEST

START_TEST(no_rpmad_socket_refuses)
{
	/* a socket file that nobody listens on (as after rpmad crashed) */
	char dir[] = "/tmp/rpma-unit-nodaemon.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[128];
	(void) snprintf(path, sizeof(path), "%s/rpmad.sock", dir);
	int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ck_assert_int_ge(s, 0);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	ck_assert_uint_lt(strlen(path), sizeof(sun.sun_path));
	memcpy(sun.sun_path, path, strlen(path) + 1);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sun, sizeof(sun)), 0);
	(void) close(s);

	check_unreachable(path, strerror(ECONNREFUSED));
	(void) unlink(path);
	(void) rmdir(dir);
}
END_TEST

START_TEST(no_rpmad_every_call_fails_fast)
{
	/* calls that start with rpmad all fail the same way, each quickly */
	(void) setenv("RPMAD_SOCKET", "/nonexistent/rpmad.sock", 1);
	for (int i = 0; i < 3; i++)
		check_unreachable("/nonexistent/rpmad.sock",
				strerror(ENOENT));
}
END_TEST

/* ------------------------------------------------------ rpmad went away */

START_TEST(rpmad_killed)
{
	struct test_daemon *d = api_daemon();
	struct ibv_context *ctx = api_ctx();
	struct rpma_peer *peer = api_peer();
	struct rpma_peer *idle = api_peer();
	char *buf = api_buf(4096);
	struct rpma_mr_local *mr = NULL;
	ck_assert_int_eq(rpma_mr_reg(peer, buf, (4096),
			RPMA_MR_USAGE_READ_SRC, &mr), 0);

	test_daemon_kill(d);

	/* objects of the ended session: new work fails ... */
	struct rpma_peer *p2 = UNTOUCHED_PEER;
	ck_assert_int_eq(rpma_peer_new(ctx, &p2), RPMA_E_PROVIDER);
	ck_assert_ptr_eq(p2, UNTOUCHED_PEER);
	struct rpma_mr_local *mr2 = NULL;
	ck_assert_int_eq(rpma_mr_reg(peer, buf, (4096),
			RPMA_MR_USAGE_READ_SRC, &mr2), RPMA_E_PROVIDER);
	ck_assert_ptr_null(mr2);

	ck_assert_int_eq(rpma_mr_advise(mr, 0, 4096,
			IBV_ADVISE_MR_ADVICE_PREFETCH, 0), RPMA_E_PROVIDER);

	/* ... deleting them just frees the library's side */
	ck_assert_int_eq(rpma_mr_dereg(&mr), 0);
	ck_assert_ptr_null(mr);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
	ck_assert_ptr_null(peer);
	ck_assert_int_eq(rpma_peer_delete(&idle), 0);

	/* the socket file stays behind: the refusal is reported at once */
	check_unreachable(d->socket, strerror(ECONNREFUSED));
}
END_TEST

/*
 * The first call after rpmad died (before the library noticed) must treat
 * an object delete like any later one: success, library side freed.
 */
START_TEST(rpmad_killed_delete_first)
{
	struct test_daemon *d = api_daemon();
	struct rpma_peer *peer = api_peer();
	test_daemon_kill(d);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
	ck_assert_ptr_null(peer);
}
END_TEST

START_TEST(rpmad_restarted)
{
	struct test_daemon *d = api_daemon();
	struct ibv_context *old_ctx = api_ctx();
	test_daemon_kill(d);
	(void) test_daemon_stop(d);

	struct test_daemon d2;
	ck_assert_int_eq(test_daemon_start(&d2, NULL), 0);

	/* a context of the old session works with the new rpmad */
	struct rpma_peer *peer = NULL;
	ck_assert_int_eq(rpma_peer_new(old_ctx, &peer), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);

	/* and a fresh one is the same */
	struct ibv_context *ctx = NULL;
	ck_assert_int_eq(rpma_utils_get_ibv_context(API_LOCAL_ADDR,
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	ck_assert_ptr_eq(ctx, old_ctx);
	ck_assert_int_eq(rpma_peer_new(ctx, &peer), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
	ck_assert_int_eq(test_daemon_stop(&d2), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_with_rpmad[] = { get_ibv_context_args,
		get_ibv_context_local_and_remote, get_ibv_context_not_local,
		get_ibv_context_unresolvable, odp_capable, peer_new_args,
		peer_new_delete, peer_delete_in_use, NULL };
	const TTest *const tc_no_rpmad[] = { no_rpmad_socket_missing,
		no_rpmad_socket_refuses, no_rpmad_every_call_fails_fast, NULL };
	const TTest *const tc_rpmad_gone[] = { rpmad_killed,
		rpmad_killed_delete_first, rpmad_restarted, NULL };
	const struct th_tcase tcases[] = {
		{ "with_rpmad", .tests = tc_with_rpmad,
				.create = api_tcase_shared },
		{ "no_rpmad", .tests = tc_no_rpmad, .create = api_tcase_none },
		/* these kill their rpmad: one of their own per test */
		{ "rpmad_gone", .tests = tc_rpmad_gone,
				.create = api_tcase_own },
	};
	return api_run(th_suite("api_device", tcases, TH_N(tcases)));
}
