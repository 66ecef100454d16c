// SPDX-License-Identifier: BSD-3-Clause
/*
 * netns_env.c -- two network namespaces joined by a veth pair, an rpmad
 * in each, and their removal whatever happens (see netns_env.h)
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netns_env.h"
#include "th_files.h"
#include "th_suite.h"

#define NAME_PREFIX "rpmad-nt"
static const char *const netns_dirs[] = { "/run/netns", "/var/run/netns" };

/* the hosts to remove at exit or on a signal, by the process that made them */
static struct ns_hosts *registered;
static pid_t creator;

int
ns_find_program(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	char all[4096];
	(void) snprintf(all, sizeof(all), "%s:/usr/sbin:/sbin:/usr/bin:/bin",
			path ? path : "");
	for (char *save = NULL, *dir = strtok_r(all, ":", &save); dir;
			dir = strtok_r(NULL, ":", &save)) {
		if (*dir == '\0')
			continue;
		int n = snprintf(buf, len, "%s/%s", dir, name);
		if (n > 0 && (size_t)n < len && access(buf, X_OK) == 0)
			return 0;
	}
	return -1;
}

/* Runs argv[0] (a path) quietly; 0 when it exited with 0. */
static int
run(const char *const argv[], bool quiet)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			(void) dup2(fd, STDOUT_FILENO);
			if (quiet)
				(void) dup2(fd, STDERR_FILENO);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* `ip -n NS ARGS...` (ns may be NULL); at most 12 arguments. */
static int
ip_cmd(const struct ns_hosts *h, const char *ns, bool quiet,
		const char *const *args)
{
	const char *argv[16] = { h->ip };
	int n = 1;
	if (ns) {
		argv[n++] = "-n";
		argv[n++] = ns;
	}
	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return run(argv, quiet);
}

#define IP(h, ns, ...) ip_cmd(h, ns, false, (const char *const[]){ \
	__VA_ARGS__, NULL })

/* The inode of a named namespace (0 when there is none). */
static ino_t
netns_inode(const char *name)
{
	for (size_t i = 0; i < sizeof(netns_dirs) / sizeof(netns_dirs[0]);
			i++) {
		char path[300];
		struct stat st;
		(void) snprintf(path, sizeof(path), "%s/%s", netns_dirs[i],
				name);
		if (stat(path, &st) == 0)
			return st.st_ino;
	}
	return 0;
}

/* SIGKILLs the processes inside a namespace (only ever ours). */
static void
kill_inside(const char *name)
{
	ino_t ino = netns_inode(name);
	if (ino == 0)
		return;
	DIR *proc = opendir("/proc");
	if (proc == NULL)
		return;
	struct dirent *e;
	while ((e = readdir(proc)) != NULL) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end != '\0' || pid <= 0 || pid == getpid())
			continue;
		char path[64];
		struct stat st;
		(void) snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
		if (stat(path, &st) == 0 && st.st_ino == ino)
			(void) kill((pid_t)pid, SIGKILL);
	}
	(void) closedir(proc);
}

static void
remove_ns(const struct ns_hosts *h, const char *name)
{
	kill_inside(name);
	(void) ip_cmd(h, NULL, true, (const char *const[]){ "netns", "del",
			name, NULL });
}

/*
 * Namespaces of an earlier run whose process is gone (killed before it
 * could clean up): "rpmad-nt<pid>-a" and "-b".
 */
static void
sweep_stale(const struct ns_hosts *h)
{
	for (size_t i = 0; i < sizeof(netns_dirs) / sizeof(netns_dirs[0]);
			i++) {
		DIR *dir = opendir(netns_dirs[i]);
		if (dir == NULL)
			continue;
		struct dirent *e;
		while ((e = readdir(dir)) != NULL) {
			if (strncmp(e->d_name, NAME_PREFIX,
					strlen(NAME_PREFIX)) != 0)
				continue;
			char *end;
			long pid = strtol(e->d_name + strlen(NAME_PREFIX),
					&end, 10);
			if (pid <= 0 || (strcmp(end, "-a") != 0 &&
					strcmp(end, "-b") != 0))
				continue;
			if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
				continue;
			(void) fprintf(stderr, "netns: removing %s, left by an "
					"earlier run\n", e->d_name);
			remove_ns(h, e->d_name);
		}
		(void) closedir(dir);
	}
}

void
ns_hosts_destroy(struct ns_hosts *h)
{
	for (int i = 0; i < 2; i++) {
		if (h->made[i])
			remove_ns(h, h->ns[i]);
		h->made[i] = false;
	}
	if (h->dir[0] && getenv("TEST_KEEP_LOGS") == NULL)
		th_remove_tree(h->dir);
	else if (h->dir[0])
		(void) fprintf(stderr, "netns: kept %s\n", h->dir);
	h->dir[0] = '\0';
}

static void
at_exit(void)
{
	if (registered && getpid() == creator)
		ns_hosts_destroy(registered);
}

/*
 * On a signal the runner is waiting for a test process, not inside the
 * C library, so the cleanup's calls are safe enough here.
 */
static void
on_signal(int sig)
{
	at_exit();
	(void) signal(sig, SIG_DFL);
	(void) raise(sig);
}

