// SPDX-License-Identifier: BSD-3-Clause
/*
 * device_gone.c -- a device that went away: what clients hold on it lets
 * go of it through its transport (transport.h, device_let_go). Above the
 * objects it walks; the table of devices (device.c) lies below them all.
 */

#include <utlist.h>

#include "core/registry.h"
#include "objects/device.h"
#include "objects/ep.h"
#include "objects/mr.h"
#include "objects/peer.h"
#include "transport/transport.h"

void
device_let_go(struct device *dev)
{
	for (struct obj_owner *o = registry_owners(); o; o = o->next) {
		struct obj *x;
		DL_FOREACH(registry_first(o, OBJ_EP), x)
		{
			struct ep *ep = (struct ep *) x;
			if (ep_peer(ep)->dev == dev)
				dev->tp->unlisten(ep);
		}
		DL_FOREACH(registry_first(o, OBJ_MR), x)
		{
			struct mr *mr = (struct mr *) x;
			if (mr->peer->dev == dev && dev->tp->mr_deregister)
				dev->tp->mr_deregister(mr);
		}
		DL_FOREACH(registry_first(o, OBJ_PEER), x)
		{
			struct peer *peer = (struct peer *) x;
			if (peer->dev == dev && dev->tp->pd_free)
				dev->tp->pd_free(peer);
		}
	}
}
