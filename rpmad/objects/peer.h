/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.h -- a client's peer: the protection domain its registrations,
 * endpoints and connections live in
 */

#ifndef RPMAD_PEER_H
#define RPMAD_PEER_H

#include <stdint.h>

#include "clients/call.h"
#include "core/registry.h"
#include "transport/transport.h"

struct peer {
	struct obj obj;
	struct device *dev;
	uint32_t users;		/* registrations, endpoints, connections */
	void *tp_pd;		/* the transport's protection domain */
};

/* peer_find -- the asking client's peer `id`, or NULL (answer failed) */
struct peer *peer_find(struct call *call, uint64_t id);

/*
 * peer_new -- a peer (protection domain) of the calling client on device
 * `device_id`; NULL with the call failed
 */
struct peer *peer_new(struct call *call, uint32_t device_id);

/*
 * peer_delete -- deletes the peer: 0, or -EBUSY with the call failed
 * while registrations, endpoints or connections use it
 */
int peer_delete(struct call *call, struct peer *peer);

#endif /* RPMAD_PEER_H */
