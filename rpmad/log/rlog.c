// SPDX-License-Identifier: BSD-3-Clause
/*
 * rlog.c -- rate-limited log lines of one source, with the count of what
 * was held back
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "log/log.h"
#include "log/rlog.h"

/* where the reports' timers run (none: no report until a line comes) */
static struct loop *timers;

void
rlog_set_loop(struct loop *loop)
{
	timers = loop;
}

static void
report(struct rlog *r)
{
	uint64_t n = ratelimit_drain(&r->rl);
	if (n)
		log_notice("suppressed %" PRIu64 " messages %s", n, r->about);
}

static void
report_timer_fn(struct loop_timer *t)
{
	report(t->arg);
}

void
rlog_init(struct rlog *r, const char *about)
{
	*r = (struct rlog){ .report = { .fn = report_timer_fn } };
	r->report.arg = r;
	(void) snprintf(r->about, sizeof(r->about), "%s", about);
}

bool
rlog_msg(struct rlog *r, int level, const char *fmt, ...)
{
	if (level > log_max_level)
		return true;
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	(void) vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);

	uint64_t now = loop_now_ns(), held;
	bool ok = ratelimit_take(&r->rl, now, &held);
	if (held)
		log_notice("suppressed %" PRIu64 " messages %s", held,
				r->about);
	if (ok) {
		log_msg(level, "%s", text);
		return true;
	}
	r->suppressed++;
	if (!r->report.armed && timers)
		loop_timer_arm(timers, &r->report,
				r->rl.window_start_ns + RATELIMIT_WINDOW_NS -
						now);
	return false;
}

bool
rlog_quiet(const struct rlog *r, uint64_t now_ns)
{
	return !r->report.armed && (r->rl.used == 0 ||
			now_ns - r->rl.window_start_ns >= RATELIMIT_WINDOW_NS);
}

void
rlog_fini(struct rlog *r)
{
	report(r);
	if (timers)
		loop_timer_cancel(timers, &r->report);
}
