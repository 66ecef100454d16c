// SPDX-License-Identifier: BSD-3-Clause
/*
 * th_run.c -- programs a test runs: children on pipes, commands run to
 * completion, rpmactl (see th_run.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "th_run.h"
#include "th_wait.h"

extern char **environ;

/* The environment plus `extra` (which wins), for execve. */
static char **
merged_env(char *const extra[])
{
	size_t n = 0, m = 0;
	while (environ[n])
		n++;
	while (extra && extra[m])
		m++;
	char **env = calloc(n + m + 1, sizeof(*env));
	if (env == NULL)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		size_t name = strcspn(environ[i], "=");
		bool replaced = false;
		for (size_t j = 0; j < m; j++) {
			if (strncmp(extra[j], environ[i], name + 1) == 0)
				replaced = true;
		}
		if (!replaced)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < m; j++)
		env[k++] = extra[j];
	return env;
}

void
th_exec(char *const argv[], char *const env[])
{
	(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
	char **e = merged_env(env);
	if (e)
		(void) execvpe(argv[0], argv, e);
	(void) fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int
proc_start(struct proc *p, char *const argv[], char *const env[],
		const char *err_path)
{
	memset(p, 0, sizeof(*p));
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC))
		return -1;
	if (pipe2(out, O_CLOEXEC)) {
		(void) close(in[0]);
		(void) close(in[1]);
		return -1;
	}
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		(void) dup2(in[0], STDIN_FILENO);
		(void) dup2(out[1], STDOUT_FILENO);
		int err = out[1];
		if (err_path)
			err = open(err_path, O_WRONLY | O_CREAT | O_APPEND,
					0644);
		(void) dup2(err >= 0 ? err : out[1], STDERR_FILENO);
		th_exec(argv, env);
	}
	(void) close(in[0]);
	(void) close(out[1]);
	p->in = in[1];
	p->out = out[0];
	return 0;
}

