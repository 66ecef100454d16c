// SPDX-License-Identifier: BSD-3-Clause
/*
 * hostile_hello.c -- a client that hands rpmad, at hello, descriptors of
 * `mem` and `maps` that are not its own (issue 33, item 1). rpmad used to
 * check only that they were procfs files named so: with its own mem and a
 * child's maps a tenant had a mapping on its own FUSE file system pass
 * the check, and rpmad's writes for a parent's registration landed in a
 * child through the child's mem. Each attack is replayed with a real
 * rpmad over the control protocol:
 *
 *  - a child's maps with the caller's mem, and a child's mem with the
 *    caller's maps;
 *  - a thread's mem, as /proc/self/task/TID/mem and as /proc/TID/mem, and
 *    the main thread's own task entry;
 *  - the mem and maps a process opened before it exec'd (the memory they
 *    reach is gone): the process re-executes this program, which sends
 *    the inherited descriptors;
 *  - descriptors of a process that has ended, sent by another;
 *  - in a container (a pid namespace with its own /proc, which rpmad
 *    cannot look into): a child's maps, a thread's entry.
 *
 * Each is refused at hello with a reason naming the descriptor; the
 * caller's own (the library's way) is accepted, and rpmad keeps serving.
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_socket.h"
#include "hostile.h"
#include "rpmad.pb-c.h"
#include "th_ctl.h"
#include "th_suite.h"

#define EXEC_ARG "--exec-hello"

static struct test_daemon d;

/* ------------------------------------------------------ raw hellos */

/*
 * A hello carrying `mem` and `maps` on a new session of the daemon at
 * `socket`: 0 when accepted, else the RPMA_E_* code with rpmad's reason
 * in why; -1 when nothing came back. Usable without Check (after exec).
 */
static int
hello_with(const char *socket_path, int mem, int maps, char *why,
		size_t len)
{
	why[0] = '\0';
	struct th_ctl s;
	if (th_ctl_connect(&s, socket_path))
		return -1;
	struct th_req q;
	th_req_hello(&q, "hostile_hello");
	q.u.hello.fd_count = 2;
	int fds[2] = { mem, maps };
	Rpmad__Response *r;
	int ret = -1;
	if (th_ctl_call(&s, &q.req, fds, 2, &r) == 0) {
		ret = r->error ? r->error->code : 0;
		if (r->error && r->error->message)
			(void) snprintf(why, len, "%s", r->error->message);
		rpmad__response__free_unpacked(r, NULL);
	}
	th_ctl_close(&s);
	return ret;
}

/* base/id/name ("/proc", 4711, "mem"), opened with flags */
static int
open_proc(const char *base, long id, const char *name, int flags)
{
	char path[96];
	(void) snprintf(path, sizeof(path), "%s/%ld/%s", base, id, name);
	int fd = open(path, flags | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	return fd;
}

/* A hello of these two must be refused, with `reason` in rpmad's answer. */
static void
expect_refused(int mem, int maps, const char *reason)
{
	char why[512];
	int code = hello_with(d.socket, mem, maps, why, sizeof(why));
	ck_assert_msg(code == RPMA_E_PROVIDER && strstr(why, reason),
			"code %d, answer \"%s\" (wanted \"%s\")", code, why,
			reason);
	(void) close(mem);
	(void) close(maps);
}

static void
expect_accepted(int mem, int maps)
{
	char why[512];
	int code = hello_with(d.socket, mem, maps, why, sizeof(why));
	ck_assert_msg(code == 0, "code %d: %s", code, why);
	(void) close(mem);
	(void) close(maps);
}

/* rpmad still answers a plain hello of the library's kind */
static void
still_serves(void)
{
	expect_accepted(open_proc("/proc", (long)getpid(), "mem", O_RDWR),
			open_proc("/proc", (long)getpid(), "maps",
			O_RDONLY));
	ck_assert(test_daemon_alive(&d));
}

static void
setup(void)
{
	ck_assert_int_eq(test_daemon_start(&d, NULL), 0);
}

static void
teardown(void)
{
	ck_assert_int_eq(test_daemon_stop(&d), 0);
}

/* ------------------------------------------------------------ tests */

START_TEST(test_own_accepted)
{
	/* as the library opens them, and through /proc/PID instead of self */
	expect_accepted(open("/proc/self/mem", O_RDWR | O_CLOEXEC),
			open("/proc/self/maps", O_RDONLY | O_CLOEXEC));
	still_serves();
}
END_TEST

/* a child that waits until killed: its mem and maps are the caller's to open */
static pid_t
waiting_child(void)
{
	pid_t c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0) {
		for (;;)
			(void) pause();
	}
	return c;
}

