/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stream_halt.h -- streams of batches that stopped at a lost read or write
 *
 * The batches a connection's frames make into a client's memory form a
 * stream (landing_slot.stream, as_batch_set_stream). A NIC executes nothing
 * after an operation it refused, so once a read or write of a stream loses
 * bytes, a thread that does batches (rpmad's, as_worker.c; the client's,
 * librpmaclient landing_thread.c) moves nothing more of that stream: not
 * the rest of that batch, and no later batch of it that it takes before
 * rpmad has heard of the failure and taken the rest back. Stream 0 is no
 * stream: its reads and writes stand alone.
 *
 * A thread remembers the last STREAM_HALT_MAX halted streams. It does the
 * slots of a landing area in order, so at most LANDING_SLOTS - 1 others can
 * fail between a stream's failure and the last of its batches.
 */

#ifndef RPMAD_COMMON_STREAM_HALT_H
#define RPMAD_COMMON_STREAM_HALT_H

#include <stdbool.h>
#include <stdint.h>

#define STREAM_HALT_MAX 64u

struct stream_halt {
	uint64_t id[STREAM_HALT_MAX];
	unsigned next;
};

/* Whether stream `id` stopped at a lost read or write. */
static inline bool
stream_halted(const struct stream_halt *h, uint64_t id)
{
	if (id == 0)
		return false;
	for (unsigned i = 0; i < STREAM_HALT_MAX; i++)
		if (h->id[i] == id)
			return true;
	return false;
}

/* Stream `id` lost bytes: nothing more of it moves. */
static inline void
stream_halt(struct stream_halt *h, uint64_t id)
{
	if (id == 0 || stream_halted(h, id))
		return;
	h->id[h->next] = id;
	h->next = (h->next + 1) % STREAM_HALT_MAX;
}

#endif /* RPMAD_COMMON_STREAM_HALT_H */
