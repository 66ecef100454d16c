// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_api_ops.c -- posting: rpma_read, rpma_write, rpma_write_with_imm,
 * rpma_write_atomic, rpma_flush, rpma_send, rpma_send_with_imm, rpma_recv:
 * argument rules, flush types the remote side does not support, full
 * queues and closed connections
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "api_helpers.h"

#define BUF_SIZE 8192
#define TOO_LONG ((size_t)UINT32_MAX + 1)
#define ALWAYS RPMA_F_COMPLETION_ALWAYS
#define ON_ERROR RPMA_F_COMPLETION_ON_ERROR

/* env_open with the target registration at `target` */
static void
env_open_at(struct api_rma *e, const struct rpma_conn_cfg *cfg, void *target,
		int remote_usage)
{
	api_rma_open(e, cfg, target, BUF_SIZE, remote_usage);
}

static void
env_open(struct api_rma *e, const struct rpma_conn_cfg *cfg, int remote_usage)
{
	env_open_at(e, cfg, api_buf(BUF_SIZE), remote_usage);
}

/*
 * BUF_SIZE bytes of a file of the build tree, mapped shared: memory rpmad
 * can make persistent (on the software transport, by msync), where the
 * scratch directory might be tmpfs
 */
static void *
file_buf(void)
{
	const char *dir = getenv("TOP_BUILDDIR");
	char path[512];
	(void) snprintf(path, sizeof(path), "%s/test_api_ops.XXXXXX",
			dir && *dir ? dir : ".");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(ftruncate(fd, BUF_SIZE), 0);
	void *p = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	(void) close(fd);
	return p;
}

static struct rpma_conn_cfg *
cfg_with(uint32_t sq, uint32_t rq)
{
	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_sq_size(cfg, sq), 0);
	ck_assert_int_eq(rpma_conn_cfg_set_rq_size(cfg, rq), 0);
	return cfg;
}

/* ------------------------------------ read, write, write with imm */

/* The three share one shape: (conn, local, loff, remote, roff, len, flags). */
typedef int rma_fn(struct rpma_conn *, struct rpma_mr_local *, size_t,
		struct rpma_mr_remote *, size_t, size_t, int);

static int
do_read(struct rpma_conn *c, struct rpma_mr_local *l, size_t lo,
		struct rpma_mr_remote *r, size_t ro, size_t len, int flags)
{
	return rpma_read(c, l, lo, r, ro, len, flags, NULL);
}

static int
do_write(struct rpma_conn *c, struct rpma_mr_local *l, size_t lo,
		struct rpma_mr_remote *r, size_t ro, size_t len, int flags)
{
	return rpma_write(c, r, ro, l, lo, len, flags, NULL);
}

static int
do_write_imm(struct rpma_conn *c, struct rpma_mr_local *l, size_t lo,
		struct rpma_mr_remote *r, size_t ro, size_t len, int flags)
{
	return rpma_write_with_imm(c, r, ro, l, lo, len, flags, 0x1234, NULL);
}

static rma_fn *const rma_ops[] = { do_read, do_write, do_write_imm };

START_TEST(rma_args)
{
	rma_fn *op = rma_ops[_i];
	struct api_rma e;
	env_open(&e, NULL, 0xff);
	struct rpma_conn *c = e.p.client;

	ck_assert_int_eq(op(NULL, e.local, 0, e.remote, 0, 8, ALWAYS),
			RPMA_E_INVAL);
	ck_assert_int_eq(op(c, e.local, 0, e.remote, 0, 8, 0), RPMA_E_INVAL);
	ck_assert_int_eq(op(c, e.local, 0, e.remote, 0, 8, 1 << 2),
			RPMA_E_INVAL);
	/* one registration without the other */
	ck_assert_int_eq(op(c, NULL, 0, e.remote, 0, 0, ALWAYS),
			RPMA_E_INVAL);
	ck_assert_int_eq(op(c, e.local, 0, NULL, 0, 0, ALWAYS),
			RPMA_E_INVAL);
	/* none, but something to move */
	ck_assert_int_eq(op(c, NULL, 0, NULL, 0, 1, ALWAYS), RPMA_E_INVAL);
	ck_assert_int_eq(op(c, NULL, 1, NULL, 0, 0, ALWAYS), RPMA_E_INVAL);
	ck_assert_int_eq(op(c, NULL, 0, NULL, 1, 0, ALWAYS), RPMA_E_INVAL);
	/* more than one operation can carry */
	ck_assert_int_eq(op(c, e.local, 0, e.remote, 0, TOO_LONG, ALWAYS),
			RPMA_E_INVAL);

	api_rma_close(&e);
}
END_TEST