static void
end_child(pid_t c)
{
	(void) kill(c, SIGKILL);
	(void) waitpid(c, NULL, 0);
}

START_TEST(test_child_maps)
{
	pid_t c = waiting_child();
	/* the original attack: its own mem, a child's maps to judge by */
	expect_refused(open_proc("/proc", (long)getpid(), "mem", O_RDWR),
			open_proc("/proc", (long)c, "maps", O_RDONLY),
			"not /proc/");
	/* and the other way round: writes for the parent land in the child */
	expect_refused(open_proc("/proc", (long)c, "mem", O_RDWR),
			open_proc("/proc", (long)getpid(), "maps",
			O_RDONLY), "not /proc/");
	/* both the child's: not the process that connected either */
	expect_refused(open_proc("/proc", (long)c, "mem", O_RDWR),
			open_proc("/proc", (long)c, "maps", O_RDONLY),
			"not /proc/");
	end_child(c);
	still_serves();
}
END_TEST

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pid_t thread_tid;
static bool thread_done;

static void *
thread_fn(void *arg)
{
	(void) arg;
	pthread_mutex_lock(&lock);
	thread_tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&cond);
	while (!thread_done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

START_TEST(test_thread_mem)
{
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, thread_fn, NULL), 0);
	pthread_mutex_lock(&lock);
	while (thread_tid == 0)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	long self = (long)getpid(), tid = (long)thread_tid;

	expect_refused(open_proc("/proc/self/task", tid, "mem", O_RDWR),
			open_proc("/proc", self, "maps", O_RDONLY),
			"not /proc/");
	expect_refused(open_proc("/proc", tid, "mem", O_RDWR),
			open_proc("/proc", self, "maps", O_RDONLY),
			"not /proc/");
	expect_refused(open_proc("/proc", self, "mem", O_RDWR),
			open_proc("/proc/self/task", tid, "maps",
			O_RDONLY), "not /proc/");
	/* the main thread's entry under task/ is a thread's too */
	expect_refused(open_proc("/proc/self/task", self, "mem", O_RDWR),
			open_proc("/proc", self, "maps", O_RDONLY),
			"not /proc/");

	pthread_mutex_lock(&lock);
	thread_done = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	still_serves();
}
END_TEST

/*
 * A process opens its mem and maps, then exec's this program, which says
 * hello with them: the same process, the same /proc files, but the memory
 * they reach is that of the image before the exec, gone.
 */
START_TEST(test_execed_mem)
{
	int out[2];
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	pid_t c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0) {
		/* not O_CLOEXEC: they cross the exec */
		int mem = open("/proc/self/mem", O_RDWR);
		int maps = open("/proc/self/maps", O_RDONLY);
		if (mem < 0 || maps < 0 || dup2(out[1], STDOUT_FILENO) < 0)
			_exit(90);
		char a[16], b[16];
		(void) snprintf(a, sizeof(a), "%d", mem);
		(void) snprintf(b, sizeof(b), "%d", maps);
		char *argv[] = { "hostile_hello", EXEC_ARG, d.socket, a, b,
			NULL };
		execv("/proc/self/exe", argv);
		_exit(91);
	}
	(void) close(out[1]);
	char said[600] = "";
	size_t got = 0;
	ssize_t n;
	while (got < sizeof(said) - 1 && (n = read(out[0], said + got,
			sizeof(said) - 1 - got)) > 0)
		got += (size_t)n;
	(void) close(out[0]);
	int status;
	ck_assert_int_eq(waitpid(c, &status, 0), c);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			"status %d: %s", status, said);
	ck_assert_msg(strstr(said, "refused") && strstr(said, "exec"), "%s",
			said);
	still_serves();
}
END_TEST

