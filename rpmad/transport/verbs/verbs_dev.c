// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_dev.c -- which RDMA device serves an address, the device objects
 * rpmad made for the devices it found, and their asynchronous events
 *
 * A host without RDMA devices (or without the kernel's RDMA support) is
 * the common case for development machines: ibv_get_device_list() finds
 * nothing, quickly and quietly, and every address goes to the software
 * transport.
 */

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <utlist.h>

#include "daemon.h"
#include "device.h"
#include "librpma.h"
#include "log.h"
#include "peer.h"
#include "transport_verbs.h"
#include "verbs_internal.h"

/* Async events handled per wake-up. */
#define ASYNC_EVENT_BUDGET 32

/* Devices live as long as rpmad: a fixed table, nothing to free. */
static struct verbs_dev devs[VERBS_MAX_DEVICES];
static unsigned ndevs;

/* Whether any RDMA device exists at all (cheap: no CM involved). */
static bool
rdma_present(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (list == NULL)
		return false;
	ibv_free_device_list(list);
	return n > 0;
}

/* librpma's test: on-demand paging for RC reads and writes. */
static bool
odp_capable(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr;
	memset(&attr, 0, sizeof(attr));
	if (ibv_query_device_ex(ctx, NULL, &attr))
		return false;
	uint32_t rc_need = IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ;
	return (attr.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
		(attr.odp_caps.per_transport_caps.rc_odp_caps & rc_need) ==
		rc_need;
}

static struct verbs_conn *
conn_of_qp(struct ibv_qp *qp)
{
	struct verbs_conn *vc;
	DL_FOREACH2(verbs_conn_all(), vc, all_next) {
		if (vc->qp == qp)
			return vc;
	}
	return NULL;
}

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
			"connections through it are lost", vd->dev->name,
			rpmad.cfg.tcp_timeout_ms);
	struct verbs_conn *vc, *tmp;
	DL_FOREACH_SAFE2(verbs_conn_all(), vc, tmp, all_next) {
		if (vc->vdev != vd || vc->conn == NULL)
			continue;
		verbs_conn_lost(vc);
	}
}

static void
port_event(struct verbs_dev *vd, bool up)
{
	log_info("verbs: device %s: link %s", vd->dev->name,
			up ? "up" : "down");
	if (up) {
		if (vd->port_timer.armed)
			loop_timer_cancel(rpmad.loop, &vd->port_timer);
		return;
	}
	if (vd->port_timer.armed || rpmad.cfg.tcp_timeout_ms == 0)
		return;
	vd->port_timer.fn = port_down_expired;
	vd->port_timer.arg = vd;
	loop_timer_arm(rpmad.loop, &vd->port_timer,
			(uint64_t)rpmad.cfg.tcp_timeout_ms * 1000000ull);
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
		log_info("verbs: connection qp %u: %s", vc->conn->qp_num,
				ibv_event_type_str(type));
		verbs_qp_failed(vc);
		break;
	default:
		log_info("verbs: device %s: %s", vd->dev->name,
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
						"events: %s", vd->dev->name,
						strerror(errno));
				loop_del(rpmad.loop, w);
			}
			break;
		}
		enum ibv_event_type type = ev.event_type;
		struct verbs_conn *vc = NULL;
		if (type == IBV_EVENT_QP_FATAL ||
				type == IBV_EVENT_QP_REQ_ERR ||
				type == IBV_EVENT_QP_ACCESS_ERR)
			vc = conn_of_qp(ev.element.qp);
		/* acknowledged first: destroying the QP waits for it */
		ibv_ack_async_event(&ev);
		async_event(vd, type, vc);
		if (vd->dead)
			break;	/* rpmad let go of it: nothing more to read */
	}
	loop_kick(rpmad.loop);
}

struct verbs_dev *
verbs_dev_of(struct ibv_context *ctx)
{
	for (unsigned i = 0; i < ndevs; i++) {
		if (devs[i].ctx == ctx)
			return devs[i].dead ? NULL : &devs[i];
	}
	const char *name = ibv_get_device_name(ctx->device);
	if (ndevs == VERBS_MAX_DEVICES) {
		log_warning("verbs: more than %d RDMA devices; %s is not used",
				VERBS_MAX_DEVICES, name);
		return NULL;
	}
	char err[256];
	if (verbs_cm_channel(err, sizeof(err)) == NULL) {
		log_warning("verbs: %s; RDMA devices are not used", err);
		return NULL;
	}
	struct verbs_dev *vd = &devs[ndevs];
	memset(vd, 0, sizeof(*vd));
	vd->ctx = ctx;
	vd->dev = device_add(name, &transport_verbs, odp_capable(ctx), vd);
	if (vd->dev == NULL) {
		log_warning("verbs: out of memory for device %s", name);
		return NULL;
	}
	ndevs++;

	int flags = fcntl(ctx->async_fd, F_GETFL);
	vd->async_watch.fd = ctx->async_fd;
	vd->async_watch.fn = async_ready;
	vd->async_watch.arg = vd;
	if (flags < 0 || fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK) ||
			loop_add(rpmad.loop, &vd->async_watch, EPOLLIN))
		log_warning("verbs: device %s: its async events are not "
				"watched", name);
	log_notice("verbs: RDMA device %s (device %u%s)", name, vd->dev->id,
			vd->dev->odp_capable ? ", on-demand paging" : "");
	verbs_hotplug_watch();
	return vd;
}

