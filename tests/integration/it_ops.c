// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_ops.c -- every operation between two applications on two rpmads
 * (and, for a representative subset, both on one rpmad): read, write,
 * atomic write, both flushes, send and receive with and without immediate
 * data, write with immediate data, zero-length operations, the completion
 * flags, the receive CQ; the data on both sides and every field of the
 * completions that librpma 0.12.0 applications look at
 */

#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "itest.h"
#include "th_suite.h"

enum { TAG_CHECK = 100, TAG_CHECKED, TAG_STOP };

/* ====================================================== read / write */

/*
 * The server's registration: [0, 4K) is read by the client, the client
 * writes into [4K + 512, 4K + 2560), atomically into [8K + 8, 8K + 16),
 * and two small writes at 12K; everything else must stay as it was.
 */
#define RMA_SIZE 16384
#define RD_OFF 0
#define RD_LEN 4096
#define WR_OFF 4608
#define WR_LEN 2048
#define AT_OFF 8200
#define AT_VALUE 0x0123456789abcdefULL
#define FL_OFF 12288
#define FL_LEN 64

enum { SEED_BG = 33, SEED_RD = 11, SEED_WR = 22, SEED_ONERR = 55,
	SEED_ALWAYS = 66, SEED_AGAIN = 44 };

static void
rma_expect_target(const uint8_t *buf)
{
	/* what the client wrote */
	IT_EQ(it_check(buf + WR_OFF, WR_LEN, SEED_WR), -1);
	uint64_t v;
	memcpy(&v, buf + AT_OFF, sizeof(v));
	IT_ASSERT_MSG(v == AT_VALUE, "atomic target holds %#llx",
			(unsigned long long)v);
	IT_EQ(it_check(buf + FL_OFF, FL_LEN, SEED_ONERR), -1);
	IT_EQ(it_check(buf + FL_OFF + FL_LEN, FL_LEN, SEED_ALWAYS), -1);

	/* and nothing else changed */
	uint8_t *expect = it_alloc(RMA_SIZE);
	it_fill(expect, RMA_SIZE, SEED_BG);
	it_fill(expect + RD_OFF, RD_LEN, SEED_RD);
	memcpy(expect + WR_OFF, buf + WR_OFF, WR_LEN);
	memcpy(expect + AT_OFF, buf + AT_OFF, 8);
	memcpy(expect + FL_OFF, buf + FL_OFF, 2 * FL_LEN);
	for (size_t i = 0; i < RMA_SIZE; i++)
		IT_ASSERT_MSG(buf[i] == expect[i], "byte %zu changed", i);
	free(expect);
}

static int
rma_server(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(RMA_SIZE);
	it_fill(buf, RMA_SIZE, SEED_BG);
	it_fill(buf + RD_OFF, RD_LEN, SEED_RD);
	struct rpma_mr_local *mr = IT_REG(peer, buf, RMA_SIZE,
			RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
					RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);

	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, NULL);

	(void) it_expect(TAG_CHECK, NULL, 0);
	rma_expect_target(buf);
	/* one-sided operations leave no trace in the target's CQ */
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	struct ibv_wc wc;
	IT_ERR(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(cq, 1, &wc, NULL));
	/* the client reads this again: it must see the new bytes */
	it_fill(buf + RD_OFF, 64, SEED_AGAIN);
	IT_EQ(it_tell(IT_CLIENT, TAG_CHECKED, NULL, 0), 0);

	it_server_end(&conn, &mr, &ep, &peer, buf);
	return 0;
}

