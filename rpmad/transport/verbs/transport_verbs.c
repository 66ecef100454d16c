// SPDX-License-Identifier: BSD-3-Clause
/*
 * transport_verbs.c -- the rdma-core transport: its operations table and
 * rpmad's one RDMA CM event channel, watched by the loop, whose events go
 * to the listener or connection they belong to
 *
 * Design (see verbs_internal.h for the parts):
 * - devices: an RDMA device serves an address when the RDMA CM binds a
 *   throw-away id to it (LOCAL) or resolves a route through it (REMOTE);
 * - one protection domain per client peer; registrations are made on
 *   rpmad's mapping of the client's pages with iova = the client's address
 *   and the key the client gets is the device's rkey, so that descriptors
 *   mean the same to plain librpma peers;
 * - one RC queue pair per connection with its own send and receive CQs on
 *   a completion channel the loop watches; while the loop spins the CQs
 *   are polled, before it sleeps they are armed;
 * - a flush is librpma's read-after-write: an 8-byte RDMA read of the
 *   flushed range into a small buffer of rpmad's, after the writes.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <utlist.h>

#include "daemon.h"
#include "log.h"
#include "transport_verbs.h"
#include "verbs_internal.h"

/* CM events handled per wake-up before others get a turn. */
#define CM_EVENT_BUDGET 64

static struct rdma_event_channel *cm_channel;
static struct loop_watch cm_watch;
static struct verbs_conn *all_vcs;

struct verbs_conn *
verbs_conn_all(void)
{
	return all_vcs;
}

void
verbs_conn_link(struct verbs_conn *vc)
{
	DL_APPEND2(all_vcs, vc, all_prev, all_next);
}

void
verbs_conn_unlink(struct verbs_conn *vc)
{
	DL_DELETE2(all_vcs, vc, all_prev, all_next);
}

/* Events that carry connection private data. */
static bool
has_conn_param(enum rdma_cm_event_type type)
{
	return type == RDMA_CM_EVENT_CONNECT_REQUEST ||
		type == RDMA_CM_EVENT_ESTABLISHED ||
		type == RDMA_CM_EVENT_REJECTED;
}

/*
 * Every event is copied and acknowledged before it is handled: handling
 * may destroy the event's id, which waits for its events' acks.
 */
static void
cm_ready(struct loop_watch *w, uint32_t events)
{
	for (int i = 0; i < CM_EVENT_BUDGET; i++) {
		struct rdma_cm_event *ev;
		if (rdma_get_cm_event(cm_channel, &ev)) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
					errno != EINTR)
				log_warning("verbs: rdma_get_cm_event: %s",
						strerror(errno));
			return;
		}
		struct rdma_cm_event copy = *ev;
		uint8_t pdata[255];
		uint8_t len = 0;
		if (has_conn_param(ev->event) && ev->param.conn.private_data) {
			len = ev->param.conn.private_data_len;
			memcpy(pdata, ev->param.conn.private_data, len);
		}
		copy.param.conn.private_data = len ? pdata : NULL;
		copy.param.conn.private_data_len = len;
		(void) rdma_ack_cm_event(ev);
		verbs_cm_event(&copy);
	}
	loop_kick(rpmad.loop);
}

struct rdma_event_channel *
verbs_cm_channel(char *err, size_t errlen)
{
	if (cm_channel)
		return cm_channel;
	struct rdma_event_channel *ch = rdma_create_event_channel();
	if (ch == NULL) {
		(void) snprintf(err, errlen, "rdma_create_event_channel: %s",
				strerror(errno));
		return NULL;
	}
	int flags = fcntl(ch->fd, F_GETFL);
	if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK)) {
		(void) snprintf(err, errlen, "the CM event channel: fcntl: %s",
				strerror(errno));
		rdma_destroy_event_channel(ch);
		return NULL;
	}
	cm_watch.fd = ch->fd;
	cm_watch.fn = cm_ready;
	cm_watch.arg = NULL;
	if (loop_add(rpmad.loop, &cm_watch, EPOLLIN)) {
		(void) snprintf(err, errlen, "cannot watch the CM event "
				"channel");
		rdma_destroy_event_channel(ch);
		return NULL;
	}
	cm_channel = ch;
	verbs_qp_init();
	return ch;
}

void
transport_verbs_fini(void)
{
	if (all_vcs)
		log_warning("verbs: %s connection states left at the end",
				all_vcs->conn ? "adopted" : "unadopted");
	if (cm_channel) {
		loop_del(rpmad.loop, &cm_watch);
		rdma_destroy_event_channel(cm_channel);
		cm_channel = NULL;
	}
	verbs_dev_fini();
}

const struct transport_ops transport_verbs = {
	.name = "verbs",
	.eager_recv = true,
	.kernel_devices = true,
	.pd_alloc = verbs_pd_alloc,
	.pd_free = verbs_pd_free,
	.mr_register = verbs_mr_register,
	.mr_deregister = verbs_mr_deregister,
	.mr_advise = verbs_mr_advise,
	.listen = verbs_listen,
	.unlisten = verbs_unlisten,
	.incoming_drop = verbs_incoming_drop,
	.adopt = verbs_adopt,
	.connect = verbs_connect,
	.accept = verbs_accept,
	.reject = verbs_reject,
	.disconnect = verbs_disconnect,
	.release = verbs_release,
	.post = verbs_post,
	.recv_posted = verbs_recv_posted,
};

static int
verbs_init(void)
{
	transport_verbs_init();
	return 0;
}

const struct transport_entry transport_verbs_entry = {
	.name = "verbs",
	.ops = &transport_verbs,
	.device_noun = "RDMA device",
	.init = verbs_init,
	.fini = transport_verbs_fini,
	.device_for = transport_verbs_device_for,
};
