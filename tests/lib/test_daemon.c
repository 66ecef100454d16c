// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_daemon.c -- a real rpmad for tests
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_daemon.h"

static const char *
rpmad_bin(void)
{
	const char *bin = getenv("RPMAD_BIN");
	return bin && *bin ? bin : "rpmad";
}

const char *
test_daemon_transport(void)
{
	const char *t = getenv("RPMAD_TEST_TRANSPORT");
	return t && *t ? t : "tcp";
}

static int
can_connect(const char *path)
{
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		(void) close(s);
		return 0;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	int ok = connect(s, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	(void) close(s);
	return ok;
}

/* Runs rpmad in d's directory, on d's socket and log, and waits for it. */
static int
spawn(struct test_daemon *d, const char *const *extra_args)
{
	/* RPMAD_TEST_LOG_LEVEL=debug: more of the daemons' story, when a
	 * test fails (TEST_KEEP_LOGS keeps it) */
	const char *level = getenv("RPMAD_TEST_LOG_LEVEL");
	const char *argv[32] = { rpmad_bin(), "--foreground", "--socket",
			d->socket, "--transport", test_daemon_transport(),
			"--log-level", level && *level ? level : "info",
			"--config", "/dev/null" };
	int argc = 10;
	for (int i = 0; extra_args && extra_args[i] && argc < 31; i++)
		argv[argc++] = extra_args[i];
	argv[argc] = NULL;

	(void) fflush(NULL);
	d->pid = fork();
	if (d->pid < 0)
		return -1;
	if (d->pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			(void) dup2(fd, STDERR_FILENO);
			(void) dup2(fd, STDOUT_FILENO);
		}
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		if (can_connect(d->socket)) {
			test_daemon_use(d);
			return 0;
		}
		int status;
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			return -1;
		}
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		(void) nanosleep(&ts, NULL);
	}
	test_daemon_kill(d);
	return -1;
}

int
test_daemon_start(struct test_daemon *d, const char *const *extra_args)
{
	memset(d, 0, sizeof(*d));
	const char *tmp = getenv("TMPDIR");
	(void) snprintf(d->dir, sizeof(d->dir), "%s/rpmad-test.XXXXXX",
			tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(d->dir) == NULL)
		return -1;
	(void) snprintf(d->socket, sizeof(d->socket), "%s/rpmad.sock", d->dir);
	(void) snprintf(d->log, sizeof(d->log), "%s/rpmad.log", d->dir);
	return spawn(d, extra_args);
}

int
test_daemon_restart(struct test_daemon *d, const char *const *extra_args)
{
	if (d->pid > 0 || d->dir[0] == '\0')
		return -1;
	return spawn(d, extra_args);
}

void
test_daemon_use(const struct test_daemon *d)
{
	(void) setenv("RPMAD_SOCKET", d->socket, 1);
}

int
test_daemon_alive(const struct test_daemon *d)
{
	if (d->pid <= 0)
		return 0;
	int status;
	return waitpid(d->pid, &status, WNOHANG) == 0;
}

static int
wait_exit(pid_t pid, int seconds)
{
	int status = -1;
	for (int i = 0; i < seconds * 100; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		(void) nanosleep(&ts, NULL);
	}
	(void) kill(pid, SIGKILL);
	(void) waitpid(pid, &status, 0);
	return -1;
}

int
test_daemon_stop(struct test_daemon *d)
{
	int status = 0;
	if (d->pid > 0) {
		(void) kill(d->pid, SIGTERM);
		status = wait_exit(d->pid, 10);
		d->pid = 0;
	}
	if (d->dir[0]) {
		(void) unlink(d->socket);
		if (getenv("TEST_KEEP_LOGS") == NULL)
			(void) unlink(d->log);
		(void) rmdir(d->dir);
	}
	return status;
}

int
test_daemon_stop_pid(pid_t pid)
{
	/* gone and reaped already: its parent was still there when it ended */
	if (kill(pid, SIGTERM) && errno == ESRCH)
		return 0;
	return wait_exit(pid, 10);
}

void
test_daemon_kill(struct test_daemon *d)
{
	if (d->pid > 0) {
		(void) kill(d->pid, SIGKILL);
		(void) waitpid(d->pid, NULL, 0);
		d->pid = 0;
	}
}