START_TEST(write_atomic_args)
{
	struct api_rma e;
	env_open(&e, NULL, 0xff);
	struct rpma_conn *c = e.p.client;

	ck_assert_int_eq(rpma_write_atomic(NULL, e.remote, 0, e.local, 0,
			ALWAYS, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_write_atomic(c, NULL, 0, e.local, 0, ALWAYS,
			NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_write_atomic(c, e.remote, 0, NULL, 0, ALWAYS,
			NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_write_atomic(c, e.remote, 0, e.local, 0, 0,
			NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_write_atomic(c, e.remote, 0, e.local, 0, 1 << 2,
			NULL), RPMA_E_INVAL);
	for (size_t off = 1; off < RPMA_ATOMIC_WRITE_ALIGNMENT; off++)
		ck_assert_int_eq(rpma_write_atomic(c, e.remote, off, e.local,
				0, ALWAYS, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(RPMA_ATOMIC_WRITE_ALIGNMENT, 8);

	api_rma_close(&e);
}
END_TEST

START_TEST(flush_args)
{
	struct api_rma e;
	env_open(&e, NULL, 0xff);
	struct rpma_conn *c = e.p.client;
	const enum rpma_flush_type vis = RPMA_FLUSH_TYPE_VISIBILITY;

	ck_assert_int_eq(RPMA_FLUSH_TYPE_PERSISTENT, 0);
	ck_assert_int_eq(RPMA_FLUSH_TYPE_VISIBILITY, 1);
	ck_assert_int_eq(rpma_flush(NULL, e.remote, 0, 8, vis, ALWAYS, NULL),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_flush(c, NULL, 0, 8, vis, ALWAYS, NULL),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8, vis, 0, NULL),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8, vis, 1 << 2, NULL),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8,
			(enum rpma_flush_type)2, ALWAYS, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8,
			(enum rpma_flush_type)-1, ALWAYS, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, TOO_LONG, vis, ALWAYS,
			NULL), RPMA_E_INVAL);

	api_rma_close(&e);
}
END_TEST

/*
 * RPMA_E_NOSUPP: a persistent flush needs the remote peer's direct write
 * to pmem (applied to the connection) and a remote registration with
 * RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, which rpmad grants only to memory
 * it can make persistent (a file's; anonymous memory gets a visibility
 * flush instead); a visibility flush needs a flush usage of either kind.
 */
START_TEST(flush_not_supported)
{
	const enum rpma_flush_type per = RPMA_FLUSH_TYPE_PERSISTENT;
	const enum rpma_flush_type vis = RPMA_FLUSH_TYPE_VISIBILITY;
	struct rpma_peer_cfg *direct = NULL;
	ck_assert_int_eq(rpma_peer_cfg_new(&direct), 0);
	ck_assert_int_eq(rpma_peer_cfg_set_direct_write_to_pmem(direct, true),
			0);

	/* a region without any flush usage */
	struct api_rma e;
	env_open(&e, NULL, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC);
	struct rpma_conn *c = e.p.client;
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8, per, ALWAYS, NULL),
			RPMA_E_NOSUPP);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8, vis, ALWAYS, NULL),
			RPMA_E_NOSUPP);
	ck_assert_int_eq(rpma_conn_apply_remote_peer_cfg(c, direct), 0);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8, per, ALWAYS, NULL),
			RPMA_E_NOSUPP);
	api_rma_close(&e);

	/* a region with the visibility usage only */
	env_open(&e, NULL, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	c = e.p.client;
	ck_assert_int_eq(rpma_conn_apply_remote_peer_cfg(c, direct), 0);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8, per, ALWAYS, NULL),
			RPMA_E_NOSUPP);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8, vis, ON_ERROR, NULL),
			0);
	api_rma_close(&e);

	/* a persistent region, but no direct write declared */
	env_open_at(&e, NULL, file_buf(), RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	c = e.p.client;
	struct rpma_peer_cfg *plain = NULL;
	ck_assert_int_eq(rpma_peer_cfg_new(&plain), 0);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8, per, ALWAYS, NULL),
			RPMA_E_NOSUPP);
	ck_assert_int_eq(rpma_conn_apply_remote_peer_cfg(c, plain), 0);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8, per, ALWAYS, NULL),
			RPMA_E_NOSUPP);
	/* declared: both kinds go (persistence implies visibility) */
	ck_assert_int_eq(rpma_conn_apply_remote_peer_cfg(c, direct), 0);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8, per, ON_ERROR, NULL),
			0);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8, vis, ON_ERROR, NULL),
			0);
	api_rma_close(&e);

	/* anonymous memory: persistent asked, a visibility flush granted */
	env_open(&e, NULL, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	c = e.p.client;
	int ftype = 0;
	ck_assert_int_eq(rpma_mr_remote_get_flush_type(e.remote, &ftype), 0);
	ck_assert_int_eq(ftype, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	ck_assert_int_eq(rpma_conn_apply_remote_peer_cfg(c, direct), 0);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8, per, ALWAYS, NULL),
			RPMA_E_NOSUPP);
	ck_assert_int_eq(rpma_flush(c, e.remote, 0, 8, vis, ON_ERROR, NULL),
			0);
	api_rma_close(&e);

	ck_assert_int_eq(rpma_peer_cfg_delete(&plain), 0);
	ck_assert_int_eq(rpma_peer_cfg_delete(&direct), 0);
}
END_TEST

