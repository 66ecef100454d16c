// SPDX-License-Identifier: BSD-3-Clause
/*
 * ops_util.c -- processes, commands, JSON, files and waits for the
 * operations tests
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ops_util.h"

extern char **environ;

static long long
now_ms(void)
{
	struct timespec ts;
	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

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

/*
 * execvpe with the merged environment; only returns on failure. The child
 * dies with the test process (a failed check ends that at once), so that
 * no daemon or client outlives its test.
 */
static void
exec_child(char *const argv[], char *const env[])
{
	(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
	char **e = merged_env(env);
	if (e)
		(void) execvpe(argv[0], argv, e);
	(void) fprintf(stderr, "cannot run %s: %s\n", argv[0],
			strerror(errno));
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
		exec_child(argv, env);
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
	long long until = now_ms() + timeout_ms;
	for (;;) {
		char *nl;
		while ((nl = memchr(p->buf, '\n', p->len)) != NULL) {
			size_t n = (size_t)(nl - p->buf);
			bool match = strncmp(p->buf, prefix,
					strlen(prefix)) == 0;
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
		long long left = until - now_ms();
		if (left <= 0 || p->len == sizeof(p->buf))
			return -1;
		struct pollfd pfd = { .fd = p->out, .events = POLLIN };
		int r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		ssize_t got = read(p->out, p->buf + p->len,
				sizeof(p->buf) - p->len);
		if (got <= 0)
			return -1;
		p->len += (size_t)got;
	}
}

int
proc_send(struct proc *p, const char *text)
{
	size_t len = strlen(text);
	return write(p->in, text, len) == (ssize_t)len ? 0 : -1;
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
	long long until = now_ms() + OPS_WAIT_MS;
	for (;;) {
		pid_t r = waitpid(p->pid, &status, WNOHANG);
		if (r == p->pid)
			break;
		if (r < 0 || now_ms() > until) {
			(void) kill(p->pid, SIGKILL);
			(void) waitpid(p->pid, &status, 0);
			status = -1;
			break;
		}
		sleep_ms(10);
	}
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
	*len += (size_t)n;
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
		if (uid != (uid_t)-1 && (setgroups(n_groups, groups) ||
				setgid(gid) || setuid(uid))) {
			perror("dropping privileges");
			_exit(126);
		}
		exec_child(argv, NULL);
	}
	(void) close(out[1]);
	(void) close(err[1]);

	size_t olen = 0, ocap = 0, elen = 0, ecap = 0;
	bool oopen = true, eopen = true;
	long long until = now_ms() + timeout_ms;
	int ret = 0;
	while (oopen || eopen) {
		long long left = until - now_ms();
		if (left <= 0) {
			ret = -1;
			break;
		}
		struct pollfd pfd[2] = {
			{ .fd = oopen ? out[0] : -1, .events = POLLIN },
			{ .fd = eopen ? err[0] : -1, .events = POLLIN },
		};
		int n = poll(pfd, 2, (int)left);
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
rpmactl(struct run *r, const char *socket, ...)
{
	const char *bin = getenv("RPMACTL_BIN");
	char *argv[32] = { (char *)(bin && *bin ? bin : "rpmactl"),
		"--socket", (char *)socket };
	int argc = 3;
	va_list ap;
	va_start(ap, socket);
	const char *a;
	while ((a = va_arg(ap, const char *)) != NULL && argc < 31)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	return run_cmd(r, argv, (uid_t)-1, 0, NULL, 0, OPS_WAIT_MS);
}

/* ------------------------------------------------------------ JSON */

/* strict: one document, valid UTF-8; lists give "path.#" = length */
static const char flatten_py[] =
"import json, sys\n"
"doc = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))\n"
"def show(v):\n"
"    if v is None: return 'null'\n"
"    if isinstance(v, bool): return 'true' if v else 'false'\n"
"    return str(v).encode('unicode_escape').decode('ascii')\n"
"def walk(path, v):\n"
"    if isinstance(v, dict):\n"
"        for k, x in v.items(): walk(path + [k], x)\n"
"    elif isinstance(v, list):\n"
"        print('.'.join(path + ['#']) + '\\t' + str(len(v)))\n"
"        for i, x in enumerate(v): walk(path + [str(i)], x)\n"
"    else:\n"
"        print('.'.join(path) + '\\t' + show(v))\n"
"walk([], doc)\n";

int
flat_parse(struct flat *f, const char *json)
{
	memset(f, 0, sizeof(*f));
	char path[] = "/tmp/ops-json.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	size_t len = strlen(json);
	bool ok = write(fd, json, len) == (ssize_t)len;
	(void) close(fd);
	struct run r;
	char *argv[] = { "python3", "-c", (char *)flatten_py, path, NULL };
	int ret = ok ? run_cmd(&r, argv, (uid_t)-1, 0, NULL, 0,
			OPS_WAIT_MS) : -1;
	(void) unlink(path);
	if (ret || r.status != 0) {
		if (ret == 0) {
			(void) fprintf(stderr, "not valid JSON (%s):\n%s\n",
					r.err, json);
			run_free(&r);
		}
		return -1;
	}
	size_t cap = 0;
	for (char *line = strtok(r.out, "\n"); line;
			line = strtok(NULL, "\n")) {
		char *tab = strchr(line, '\t');
		if (tab == NULL)
			continue;
		*tab = '\0';
		/* doubling: a listing of thousands is not copied each line */
		if (f->n == cap) {
			cap = cap ? 2 * cap : 64;
			char **k = realloc(f->key, cap * sizeof(*k));
			if (k)
				f->key = k;
			char **v = realloc(f->val, cap * sizeof(*v));
			if (v)
				f->val = v;
			if (k == NULL || v == NULL)
				break;
		}
		f->key[f->n] = strdup(line);
		f->val[f->n] = strdup(tab + 1);
		f->n++;
	}
	run_free(&r);
	/* an index, so that looking every element up costs n, not n^2 */
	if (hcreate_r(2 * f->n + 16, &f->index)) {
		f->indexed = true;
		for (size_t i = 0; i < f->n; i++) {
			ENTRY e = { f->key[i], f->val[i] }, *found;
			if (f->key[i] && !hsearch_r(e, ENTER, &found, &f->index))
				f->indexed = false;
		}
	}
	return 0;
}

const char *
flat_get(const struct flat *f, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (f->indexed) {
		ENTRY e = { path, NULL }, *found = NULL;
		return hsearch_r(e, FIND, &found,
				(struct hsearch_data *)&f->index) ?
			found->data : NULL;
	}
	for (size_t i = 0; i < f->n; i++) {
		if (f->key[i] && strcmp(f->key[i], path) == 0)
			return f->val[i];
	}
	return NULL;
}

long
flat_len(const struct flat *f, const char *path)
{
	const char *v = flat_get(f, "%s.#", path);
	return v ? strtol(v, NULL, 10) : -1;
}

void
flat_free(struct flat *f)
{
	if (f->indexed)
		hdestroy_r(&f->index);
	for (size_t i = 0; i < f->n; i++) {
		free(f->key[i]);
		free(f->val[i]);
	}
	free(f->key);
	free(f->val);
	memset(f, 0, sizeof(*f));
}

/* ------------------------------------------------------------ files */

char *
read_text(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	while (slurp(fd, &buf, &len, &cap))
		;
	(void) close(fd);
	if (buf == NULL)
		buf = strdup("");
	return buf;
}

int
write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	if (f == NULL)
		return -1;
	bool ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

bool
wait_text(const char *path, const char *text, int timeout_ms)
{
	long long until = now_ms() + timeout_ms;
	for (;;) {
		char *t = read_text(path);
		bool found = t && strstr(t, text);
		free(t);
		if (found)
			return true;
		if (now_ms() > until)
			return false;
		sleep_ms(20);
	}
}

size_t
count_lines_with(const char *text, ...)
{
	size_t count = 0;
	const char *line = text;
	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char *copy = strndup(line, len);
		bool all = copy != NULL;
		va_list ap;
		va_start(ap, text);
		const char *w;
		while (all && (w = va_arg(ap, const char *)) != NULL)
			all = strstr(copy, w) != NULL;
		va_end(ap);
		free(copy);
		if (all)
			count++;
		line = end ? end + 1 : NULL;
	}
	return count;
}

/* ------------------------------------------------------------ sockets */

int
free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int port = -1;
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
			getsockname(s, (struct sockaddr *)&sin, &len) == 0)
		port = ntohs(sin.sin_port);
	(void) close(s);
	return port;
}

