// SPDX-License-Identifier: BSD-3-Clause
/*
 * transport_verbs.c -- the rdma-core transport as the core sees it: its
 * operations table and its line in the transport table, which finds the
 * RDMA devices (those there are at start, the one that serves an
 * address), sets up what every device needs the first time one is seen,
 * and lets go of it all at the end
 *
 * Design, from the ground up (each file stands on the ones before it):
 * - verbs_dev.c keeps the devices found; verbs_channel.c the one CM event
 *   channel every CM id is made on; verbs_mr.c protection domains (one
 *   per client peer) and registrations, made on rpmad's mapping of the
 *   client's pages with iova = the client's address, so that descriptors
 *   mean the same to plain librpma peers;
 * - verbs_conn.c a connection's state and how it ends; verbs_ep.c
 *   listening and the requests that wait at an endpoint; verbs_work.c the
 *   data path on a queue pair (a flush is librpma's read-after-write: an
 *   8-byte RDMA read of the flushed range after the writes);
 *   verbs_qp.c one RC queue pair per connection with its own completion
 *   queues, polled while the loop spins and armed before it sleeps;
 *   verbs_cm.c a connection's life through the CM;
 * - verbs_gone.c letting go of a device that went away, which the parts
 *   that hear of it call: verbs_async.c (a device's own events),
 *   verbs_hotplug.c (the kernel's uevents), verbs_cm_events.c (the CM's
 *   events, each handed to its part);
 * - this file: an RDMA device serves an address when the RDMA CM binds a
 *   throw-away id to it (local) or resolves a route through it (remote).
 *
 * A host without RDMA devices (or without the kernel's RDMA support) is
 * the common case for development machines: ibv_get_device_list() finds
 * nothing, quickly and quietly, and every address goes to the software
 * transport.
 */

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "librpma.h"
#include "verbs/verbs.h"

const struct transport_ops transport_verbs = {
	.name = "verbs",
	.eager_recv = true,
	.kernel_devices = true,
	.device_flushes = true,
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
	.srq_create = verbs_srq_create,
	.srq_posted = verbs_srq_posted,
	.srq_destroy = verbs_srq_destroy,
};

/* ------------------------------------------------------------ devices */

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

/*
 * What every device needs comes with the first one: the CM event channel
 * (no device is used without it) and the poller of every queue pair. 0,
 * or a negative errno (logged).
 */
static int
first_device_setup(void)
{
	if (verbs_channel())
		return 0;
	char err[256];
	int ret = verbs_channel_open(verbs_cm_ready, err, sizeof(err));
	if (ret) {
		log_warning("verbs: %s; RDMA devices are not used", err);
		return ret;
	}
	verbs_qp_init();
	return 0;
}

/* The device of a context the CM gave us, set up on first sight. */
static struct verbs_dev *
device_of(struct ibv_context *ctx)
{
	struct verbs_dev *vd = verbs_dev_find(ctx);
	if (vd)
		return vd->dead ? NULL : vd;
	if (first_device_setup())
		return NULL;
	vd = verbs_dev_add(ctx, &transport_verbs);
	if (vd == NULL)
		return NULL;
	verbs_async_watch(vd);
	log_notice("verbs: RDMA device %s (device %u%s)", device_name(vd->dev),
			device_id(vd->dev),
			device_odp(vd->dev) ? ", on-demand paging" : "");
	verbs_hotplug_watch();
	return vd;
}

const struct transport_env *verbs_env;

void
transport_verbs_init(const struct transport_env *env)
{
	verbs_env = env;
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
		(void) device_of(ctxs[i]);
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
	int ret = (local ? rdma_bind_addr(id, (struct sockaddr *)&addr) :
		rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr,
				RPMA_DEFAULT_TIMEOUT_MS)) ? -errno : 0;
	struct verbs_dev *vd = NULL;
	if (ret == 0 && id->verbs)
		vd = device_of(id->verbs);
	if (log_max_level >= LOG_DEBUG) {
		char name[64];
		name_addr(ss, name, sizeof(name));
		if (vd)
			log_debug("verbs: %s is served by %s", name,
					device_name(vd->dev));
		else
			log_debug("verbs: no RDMA device serves %s (%s)", name,
					ret ? strerror(-ret) : "none bound");
	}
	(void) rdma_destroy_id(id);
	return vd ? vd->dev : NULL;
}

void
transport_verbs_fini(void)
{
	struct verbs_conn *left = verbs_conn_all();
	if (left)
		log_warning("verbs: %s connection states left at the end",
				left->conn ? "adopted" : "unadopted");
	verbs_channel_close();
	verbs_dev_fini();
	verbs_hotplug_fini();
}

/* ------------------------------------------------------- the transport */

static int
verbs_init(const struct transport_env *env)
{
	transport_verbs_init(env);
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
