// SPDX-License-Identifier: BSD-3-Clause
/*
 * itest_proc.c -- role processes of an integration test: forking them,
 * waiting for them with a bound, their failure reports and their inboxes;
 * and where a process that does not end is stuck
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

#define FAIL_MAX 700
#define REPORT_MAX 4096

/* Written by the role processes, read by the parent. */
struct shared {
	char fail[IT_ROLES][FAIL_MAX];
};

/* One message; smaller than PIPE_BUF, so a write of it is atomic. */
struct msg {
	uint32_t tag;
	uint32_t len;
	uint8_t data[IT_MSG_MAX];
};

static struct shared *shared;
static int inbox[IT_ROLES][2];
static int pipes_made;
static enum it_role self = IT_PARENT;
static char report[REPORT_MAX];

static const char *const role_names[IT_ROLES] = {
	[IT_PARENT] = "parent",
	[IT_SERVER] = "server",
	[IT_CLIENT] = "client",
	[IT_THIRD] = "third",
	[IT_FOURTH] = "fourth",
};

const char *
it_role_name(enum it_role role)
{
	return (unsigned)role < IT_ROLES ? role_names[role] : "?";
}

enum it_role
it_role(void)
{
	return self;
}

void
it_init(void)
{
	if (shared == NULL) {
		shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (shared == MAP_FAILED) {
			perror("itest: mmap");
			abort();
		}
	}
	memset(shared, 0, sizeof(*shared));
	for (int r = 0; r < IT_ROLES; r++) {
		/* a test run without fork may call this again */
		if (pipes_made) {
			(void) close(inbox[r][0]);
			(void) close(inbox[r][1]);
		}
		if (pipe2(inbox[r], O_CLOEXEC)) {
			perror("itest: pipe2");
			abort();
		}
	}
	pipes_made = 1;
	self = IT_PARENT;
	report[0] = '\0';
}

void
it_fail(const char *file, int line, const char *fmt, ...)
{
	char msg[FAIL_MAX - 100];
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	if (shared)
		(void) snprintf(shared->fail[self], FAIL_MAX, "%s:%d: %s",
				base, line, msg);
	(void) fprintf(stderr, "[%s %d] %s:%d: %s\n", it_role_name(self),
			(int)getpid(), base, line, msg);
	/* no exit handlers: a failed role's leftovers are not leaks */
	_exit(1);
}

pid_t
it_spawn(enum it_role role, const struct it_env *env,
		const struct test_daemon *d, it_fn *fn, void *arg)
{
	(void) fflush(NULL);
	pid_t pid = fork();
	if (pid != 0)
		return pid;

	self = role;
	shared->fail[role][0] = '\0';
	test_daemon_use(d);
	/* the library's reasons for errors go to the test's log */
	(void) rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
			RPMA_LOG_LEVEL_WARNING);
	int ret = fn(env, arg);
	(void) fflush(NULL);
	/* exit(), not _exit(): LeakSanitizer checks a role that passed */
	exit(ret);
}

static void
report_add(enum it_role role, int code)
{
	size_t used = strlen(report);
	const char *why = shared ? shared->fail[role] : "";
	if (code == -1)
		why = *why ? why : "did not end in time (killed)";
	(void) snprintf(report + used, sizeof(report) - used,
			"%s%s: exit %d%s%s", used ? "; " : "",
			it_role_name(role), code, *why ? ": " : "", why);
}

const char *
it_report(void)
{
	return report;
}

void
it_group_init(struct it_group *g)
{
	memset(g, 0, sizeof(*g));
	report[0] = '\0';
}

int
it_group_spawn(struct it_group *g, enum it_role role,
		const struct it_env *env, const struct test_daemon *d,
		it_fn *fn, void *arg)
{
	if (g->n == IT_ROLES)
		return -1;
	pid_t pid = it_spawn(role, env, d, fn, arg);
	if (pid < 0)
		return -1;
	g->role[g->n] = role;
	g->pid[g->n] = pid;
	g->code[g->n] = -2;
	g->n++;
	return 0;
}

static int
group_index(const struct it_group *g, enum it_role role)
{
	for (int i = 0; i < g->n; i++) {
		if (g->role[i] == role)
			return i;
	}
	return -1;
}

pid_t
it_group_pid(const struct it_group *g, enum it_role role)
{
	int i = group_index(g, role);
	return i < 0 ? -1 : g->pid[i];
}

void
it_group_kill(struct it_group *g, enum it_role role)
{
	int i = group_index(g, role);
	if (i < 0 || g->code[i] != -2)
		return;
	(void) kill(g->pid[i], SIGKILL);
	(void) waitpid(g->pid[i], NULL, 0);
	g->code[i] = 0;	/* the way it was meant to end */
}

/* Reaps what ended; returns how many are still running. */
static int
group_reap(struct it_group *g, uint64_t *end)
{
	int left = 0;
	for (int i = 0; i < g->n; i++) {
		int status;
		if (g->code[i] != -2)
			continue;
		if (waitpid(g->pid[i], &status, WNOHANG) != g->pid[i]) {
			left++;
			continue;
		}
		g->code[i] = WIFEXITED(status) ? WEXITSTATUS(status) :
			128 + WTERMSIG(status);
		/* once one failed, the others get a short grace */
		uint64_t grace = it_now_ms() + 2000;
		if (g->code[i] != 0 && grace < *end)
			*end = grace;
	}
	return left;
}