int
proc_line(struct proc *p, const char *prefix, char *line, size_t len,
		int timeout_ms)
{
	uint64_t until = it_now_ms() + (uint64_t) timeout_ms;
	for (;;) {
		char *nl;
		while ((nl = memchr(p->buf, '\n', p->len)) != NULL) {
			size_t n = (size_t) (nl - p->buf);
			bool match = strncmp(p->buf, prefix, strlen(prefix)) ==
					0;
			if (match) {
				size_t c = n < len - 1 ? n : len - 1;
				memcpy(line, p->buf, c);
				line[c] = '\0';
			}
			memmove(p->buf, nl + 1, p->len - n - 1);
			p->len -= n + 1;
			if (match)
				return 0;
		}
		long long left = (long long) until - (long long) it_now_ms();
		if (left <= 0 || p->len == sizeof(p->buf))
			return -1;
		struct pollfd pfd = { .fd = p->out, .events = POLLIN };
		int r = poll(&pfd, 1, (int) left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		ssize_t got = read(p->out, p->buf + p->len,
				sizeof(p->buf) - p->len);
		if (got <= 0)
			return -1;
		p->len += (size_t) got;
	}
}

int
proc_send(struct proc *p, const char *text)
{
	size_t len = strlen(text);
	return write(p->in, text, len) == (ssize_t) len ? 0 : -1;
}

bool
proc_alive(const struct proc *p)
{
	int status;
	return p->pid > 0 && waitpid(p->pid, &status, WNOHANG) == 0;
}

int
proc_end(struct proc *p, int sig)
{
	if (p->pid <= 0)
		return -1;
	if (sig)
		(void) kill(p->pid, sig);
	(void) close(p->in);
	int status = -1;
	if (th_wait_pid(p->pid, TH_WAIT_MS, &status))
		status = -1;
	(void) close(p->out);
	p->pid = 0;
	return status;
}

/* Reads what is there into *buf (growing it). false at end of file. */
static bool
slurp(int fd, char **buf, size_t *len, size_t *cap)
{
	if (*cap - *len < 4096) {
		size_t cap2 = *cap ? *cap * 2 : 8192;
		char *b = realloc(*buf, cap2);
		if (b == NULL)
			return false;
		*buf = b;
		*cap = cap2;
		(*buf)[*len] = '\0';
	}
	ssize_t n = read(fd, *buf + *len, *cap - *len - 1);
	if (n < 0 && errno == EINTR)
		return true;
	if (n <= 0)
		return false;
	*len += (size_t) n;
	(*buf)[*len] = '\0';
	return true;
}

int
run_cmd(struct run *r, char *const argv[], uid_t uid, gid_t gid,
		const gid_t *groups, size_t n_groups, int timeout_ms)
{
	memset(r, 0, sizeof(*r));
	r->status = -1;
	int out[2], err[2];
	if (pipe2(out, O_CLOEXEC))
		return -1;
	if (pipe2(err, O_CLOEXEC)) {
		(void) close(out[0]);
		(void) close(out[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		(void) dup2(null, STDIN_FILENO);
		(void) dup2(out[1], STDOUT_FILENO);
		(void) dup2(err[1], STDERR_FILENO);
		if (uid != (uid_t) -1 &&
				(setgroups(n_groups, groups) || setgid(gid) ||
						setuid(uid))) {
			perror("dropping privileges");
			_exit(126);
		}
		th_exec(argv, NULL);
	}
	(void) close(out[1]);
	(void) close(err[1]);

	size_t olen = 0, ocap = 0, elen = 0, ecap = 0;
	bool oopen = true, eopen = true;
	uint64_t until = it_now_ms() + (uint64_t) timeout_ms;
	int ret = 0;
	while (oopen || eopen) {
		long long left = (long long) until - (long long) it_now_ms();
		if (left <= 0) {
			ret = -1;
			break;
		}
		struct pollfd pfd[2] = {
			{ .fd = oopen ? out[0] : -1, .events = POLLIN },
			{ .fd = eopen ? err[0] : -1, .events = POLLIN },
		};
		int n = poll(pfd, 2, (int) left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -1;
			break;
		}
		if (pfd[0].revents)
			oopen = slurp(out[0], &r->out, &olen, &ocap);
		if (pfd[1].revents)
			eopen = slurp(err[0], &r->err, &elen, &ecap);
	}
	(void) close(out[0]);
	(void) close(err[0]);
	if (ret)
		(void) kill(pid, SIGKILL);
	int status;
	if (waitpid(pid, &status, 0) == pid && ret == 0) {
		if (WIFEXITED(status))
			r->status = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			r->status = 128 + WTERMSIG(status);
	}
	if (r->out == NULL)
		r->out = strdup("");
	if (r->err == NULL)
		r->err = strdup("");
	if (r->out == NULL || r->err == NULL)
		ret = -1;
	return ret;
}

void
run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

int
th_have_program(const char *name)
{
	char cmd[256];
	(void) snprintf(cmd, sizeof(cmd), "command -v %s", name);
	char *argv[] = { "sh", "-c", cmd, NULL };
	struct run r;
	if (run_cmd(&r, argv, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS))
		return -1;
	int have = r.status == 0;
	run_free(&r);
	return have;
}

bool
th_ck_have_program(const char *name)
{
	int have = th_have_program(name);
	ck_assert_msg(have >= 0, "sh could not be run to look for %s", name);
	return have;
}

int
rpmactl(struct run *r, const char *socket, ...)
{
	const char *bin = getenv("RPMACTL_BIN");
	char *argv[32] = { (char *) (bin && *bin ? bin : "rpmactl"), "--socket",
		(char *) socket };
	int argc = 3;
	va_list ap;
	va_start(ap, socket);
	const char *a;
	while ((a = va_arg(ap, const char *)) != NULL && argc < 31)
		argv[argc++] = (char *) a;
	va_end(ap);
	argv[argc] = NULL;
	return run_cmd(r, argv, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS);
}
