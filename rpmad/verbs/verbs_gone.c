// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_gone.c -- an RDMA device that went away (removed, or failed):
 * everything rpmad holds on it is let go of at once, because the kernel's
 * removal of a device (rdma link delete, a hot-unplugged NIC) waits until
 * every user closed what it had there. Clients keep their objects: their
 * connections are LOST, and their registrations, endpoints and peers stay
 * until they delete them, without the device's resources behind them
 * (new work on them fails).
 *
 * Three parts hear that a device went away, and all of them stand above
 * this file: its asynchronous events (verbs_async.c), the CM's events
 * (verbs_cm_events.c) and the kernel's uevents (verbs_hotplug.c).
 */

#include <utlist.h>

#include "verbs/verbs.h"

/* Connections: LOST, then their queue pairs and CM ids go. */
static void
release_conns(struct verbs_dev *vd)
{
	struct verbs_conn *vc, *tmp;
	DL_FOREACH_SAFE2(verbs_conn_all(), vc, tmp, all_next) {
		if (vc->vdev != vd && (vc->id == NULL || vc->id->verbs != vd->ctx))
			continue;
		verbs_work_lost(vc);
		verbs_qp_destroy(vc);
		verbs_conn_drop_id(vc);
	}
}

void
verbs_dev_gone(struct verbs_dev *vd, bool removed)
{
	const char *why = removed ? "was removed" : "failed";
	if (vd->dead)
		return;
	vd->dead = true;
	log_err("verbs: RDMA device %s %s; its connections are lost and rpmad "
		"lets go of it",
			device_name(vd->dev), why);
	release_conns(vd);
	/* every client's endpoints, registrations, protection domains */
	device_let_go(vd->dev);
	verbs_dev_forget(vd, removed);
	/*
	 * The device's context is librdmacm's, which closes a removed
	 * device only when it next looks at the list of devices; the
	 * kernel's removal waits for that close (rxe cannot take the
	 * context from rpmad): look now.
	 */
	if (removed) {
		int n = 0;
		struct ibv_context **list = rdma_get_devices(&n);
		if (list)
			rdma_free_devices(list);
	}
}
