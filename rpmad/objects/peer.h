/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.h -- a client's peer: the protection domain its registrations,
 * endpoints and connections live in
 */

#ifndef RPMAD_PEER_H
#define RPMAD_PEER_H

#include <stdint.h>

#include "registry.h"
#include "reply.h"

struct device;

struct peer {
	struct obj obj;
	struct device *dev;
	uint32_t users;		/* registrations, endpoints, connections */
	void *tp_pd;		/* the transport's protection domain */
	struct peer *prev, *next;	/* the session's peers */
};

/* peer_find -- the asking session's peer `id`, or NULL (answer failed) */
struct peer *peer_find(struct req_ctx *rc, uint64_t id);

/* peer_destroy -- release a peer (its users must be gone) */
void peer_destroy(struct peer *peer);

void peer_handle_new(struct req_ctx *rc);
void peer_handle_delete(struct req_ctx *rc);

#endif /* RPMAD_PEER_H */
