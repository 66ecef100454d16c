// SPDX-License-Identifier: BSD-3-Clause
/*
 * hostile_ring.c -- a client that abuses its shared queue pairs.
 *
 * The hostile client H links librpmaclient and makes its connections
 * normally, then finds each connection's shared region in its own
 * /proc/self/maps and writes to it behind the library's back: random
 * bytes over header and rings, impossible ring indices, unknown opcodes
 * and flags, absurd lengths, keys it never got (among them the keys of
 * an innocent client of the same rpmad), local addresses outside its
 * registrations. Every abuse gets a fresh connection to its server S.
 *
 * Expected: rpmad ends only H's connection (RPMA_CONN_LOST) or fails
 * only H's work (an error completion; the rest flushed); the innocent
 * pair (hostile.h) on the same two rpmads goes on undisturbed, its data
 * intact; S's memory outside its registration never changes; both rpmads
 * keep their pids, keep answering, and end up with the descriptors they
 * started with.
 *
 * Daemon A: S and the innocent server. Daemon B: H and the innocent
 * client.
 */

#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostile.h"
#include "th_suite.h"

enum { TAG_NEXT = 100, TAG_SEND_NOW, TAG_SENT, TAG_H_DONE, TAG_S_DONE };

enum attack {
	/* the region itself: the connection must end */
	RANDOM_REGION,		/* random bytes over all of it */
	SQ_TAIL_FAR,		/* tail a million entries ahead */
	SQ_TAIL_BACK,		/* tail one behind the head */
	SQ_TAIL_OVER,		/* one more entry than the ring holds */
	CQ_HEAD_AHEAD,		/* head 5000 beyond the tail */
	CQ_HEAD_PLUS1,		/* head one beyond the tail */
	RQ_TAIL_FAR,		/* found when a message arrives */
	CQ_NEVER_TAKEN,		/* more work than the rings hold, no reaping */
	/* a full ring of garbage (a legal tail): errors, never success */
	SQ_GARBAGE_FULL,
	/* one bad entry: that error, then everything flushed */
	OPCODE_ZERO,
	OPCODE_HUGE,
	FLAGS_UNKNOWN,
	PERSIST_ON_WRITE,
	ATOMIC_LEN7,
	ATOMIC_MISALIGNED,
	WRITE_LEN_HUGE,
	READ_LEN_HUGE,
	LADDR_BELOW,
	LADDR_ACROSS_END,
	LKEY_RANDOM,
	LKEY_STOLEN_SRC,	/* write from the innocent client's buffer */
	LKEY_STOLEN_DST,	/* read into the innocent client's buffer */
	RKEY_RANDOM,
	RKEY_STOLEN,		/* the innocent client's key as a remote key */
	RADDR_BEYOND,
	RECV_STOLEN_KEY,	/* a receive into the innocent client's buffer */
	/* fields only rpmad owns: ignored, the connection works on */
	HEADER_SCRIBBLE,
	ATTACKS
};

/* the attacks up to CQ_NEVER_TAKEN corrupt the region: rpmad says so */
#define CORRUPTING_ATTACKS (CQ_NEVER_TAKEN + 1)

static const char *const attack_names[ATTACKS] = {
	"random-region", "sq-tail-far", "sq-tail-back", "sq-tail-over",
	"cq-head-ahead", "cq-head-plus1", "rq-tail-far", "cq-never-taken",
	"sq-garbage-full",
	"opcode-zero", "opcode-huge", "flags-unknown", "persist-on-write",
	"atomic-len7", "atomic-misaligned", "write-len-huge", "read-len-huge",
	"laddr-below", "laddr-across-end", "lkey-random", "lkey-stolen-src",
	"lkey-stolen-dst", "rkey-random", "rkey-stolen", "raddr-beyond",
	"recv-stolen-key", "header-scribble",
};

/* whether S sends H a message on that connection */
static int
needs_message(int a)
{
	return a == RQ_TAIL_FAR || a == RECV_STOLEN_KEY;
}

#define PAGE 4096
#define SEED_S 401
#define S_REG_OFF (PAGE + 128)
#define S_REG_LEN 2048
#define H_BUF 8192
#define H_REG_LEN 4096

/* ------------------------------------------------------------ server S */

