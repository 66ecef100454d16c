// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_errors.c -- what goes wrong between two rpmads, and how: bad remote
 * keys, accesses out of bounds, wrong usage (IBV_WC_REM_ACCESS_ERR at the
 * initiator, nothing touched at the target, later work refused or
 * flushed); full send and receive queues (an error, never a hang or an
 * overwrite); a send that waits for a late receive, or for none
 */

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "th_suite.h"

enum { TAG_CHECK = 100, TAG_CHECKED, TAG_POST_RECV };

/* ==================================================== remote access */

enum access_case {
	BAD_RKEY_WRITE,		/* the descriptor's key corrupted */
	BAD_RKEY_READ,
	WRITE_ACROSS_END,	/* starts inside, ends beyond the registration */
	WRITE_BEYOND,		/* offset past the registration's end */
	READ_ACROSS_END,
	ATOMIC_BEYOND,
	FLUSH_BEYOND,
	WRITE_TO_READ_ONLY,	/* registered READ_SRC only */
	READ_FROM_WRITE_ONLY,	/* registered WRITE_DST only */
	ACCESS_CASES
};

/*
 * The server's buffer is three pages of a guard pattern; the registration
 * is REG_LEN bytes in the middle, not page aligned, so that rpmad maps
 * guard bytes too and must still leave them alone.
 */
#define GUARD_SIZE 12288
#define REG_OFF 4224
#define REG_LEN 2048
#define SEED_GUARD 90

static int
access_usage(enum access_case c)
{
	switch (c) {
	case WRITE_TO_READ_ONLY:
		return RPMA_MR_USAGE_READ_SRC;
	case READ_FROM_WRITE_ONLY:
		return RPMA_MR_USAGE_WRITE_DST;
	default:
		return RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
	}
}

static int
access_server(const struct it_env *env, void *arg)
{
	const enum access_case *c = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(GUARD_SIZE);
	it_fill(buf, GUARD_SIZE, SEED_GUARD);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(peer, buf + REG_OFF, REG_LEN, access_usage(*c),
			&mr));
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, NULL);

	(void) it_expect(TAG_CHECK, NULL, 0);
	long bad = it_check(buf, GUARD_SIZE, SEED_GUARD);
	IT_ASSERT_MSG(bad < 0, "byte %ld of the buffer changed (the "
			"registration is [%d, %d))", bad, REG_OFF,
			REG_OFF + REG_LEN);
	/* the target application sees no completion */
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	it_no_wc(cq, 0);
	IT_EQ(it_tell(IT_CLIENT, TAG_CHECKED, NULL, 0), 0);

	it_server_end(&conn, &mr, &ep, &peer, buf);
	return 0;
}

/* Posts the bad operation; returns the opcode its completion carries. */
static enum ibv_wc_opcode
post_bad(enum access_case c, struct rpma_conn *conn, struct rpma_mr_local *mr,
		struct rpma_mr_remote *rmr, void *ctx)
{
	/* COMPLETION_ON_ERROR must report the failure just as well */
	int flags = c == BAD_RKEY_WRITE ? RPMA_F_COMPLETION_ON_ERROR :
		RPMA_F_COMPLETION_ALWAYS;
	switch (c) {
	case BAD_RKEY_WRITE:
		IT_OK(rpma_write(conn, rmr, 0, mr, 0, 64, flags, ctx));
		return IBV_WC_RDMA_WRITE;
	case BAD_RKEY_READ:
	case READ_FROM_WRITE_ONLY:
		IT_OK(rpma_read(conn, mr, 0, rmr, 0, 64, flags, ctx));
		return IBV_WC_RDMA_READ;
	case WRITE_ACROSS_END:
		IT_OK(rpma_write(conn, rmr, REG_LEN - 32, mr, 0, 64, flags,
				ctx));
		return IBV_WC_RDMA_WRITE;
	case WRITE_BEYOND:
		IT_OK(rpma_write(conn, rmr, REG_LEN + 64, mr, 0, 16, flags,
				ctx));
		return IBV_WC_RDMA_WRITE;
	case READ_ACROSS_END:
		IT_OK(rpma_read(conn, mr, 0, rmr, REG_LEN - 8, 100, flags,
				ctx));
		return IBV_WC_RDMA_READ;
	case ATOMIC_BEYOND:
		IT_OK(rpma_write_atomic(conn, rmr, REG_LEN, mr, 0, flags, ctx));
		return IBV_WC_RDMA_WRITE;
	case FLUSH_BEYOND:
		IT_OK(rpma_flush(conn, rmr, REG_LEN + 4096, 64,
				RPMA_FLUSH_TYPE_VISIBILITY, flags, ctx));
		return IBV_WC_RDMA_READ;
	case WRITE_TO_READ_ONLY:
		/* no flush usage either: refused before it is posted */
		IT_ERR(RPMA_E_NOSUPP, rpma_flush(conn, rmr, 0, 64,
				RPMA_FLUSH_TYPE_VISIBILITY, flags, ctx));
		IT_OK(rpma_write(conn, rmr, 0, mr, 0, 64, flags, ctx));
		return IBV_WC_RDMA_WRITE;
	default:
		IT_ASSERT(0);
	}
	return IBV_WC_RDMA_WRITE;
}