struct verbs_dev *
verbs_dev_find(const struct ibv_context *ctx)
{
	for (unsigned i = 0; i < ndevs; i++) {
		if (devs[i].ctx == ctx)
			return &devs[i];
	}
	return NULL;
}

struct verbs_dev *
verbs_dev_of_node(const char *node)
{
	for (unsigned i = 0; i < ndevs; i++) {
		if (devs[i].ctx && !devs[i].dead &&
				strcmp(devs[i].ctx->device->dev_name, node) == 0)
			return &devs[i];
	}
	return NULL;
}

void
verbs_dev_forget(struct verbs_dev *vd, bool removed)
{
	if (vd->async_watch.added)
		loop_del(rpmad.loop, &vd->async_watch);
	if (vd->port_timer.armed)
		loop_timer_cancel(rpmad.loop, &vd->port_timer);
	if (!removed)
		return;
	/* a device made again gets a new context, and an entry of its own */
	vd->ctx = NULL;
	size_t n = strlen(vd->dev->name);
	if (n + sizeof(" (gone)") <= sizeof(vd->dev->name))
		memcpy(vd->dev->name + n, " (gone)", sizeof(" (gone)"));
}

struct verbs_dev *
verbs_dev_of_peer(const struct peer *peer)
{
	if (peer->dev->tp != &transport_verbs)
		return NULL;
	return peer->dev->tp_dev;
}

void
verbs_dev_fini(void)
{
	for (unsigned i = 0; i < ndevs; i++) {
		if (devs[i].async_watch.added)
			loop_del(rpmad.loop, &devs[i].async_watch);
		if (devs[i].port_timer.armed)
			loop_timer_cancel(rpmad.loop, &devs[i].port_timer);
	}
	verbs_hotplug_fini();
	memset(devs, 0, sizeof(devs));
	ndevs = 0;
}

void
transport_verbs_init(void)
{
	if (!rdma_present())
		return;
	/* librdmacm's own contexts: the ones its CM ids will name */
	int n = 0;
	struct ibv_context **ctxs = rdma_get_devices(&n);
	if (ctxs == NULL) {
		log_warning("verbs: rdma_get_devices: %s", strerror(errno));
		return;
	}
	for (int i = 0; i < n; i++)
		(void) verbs_dev_of(ctxs[i]);
	rdma_free_devices(ctxs);
}

static void
name_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[64] = "?";
	(void) getnameinfo((const struct sockaddr *)ss, sizeof(*ss), host,
			sizeof(host), NULL, 0, NI_NUMERICHOST);
	(void) snprintf(buf, len, "%s", host);
}

struct device *
transport_verbs_device_for(const struct sockaddr_storage *ss, socklen_t len,
		bool local)
{
	if (!rdma_present())
		return NULL;

	/* the port does not choose the device; binding one might fail */
	struct sockaddr_storage addr;
	memcpy(&addr, ss, sizeof(addr));
	if (addr.ss_family == AF_INET)
		((struct sockaddr_in *)&addr)->sin_port = 0;
	else if (addr.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&addr)->sin6_port = 0;

	/* a synchronous id: no event channel of ours is involved */
	struct rdma_cm_id *id;
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP)) {
		log_debug("verbs: rdma_create_id: %s", strerror(errno));
		return NULL;
	}
	int ret = local ? rdma_bind_addr(id, (struct sockaddr *)&addr) :
		rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr,
				RPMA_DEFAULT_TIMEOUT_MS);
	int err = errno;
	struct verbs_dev *vd = NULL;
	if (ret == 0 && id->verbs)
		vd = verbs_dev_of(id->verbs);
	if (log_max_level >= LOG_DEBUG) {
		char name[64];
		name_addr(ss, name, sizeof(name));
		if (vd)
			log_debug("verbs: %s is served by %s", name,
					vd->dev->name);
		else
			log_debug("verbs: no RDMA device serves %s (%s)", name,
					ret ? strerror(err) : "none bound");
	}
	(void) rdma_destroy_id(id);
	return vd ? vd->dev : NULL;
}