static int
server(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(3 * PAGE);
	it_fill(buf, 3 * PAGE, SEED_S);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(peer, buf + S_REG_OFF, S_REG_LEN,
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr));
	uint8_t *msg = it_alloc(PAGE);
	struct rpma_mr_local *msg_mr =
			IT_REG(peer, msg, PAGE, RPMA_MR_USAGE_SEND);
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, env->port, &ep));
	IT_EQ(it_tell(IT_THIRD, HU_TAG_LISTENING, NULL, 0), 0);

	for (;;) {
		int a = -1;
		IT_EQ(it_expect(TAG_NEXT, &a, sizeof(a)), sizeof(a));
		if (a < 0)
			break;
		struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
		it_send_desc(IT_THIRD, mr, NULL);
		if (needs_message(a)) {
			(void) it_expect(TAG_SEND_NOW, NULL, 0);
			struct rpma_cq *cq = NULL;
			IT_OK(rpma_conn_get_cq(conn, &cq));
			IT_OK(rpma_send(conn, msg_mr, 0, 64,
					RPMA_F_COMPLETION_ALWAYS, NULL));
			/* it fails at H; S's work fails or is flushed */
			struct ibv_wc wc;
			it_wc(cq, &wc);
			IT_ASSERT_MSG(wc.status != IBV_WC_SUCCESS, "%s: the "
					"message was taken", attack_names[a]);
			IT_EQ(it_tell(IT_THIRD, TAG_SENT, NULL, 0), 0);
		}
		enum rpma_conn_event ev = it_next_event(conn, IT_WAIT_MS);
		IT_ASSERT_MSG(ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST,
				"%s: event %s", attack_names[a],
				rpma_utils_conn_event_2str(ev));
		(void) rpma_conn_disconnect(conn);
		IT_OK(rpma_conn_delete(&conn));
	}

	/* H wrote inside the registration only what was there already */
	uint8_t *ref = it_alloc(3 * PAGE);
	it_fill(ref, 3 * PAGE, SEED_S);
	for (size_t i = 0; i < 3 * PAGE; i++)
		IT_ASSERT_MSG(buf[i] == ref[i], "byte %zu of S's buffer changed "
				"(registration [%d, %d))", i, S_REG_OFF,
				S_REG_OFF + S_REG_LEN);
	free(ref);
	IT_OKS(rpma_ep_shutdown(&ep), rpma_mr_dereg(&msg_mr),
			rpma_mr_dereg(&mr), rpma_peer_delete(&peer));
	free(msg);
	free(buf);
	IT_EQ(it_tell(IT_PARENT, TAG_S_DONE, NULL, 0), 0);
	return 0;
}

/* ----------------------------------------------------------- hostile H */

struct hostile {
	struct rpma_peer *peer;
	uint8_t *buf;			/* H_BUF bytes, H_REG_LEN registered */
	struct rpma_mr_local *mr;
	uint32_t key;			/* H's own */
	uint64_t stolen_addr[2];	/* the innocent client's buffers */
	uint32_t stolen_key[2];
	const struct it_env *env;
};

static uint32_t
rnd32(void)
{
	return (uint32_t)random() << 16 ^ (uint32_t)random();
}

/*
 * A good signaled write of H's into S's registration (wr_id 2); the bytes
 * are those S has there already.
 */
static struct qp_sqe
good_write(const struct hostile *h, const struct it_desc *d)
{
	return (struct qp_sqe){
		.opcode = QP_OP_WRITE, .flags = QP_SQE_SIGNALED, .wr_id = 2,
		.laddr = (uintptr_t)h->buf, .lkey = h->key, .length = 64,
		.raddr = hu_desc_addr(d->mr), .rkey = hu_desc_key(d->mr),
	};
}

