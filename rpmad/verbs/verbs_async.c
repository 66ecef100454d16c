// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_async.c -- an RDMA device's asynchronous events: its link going
 * down and coming back (a link that stays down loses the connections
 * through it), a queue pair the device failed, and a device that failed
 * as a whole (rpmad lets go of it: verbs_gone.c)
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <utlist.h>

#include "verbs/verbs.h"

/* Async events handled per wake-up. */
#define ASYNC_EVENT_BUDGET 32

/*
 * A link that stays down: rxe fails no work while its netdev has no
 * carrier, and a peer's retries may not end either, so a link down for
 * longer than the liveness timeout of connections (tcp_timeout_ms, as for
 * the software transport's silent peers) loses the connections through
 * the device. One that comes back in time changes nothing.
 */
static void
port_down_expired(struct loop_timer *t)
{
	struct verbs_dev *vd = t->arg;
	log_notice("verbs: device %s: its link stayed down for %u ms; the "
		   "connections through it are lost",
			device_name(vd->dev), verbs_env->set.tcp_timeout_ms);
	struct verbs_conn *vc, *tmp;
	DL_FOREACH_SAFE2(verbs_conn_all(), vc, tmp, all_next) {
		if (vc->vdev != vd || vc->conn == NULL)
			continue;
		verbs_work_lost(vc);
	}
}

static void
port_event(struct verbs_dev *vd, bool up)
{
	log_info("verbs: device %s: link %s", device_name(vd->dev),
			up ? "up" : "down");
	if (up) {
		if (vd->port_timer.armed)
			loop_timer_cancel(verbs_env->loop, &vd->port_timer);
		return;
	}
	if (vd->port_timer.armed || verbs_env->set.tcp_timeout_ms == 0)
		return;
	vd->port_timer.fn = port_down_expired;
	vd->port_timer.arg = vd;
	loop_timer_arm(verbs_env->loop, &vd->port_timer,
			(uint64_t) verbs_env->set.tcp_timeout_ms * 1000000ull);
}

static void
async_event(struct verbs_dev *vd, enum ibv_event_type type,
		struct verbs_conn *vc)
{
	switch (type) {
	case IBV_EVENT_PORT_ERR:
		port_event(vd, false);
		break;
	case IBV_EVENT_PORT_ACTIVE:
		port_event(vd, true);
		break;
	case IBV_EVENT_DEVICE_FATAL:
		verbs_dev_gone(vd, false);
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		if (vc == NULL || vc->conn == NULL)
			break;
		log_info("verbs: connection qp %u: %s", conn_qp_num(vc->conn),
				ibv_event_type_str(type));
		verbs_work_failed(vc);
		break;
	default:
		log_info("verbs: device %s: %s", device_name(vd->dev),
				ibv_event_type_str(type));
		break;
	}
}

static void
async_ready(struct loop_watch *w, uint32_t events)
{
	struct verbs_dev *vd = w->arg;
	for (int i = 0; i < ASYNC_EVENT_BUDGET; i++) {
		struct ibv_async_event ev;
		if (ibv_get_async_event(vd->ctx, &ev)) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
					errno != EINTR) {
				/* a dead device's fd would wake us forever */
				log_info("verbs: device %s: no more async "
					 "events: %s",
						device_name(vd->dev),
						strerror(errno));
				loop_del(verbs_env->loop, w);
			}
			break;
		}
		enum ibv_event_type type = ev.event_type;
		struct verbs_conn *vc = NULL;
		if (type == IBV_EVENT_QP_FATAL ||
				type == IBV_EVENT_QP_REQ_ERR ||
				type == IBV_EVENT_QP_ACCESS_ERR)
			vc = verbs_conn_of_qp(ev.element.qp);
		/* acknowledged first: destroying the QP waits for it */
		ibv_ack_async_event(&ev);
		async_event(vd, type, vc);
		if (vd->dead)
			break;	/* rpmad let go of it: nothing more to read */
	}
	loop_kick(verbs_env->loop);
}

void
verbs_async_watch(struct verbs_dev *vd)
{
	struct ibv_context *ctx = vd->ctx;
	int flags = fcntl(ctx->async_fd, F_GETFL);
	vd->async_watch.fd = ctx->async_fd;
	vd->async_watch.fn = async_ready;
	vd->async_watch.arg = vd;
	if (flags < 0 || fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK) ||
			loop_add(verbs_env->loop, &vd->async_watch, EPOLLIN))
		log_warning("verbs: device %s: its async events are not "
			    "watched",
				device_name(vd->dev));
}
