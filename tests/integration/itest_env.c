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

static void remove_dir(const char *path);
static void show_log_tail(const char *log);

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
		show_log_tail(log);
		if (getenv("TEST_KEEP_LOGS"))
			(void) fprintf(stderr, "itest: kept %s\n", dir);
		else
			remove_dir(dir);
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

/*
 * Test endpoints listen on ports below the kernel's ephemeral range
 * (net.ipv4.ip_local_port_range): a port of that range may be given to
 * any outgoing connection (rpmad's own among them, under make -j2) before
 * the test listens on it. Tests running side by side coordinate through a
 * lock file per port, held (flock) until the process exits.
 */
#define LOWEST_PORT 10000
#define PORT_TRIES 200
#define PORT_LOCK_DIR "/tmp/rpmad-test-ports"

static unsigned
ephemeral_low(void)
{
	unsigned low = 0, high = 0;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%u %u", &low, &high) != 2)
		low = 0;
	(void) fclose(f);
	return low;
}

/* Claims `port` for this process among the tests; the fd stays open. */
static int
claim(unsigned port)
{
	char path[64];
	(void) mkdir(PORT_LOCK_DIR, 0777);
	(void) snprintf(path, sizeof(path), PORT_LOCK_DIR "/%u", port);
	int fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0666);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		(void) close(fd);
		return 0;
	}
	return 1;
}

static int
bindable(unsigned port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port) };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int ok = bind(s, (struct sockaddr *)&sin, sizeof(sin)) == 0;
	(void) close(s);
	return ok;
}

int
it_free_port(char *buf, size_t len)
{
	unsigned low = ephemeral_low();
	if (low > LOWEST_PORT + 1000) {
		/* one sequence per process: two calls never repeat a port */
		static unsigned seed;
		if (seed == 0)
			seed = (unsigned)getpid() ^ (unsigned)time(NULL) ^
				(unsigned)it_now_ms();
		for (int i = 0; i < PORT_TRIES; i++) {
			unsigned port = LOWEST_PORT + (unsigned)rand_r(&seed) %
					(low - LOWEST_PORT);
			if (bindable(port) && claim(port)) {
				(void) snprintf(buf, len, "%u", port);
				return 0;
			}
		}
	}
	/* no room below the range: a port the kernel picks will do */
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t sl = sizeof(sin);
	int ret = -1;
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
			getsockname(s, (struct sockaddr *)&sin, &sl) == 0) {
		(void) snprintf(buf, len, "%u", ntohs(sin.sin_port));
		ret = 0;
	}
	(void) close(s);
	return ret;
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

int
it_env_start(struct it_env *env, int ndaemons)
{
	return it_env_start_cfg(env, ndaemons, NULL);
}

int
it_env_start_nobody(struct it_env *env, int ndaemons)
{
	char config[128];
	(void) snprintf(config, sizeof(config), "socket_mode = 0666\n"
			"allow_users = 0,%d\n", IT_NOBODY);
	if (it_env_start_cfg(env, ndaemons, config))
		return -1;
	for (int i = 0; i < env->ndaemons; i++)
		if (chmod(env->d[i].dir, 0755))
			return -1;
	return chmod(env->dir, 0755);
}

void
it_become_nobody(bool dumpable)
{
	IT_EQ(setgroups(0, NULL), 0);
	IT_EQ(setgid(IT_NOBODY), 0);
	IT_EQ(setuid(IT_NOBODY), 0);
	IT_EQ(prctl(PR_SET_DUMPABLE, dumpable ? 1 : 0), 0);
}

/* Writes the daemons' configuration file; its path goes to `path`. */
static int
write_config(const struct it_env *env, const char *text, int i, char *path,
		size_t len)
{
	(void) snprintf(path, len, "%s/rpmad%s.conf", env->dir, i ? "-1" : "");
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return -1;
	int bad = fputs(text, f) < 0;
	return fclose(f) || bad ? -1 : 0;
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
	it_init();
	memset(env, 0, sizeof(*env));
	if (ndaemons < 1 || ndaemons > 2)
		return -1;
	const char *tmp = getenv("TMPDIR");
	(void) snprintf(env->dir, sizeof(env->dir), "%s/rpmad-itest.XXXXXX",
			tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(env->dir) == NULL) {
		env->dir[0] = '\0';
		return -1;
	}
	leftovers_note(env->dir);
	if (it_free_port(env->port, sizeof(env->port)))
		return -1;
	for (int i = 0; i < ndaemons; i++) {
		const char *config = i ? config1 : config0;
		char path[300];
		const char *args[] = { "--config", path, NULL };
		if (config && write_config(env, config, i, path, sizeof(path)))
			return -1;
		if (test_daemon_start(&env->d[i], config ? args : NULL))
			return -1;
		leftovers_note(env->d[i].dir);
		env->ndaemons = i + 1;
	}
	env->srv = &env->d[0];
	env->cli = &env->d[ndaemons - 1];
	return 0;
}

static void
show_log_tail(const char *log)
{
	FILE *f = fopen(log, "r");
	if (f == NULL)
		return;
	char line[512];
	char tail[20][512];
	unsigned n = 0;
	while (fgets(line, sizeof(line), f))
		memcpy(tail[n++ % 20], line, sizeof(line));
	(void) fclose(f);
	(void) fprintf(stderr, "--- end of %s\n", log);
	for (unsigned i = n > 20 ? n - 20 : 0; i < n; i++)
		(void) fputs(tail[i % 20], stderr);
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
		show_log_tail(d->log);
	}
	return code;
}

static void
remove_dir(const char *path)
{
	DIR *dir = opendir(path);
	if (dir == NULL)
		return;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char p[512];
		(void) snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		(void) unlink(p);
	}
	(void) closedir(dir);
	(void) rmdir(path);
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
		remove_dir(env->dir);
	}
	env->dir[0] = '\0';
	return bad ? -1 : 0;
}
