/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_batch.h -- what the frames read on a socket do to a client's own
 * memory, handed to the client's thread in batches (as_worker.h)
 *
 * Frames that land bytes in memory rpmad reaches through the client's
 * address space add them to the channel's batch; one batch at a time is
 * with the client's thread, and the frames read meanwhile gather the next.
 * A payload bigger than TCP_BATCH_SLICE goes through in slices, so that
 * what rpmad holds of it stays bounded. A frame whose end must wait for
 * its bytes (a message's receive completion, a read's data) makes reading
 * stop until they are in; so does any frame that must not overtake the
 * bytes before it (the role decides which). The role of the channel
 * (the target's operations, the initiator's answers) says what a batch
 * that comes back means.
 */

#ifndef RPMAD_TCP_BATCH_H
#define RPMAD_TCP_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "clients/as_worker.h"

struct mr;
struct tcp_chan;

#define TCP_BATCH_SLICE (1u << 20)

struct tcp_batch_role {
	/*
	 * a batch is back, with how it went (first of all: it may stop what
	 * follows, tcp_batch_discard)
	 */
	void (*back)(struct tcp_chan *ch, struct as_batch *b,
			enum as_status status);
	/* the frame whose end waited for its bytes ends now */
	void (*end)(struct tcp_chan *ch);
	/* everything of the batch is done: answers that waited go now */
	void (*after)(struct tcp_chan *ch);
};

/* tcp_batch_pending -- whether bytes of frames read are yet to be done */
bool tcp_batch_pending(const struct tcp_chan *ch);

/* tcp_batch_busy -- the batch with the client's thread, or NULL */
struct as_batch *tcp_batch_busy(const struct tcp_chan *ch);

/*
 * tcp_batch_gathering -- the batch frames add to, or NULL (its first tag
 * is the first frame not done)
 */
struct as_batch *tcp_batch_gathering(const struct tcp_chan *ch);

/*
 * tcp_batch_for -- the batch the current frame adds to (made for the
 * registration's client); NULL when out of memory
 */
struct as_batch *tcp_batch_for(struct tcp_chan *ch, struct mr *mr);

/*
 * tcp_batch_sink -- the current frame's payload goes to the client's
 * memory at addr of mr: its first slice's room in the batch (SINK_BATCH).
 * 0, or -ENOMEM.
 */
int tcp_batch_sink(struct tcp_chan *ch, struct mr *mr, uint64_t addr);

/*
 * tcp_batch_room -- the slice is full: room for the next (0), or 1 when
 * the thread is to catch up first (reading stops until it has)
 */
int tcp_batch_room(struct tcp_chan *ch);

/* tcp_batch_flush -- what was gathered goes to the thread, when it can */
void tcp_batch_flush(struct tcp_chan *ch);

/*
 * tcp_batch_wait -- the current frame waits for every batch before it:
 * they go, and reading stops until they are back. Returns 1 (as frame
 * handlers do to wait).
 */
int tcp_batch_wait(struct tcp_chan *ch);

/*
 * tcp_batch_end_waits -- the current frame's payload is in; its end waits
 * for its bytes (role->end runs then), and nothing is read until then
 */
void tcp_batch_end_waits(struct tcp_chan *ch);

/* tcp_batch_discard -- after a failure: what was gathered is dropped */
void tcp_batch_discard(struct tcp_chan *ch);

/*
 * tcp_batch_start -- the channel's role and how to read on after a wait
 * tcp_batch_forget -- the channel goes: its batches are dropped
 */
void tcp_batch_start(struct tcp_chan *ch, const struct tcp_batch_role *role,
		void (*resume)(struct tcp_chan *ch));
void tcp_batch_forget(struct tcp_chan *ch);

#endif /* RPMAD_TCP_BATCH_H */
