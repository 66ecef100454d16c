// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_channel.c -- rpmad's one RDMA CM event channel: made with the
 * first RDMA device, watched by the loop, closed at the end
 *
 * Its events are read by verbs_cm_events.c, which hands each to the part
 * it concerns; the parts below it only make their ids on the channel.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "verbs/verbs.h"

static struct rdma_event_channel *channel;
static struct loop_watch watch;

int
verbs_channel_open(loop_fd_fn *ready, char *err, size_t errlen)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	if (ch == NULL) {
		int e = errno ? errno : ENOMEM;
		(void) snprintf(err, errlen, "rdma_create_event_channel: %s",
				strerror(errno));
		return -e;
	}
	int flags = fcntl(ch->fd, F_GETFL);
	if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK)) {
		int e = errno;
		(void) snprintf(err, errlen, "the CM event channel: fcntl: %s",
				strerror(e));
		rdma_destroy_event_channel(ch);
		return -e;
	}
	watch.fd = ch->fd;
	watch.fn = ready;
	watch.arg = ch;
	int ret = loop_add(verbs_env->loop, &watch, EPOLLIN);
	if (ret) {
		(void) snprintf(err, errlen, "cannot watch the CM event "
				"channel");
		rdma_destroy_event_channel(ch);
		return ret;
	}
	channel = ch;
	return 0;
}

struct rdma_event_channel *
verbs_channel(void)
{
	return channel;
}

void
verbs_channel_close(void)
{
	if (channel == NULL)
		return;
	loop_del(verbs_env->loop, &watch);
	rdma_destroy_event_channel(channel);
	channel = NULL;
}