/* The bad entry of a one-entry attack, and the status it must get. */
static struct qp_sqe
bad_entry(const struct hostile *h, const struct it_desc *d, int a,
		enum ibv_wc_status *want)
{
	struct qp_sqe e = good_write(h, d);
	e.wr_id = 1;
	*want = IBV_WC_LOC_QP_OP_ERR;
	switch (a) {
	case OPCODE_ZERO:
		e.opcode = 0;
		break;
	case OPCODE_HUGE:
		e.opcode = 99;
		break;
	case FLAGS_UNKNOWN:
		e.flags |= 0x80;
		break;
	case PERSIST_ON_WRITE:
		e.flags |= QP_SQE_PERSISTENT;
		break;
	case ATOMIC_LEN7:
		e.opcode = QP_OP_ATOMIC_WRITE;
		e.length = 7;
		break;
	case ATOMIC_MISALIGNED:
		e.opcode = QP_OP_ATOMIC_WRITE;
		e.length = 8;
		e.raddr = (hu_desc_addr(d->mr) | 7) + 8;
		break;
	case WRITE_LEN_HUGE:
		*want = IBV_WC_LOC_PROT_ERR;
		e.length = UINT32_MAX;
		break;
	case READ_LEN_HUGE:
		*want = IBV_WC_LOC_PROT_ERR;
		e.opcode = QP_OP_READ;
		e.length = UINT32_MAX;
		break;
	case LADDR_BELOW:
		*want = IBV_WC_LOC_PROT_ERR;
		e.laddr = (uintptr_t)h->buf - 64;
		break;
	case LADDR_ACROSS_END:
		*want = IBV_WC_LOC_PROT_ERR;
		e.opcode = QP_OP_READ;
		e.laddr = (uintptr_t)h->buf + H_REG_LEN - 32;
		break;
	case LKEY_RANDOM:
		*want = IBV_WC_LOC_PROT_ERR;
		e.lkey = rnd32() | 1;
		break;
	case LKEY_STOLEN_SRC:
		*want = IBV_WC_LOC_PROT_ERR;
		e.lkey = h->stolen_key[0];
		e.laddr = h->stolen_addr[0];
		break;
	case LKEY_STOLEN_DST:
		*want = IBV_WC_LOC_PROT_ERR;
		e.opcode = QP_OP_READ;
		e.lkey = h->stolen_key[1];
		e.laddr = h->stolen_addr[1];
		break;
	case RKEY_RANDOM:
		*want = IBV_WC_REM_ACCESS_ERR;
		e.rkey = rnd32() | 1;
		break;
	case RKEY_STOLEN:
		*want = IBV_WC_REM_ACCESS_ERR;
		e.rkey = h->stolen_key[0];
		e.raddr = h->stolen_addr[0];
		break;
	case RADDR_BEYOND:
		*want = IBV_WC_REM_ACCESS_ERR;
		e.raddr = hu_desc_addr(d->mr) + hu_desc_len(d->mr);
		break;
	default:
		IT_ASSERT(0);
	}
	return e;
}

/* The next completion of H's CQ (bounded). */
static void
next_wc(struct rpma_cq *cq, struct ibv_wc *wc, int a)
{
	int ret = it_get_wc(cq, wc, IT_WAIT_MS);
	IT_ASSERT_MSG(ret == 0, "%s: no completion within %d ms: %s",
			attack_names[a], IT_WAIT_MS, rpma_err_2str(ret));
}

static void
expect_lost(struct rpma_conn *conn, int a)
{
	enum rpma_conn_event ev = it_next_event(conn, IT_WAIT_MS);
	IT_ASSERT_MSG(ev == RPMA_CONN_LOST, "%s: event %s, wanted lost",
			attack_names[a], rpma_utils_conn_event_2str(ev));
}

/* Ends a connection whatever state it is in (bounded). */
static void
finish(struct rpma_conn **conn, int lost_already)
{
	int ret = rpma_conn_disconnect(*conn);
	if (!lost_already && ret == 0) {
		enum rpma_conn_event ev = it_next_event(*conn, IT_WAIT_MS);
		IT_ASSERT(ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST);
	}
	IT_OK(rpma_conn_delete(conn));
}

