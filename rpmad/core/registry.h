/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * registry.h -- every daemon object by id, with the client owning it
 *
 * Clients name objects by 64-bit ids. Ids never repeat within one rpmad
 * run and start at a random base, so an id from an earlier run names
 * nothing now. A lookup only finds objects of the asking client: one
 * client can never reach another's objects.
 */

#ifndef RPMAD_REGISTRY_H
#define RPMAD_REGISTRY_H

#include <stdint.h>
#include <uthash.h>

struct client;

enum obj_kind {
	OBJ_PEER = 1,
	OBJ_MR,
	OBJ_EP,
	OBJ_CONN,
};

struct obj {
	uint64_t id;
	enum obj_kind kind;
	struct client *owner;
	UT_hash_handle hh;
};

/* registry_init -- pick the random base of ids and keys */
void registry_init(void);

/* registry_add -- give o a fresh id and make it findable */
void registry_add(struct obj *o, enum obj_kind kind, struct client *owner);

/* registry_remove -- o is findable no more */
void registry_remove(struct obj *o);

/* registry_find -- the object `id` of this kind owned by `owner`, or NULL */
struct obj *registry_find(uint64_t id, enum obj_kind kind,
		const struct client *owner);

/* registry_random32 -- a random number (keys, tokens) */
uint32_t registry_random32(void);

/* registry_random_bytes -- fill buf with random bytes */
void registry_random_bytes(void *buf, size_t len);

#endif /* RPMAD_REGISTRY_H */
