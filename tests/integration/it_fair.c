// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_fair.c -- rpmad arbitrates between connections: with a big operation
 * of one connection and a small one of another queued at once, the small
 * one completes between slices of the big one, not after it -- across two
 * rpmads and on one (memory to memory); the big one a 64 MiB write, or a
 * persistent flush of 64 MiB of a page-cache file just written (rpmad
 * writes it back in a thread of its own, off its loop)
 *
 * Queued at once: the client stops its rpmad (SIGSTOP) while it posts
 * both, so that rpmad finds both when it goes on; and stops it again the
 * moment the small one's completion is there, so that what the big one's
 * connection has completed by then can be looked at without a race. No
 * time is measured: the big write is 64 MiB, a thousand slices, and must
 * not have completed; nor the flush, which waits for the disk.
 *
 * And a user's max_bandwidth holds (test_bandwidth_cap); and rpmad tells a
 * client whose work waits behind another user's bulk, so that its waits
 * sleep rather than spin (test_contended_told).
 */

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"
#include "qp_region.h"
#include "th_suite.h"

#define BIG_LEN (64u << 20)
#define SMALL_OFF BIG_LEN	/* the small write lands after the big one */
#define REG_LEN (BIG_LEN + 4096)
#define SEED_BIG 71
#define SEED_SMALL 72

/*
 * The big operation: a write, a persistent flush, or writes of another
 * user (the third role) over and over
 */
enum big { BIG_WRITE, BIG_PERSIST, BIG_OTHER_USER };

static int
server(const struct it_env *env, void *arg)
{
	enum big big_op = *(const enum big *)arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct it_pmem pm;
	uint8_t *buf;
	if (big_op == BIG_PERSIST) {
		/* a file of the page cache, all of it dirty */
		it_pmem_map(env, REG_LEN, &pm);
		buf = pm.ptr;
		it_fill(buf, BIG_LEN, SEED_BIG);
	} else {
		buf = it_alloc(REG_LEN);
	}
	int usage = RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
	if (big_op == BIG_PERSIST)
		usage |= RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	struct rpma_mr_local *mr = IT_REG(peer, buf, REG_LEN, usage);
	struct rpma_peer_cfg *pcfg = NULL;
	IT_OK(rpma_peer_cfg_new(&pcfg));
	IT_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	struct rpma_ep *ep = it_listen(peer, env);
	if (big_op == BIG_OTHER_USER)
		IT_EQ(it_tell(IT_THIRD, IT_TAG_LISTENING, NULL, 0), 0);
	struct rpma_conn *big = it_accept_next(ep, NULL, NULL);
	struct rpma_conn *small = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, pcfg);
	if (big_op == BIG_OTHER_USER)
		it_send_desc(IT_THIRD, mr, pcfg);

	it_await_close(&big);
	it_await_close(&small);
	IT_EQ(it_check(buf, BIG_LEN, SEED_BIG), -1);
	IT_EQ(it_check(buf + SMALL_OFF, 8, SEED_SMALL), -1);
	IT_OKS(rpma_ep_shutdown(&ep), rpma_peer_cfg_delete(&pcfg),
			rpma_mr_dereg(&mr), rpma_peer_delete(&peer));
	if (big_op == BIG_PERSIST)
		it_pmem_unmap(&pm);
	else
		free(buf);
	return 0;
}