static int
access_client(const struct it_env *env, void *arg)
{
	const enum access_case *c = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(4096);
	it_fill(buf, 4096, 91);
	struct rpma_mr_local *mr = IT_REG(peer, buf, 4096,
			RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	struct it_desc desc;
	it_expect_desc(&desc);
	if (*c == BAD_RKEY_WRITE || *c == BAD_RKEY_READ) {
		/* the key: little-endian u32 at byte 16 */
		for (int i = 16; i < 20; i++)
			desc.mr[i] ^= 0xa5;
	}
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);

	enum ibv_wc_opcode op = post_bad(*c, conn, mr, rmr, (void *)0x6001);
	struct ibv_wc wc;
	it_wc(cq, &wc);
	IT_EQ(wc.wr_id, 0x6001);
	IT_ASSERT_MSG(wc.status == IBV_WC_REM_ACCESS_ERR, "status %s, wanted "
			"REM_ACCESS_ERR", ibv_wc_status_str(wc.status));
	IT_EQ(wc.opcode, op);
	uint32_t qp_num = 0;
	IT_OK(rpma_conn_get_qp_num(conn, &qp_num));
	IT_EQ(wc.qp_num, qp_num);

	/* the queue pair is in error: later work is refused or flushed */
	int ret = rpma_read(conn, mr, 0, rmr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
			(void *)0x6002);
	if (ret == 0) {
		it_wc(cq, &wc);
		IT_EQ(wc.wr_id, 0x6002);
		IT_ASSERT_MSG(wc.status == IBV_WC_WR_FLUSH_ERR, "status %s, "
				"wanted WR_FLUSH_ERR",
				ibv_wc_status_str(wc.status));
	} else {
		IT_EQ(ret, RPMA_E_PROVIDER);
	}
	it_no_wc(cq, 20);

	IT_EQ(it_tell(IT_SERVER, TAG_CHECK, NULL, 0), 0);
	(void) it_expect(TAG_CHECKED, NULL, 0);
	it_client_end(&conn, &rmr, &mr, &peer, buf);
	return 0;
}

/*
 * _i: enum access_case, between two rpmads; then again with both sides on
 * one rpmad (which may take its shortcut and must check just the same)
 */
START_TEST(test_remote_access_error)
{
	enum access_case c = (enum access_case)(_i % ACCESS_CASES);
	it_pair_test(_i < ACCESS_CASES ? 2 : 1, access_server, access_client,
			&c);
}
END_TEST

/* ======================================================= full queues */

#define QDEPTH 4
#define SLOT(i) ((size_t)(i) * 8)

static int
queues_server(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint64_t *words = it_alloc(4096);
	uint8_t *sbuf = it_alloc(4096);
	struct rpma_mr_local *mr = NULL, *smr = NULL;
	IT_OK(rpma_mr_reg(peer, words, 4096, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr));
	IT_OK(rpma_mr_reg(peer, sbuf, 4096, RPMA_MR_USAGE_SEND, &smr));
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	it_send_desc(IT_CLIENT, mr, NULL);

	/* the client filled its receive queue: one message for it */
	(void) it_expect(IT_TAG_GO, NULL, 0);
	struct ibv_wc wc;
	IT_OK(rpma_send(conn, smr, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL));
	it_wc_ok(conn, cq, 0, IBV_WC_SEND, &wc);

	/*
	 * The client's last writes were unsignaled, and nothing after them
	 * could be posted: wait (bounded) until they landed.
	 */
	(void) it_expect(TAG_CHECK, NULL, 0);
	uint64_t end = it_now_ms() + IT_WAIT_MS;
	while (__atomic_load_n(&words[QDEPTH + 1], __ATOMIC_ACQUIRE) !=
			QDEPTH + 1 && it_now_ms() < end)
		it_sleep_ms(1);
	/* slots 0..QDEPTH-1 and QDEPTH+1 were written; the refused one not */
	for (int i = 0; i < 64; i++) {
		uint64_t want = i < QDEPTH ? (uint64_t)i + 100 :
			i == QDEPTH + 1 ? QDEPTH + 1 : 0;
		IT_ASSERT_MSG(words[i] == want, "word %d is %llu, wanted %llu",
				i, (unsigned long long)words[i],
				(unsigned long long)want);
	}
	IT_EQ(it_tell(IT_CLIENT, TAG_CHECKED, NULL, 0), 0);

	it_await_close(&conn);
	IT_OKS(rpma_mr_dereg(&smr), rpma_mr_dereg(&mr), rpma_ep_shutdown(&ep),
			rpma_peer_delete(&peer));
	free(sbuf);
	free(words);
	return 0;
}

