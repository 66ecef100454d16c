// SPDX-License-Identifier: BSD-3-Clause
/*
 * upgrade.c -- upgrading rpmad in place (see upgrade.h): starting the
 * installed binary with the control socket, learning when it serves, and,
 * in the new rpmad, what the old one handed over
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control/sock_path.h"
#include "control/upgrade.h"
#include "core/daemon.h"
#include "fs/fsident.h"
#include "log/log.h"

#define ENV_FD "RPMAD_UPGRADE_FD"
#define ENV_SOCKET "RPMAD_UPGRADE_SOCKET"
#define ENV_PATH "RPMAD_UPGRADE_PATH"
#define ENV_READY "RPMAD_UPGRADE_READY_FD"
#define ENV_PREDECESSORS "RPMAD_PREDECESSORS"

/*
 * How long a new rpmad may take to serve (it finds its devices first);
 * then it is killed and this one goes on serving.
 */
#define READY_TIMEOUT_NS (60 * 1000 * 1000 * 1000ull)

/* the binary as installed when rpmad started, and its command line */
static char exe_path[PATH_MAX];
static char **exe_argv;

/* this rpmad's socket, for handing over */
static int own_lfd = -1;
static bool own_passed;

/* what the predecessor handed over */
static int inherited_fd = -1;
static bool inherited_passed;
static char inherited_path[sizeof(rpmad.cfg.socket_path)];
static int ready_fd = -1;

/* an older rpmad still serving its sessions (pid 0: it has exited) */
struct predecessor {
	pid_t pid;
	struct loop_watch watch;	/* its pidfd: readable once it exits */
};
static struct predecessor preds[UPGRADE_MAX_PREDECESSORS];
static size_t n_preds;

/* the new rpmad being started, until it serves */
static pid_t child;
static struct loop_watch child_ready = { .fd = -1 };
static struct loop_timer child_timer;
static upgrade_handover_fn *handover;
static bool draining;

/* -------------------------------------------------------- environment */

/* A descriptor number from the environment (then unset), or -1. */
static int
env_fd(const char *name)
{
	const char *v = getenv(name);
	int fd = -1;
	if (v && *v) {
		char *end;
		long n = strtol(v, &end, 10);
		if (*end == '\0' && n > STDERR_FILENO && n < INT_MAX &&
				fcntl((int)n, F_GETFD) >= 0)
			fd = (int)n;
		else
			log_warning("%s=%s names no descriptor: ignored", name,
					v);
	}
	(void) unsetenv(name);
	if (fd >= 0)
		(void) fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

static void
take_predecessors(void)
{
	const char *v = getenv(ENV_PREDECESSORS);
	for (const char *p = v; p && *p && n_preds < UPGRADE_MAX_PREDECESSORS;) {
		char *end;
		long pid = strtol(p, &end, 10);
		if (end == p || pid <= 0 || pid > INT_MAX)
			break;
		preds[n_preds].pid = (pid_t)pid;
		preds[n_preds].watch.fd = -1;
		n_preds++;
		p = *end == ',' ? end + 1 : end;
	}
	(void) unsetenv(ENV_PREDECESSORS);
}

int
upgrade_init(char **argv)
{
	ssize_t n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	if (n <= 0) {
		log_warning("cannot read the path of rpmad's binary: %s; "
				"upgrades will fail", strerror(errno));
		exe_path[0] = '\0';
	} else {
		exe_path[n] = '\0';
	}
	exe_argv = argv;
	inherited_fd = env_fd(ENV_FD);
	const char *how = getenv(ENV_SOCKET);
	inherited_passed = how && strcmp(how, "passed") == 0;
	(void) unsetenv(ENV_SOCKET);
	const char *path = getenv(ENV_PATH);
	(void) snprintf(inherited_path, sizeof(inherited_path), "%s",
			path ? path : "");
	(void) unsetenv(ENV_PATH);
	ready_fd = env_fd(ENV_READY);
	take_predecessors();
	return 0;
}

int
upgrade_inherited_socket(bool *passed, const char **path)
{
	*passed = inherited_passed;
	*path = inherited_path;
	return inherited_fd;
}

/* ------------------------------------------------------- predecessors */

static void
predecessor_gone(struct loop_watch *w, uint32_t events)
{
	(void) events;
	struct predecessor *p = w->arg;
	log_notice("upgrade: the older rpmad (pid %d) has drained and exited",
			(int)p->pid);
	loop_del(rpmad.loop, w);
	(void) close(w->fd);
	w->fd = -1;
	p->pid = 0;
}

void
upgrade_watch_predecessors(void)
{
	size_t kept = 0;
	for (size_t i = 0; i < n_preds; i++) {
		/* a pidfd: the pid cannot be reused under it */
		int fd = (int)syscall(SYS_pidfd_open, preds[i].pid, 0);
		if (fd < 0)
			continue;	/* gone already */
		(void) fcntl(fd, F_SETFD, FD_CLOEXEC);
		preds[kept].pid = preds[i].pid;
		preds[kept].watch.fd = fd;
		preds[kept].watch.fn = predecessor_gone;
		preds[kept].watch.arg = &preds[kept];
		kept++;
	}
	n_preds = kept;
	for (size_t i = 0; i < n_preds; i++) {
		if (loop_add(rpmad.loop, &preds[i].watch, EPOLLIN)) {
			/* named all the same, while this rpmad runs */
			log_warning("upgrade: cannot watch pid %d",
					(int)preds[i].pid);
		} else {
			log_notice("upgrade: the older rpmad (pid %d) serves "
					"its sessions until they end",
					(int)preds[i].pid);
		}
	}
}

size_t
upgrade_predecessors(pid_t *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < n_preds && n < max; i++)
		if (preds[i].pid)
			out[n++] = preds[i].pid;
	return n;
}

