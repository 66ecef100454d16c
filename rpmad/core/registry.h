/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * registry.h -- every daemon object by id, with the client owning it, and
 * how an owner's objects go when it does
 *
 * Clients name objects by 64-bit ids. Ids never repeat within one rpmad
 * run and start at a random base, so an id from an earlier run names
 * nothing now. A lookup only finds objects of the asking client: one
 * client can never reach another's objects.
 *
 * Each owner's objects are kept by kind, oldest first. Each kind hands in
 * how one of its objects goes (struct obj_type) with every object it
 * registers, and registry_owner_release() lets them go in the order
 * registry.c sets out: whoever owns objects needs no object's header.
 */

#ifndef RPMAD_REGISTRY_H
#define RPMAD_REGISTRY_H

#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

enum obj_kind {
	OBJ_PEER = 1,
	OBJ_MR,
	OBJ_EP,
	OBJ_CONN,
	OBJ_SRQ,	/* shared receive queues (1.x) */
};

#define OBJ_KINDS (OBJ_SRQ + 1)	/* arrays indexed by kind */

/* How an object goes: whether the peer of a connection hears goodbye. */
enum obj_release {
	OBJ_RELEASE_ORDERLY,	/* deleted, or rpmad shuts down: goodbye */
	OBJ_RELEASE_ABORT,	/* its client vanished: just close */
};

struct obj;

/* A kind of object, as its own file describes it to the registry. */
struct obj_type {
	enum obj_kind kind;
	/* let o go (registry_remove() included): its owner goes */
	void (*release)(struct obj *o, enum obj_release how);
};

/*
 * What a group of owners holds together, by kind (a user's clients: its
 * limits are checked against this without a walk over the owners).
 */
struct obj_tally {
	uint32_t n[OBJ_KINDS];
};

/* Whatever owns objects (a client: clients/client.h) embeds one. */
struct obj_owner {
	struct obj *objs[OBJ_KINDS];	/* of each kind, oldest first */
	uint32_t n[OBJ_KINDS];		/* how many of each kind */
	struct obj_tally *group;	/* its group's, counted too (or NULL) */
	struct obj_owner *prev, *next;	/* every owner, oldest first */
};

struct obj {
	uint64_t id;
	const struct obj_type *type;
	struct obj_owner *owner;
	UT_hash_handle hh;
	struct obj *prev, *next;	/* its owner's of its kind */
};

/* registry_init -- pick the random base of ids and keys */
void registry_init(void);

/*
 * registry_owner_add -- a new owner (zeroed), last among the owners; its
 * objects are counted in `group` too (NULL: in no group)
 */
void registry_owner_add(struct obj_owner *owner, struct obj_tally *group);

/*
 * registry_owner_release -- let go of everything the owner holds, kind by
 * kind in the release order, and forget the owner
 */
void registry_owner_release(struct obj_owner *owner, enum obj_release how);

/* registry_owners -- the first owner (->next: the others, oldest first) */
struct obj_owner *registry_owners(void);

/* registry_first -- the owner's oldest object of a kind (->next: newer) */
static inline struct obj *
registry_first(const struct obj_owner *owner, enum obj_kind kind)
{
	return owner->objs[kind];
}

/* registry_count -- how many objects of a kind the owner holds */
static inline uint32_t
registry_count(const struct obj_owner *owner, enum obj_kind kind)
{
	return owner->n[kind];
}

/* registry_add -- give o a fresh id, make it findable and the owner's */
void registry_add(struct obj *o, const struct obj_type *type,
		struct obj_owner *owner);

/* registry_remove -- o is findable no more, nor its owner's */
void registry_remove(struct obj *o);

/* registry_find -- the object `id` of this kind owned by `owner`, or NULL */
struct obj *registry_find(uint64_t id, enum obj_kind kind,
		const struct obj_owner *owner);

#endif /* RPMAD_REGISTRY_H */
