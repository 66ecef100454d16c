// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_systemd.c -- rpmad under a service manager, without one running:
 * readiness, status, reload and stop notifications and watchdog pings on
 * a NOTIFY_SOCKET the test listens on; socket activation through
 * systemd-socket-activate (skipped when that is not installed); detaching
 * without --foreground.
 */

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "librpma.h"

static struct test_daemon d;

/* The service manager's end: an AF_UNIX datagram socket. */
static int
notify_socket(const char *path)
{
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(s, 0);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	ck_assert_uint_lt(strlen(path), sizeof(sun.sun_path));
	strcpy(sun.sun_path, path);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return s;
}

/*
 * The next notification that holds `want` (earlier ones are dropped),
 * within timeout_ms; into msg. true when one came.
 */
static bool
next_notify(int s, const char *want, char *msg, size_t len, int timeout_ms)
{
	struct timespec start, now;
	(void) clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		(void) clock_gettime(CLOCK_MONOTONIC, &now);
		long spent = (now.tv_sec - start.tv_sec) * 1000 +
			(now.tv_nsec - start.tv_nsec) / 1000000;
		if (spent >= timeout_ms)
			return false;
		struct pollfd pfd = { .fd = s, .events = POLLIN };
		int r = poll(&pfd, 1, (int)(timeout_ms - spent));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		ssize_t n = recv(s, msg, len - 1, 0);
		if (n <= 0)
			return false;
		msg[n] = '\0';
		if (strstr(msg, want))
			return true;
	}
}

/* rpmad as an operator runs it, with this environment added */
static int
start_with(char *const *env)
{
	return test_daemon_start_opts(&d,
			&(struct test_daemon_opts){
					.config = "log_level = info\n",
					.env = env,
					.dir_mode = 0755,
					.cfg_log_level = true });
}

START_TEST(test_notify_and_watchdog)
{
	/* the socket must exist before rpmad starts: its own directory */
	char dir[] = "/tmp/rpmad-notify.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[256], env_sock[300];
	(void) snprintf(path, sizeof(path), "%s/notify", dir);
	int s = notify_socket(path);
	(void) snprintf(env_sock, sizeof(env_sock), "NOTIFY_SOCKET=%s", path);
	/* a ping every 100 ms */
	char *env[] = { env_sock, "WATCHDOG_USEC=200000", NULL };
	ck_assert_int_eq(start_with(env), 0);

	char msg[1024];
	ck_assert_msg(next_notify(s, "READY=1", msg, sizeof(msg), TH_WAIT_MS),
			"no READY=1");
	ck_assert_ptr_nonnull(strstr(msg, "STATUS=0 clients, 0 connections"));
	ck_assert_ptr_nonnull(strstr(msg, "transport tcp"));
	char mainpid[32];
	(void) snprintf(mainpid, sizeof(mainpid), "MAINPID=%d", (int) d.pid);
	ck_assert_ptr_nonnull(strstr(msg, mainpid));

	ck_assert_msg(next_notify(s, "WATCHDOG=1", msg, sizeof(msg),
				      TH_WAIT_MS),
			"no WATCHDOG=1");
	ck_assert(wait_text(d.log,
			"watchdog: pinging the service manager "
			"every 100 ms",
			TH_WAIT_MS));

	/* a client: the status says so within about a second */
	struct ibv_context *dev;
	struct rpma_peer *peer;
	ck_assert_int_eq(rpma_utils_get_ibv_context("127.0.0.1",
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev), 0);
	ck_assert_int_eq(rpma_peer_new(dev, &peer), 0);
	char *buf = aligned_alloc(4096, 8192);
	ck_assert_ptr_nonnull(buf);
	struct rpma_mr_local *mr;
	ck_assert_int_eq(rpma_mr_reg(peer, buf, 8192, RPMA_MR_USAGE_READ_SRC,
			&mr), 0);
	ck_assert_msg(next_notify(s,
				      "STATUS=1 client, 0 connections, 0 "
				      "endpoints, 1 registration "
				      "(8.0 KiB pinned)",
				      msg, sizeof(msg), TH_WAIT_MS),
			"the status did not follow");

	/* reload: RELOADING=1, then READY=1 */
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	ck_assert_msg(next_notify(s, "RELOADING=1", msg, sizeof(msg),
				      TH_WAIT_MS),
			"no RELOADING=1");
	ck_assert_ptr_nonnull(strstr(msg, "MONOTONIC_USEC="));
	ck_assert_msg(next_notify(s, "READY=1", msg, sizeof(msg), TH_WAIT_MS),
			"no READY=1 after the reload");
	/* a bad file: READY=1 again, and the status tells */
	ck_assert_int_eq(write_text(d.config, "log_level = shouty\n"), 0);
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	ck_assert_msg(next_notify(s,
				      "; the last reload failed, the "
				      "configuration before it is in use",
				      msg, sizeof(msg), TH_WAIT_MS),
			"no failed-reload status");
	ck_assert_ptr_nonnull(strstr(msg, "READY=1"));
	/* and it stays in the status until a reload succeeds */
	ck_assert_int_eq(rpma_mr_dereg(&mr), 0);
	ck_assert_msg(next_notify(s,
				      "STATUS=1 client, 0 connections, 0 "
				      "endpoints, 0 registrations",
				      msg, sizeof(msg), TH_WAIT_MS),
			"the status did not follow");
	ck_assert_ptr_nonnull(strstr(msg, "the last reload failed"));
	ck_assert_int_eq(write_text(d.config, "log_level = info\n"), 0);
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	ck_assert_msg(next_notify(s, "READY=1", msg, sizeof(msg), TH_WAIT_MS),
			"no READY=1 after the good reload");
	ck_assert_ptr_null(strstr(msg, "reload failed"));
	ck_assert_ptr_nonnull(strstr(msg, "STATUS=1 client"));

	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
	free(buf);

	/* SIGTERM: STOPPING=1, then a clean exit */
	ck_assert_int_eq(kill(d.pid, SIGTERM), 0);
	ck_assert_msg(next_notify(s, "STOPPING=1", msg, sizeof(msg),
				      TH_WAIT_MS),
			"no STOPPING=1");
	int status = test_daemon_stop(&d);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	(void) close(s);
	(void) unlink(path);
	(void) rmdir(dir);
}
END_TEST

