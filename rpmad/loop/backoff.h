/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backoff.h -- a listening socket that cannot accept for now (rpmad is out
 * of descriptors or memory) is left alone for a while, a little longer
 * each time, instead of being polled in a spin: its listen queue stays
 * readable, and a level-triggered watch would fire again at once
 */

#ifndef RPMAD_BACKOFF_H
#define RPMAD_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

#include "loop/loop.h"

/* The first pause, and the longest (doubled from the first). */
#define BACKOFF_MIN_NS (10 * 1000 * 1000ull)
#define BACKOFF_MAX_NS (1000 * 1000 * 1000ull)

struct backoff {
	struct loop *loop; /* where it is watched */
	struct loop_watch *watch;	/* what is paused */
	uint32_t events;		/* what it watches for */
	struct loop_timer timer;	/* the end of a pause */
	uint64_t next_ns;		/* the next pause (0: the shortest) */
};

/* backoff_init -- for the watch `w` (added to `loop` with `events`) */
void backoff_init(struct backoff *b, struct loop *loop, struct loop_watch *w,
		uint32_t events);

/*
 * backoff_pause -- stop watching until the pause ends (then the watch is
 * added again); the next pause is twice as long, up to BACKOFF_MAX_NS.
 * Returns this pause's length.
 */
uint64_t backoff_pause(struct backoff *b);

/* backoff_paused -- whether a pause is under way */
bool backoff_paused(const struct backoff *b);

/* backoff_reset -- it accepted again: the next pause is the shortest */
void backoff_reset(struct backoff *b);

/* backoff_cancel -- the watch goes away: no pause resumes it */
void backoff_cancel(struct backoff *b);

#endif /* RPMAD_BACKOFF_H */
