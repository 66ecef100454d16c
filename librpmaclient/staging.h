/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * staging.h -- the payloads of a connection's own work, copied through the
 * staging bytes of its queue pair (common/qp_region.h, "Staging")
 *
 * A write's or send's source is copied in when the work is posted, a
 * read's or receive's data out when its completion is collected, so that
 * rpmad never reaches into the application's memory for them: it moves
 * them through its mapping of the region, many per system call, and the
 * copies are the application's own CPU time. RDMA's rules allow both: a
 * NIC may read a source at any time between the post and the completion,
 * and a destination's contents are defined only once the completion is
 * seen. Work that does not fit names the application's registration as
 * before (rpmad reaches the memory itself).
 *
 * Each side is one ring buffer: work completes in the order it was posted,
 * so its bytes are given back in that order too. The poster (under its
 * queue's lock) is the only one to take and give back; the collector of
 * completions copies out what it must and then moves the queue's retired
 * index (qp.h), which is how the poster learns that bytes are free.
 */

#ifndef RPMACLIENT_STAGING_H
#define RPMACLIENT_STAGING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What one entry of a queue took; by the entry's index. */
struct stage_slot {
	uint64_t off;		/* in the side's bytes */
	uint32_t len;		/* taken (rounded up); 0: nothing staged */
	uint32_t data_len;	/* the work's own length */
	void *copy_to;		/* read / receive: where the data goes */
	uint32_t copied; /* the collector's: copied out ahead */
};

/* One side (sends or receives) of a queue pair's staging. */
struct stage_ring {
	uint8_t *base;		/* the library's mapping of its bytes */
	uint64_t addr;		/* their address in ring entries */
	uint64_t size;		/* 0: no staging */
	uint32_t lkey;
	struct stage_slot *slots;	/* by entry index & mask */
	uint32_t mask;
	/* the poster's: entries below `freed` gave their bytes back */
	uint32_t freed;
	uint64_t head, tail;	/* in use: [head, tail), or, wrapped, */
	uint64_t wrap_end;	/* [head, wrap_end) and [0, tail) */
	bool wrapped;
	uint32_t live;		/* staged entries not given back */
	uint64_t populated;	/* faulted in by the library up to here */
};

/* What a post asks to stage: `len` bytes from `src`, or for `dst`. */
struct stage_req {
	const void *src;	/* write, send: copied in at post */
	void *dst;		/* read, receive: copied out at completion */
	size_t len;
};

/*
 * staging_init -- one side at `base` (the library's mapping) of `size`
 * bytes, named `lkey` at `addr`, for a queue of `entries` (a power of 2).
 * 0 or -1 (out of memory). A size of 0 leaves the side without staging.
 * staging_fini -- release what staging_init allocated.
 */
int staging_init(struct stage_ring *r, uint8_t *base, uint64_t addr,
		uint64_t size, uint32_t lkey, uint32_t entries);
void staging_fini(struct stage_ring *r);

/*
 * staging_take -- for the entry `index` (the queue's tail), whose earlier
 * entries below `retired` are complete: give back their bytes, then take
 * room for req and copy a source in. Returns true with the entry's local
 * buffer in *lkey and *laddr, false when it does not fit (the entry then
 * names the application's memory).
 */
bool staging_take(struct stage_ring *r, uint32_t index, uint32_t retired,
		const struct stage_req *req, uint32_t *lkey, uint64_t *laddr);

/*
 * staging_deliver -- the first `byte_len` bytes of the entry `index`'s
 * data are in (a read's length, a receive's byte_len): copy what is new
 * of them to where they go. The collector calls it when the entry
 * completed successfully, before it is retired, and may call it earlier
 * with part of a receive's bytes (rpmad said they are in:
 * qp_region.h, rq_filled), so that the completion has only the rest to
 * copy. Nothing for entries that staged nothing or copy nothing.
 */
void staging_deliver(struct stage_ring *r, uint32_t index, uint32_t byte_len);

#endif /* RPMACLIENT_STAGING_H */