/* Without NOTIFY_SOCKET rpmad sends nothing and arms no timers for it. */
START_TEST(test_no_notify_socket)
{
	char *env[] = { "NOTIFY_SOCKET=", "WATCHDOG_USEC=100000", NULL };
	ck_assert_int_eq(start_with(env), 0);
	it_sleep_ms(300);
	char *log = read_text(d.log);
	ck_assert_ptr_nonnull(log);
	ck_assert_ptr_null(strstr(log, "watchdog"));
	free(log);
	int status = test_daemon_stop(&d);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

START_TEST(test_socket_activation)
{
	if (th_have_program("systemd-socket-activate") != 1) {
		(void) fprintf(stderr, "systemd-socket-activate is not "
				"installed: socket activation not tested\n");
		return;
	}
	char dir[] = "/tmp/rpmad-act.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char sock[256], log[256], conf[256];
	(void) snprintf(sock, sizeof(sock), "%s/activated.sock", dir);
	(void) snprintf(log, sizeof(log), "%s/rpmad.log", dir);
	(void) snprintf(conf, sizeof(conf), "%s/rpmad.conf", dir);
	/* the file's socket is elsewhere: the passed one must win */
	ck_assert_int_eq(write_text(conf, "socket = /nonexistent/rpmad.sock\n"
			"socket_group = root\n"), 0);
	const char *bin = getenv("RPMAD_BIN");
	char *argv[] = { "systemd-socket-activate", "--seqpacket", "-l", sock,
		(char *)(bin ? bin : "rpmad"), "--foreground", "--transport",
		"tcp", "--config", conf, NULL };
	struct proc p;
	ck_assert_int_eq(proc_start(&p, argv, NULL, log), 0);
	/* it listens at once and starts rpmad on the first connection */
	ck_assert(wait_text(log, "Listening on", TH_WAIT_MS));

	struct flat f;
	rpmactl_json(&f, sock, "status");
	const char *v = flat_get(&f, "socket_activated");
	ck_assert(v && strcmp(v, "true") == 0);
	v = flat_get(&f, "socket");
	ck_assert(v && strcmp(v, sock) == 0);
	/* systemd-socket-activate execs rpmad in its own place */
	char pid[32];
	(void) snprintf(pid, sizeof(pid), "%d", (int)p.pid);
	v = flat_get(&f, "pid");
	ck_assert(v && strcmp(v, pid) == 0);
	flat_free(&f);

	char want[400];
	(void) snprintf(want, sizeof(want), "using the control socket %s "
			"passed by the service manager (socket activation)",
			sock);
	ck_assert(wait_text(log, want, TH_WAIT_MS));
	ck_assert(wait_text(log,
			"socket_group and socket_mode do not apply "
			"to a passed socket",
			TH_WAIT_MS));

	/* clients use it as any socket */
	(void) setenv("RPMAD_SOCKET", sock, 1);
	struct ibv_context *dev;
	struct rpma_peer *peer;
	ck_assert_int_eq(rpma_utils_get_ibv_context("127.0.0.1",
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev), 0);
	ck_assert_int_eq(rpma_peer_new(dev, &peer), 0);
	struct run r;
	ck_assert_int_eq(rpmactl(&r, sock, "clients", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(count_lines_with(r.out, "test_systemd", NULL), 1);
	run_free(&r);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);

	/* on SIGTERM rpmad leaves the passed socket to its owner */
	int status = proc_end(&p, SIGTERM);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(access(sock, F_OK), 0);
	char *rm[] = { "rm", "-rf", dir, NULL };
	if (run_cmd(&r, rm, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS) == 0)
		run_free(&r);
}
END_TEST

/* Without --foreground (and no service manager) rpmad detaches once ready. */
START_TEST(test_detach)
{
	char dir[] = "/tmp/rpmad-detach.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char sock[256], log[256];
	(void) snprintf(sock, sizeof(sock), "%s/rpmad.sock", dir);
	(void) snprintf(log, sizeof(log), "%s/rpmad.log", dir);
	const char *bin = getenv("RPMAD_BIN");
	char cmd[1024];
	(void) snprintf(cmd, sizeof(cmd), "exec %s --socket %s --transport "
			"tcp --config /dev/null 2>%s", bin ? bin : "rpmad",
			sock, log);
	char *argv[] = { "sh", "-c", cmd, NULL };
	struct run r;
	ck_assert_int_eq(run_cmd(&r, argv, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	/* it returned: the socket already accepts */
	ck_assert_msg(r.status == 0, "%d %s", r.status, r.err);
	run_free(&r);
	ck_assert(th_socket_accepts(sock));
	struct flat f;
	rpmactl_json(&f, sock, "status");
	const char *v = flat_get(&f, "pid");
	ck_assert_ptr_nonnull(v);
	pid_t pid = (pid_t)strtol(v, NULL, 10);
	flat_free(&f);
	ck_assert_int_eq(getsid(pid), pid);	/* its own session */
	ck_assert_int_eq(kill(pid, SIGTERM), 0);
	for (int i = 0; i < 500 && kill(pid, 0) == 0; i++)
		it_sleep_ms(10);
	ck_assert_int_ne(kill(pid, 0), 0);
	ck_assert(wait_text(log, "rpmad stopped", TH_WAIT_MS));
	ck_assert_int_ne(access(sock, F_OK), 0);

	/* a failed start fails the command */
	char bad[1024];
	(void) snprintf(bad, sizeof(bad), "exec %s --socket /nonexistent/x/y "
			"--transport tcp --config /dev/null 2>>%s",
			bin ? bin : "rpmad", log);
	char *argv2[] = { "sh", "-c", bad, NULL };
	ck_assert_int_eq(run_cmd(&r, argv2, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_int_eq(r.status, 1);
	run_free(&r);
	(void) unlink(log);
	(void) rmdir(dir);
}
END_TEST

int
main(void)
{
	/* this process is no service: nothing of systemd's may leak in */
	(void) unsetenv("NOTIFY_SOCKET");
	(void) unsetenv("WATCHDOG_USEC");
	(void) unsetenv("WATCHDOG_PID");
	(void) unsetenv("LISTEN_FDS");
	(void) unsetenv("LISTEN_PID");
	(void) unsetenv("INVOCATION_ID");
	const TTest *const tc_notify[] = { test_notify_and_watchdog,
		test_no_notify_socket, test_socket_activation, test_detach,
		NULL };
	const struct th_tcase tcases[] = {
		{ "notify", .tests = tc_notify, .timeout = 60 },
	};
	return check_run(th_suite("systemd", tcases, TH_N(tcases)), CK_NORMAL);
}
