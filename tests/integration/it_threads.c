// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_threads.c -- several threads posting on one connection: 4 threads
 * write disjoint ranges with RPMA_F_COMPLETION_ALWAYS through a send
 * queue smaller than their work (so they meet "queue full" and retry),
 * while one or two threads reap completions in batches. Every byte must
 * arrive and every wr_id complete exactly once.
 */

#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "th_suite.h"

enum { TAG_CHECK = 100, TAG_CHECKED };

#define WRITERS 4
#define PER_WRITER 64
#define CHUNK 256
#define TOTAL (WRITERS * PER_WRITER)
#define AREA (TOTAL * CHUNK)
#define QUEUE 16	/* sq and cq size: well below TOTAL */
/* Bound of the whole exchange (a hang becomes a failure). */
#define WORK_MS (2 * IT_WAIT_MS)

static uint32_t
chunk_seed(int w, int i)
{
	return (uint32_t)(w * 1000 + i + 1);
}

static size_t
chunk_off(int w, int i)
{
	return ((size_t)w * PER_WRITER + (size_t)i) * CHUNK;
}

static uint64_t
chunk_ctx(int w, int i)
{
	return ((uint64_t)w << 16 | (uint64_t)i) + 1;
}

static int
threads_server(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(AREA);
	struct rpma_mr_local *mr = IT_REG(peer, buf, AREA,
			RPMA_MR_USAGE_WRITE_DST |
					RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, NULL);

	(void) it_expect(TAG_CHECK, NULL, 0);
	for (int w = 0; w < WRITERS; w++) {
		for (int i = 0; i < PER_WRITER; i++) {
			long bad = it_check(buf + chunk_off(w, i), CHUNK,
					chunk_seed(w, i));
			IT_ASSERT_MSG(bad < 0, "writer %d, write %d: byte %ld "
					"differs", w, i, bad);
		}
	}
	IT_EQ(it_tell(IT_CLIENT, TAG_CHECKED, NULL, 0), 0);

	it_server_end(&conn, &mr, &ep, &peer, buf);
	return 0;
}

struct shared_conn {
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct rpma_mr_local *mr;
	struct rpma_mr_remote *rmr;
	uint32_t qp_num;
	uint64_t deadline;
	int reaped;			/* completions taken, all reapers */
	int seen[WRITERS][PER_WRITER];	/* per wr_id */
	int full_retries;
};

struct writer {
	struct shared_conn *sc;
	int w;
	pthread_t th;
};

static void *
write_all(void *arg)
{
	struct writer *wr = arg;
	struct shared_conn *sc = wr->sc;
	for (int i = 0; i < PER_WRITER; i++) {
		size_t off = chunk_off(wr->w, i);
		for (;;) {
			int ret = rpma_write(sc->conn, sc->rmr, off, sc->mr,
					off, CHUNK, RPMA_F_COMPLETION_ALWAYS,
					(void *)(uintptr_t)chunk_ctx(wr->w, i));
			if (ret == 0)
				break;
			/* a full send queue: the reaper frees slots */
			IT_ASSERT_MSG(ret == RPMA_E_PROVIDER, "rpma_write: %s",
					rpma_err_2str(ret));
			IT_ASSERT_MSG(it_now_ms() < sc->deadline, "writer %d "
					"stuck at write %d", wr->w, i);
			__atomic_fetch_add(&sc->full_retries, 1,
					__ATOMIC_RELAXED);
			sched_yield();
		}
	}
	return NULL;
}

struct reaper {
	struct shared_conn *sc;
	pthread_t th;
};

static void *
reap(void *arg)
{
	struct reaper *r = arg;
	struct shared_conn *sc = r->sc;
	while (__atomic_load_n(&sc->reaped, __ATOMIC_RELAXED) < TOTAL) {
		IT_ASSERT_MSG(it_now_ms() < sc->deadline, "only %d of %d "
				"completions", sc->reaped, TOTAL);
		struct ibv_wc wc[4];
		int got = 0;
		int ret = rpma_cq_get_wc(sc->cq, 4, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION) {
			sched_yield();
			continue;
		}
		IT_ASSERT_MSG(ret == 0, "rpma_cq_get_wc: %s",
				rpma_err_2str(ret));
		IT_ASSERT(got >= 1 && got <= 4);
		for (int k = 0; k < got; k++) {
			IT_ASSERT_MSG(wc[k].status == IBV_WC_SUCCESS, "status "
					"%s", ibv_wc_status_str(wc[k].status));
			IT_EQ(wc[k].opcode, IBV_WC_RDMA_WRITE);
			IT_EQ(wc[k].qp_num, sc->qp_num);
			uint64_t id = wc[k].wr_id - 1;
			uint64_t w = id >> 16, i = id & 0xffff;
			IT_ASSERT_MSG(w < WRITERS && i < PER_WRITER, "wr_id "
					"%#llx", (unsigned long long)wc[k].wr_id);
			int n = __atomic_fetch_add(&sc->seen[w][i], 1,
					__ATOMIC_RELAXED);
			IT_ASSERT_MSG(n == 0, "wr_id %#llx completed twice",
					(unsigned long long)wc[k].wr_id);
		}
		__atomic_fetch_add(&sc->reaped, got, __ATOMIC_RELAXED);
	}
	return NULL;
}

