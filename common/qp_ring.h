/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp_ring.h -- the producer's and the consumer's steps on one ring of a
 * queue pair region (common/qp_region.h), the same code on both sides: the
 * library produces on the SQ and RQ and consumes the CQ and RCQ, rpmad the
 * other way round.
 *
 * The producer writes the slot, then publishes its tail with a release
 * store; the consumer reads the tail with an acquire load, copies the entry
 * out, then publishes its head with a release store (the copy is done: the
 * slot may be written again). The other side's index is hostile: it is read
 * once per step, a distance beyond the ring's size is corruption (-1,
 * nothing read), and every slot index is masked, so no value in the region
 * reaches outside the entry array. Entries are copied, never used in place:
 * what is validated is the private copy, which the other side cannot change
 * any more.
 *
 * A ring has one producer and one consumer: callers serialize (the
 * library's per-ring locks, rpmad's single thread). Everything is inline:
 * this is the data path, no call and nothing beyond the two atomics a step
 * needs.
 */

#ifndef RPMAD_COMMON_QP_RING_H
#define RPMAD_COMMON_QP_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "qp_region.h"

/*
 * One ring as a side sees it. Both fields that place it come from the
 * side's own layout (qp_layout_compute), never from the header, which the
 * client can write.
 */
struct qp_ring {
	char *slots;			/* the entry array in the region */
	struct qp_ring_idx *idx;	/* its head and tail in the header */
	uint32_t entries;		/* a power of two */
};

static inline void
qp_ring_init(struct qp_ring *r, void *region, uint64_t offset,
		uint32_t entries, struct qp_ring_idx *idx)
{
	r->slots = (char *)region + offset;
	r->idx = idx;
	r->entries = entries;
}

/* qp_ring_slot -- the slot of free-running index i (entries of `size`) */
static inline void *
qp_ring_slot(const struct qp_ring *r, uint32_t i, size_t size)
{
	return r->slots + (size_t)(i & (r->entries - 1)) * size;
}

/* ---- the consumer ---- */

/*
 * qp_ring_avail -- how many entries the producer published beyond `head`
 * (the consumer's own copy). Returns 0 with the count in *avail, or -1 when
 * the tail is impossible: more than the ring holds (a tail behind the head
 * wraps to that too).
 */
static inline int
qp_ring_avail(const struct qp_ring *r, uint32_t head, uint32_t *avail)
{
	uint32_t n = atomic_load_explicit(&r->idx->tail,
			memory_order_acquire) - head;
	if (n > r->entries)
		return -1;
	*avail = n;
	return 0;
}

/* qp_ring_pending -- whether entries wait beyond `head` (no check) */
static inline bool
qp_ring_pending(const struct qp_ring *r, uint32_t head)
{
	return atomic_load_explicit(&r->idx->tail, memory_order_acquire) !=
		head;
}

/* qp_ring_read -- copy the entry at `head`, which qp_ring_avail counted */
static inline void
qp_ring_read(const struct qp_ring *r, uint32_t head, void *out, size_t size)
{
	memcpy(out, qp_ring_slot(r, head, size), size);
}

/*
 * qp_ring_release -- publish the consumer's head: every slot before it may
 * be written again. A consumer that takes a batch publishes once.
 */
static inline void
qp_ring_release(const struct qp_ring *r, uint32_t head)
{
	atomic_store_explicit(&r->idx->head, head, memory_order_release);
}

/*
 * qp_ring_take -- the consumer's whole step for one entry: copy it into
 * *out, advance *head and publish it. Returns 1, 0 (the ring is empty) or
 * -1 (the tail is impossible; nothing copied, *head unchanged).
 */
static inline int
qp_ring_take(const struct qp_ring *r, uint32_t *head, void *out, size_t size)
{
	uint32_t avail;
	if (qp_ring_avail(r, *head, &avail))
		return -1;
	if (avail == 0)
		return 0;
	qp_ring_read(r, *head, out, size);
	qp_ring_release(r, ++*head);
	return 1;
}

/* ---- the producer ---- */

/*
 * qp_ring_used -- how many entries before `tail` (the producer's own copy)
 * the consumer has not taken, from the head it published. Returns 0 with
 * the count in *used, or -1 when that head is impossible. A producer that
 * frees slots by other means (the library: by completions) needs no head.
 */
static inline int
qp_ring_used(const struct qp_ring *r, uint32_t tail, uint32_t *used)
{
	uint32_t n = tail - atomic_load_explicit(&r->idx->head,
			memory_order_acquire);
	if (n > r->entries)
		return -1;
	*used = n;
	return 0;
}

/*
 * qp_ring_put -- the producer's step: write the entry at *tail, advance it
 * and publish it. The caller made sure the slot is free.
 */
static inline void
qp_ring_put(const struct qp_ring *r, uint32_t *tail, const void *entry,
		size_t size)
{
	memcpy(qp_ring_slot(r, *tail, size), entry, size);
	atomic_store_explicit(&r->idx->tail, ++*tail, memory_order_release);
}

/* ---- wake-up flags ---- */

/*
 * A side that finds nothing to do and wants to sleep raises a flag (rpmad:
 * need_wakeup, "ring the doorbell"; the library: cq_armed, "notify me"),
 * then looks at the ring once more; the other side publishes, then looks at
 * the flag. A full fence on each side between its store and its load: one
 * of the two sees the other's, so no wake-up is lost.
 */

/* qp_wakeup_request -- raise the flag; look at the ring again after this */
static inline void
qp_wakeup_request(_Atomic uint32_t *flag)
{
	atomic_store_explicit(flag, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
}

/* qp_wakeup_wanted -- after publishing: whether the other side asked */
static inline bool
qp_wakeup_wanted(_Atomic uint32_t *flag)
{
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(flag, memory_order_relaxed) != 0;
}

/*
 * qp_wakeup_claim -- qp_wakeup_wanted that also lowers the flag: one
 * wake-up per request (a CQ notification is one byte per arming)
 */
static inline bool
qp_wakeup_claim(_Atomic uint32_t *flag)
{
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_exchange_explicit(flag, 0, memory_order_acq_rel) != 0;
}

/*
 * qp_wakeup_withdraw -- the side that asked takes its request back, now
 * that it will not sleep: whether it still stood (if not, the other side
 * claimed it and its wake-up is on the way). Nothing to order: no fence.
 */
static inline bool
qp_wakeup_withdraw(_Atomic uint32_t *flag)
{
	return atomic_exchange_explicit(flag, 0, memory_order_acq_rel) != 0;
}

#endif /* RPMAD_COMMON_QP_RING_H */