/* ----------------------------------------------------- messaging */

typedef int send_fn(struct rpma_conn *, const struct rpma_mr_local *,
		size_t, size_t, int);

static int
do_send(struct rpma_conn *c, const struct rpma_mr_local *src, size_t off,
		size_t len, int flags)
{
	return rpma_send(c, src, off, len, flags, NULL);
}

static int
do_send_imm(struct rpma_conn *c, const struct rpma_mr_local *src, size_t off,
		size_t len, int flags)
{
	return rpma_send_with_imm(c, src, off, len, flags, 7, NULL);
}

static send_fn *const send_ops[] = { do_send, do_send_imm };

START_TEST(send_args)
{
	send_fn *op = send_ops[_i];
	struct api_rma e;
	env_open(&e, NULL, 0xff);
	struct rpma_conn *c = e.p.client;

	ck_assert_int_eq(op(NULL, e.local, 0, 8, ALWAYS), RPMA_E_INVAL);
	ck_assert_int_eq(op(c, e.local, 0, 8, 0), RPMA_E_INVAL);
	ck_assert_int_eq(op(c, e.local, 0, 8, 1 << 2), RPMA_E_INVAL);
	ck_assert_int_eq(op(c, NULL, 1, 0, ALWAYS), RPMA_E_INVAL);
	ck_assert_int_eq(op(c, NULL, 0, 1, ALWAYS), RPMA_E_INVAL);
	ck_assert_int_eq(op(c, e.local, 0, TOO_LONG, ALWAYS), RPMA_E_INVAL);

	api_rma_close(&e);
}
END_TEST