struct threads_opts {
	int reapers;
};

static int
threads_client(const struct it_env *env, void *arg)
{
	const struct threads_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(AREA);
	for (int w = 0; w < WRITERS; w++) {
		for (int i = 0; i < PER_WRITER; i++)
			it_fill(buf + chunk_off(w, i), CHUNK, chunk_seed(w, i));
	}
	struct shared_conn *sc = calloc(1, sizeof(*sc));
	IT_ASSERT(sc != NULL);
	IT_OK(rpma_mr_reg(peer, buf, AREA, RPMA_MR_USAGE_WRITE_SRC, &sc->mr));
	struct rpma_conn_cfg *cfg = NULL;
	IT_OK(rpma_conn_cfg_new(&cfg));
	IT_OK(rpma_conn_cfg_set_sq_size(cfg, QUEUE));
	IT_OK(rpma_conn_cfg_set_cq_size(cfg, QUEUE));
	sc->conn = it_connect(peer, env, cfg, NULL);
	IT_OK(rpma_conn_get_cq(sc->conn, &sc->cq));
	IT_OK(rpma_conn_get_qp_num(sc->conn, &sc->qp_num));
	struct it_desc desc;
	it_expect_desc(&desc);
	sc->rmr = it_desc_mr(&desc);
	sc->deadline = it_now_ms() + WORK_MS;
	/* every retry on a full queue would be logged */
	IT_OK(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED));
	IT_OK(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
			RPMA_LOG_DISABLED));

	struct reaper reapers[2];
	struct writer writers[WRITERS];
	for (int r = 0; r < o->reapers; r++) {
		reapers[r].sc = sc;
		IT_EQ(pthread_create(&reapers[r].th, NULL, reap, &reapers[r]),
				0);
	}
	for (int w = 0; w < WRITERS; w++) {
		writers[w].sc = sc;
		writers[w].w = w;
		IT_EQ(pthread_create(&writers[w].th, NULL, write_all,
				&writers[w]), 0);
	}
	for (int w = 0; w < WRITERS; w++)
		IT_EQ(pthread_join(writers[w].th, NULL), 0);
	for (int r = 0; r < o->reapers; r++)
		IT_EQ(pthread_join(reapers[r].th, NULL), 0);

	IT_OK(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
			RPMA_LOG_LEVEL_WARNING));
	(void) fprintf(stderr, "it_threads: %d reaper(s), %d posts met a "
			"full send queue\n", o->reapers, sc->full_retries);
	IT_EQ(sc->reaped, TOTAL);
	for (int w = 0; w < WRITERS; w++) {
		for (int i = 0; i < PER_WRITER; i++)
			IT_EQ(sc->seen[w][i], 1);
	}
	struct ibv_wc wc;
	IT_ERR(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(sc->cq, 1, &wc, NULL));
	IT_OK(rpma_flush(sc->conn, sc->rmr, 0, AREA, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, (void *)0xf1));
	it_wc_ok(sc->conn, sc->cq, 0xf1, IBV_WC_RDMA_READ, &wc);
	IT_EQ(it_tell(IT_SERVER, TAG_CHECK, NULL, 0), 0);
	(void) it_expect(TAG_CHECKED, NULL, 0);

	it_close(&sc->conn);
	IT_OKS(rpma_conn_cfg_delete(&cfg), rpma_mr_remote_delete(&sc->rmr),
			rpma_mr_dereg(&sc->mr), rpma_peer_delete(&peer));
	free(sc);
	free(buf);
	return 0;
}

/* _i + 1 reaper threads */
START_TEST(test_concurrent_writers)
{
	struct threads_opts o = { .reapers = _i + 1 };
	it_pair_test(2, threads_server, threads_client, &o);
}
END_TEST

int
main(void)
{
	const struct th_test tc_threads[] = {
		TH_LOOP(test_concurrent_writers, 0, 2), TH_END
	};
	const struct th_tcase tcases[] = {
		{ "threads", .steps = tc_threads, .create = it_tcase_create },
	};
	return check_run(th_suite("integration: threads", tcases, TH_N(tcases)),
			CK_ENV);
}
