// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_cm_events.c -- the events of rpmad's RDMA CM channel, read by the
 * loop's handler and each handed to the part it concerns: a removed
 * device (verbs_gone.c), a listener's requests (verbs_ep.c), a
 * connection's progress and end (verbs_cm.c)
 *
 * It stands above the parts it hands events to; they only make their ids
 * on the channel (verbs_channel.c).
 */

#include <errno.h>
#include <string.h>

#include "verbs/verbs.h"

/* CM events handled per wake-up before others get a turn. */
#define CM_EVENT_BUDGET 64

/* Events that carry connection private data. */
static bool
has_conn_param(enum rdma_cm_event_type type)
{
	return type == RDMA_CM_EVENT_CONNECT_REQUEST ||
		type == RDMA_CM_EVENT_ESTABLISHED ||
		type == RDMA_CM_EVENT_REJECTED;
}

/* One event (copied, already acknowledged) to its part. */
static void
dispatch(const struct rdma_cm_event *ev)
{
	/* the first id to hear it: everything on the device goes now */
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL && ev->id &&
			ev->id->verbs) {
		struct verbs_dev *vd = verbs_dev_find(ev->id->verbs);
		if (vd)
			verbs_dev_gone(vd, true);
		return;
	}
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		verbs_ep_request(ev);
		return;
	}
	void *ctx = ev->id ? ev->id->context : NULL;
	if (ctx == NULL)
		return;
	if (*(const uint8_t *)ctx == VCTX_EP) {
		verbs_ep_event(ctx, ev);
		return;
	}
	verbs_cm_event(ctx, ev);
}

/*
 * Every event is copied and acknowledged before it is handled: handling
 * may destroy the event's id, which waits for its events' acks.
 */
void
verbs_cm_ready(struct loop_watch *w, uint32_t events)
{
	struct rdma_event_channel *ch = w->arg;
	for (int i = 0; i < CM_EVENT_BUDGET; i++) {
		struct rdma_cm_event *ev;
		if (rdma_get_cm_event(ch, &ev)) {
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
		dispatch(&copy);
	}
	loop_kick(verbs_env->loop);
}