/* In the exec'd image: hello with the inherited descriptors, say how it went */
static int
exec_hello(char **argv)
{
	char why[512];
	int code = hello_with(argv[2], atoi(argv[3]), atoi(argv[4]), why,
			sizeof(why));
	printf("%s %d: %s\n", code == 0 ? "accepted" : "refused", code, why);
	return code == RPMA_E_PROVIDER ? 0 : 1;
}

/* Descriptors of a process that ended, sent on by its parent. */
START_TEST(test_ended_process)
{
	int sp[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp),
			0);
	pid_t c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0) {
		int fds[2] = { open("/proc/self/mem", O_RDWR),
			open("/proc/self/maps", O_RDONLY) };
		char b = 0;
		_exit(th_ctl_send_raw(sp[1], &b, 1, fds, 2) ? 1 : 0);
	}
	int status;
	ck_assert_int_eq(waitpid(c, &status, 0), c);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	uint8_t b;
	int fds[CTL_MAX_FDS];
	unsigned n = 0;
	ck_assert_int_eq(ctl_recv(sp[0], &b, 1, fds, CTL_MAX_FDS, &n), 1);
	ck_assert_uint_eq(n, 2);
	expect_refused(fds[0], fds[1], "not /proc/");
	(void) close(sp[0]);
	(void) close(sp[1]);
	still_serves();
}
END_TEST

/* How a hello with these two paths went: 0 accepted, 1 refused, 2 else. */
static int
hello_paths(const char *mem, const char *maps, const char *reason)
{
	char why[512];
	int m = open(mem, O_RDWR | O_CLOEXEC);
	int p = open(maps, O_RDONLY | O_CLOEXEC);
	if (m < 0 || p < 0)
		return 2;
	int code = hello_with(d.socket, m, p, why, sizeof(why));
	(void) close(m);
	(void) close(p);
	if (code == 0)
		return 0;
	return code == RPMA_E_PROVIDER && strstr(why, reason) ? 1 : 2;
}

/*
 * pid 1 of a new pid namespace with its own /proc (as `unshare --pid
 * --mount-proc` makes): exit 0 when its own mem and maps are accepted
 * and a child's maps and its task entry refused
 */
static void
container_init(void)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
			mount("proc", "/proc", "proc", 0, NULL))
		_exit(81);
	pid_t k = fork();
	if (k == 0) {
		for (;;)
			(void) pause();
	}
	char maps[64];
	(void) snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)k);
	int own = hello_paths("/proc/self/mem", "/proc/self/maps", "");
	int child = hello_paths("/proc/self/mem", maps, "not /proc/");
	int task = hello_paths("/proc/self/task/1/mem", "/proc/self/maps",
			"not /proc/");
	(void) kill(k, SIGKILL);
	_exit(own != 0 ? 82 : child != 1 ? 83 : task != 1 ? 84 : 0);
}

START_TEST(test_container)
{
	pid_t c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0) {
		if (unshare(CLONE_NEWPID | CLONE_NEWNS))
			_exit(80);
		pid_t init = fork();
		if (init == 0)
			container_init();
		int status;
		_exit(waitpid(init, &status, 0) == init && WIFEXITED(status) ?
				WEXITSTATUS(status) : 85);
	}
	int status;
	ck_assert_int_eq(waitpid(c, &status, 0), c);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			"status %d (82: its own refused, 83: a child's maps "
			"accepted, 84: a thread's entry accepted)",
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	still_serves();
}
END_TEST

int
main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], EXEC_ARG) == 0)
		return exec_hello(argv);
	const TTest *const tc_hello[] = { test_own_accepted, test_child_maps,
		test_thread_mem, test_execed_mem, test_ended_process,
		test_container, NULL };
	const struct th_tcase tcases[] = {
		{ "hello", .tests = tc_hello, .timeout = 60, .setup = setup,
				.teardown = teardown },
	};
	return check_run_forked(th_suite("hostile_hello", tcases, TH_N(tcases)),
			CK_NORMAL);
}
