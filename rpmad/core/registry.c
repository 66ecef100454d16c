// SPDX-License-Identifier: BSD-3-Clause
/*
 * registry.c -- object ids, their lookup, who owns them, and the order in
 * which an owner's objects go
 */

#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "core/random.h"
#include "core/registry.h"

/*
 * The order an owner's objects go in: users before what they use, as the
 * transports need it. A connection works with registrations and lives in
 * its peer (an incoming one came from an endpoint); endpoints and
 * registrations live in their peer, whose protection domain verbs frees
 * only once nothing is in it. A shared RQ serves connections and lives in
 * its peer.
 */
static const enum obj_kind release_order[] = {
	OBJ_CONN, OBJ_SRQ, OBJ_EP, OBJ_MR, OBJ_PEER,
};

_Static_assert(sizeof(release_order) / sizeof(release_order[0]) ==
		OBJ_KINDS - 1, "every kind has its place in the release order");

static struct obj *objects;
static struct obj_owner *owners;
static uint64_t next_id;

void
registry_init(void)
{
	uint32_t base = random32();
	next_id = ((uint64_t)base << 32) | 1;
}

void
registry_owner_add(struct obj_owner *owner, struct obj_tally *group)
{
	owner->group = group;
	DL_APPEND(owners, owner);
}

void
registry_owner_release(struct obj_owner *owner, enum obj_release how)
{
	for (size_t i = 0; i < sizeof(release_order) /
			sizeof(release_order[0]); i++) {
		enum obj_kind kind = release_order[i];
		while (owner->objs[kind])
			owner->objs[kind]->type->release(owner->objs[kind],
					how);
	}
	DL_DELETE(owners, owner);
}

struct obj_owner *
registry_owners(void)
{
	return owners;
}

void
registry_add(struct obj *o, const struct obj_type *type,
		struct obj_owner *owner)
{
	o->id = next_id++;
	o->type = type;
	o->owner = owner;
	HASH_ADD(hh, objects, id, sizeof(o->id), o);
	DL_APPEND(owner->objs[type->kind], o);
	owner->n[type->kind]++;
	if (owner->group)
		owner->group->n[type->kind]++;
}

void
registry_remove(struct obj *o)
{
	HASH_DELETE(hh, objects, o);
	DL_DELETE(o->owner->objs[o->type->kind], o);
	o->owner->n[o->type->kind]--;
	if (o->owner->group)
		o->owner->group->n[o->type->kind]--;
}

struct obj *
registry_find(uint64_t id, enum obj_kind kind, const struct obj_owner *owner)
{
	struct obj *o = NULL;
	HASH_FIND(hh, objects, &id, sizeof(id), o);
	if (o == NULL || o->type->kind != kind || o->owner != owner)
		return NULL;
	return o;
}
