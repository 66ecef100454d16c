/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rlog.h -- the log lines of one source that others can make rpmad write
 * at will (a remote address, the control socket's accept failures): at
 * most RATELIMIT_BURST per RATELIMIT_WINDOW_NS, and when a window that
 * held some back ends, one line "suppressed N messages <about>" -- said
 * by a loop timer, so also when the source went quiet
 */

#ifndef RPMAD_RLOG_H
#define RPMAD_RLOG_H

#include <stdbool.h>
#include <stdint.h>

#include "log/ratelimit.h"
#include "loop/loop.h"

#define RLOG_ABOUT_MAX 96

struct rlog {
	struct ratelimit rl;
	struct loop_timer report;	/* the end of a window that held some */
	uint64_t suppressed;		/* in all, since rlog_init */
	char about[RLOG_ABOUT_MAX];	/* "caused by 192.0.2.7", ... */
};

/*
 * rlog_set_loop -- the loop whose timers say what was held back, once
 * rpmad has one (before, a report waits for the source's next line)
 */
void rlog_set_loop(struct loop *loop);

/* rlog_init -- a new source; `about` ends its report line */
void rlog_init(struct rlog *r, const char *about);

/*
 * rlog_msg -- one line of the source, unless its share of the window is
 * used up (then it is counted). Returns whether it went out (a level
 * above log_level is neither logged nor counted: true).
 */
bool rlog_msg(struct rlog *r, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* rlog_quiet -- whether nothing is held back nor a window under way */
bool rlog_quiet(const struct rlog *r, uint64_t now_ns);

/* rlog_fini -- says what is still held back; the timer stops */
void rlog_fini(struct rlog *r);

#endif /* RPMAD_RLOG_H */