static int
write_wrapper(const char *path, const char *setpriv, const char *ip,
		const char *ns, const char *rpmad)
{
	/* the values are ours and single-quoted: refuse a quote in them */
	if (strchr(setpriv, '\'') || strchr(ip, '\'') || strchr(rpmad, '\''))
		return -1;
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return -1;
	/*
	 * exec all the way, so that the pid is rpmad's; the parent-death
	 * signal ends the daemon with the test process that started it
	 */
	/*
	 * the applications stay outside: the daemon does their network
	 * work in its own namespace, the "host" it stands for
	 */
	int bad = fprintf(f, "#!/bin/sh\nexec %s%s%s'%s' netns exec '%s' "
			"'%s' --network-namespace rpmad \"$@\"\n",
			setpriv[0] ? "'" : "", setpriv,
			setpriv[0] ? "' --pdeathsig KILL " : "", ip, ns,
			rpmad) < 0;
	if (fclose(f) || bad || chmod(path, 0755))
		return -1;
	return 0;
}

int
ns_hosts_create(struct ns_hosts *h)
{
	memset(h, 0, sizeof(*h));
	if (geteuid() != 0) {
		(void) fprintf(stderr, "netns: SKIP: network namespaces need "
				"root (CAP_NET_ADMIN and CAP_SYS_ADMIN)\n");
		return NS_SKIP;
	}
	if (ns_find_program("ip", h->ip, sizeof(h->ip))) {
		(void) fprintf(stderr, "netns: SKIP: no ip(8) (iproute2)\n");
		return NS_SKIP;
	}
	sweep_stale(h);

	if (th_mkdtemp(h->dir, sizeof(h->dir), "rpmad-netns"))
		return -1;
	registered = h;
	creator = getpid();
	(void) atexit(at_exit);
	(void) signal(SIGINT, on_signal);
	(void) signal(SIGTERM, on_signal);
	(void) signal(SIGHUP, on_signal);

	for (int i = 0; i < 2; i++) {
		(void) snprintf(h->ns[i], sizeof(h->ns[i]), NAME_PREFIX
				"%d-%c", (int)getpid(), 'a' + i);
		(void) snprintf(h->veth[i], sizeof(h->veth[i]), "rnt%d%c",
				(int)getpid(), 'a' + i);
	}
	if (IP(h, NULL, "netns", "add", h->ns[0])) {
		(void) fprintf(stderr, "netns: SKIP: cannot make a network "
				"namespace here (ip netns add failed)\n");
		ns_hosts_destroy(h);
		return NS_SKIP;
	}
	h->made[0] = true;
	if (IP(h, NULL, "netns", "add", h->ns[1]))
		goto err;
	h->made[1] = true;

	static const char *const addrs[2] = { NS_ADDR_A "/24",
		NS_ADDR_B "/24" };
	if (IP(h, h->ns[0], "link", "add", h->veth[0], "type", "veth",
			"peer", "name", h->veth[1], "netns", h->ns[1]))
		goto err;
	for (int i = 0; i < 2; i++) {
		if (IP(h, h->ns[i], "addr", "add", addrs[i], "dev",
				h->veth[i]) ||
				IP(h, h->ns[i], "link", "set", "lo", "up") ||
				IP(h, h->ns[i], "link", "set", h->veth[i],
				"up"))
			goto err;
	}

	char setpriv[256] = "";
	if (ns_find_program("setpriv", setpriv, sizeof(setpriv)))
		setpriv[0] = '\0';
	const char *bin = getenv("RPMAD_BIN");
	for (int i = 0; i < 2; i++) {
		(void) snprintf(h->rpmad[i], sizeof(h->rpmad[i]),
				"%s/rpmad-in-%c", h->dir, 'a' + i);
		if (write_wrapper(h->rpmad[i], setpriv, h->ip, h->ns[i],
				bin && *bin ? bin : "rpmad"))
			goto err;
	}
	/* the daemons' directories go under the scratch dir */
	if (setenv("TMPDIR", h->dir, 1))
		goto err;
	return 0;

err:
	(void) fprintf(stderr, "netns: setting up %s and %s failed\n",
			h->ns[0], h->ns[1]);
	ns_hosts_destroy(h);
	return -1;
}

int
ns_link(const struct ns_hosts *h, int i, bool up)
{
	if (IP(h, h->ns[i], "link", "set", h->veth[i], up ? "up" : "down"))
		return -1;
	if (!up)
		return 0;
	/*
	 * address resolution that failed while the link was down retries
	 * only after a second, longer than a connection attempt waits
	 */
	for (int k = 0; k < 2; k++) {
		if (IP(h, h->ns[k], "neigh", "flush", "dev", h->veth[k]))
			return -1;
	}
	return 0;
}

static int
show_log(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	if (flag != FTW_F || (strcmp(base, "rpmad.log") != 0 &&
			strcmp(base, "A.log") != 0 && strcmp(base, "B.log") != 0))
		return 0;
	th_show_tail(path, "netns: ", 20);
	return 0;
}

int
ns_main(struct ns_hosts *h, Suite *(*suite)(void) )
{
	int ret = ns_hosts_create(h);
	if (ret)
		return ret == NS_SKIP ? NS_SKIP : EXIT_FAILURE;
	ret = check_run(suite(), CK_ENV);
	/* what the daemons said, before their directories go */
	if (ret != EXIT_SUCCESS && h->dir[0])
		(void) nftw(h->dir, show_log, 16, FTW_PHYS);
	ns_hosts_destroy(h);
	return ret;
}

int
ns_daemon_start(const struct ns_hosts *h, int i, struct test_daemon *d,
		const char *config)
{
	return test_daemon_start_opts(d,
			&(struct test_daemon_opts){ .config = config,
					.bin = h->rpmad[i] });
}

bool
ns_holds(const struct ns_hosts *h, int i, pid_t pid)
{
	char path[64];
	struct stat st;
	(void) snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	ino_t ino = netns_inode(h->ns[i]);
	return ino != 0 && stat(path, &st) == 0 && st.st_ino == ino;
}
