// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_upgrade.c -- upgrading rpmad under running applications (SIGUSR2,
 * rpmad(8) UPGRADE):
 *
 *  - streaming: a client writes and flushes to its server, round after
 *    round, without pause, while the client's rpmad and then the
 *    server's are upgraded (over TCP between two rpmads, and with both
 *    on one rpmad). No work fails, no connection event comes, the data
 *    is whole at the end. After each upgrade a new session talks to the
 *    new process, which names the old one as draining; the old process
 *    exits once the last of its sessions ended.
 *  - drain deadline: an old rpmad whose client never ends exits at
 *    drain_timeout_s; the client's connection is then lost, as when rpmad
 *    stops.
 *  - a second upgrade while the first old rpmad still drains: three
 *    processes, the newest names both older ones.
 *
 *  - the swapped binary (issue 33): rpmad installed in a directory its
 *    owner (not root) can write, the binary swapped for a symbolic link
 *    to that owner's script, and `rpmactl upgrade` asked by a member of
 *    admin_groups: refused, naming the directory; the script never runs
 *    and the rpmad serves on. Once root owns the directory again the
 *    same request upgrades.
 *
 * The test process is a child subreaper: a new rpmad is the old one's
 * child, and comes to the test when the old one exits, so that
 * it_env_stop can stop and wait for it.
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "th_suite.h"

#define BUF (64 * 1024)
#define CHUNK 4096
/* how long the stream must go on after an upgrade */
#define AFTER_MS 500
/*
 * how long an old rpmad may take to exit once its last session ended (its
 * RDMA devices' teardown is slow in the emulated VM)
 */
#define EXIT_MS IT_ROLE_MS

enum cmd { CMD_ASK, CMD_STOP };

enum {
	TAG_UP = 100,		/* client -> parent: streaming */
	TAG_CMD,		/* parent -> client: enum cmd */
	TAG_ROUNDS,		/* client -> parent: rounds so far */
	TAG_DONE,		/* client -> server: its last seed */
	TAG_S_DONE,
};

/* ------------------------------------------------------------ roles */

static int
server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(BUF);
	memset(buf, 0, BUF);
	struct rpma_mr_local *mr = IT_REG(peer, buf, BUF,
			RPMA_MR_USAGE_WRITE_DST |
					RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, NULL);
	uint32_t seed;
	IT_EQ(it_hear(TAG_DONE, &seed, sizeof(seed), IT_ROLE_MS),
			(int)sizeof(seed));
	/* the last round's data, whole, in every chunk */
	for (size_t off = 0; off < BUF; off += CHUNK)
		IT_EQ(it_check(buf + off, CHUNK, seed), -1);
	it_await_close(&conn);
	IT_OKS(rpma_ep_shutdown(&ep), rpma_mr_dereg(&mr),
			rpma_peer_delete(&peer));
	free(buf);
	IT_EQ(it_tell(IT_PARENT, TAG_S_DONE, NULL, 0), 0);
	return 0;
}

/* one round: the whole buffer chunk by chunk, each written and flushed */
static void
round_trip(struct rpma_conn *conn, struct rpma_cq *cq,
		struct rpma_mr_local *mr, struct rpma_mr_remote *rmr,
		uint8_t *buf, uint32_t seed)
{
	for (size_t off = 0; off < BUF; off += CHUNK)
		it_fill(buf + off, CHUNK, seed);
	for (size_t off = 0; off < BUF; off += CHUNK) {
		IT_OK(rpma_write(conn, rmr, off, mr, off, CHUNK,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
		IT_OK(rpma_flush(conn, rmr, off, CHUNK,
				RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, (void *)off));
		struct ibv_wc wc;
		it_wc_ok(conn, cq, off, IBV_WC_RDMA_READ, &wc);
	}
}

static int
client(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(BUF);
	struct rpma_mr_local *mr =
			IT_REG(peer, buf, BUF, RPMA_MR_USAGE_WRITE_SRC);
	struct rpma_mr_remote *rmr;
	struct rpma_cq *cq;
	struct rpma_conn *conn = it_connect_mr(peer, env, &rmr, &cq);

	uint32_t rounds = 0;
	for (;;) {
		round_trip(conn, cq, mr, rmr, buf, 1000 + rounds);
		rounds++;
		if (rounds == 1)
			IT_EQ(it_tell(IT_PARENT, TAG_UP, NULL, 0), 0);
		int cmd;
		if (it_hear(TAG_CMD, &cmd, sizeof(cmd), 0) != (int)sizeof(cmd))
			continue;
		if (cmd == CMD_STOP)
			break;
		/* the parent watches the stream */
		IT_EQ(it_tell(IT_PARENT, TAG_ROUNDS, &rounds, sizeof(rounds)),
				0);
	}
	/* no connection event came meanwhile: the connection is as it was */
	int efd = -1;
	IT_OK(rpma_conn_get_event_fd(conn, &efd));
	struct pollfd pfd = { .fd = efd, .events = POLLIN };
	IT_EQ(poll(&pfd, 1, 0), 0);
	uint32_t seed = 1000 + rounds - 1;
	IT_EQ(it_tell(IT_SERVER, TAG_DONE, &seed, sizeof(seed)), 0);
	it_client_end(&conn, &rmr, &mr, &peer, buf);
	return 0;
}

/* ------------------------------------------------------------ parent */

static void
tell_client(enum cmd c)
{
	int v = c;
	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_CMD, &v, sizeof(v)), 0);
}