START_TEST(recv_args)
{
	struct api_rma e;
	env_open(&e, NULL, 0xff);
	struct rpma_conn *c = e.p.server;

	ck_assert_int_eq(rpma_recv(NULL, e.local, 0, 8, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_recv(c, NULL, 1, 0, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_recv(c, NULL, 0, 1, NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_recv(c, e.local, 0, TOO_LONG, NULL),
			RPMA_E_INVAL);
	/* a buffer, or none for a 0-byte message */
	ck_assert_int_eq(rpma_recv(c, e.local, 0, 8, NULL), 0);
	ck_assert_int_eq(rpma_recv(c, NULL, 0, 0, (void *)0x1), 0);

	api_rma_close(&e);
}
END_TEST

/* ------------------------------------------------ RPMA_E_PROVIDER */

/* Every kind of send-queue work, posted to a full SQ. */
static void
post_all_fail(struct api_rma *e, struct rpma_conn *c)
{
	ck_assert_int_eq(rpma_read(c, e->local, 0, e->remote, 0, 8, ALWAYS,
			NULL), RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_write(c, e->remote, 0, e->local, 0, 8, ALWAYS,
			NULL), RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_write_with_imm(c, e->remote, 0, e->local, 0, 8,
			ALWAYS, 1, NULL), RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_write_atomic(c, e->remote, 0, e->local, 0,
			ALWAYS, NULL), RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_flush(c, e->remote, 0, 8,
			RPMA_FLUSH_TYPE_VISIBILITY, ALWAYS, NULL),
			RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_send(c, e->local, 0, 8, ALWAYS, NULL),
			RPMA_E_PROVIDER);
	ck_assert_int_eq(rpma_send_with_imm(c, e->local, 0, 8, ALWAYS, 1,
			NULL), RPMA_E_PROVIDER);
}

/*
 * An unsignaled write keeps its SQ slot until a later completion is
 * collected: with an SQ of 1 nothing more can be posted.
 */
START_TEST(sq_full)
{
	struct rpma_conn_cfg *cfg = cfg_with(1, 1);
	struct api_rma e;
	env_open(&e, cfg, 0xff);
	struct rpma_conn *c = e.p.client;

	ck_assert_int_eq(rpma_write(c, e.remote, 0, e.local, 0, 8, ON_ERROR,
			NULL), 0);
	ck_assert_int_eq(th_log_capture(), 0);
	post_all_fail(&e, c);
	ck_assert_ptr_nonnull(th_log_find("full"));

	api_rma_close(&e);
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
}
END_TEST

START_TEST(rq_full)
{
	struct rpma_conn_cfg *cfg = cfg_with(1, 2);
	struct api_rma e;
	env_open(&e, cfg, 0xff);
	struct rpma_conn *c = e.p.server;

	ck_assert_int_eq(rpma_recv(c, e.local, 0, 8, NULL), 0);
	ck_assert_int_eq(rpma_recv(c, e.local, 8, 8, NULL), 0);
	ck_assert_int_eq(rpma_recv(c, e.local, 16, 8, NULL), RPMA_E_PROVIDER);

	api_rma_close(&e);
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
}
END_TEST

/* Nothing can be posted to a closed connection. */
START_TEST(closed_connection)
{
	struct api_rma e;
	env_open(&e, NULL, 0xff);
	struct rpma_conn *c = e.p.client;
	enum rpma_conn_event ev;

	ck_assert_int_eq(rpma_conn_disconnect(c), 0);
	ck_assert_int_eq(rpma_conn_next_event(c, &ev), 0);
	ck_assert_int_eq(ev, RPMA_CONN_CLOSED);
	ck_assert_int_eq(rpma_conn_next_event(e.p.server, &ev), 0);
	ck_assert_int_eq(ev, RPMA_CONN_CLOSED);

	post_all_fail(&e, c);
	post_all_fail(&e, e.p.server);
	ck_assert_int_eq(rpma_recv(c, e.local, 0, 8, NULL), RPMA_E_PROVIDER);

	ck_assert_int_eq(rpma_conn_disconnect(e.p.server), 0);
	api_rma_delete(&e);
}
END_TEST

int
main(void)
{
	const struct th_test tc_args[] = {
		TH_LOOP(rma_args, 0, sizeof(rma_ops) / sizeof(rma_ops[0])),
		TH_TEST(write_atomic_args), TH_TEST(flush_args),
		TH_TEST(flush_not_supported),
		TH_LOOP(send_args, 0, sizeof(send_ops) / sizeof(send_ops[0])),
		TH_TEST(recv_args), TH_TEST(sq_full), TH_TEST(rq_full),
		TH_TEST(closed_connection), TH_END
	};
	const struct th_tcase tcases[] = {
		{ "args", .steps = tc_args, .create = api_tcase_shared },
	};
	return api_run(th_suite("api_ops", tcases, TH_N(tcases)));
}
