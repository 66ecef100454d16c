// SPDX-License-Identifier: BSD-3-Clause
/*
 * peer.c -- creating and deleting peers
 */

#include <errno.h>
#include <stdlib.h>

#include "clients/client.h"
#include "librpma.h"
#include "log/log.h"
#include "objects/device.h"
#include "objects/peer.h"
#include "transport/transport.h"

static void peer_release(struct obj *o, enum obj_release how);

/* what the registry does with a peer whose client goes */
static const struct obj_type peer_type = { OBJ_PEER, peer_release };

struct peer *
peer_find(struct call *call, uint64_t id)
{
	return (struct peer *) call_find(call, id, OBJ_PEER);
}

struct device *
peer_device(const struct peer *peer)
{
	return peer->dev;
}

void *
peer_tp(const struct peer *peer)
{
	return peer->tp_pd;
}

void
peer_set_tp(struct peer *peer, void *tp_pd)
{
	peer->tp_pd = tp_pd;
}

struct peer *
peer_new(struct call *call, uint32_t device_id)
{
	struct device *dev = device_by_id(device_id);
	if (dev == NULL) {
		call_fail(call, RPMA_E_INVAL, 0, "no device %u", device_id);
		return NULL;
	}
	struct peer *peer = calloc(1, sizeof(*peer));
	if (peer == NULL) {
		call_fail(call, RPMA_E_NOMEM, ENOMEM, "peer");
		return NULL;
	}
	peer->dev = dev;
	if (dev->tp->pd_alloc) {
		char err[256];
		int ret = dev->tp->pd_alloc(peer, err, sizeof(err));
		if (ret) {
			call_fail(call,
					ret == -ENOMEM ? RPMA_E_NOMEM :
							 RPMA_E_PROVIDER,
					-ret, "%s", err);
			free(peer);
			return NULL;
		}
	}

	registry_add(&peer->obj, &peer_type, &call->client->owner);
	return peer;
}

/* Its users must be gone. */
static void
peer_destroy(struct peer *peer)
{
	if (peer->dev->tp->pd_free)
		peer->dev->tp->pd_free(peer);
	registry_remove(&peer->obj);
	free(peer);
}

static void
peer_release(struct obj *o, enum obj_release how)
{
	(void) how;
	peer_destroy((struct peer *)o);
}

int
peer_delete(struct call *call, struct peer *peer)
{
	if (peer->users > 0) {
		call_fail(call, RPMA_E_PROVIDER, EBUSY,
				"the peer still has %u "
				"registrations, endpoints or connections",
				peer->users);
		return -EBUSY;
	}
	peer_destroy(peer);
	return 0;
}