/* the rounds the client has done */
static uint32_t
rounds_now(void)
{
	tell_client(CMD_ASK);
	uint32_t r = 0;
	ck_assert_msg(it_hear(TAG_ROUNDS, &r, sizeof(r), IT_WAIT_MS) ==
			(int)sizeof(r), "the stream does not answer (%s)",
			it_report());
	return r;
}

/* the stream goes on: more rounds come within a bound */
static uint32_t
still_streaming(uint32_t last)
{
	uint64_t end = it_now_ms() + 2 * IT_WAIT_MS;
	uint32_t now;
	while ((now = rounds_now()) < last + 3) {
		ck_assert_msg(it_now_ms() < end, "the stream stopped at round "
				"%u (%s)", now, it_report());
		it_sleep_ms(20);
	}
	return now;
}

static bool
in(pid_t pid, const pid_t *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == pid)
			return true;
	return false;
}

/*
 * SIGUSR2 to d's rpmad; once a new process answers at the socket, d names
 * it. The new one must name `older` (0: the one it replaced) among those
 * that drain. Returns the old pid.
 */
static pid_t
upgrade(struct test_daemon *d, pid_t older)
{
	pid_t old = d->pid;
	ck_assert_int_eq(kill(old, SIGUSR2), 0);
	uint64_t end = it_now_ms() + 2 * IT_WAIT_MS;
	for (;;) {
		ck_assert_msg(it_now_ms() < end, "no new rpmad serves %s",
				d->socket);
		struct it_admin a;
		pid_t pid = 0, draining[8];
		size_t n = 0;
		if (it_admin_open(&a, d) == 0) {
			int r = it_admin_pids(&a, &pid, draining, 8, &n);
			it_admin_close(&a);
			ck_assert_int_eq(r, 0);
		}
		if (pid != 0 && pid != old) {
			/* a new session: the new process, naming the old */
			pid_t want = older ? older : old;
			ck_assert_msg(in(want, draining, n), "pid %d does not "
					"name pid %d as draining", (int)pid,
					(int)want);
			d->pid = pid;
			break;
		}
		it_sleep_ms(50);
	}
	return old;
}

/*
 * the old rpmad exits by itself within ms: with status 0 when it is this
 * process's child; one an older rpmad started is that one's to reap
 */
static void
exits(pid_t old, int ms)
{
	int st = 0;
	uint64_t end = it_now_ms() + (uint64_t)ms;
	pid_t r;
	while ((r = waitpid(old, &st, WNOHANG)) == 0 ||
			(r < 0 && kill(old, 0) == 0)) {
		if (it_now_ms() >= end) {
			it_dump_stacks(old);
			ck_abort_msg("the old rpmad (pid %d) did not exit",
					(int)old);
		}
		it_sleep_ms(20);
	}
	if (r == old)
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the old "
				"rpmad (pid %d) ended with status 0x%x",
				(int)old, st);
}

static void
stream_through_upgrades(int ndaemons)
{
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, ndaemons), 0);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			server, NULL), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			client, NULL), 0);
	ck_assert_msg(it_group_hear(&g, TAG_UP, 1) == 0, "%s", it_report());
	uint32_t rounds = still_streaming(0);

	/* the client's rpmad, then the server's (one rpmad: itself) */
	pid_t olds[2];
	olds[0] = upgrade(env.cli, 0);
	/* it serves the stream's sessions: it drains */
	ck_assert_int_eq(kill(olds[0], 0), 0);
	rounds = still_streaming(rounds);
	it_sleep_ms(AFTER_MS);
	rounds = still_streaming(rounds);
	int nolds = 1;
	if (ndaemons == 2) {
		olds[1] = upgrade(env.srv, 0);
		ck_assert_int_eq(kill(olds[1], 0), 0);
		rounds = still_streaming(rounds);
		it_sleep_ms(AFTER_MS);
		rounds = still_streaming(rounds);
		nolds = 2;
	}
	tell_client(CMD_STOP);
	ck_assert_msg(it_hear(TAG_S_DONE, NULL, 0, IT_ROLE_MS) == 0, "%s",
			it_report());
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	/* their last sessions ended: the old ones exit */
	for (int i = 0; i < nolds; i++)
		exits(olds[i], EXIT_MS);
	ck_assert_int_eq(it_env_stop(&env), 0);
}

