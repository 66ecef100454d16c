// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_cleanup.c -- a client that goes away in the middle of its work: rpmad
 * releases everything it owned (peers, registrations, endpoints, requests,
 * connections, pinned bytes; its descriptors and mappings in the daemon)
 * while another client of the same rpmad keeps working, and the victim's
 * partner on the other host sees its connection lost.
 *
 * Daemon A (inspected) serves the victim V and the survivor W; daemon B
 * serves their partners P and S. The parent asks A over the admin
 * protocol what it holds and looks at /proc/<rpmad>/fd and maps.
 */

#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "footprint.h"
#include "itest.h"
#include "th_suite.h"

enum { TAG_BUSY = 100, TAG_SURVIVOR_UP, TAG_SURVIVOR_DONE, TAG_EXIT,
	TAG_PARTNER_UP };

enum victim_end {
	KILL_ACTIVE,	/* V connected to P, SIGKILLed */
	KILL_PASSIVE,	/* P connected to V, SIGKILLed */
	EXIT_ACTIVE,	/* V connected to P, exits without releasing */
	VICTIM_ENDS
};

struct cleanup_opts {
	enum victim_end end;
	char port_s[16];	/* S listens here for W */
	char port_v[16];	/* V's own endpoint */
};

#define VICTIM_MRS 3
#define BIG (1 << 20)
#define PM_SIZE 65536
/* How long rpmad gets to release what a vanished client held. */
#define RELEASE_MS IT_WAIT_MS

/* ------------------------------------------------ survivor W and S */

static void
round_trip(struct rpma_conn *conn, struct rpma_cq *cq, struct rpma_mr_local *mr,
		uint8_t *buf, struct rpma_mr_remote *rmr, uint32_t seed)
{
	struct ibv_wc wc;
	it_fill(buf, 2048, seed);
	IT_OK(rpma_write(conn, rmr, 0, mr, 0, 2048, RPMA_F_COMPLETION_ALWAYS,
			(void *)1));
	it_wc_ok(conn, cq, 1, IBV_WC_RDMA_WRITE, &wc);
	memset(buf + 2048, 0, 2048);
	IT_OK(rpma_read(conn, mr, 2048, rmr, 0, 2048, RPMA_F_COMPLETION_ALWAYS,
			(void *)2));
	it_wc_ok(conn, cq, 2, IBV_WC_RDMA_READ, &wc);
	IT_EQ(it_check(buf + 2048, 2048, seed), -1);
}