int
it_group_join(struct it_group *g, int timeout_ms)
{
	uint64_t end = it_now_ms() + (uint64_t)timeout_ms;
	while (group_reap(g, &end) > 0) {
		if (it_now_ms() >= end) {
			for (int i = 0; i < g->n; i++) {
				if (g->code[i] == -2)
					g->code[i] = it_join(g->pid[i], 0);
			}
			break;
		}
		it_sleep_ms(2);
	}
	int failed = 0;
	for (int i = 0; i < g->n; i++) {
		if (g->code[i] != 0) {
			report_add(g->role[i], g->code[i]);
			failed = 1;
		}
	}
	return failed ? -1 : 0;
}

int
it_group_hear(struct it_group *g, uint32_t tag, int count)
{
	return it_group_hear_within(g, tag, count, IT_WAIT_MS);
}

int
it_group_hear_within(struct it_group *g, uint32_t tag, int count,
		int timeout_ms)
{
	for (int i = 0; i < count; i++) {
		if (it_hear(tag, NULL, 0, timeout_ms) < 0) {
			size_t used = strlen(report);
			(void) snprintf(report + used, sizeof(report) - used,
					"%sparent: no message %u from the "
					"roles; ", used ? "; " : "", tag);
			/* what the roles say about it */
			(void) it_group_join(g, 500);
			return -1;
		}
	}
	return 0;
}

int
it_run_pair(const struct it_env *env, it_fn *server, it_fn *client,
		void *arg)
{
	struct it_group g;
	it_group_init(&g);
	if (it_group_spawn(&g, IT_SERVER, env, env->srv, server, arg) ||
			it_group_spawn(&g, IT_CLIENT, env, env->cli, client,
			arg)) {
		(void) it_group_join(&g, 0);
		(void) snprintf(report, sizeof(report), "fork failed");
		return -1;
	}
	return it_group_join(&g, IT_ROLE_MS);
}

void
it_pair_test_cfg(int ndaemons, const char *config, it_fn *server,
		it_fn *client, void *arg)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start_cfg(&env, ndaemons, config), 0);
	ck_assert_msg(it_run_pair(&env, server, client, arg) == 0, "%s",
			it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}

void
it_pair_test(int ndaemons, it_fn *server, it_fn *client, void *arg)
{
	it_pair_test_cfg(ndaemons, NULL, server, client, arg);
}

/* ---------------------------------------------------------- messages */

int
it_tell(enum it_role to, uint32_t tag, const void *data, size_t len)
{
	if ((unsigned)to >= IT_ROLES || len > IT_MSG_MAX)
		return -1;
	struct msg m = { .tag = tag, .len = (uint32_t)len };
	if (len)
		memcpy(m.data, data, len);
	ssize_t n;
	do {
		n = write(inbox[to][1], &m, sizeof(m));
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(m) ? 0 : -1;
}

int
it_tell_both(uint32_t tag, const void *data, size_t len)
{
	if (it_tell(IT_SERVER, tag, data, len))
		return -1;
	return it_tell(IT_CLIENT, tag, data, len);
}

int
it_hear(uint32_t tag, void *data, size_t cap, int timeout_ms)
{
	uint64_t end = it_now_ms() + (uint64_t)timeout_ms;
	struct pollfd pfd = { .fd = inbox[self][0], .events = POLLIN };
	for (;;) {
		uint64_t now = it_now_ms();
		int wait = now >= end ? 0 : (int)(end - now);
		int r = poll(&pfd, 1, wait);
		if (r > 0)
			break;
		if (r == 0 || errno != EINTR)
			return -1;
	}
	struct msg m;
	ssize_t n;
	do {
		n = read(inbox[self][0], &m, sizeof(m));
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(m) || m.tag != tag || m.len > cap)
		return -1;
	if (m.len)
		memcpy(data, m.data, m.len);
	return (int)m.len;
}

size_t
it_expect(uint32_t tag, void *data, size_t cap)
{
	int n = it_hear(tag, data, cap, IT_WAIT_MS);
	IT_ASSERT_MSG(n >= 0, "no message with tag %u within %d ms (or "
			"another one)", tag, IT_WAIT_MS);
	return (size_t)n;
}

/* ------------------------------------------------------------ a hang */

void
it_dump_stacks(pid_t pid)
{
	char cmd[512];
	/*
	 * where each thread sleeps in the kernel, then where in the program
	 * (gdb's attach interrupts a wait: the process may go on after it)
	 */
	(void) snprintf(cmd, sizeof(cmd),
			"for t in /proc/%d/task/*; do "
			"echo \"thread $(cat $t/comm) ${t##*/}: "
			"$(cat $t/wchan)\"; cat $t/stack; done; "
			"command -v gdb > /dev/null && "
			"timeout 60 gdb -batch -nx -p %d "
			"-ex 'thread apply all bt' 2>&1 | grep -v '^\\[' ",
			(int)pid, (int)pid);
	fprintf(stderr, "--- the threads of pid %d\n", (int)pid);
	fflush(stderr);
	if (system(cmd) == -1)
		fprintf(stderr, "cannot run a shell: %s\n", strerror(errno));
	fprintf(stderr, "--- end of pid %d\n", (int)pid);
}
