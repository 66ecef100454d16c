// SPDX-License-Identifier: BSD-3-Clause
/*
 * backoff.c -- pausing a listening socket that cannot accept for now
 */

#include "loop/backoff.h"

static void
resume(struct loop_timer *t)
{
	struct backoff *b = t->arg;
	/* a failure is logged by the loop; the next accept tells again */
	(void) loop_add(b->loop, b->watch, b->events);
}

void
backoff_init(struct backoff *b, struct loop *loop, struct loop_watch *w,
		uint32_t events)
{
	b->loop = loop;
	b->watch = w;
	b->events = events;
	b->timer.fn = resume;
	b->timer.arg = b;
	b->next_ns = 0;
}

uint64_t
backoff_pause(struct backoff *b)
{
	uint64_t ns = b->next_ns ? b->next_ns : BACKOFF_MIN_NS;
	b->next_ns = ns * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : ns * 2;
	loop_del(b->loop, b->watch);
	loop_timer_arm(b->loop, &b->timer, ns);
	return ns;
}

bool
backoff_paused(const struct backoff *b)
{
	return b->timer.armed;
}

void
backoff_reset(struct backoff *b)
{
	b->next_ns = 0;
}

void
backoff_cancel(struct backoff *b)
{
	loop_timer_cancel(b->loop, &b->timer);
}
