// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_daemon.c -- a real rpmad for tests (see test_daemon.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_daemon.h"
#include "th_files.h"
#include "th_run.h"
#include "th_wait.h"

/* how long a daemon may take to start, and to end after SIGTERM */
#define START_MS 10000
#define STOP_MS 10000

const char *
test_daemon_transport(void)
{
	const char *t = getenv("RPMAD_TEST_TRANSPORT");
	return t && *t ? t : "tcp";
}

/* Runs rpmad in d's directory, on d's socket and log, and waits for it. */
static int
spawn(struct test_daemon *d, const char *const *extra_args, char *const *env)
{
	const char *argv[40] = { d->bin, "--foreground", "--socket", d->socket,
		"--transport", test_daemon_transport(), "--config",
		d->config[0] ? d->config : "/dev/null" };
	int argc = 8;
	if (!d->cfg_log_level) {
		/* RPMAD_TEST_LOG_LEVEL=debug: more of the daemons' story,
		 * when a test fails (TEST_KEEP_LOGS keeps it) */
		const char *level = getenv("RPMAD_TEST_LOG_LEVEL");
		argv[argc++] = "--log-level";
		argv[argc++] = level && *level ? level : "info";
	}
	for (int i = 0; extra_args && extra_args[i] && argc < 39; i++)
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
		th_exec((char *const *) argv, env);
	}
	uint64_t end = it_now_ms() + START_MS;
	while (!th_socket_accepts(d->socket)) {
		int status;
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			return -1;
		}
		if (it_now_ms() >= end) {
			test_daemon_kill(d);
			return -1;
		}
		it_sleep_ms(10);
	}
	test_daemon_use(d);
	return 0;
}

int
test_daemon_start_opts(struct test_daemon *d, const struct test_daemon_opts *o)
{
	memset(d, 0, sizeof(*d));
	d->cfg_log_level = o->cfg_log_level;
	const char *bin = o->bin ? o->bin : getenv("RPMAD_BIN");
	(void) snprintf(d->bin, sizeof(d->bin), "%s",
			bin && *bin ? bin : "rpmad");
	if (th_mkdtemp(d->dir, sizeof(d->dir), "rpmad-test"))
		return -1;
	if (o->dir_mode && chmod(d->dir, o->dir_mode))
		return -1;
	(void) snprintf(d->socket, sizeof(d->socket), "%s/rpmad.sock", d->dir);
	(void) snprintf(d->log, sizeof(d->log), "%s/rpmad.log", d->dir);
	if (o->config) {
		(void) snprintf(d->config, sizeof(d->config), "%s/rpmad.conf",
				d->dir);
		if (write_text(d->config, o->config))
			return -1;
	}
	return spawn(d, o->args, o->env);
}

int
test_daemon_start(struct test_daemon *d, const char *const *extra_args)
{
	return test_daemon_start_opts(d,
			&(struct test_daemon_opts){ .args = extra_args });
}

int
test_daemon_start_cfg(struct test_daemon *d, const char *config)
{
	return test_daemon_start_opts(d,
			&(struct test_daemon_opts){ .config = config ? config :
								       "",
					.dir_mode = 0755,
					.cfg_log_level = true });
}

int
test_daemon_restart(struct test_daemon *d, const char *const *extra_args)
{
	if (d->pid > 0 || d->dir[0] == '\0')
		return -1;
	return spawn(d, extra_args, NULL);
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

int
test_daemon_stop(struct test_daemon *d)
{
	int status = 0;
	if (d->pid > 0) {
		(void) kill(d->pid, SIGTERM);
		if (th_wait_pid(d->pid, STOP_MS, &status))
			status = -1;
		d->pid = 0;
	}
	if (d->dir[0] && getenv("TEST_KEEP_LOGS") == NULL)
		th_remove_tree(d->dir);
	else if (d->dir[0])
		(void) unlink(d->socket);
	d->dir[0] = '\0';
	return status;
}

int
test_daemon_stop_pid(pid_t pid)
{
	/* gone and reaped already: its parent was still there when it ended */
	if (kill(pid, SIGTERM) && errno == ESRCH)
		return 0;
	int status;
	return th_wait_pid(pid, STOP_MS, &status) ? -1 : status;
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

int
test_daemon_log_count(const struct test_daemon *d, const char *what)
{
	FILE *f = fopen(d->log, "r");
	if (f == NULL)
		return -1;
	char line[1024];
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, what))
			n++;
	}
	(void) fclose(f);
	return n;
}
