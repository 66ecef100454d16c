// SPDX-License-Identifier: BSD-3-Clause
/*
 * peer.c -- creating and deleting peers
 */

#include <errno.h>
#include <stdlib.h>
#include <utlist.h>

#include "client.h"
#include "device.h"
#include "librpma.h"
#include "log.h"
#include "peer.h"
#include "transport.h"

struct peer *
peer_find(struct req_ctx *rc, uint64_t id)
{
	return (struct peer *)req_find(rc, id, OBJ_PEER);
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

	registry_add(&peer->obj, OBJ_PEER, rc->client);
	DL_APPEND(rc->client->peers, peer);
	rc->client->counts.peers++;

	rpmad__peer_reply__init(&rc->peer);
	rc->peer.peer_id = peer->obj.id;
	rc->resp.body_case = RPMAD__RESPONSE__BODY_PEER;
	rc->resp.peer = &rc->peer;
}

void
peer_destroy(struct peer *peer)
{
	struct client *owner = peer->obj.owner;
	if (peer->dev->tp->pd_free)
		peer->dev->tp->pd_free(peer);
	registry_remove(&peer->obj);
	DL_DELETE(owner->peers, peer);
	owner->counts.peers--;
	free(peer);
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