static int
survivor(const struct it_env *env, void *arg)
{
	const struct cleanup_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(4096);
	struct rpma_mr_local *mr = IT_REG(peer, buf, 4096,
			RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
	(void) it_expect(IT_TAG_LISTENING, NULL, 0);
	struct rpma_conn *conn = it_connect_to(peer, o->port_s, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	struct it_desc desc;
	it_expect_desc(&desc);
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);

	round_trip(conn, cq, mr, buf, rmr, 1);
	IT_EQ(it_tell(IT_PARENT, TAG_SURVIVOR_UP, NULL, 0), 0);
	/* the victim comes and goes meanwhile */
	IT_ASSERT(it_hear(IT_TAG_GO, NULL, 0, IT_ROLE_MS) == 0);
	round_trip(conn, cq, mr, buf, rmr, 2);
	IT_EQ(it_tell(IT_PARENT, TAG_SURVIVOR_DONE, NULL, 0), 0);

	it_client_end(&conn, &rmr, &mr, &peer, buf);
	return 0;
}

static int
survivor_partner(const struct it_env *env, void *arg)
{
	const struct cleanup_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(4096);
	struct rpma_mr_local *mr = IT_REG(peer, buf, 4096,
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC);
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, o->port_s, &ep));
	IT_EQ(it_tell(IT_THIRD, IT_TAG_LISTENING, NULL, 0), 0);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_THIRD, mr, NULL);

	/* W closes once the parent saw everything */
	enum rpma_conn_event ev = it_next_event(conn, IT_ROLE_MS);
	IT_EQ(ev, RPMA_CONN_CLOSED);
	IT_OKS(rpma_conn_disconnect(conn), rpma_conn_delete(&conn),
			rpma_mr_dereg(&mr), rpma_ep_shutdown(&ep),
			rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

/* ------------------------------------------------ victim V and P */

static int
victim(const struct it_env *env, void *arg)
{
	const struct cleanup_opts *o = arg;
	/*
	 * It listens, and connects unless it is the passive end: on RDMA the
	 * device that serves its address and the one that reaches the
	 * partner's may differ (a peer each), and the registrations belong
	 * to the connection's
	 */
	struct rpma_peer *lpeer = it_peer(IT_ADDR,
			RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_peer *peer = o->end == KILL_PASSIVE ? lpeer :
		it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);

	/* registrations of every kind of memory */
	uint8_t *heap = malloc(65536);
	IT_ASSERT(heap != NULL);
	uint8_t *big = it_alloc(BIG);
	int fd;
	void *pm = it_file_map(env, "victim.pmem", PM_SIZE, &fd);
	struct rpma_mr_local *mrs[VICTIM_MRS] = { NULL };
	IT_OK(rpma_mr_reg(peer, heap, 65536, RPMA_MR_USAGE_SEND, &mrs[0]));
	IT_OK(rpma_mr_reg(peer, big, BIG, RPMA_MR_USAGE_WRITE_SRC |
			RPMA_MR_USAGE_READ_DST, &mrs[1]));
	IT_OK(rpma_mr_reg(peer, pm, PM_SIZE, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mrs[2]));

	/* an endpoint, a connection, a request never connected */
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(lpeer, IT_ADDR, o->port_v, &ep));
	struct rpma_conn *conn;
	if (o->end == KILL_PASSIVE) {
		IT_EQ(it_tell(IT_SERVER, IT_TAG_LISTENING, NULL, 0), 0);
		struct rpma_conn_req *in = it_next_req(ep, NULL);
		conn = it_accept(&in, NULL);
	} else {
		conn = it_connect(peer, env, NULL, NULL);
	}
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_conn_req_new(peer, IT_ADDR, o->port_v, NULL, &req));

	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	struct it_desc desc;
	it_expect_desc(&desc);
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);

	/* busy until the end comes */
	uint64_t end = it_now_ms() + IT_ROLE_MS;
	for (uint32_t n = 1; it_now_ms() < end; n++) {
		struct ibv_wc wc;
		IT_OK(rpma_write(conn, rmr, 0, mrs[1], 0, 4096,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
		IT_OK(rpma_read(conn, mrs[1], 8192, rmr, 0, 4096,
				RPMA_F_COMPLETION_ALWAYS, (void *)1));
		it_wc_ok(conn, cq, 1, IBV_WC_RDMA_READ, &wc);
		if (n == 20)
			IT_EQ(it_tell(IT_PARENT, TAG_BUSY, NULL, 0), 0);
		if (o->end == EXIT_ACTIVE && n > 20 &&
				it_hear(TAG_EXIT, NULL, 0, 0) == 0)
			_exit(0);	/* releasing nothing */
	}
	IT_ASSERT_MSG(0, "the victim was not stopped");
	return 1;
}

static int
victim_partner(const struct it_env *env, void *arg)
{
	const struct cleanup_opts *o = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, o->end == KILL_PASSIVE ?
			RPMA_UTIL_IBV_CONTEXT_REMOTE :
			RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(65536);
	struct rpma_mr_local *mr = IT_REG(peer, buf, 65536,
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC);
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn;
	if (o->end == KILL_PASSIVE) {
		(void) it_expect(IT_TAG_LISTENING, NULL, 0);
		conn = it_connect_to(peer, o->port_v, NULL, NULL);
	} else {
		ep = it_listen(peer, env);
		struct rpma_conn_req *req = it_next_req(ep, NULL);
		conn = it_accept(&req, NULL);
	}
	it_send_desc(IT_CLIENT, mr, NULL);
	IT_EQ(it_tell(IT_PARENT, TAG_PARTNER_UP, NULL, 0), 0);

	enum rpma_conn_event ev = it_next_event(conn, IT_ROLE_MS);
	IT_ASSERT_MSG(ev == it_peer_gone_event(), "the victim's partner got %s",
			rpma_utils_conn_event_2str(ev));
	(void) rpma_conn_disconnect(conn);
	IT_OK(rpma_conn_delete(&conn));
	IT_OK(rpma_mr_dereg(&mr));
	if (ep)
		IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

/* ------------------------------------------------ the daemon's view */

/* _i: enum victim_end */
START_TEST(test_client_vanishes)
{
	struct cleanup_opts o = { .end = (enum victim_end)_i };
	struct it_env env;
	/* admin queries need root or an admin group: ours */
	char config[64];
	(void) snprintf(config, sizeof(config), "admin_groups = %u\n",
			(unsigned)getgid());
	ck_assert_int_eq(it_env_start_cfg(&env, 2, config), 0);
	ck_assert_int_eq(it_free_port(o.port_s, sizeof(o.port_s)), 0);
	ck_assert_int_eq(it_free_port(o.port_v, sizeof(o.port_v)), 0);
	struct test_daemon *a = &env.d[0], *b = &env.d[1];

	struct it_admin adm;
	ck_assert_int_eq(it_admin_open(&adm, a), 0);
	struct footprint empty, with_w, now;
	footprint_now(&adm, a->pid, &empty);
	ck_assert_int_eq(empty.counts.sessions, 0);

	/* the survivor first */
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_FOURTH, &env, b,
			survivor_partner, &o), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_THIRD, &env, a, survivor, &o),
			0);
	ck_assert_msg(it_group_hear(&g, TAG_SURVIVOR_UP, 1) == 0, "%s",
			it_report());
	footprint_now(&adm, a->pid, &with_w);
	ck_assert_int_eq(with_w.counts.sessions, 1);
	ck_assert_int_eq(with_w.counts.connections, 1);

	/* the victim at work */
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, b,
			victim_partner, &o), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, a, victim, &o),
			0);
	ck_assert_msg(it_group_hear(&g, TAG_PARTNER_UP, 1) == 0, "%s",
			it_report());
	ck_assert_msg(it_group_hear(&g, TAG_BUSY, 1) == 0, "%s", it_report());
	struct it_counts v;
	pid_t vpid = it_group_pid(&g, IT_CLIENT);
	ck_assert_int_eq(it_admin_client(&adm, vpid, &v), 1);
	/* a peer to listen and, unless passive, one to connect */
	ck_assert_int_eq(v.peers, o.end == KILL_PASSIVE ? 1 : 2);
	ck_assert_int_eq(v.mrs, VICTIM_MRS);
	ck_assert_int_eq(v.endpoints, 1);
	ck_assert_int_eq(v.connections, 1);
	ck_assert_uint_ge(v.conn_reqs, 1);
	ck_assert_uint_ge(v.pinned_bytes, BIG + PM_SIZE + 65536);
	footprint_now(&adm, a->pid, &now);
	ck_assert_int_eq(now.counts.sessions, 2);
	ck_assert_int_eq(now.counts.mrs, with_w.counts.mrs + VICTIM_MRS);
	ck_assert_int_gt(now.shared_maps, with_w.shared_maps);
	ck_assert_int_gt(now.fds, with_w.fds);

	/* it goes away mid-work */
	if (o.end == EXIT_ACTIVE) {
		ck_assert_int_eq(it_tell(IT_CLIENT, TAG_EXIT, NULL, 0), 0);
	} else {
		it_group_kill(&g, IT_CLIENT);
	}
	(void) footprint_expect(&adm, a->pid, &with_w, RELEASE_MS,
			"after the victim ended");
	ck_assert_int_eq(it_admin_client(&adm, vpid, &v), 0);

	/* the survivor still works; then everyone ends */
	ck_assert_int_eq(it_tell(IT_THIRD, IT_TAG_GO, NULL, 0), 0);
	ck_assert_msg(it_group_hear(&g, TAG_SURVIVOR_DONE, 1) == 0, "%s",
			it_report());
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	(void) footprint_expect(&adm, a->pid, &empty, RELEASE_MS,
			"after every client ended");
	it_admin_close(&adm);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ------------------------------------ file-backed registrations */