START_TEST(test_stream_two_rpmads)
{
	stream_through_upgrades(2);
}
END_TEST

START_TEST(test_stream_one_rpmad)
{
	stream_through_upgrades(1);
}
END_TEST

/* ------------------------------------------- drain deadline, twice over */

enum { TAG_HOLDING = 200, TAG_LOST };

/* a client that holds a connection to itself and waits for its end */
static int
holder_server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	IT_EQ(it_tell(IT_PARENT, TAG_HOLDING, NULL, 0), 0);
	/* the drain deadline ends the old rpmad: the connection is lost */
	enum rpma_conn_event ev = it_next_event(conn, IT_ROLE_MS);
	/* as when rpmad stops: its goodbye may reach the other end first */
	IT_ASSERT_MSG(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED,
			"event %s", rpma_utils_conn_event_2str(ev));
	IT_EQ(it_tell(IT_PARENT, TAG_LOST, NULL, 0), 0);
	(void) rpma_conn_disconnect(conn);
	(void) rpma_conn_delete(&conn);
	(void) rpma_ep_shutdown(&ep);
	(void) rpma_peer_delete(&peer);
	return 0;
}

static int
holder_client(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	enum rpma_conn_event ev = it_next_event(conn, IT_ROLE_MS);
	IT_ASSERT_MSG(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED,
			"event %s", rpma_utils_conn_event_2str(ev));
	(void) rpma_conn_disconnect(conn);
	(void) rpma_conn_delete(&conn);
	(void) rpma_peer_delete(&peer);
	return 0;
}

#define DEADLINE_S 3

START_TEST(test_drain_deadline_and_second_upgrade)
{
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	struct it_env env;
	ck_assert_int_eq(it_env_start_cfg(&env, 1, "drain_timeout_s = 3\n"),
			0);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, env.srv,
			holder_server, NULL), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, env.cli,
			holder_client, NULL), 0);
	ck_assert_msg(it_group_hear(&g, TAG_HOLDING, 1) == 0, "%s",
			it_report());
	uint64_t t0 = it_now_ms();
	pid_t first = upgrade(env.srv, 0);
	/* a second upgrade while the first old one drains: named still */
	pid_t second = upgrade(env.srv, first);
	/* the second old one holds no session: it goes at once */
	exits(second, EXIT_MS);
	/* the first holds its clients until the deadline */
	ck_assert_int_eq(kill(first, 0), 0);
	exits(first, DEADLINE_S * 1000 + EXIT_MS);
	ck_assert_msg(it_now_ms() - t0 >= DEADLINE_S * 1000 - 100, "the old "
			"rpmad left before its deadline");
	ck_assert_msg(it_group_hear(&g, TAG_LOST, 1) == 0, "%s", it_report());
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ------------------------------------------------- the swapped binary */

#define OWNER 4242		/* owns the directory rpmad is installed in */
#define ADMIN 4251		/* a member of admin_groups */
#define ADMIN_GID 4250

static void
copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	ck_assert_int_ge(in, 0);
	ck_assert_int_ge(out, 0);
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	ck_assert_int_eq(n, 0);
	(void) close(in);
	ck_assert_int_eq(close(out), 0);
	ck_assert_int_eq(chmod(to, 0755), 0);
}