/* The process's state letter in /proc/PID/stat ('T': stopped). */
static char
proc_state(pid_t pid)
{
	char path[64], line[512];
	(void) snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return '?';
	size_t n = fread(line, 1, sizeof(line) - 1, f);
	(void) fclose(f);
	line[n] = '\0';
	const char *p = strrchr(line, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Stops rpmad and waits until it is stopped (bounded). */
static void
freeze(pid_t pid)
{
	IT_EQ(kill(pid, SIGSTOP), 0);
	for (int i = 0; i < IT_WAIT_MS && proc_state(pid) != 'T'; i++)
		it_sleep_ms(1);
	if (proc_state(pid) != 'T') {
		(void) kill(pid, SIGCONT);
		IT_ASSERT_MSG(0, "rpmad %d did not stop", (int)pid);
	}
}

/* The client's side of the pair: its memory and the two connections. */
struct pair {
	struct rpma_peer *peer;
	uint8_t *buf;
	struct rpma_mr_local *mr;
	struct rpma_conn *big, *small;
	struct rpma_cq *big_cq, *small_cq;
	struct rpma_mr_remote *rmr;
};

/* Both connections, or only the small one (the big one another's). */
static void
pair_open(const struct it_env *env, struct pair *p, bool with_big)
{
	*p = (struct pair){ 0 };
	p->peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	p->buf = it_alloc(REG_LEN);
	if (with_big)
		it_fill(p->buf, BIG_LEN, SEED_BIG);
	it_fill(p->buf + SMALL_OFF, 8, SEED_SMALL);
	IT_OK(rpma_mr_reg(p->peer, p->buf, REG_LEN, RPMA_MR_USAGE_WRITE_SRC,
			&p->mr));
	if (with_big) {
		p->big = it_connect(p->peer, env, NULL, NULL);
		p->small = it_connect_to(p->peer, env->port, NULL, NULL);
	} else {
		p->small = it_connect(p->peer, env, NULL, NULL);
	}
	struct it_desc desc;
	it_expect_desc(&desc);
	p->rmr = it_desc_mr(&desc);
	if (with_big) {
		struct rpma_peer_cfg *pcfg = NULL;
		IT_OK(rpma_peer_cfg_from_descriptor(desc.pcfg, desc.pcfg_len,
				&pcfg));
		IT_OK(rpma_conn_apply_remote_peer_cfg(p->big, pcfg));
		IT_OK(rpma_peer_cfg_delete(&pcfg));
		IT_OK(rpma_conn_get_cq(p->big, &p->big_cq));
	}
	IT_OK(rpma_conn_get_cq(p->small, &p->small_cq));
}

static void
pair_close(struct pair *p)
{
	if (p->big)
		it_close(&p->big);
	it_close(&p->small);
	IT_OKS(rpma_mr_remote_delete(&p->rmr), rpma_mr_dereg(&p->mr),
			rpma_peer_delete(&p->peer));
	free(p->buf);
}

static int
client(const struct it_env *env, void *arg)
{
	enum big big_op = *(const enum big *)arg;
	pid_t rpmad = env->cli->pid;
	struct pair p;
	pair_open(env, &p, true);
	struct rpma_conn *big = p.big, *small = p.small;
	struct rpma_cq *big_cq = p.big_cq, *small_cq = p.small_cq;
	struct rpma_mr_local *mr = p.mr;
	struct rpma_mr_remote *rmr = p.rmr;

	/* both queued before rpmad takes either: the big one first */
	freeze(rpmad);
	int big_posted = big_op == BIG_PERSIST ?
		rpma_flush(big, rmr, 0, BIG_LEN, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, (void *)0xb1) :
		rpma_write(big, rmr, 0, mr, 0, BIG_LEN,
				RPMA_F_COMPLETION_ALWAYS, (void *)0xb1);
	int small_posted = rpma_write(small, rmr, SMALL_OFF, mr, SMALL_OFF, 8,
			RPMA_F_COMPLETION_ALWAYS, (void *)0x51);
	IT_EQ(kill(rpmad, SIGCONT), 0);
	IT_OK(big_posted);
	IT_OK(small_posted);

	/* the small one's completion, and rpmad stopped the moment it is */
	struct ibv_wc wc;
	int ret;
	uint64_t end = it_now_ms() + IT_WAIT_MS;
	while ((ret = rpma_cq_get_wc(small_cq, 1, &wc, NULL)) ==
			RPMA_E_NO_COMPLETION && it_now_ms() < end)
		;
	freeze(rpmad);
	struct ibv_wc big_wc;
	int big_ret = rpma_cq_get_wc(big_cq, 1, &big_wc, NULL);
	/* on before any verdict: a stopped rpmad would outlive the test */
	IT_EQ(kill(rpmad, SIGCONT), 0);
	IT_OK(ret);
	IT_EQ(wc.status, IBV_WC_SUCCESS);
	IT_EQ(wc.wr_id, 0x51);
	/* the big one was under way, not done */
	IT_EQ(big_ret, RPMA_E_NO_COMPLETION);

	it_wc_ok(big, big_cq, 0xb1, big_op == BIG_PERSIST ? IBV_WC_RDMA_READ :
			IBV_WC_RDMA_WRITE, &wc);
	pair_close(&p);
	return 0;
}

/*
 * A user capped at CAP_RATE (rpmad.conf max_bandwidth) moves its 64 MiB
 * write no faster than the cap allows, alone on its rpmads: a lower bound
 * of time, which a loaded machine only makes easier to meet. The small
 * write and the server's check of every byte are the pair's as above.
 */
#define CAP_RATE_TEXT "16M"
#define CAP_RATE (16u << 20)

static int
capped_client(const struct it_env *env, void *arg)
{
	(void) arg;
	struct pair p;
	pair_open(env, &p, true);
	uint64_t t0 = it_now_ms();
	IT_OK(rpma_write(p.big, p.rmr, 0, p.mr, 0, BIG_LEN,
			RPMA_F_COMPLETION_ALWAYS, (void *)0xb1));
	IT_OK(rpma_write(p.small, p.rmr, SMALL_OFF, p.mr, SMALL_OFF, 8,
			RPMA_F_COMPLETION_ALWAYS, (void *)0x51));
	struct ibv_wc wc;
	it_wc_ok(p.small, p.small_cq, 0x51, IBV_WC_RDMA_WRITE, &wc);
	it_wc_ok(p.big, p.big_cq, 0xb1, IBV_WC_RDMA_WRITE, &wc);
	uint64_t took = it_now_ms() - t0;
	/* a burst of 20 ms of the rate passes at once, the rest at the rate */
	uint64_t least = (uint64_t)(BIG_LEN - CAP_RATE / 50) * 1000 / CAP_RATE;
	IT_ASSERT_MSG(took >= least - least / 10, "64 MiB in %llu ms: faster "
			"than max_bandwidth = " CAP_RATE_TEXT " allows (%llu ms)",
			(unsigned long long)took, (unsigned long long)least);
	pair_close(&p);
	return 0;
}

/*
 * The other user's writer (the third role): 64 MiB writes one after
 * another from its own connection, until the client says stop.
 */
#define TAG_STOP 100
#define TAG_STOPPED 101

static int
other_user_writer(const struct it_env *env, void *arg)
{
	(void) arg;
	/* dumpable: rpmad reaches its memory as it reaches root's */
	it_become_nobody(true);
	struct rpma_peer *peer = it_peer(IT_ADDR,
			RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(BIG_LEN);
	it_fill(buf, BIG_LEN, SEED_BIG);
	struct rpma_mr_local *mr =
			IT_REG(peer, buf, BIG_LEN, RPMA_MR_USAGE_WRITE_SRC);
	struct rpma_mr_remote *rmr;
	struct rpma_cq *cq;
	struct rpma_conn *conn = it_connect_mr(peer, env, &rmr, &cq);
	do {
		IT_OK(rpma_write(conn, rmr, 0, mr, 0, BIG_LEN,
				RPMA_F_COMPLETION_ALWAYS, (void *)0xb1));
		struct ibv_wc wc;
		it_wc_ok(conn, cq, 0xb1, IBV_WC_RDMA_WRITE, &wc);
	} while (it_hear(TAG_STOP, NULL, 0, 0) < 0);
	it_client_end(&conn, &rmr, &mr, &peer, buf);
	IT_EQ(it_tell(IT_CLIENT, TAG_STOPPED, NULL, 0), 0);
	return 0;
}

/* The header of the one queue pair region this process maps. */
static const struct qp_region_header *
region_header(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	IT_ASSERT(f != NULL);
	char line[512];
	const struct qp_region_header *hdr = NULL;
	while (hdr == NULL && fgets(line, sizeof(line), f)) {
		unsigned long start, offset;
		if (strstr(line, "memfd:rpmad-qp") != NULL &&
				sscanf(line, "%lx-%*x %*s %lx", &start,
				&offset) == 2 && offset == 0)
			hdr = (const struct qp_region_header *)start;
	}
	(void) fclose(f);
	IT_ASSERT_MSG(hdr != NULL, "no queue pair region in /proc/self/maps");
	IT_EQ(hdr->magic, QP_REGION_MAGIC);
	return hdr;
}

/* One 8 B write, waited for; then what rpmad said when it took it. */
static uint32_t
small_write_contended(struct pair *p, const struct qp_region_header *hdr)
{
	IT_OK(rpma_write(p->small, p->rmr, SMALL_OFF, p->mr, SMALL_OFF, 8,
			RPMA_F_COMPLETION_ALWAYS, (void *)0x51));
	struct ibv_wc wc;
	it_wc_ok(p->small, p->small_cq, 0x51, IBV_WC_RDMA_WRITE, &wc);
	return atomic_load(&hdr->contended);
}

/*
 * The client (root) writes 8 B at a time beside the other user's bulk:
 * rpmad must say "contended" at some write (not at every one: the other
 * user's turns come and go); and, once the other user has gone and
 * rpmad's memory of it has passed (FAIRQ_CONTENDED_NS, 1 ms; we wait
 * 50), no more.
 */
static int
contended_client(const struct it_env *env, void *arg)
{
	(void) arg;
	struct pair p;
	pair_open(env, &p, false);
	const struct qp_region_header *hdr = region_header();

	bool seen = false;
	uint64_t end = it_now_ms() + IT_WAIT_MS;
	while (!seen && it_now_ms() < end)
		seen = small_write_contended(&p, hdr) != 0;
	IT_ASSERT_MSG(seen, "rpmad never said our write waited behind "
			"another user's bulk");

	IT_EQ(it_tell(IT_THIRD, TAG_STOP, NULL, 0), 0);
	(void) it_expect(TAG_STOPPED, NULL, 0);
	it_sleep_ms(50);
	IT_EQ(small_write_contended(&p, hdr), 0);
	pair_close(&p);
	return 0;
}

/* over RDMA the NIC arbitrates, and flushes: rpmad's turns are tcp's */
#define TCP_ONLY() do { \
	if (!it_transport_is("tcp")) \
		return; \
} while (0)

START_TEST(test_small_between_slices)
{
	TCP_ONLY();
	enum big big_op = BIG_WRITE;
	it_pair_test(_i + 1, server, client, &big_op);
}
END_TEST

START_TEST(test_small_beside_a_persist)
{
	TCP_ONLY();
	enum big big_op = BIG_PERSIST;
	it_pair_test(_i + 1, server, client, &big_op);
}
END_TEST

START_TEST(test_bandwidth_cap)
{
	TCP_ONLY();
	enum big big_op = BIG_WRITE;
	it_pair_test_cfg(_i + 1, "max_bandwidth = " CAP_RATE_TEXT "\n",
			server, capped_client, &big_op);
}
END_TEST

START_TEST(test_contended_told)
{
	TCP_ONLY();
	if (geteuid() != 0)
		return;	/* the other user needs root to become */
	struct it_env env;
	ck_assert_int_eq(it_env_start_nobody(&env, _i + 1), 0);
	enum big big_op = BIG_OTHER_USER;
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv, server,
			&big_op), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_THIRD, &env, env.cli,
			other_user_writer, NULL), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			contended_client, NULL), 0);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

int
main(void)
{
	/* 1: both ends on one rpmad (memory to memory); 2: two rpmads */
	const struct th_test tc_fair[] = { TH_LOOP(test_small_between_slices, 0,
							   2),
		TH_LOOP(test_small_beside_a_persist, 0, 2),
		TH_LOOP(test_bandwidth_cap, 0, 2),
		TH_LOOP(test_contended_told, 0, 2), TH_END };
	const struct th_tcase tcases[] = {
		{ "fair", .steps = tc_fair, .create = it_tcase_create },
	};
	return check_run(th_suite("integration: arbitration", tcases,
					 TH_N(tcases)),
			CK_ENV);
}
