// SPDX-License-Identifier: BSD-3-Clause
/*
 * acceptor.c -- accepting clients on the control socket, also when rpmad
 * runs out of descriptors
 */

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "control/acceptor.h"
#include "control/session.h"
#include "core/daemon.h"
#include "core/fdreserve.h"
#include "log/log.h"
#include "log/rlog.h"
#include "loop/backoff.h"

/* Clients accepted per wake-up before the rest of the loop gets a turn. */
#define ACCEPTS_PER_TURN 64

static struct loop_watch watch = { .fd = -1 };
static struct backoff pause;
static struct rlog failures;	/* what the log says of them */

/*
 * One waiting client on two descriptors of the reserve: its session
 * stays only if it is an administrator's (session_start). 1: accepted
 * one; 0: none waits; a negative errno: accept failed (none held back, or
 * another error).
 */
static int
accept_on_reserve(int lfd)
{
	if (fdreserve_release(2) == 0)
		return -EMFILE;
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int ret = fd >= 0 ? 1 : errno == EAGAIN || errno == EWOULDBLOCK ?
		0 : -errno;
	if (fd >= 0)
		session_start(fd, true);
	fdreserve_fill();
	return ret;
}

static void
accept_ready(struct loop_watch *w, uint32_t events)
{
	(void) events;
	for (unsigned i = 0; i < ACCEPTS_PER_TURN; i++) {
		int fd = accept4(w->fd, NULL, NULL,
				SOCK_NONBLOCK | SOCK_CLOEXEC);
		int e = fd < 0 ? errno : 0;
		if (fd >= 0) {
			backoff_reset(&pause);
			session_start(fd, false);
			continue;
		}
		if (e == EINTR || e == ECONNABORTED)
			continue;
		if (e == EAGAIN || e == EWOULDBLOCK)
			return;
		if (e == EMFILE || e == ENFILE) {
			int ret = accept_on_reserve(w->fd);
			if (ret > 0)
				continue;
			if (ret == 0)
				return;
			e = -ret;
		}
		uint64_t ns = backoff_pause(&pause);
		(void) rlog_msg(&failures, LOG_WARNING, "control socket: "
				"cannot accept a client: %s; trying again in "
				"%llu ms%s", strerror(e),
				(unsigned long long)(ns / 1000000),
				e == EMFILE || e == ENFILE ? " (rpmad is out of "
				"descriptors: see max_descriptors in "
				"rpmad.conf(5) and LimitNOFILE=)" : "");
		return;
	}
}

int
acceptor_start(int lfd)
{
	rlog_init(&failures, "about accepting clients on the control socket");
	watch.fd = lfd;
	watch.fn = accept_ready;
	backoff_init(&pause, rpmad.loop, &watch, EPOLLIN);
	return loop_add(rpmad.loop, &watch, EPOLLIN);
}

void
acceptor_stop(void)
{
	backoff_cancel(&pause);
	loop_del(rpmad.loop, &watch);
	rlog_fini(&failures);
	fdreserve_fini();
}