bool
can_connect(const char *path)
{
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return false;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	(void) snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	bool ok = connect(s, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	(void) close(s);
	return ok;
}

bool
wait_socket(const char *path, int timeout_ms)
{
	long long until = now_ms() + timeout_ms;
	while (!can_connect(path)) {
		if (now_ms() > until)
			return false;
		sleep_ms(10);
	}
	return true;
}

static const char *
dir_path(const char *var, const char *rel)
{
	static char buf[2][1024];
	static int which;
	const char *top = getenv(var);
	char *b = buf[which++ % 2];
	(void) snprintf(b, sizeof(buf[0]), "%s/%s", top && *top ? top : ".",
			rel);
	return b;
}

const char *
builddir_path(const char *rel)
{
	return dir_path("TOP_BUILDDIR", rel);
}

const char *
srcdir_path(const char *rel)
{
	return dir_path("TOP_SRCDIR", rel);
}

/* ------------------------------------------------------------ rpmad */

int
ops_daemon_start(struct ops_daemon *d, const char *config,
		char *const extra_args[], char *const env[])
{
	memset(d, 0, sizeof(*d));
	const char *tmp = getenv("TMPDIR");
	(void) snprintf(d->dir, sizeof(d->dir), "%s/rpmad-ops.XXXXXX",
			tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(d->dir) == NULL)
		return -1;
	/* other users' clients (allow tests) must reach the socket */
	(void) chmod(d->dir, 0755);
	(void) snprintf(d->socket, sizeof(d->socket), "%s/rpmad.sock", d->dir);
	(void) snprintf(d->log, sizeof(d->log), "%s/rpmad.log", d->dir);
	(void) snprintf(d->config, sizeof(d->config), "%s/rpmad.conf",
			d->dir);
	if (write_text(d->config, config ? config : ""))
		return -1;

	const char *bin = getenv("RPMAD_BIN");
	char *argv[40] = { (char *)(bin && *bin ? bin : "rpmad"),
		"--foreground", "--socket", d->socket, "--transport", "tcp",
		"--config", d->config };
	int argc = 8;
	for (int i = 0; extra_args && extra_args[i] && argc < 39; i++)
		argv[argc++] = extra_args[i];
	argv[argc] = NULL;
	if (proc_start(&d->p, argv, env, d->log))
		return -1;
	long long until = now_ms() + OPS_WAIT_MS;
	while (!can_connect(d->socket)) {
		int status;
		if (waitpid(d->p.pid, &status, WNOHANG) == d->p.pid ||
				now_ms() > until) {
			(void) proc_end(&d->p, SIGKILL);
			return -1;
		}
		sleep_ms(10);
	}
	(void) setenv("RPMAD_SOCKET", d->socket, 1);
	return 0;
}

int
ops_daemon_stop(struct ops_daemon *d)
{
	int status = d->p.pid > 0 ? proc_end(&d->p, SIGTERM) : -1;
	if (d->dir[0] && getenv("TEST_KEEP_LOGS") == NULL) {
		(void) unlink(d->socket);
		(void) unlink(d->log);
		(void) unlink(d->config);
		(void) rmdir(d->dir);
	}
	return status;
}
