// SPDX-License-Identifier: BSD-3-Clause
/*
 * proc_ident.c -- whether a client's descriptors of mem and maps are its
 * own, alive, and not a thread's (proc_ident.h; the reasoning is in
 * docs/internals.md, "Whose memory a client hands over")
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "clients/proc_ident.h"
#include "fs/fstype.h"

/*
 * An address no process can map on any architecture Linux runs on (above
 * every TASK_SIZE, below the sign bit of an offset): reading it through a
 * live address space finds no mapping (EIO) and touches no page, through
 * a dead one (exec'd, exited) reads nothing (0).
 */
#define NOWHERE (1ULL << 62)

/* What rpmad knows of one descriptor the client passed. */
struct passed {
	const char *name;	/* "mem" or "maps" */
	struct stat st;
	char path[PATH_MAX];	/* where the kernel says it was opened */
};

static int
describe(int fd, const char *name, struct passed *p, char *err,
		size_t errlen)
{
	p->name = name;
	struct statfs sfs;
	if (fstatfs(fd, &sfs) || sfs.f_type != PROC_SUPER_MAGIC ||
			fstat(fd, &p->st)) {
		(void) snprintf(err, errlen, "the descriptor given as the "
				"process's %s is not a file of /proc", name);
		return -EINVAL;
	}
	char link[64];
	(void) snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, p->path, sizeof(p->path) - 1);
	p->path[n > 0 ? n : 0] = '\0';
	return 0;
}

/* The inode of /proc/pid/name in rpmad's /proc, found without opening it. */
static int
own_view(pid_t pid, const char *name, struct stat *st)
{
	char path[64];
	(void) snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	/* O_PATH: a lookup only, no ptrace check, nothing of the client's */
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int ret = fstat(fd, st) ? -errno : 0;
	(void) close(fd);
	return ret;
}

/* The device of rpmad's own /proc (its procfs instance). */
static int
own_proc_dev(dev_t *dev)
{
	struct stat st;
	if (stat("/proc/self", &st))
		return -errno;
	*dev = st.st_dev;
	return 0;
}

/*
 * Both in rpmad's procfs: the dentry the client's descriptor holds stays
 * in the dcache while the descriptor is open and its process lives, so a
 * lookup of /proc/PID/NAME now finds that very inode if, and only if, the
 * descriptor is that file of the process now at PID. Another process's
 * file, a thread's (/proc/PID/task/TID/NAME, /proc/TID/NAME), or one of a
 * process that ended (its dentries are dropped at its end, the pid's next
 * owner gets new ones) has another inode.
 */
static int
same_proc_check(const struct passed *p, pid_t pid, char *err, size_t errlen)
{
	struct stat now;
	int ret = own_view(pid, p->name, &now);
	if (ret) {
		(void) snprintf(err, errlen, "process %d, which connected, "
				"has ended (/proc/%d/%s: %s)", (int)pid,
				(int)pid, p->name, strerror(-ret));
		return -ESRCH;
	}
	if (now.st_dev != p->st.st_dev || now.st_ino != p->st.st_ino) {
		(void) snprintf(err, errlen, "the descriptor given as the "
				"process's %s is %s, not /proc/%d/%s of the "
				"process that connected (another process's, a "
				"thread's, or one of an ended process)",
				p->name, p->path[0] ? p->path : "unnamed",
				(int)pid, p->name);
		return -EPERM;
	}
	return 0;
}

int
proc_ident_parse_nspid(const char *status, pid_t *innermost)
{
	const char *l = strstr(status, "\nNSpid:");
	if (l == NULL && strncmp(status, "NSpid:", 6) == 0)
		l = status - 1;
	if (l == NULL)
		return -EINVAL;
	const char *p = l + 7;
	long last = -1;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		char *end;
		last = strtol(p, &end, 10);
		p = end;
	}
	if (last <= 0 || last > INT_MAX)
		return -EINVAL;
	*innermost = (pid_t)last;
	return 0;
}

/* The pid of `pid` in its own (innermost) pid namespace. */
static pid_t
innermost_pid(pid_t pid)
{
	char path[64], text[4096];
	(void) snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pid;
	ssize_t n = read(fd, text, sizeof(text) - 1);
	(void) close(fd);
	text[n > 0 ? n : 0] = '\0';
	pid_t inner;
	/* kernels before 4.1 have no NSpid: no pid namespaces to speak of */
	return proc_ident_parse_nspid(text, &inner) ? pid : inner;
}

