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
peer_find(struct req_ctx *rc, uint64_t id)
{
	return (struct peer *)req_find(rc, id, OBJ_PEER);
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

void
peer_handle_new(struct req_ctx *rc)
{
	struct device *dev = device_by_id(rc->req->peer_new->device_id);
	if (dev == NULL) {
		req_fail(rc, RPMA_E_INVAL, 0, "no device %u",
				rc->req->peer_new->device_id);
		return;
	}
	struct peer *peer = calloc(1, sizeof(*peer));
	if (peer == NULL) {
		req_fail(rc, RPMA_E_NOMEM, ENOMEM, "peer");
		return;
	}
	peer->dev = dev;
	if (dev->tp->pd_alloc) {
		char err[256];
		int ret = dev->tp->pd_alloc(peer, err, sizeof(err));
		if (ret) {
			req_fail(rc, ret == -ENOMEM ? RPMA_E_NOMEM :
					RPMA_E_PROVIDER, -ret, "%s", err);
			free(peer);
			return;
		}
	}

	registry_add(&peer->obj, &peer_type, &rc->client->owner);

	rpmad__peer_reply__init(&rc->peer);
	rc->peer.peer_id = peer->obj.id;
	rc->resp.body_case = RPMAD__RESPONSE__BODY_PEER;
	rc->resp.peer = &rc->peer;
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

void
peer_handle_delete(struct req_ctx *rc)
{
	struct peer *peer = peer_find(rc, rc->req->peer_delete->peer_id);
	if (peer == NULL)
		return;
	if (peer->users > 0) {
		req_fail(rc, RPMA_E_PROVIDER, EBUSY, "the peer still has %u "
				"registrations, endpoints or connections",
				peer->users);
		return;
	}
	peer_destroy(peer);
	req_ok(rc);
}