static void
run_attack(struct hostile *h, int a)
{
	static const struct qp_sizes sizes = { 10, 10, 10, 0 };	/* defaults */
	IT_EQ(it_tell(IT_SERVER, TAG_NEXT, &a, sizeof(a)), 0);
	struct rpma_conn *conn = it_connect_to(h->peer, h->env->port, NULL,
			NULL);
	struct it_desc d;
	it_expect_desc(&d);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	uint32_t qp_num = 0;
	IT_OK(rpma_conn_get_qp_num(conn, &qp_num));
	struct hu_qp q;
	hu_qp_find(qp_num, &sizes, &q);
	struct qp_region_header *hdr = q.hdr;
	uint32_t sq_head = atomic_load(&hdr->sq.head);
	struct ibv_wc wc;
	struct qp_sqe good = good_write(h, &d);

	switch (a) {
	case RANDOM_REGION: {
		uint32_t *w = q.region;
		for (size_t i = 0; i < q.size / 4; i++)
			w[i] = rnd32();
		hu_ring_doorbells();
		expect_lost(conn, a);
		finish(&conn, 1);
		return;
	}
	case SQ_TAIL_FAR:
	case SQ_TAIL_BACK:
	case SQ_TAIL_OVER: {
		uint32_t t = a == SQ_TAIL_FAR ? sq_head + 1000000 :
			a == SQ_TAIL_BACK ? sq_head - 1 :
			sq_head + q.layout.sq_entries + 1;
		atomic_store(&hdr->sq.tail, t);
		hu_ring_doorbells();
		expect_lost(conn, a);
		finish(&conn, 1);
		return;
	}
	case CQ_HEAD_AHEAD:
	case CQ_HEAD_PLUS1: {
		uint32_t t = atomic_load(&hdr->cq.tail);
		atomic_store(&hdr->cq.head, t + (a == CQ_HEAD_AHEAD ? 5000 : 1));
		hu_qp_post_raw(&q, &good);	/* its completion finds it */
		expect_lost(conn, a);
		finish(&conn, 1);
		return;
	}
	case RQ_TAIL_FAR:
		atomic_store(&hdr->rq.tail, atomic_load(&hdr->rq.head) +
				1000000);
		hu_ring_doorbells();
		IT_EQ(it_tell(IT_SERVER, TAG_SEND_NOW, NULL, 0), 0);
		expect_lost(conn, a);
		(void) it_expect(TAG_SENT, NULL, 0);
		finish(&conn, 1);
		return;
	case CQ_NEVER_TAKEN: {
		/*
		 * The queue pair fails at the first entry; then H keeps the
		 * SQ full, ring after ring, and never takes a completion:
		 * more completions than CQ and SQ can hold together, which
		 * a client that reaps before reusing SQ slots never causes.
		 */
		struct qp_sqe bad = good;
		bad.opcode = 0;
		for (int round = 0; round < 32; round++) {
			uint32_t t = atomic_load(&hdr->sq.tail);
			uint64_t end = it_now_ms() + 200;
			while (atomic_load(&hdr->sq.head) != t &&
					it_now_ms() < end)
				it_sleep_ms(1);
			if (atomic_load(&hdr->sq.head) != t)
				break;	/* rpmad stopped reading: it is over */
			for (uint32_t i = 0; i < q.layout.sq_entries; i++)
				*qp_sq_slot(q.region, &q.layout, t + i) = bad;
			atomic_store(&hdr->sq.tail, t + q.layout.sq_entries);
			hu_ring_doorbells();
		}
		expect_lost(conn, a);
		finish(&conn, 1);
		return;
	}
	case RECV_STOLEN_KEY: {
		struct qp_rqe r = {
			.wr_id = 7, .laddr = h->stolen_addr[1],
			.lkey = h->stolen_key[1], .length = 4096,
		};
		hu_qp_post_recv_raw(&q, &r);
		IT_EQ(it_tell(IT_SERVER, TAG_SEND_NOW, NULL, 0), 0);
		next_wc(cq, &wc, a);
		IT_EQ(wc.wr_id, 7);
		IT_ASSERT_MSG(wc.status == IBV_WC_LOC_PROT_ERR, "%s: %s",
				attack_names[a], ibv_wc_status_str(wc.status));
		(void) it_expect(TAG_SENT, NULL, 0);
		finish(&conn, 0);
		return;
	}
	case SQ_GARBAGE_FULL: {
		uint32_t n = q.layout.sq_entries;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t *w = (uint32_t *)qp_sq_slot(q.region,
					&q.layout, sq_head + i);
			for (size_t k = 0; k < sizeof(struct qp_sqe) / 4; k++)
				w[k] = rnd32();
		}
		atomic_store(&hdr->sq.tail, sq_head + n);
		hu_ring_doorbells();
		/* errors (or the end of the connection), never success */
		int ret;
		while ((ret = it_get_wc(cq, &wc, 300)) == 0)
			IT_ASSERT_MSG(wc.status != IBV_WC_SUCCESS, "%s: garbage "
					"entry %#llx succeeded",
					attack_names[a],
					(unsigned long long)wc.wr_id);
		finish(&conn, 0);
		return;
	}
	case HEADER_SCRIBBLE: {
		/* what rpmad wrote for the client's information only */
		hdr->magic = rnd32();
		hdr->version = rnd32();
		hdr->region_size = UINT64_MAX;
		hdr->sq_entries = hdr->rq_entries = UINT32_MAX;
		hdr->cq_entries = hdr->rcq_entries = 3;
		hdr->sq_offset = hdr->cq_offset = UINT64_MAX - 7;
		hdr->rq_offset = hdr->rcq_offset = 1ull << 40;
		atomic_store(&hdr->cq_space_wanted, 1);
		/* a legal write of bytes S has there already */
		struct rpma_mr_remote *rmr = it_desc_mr(&d);
		IT_OK(rpma_write(conn, rmr, 64, h->mr, 64, 64,
				RPMA_F_COMPLETION_ALWAYS, (void *)3));
		it_wc_ok(conn, cq, 3, IBV_WC_RDMA_WRITE, &wc);
		IT_OK(rpma_mr_remote_delete(&rmr));
		finish(&conn, 0);
		return;
	}
	default:
		break;
	}

	/*
	 * a good entry, one bad entry, then a good one behind it: each
	 * completes in its turn (the bad one after the one in flight before
	 * it, whether rpmad or the target refuses it), the last is flushed
	 */
	enum ibv_wc_status want;
	struct qp_sqe bad = bad_entry(h, &d, a, &want);
	struct qp_sqe first = good;
	first.wr_id = 5;
	hu_qp_post_raw(&q, &first);
	hu_qp_post_raw(&q, &bad);
	hu_qp_post_raw(&q, &good);
	next_wc(cq, &wc, a);
	IT_EQ(wc.wr_id, 5);
	IT_ASSERT_MSG(wc.status == IBV_WC_SUCCESS, "%s: the work before got "
			"%s", attack_names[a], ibv_wc_status_str(wc.status));
	next_wc(cq, &wc, a);
	IT_EQ(wc.wr_id, 1);
	IT_ASSERT_MSG(wc.status == want, "%s: status %s, wanted %s",
			attack_names[a], ibv_wc_status_str(wc.status),
			ibv_wc_status_str(want));
	next_wc(cq, &wc, a);
	IT_EQ(wc.wr_id, 2);
	IT_ASSERT_MSG(wc.status == IBV_WC_WR_FLUSH_ERR, "%s: the next work "
			"got %s", attack_names[a],
			ibv_wc_status_str(wc.status));
	/* the library sees the queue pair in error and refuses more */
	struct rpma_mr_remote *rmr = it_desc_mr(&d);
	IT_ERR(RPMA_E_PROVIDER, rpma_write(conn, rmr, 0, h->mr, 0, 8,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	IT_OK(rpma_mr_remote_delete(&rmr));
	finish(&conn, 0);
}

static int
hostile(const struct it_env *env, void *arg)
{
	struct hostile h = { .env = env };
	srandom(4711);
	struct it_desc stolen[2];
	IT_EQ(it_expect(HU_TAG_STOLEN, stolen, sizeof(stolen)),
			sizeof(stolen));
	for (int i = 0; i < 2; i++) {
		h.stolen_addr[i] = hu_desc_addr(stolen[i].mr);
		h.stolen_key[i] = hu_desc_key(stolen[i].mr);
	}
	h.peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	h.buf = it_alloc(H_BUF);
	/* what H may write legally is what S has there already */
	uint8_t *ref = it_alloc(3 * PAGE);
	it_fill(ref, 3 * PAGE, SEED_S);
	memcpy(h.buf, ref + S_REG_OFF, 128);
	free(ref);
	IT_OK(rpma_mr_reg(h.peer, h.buf, H_REG_LEN, RPMA_MR_USAGE_WRITE_SRC |
			RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_RECV, &h.mr));
	uint8_t desc[32];
	IT_OK(rpma_mr_get_descriptor(h.mr, desc));
	h.key = hu_desc_key(desc);
	IT_ASSERT(h.key != h.stolen_key[0] && h.key != h.stolen_key[1]);
	(void) it_expect(HU_TAG_LISTENING, NULL, 0);

	for (int a = 0; a < ATTACKS; a++)
		run_attack(&h, a);

	IT_OK(rpma_mr_dereg(&h.mr));
	IT_OK(rpma_peer_delete(&h.peer));
	free(h.buf);
	/* the parent hears us before the server: it expects that order */
	IT_EQ(it_tell(IT_PARENT, TAG_H_DONE, NULL, 0), 0);
	int end = -1;
	IT_EQ(it_tell(IT_SERVER, TAG_NEXT, &end, sizeof(end)), 0);
	return 0;
}

/* ------------------------------------------- an idle rpmad stays idle */

/*
 * After abuse rpmad must go back to sleep: entries in the SQ of a
 * connection that is not up yet, and a connection that ended for
 * corruption but that its client keeps, must not keep rpmad's loop
 * polling (nor logging) for as long as they exist.
 */
enum { IDLE_REQUEST, IDLE_CORRUPT_SQ, IDLE_CORRUPT_CQ, IDLE_STEPS };
enum { TAG_IDLE = 120, TAG_IDLE_GO };

static int
idle_server(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(PAGE);
	struct rpma_mr_local *mr =
			IT_REG(peer, buf, PAGE, RPMA_MR_USAGE_WRITE_DST);
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, env->port, &ep));
	IT_EQ(it_tell(IT_THIRD, HU_TAG_LISTENING, NULL, 0), 0);
	for (int i = IDLE_CORRUPT_SQ; i < IDLE_STEPS; i++) {
		struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
		it_send_desc(IT_THIRD, mr, NULL);
		enum rpma_conn_event ev = it_next_event(conn, IT_WAIT_MS);
		IT_ASSERT(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED);
		(void) rpma_conn_disconnect(conn);
		IT_OK(rpma_conn_delete(&conn));
	}
	IT_OKS(rpma_ep_shutdown(&ep), rpma_mr_dereg(&mr),
			rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

/* Tells the parent to look at rpmad now and waits until it has. */
static void
idle_checkpoint(void)
{
	IT_EQ(it_tell(IT_PARENT, TAG_IDLE, NULL, 0), 0);
	int n = it_hear(TAG_IDLE_GO, NULL, 0, IT_ROLE_MS);
	IT_ASSERT(n == 0);
}

static int
idle_client(const struct it_env *env, void *arg)
{
	static const struct qp_sizes sizes = { 10, 10, 10, 0 };
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(PAGE);
	struct rpma_mr_local *mr =
			IT_REG(peer, buf, PAGE, RPMA_MR_USAGE_WRITE_SRC);
	uint8_t desc[32];
	IT_OK(rpma_mr_get_descriptor(mr, desc));
	(void) it_expect(HU_TAG_LISTENING, NULL, 0);

	/* work in the SQ of a request that is not connected */
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_conn_req_new(peer, IT_ADDR, env->port, NULL, &req));
	struct hu_qp q;
	hu_qp_find(0, &sizes, &q);
	struct qp_sqe e = {
		.opcode = QP_OP_WRITE, .flags = QP_SQE_SIGNALED,
		.laddr = (uintptr_t)buf, .lkey = hu_desc_key(desc),
		.length = 8,
	};
	hu_qp_post_raw(&q, &e);
	idle_checkpoint();
	IT_OK(rpma_conn_req_delete(&req));

	for (int i = IDLE_CORRUPT_SQ; i < IDLE_STEPS; i++) {
		struct rpma_conn *conn = it_connect_to(peer, env->port, NULL,
				NULL);
		struct it_desc d;
		it_expect_desc(&d);
		uint32_t qp_num = 0;
		IT_OK(rpma_conn_get_qp_num(conn, &qp_num));
		hu_qp_find(qp_num, &sizes, &q);
		if (i == IDLE_CORRUPT_SQ) {
			atomic_store(&q.hdr->sq.tail,
					atomic_load(&q.hdr->sq.head) - 1);
			hu_ring_doorbells();
		} else {
			atomic_store(&q.hdr->cq.head,
					atomic_load(&q.hdr->cq.tail) + 100);
			e.raddr = hu_desc_addr(d.mr);
			e.rkey = hu_desc_key(d.mr);
			hu_qp_post_raw(&q, &e);
		}
		expect_lost(conn, 0);
		/* the client keeps it, and keeps ringing */
		hu_ring_doorbells();
		idle_checkpoint();
		finish(&conn, 1);
	}
	IT_OK(rpma_mr_dereg(&mr));
	IT_OK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

/* How much CPU rpmad may use in a second in which it has nothing to do. */
#define IDLE_WINDOW_MS 1000
#define IDLE_CPU_MS 250

START_TEST(test_idle_after_abuse)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 2), 0);
	struct test_daemon *a = &env.d[0], *b = &env.d[1];
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, a, idle_server,
			NULL), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_THIRD, &env, b, idle_client,
			NULL), 0);
	static const char *const what[IDLE_STEPS] = {
		"entries in the SQ of an unconnected request",
		"a connection its client corrupted (SQ) and keeps",
		"a connection its client corrupted (CQ) and keeps",
	};
	for (int i = 0; i < IDLE_STEPS; i++) {
		ck_assert_msg(it_group_hear(&g, TAG_IDLE, 1) == 0, "%s",
				it_report());
		/* let what follows the abuse settle first */
		it_sleep_ms(100);
		long before = it_proc_cpu_ms(b->pid);
		it_sleep_ms(IDLE_WINDOW_MS);
		long used = it_proc_cpu_ms(b->pid) - before;
		ck_assert_msg(used < IDLE_CPU_MS, "with %s, rpmad used %ld ms "
				"of CPU in %d ms", what[i], used,
				IDLE_WINDOW_MS);
		ck_assert_int_eq(it_tell(IT_THIRD, TAG_IDLE_GO, NULL, 0), 0);
	}
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	/* one warning per corrupted connection, not one per look at it */
	ck_assert_int_eq(test_daemon_log_count(b, "corrupted its queue pair"),
			2);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* --------------------------------------------------------------- test */