/* The mount id of a descriptor rpmad holds (its fdinfo); 0 or -errno. */
static int
mnt_id_of(int fd, unsigned long *id)
{
	char path[64], text[1024];
	(void) snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	int info = open(path, O_RDONLY | O_CLOEXEC);
	if (info < 0)
		return -errno;
	ssize_t n = read(info, text, sizeof(text) - 1);
	(void) close(info);
	text[n > 0 ? n : 0] = '\0';
	return fstype_parse_fdinfo_mnt_id(text, id);
}

/*
 * Whether a path ends in "/<pid>/<name>" and not in "/task/<pid>/<name>".
 */
static bool
path_names(const char *path, pid_t pid, const char *name)
{
	char tail[64];
	(void) snprintf(tail, sizeof(tail), "/%d/%s", (int)pid, name);
	size_t plen = strlen(path), tlen = strlen(tail);
	if (plen < tlen || strcmp(path + plen - tlen, tail))
		return false;
	return !(plen >= tlen + 5 &&
			strncmp(path + plen - tlen - 5, "/task", 5) == 0);
}

/*
 * In another procfs instance (a container's /proc, of its own pid
 * namespace): rpmad cannot look up the client's file there, so it checks
 * what it can without entering the client's namespaces. Both files come
 * through one mount of a whole procfs (not a bind mount of one process's
 * directory, whose root mountinfo shows as "/PID"), and their paths name
 * the client by its pid in its own namespace, as /proc/PID/NAME, not a
 * thread's. What this cannot rule out is in docs/internals.md.
 */
static int
foreign_proc_check(int mem_fd, int maps_fd, const struct passed p[2],
		pid_t pid, char *err, size_t errlen)
{
	unsigned long ids[2];
	int fds[2] = { mem_fd, maps_fd };
	for (int i = 0; i < 2; i++) {
		if (mnt_id_of(fds[i], &ids[i])) {
			(void) snprintf(err, errlen, "cannot tell the mount "
					"of the process's %s", p[i].name);
			return -EINVAL;
		}
	}
	struct fstype_mount m;
	if (ids[0] != ids[1] || fstype_mount_by_id(ids[0], pid, &m) != 1 ||
			strcmp(m.type, "proc") || strcmp(m.root, "/")) {
		(void) snprintf(err, errlen, "the process's mem and maps do "
				"not come through one mount of a whole /proc "
				"(%s, %s)", p[0].path, p[1].path);
		return -EPERM;
	}
	pid_t inner = innermost_pid(pid);
	for (int i = 0; i < 2; i++) {
		if (!path_names(p[i].path, inner, p[i].name)) {
			(void) snprintf(err, errlen, "the descriptor given as "
					"the process's %s is %s, not /proc/%d/"
					"%s of the process that connected (pid "
					"%d here)", p[i].name, p[i].path,
					(int)inner, p[i].name, (int)pid);
			return -EPERM;
		}
	}
	return 0;
}

/*
 * Whether the address space behind mem_fd is alive: a process that
 * exec'd has a new one, and the descriptor reaches the old, which is gone
 * unless another process shares it (see docs/internals.md).
 */
static int
alive_check(int mem_fd, char *err, size_t errlen)
{
	char byte;
	ssize_t n;
	do {
		n = pread(mem_fd, &byte, 1, (off_t)NOWHERE);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EIO)
		return 0;	/* alive: nothing is mapped there */
	if (n == 0) {
		(void) snprintf(err, errlen, "the memory behind the process's "
				"mem is gone: it was opened before the process "
				"exec'd (or by one that ended)");
		return -ESRCH;
	}
	(void) snprintf(err, errlen, "the process's mem cannot be read: %s",
			n < 0 ? strerror(errno) : "an address no process maps "
			"reads as mapped");
	return -EINVAL;
}

int
proc_ident_check(int mem_fd, int maps_fd, pid_t pid, char *err,
		size_t errlen)
{
	struct passed p[2];
	int ret = describe(mem_fd, "mem", &p[0], err, errlen);
	if (ret == 0)
		ret = describe(maps_fd, "maps", &p[1], err, errlen);
	if (ret)
		return ret;
	if (p[0].st.st_dev != p[1].st.st_dev) {
		(void) snprintf(err, errlen, "the process's mem and maps come "
				"from two /proc file systems (%s, %s)",
				p[0].path, p[1].path);
		return -EPERM;
	}
	dev_t own = 0;
	if ((ret = own_proc_dev(&own)) != 0) {
		(void) snprintf(err, errlen, "cannot stat rpmad's /proc: %s",
				strerror(-ret));
		return ret;
	}
	if (p[0].st.st_dev == own) {
		for (int i = 0; i < 2 && ret == 0; i++)
			ret = same_proc_check(&p[i], pid, err, errlen);
	} else {
		ret = foreign_proc_check(mem_fd, maps_fd, p, pid, err, errlen);
	}
	return ret ? ret : alive_check(mem_fd, err, errlen);
}
