// SPDX-License-Identifier: BSD-3-Clause
/*
 * registry.c -- object ids and their lookup
 */

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "registry.h"

static struct obj *objects;
static uint64_t next_id;

void
registry_random_bytes(void *buf, size_t len)
{
	uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);
		if (n <= 0) {
			/* no entropy source: fall back to something varying */
			for (size_t i = 0; i < len; i++)
				p[i] = (uint8_t)(rand() ^ (int)time(NULL));
			return;
		}
		p += n;
		len -= (size_t)n;
	}
}

uint32_t
registry_random32(void)
{
	uint32_t v;
	registry_random_bytes(&v, sizeof(v));
	return v;
}

void
registry_init(void)
{
	uint32_t base = registry_random32();
	next_id = ((uint64_t)base << 32) | 1;
}

void
registry_add(struct obj *o, enum obj_kind kind, struct client *owner)
{
	o->id = next_id++;
	o->kind = kind;
	o->owner = owner;
	HASH_ADD(hh, objects, id, sizeof(o->id), o);
}

void
registry_remove(struct obj *o)
{
	HASH_DELETE(hh, objects, o);
}

struct obj *
registry_find(uint64_t id, enum obj_kind kind, const struct client *owner)
{
	struct obj *o = NULL;
	HASH_FIND(hh, objects, &id, sizeof(id), o);
	if (o == NULL || o->kind != kind || o->owner != owner)
		return NULL;
	return o;
}