START_TEST(test_hostile_rings)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 2), 0);
	struct test_daemon *a = &env.d[0], *b = &env.d[1];
	pid_t pid_a = a->pid, pid_b = b->pid;
	int fds_a = it_proc_fds(pid_a), fds_b = it_proc_fds(pid_b);

	struct hu_pair pair = { .server = IT_FOURTH, .client = IT_CLIENT,
			.steal_to = IT_THIRD };
	ck_assert_int_eq(it_free_port(pair.port, sizeof(pair.port)), 0);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_FOURTH, &env, a,
			hu_innocent_server, &pair), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, b,
			hu_innocent_client, &pair), 0);
	ck_assert_msg(it_group_hear(&g, HU_TAG_INNOCENT_UP, 1) == 0, "%s",
			it_report());

	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, a, server, NULL),
			0);
	ck_assert_int_eq(it_group_spawn(&g, IT_THIRD, &env, b, hostile, NULL),
			0);
	/* all 27 attacks, a few seconds; a loaded host may need more */
	ck_assert_msg(it_group_hear_within(&g, TAG_H_DONE, 1, IT_ROLE_MS) == 0,
			"%s", it_report());
	ck_assert_msg(it_group_hear(&g, TAG_S_DONE, 1) == 0, "%s",
			it_report());
	ck_assert_int_eq(it_tell(IT_CLIENT, HU_TAG_INNOCENT_STOP, NULL, 0), 0);
	ck_assert_msg(it_group_hear(&g, HU_TAG_INNOCENT_DONE, 1) == 0, "%s",
			it_report());
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());

	/* nothing of theirs stays in the daemons; both still serve */
	ck_assert_int_le(it_proc_wait_fds(pid_a, fds_a, IT_WAIT_MS), fds_a);
	ck_assert_int_le(it_proc_wait_fds(pid_b, fds_b, IT_WAIT_MS), fds_b);
	/* one warning per connection H corrupted, none about anyone else */
	ck_assert_int_eq(test_daemon_log_count(b, "corrupted its queue pair"),
			CORRUPTING_ATTACKS);
	ck_assert_int_eq(test_daemon_log_count(a, "corrupted its queue pair"),
			0);
	ck_assert_int_eq(it_daemon_serves(a, pid_a), 0);
	ck_assert_int_eq(it_daemon_serves(b, pid_b), 0);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_rings[] = { test_hostile_rings,
		test_idle_after_abuse, NULL };
	const struct th_tcase tcases[] = {
		{ "rings", .tests = tc_rings, .create = it_tcase_create },
	};
	return check_run_forked(th_suite("hostile_ring", tcases, TH_N(tcases)),
			CK_NORMAL);
}
