// SPDX-License-Identifier: BSD-3-Clause
/*
 * peer.c -- rpma_peer_new / rpma_peer_delete: the daemon-side peer
 */

#include <stdlib.h>

#include "broker.h"
#include "device.h"
#include "fork.h"
#include "log_internal.h"
#include "peer.h"

int
rpma_peer_new(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr)
{
	if (ibv_ctx == NULL || peer_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_device *dev = device_from_ctx(ibv_ctx);
	if (dev == NULL) {
		RLOG_ERROR("the context was not obtained from "
				"rpma_utils_get_ibv_context()");
		return RPMA_E_INVAL;
	}

	/* the device as rpmad knows it now (rpmad may have restarted) */
	uint64_t generation;
	uint32_t device_id;
	int ret = device_current(dev, &generation, &device_id);
	if (ret)
		return ret;

	struct rpma_peer *peer = calloc(1, sizeof(*peer));
	if (peer == NULL)
		return RPMA_E_NOMEM;

	Rpmad__PeerNew msg = RPMAD__PEER_NEW__INIT;
	msg.device_id = device_id;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_PEER_NEW;
	req.peer_new = &msg;

	struct broker_reply reply;
	ret = broker_call(generation, &req, NULL, 0,
			RPMAD__RESPONSE__BODY_PEER, &reply);
	if (ret) {
		free(peer);
		return ret;
	}

	peer->generation = reply.generation;
	peer->peer_id = reply.resp->peer->peer_id;
	peer->rdma = dev->rdma;
	peer->epoch = fork_epoch();
	broker_reply_fini(&reply);

	*peer_ptr = peer;
	return 0;
}

int
rpma_peer_delete(struct rpma_peer **peer_ptr)
{
	if (peer_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_peer *peer = *peer_ptr;
	if (peer == NULL)
		return 0;
	if (!broker_session_alive(peer->generation))
		goto free_peer;

	Rpmad__PeerDelete msg = RPMAD__PEER_DELETE__INIT;
	msg.peer_id = peer->peer_id;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_PEER_DELETE;
	req.peer_delete = &msg;

	int ret = broker_call_simple(peer->generation, &req);
	/* a session that ended just now took the object with it */
	if (ret && broker_session_alive(peer->generation))
		return RPMA_E_PROVIDER;

free_peer:
	free(peer);
	*peer_ptr = NULL;
	return 0;
}