static int
queues_client(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint64_t *src = it_alloc(4096);
	for (int i = 0; i < 64; i++)
		src[i] = (uint64_t)i + 100;
	src[QDEPTH + 1] = QDEPTH + 1;
	uint8_t *rbuf = it_alloc(4096);
	struct rpma_mr_local *mr = NULL, *rmr_local = NULL;
	IT_OK(rpma_mr_reg(peer, src, 4096, RPMA_MR_USAGE_WRITE_SRC, &mr));
	IT_OK(rpma_mr_reg(peer, rbuf, 4096, RPMA_MR_USAGE_RECV, &rmr_local));
	struct rpma_conn_cfg *cfg = NULL;
	IT_OK(rpma_conn_cfg_new(&cfg));
	IT_OK(rpma_conn_cfg_set_sq_size(cfg, QDEPTH));
	IT_OK(rpma_conn_cfg_set_rq_size(cfg, QDEPTH));
	struct rpma_conn *conn = it_connect(peer, env, cfg, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	struct it_desc desc;
	it_expect_desc(&desc);
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);
	struct ibv_wc wc;

	/* receive queue: QDEPTH fit, one more does not */
	for (int i = 0; i < QDEPTH; i++)
		IT_OK(rpma_recv(conn, rmr_local, (size_t)i * 8, 8,
				(void *)(uintptr_t)(0x7100 + i)));
	IT_ERR(RPMA_E_PROVIDER, rpma_recv(conn, rmr_local, 64, 8, NULL));
	/* one receive completes: its slot is free again */
	IT_EQ(it_tell(IT_SERVER, IT_TAG_GO, NULL, 0), 0);
	it_wc_ok(conn, cq, 0x7100, IBV_WC_RECV, &wc);
	IT_OK(rpma_recv(conn, rmr_local, 64, 8, (void *)0x7104));
	IT_ERR(RPMA_E_PROVIDER, rpma_recv(conn, rmr_local, 72, 8, NULL));

	/* send queue, signaled: full until a completion is collected */
	for (int i = 0; i < QDEPTH; i++)
		IT_OK(rpma_write(conn, rmr, SLOT(i), mr, SLOT(i), 8,
				RPMA_F_COMPLETION_ALWAYS,
				(void *)(uintptr_t)(0x7200 + i)));
	IT_ERR(RPMA_E_PROVIDER, rpma_write(conn, rmr, SLOT(QDEPTH), mr,
			SLOT(QDEPTH), 8, RPMA_F_COMPLETION_ALWAYS, NULL));
	for (int i = 0; i < QDEPTH; i++) {
		it_wc_ok(conn, cq, 0x7200 + (uint64_t)i, IBV_WC_RDMA_WRITE,
				&wc);
		if (i == 0) {
			/* one slot came free: it takes one write */
			IT_OK(rpma_write(conn, rmr, SLOT(0), mr, SLOT(0), 8,
					RPMA_F_COMPLETION_ALWAYS,
					(void *)0x7210));
			IT_ERR(RPMA_E_PROVIDER, rpma_write(conn, rmr,
					SLOT(QDEPTH), mr, SLOT(QDEPTH), 8,
					RPMA_F_COMPLETION_ALWAYS, NULL));
		}
	}
	it_wc_ok(conn, cq, 0x7210, IBV_WC_RDMA_WRITE, &wc);

	/*
	 * Unsignaled: their slots stay taken (nothing later completes), so
	 * the queue fills for good, as on an RDMA NIC.
	 */
	for (int i = 1; i < QDEPTH; i++)
		IT_OK(rpma_write(conn, rmr, SLOT(i), mr, SLOT(i), 8,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
	IT_OK(rpma_write(conn, rmr, SLOT(QDEPTH + 1), mr, SLOT(QDEPTH + 1), 8,
			RPMA_F_COMPLETION_ON_ERROR, NULL));
	IT_ERR(RPMA_E_PROVIDER, rpma_write(conn, rmr, SLOT(QDEPTH), mr,
			SLOT(QDEPTH), 8, RPMA_F_COMPLETION_ON_ERROR, NULL));
	it_no_wc(cq, 50);
	IT_ERR(RPMA_E_PROVIDER, rpma_write(conn, rmr, SLOT(QDEPTH), mr,
			SLOT(QDEPTH), 8, RPMA_F_COMPLETION_ALWAYS, NULL));
	IT_EQ(it_tell(IT_SERVER, TAG_CHECK, NULL, 0), 0);
	(void) it_expect(TAG_CHECKED, NULL, 0);

	it_close(&conn);
	IT_OKS(rpma_conn_cfg_delete(&cfg), rpma_mr_remote_delete(&rmr),
			rpma_mr_dereg(&rmr_local), rpma_mr_dereg(&mr),
			rpma_peer_delete(&peer));
	free(rbuf);
	free(src);
	return 0;
}

/* _i: 0 two rpmads, 1 one */
START_TEST(test_full_queues)
{
	it_pair_test(_i ? 1 : 2, queues_server, queues_client, NULL);
}
END_TEST

/* ================================================ receiver not ready */

/*
 * rpmad's RNR wait for these tests; the send that never finds a receive
 * fails after it. Long enough for the late receive (posted 300 ms after
 * the send) on a slow host, short enough to keep the test quick.
 */
#define RNR_CONFIG "rnr_timeout_ms = 2500\n"
#define RNR_LATE_MS 300

struct rnr_opts {
	int never;	/* the server never posts a receive */
};

static int
rnr_server(const struct it_env *env, void *arg)
{
	const struct rnr_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(4096);
	struct rpma_mr_local *mr = IT_REG(peer, buf, 4096, RPMA_MR_USAGE_RECV);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));

	if (!o->never) {
		(void) it_expect(TAG_POST_RECV, NULL, 0);
		IT_OK(rpma_recv(conn, mr, 0, 4096, (void *)0x8001));
		struct ibv_wc wc;
		it_wc_ok(conn, cq, 0x8001, IBV_WC_RECV, &wc);
		IT_EQ(wc.byte_len, 128);
		IT_EQ(it_check(buf, 128, 12), -1);
	}

	it_server_end(&conn, &mr, &ep, &peer, buf);
	return 0;
}

