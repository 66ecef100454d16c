// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_dev.c -- the table of RDMA devices rpmad found: an entry with the
 * core's device object for each, found by its context, its verbs node or
 * a peer on it, and forgotten once the device is gone
 *
 * Finding which device serves an address is the transport's entry's
 * (transport_verbs.c), hearing of its events verbs_async.c's; this file
 * only keeps what they found.
 */

#include <string.h>

#include "verbs/verbs.h"

/* Devices live as long as rpmad: a fixed table, nothing to free. */
static struct verbs_dev devs[VERBS_MAX_DEVICES];
static unsigned ndevs;

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

struct verbs_dev *
verbs_dev_add(struct ibv_context *ctx, const struct transport_ops *tp)
{
	const char *name = ibv_get_device_name(ctx->device);
	if (ndevs == VERBS_MAX_DEVICES) {
		log_warning("verbs: more than %d RDMA devices; %s is not used",
				VERBS_MAX_DEVICES, name);
		return NULL;
	}
	struct verbs_dev *vd = &devs[ndevs];
	memset(vd, 0, sizeof(*vd));
	vd->ctx = ctx;
	vd->dev = device_add(name, tp, odp_capable(ctx), vd);
	if (vd->dev == NULL) {
		log_warning("verbs: out of memory for device %s", name);
		return NULL;
	}
	ndevs++;
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

/* A peer's device is ours when it is in the table (gone ones stay). */
struct verbs_dev *
verbs_dev_of_peer(const struct peer *peer)
{
	for (unsigned i = 0; i < ndevs; i++) {
		if (devs[i].dev == peer_device(peer))
			return &devs[i];
	}
	return NULL;
}

const char *
verbs_dev_ctx_name(const struct ibv_context *ctx)
{
	return ctx ? ibv_get_device_name(ctx->device) : "none";
}

void
verbs_dev_forget(struct verbs_dev *vd, bool removed)
{
	if (vd->async_watch.added)
		loop_del(verbs_env->loop, &vd->async_watch);
	if (vd->port_timer.armed)
		loop_timer_cancel(verbs_env->loop, &vd->port_timer);
	if (!removed)
		return;
	/* a device made again gets a new context, and an entry of its own */
	vd->ctx = NULL;
	device_set_gone(vd->dev);
}

void
verbs_dev_fini(void)
{
	for (unsigned i = 0; i < ndevs; i++) {
		if (devs[i].async_watch.added)
			loop_del(verbs_env->loop, &devs[i].async_watch);
		if (devs[i].port_timer.armed)
			loop_timer_cancel(verbs_env->loop, &devs[i].port_timer);
	}
	memset(devs, 0, sizeof(devs));
	ndevs = 0;
}
