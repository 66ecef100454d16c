// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_persist.c -- once a persistent flush to a file-backed registration
 * completed, the data is in the file: the target application and its
 * rpmad are then killed with SIGKILL (nothing gets a chance to write
 * anything later) and the file is read with pread
 */

#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "itest.h"

enum { TAG_TARGET_UP = 100, TAG_FLUSHED };

#define PM_SIZE (256 * 1024)

/* The pieces written and flushed (offsets not page aligned on purpose). */
static const struct piece {
	size_t off, len;
	uint32_t seed;
} pieces[] = {
	{ 0, 4096, 201 },
	{ 70001, 12345, 202 },
	{ PM_SIZE - 100, 100, 203 },
};
#define NPIECES (sizeof(pieces) / sizeof(pieces[0]))

static void
file_path(const struct it_env *env, char *buf, size_t len)
{
	(void) snprintf(buf, len, "%s/persist.pmem", env->dir);
}

static int
target(const struct it_env *env, void *arg)
{
	char path[300];
	file_path(env, path, sizeof(path));
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	IT_ASSERT(fd >= 0);
	IT_EQ(ftruncate(fd, PM_SIZE), 0);
	void *pm = mmap(NULL, PM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			0);
	IT_ASSERT(pm != MAP_FAILED);

	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(peer, pm, PM_SIZE, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr));
	struct rpma_peer_cfg *pcfg = NULL;
	IT_OK(rpma_peer_cfg_new(&pcfg));
	IT_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn_req *req = it_next_req(ep, NULL);
	struct rpma_conn *conn = it_accept(&req, NULL);
	it_send_desc(IT_CLIENT, mr, pcfg);
	IT_EQ(it_tell(IT_PARENT, TAG_TARGET_UP, NULL, 0), 0);

	/* the end comes by SIGKILL, with the connection up */
	(void) conn;
	(void) it_hear(IT_TAG_DONE, NULL, 0, IT_ROLE_MS);
	IT_ASSERT_MSG(0, "the target was not killed");
	return 1;
}

static int
initiator(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(PM_SIZE);
	for (size_t i = 0; i < NPIECES; i++)
		it_fill(buf + pieces[i].off, pieces[i].len, pieces[i].seed);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(peer, buf, PM_SIZE, RPMA_MR_USAGE_WRITE_SRC, &mr));
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	struct it_desc desc;
	it_expect_desc(&desc);
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);
	struct rpma_peer_cfg *pcfg = NULL;
	IT_OK(rpma_peer_cfg_from_descriptor(desc.pcfg, desc.pcfg_len, &pcfg));
	IT_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	IT_OK(rpma_peer_cfg_delete(&pcfg));

	/* write, flush; only the last flush reports its success */
	for (size_t i = 0; i < NPIECES; i++) {
		const struct piece *p = &pieces[i];
		int last = i == NPIECES - 1;
		IT_OK(rpma_write(conn, rmr, p->off, mr, p->off, p->len,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
		IT_OK(rpma_flush(conn, rmr, p->off, p->len,
				RPMA_FLUSH_TYPE_PERSISTENT,
				last ? RPMA_F_COMPLETION_ALWAYS :
				RPMA_F_COMPLETION_ON_ERROR, (void *)0xf1));
	}
	struct ibv_wc wc;
	it_wc_ok(conn, cq, 0xf1, IBV_WC_RDMA_READ, &wc);
	IT_EQ(it_tell(IT_PARENT, TAG_FLUSHED, NULL, 0), 0);

	/* the target's host goes away */
	enum rpma_conn_event ev = it_next_event(conn, IT_WAIT_MS);
	IT_ASSERT_MSG(ev == it_peer_gone_event(), "event %s",
			rpma_utils_conn_event_2str(ev));
	IT_OK(rpma_conn_delete(&conn));
	IT_OK(rpma_mr_remote_delete(&rmr));
	IT_OK(rpma_mr_dereg(&mr));
	IT_OK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

/* _i: 0 kill the application first, 1 its rpmad first */
START_TEST(test_flushed_data_survives_kill)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 2), 0);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv, target,
			NULL), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			initiator, NULL), 0);
	ck_assert_msg(it_group_hear(&g, TAG_TARGET_UP, 1) == 0, "%s",
			it_report());
	ck_assert_msg(it_group_hear(&g, TAG_FLUSHED, 1) == 0, "%s",
			it_report());
	if (_i == 0) {
		it_group_kill(&g, IT_SERVER);
		test_daemon_kill(env.srv);
	} else {
		test_daemon_kill(env.srv);
		it_group_kill(&g, IT_SERVER);
	}

	char path[300];
	file_path(&env, path, sizeof(path));
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	uint8_t *file = malloc(PM_SIZE);
	ck_assert_ptr_nonnull(file);
	ck_assert_int_eq(pread(fd, file, PM_SIZE, 0), PM_SIZE);
	(void) close(fd);
	for (size_t i = 0; i < NPIECES; i++) {
		const struct piece *p = &pieces[i];
		long bad = it_check(file + p->off, p->len, p->seed);
		ck_assert_msg(bad < 0, "piece %zu: byte %ld is not in the file",
				i, bad);
		memset(file + p->off, 0, p->len);
	}
	/* and nothing else was written */
	size_t stray = 0;
	while (stray < PM_SIZE && file[stray] == 0)
		stray++;
	ck_assert_msg(stray == PM_SIZE, "byte %zu was written", stray);
	free(file);

	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

static Suite *
persist_suite(void)
{
	Suite *s = suite_create("integration: persistence");
	TCase *tc = it_tcase_create("persist");
	tcase_add_loop_test(tc, test_flushed_data_survives_kill, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(persist_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