/* `rpmactl --socket S upgrade` as ADMIN; its exit status, output in out */
static int
admin_upgrade(const struct test_daemon *d, char *out, size_t len)
{
	int p[2];
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid_t c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0) {
		gid_t g = ADMIN_GID;
		if (dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0 ||
				setgroups(1, &g) || setgid(ADMIN_GID) ||
				setuid(ADMIN))
			_exit(120);
		const char *bin = getenv("RPMACTL_BIN");
		execl(bin, "rpmactl", "--socket", d->socket, "upgrade",
				(char *)NULL);
		_exit(121);
	}
	(void) close(p[1]);
	size_t got = 0;
	ssize_t n;
	while (got + 1 < len && (n = read(p[0], out + got,
			len - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	(void) close(p[0]);
	int st;
	ck_assert_int_eq(waitpid(c, &st, 0), c);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* As OWNER: the binary becomes a link to a script of theirs, or back. */
static void
owner_swaps(const char *dir, bool evil)
{
	pid_t c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0) {
		if (setgroups(0, NULL) || setgid(OWNER) || setuid(OWNER))
			_exit(1);
		char bin[128], orig[128], script[128], text[256];
		(void) snprintf(bin, sizeof(bin), "%s/rpmad", dir);
		(void) snprintf(orig, sizeof(orig), "%s/rpmad.orig", dir);
		(void) snprintf(script, sizeof(script), "%s/evil.sh", dir);
		if (!evil)
			_exit(unlink(bin) || rename(orig, bin) ? 2 : 0);
		(void) snprintf(text, sizeof(text), "#!/bin/sh\n"
				"id > %s/ran\n", dir);
		int fd = open(script, O_WRONLY | O_CREAT | O_EXCL, 0755);
		if (fd < 0 || write(fd, text, strlen(text)) < 0 || close(fd))
			_exit(3);
		_exit(rename(bin, orig) || symlink("evil.sh", bin) ? 4 : 0);
	}
	int st;
	ck_assert_int_eq(waitpid(c, &st, 0), c);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}

/* the pid serving d, by a new admin session */
static pid_t
serving_pid(const struct test_daemon *d)
{
	struct it_admin a;
	pid_t pid = 0, draining[8];
	size_t n = 0;
	ck_assert_int_eq(it_admin_open(&a, d), 0);
	ck_assert_int_eq(it_admin_pids(&a, &pid, draining, 8, &n), 0);
	it_admin_close(&a);
	return pid;
}

START_TEST(test_swapped_binary)
{
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	char dir[] = "/tmp/rpmad-upgrade.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	char bin[128], ran[128];
	(void) snprintf(bin, sizeof(bin), "%s/rpmad", dir);
	(void) snprintf(ran, sizeof(ran), "%s/ran", dir);
	copy_file(getenv("RPMAD_BIN"), bin);
	/* rpmad as installed in a directory its owner may write */
	ck_assert_int_eq(chown(dir, OWNER, OWNER), 0);
	char *saved = strdup(getenv("RPMAD_BIN"));
	ck_assert_int_eq(setenv("RPMAD_BIN", bin, 1), 0);
	struct it_env env;
	char config[96];
	(void) snprintf(config, sizeof(config), "socket_mode = 0666\n"
			"admin_groups = %d\n", ADMIN_GID);
	int started = it_env_start_cfg(&env, 1, config);
	ck_assert_int_eq(setenv("RPMAD_BIN", saved, 1), 0);
	free(saved);
	ck_assert_int_eq(started, 0);
	ck_assert_int_eq(chmod(env.d[0].dir, 0755), 0);
	struct test_daemon *d = &env.d[0];
	pid_t pid = d->pid;

	owner_swaps(dir, true);
	char out[1024];
	int st = admin_upgrade(d, out, sizeof(out));
	ck_assert_msg(st != 0 && strstr(out, "only root could have installed")
			&& strstr(out, dir), "status %d: %s", st, out);
	/* the refusal is the answer: nothing was started */
	ck_assert_int_eq(serving_pid(d), pid);
	ck_assert_msg(access(ran, F_OK) != 0, "the owner's script ran");

	/* their directory still: the real binary back in it is no better */
	owner_swaps(dir, false);
	st = admin_upgrade(d, out, sizeof(out));
	ck_assert_msg(st != 0 && strstr(out, "belongs to uid 4242"),
			"status %d: %s", st, out);
	ck_assert_int_eq(serving_pid(d), pid);

	/* root's directory again: an admin's upgrade runs root's binary */
	ck_assert_int_eq(chown(dir, 0, 0), 0);
	st = admin_upgrade(d, out, sizeof(out));
	ck_assert_msg(st == 0, "status %d: %s", st, out);
	uint64_t end = it_now_ms() + 2 * IT_WAIT_MS;
	while (serving_pid(d) == pid) {
		ck_assert_msg(it_now_ms() < end, "no new rpmad serves");
		it_sleep_ms(50);
	}
	d->pid = serving_pid(d);
	exits(pid, EXIT_MS);
	ck_assert_msg(access(ran, F_OK) != 0, "the owner's script ran");
	ck_assert_int_eq(it_env_stop(&env), 0);
	(void) unlink(bin);
	(void) unlink(ran);
	char script[128], orig[128];
	(void) snprintf(script, sizeof(script), "%s/evil.sh", dir);
	(void) snprintf(orig, sizeof(orig), "%s/rpmad.orig", dir);
	(void) unlink(script);
	(void) unlink(orig);
	(void) rmdir(dir);
}
END_TEST

int
main(void)
{
	const TTest *const tc_upgrade[] = { test_stream_two_rpmads,
		test_stream_one_rpmad, test_drain_deadline_and_second_upgrade,
		test_swapped_binary, NULL };
	const struct th_tcase tcases[] = {
		{ "upgrade", .tests = tc_upgrade, .create = it_tcase_create },
	};
	return check_run_forked(th_suite("it_upgrade", tcases, TH_N(tcases)),
			CK_NORMAL);
}
