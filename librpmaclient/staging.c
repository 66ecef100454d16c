// SPDX-License-Identifier: BSD-3-Clause
/*
 * staging.c -- taking and giving back a queue pair's staging bytes, and
 * the copies in and out of them (staging.h)
 */

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "staging.h"

/* what each piece is rounded up to: a cache line */
#define STAGE_ALIGN 64u
/*
 * Past this offset a piece goes back to the start when the start is free:
 * the bytes in use stay packed at the beginning, and so do the pages that
 * ever held any (a sparse memfd's pages stay allocated once touched)
 */
#define STAGE_SOFT_END (256u << 10)
/* how far ahead the library faults in bytes rpmad will write */
#define STAGE_POPULATE_STEP (64u << 10)

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

int
staging_init(struct stage_ring *r, uint8_t *base, uint64_t addr,
		uint64_t size, uint32_t lkey, uint32_t entries)
{
	memset(r, 0, sizeof(*r));
	if (size == 0)
		return 0;
	r->slots = calloc(entries, sizeof(*r->slots));
	if (r->slots == NULL)
		return -1;
	r->base = base;
	r->addr = addr;
	r->size = size;
	r->lkey = lkey;
	r->mask = entries - 1;
	return 0;
}

void
staging_fini(struct stage_ring *r)
{
	free(r->slots);
	r->slots = NULL;
	r->size = 0;
}

/* Gives the oldest piece in use back. */
static void
give_back(struct stage_ring *r, const struct stage_slot *s)
{
	if (--r->live == 0) {
		r->head = r->tail = 0;
		r->wrapped = false;
	} else if (r->wrapped && s->off + s->len == r->wrap_end) {
		/* the last piece before the wrap: the next starts at 0 */
		r->head = 0;
		r->wrapped = false;
	} else {
		r->head = s->off + s->len;
	}
}

/* Room for n bytes: their offset, or -1. */
static int64_t
take_room(struct stage_ring *r, uint64_t n)
{
	uint64_t off;
	if (r->live == 0) {
		r->head = r->tail = 0;
		r->wrapped = false;
	}
	if (!r->wrapped) {
		bool fits = r->tail + n <= r->size;
		bool back = r->tail >= STAGE_SOFT_END && r->head >= n;
		if (fits && !back) {
			off = r->tail;
			r->tail += n;
		} else if (r->head >= n) {
			r->wrap_end = r->tail;
			r->wrapped = true;
			off = 0;
			r->tail = n;
		} else {
			return -1;
		}
	} else if (r->tail + n <= r->head) {
		off = r->tail;
		r->tail += n;
	} else {
		return -1;
	}
	r->live++;
	return (int64_t)off;
}

/*
 * Faults in the bytes up to `end` in this process before rpmad writes
 * them: the pages are then the application's, charged to it, as every
 * page of its registrations is (memshare.c).
 */
static void
populate(struct stage_ring *r, uint64_t end)
{
	if (end <= r->populated)
		return;
	uint64_t to = (end + STAGE_POPULATE_STEP - 1) &
		~(uint64_t)(STAGE_POPULATE_STEP - 1);
	if (to > r->size)
		to = r->size;
	/* a kernel without it: rpmad's writes fault them in instead */
	(void) madvise(r->base + r->populated, to - r->populated,
			MADV_POPULATE_WRITE);
	r->populated = to;
}

bool
staging_take(struct stage_ring *r, uint32_t index, uint32_t retired,
		const struct stage_req *req, uint32_t *lkey, uint64_t *laddr)
{
	if (r->size == 0)
		return false;
	while ((int32_t)(retired - r->freed) > 0) {
		const struct stage_slot *s = &r->slots[r->freed & r->mask];
		if (s->len)
			give_back(r, s);
		r->freed++;
	}
	struct stage_slot *slot = &r->slots[index & r->mask];
	slot->len = 0;
	if (req->len == 0 || req->len > r->size - STAGE_ALIGN)
		return false;
	uint64_t n = (req->len + STAGE_ALIGN - 1) & ~(uint64_t)(STAGE_ALIGN - 1);
	int64_t off = take_room(r, n);
	if (off < 0)
		return false;
	slot->off = (uint64_t)off;
	slot->len = (uint32_t)n;
	slot->data_len = (uint32_t)req->len;
	slot->copy_to = req->dst;
	slot->copied = 0;
	if (req->src)
		memcpy(r->base + off, req->src, req->len);
	else
		populate(r, (uint64_t)off + n);
	*lkey = r->lkey;
	*laddr = r->addr + (uint64_t)off;
	return true;
}

void
staging_deliver(struct stage_ring *r, uint32_t index, uint32_t byte_len)
{
	if (r->size == 0)
		return;
	struct stage_slot *s = &r->slots[index & r->mask];
	if (s->len == 0 || s->copy_to == NULL)
		return;
	/* rpmad says how much came; never more than the entry could hold */
	uint32_t n = byte_len < s->data_len ? byte_len : s->data_len;
	if (n > s->copied) {
		memcpy((uint8_t *) s->copy_to + s->copied,
				r->base + s->off + s->copied, n - s->copied);
		s->copied = n;
	}
}