void
upgrade_ready(void)
{
	if (ready_fd < 0)
		return;
	if (write(ready_fd, "r", 1) != 1)
		log_warning("upgrade: cannot tell the older rpmad: %s",
				strerror(errno));
	(void) close(ready_fd);
	ready_fd = -1;
}

/* ------------------------------------------------- starting a new one */

void
upgrade_set_socket(int lfd, bool passed)
{
	own_lfd = lfd;
	own_passed = passed;
}

void
upgrade_on_handover(upgrade_handover_fn *fn)
{
	handover = fn;
}

bool
upgrade_draining(void)
{
	return draining;
}

pid_t
upgrade_pending(void)
{
	return child;
}

static void
child_forget(void)
{
	if (child_ready.fd >= 0) {
		loop_del(rpmad.loop, &child_ready);
		(void) close(child_ready.fd);
		child_ready.fd = -1;
	}
	loop_timer_cancel(rpmad.loop, &child_timer);
	child = 0;
}

/* what became of a child that did not get to serve */
static void
child_failed(const char *what)
{
	int status;
	pid_t pid = child;
	child_forget();
	char how[64] = "";
	if (waitpid(pid, &status, WNOHANG) == pid) {
		if (WIFEXITED(status))
			(void) snprintf(how, sizeof(how), " (exit status %d)",
					WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			(void) snprintf(how, sizeof(how), " (%s)",
					strsignal(WTERMSIG(status)));
	}
	log_err("upgrade: the new rpmad (pid %d) %s%s; this rpmad goes on "
			"serving (see the new one's log lines)", (int)pid,
			what, how);
}

static void
child_said(struct loop_watch *w, uint32_t events)
{
	(void) events;
	char c;
	ssize_t n;
	do {
		n = read(w->fd, &c, 1);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n != 1 || c != 'r') {
		child_failed("ended before it served");
		return;
	}
	pid_t pid = child;
	child_forget();
	draining = true;
	if (handover)
		handover(pid);
}

static void
child_overdue(struct loop_timer *t)
{
	(void) t;
	(void) kill(child, SIGKILL);
	child_failed("did not serve within 60 s and was killed");
}

/* The environment value naming this rpmad and those draining before it. */
static void
predecessors_value(char *buf, size_t len)
{
	int off = snprintf(buf, len, "%d", (int)getpid());
	for (size_t i = 0; i < n_preds && off > 0 && (size_t)off < len; i++)
		if (preds[i].pid)
			off += snprintf(buf + off, len - (size_t)off, ",%d",
					(int)preds[i].pid);
}

/* room for "WATCHDOG_PID=" and a pid, filled in by the child */
#define WATCHDOG_PID_SIZE 32

/*
 * The new rpmad's environment: this one's but for what it hands over,
 * which is added (and WATCHDOG_PID, left for the child to fill in, when
 * the service manager watches). Made before the fork: rpmad has threads
 * (core/offload.c), so the child may only call what is async-signal-safe.
 * NULL when out of memory; free with env_free().
 */
struct new_env {
	char **envp;
	size_t n;
	char *watchdog;		/* its WATCHDOG_PID= entry, or NULL */
};

static void
env_free(struct new_env *e)
{
	for (size_t i = 0; e->envp && i < e->n; i++)
		free(e->envp[i]);
	free(e->envp);
	e->envp = NULL;
}

static bool
env_ours(const char *entry)
{
	static const char *const names[] = { ENV_FD, ENV_SOCKET, ENV_PATH,
		ENV_READY, ENV_PREDECESSORS, "WATCHDOG_PID" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t len = strlen(names[i]);
		if (strncmp(entry, names[i], len) == 0 && entry[len] == '=')
			return true;
	}
	return false;
}

static int
env_add(struct new_env *e, const char *name, const char *value)
{
	char *entry;
	if (asprintf(&entry, "%s=%s", name, value) < 0)
		return -ENOMEM;
	e->envp[e->n++] = entry;
	return 0;
}

static int
env_make(struct new_env *e, int lfd, int ready_w)
{
	extern char **environ;
	size_t count = 0;
	while (environ[count])
		count++;
	memset(e, 0, sizeof(*e));
	e->envp = calloc(count + 8, sizeof(*e->envp));
	if (e->envp == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		if (env_ours(environ[i]))
			continue;
		e->envp[e->n] = strdup(environ[i]);
		if (e->envp[e->n] == NULL)
			goto nomem;
		e->n++;
	}
	char num[16], preds_value[UPGRADE_MAX_PREDECESSORS * 12 + 16];
	predecessors_value(preds_value, sizeof(preds_value));
	(void) snprintf(num, sizeof(num), "%d", lfd);
	if (env_add(e, ENV_FD, num))
		goto nomem;
	(void) snprintf(num, sizeof(num), "%d", ready_w);
	if (env_add(e, ENV_READY, num) ||
			env_add(e, ENV_SOCKET, own_passed ? "passed" : "made") ||
			env_add(e, ENV_PATH, rpmad.cfg.socket_path) ||
			env_add(e, ENV_PREDECESSORS, preds_value))
		goto nomem;
	/* the service manager's watchdog follows the main process */
	if (getenv("WATCHDOG_USEC")) {
		e->watchdog = calloc(1, WATCHDOG_PID_SIZE);
		if (e->watchdog == NULL)
			goto nomem;
		e->envp[e->n++] = e->watchdog;
	}
	return 0;
nomem:
	env_free(e);
	return -ENOMEM;
}

/* "WATCHDOG_PID=<pid>" into buf, with nothing but stores (in the child) */
static void
watchdog_entry(char *buf, pid_t pid)
{
	static const char name[] = "WATCHDOG_PID=";
	size_t n = sizeof(name) - 1;
	memcpy(buf, name, n);
	char digits[12];
	size_t d = 0;
	do {
		digits[d++] = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid > 0 && d < sizeof(digits));
	while (d > 0)
		buf[n++] = digits[--d];
	buf[n] = '\0';
}

/*
 * In the child: the exec, or _exit. Nothing here may return, and only
 * async-signal-safe calls are made (another thread may have held a lock
 * at the fork).
 */
static void
exec_new(int exe_fd, int lfd, int ready_w, struct new_env *e)
{
	/* the two descriptors cross the exec; everything else is CLOEXEC */
	if (fcntl(lfd, F_SETFD, 0) || fcntl(ready_w, F_SETFD, 0))
		_exit(126);
	if (e->watchdog)
		watchdog_entry(e->watchdog, getpid());
	/* the file checked, whatever its path holds by now (execveat) */
	fexecve(exe_fd, exe_argv, e->envp);
	static const char msg[] = "rpmad: upgrade: cannot run the binary\n";
	(void) !write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(127);
}

/*
 * The binary to run, opened once: it and every directory above it must be
 * root's and written by nobody else (the walk of the socket's path, with
 * root alone trusted: sock_path.c), so that nobody but root can have put
 * or swapped anything there; the file opened is the one walked to (device
 * and inode), and the exec runs that descriptor, not the path. A
 * descriptor (O_CLOEXEC), or a negative errno with the reason.
 */
static int
open_binary(char *why, size_t len)
{
	struct stat walked, opened;
	char real[PATH_MAX], err[PATH_MAX + 128];
	int ret = sock_path_check_file(exe_path, 0, &walked, real,
			sizeof(real), err, sizeof(err));
	if (ret) {
		(void) snprintf(why, len, "%s is not a binary only root could "
				"have installed: %s", exe_path, err);
		return ret;
	}
	int fd = open(real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		(void) snprintf(why, len, "%s: %s", real, strerror(errno));
		return ret;
	}
	if (fstat(fd, &opened) || opened.st_dev != walked.st_dev ||
			opened.st_ino != walked.st_ino) {
		(void) close(fd);
		(void) snprintf(why, len, "%s changed while it was checked",
				real);
		return -EAGAIN;
	}
	if (!(opened.st_mode & S_IXUSR)) {
		(void) close(fd);
		(void) snprintf(why, len, "%s is not executable", real);
		return -EACCES;
	}
	return fd;
}

int
upgrade_start(const char *by, pid_t *pid, char *why, size_t len)
{
	if (draining) {
		(void) snprintf(why, len, "this rpmad (pid %d) has handed its "
				"socket over already and drains; upgrade the one "
				"that serves it", (int)getpid());
		return -EALREADY;
	}
	if (child) {
		(void) snprintf(why, len, "an upgrade is under way (the new "
				"rpmad is pid %d)", (int)child);
		return -EBUSY;
	}
	if (own_lfd < 0 || exe_path[0] == '\0') {
		(void) snprintf(why, len, "no socket or binary to hand over");
		return -EINVAL;
	}
	/* the binary at that path now: a package may have replaced it */
	char *deleted = strstr(exe_path, " (deleted)");
	if (deleted && deleted[sizeof(" (deleted)") - 1] == '\0')
		*deleted = '\0';
	/* root's file-system identity: the walk, the open and the exec */
	fsident_root();
	int exe_fd = open_binary(why, len);
	if (exe_fd < 0) {
		fsident_restore();
		return exe_fd;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		int e = errno;
		fsident_restore();
		(void) close(exe_fd);
		(void) snprintf(why, len, "pipe: %s", strerror(e));
		return -e;
	}
	struct new_env env;
	if (env_make(&env, own_lfd, p[1])) {
		fsident_restore();
		(void) close(exe_fd);
		(void) close(p[0]);
		(void) close(p[1]);
		(void) snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	pid_t c = fork();
	fsident_restore();
	if (c < 0) {
		int e = errno;
		env_free(&env);
		(void) close(exe_fd);
		(void) close(p[0]);
		(void) close(p[1]);
		(void) snprintf(why, len, "fork: %s", strerror(e));
		return -e;
	}
	if (c == 0)
		exec_new(exe_fd, own_lfd, p[1], &env);
	env_free(&env);
	(void) close(exe_fd);
	(void) close(p[1]);
	child = c;
	child_ready.fd = p[0];
	child_ready.fn = child_said;
	if (loop_add(rpmad.loop, &child_ready, EPOLLIN)) {
		(void) kill(c, SIGKILL);
		child_failed("could not be watched");
		(void) snprintf(why, len, "cannot watch the new rpmad");
		return -EIO;
	}
	child_timer.fn = child_overdue;
	loop_timer_arm(rpmad.loop, &child_timer, READY_TIMEOUT_NS);
	log_notice("upgrade (%s): started %s (root's, checked, run by "
			"descriptor) as pid %d; it serves new clients "
			"once ready, this rpmad then serves its own sessions "
			"until they end", by, exe_path, (int)c);
	*pid = c;
	return 0;
}

void
upgrade_reap(void)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == child)
			continue;	/* its pipe says what happened */
		log_info("upgrade: the newer rpmad (pid %d) has exited",
				(int)pid);
	}
}