static int
rnr_client(const struct it_env *env, void *arg)
{
	const struct rnr_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(4096);
	it_fill(buf, 128, 12);
	struct rpma_mr_local *mr = IT_REG(peer, buf, 4096, RPMA_MR_USAGE_SEND);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));

	struct ibv_wc wc;
	IT_OK(rpma_send(conn, mr, 0, 128, RPMA_F_COMPLETION_ALWAYS,
			(void *)0x8101));
	if (o->never) {
		uint64_t start = it_now_ms();
		it_wc(cq, &wc);
		IT_EQ(wc.wr_id, 0x8101);
		IT_ASSERT_MSG(wc.status == IBV_WC_RNR_RETRY_EXC_ERR, "status "
				"%s after %llu ms", ibv_wc_status_str(wc.status),
				(unsigned long long)(it_now_ms() - start));
		it_close(&conn);
	} else {
		/* no receive yet: the send waits */
		it_no_wc(cq, RNR_LATE_MS);
		IT_EQ(it_tell(IT_SERVER, TAG_POST_RECV, NULL, 0), 0);
		it_wc_ok(conn, cq, 0x8101, IBV_WC_SEND, &wc);
		it_close(&conn);
	}
	IT_OK(rpma_mr_dereg(&mr));
	IT_OK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

/* _i: 0 the receive comes late, 1 it never comes; 2, 3 on one rpmad */
START_TEST(test_receiver_not_ready)
{
	struct rnr_opts o = { .never = _i % 2 };
	/*
	 * On RDMA, rpmad's queue pairs retry a receiver that is not ready
	 * forever, as librpma's do (rnr_retry 7): a receive that never comes
	 * leaves the send waiting, and only the software transport has an
	 * end to the wait (rnr_timeout_ms)
	 */
	if (o.never && !it_transport_is("tcp"))
		return;
	it_pair_test_cfg(_i < 2 ? 2 : 1, RNR_CONFIG, rnr_server, rnr_client,
			&o);
}
END_TEST

int
main(void)
{
	const struct th_test tc_errors[] = {
		TH_LOOP(test_remote_access_error, 0, 2 * ACCESS_CASES),
		TH_LOOP(test_full_queues, 0, 2),
		TH_LOOP(test_receiver_not_ready, 0, 4), TH_END
	};
	const struct th_tcase tcases[] = {
		{ "errors", .steps = tc_errors, .create = it_tcase_create },
	};
	return check_run(th_suite("integration: errors", tcases, TH_N(tcases)),
			CK_ENV);
}
