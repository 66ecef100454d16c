// SPDX-License-Identifier: BSD-3-Clause
/*
 * ratelimit.c -- a fixed-window message limiter
 */

#include "log/ratelimit.h"

bool
ratelimit_take(struct ratelimit *rl, uint64_t now_ns, uint64_t *report)
{
	*report = 0;
	if (rl->used == 0 || now_ns - rl->window_start_ns >=
			RATELIMIT_WINDOW_NS) {
		rl->window_start_ns = now_ns;
		rl->used = 0;
		*report = ratelimit_drain(rl);
	}
	if (rl->used >= RATELIMIT_BURST) {
		rl->suppressed++;
		return false;
	}
	rl->used++;
	return true;
}

uint64_t
ratelimit_drain(struct ratelimit *rl)
{
	uint64_t n = rl->suppressed;
	rl->suppressed = 0;
	return n;
}