#define FILE_ROUNDS 3

static int
file_mr_client(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	int fd;
	void *pm = it_file_map(env, "file-mr.pmem", PM_SIZE, &fd);
	const int usage = RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	for (int i = 0; i < FILE_ROUNDS; i++) {
		struct rpma_mr_local *mr = IT_REG(peer, pm, PM_SIZE, usage);
		IT_OK(rpma_mr_dereg(&mr));
	}
	IT_OK(rpma_peer_delete(&peer));
	IT_EQ(munmap(pm, PM_SIZE), 0);
	IT_EQ(close(fd), 0);
	return 0;
}

/*
 * Registering and deregistering a file mapping must leave rpmad's address
 * space as it was (a libpmem2 vm reservation used to leave its alignment
 * slack behind).
 */
/*
 * Runs `client` against one rpmad: rpmad's map entries of a kind before
 * (*before), and after it ended, once they are back to that or
 * RELEASE_MS passed.
 */
static int
maps_around(enum it_maps kind, it_fn *client, int *before)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 1), 0);
	pid_t daemon = env.d[0].pid;
	*before = it_proc_maps(daemon, kind);
	struct it_group g;
	it_group_init(&g);
	int spawned = it_group_spawn(&g, IT_CLIENT, &env, env.cli, client,
			NULL);
	ck_assert_int_eq(spawned, 0);
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	int after = it_proc_maps(daemon, kind);
	uint64_t end = it_now_ms() + RELEASE_MS;
	while (after != *before && it_now_ms() < end) {
		it_sleep_ms(10);
		after = it_proc_maps(daemon, kind);
	}
	ck_assert_int_eq(it_env_stop(&env), 0);
	return after;
}

