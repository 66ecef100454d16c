/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ratelimit.h -- at most RATELIMIT_BURST messages per RATELIMIT_WINDOW_NS
 * for one source, counting the ones held back
 */

#ifndef RPMAD_RATELIMIT_H
#define RPMAD_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#define RATELIMIT_BURST 20
#define RATELIMIT_WINDOW_NS (10ULL * 1000000000ULL)

struct ratelimit {
	uint64_t window_start_ns;
	uint32_t used;		/* messages let through in this window */
	uint64_t suppressed;	/* held back and not reported yet */
};

/*
 * ratelimit_take -- whether one more message may go out at `now_ns`;
 * counts it as suppressed when not. A message that starts a new window
 * after some were held back gets their count in *report (else 0), for the
 * caller to say so first.
 */
bool ratelimit_take(struct ratelimit *rl, uint64_t now_ns, uint64_t *report);

/* ratelimit_drain -- the count held back and not reported yet; resets it */
uint64_t ratelimit_drain(struct ratelimit *rl);

#endif /* RPMAD_RATELIMIT_H */