static int
rma_client(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(RMA_SIZE);
	struct rpma_mr_local *mr = IT_REG(peer, buf, RMA_SIZE,
			RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	struct rpma_cq *cq = NULL, *rcq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	IT_ASSERT(cq != NULL);
	IT_OK(rpma_conn_get_rcq(conn, &rcq));
	IT_ASSERT(rcq == NULL);

	struct it_desc desc;
	it_expect_desc(&desc);
	IT_EQ(desc.mr_len, 21);
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);
	size_t rsize = 0;
	IT_OK(rpma_mr_remote_get_size(rmr, &rsize));
	IT_EQ(rsize, RMA_SIZE);
	int ftype = 0;
	IT_OK(rpma_mr_remote_get_flush_type(rmr, &ftype));
	IT_EQ(ftype, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);

	struct ibv_wc wc;
	/* read */
	IT_OK(rpma_read(conn, mr, RD_OFF, rmr, RD_OFF, RD_LEN,
			RPMA_F_COMPLETION_ALWAYS, (void *)0x1001));
	it_wc_ok(conn, cq, 0x1001, IBV_WC_RDMA_READ, &wc);
	IT_EQ(wc.wc_flags & IBV_WC_WITH_IMM, 0);
	IT_EQ(it_check(buf + RD_OFF, RD_LEN, SEED_RD), -1);

	/* write */
	it_fill(buf + WR_OFF, WR_LEN, SEED_WR);
	IT_OK(rpma_write(conn, rmr, WR_OFF, mr, WR_OFF, WR_LEN,
			RPMA_F_COMPLETION_ALWAYS, (void *)0x1002));
	it_wc_ok(conn, cq, 0x1002, IBV_WC_RDMA_WRITE, &wc);
	IT_EQ(wc.wc_flags & IBV_WC_WITH_IMM, 0);

	/* atomic write: aligned only */
	uint64_t v = AT_VALUE;
	memcpy(buf + 8192, &v, sizeof(v));
	IT_ERR(RPMA_E_INVAL, rpma_write_atomic(conn, rmr, AT_OFF + 4, mr, 8192,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	IT_OK(rpma_write_atomic(conn, rmr, AT_OFF, mr, 8192,
			RPMA_F_COMPLETION_ALWAYS, (void *)0x1003));
	it_wc_ok(conn, cq, 0x1003, IBV_WC_RDMA_WRITE, &wc);

	/* a persistent flush needs the target's direct write to pmem */
	IT_ERR(RPMA_E_NOSUPP, rpma_flush(conn, rmr, 0, RMA_SIZE,
			RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			NULL));
	IT_OK(rpma_flush(conn, rmr, 4096, 8192, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, (void *)0x1004));
	it_wc_ok(conn, cq, 0x1004, IBV_WC_RDMA_READ, &wc);

	/* COMPLETION_ON_ERROR: nothing when it works; ALWAYS: completion */
	it_fill(buf + FL_OFF, FL_LEN, SEED_ONERR);
	it_fill(buf + FL_OFF + FL_LEN, FL_LEN, SEED_ALWAYS);
	IT_OK(rpma_write(conn, rmr, FL_OFF, mr, FL_OFF, FL_LEN,
			RPMA_F_COMPLETION_ON_ERROR, (void *)0x1007));
	it_no_wc(cq, 100);
	IT_OK(rpma_write(conn, rmr, FL_OFF + FL_LEN, mr, FL_OFF + FL_LEN,
			FL_LEN, RPMA_F_COMPLETION_ALWAYS, (void *)0x1008));
	it_wc_ok(conn, cq, 0x1008, IBV_WC_RDMA_WRITE, &wc);
	IT_OK(rpma_flush(conn, rmr, 0, RMA_SIZE, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ON_ERROR, (void *)0x1009));
	IT_OK(rpma_read(conn, mr, 0, rmr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
			(void *)0x100a));
	it_wc_ok(conn, cq, 0x100a, IBV_WC_RDMA_READ, &wc);
	it_no_wc(cq, 20);

	IT_EQ(it_tell(IT_SERVER, TAG_CHECK, NULL, 0), 0);
	(void) it_expect(TAG_CHECKED, NULL, 0);

	/* a read sees what the target's CPU wrote since */
	IT_OK(rpma_read(conn, mr, 0, rmr, 0, 64, RPMA_F_COMPLETION_ALWAYS,
			(void *)0x100b));
	it_wc_ok(conn, cq, 0x100b, IBV_WC_RDMA_READ, &wc);
	IT_EQ(it_check(buf, 64, SEED_AGAIN), -1);

	/* zero-length operations need no registrations */
	IT_OK(rpma_read(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS,
			(void *)0x1005));
	it_wc_ok(conn, cq, 0x1005, IBV_WC_RDMA_READ, &wc);
	IT_OK(rpma_write(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS,
			(void *)0x1006));
	it_wc_ok(conn, cq, 0x1006, IBV_WC_RDMA_WRITE, &wc);
	it_no_wc(cq, 20);

	it_client_end(&conn, &rmr, &mr, &peer, buf);
	return 0;
}

/* _i: 0 two rpmads, 1 one rpmad */
START_TEST(test_rma)
{
	it_pair_test(_i ? 1 : 2, rma_server, rma_client, NULL);
}
END_TEST

/* ===================================================== atomic write */

/*
 * The target's CPU keeps loading the 8 bytes while the client writes two
 * values in turn with rpma_write_atomic: every load must see one whole
 * value, never a mix (one 8-byte store at the target).
 */
#define AT_A 0x0123456789abcdefULL
#define AT_B 0xfedcba9876543210ULL
#define AT_ROUNDS 300

struct watcher {
	const uint64_t *word;
	volatile int stop;
	uint64_t loads, torn, torn_value;
};

static void *
watch_word(void *arg)
{
	struct watcher *w = arg;
	while (!w->stop) {
		uint64_t v = __atomic_load_n(w->word, __ATOMIC_RELAXED);
		w->loads++;
		if (v != 0 && v != AT_A && v != AT_B) {
			w->torn++;
			w->torn_value = v;
		}
	}
	return NULL;
}

static int
atomic_server(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(4096);
	struct rpma_mr_local *mr = IT_REG(peer, buf, 4096,
			RPMA_MR_USAGE_WRITE_DST |
					RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);

	struct watcher w = { .word = (const uint64_t *)(buf + 64) };
	pthread_t th;
	IT_EQ(pthread_create(&th, NULL, watch_word, &w), 0);
	it_send_desc(IT_CLIENT, mr, NULL);
	(void) it_expect(TAG_CHECK, NULL, 0);
	w.stop = 1;
	IT_EQ(pthread_join(th, NULL), 0);
	/*
	 * One store where rpmad or a NIC makes it: the software transport,
	 * and a NIC's aligned 8-byte PCIe write. Over verbs in the VM the
	 * "NIC" is rxe, whose copy of the payload is a memcpy that may tear
	 * (in-process librpma's atomic write on rxe does the same): only
	 * the software transport's store is checked.
	 */
	if (it_transport_is("tcp"))
		IT_ASSERT_MSG(w.torn == 0, "%llu of %llu loads saw a torn "
				"value (e.g. %#llx)",
				(unsigned long long)w.torn,
				(unsigned long long)w.loads,
				(unsigned long long)w.torn_value);
	else if (w.torn)
		(void) fprintf(stderr, "it_ops: %llu of %llu loads saw a torn "
				"value over %s (the device's own copy)\n",
				(unsigned long long)w.torn,
				(unsigned long long)w.loads,
				test_daemon_transport());
	uint64_t last;
	memcpy(&last, buf + 64, 8);
	IT_EQ(last, AT_ROUNDS % 2 ? AT_A : AT_B);
	/* the neighbours are untouched */
	for (int i = 0; i < 4096; i++) {
		if (i < 64 || i >= 72)
			IT_EQ(buf[i], 0);
	}
	IT_EQ(it_tell(IT_CLIENT, TAG_CHECKED, NULL, 0), 0);

	it_server_end(&conn, &mr, &ep, &peer, buf);
	return 0;
}

static int
atomic_client(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint64_t *src = it_alloc(4096);
	src[0] = AT_A;
	src[1] = AT_B;
	struct rpma_mr_local *mr =
			IT_REG(peer, src, 4096, RPMA_MR_USAGE_WRITE_SRC);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	struct it_desc desc;
	it_expect_desc(&desc);
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);

	struct ibv_wc wc;
	for (int i = 1; i <= AT_ROUNDS; i++) {
		IT_OK(rpma_write_atomic(conn, rmr, 64, mr, i % 2 ? 0 : 8,
				RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)i));
		it_wc_ok(conn, cq, (uint64_t)i, IBV_WC_RDMA_WRITE, &wc);
	}
	IT_OK(rpma_flush(conn, rmr, 0, 4096, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	it_wc_ok(conn, cq, 0, IBV_WC_RDMA_READ, &wc);
	IT_EQ(it_tell(IT_SERVER, TAG_CHECK, NULL, 0), 0);
	(void) it_expect(TAG_CHECKED, NULL, 0);

	it_client_end(&conn, &rmr, &mr, &peer, src);
	return 0;
}

START_TEST(test_atomic_write_is_one_store)
{
	it_pair_test(2, atomic_server, atomic_client, NULL);
}
END_TEST

/* ================================================ persistent flush */

/*
 * Into memory rpmad makes persistent on the transport (it_pmem: a file
 * on TCP, a device DAX on RDMA; it_persist.c goes through every kind).
 */

#define PM_SIZE 65536
#define PM_OFF 4096
#define PM_LEN 8192
#define SEED_PM 77

static int
persist_server(const struct it_env *env, void *arg)
{
	if (!it_pmem_available())
		return 0;
	struct it_pmem pmem;
	it_pmem_map(env, PM_SIZE, &pmem);
	uint8_t *pm = pmem.ptr;

	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_mr_local *mr = IT_REG(peer, pm, PM_SIZE,
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
					RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	/* volatile memory, visibility only */
	uint8_t *vol = it_alloc(4096);
	struct rpma_mr_local *vmr = IT_REG(peer, vol, 4096,
			RPMA_MR_USAGE_WRITE_DST |
					RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct rpma_peer_cfg *pcfg = NULL;
	IT_OK(rpma_peer_cfg_new(&pcfg));
	IT_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));

	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, pcfg);
	it_send_desc(IT_CLIENT, vmr, pcfg);

	(void) it_expect(TAG_CHECK, NULL, 0);
	IT_EQ(it_check(pm + PM_OFF, PM_LEN, SEED_PM), -1);
	if (pmem.fd >= 0) {
		/* the bytes are in the file itself */
		uint8_t *file = it_alloc(PM_LEN);
		IT_EQ(pread(pmem.fd, file, PM_LEN, PM_OFF), PM_LEN);
		IT_EQ(it_check(file, PM_LEN, SEED_PM), -1);
		free(file);
	}
	IT_EQ(it_tell(IT_CLIENT, TAG_CHECKED, NULL, 0), 0);

	it_await_close(&conn);
	IT_OKS(rpma_peer_cfg_delete(&pcfg), rpma_mr_dereg(&vmr),
			rpma_mr_dereg(&mr), rpma_ep_shutdown(&ep),
			rpma_peer_delete(&peer));
	free(vol);
	it_pmem_unmap(&pmem);
	return 0;
}

static int
persist_client(const struct it_env *env, void *arg)
{
	/* no persistent memory for the transport here (a device DAX) */
	if (!it_pmem_available())
		return 0;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(PM_LEN);
	it_fill(buf, PM_LEN, SEED_PM);
	struct rpma_mr_local *mr =
			IT_REG(peer, buf, PM_LEN, RPMA_MR_USAGE_WRITE_SRC);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	struct it_desc desc, vdesc;
	it_expect_desc(&desc);
	it_expect_desc(&vdesc);
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);
	struct rpma_mr_remote *vrmr = it_desc_mr(&vdesc);
	int ftype = 0;
	IT_OK(rpma_mr_remote_get_flush_type(rmr, &ftype));
	IT_ASSERT(ftype & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);

	/* not declared yet: the connection does not know about pmem */
	IT_ERR(RPMA_E_NOSUPP, rpma_flush(conn, rmr, PM_OFF, PM_LEN,
			RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			NULL));
	IT_EQ(desc.pcfg_len, 1);
	struct rpma_peer_cfg *pcfg = NULL;
	IT_OK(rpma_peer_cfg_from_descriptor(desc.pcfg, desc.pcfg_len, &pcfg));
	bool direct = false;
	IT_OK(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct));
	IT_ASSERT(direct);
	IT_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	IT_OK(rpma_peer_cfg_delete(&pcfg));
	/* declared, but this registration cannot be flushed to pmem */
	IT_ERR(RPMA_E_NOSUPP, rpma_flush(conn, vrmr, 0, 64,
			RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			NULL));

	struct ibv_wc wc;
	IT_OK(rpma_write(conn, rmr, PM_OFF, mr, 0, PM_LEN,
			RPMA_F_COMPLETION_ON_ERROR, NULL));
	IT_OK(rpma_flush(conn, rmr, PM_OFF, PM_LEN,
			RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			(void *)0x4001));
	it_wc_ok(conn, cq, 0x4001, IBV_WC_RDMA_READ, &wc);
	/* persistence implies visibility */
	IT_OK(rpma_flush(conn, rmr, PM_OFF, PM_LEN,
			RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			(void *)0x4002));
	it_wc_ok(conn, cq, 0x4002, IBV_WC_RDMA_READ, &wc);
	IT_EQ(it_tell(IT_SERVER, TAG_CHECK, NULL, 0), 0);
	(void) it_expect(TAG_CHECKED, NULL, 0);

	it_close(&conn);
	IT_OKS(rpma_mr_remote_delete(&vrmr), rpma_mr_remote_delete(&rmr),
			rpma_mr_dereg(&mr), rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

START_TEST(test_flush_persistent)
{
	it_pair_test(2, persist_server, persist_client, NULL);
}
END_TEST

/* ========================================================= messages */

/*
 * The client sends, sends with immediate data, writes with immediate
 * data and sends nothing; the server has posted a receive for each (the
 * first before accepting); then the server sends one message back.
 */
#define MSG_BUF 4096
#define IMM_SEND 0xdeadbeefU
#define IMM_WRITE 0x12345678U

struct msg_opts {
	int rcq;	/* rcq_size of both sides (0: receives on the CQ) */
};

static struct rpma_conn_cfg *
msg_cfg(const struct msg_opts *o)
{
	struct rpma_conn_cfg *cfg = NULL;
	IT_OK(rpma_conn_cfg_new(&cfg));
	IT_OK(rpma_conn_cfg_set_rcq_size(cfg, (uint32_t)o->rcq));
	return cfg;
}

/* The CQ receives complete on, after checking rpma_conn_get_rcq. */
static struct rpma_cq *
recv_cq(struct rpma_conn *conn, const struct msg_opts *o)
{
	struct rpma_cq *cq = NULL, *rcq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	IT_OK(rpma_conn_get_rcq(conn, &rcq));
	if (o->rcq == 0) {
		IT_ASSERT(rcq == NULL);
		return cq;
	}
	IT_ASSERT(rcq != NULL && rcq != cq);
	return rcq;
}

static void
expect_recv(struct rpma_conn *conn, struct rpma_cq *cq, uint64_t wr_id,
		enum ibv_wc_opcode opcode, uint32_t byte_len, int has_imm,
		uint32_t imm)
{
	struct ibv_wc wc;
	it_wc_ok(conn, cq, wr_id, opcode, &wc);
	IT_EQ(wc.byte_len, byte_len);
	IT_EQ(!!(wc.wc_flags & IBV_WC_WITH_IMM), has_imm);
	if (has_imm) {
		IT_ASSERT_MSG(ntohl(wc.imm_data) == imm, "imm_data %#x (in "
				"network order), wanted %#x", wc.imm_data, imm);
	}
}

static int
msg_server(const struct it_env *env, void *arg)
{
	const struct msg_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *rbuf = it_alloc(MSG_BUF);
	it_fill(rbuf, MSG_BUF, 9);
	uint8_t *target = it_alloc(MSG_BUF);
	uint8_t *sbuf = it_alloc(MSG_BUF);
	it_fill(sbuf, 64, 8);
	struct rpma_mr_local *rmr = NULL, *tmr = NULL, *smr = NULL;
	IT_OK(rpma_mr_reg(peer, rbuf, MSG_BUF, RPMA_MR_USAGE_RECV, &rmr));
	IT_OK(rpma_mr_reg(peer, target, MSG_BUF, RPMA_MR_USAGE_WRITE_DST,
			&tmr));
	IT_OK(rpma_mr_reg(peer, sbuf, MSG_BUF, RPMA_MR_USAGE_SEND, &smr));

	struct rpma_conn_cfg *cfg = msg_cfg(o);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn_req *req = it_next_req(ep, cfg);
	/* a receive posted before the connection exists */
	IT_ERR(RPMA_E_INVAL, rpma_conn_req_recv(req, NULL, 0, 512, NULL));
	IT_OK(rpma_conn_req_recv(req, rmr, 0, 512, (void *)0x2001));
	struct rpma_conn *conn = it_accept(&req, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	struct rpma_cq *rcq = recv_cq(conn, o);
	IT_OK(rpma_recv(conn, rmr, 512, 512, (void *)0x2002));
	IT_OK(rpma_recv(conn, rmr, 1024, 512, (void *)0x2003));
	IT_OK(rpma_recv(conn, NULL, 0, 0, (void *)0x2004));
	it_send_desc(IT_CLIENT, tmr, NULL);
	IT_EQ(it_tell(IT_CLIENT, IT_TAG_GO, NULL, 0), 0);

	/* they complete in the order the client sent them */
	expect_recv(conn, rcq, 0x2001, IBV_WC_RECV, 100, 0, 0);
	IT_EQ(it_check(rbuf, 100, 1), -1);
	expect_recv(conn, rcq, 0x2002, IBV_WC_RECV, 200, 1, IMM_SEND);
	IT_EQ(it_check(rbuf + 512, 200, 2), -1);
	expect_recv(conn, rcq, 0x2003, IBV_WC_RECV_RDMA_WITH_IMM, 300, 1,
			IMM_WRITE);
	IT_EQ(it_check(target, 300, 3), -1);
	expect_recv(conn, rcq, 0x2004, IBV_WC_RECV, 0, 0, 0);
	/* what the messages did not fill is as it was */
	uint8_t *expect = it_alloc(MSG_BUF);
	it_fill(expect, MSG_BUF, 9);
	IT_EQ(memcmp(rbuf + 100, expect + 100, 412), 0);
	IT_EQ(memcmp(rbuf + 712, expect + 712, MSG_BUF - 712), 0);
	free(expect);
	for (int i = 300; i < MSG_BUF; i++)
		IT_EQ(target[i], 0);
	if (o->rcq)
		it_no_wc(cq, 10);

	/* and back: the send completes on the main CQ */
	IT_OK(rpma_send(conn, smr, 0, 64, RPMA_F_COMPLETION_ALWAYS,
			(void *)0x2010));
	struct ibv_wc wc;
	it_wc_ok(conn, cq, 0x2010, IBV_WC_SEND, &wc);
	if (o->rcq)
		it_no_wc(rcq, 10);

	it_await_close(&conn);
	IT_OKS(rpma_conn_cfg_delete(&cfg), rpma_mr_dereg(&smr),
			rpma_mr_dereg(&tmr), rpma_mr_dereg(&rmr),
			rpma_ep_shutdown(&ep), rpma_peer_delete(&peer));
	free(sbuf);
	free(target);
	free(rbuf);
	return 0;
}

static int
msg_client(const struct it_env *env, void *arg)
{
	const struct msg_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *sbuf = it_alloc(MSG_BUF);
	it_fill(sbuf, 100, 1);
	it_fill(sbuf + 512, 200, 2);
	it_fill(sbuf + 1024, 300, 3);
	uint8_t *rbuf = it_alloc(MSG_BUF);
	struct rpma_mr_local *smr = NULL, *rmr = NULL;
	IT_OK(rpma_mr_reg(peer, sbuf, MSG_BUF, RPMA_MR_USAGE_SEND |
			RPMA_MR_USAGE_WRITE_SRC, &smr));
	IT_OK(rpma_mr_reg(peer, rbuf, MSG_BUF, RPMA_MR_USAGE_RECV, &rmr));
	struct rpma_conn_cfg *cfg = msg_cfg(o);
	struct rpma_conn *conn = it_connect(peer, env, cfg, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	struct rpma_cq *rcq = recv_cq(conn, o);
	IT_OK(rpma_recv(conn, rmr, 0, 64, (void *)0x3010));
	struct it_desc desc;
	it_expect_desc(&desc);
	struct rpma_mr_remote *tmr = it_desc_mr(&desc);
	(void) it_expect(IT_TAG_GO, NULL, 0);

	struct ibv_wc wc;
	IT_OK(rpma_send(conn, smr, 0, 100, RPMA_F_COMPLETION_ALWAYS,
			(void *)0x3001));
	it_wc_ok(conn, cq, 0x3001, IBV_WC_SEND, &wc);
	IT_EQ(wc.wc_flags & IBV_WC_WITH_IMM, 0);
	IT_OK(rpma_send_with_imm(conn, smr, 512, 200, RPMA_F_COMPLETION_ALWAYS,
			IMM_SEND, (void *)0x3002));
	it_wc_ok(conn, cq, 0x3002, IBV_WC_SEND, &wc);
	IT_OK(rpma_write_with_imm(conn, tmr, 0, smr, 1024, 300,
			RPMA_F_COMPLETION_ALWAYS, IMM_WRITE, (void *)0x3003));
	it_wc_ok(conn, cq, 0x3003, IBV_WC_RDMA_WRITE, &wc);
	IT_OK(rpma_send(conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS,
			(void *)0x3004));
	it_wc_ok(conn, cq, 0x3004, IBV_WC_SEND, &wc);

	expect_recv(conn, rcq, 0x3010, IBV_WC_RECV, 64, 0, 0);
	IT_EQ(it_check(rbuf, 64, 8), -1);
	if (o->rcq)
		it_no_wc(cq, 10);

	it_close(&conn);
	IT_OKS(rpma_conn_cfg_delete(&cfg), rpma_mr_remote_delete(&tmr),
			rpma_mr_dereg(&rmr), rpma_mr_dereg(&smr),
			rpma_peer_delete(&peer));
	free(rbuf);
	free(sbuf);
	return 0;
}

/* _i: 0 two rpmads, 1 two rpmads with receive CQs, 2 one rpmad + RCQ */
START_TEST(test_messages)
{
	struct msg_opts o = { .rcq = _i ? 4 : 0 };
	it_pair_test(_i == 2 ? 1 : 2, msg_server, msg_client, &o);
}
END_TEST

/*
 * A send completes before an answer to it can arrive. On a NIC the
 * responder's hardware acknowledges a message before the responder's
 * program can even see it, and programs count on that: fio's GPSPM server
 * keeps room for one received message per answer it waits to complete.
 * Both sides check it in every round, waiting as fio does (spinning on
 * rpma_cq_get_wc) and as a program that sleeps in rpma_cq_wait.
 */
struct answer_opts {
	bool spin;
	int rounds;
};

/* The next completion, by spinning or by rpma_cq_wait. */
static void
next_wc(struct rpma_cq *cq, struct ibv_wc *wc, bool spin)
{
	uint64_t end = it_now_ms() + IT_WAIT_MS;
	int ret;
	while ((ret = rpma_cq_get_wc(cq, 1, wc, NULL)) ==
			RPMA_E_NO_COMPLETION && it_now_ms() < end) {
		if (!spin) {
			ret = rpma_cq_wait(cq);
			IT_ASSERT_MSG(ret == 0 || ret == RPMA_E_NO_COMPLETION,
					"rpma_cq_wait: %s", rpma_err_2str(ret));
		}
	}
	IT_ASSERT_MSG(ret == 0, "no completion within %d ms: %s", IT_WAIT_MS,
			rpma_err_2str(ret));
	IT_ASSERT_MSG(wc->status == IBV_WC_SUCCESS, "wr_id %#llx: status %s",
			(unsigned long long)wc->wr_id,
			ibv_wc_status_str(wc->status));
}

/*
 * `rounds` messages of the first speaker, each answered by the other
 * side; 0x4001 is a side's send, 0x4002 its receive. Each side has posted
 * one receive before the first message; it posts the next before it sends
 * (so no message waits for one) and none after the last, so that closing
 * flushes nothing.
 */
static void
send_then_answer(struct rpma_conn *conn, struct rpma_cq *cq,
		struct rpma_mr_local *mr, bool first_speaks,
		const struct answer_opts *o)
{
	struct ibv_wc wc;
	uint64_t t0 = it_now_ms();
	for (int i = 0; i < o->rounds; i++) {
		bool more = i + 1 < o->rounds;
		if (!first_speaks) {
			/* the other side's message, then our answer to it */
			next_wc(cq, &wc, o->spin);
			IT_EQ(wc.wr_id, 0x4002);
			if (more)
				IT_OK(rpma_recv(conn, mr, 64, 8,
						(void *)0x4002));
		}
		IT_OK(rpma_send(conn, mr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
				(void *)0x4001));
		next_wc(cq, &wc, o->spin);
		IT_ASSERT_MSG(wc.wr_id == 0x4001, "round %d: the answer came "
				"before the send it answers completed", i);
		if (first_speaks) {
			next_wc(cq, &wc, o->spin);
			IT_EQ(wc.wr_id, 0x4002);
			if (more)
				IT_OK(rpma_recv(conn, mr, 64, 8,
						(void *)0x4002));
		}
	}
	(void) fprintf(stderr, "send_then_answer (%s): %d rounds in %llu ms\n",
			o->spin ? "spinning" : "rpma_cq_wait", o->rounds,
			(unsigned long long)(it_now_ms() - t0));
}

static int
answer_server(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(MSG_BUF);
	struct rpma_mr_local *mr = IT_REG(peer, buf, MSG_BUF,
			RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	IT_OK(rpma_recv(conn, mr, 64, 8, (void *)0x4002));
	IT_EQ(it_tell(IT_CLIENT, IT_TAG_GO, NULL, 0), 0);
	send_then_answer(conn, cq, mr, false, arg);
	it_server_end(&conn, &mr, &ep, &peer, buf);
	return 0;
}

static int
answer_client(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(MSG_BUF);
	struct rpma_mr_local *mr = IT_REG(peer, buf, MSG_BUF,
			RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	IT_OK(rpma_recv(conn, mr, 64, 8, (void *)0x4002));
	(void) it_expect(IT_TAG_GO, NULL, 0);
	send_then_answer(conn, cq, mr, true, arg);
	it_close(&conn);
	IT_OK(rpma_mr_dereg(&mr));
	IT_OK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

/*
 * _i: bit 0 one rpmad (else two), bit 1 spinning (else rpma_cq_wait).
 * Over rxe in the VM a round takes milliseconds, and over 100 ms when
 * both sides spin (docs/benchmarks.md, "fio's librpma engines"): fewer
 * rounds there keep the test within its time on a loaded host.
 */
START_TEST(test_send_completes_before_its_answer)
{
	struct answer_opts o = { .spin = _i & 2, .rounds = 500 };
	if (it_transport_is("verbs"))
		o.rounds = o.spin ? 10 : 100;
	it_pair_test(_i & 1 ? 1 : 2, answer_server, answer_client, &o);
}
END_TEST

/*
 * Large messages into a private receive buffer, one after another: the
 * library copies a message out of its staging while the rest arrives
 * (common/qp_region.h, rq_filled) and the rest at the completion. Each
 * message has its own bytes and length, and lands at an odd offset of a
 * receive longer than it: the buffer must hold exactly the message, and
 * nothing after it may change, whatever was copied early. More rounds
 * than the RQ has slots, so that receive indices come round again.
 */
#define BIG_MSG (1u << 20)
#define BIG_BUF (BIG_MSG + 8192)
#define BIG_OFF 100
#define BIG_ROUNDS 20

struct big_opts {
	bool spin;
};

static uint32_t
big_len(int round)
{
	return BIG_MSG - (uint32_t) round * 4099u;
}

static int
big_server(const struct it_env *env, void *arg)
{
	const struct big_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(BIG_BUF);
	struct rpma_mr_local *mr =
			IT_REG(peer, buf, BIG_BUF, RPMA_MR_USAGE_RECV);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	unsigned early = 0;
	for (int r = 0; r < BIG_ROUNDS; r++) {
		uint32_t len = big_len(r);
		it_fill(buf, BIG_BUF, 1000u + (uint32_t) r);
		IT_OK(rpma_recv(conn, mr, BIG_OFF, BIG_BUF - BIG_OFF,
				(void *) 0x5002));
		IT_EQ(it_tell(IT_CLIENT, IT_TAG_GO, NULL, 0), 0);
		uint8_t before = buf[BIG_OFF];
		bool seen = false;
		struct ibv_wc wc;
		uint64_t end = it_now_ms() + IT_WAIT_MS;
		int ret;
		while ((ret = rpma_cq_get_wc(cq, 1, &wc, NULL)) ==
						RPMA_E_NO_COMPLETION &&
				it_now_ms() < end) {
			seen = seen || buf[BIG_OFF] != before;
			if (!o->spin) {
				ret = rpma_cq_wait(cq);
				IT_ASSERT(ret == 0 ||
						ret == RPMA_E_NO_COMPLETION);
			}
		}
		IT_ASSERT_MSG(ret == 0, "round %d: no completion: %s", r,
				rpma_err_2str(ret));
		early += seen;
		IT_EQ(wc.status, IBV_WC_SUCCESS);
		IT_EQ(wc.wr_id, 0x5002);
		IT_EQ(wc.byte_len, len);
		long bad = it_check(buf + BIG_OFF, len, (uint32_t) r + 1);
		IT_ASSERT_MSG(bad == -1, "round %d: byte %ld of the message", r,
				bad);
		/* before and after the message: as filled */
		uint8_t *expect = it_alloc(BIG_BUF);
		it_fill(expect, BIG_BUF, 1000u + (uint32_t) r);
		IT_EQ(memcmp(buf, expect, BIG_OFF), 0);
		IT_ASSERT_MSG(memcmp(buf + BIG_OFF + len,
					      expect + BIG_OFF + len,
					      BIG_BUF - BIG_OFF - len) == 0,
				"round %d: bytes after the message changed", r);
		free(expect);
	}
	(void) fprintf(stderr,
			"big messages (%s): %u of %d had bytes in "
			"the buffer before their completion\n",
			o->spin ? "spinning" : "rpma_cq_wait", early,
			BIG_ROUNDS);
	it_server_end(&conn, &mr, &ep, &peer, buf);
	return 0;
}

static int
big_client(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(BIG_MSG);
	struct rpma_mr_local *mr =
			IT_REG(peer, buf, BIG_MSG, RPMA_MR_USAGE_SEND);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	for (int r = 0; r < BIG_ROUNDS; r++) {
		uint32_t len = big_len(r);
		it_fill(buf, len, (uint32_t) r + 1);
		(void) it_expect(IT_TAG_GO, NULL, 0);
		IT_OK(rpma_send(conn, mr, 0, len, RPMA_F_COMPLETION_ALWAYS,
				(void *) 0x5001));
		struct ibv_wc wc;
		it_wc_ok(conn, cq, 0x5001, IBV_WC_SEND, &wc);
	}
	it_close(&conn);
	IT_OK(rpma_mr_dereg(&mr));
	IT_OK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

/* _i: bit 0 one rpmad (else two), bit 1 spinning (else rpma_cq_wait) */
START_TEST(test_large_messages)
{
	struct big_opts o = { .spin = _i & 2 };
	it_pair_test(_i & 1 ? 1 : 2, big_server, big_client, &o);
}
END_TEST

int
main(void)
{
	const struct th_test tc_ops[] = { TH_LOOP(test_rma, 0, 2),
		TH_TEST(test_atomic_write_is_one_store),
		TH_TEST(test_flush_persistent), TH_LOOP(test_messages, 0, 3),
		TH_LOOP(test_send_completes_before_its_answer, 0, 4),
		TH_LOOP(test_large_messages, 0, 4), TH_END };
	const struct th_tcase tcases[] = {
		{ "ops", .steps = tc_ops, .create = it_tcase_create },
	};
	return check_run(th_suite("integration: operations", tcases,
					 TH_N(tcases)),
			CK_ENV);
}