START_TEST(test_file_registration_unmapped)
{
	int before;
	int after = maps_around(IT_MAPS_ALL, file_mr_client, &before);
	ck_assert_msg(after == before, "rpmad has %d map entries after %d "
			"file registrations came and went, %d before", after,
			FILE_ROUNDS, before);
}
END_TEST

/* ------------------------------------ shared memory, piece by piece */

#define SHM_REGS 2000

/*
 * A pool of shared memory (a memfd) registered a page at a time: rpmad
 * maps it itself (it is passed by descriptor), once per 64 MiB window
 * for all the registrations in it, not once each (vm.max_map_count caps
 * rpmad's mappings at 65,530 by default).
 */
static int
shm_regs_client(const struct it_env *env, void *arg)
{
	(void) arg;
	pid_t daemon = env->d[0].pid;
	const size_t ps = (size_t) sysconf(_SC_PAGESIZE);
	int fd = memfd_create("it_cleanup", MFD_CLOEXEC);
	IT_ASSERT(fd >= 0 && ftruncate(fd, (off_t) (2 * SHM_REGS * ps)) == 0);
	uint8_t *pool = mmap(NULL, 2 * SHM_REGS * ps, PROT_READ | PROT_WRITE,
			MAP_SHARED, fd, 0);
	IT_ASSERT(pool != MAP_FAILED);
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_mr_local **mrs = calloc(SHM_REGS, sizeof(*mrs));
	IT_ASSERT(mrs != NULL);
	int before = it_proc_maps(daemon, IT_MAPS_SHARED);
	/* every other page: no two registrations touch */
	for (size_t i = 0; i < SHM_REGS; i++)
		mrs[i] = IT_REG(peer, pool + 2 * i * ps, ps,
				RPMA_MR_USAGE_WRITE_DST);
	int during = it_proc_maps(daemon, IT_MAPS_SHARED);
	IT_ASSERT_MSG(during > before && during - before <= 4,
			"rpmad has %d shared mappings with %d registrations "
			"of one memfd, %d before",
			during, SHM_REGS, before);
	for (size_t i = 0; i < SHM_REGS; i++)
		IT_OK(rpma_mr_dereg(&mrs[i]));
	free(mrs);
	IT_OK(rpma_peer_delete(&peer));
	IT_EQ(munmap(pool, 2 * SHM_REGS * ps), 0);
	IT_EQ(close(fd), 0);
	return 0;
}

START_TEST(test_shm_registrations_share_a_mapping)
{
	if (!it_transport_is("tcp"))
		return; /* an RDMA device's registrations pin their own */
	int before;
	int after = maps_around(IT_MAPS_SHARED, shm_regs_client, &before);
	ck_assert_msg(after == before,
			"rpmad has %d shared mappings after "
			"the registrations went, %d before",
			after, before);
}
END_TEST

int
main(void)
{
	struct th_test tc_cleanup[] = { TH_LOOP(test_client_vanishes, 0,
							VICTIM_ENDS),
		TH_TEST(test_file_registration_unmapped),
		TH_TEST(test_shm_registrations_share_a_mapping), TH_END };
	if (IT_ASAN) { /* the sanitizer's allocator maps as it likes */
		tc_cleanup[1] = tc_cleanup[2];
		tc_cleanup[2] = (struct th_test) TH_END;
	}
	const struct th_tcase tcases[] = {
		{ "cleanup", .steps = tc_cleanup, .create = it_tcase_create },
	};
	return check_run(th_suite("integration: cleanup", tcases, TH_N(tcases)),
			CK_ENV);
}
