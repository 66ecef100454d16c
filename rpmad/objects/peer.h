/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.h -- a client's peer: the protection domain its registrations,
 * endpoints and connections live in
 */

#ifndef RPMAD_PEER_H
#define RPMAD_PEER_H

#include <stdint.h>

#include "clients/reply.h"
#include "core/registry.h"
#include "transport/transport.h"

struct peer {
	struct obj obj;
	struct device *dev;
	uint32_t users;		/* registrations, endpoints, connections */
	void *tp_pd;		/* the transport's protection domain */
};

/* peer_find -- the asking client's peer `id`, or NULL (answer failed) */
struct peer *peer_find(struct req_ctx *rc, uint64_t id);

void peer_handle_new(struct req_ctx *rc);
void peer_handle_delete(struct req_ctx *rc);

#endif /* RPMAD_PEER_H */
