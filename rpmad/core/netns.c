// SPDX-License-Identifier: BSD-3-Clause
/*
 * netns.c -- doing a client's network work in the client's network
 * namespace (netns.h)
 *
 * setns(2) moves the calling thread only: a thread made for the one task
 * joins the namespace (with CAP_SYS_ADMIN, which that thread alone raises
 * into its effective set), does the task and ends. Sockets keep the
 * namespace they were made in, so everything rpmad does with them later,
 * in its own loop, stays in the client's namespace.
 */

#include <errno.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/caps.h"
#include "core/netns.h"
#include "log/log.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

static uint64_t own_cookie;
static uint64_t own_inode;

uint64_t
netns_inode(int nsfd, uint64_t known)
{
	return nsfd < 0 ? own_inode : known;
}

uint64_t
netns_cookie(int fd)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len))
		return 0;
	return cookie;
}

uint64_t
netns_own_cookie(void)
{
	return own_cookie;
}

void
netns_init(bool keep_creds)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		own_cookie = netns_cookie(fd);
		(void) close(fd);
	}
	struct stat st;
	if (stat("/proc/self/ns/net", &st) == 0)
		own_inode = (uint64_t)st.st_ino;
	if (!keep_creds)
		(void) caps_change(CAP_SYS_ADMIN, false, false);
}

struct task {
	int nsfd;
	int (*fn)(void *arg);
	void *arg;
	int ret;
};

static void *
run_there(void *p)
{
	struct task *t = p;
	bool had = caps_effective(CAP_SYS_ADMIN);
	if (!had)
		(void) caps_change(CAP_SYS_ADMIN, true, false);
	int joined = setns(t->nsfd, CLONE_NEWNET);
	int err = errno;
	if (!had)
		(void) caps_change(CAP_SYS_ADMIN, false, false);
	t->ret = joined ? -err : t->fn(t->arg);
	return NULL;
}

int
netns_run(int nsfd, int (*fn)(void *arg), void *arg)
{
	if (nsfd < 0)
		return fn(arg);
	struct task t = { .nsfd = nsfd, .fn = fn, .arg = arg };
	/* no signal is the thread's to take */
	sigset_t all, old;
	(void) sigfillset(&all);
	(void) pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t th;
	int ret = pthread_create(&th, NULL, run_there, &t);
	(void) pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return -ret;
	(void) pthread_join(th, NULL);
	return t.ret;
}

struct mk_socket {
	int domain, type, protocol;
};

static int
make_socket(void *arg)
{
	struct mk_socket *m = arg;
	int fd = socket(m->domain, m->type, m->protocol);
	return fd < 0 ? -errno : fd;
}

int
netns_socket(int nsfd, int domain, int type, int protocol)
{
	struct mk_socket m = { domain, type, protocol };
	return netns_run(nsfd, make_socket, &m);
}

int
netns_take(int nsfd, int ctl, uint64_t *inode, char *err, size_t errlen)
{
	struct stat st;
	int type = ioctl(nsfd, NS_GET_NSTYPE);
	if (type != CLONE_NEWNET || fstat(nsfd, &st)) {
		(void) snprintf(err, errlen, "the descriptor handed over is "
				"not a network namespace");
		return -1;
	}
	/* the one the client connected from: its own, not one it holds */
	uint64_t want = netns_cookie(ctl);
	if (want && want == own_cookie && (uint64_t)st.st_ino == own_inode)
		return 1;
	int probe = netns_socket(nsfd, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (probe < 0) {
		(void) snprintf(err, errlen, "cannot join the network "
				"namespace handed over: %s", strerror(-probe));
		return -1;
	}
	uint64_t got = netns_cookie(probe);
	(void) close(probe);
	if (want != got) {
		(void) snprintf(err, errlen, "the network namespace handed "
				"over is not the one this process connected "
				"from");
		return -1;
	}
	*inode = (uint64_t)st.st_ino;
	return want && want == own_cookie ? 1 : 0;
}
