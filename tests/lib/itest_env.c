// SPDX-License-Identifier: BSD-3-Clause
/*
 * itest_env.c -- the "hosts" of an integration test: one or two rpmads,
 * a free TCP port, a scratch directory; stopping them and checking that
 * every daemon still running ends cleanly
 */

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"
#include "th_files.h"

/* How long a daemon may take to shut down after SIGTERM. */
#define STOP_MS 10000

/*
 * The directories the tests of a test case made (daemon sockets and logs,
 * scratch files), in memory shared with the forked tests: a test that
 * fails stops at once, and the runner removes what it left, showing the
 * end of each log it finds first.
 */
#define LEFTOVERS_MAX 64
struct leftovers {
	int n;
	char dir[LEFTOVERS_MAX][256];
};
static struct leftovers *leftovers;

static void
leftovers_note(const char *dir)
{
	if (leftovers == NULL || leftovers->n == LEFTOVERS_MAX)
		return;
	(void) snprintf(leftovers->dir[leftovers->n++], 256, "%s", dir);
}

static void
leftovers_forget(const char *dir)
{
	for (int i = 0; leftovers && i < leftovers->n; i++) {
		if (strcmp(leftovers->dir[i], dir) == 0)
			leftovers->dir[i][0] = '\0';
	}
}

static void
leftovers_setup(void)
{
	if (leftovers == NULL) {
		leftovers = mmap(NULL, sizeof(*leftovers), PROT_READ |
				PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (leftovers == MAP_FAILED)
			leftovers = NULL;
	}
	if (leftovers)
		leftovers->n = 0;
}

static void
leftovers_teardown(void)
{
	for (int i = 0; leftovers && i < leftovers->n; i++) {
		const char *dir = leftovers->dir[i];
		if (dir[0] == '\0')
			continue;
		char log[300];
		(void) snprintf(log, sizeof(log), "%s/rpmad.log", dir);
		th_show_tail(log, "", 20);
		if (getenv("TEST_KEEP_LOGS"))
			(void) fprintf(stderr, "itest: kept %s\n", dir);
		else
			th_remove_tree(dir);
	}
}

TCase *
it_tcase_create(const char *name)
{
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, IT_TCASE_TIMEOUT);
	tcase_add_unchecked_fixture(tc, leftovers_setup, leftovers_teardown);
	return tc;
}

const char *
it_addr(void)
{
	const char *a = getenv("RPMAD_TEST_ADDR");
	return a && *a ? a : "127.0.0.1";
}

bool
it_transport_is(const char *name)
{
	return strcmp(test_daemon_transport(), name) == 0;
}

/* The RDMA CM's private data on IB and RoCE (REQ and REP). */
#define CM_REQ_PDATA 56
#define CM_REP_PDATA 196

size_t
it_pdata_max(bool accept)
{
	if (it_transport_is("tcp"))
		return 255;
	return accept ? CM_REP_PDATA : CM_REQ_PDATA;
}

size_t
it_pdata_seen(size_t sent, bool accept)
{
	return it_transport_is("tcp") ? sent : it_pdata_max(accept);
}

enum rpma_conn_event
it_peer_gone_event(void)
{
	return it_transport_is("tcp") ? RPMA_CONN_LOST : RPMA_CONN_CLOSED;
}

/*
 * Starts the daemons, the first with config0 and the second with config1
 * (NULL: none), in directories of dir_mode (0: their own).
 */
static int
start(struct it_env *env, int ndaemons, const char *config0,
		const char *config1, mode_t dir_mode)
{
	it_init();
	memset(env, 0, sizeof(*env));
	if (ndaemons < 1 || ndaemons > 2)
		return -1;
	if (th_mkdtemp(env->dir, sizeof(env->dir), "rpmad-itest"))
		return -1;
	leftovers_note(env->dir);
	if (it_free_port(env->port, sizeof(env->port)))
		return -1;
	for (int i = 0; i < ndaemons; i++) {
		const struct test_daemon_opts o = {
			.config = i ? config1 : config0,
			.dir_mode = dir_mode,
		};
		if (test_daemon_start_opts(&env->d[i], &o))
			return -1;
		leftovers_note(env->d[i].dir);
		env->ndaemons = i + 1;
	}
	env->srv = &env->d[0];
	env->cli = &env->d[ndaemons - 1];
	return 0;
}

int
it_env_start(struct it_env *env, int ndaemons)
{
	return it_env_start_cfg(env, ndaemons, NULL);
}

int
it_env_start_nobody(struct it_env *env, int ndaemons)
{
	char config[128];
	(void) snprintf(config, sizeof(config),
			"socket_mode = 0666\n"
			"allow_users = 0,%d\n",
			TH_NOBODY);
	if (start(env, ndaemons, config, config, 0755))
		return -1;
	return chmod(env->dir, 0755);
}

void
it_become_nobody(bool dumpable)
{
	IT_EQ(setgroups(0, NULL), 0);
	IT_EQ(setgid(TH_NOBODY), 0);
	IT_EQ(setuid(TH_NOBODY), 0);
	IT_EQ(prctl(PR_SET_DUMPABLE, dumpable ? 1 : 0), 0);
}

int
it_env_start_cfg(struct it_env *env, int ndaemons, const char *config)
{
	return it_env_start_cfgs(env, ndaemons, config, config);
}

int
it_env_start_cfgs(struct it_env *env, int ndaemons, const char *config0,
		const char *config1)
{
	return start(env, ndaemons, config0, config1, 0);
}

/* SIGTERM, a bounded wait; 0 when it exited with 0. */
static int
stop_daemon(struct test_daemon *d)
{
	if (d->pid <= 0)
		return 0;
	(void) kill(d->pid, SIGTERM);
	int code = it_join(d->pid, STOP_MS);
	d->pid = 0;
	if (code != 0) {
		(void) fprintf(stderr, "itest: rpmad (%s) ended with %d\n",
				d->socket, code);
		th_show_tail(d->log, "", 20);
	}
	return code;
}

int
it_env_stop(struct it_env *env)
{
	int bad = 0;
	for (int i = 0; i < env->ndaemons; i++) {
		if (stop_daemon(&env->d[i]))
			bad = 1;
		leftovers_forget(env->d[i].dir);
		(void) test_daemon_stop(&env->d[i]);
	}
	env->ndaemons = 0;
	if (env->dir[0]) {
		leftovers_forget(env->dir);
		th_remove_tree(env->dir);
	}
	env->dir[0] = '\0';
	return bad ? -1 : 0;
}
