// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_loop.c -- rpmad's event loop (rpmad/core/loop.c): a stop asked by
 * a timer or a poller ends loop_run before it waits again. Found in the
 * Soft-RoCE VM: a draining rpmad whose drain check (a timer) stopped the
 * loop while it was past its spinning slept in epoll_wait until its next
 * timer, up to a minute, instead of exiting.
 */

#include <check.h>
#include <stdlib.h>

#include "core/daemon.h"
#include "loop/loop.h"
#include "th_suite.h"

struct daemon_state rpmad;

/*
 * A timer due later: a loop that waited for it did not stop when asked.
 * Far enough that no load delays a loop that stops by as much.
 */
#define FAR_NS (10ull * 1000 * 1000 * 1000)

static struct loop *loop;
static int stops, far_fired;

static void
stop_timer(struct loop_timer *t)
{
	(void) t;
	stops++;
	loop_stop(loop);
}

static void
far_timer(struct loop_timer *t)
{
	(void) t;
	far_fired++;
}

static void
setup(void)
{
	loop = loop_new();
	ck_assert_ptr_nonnull(loop);
	/* no spinning: every pass past the timers may sleep */
	loop_set_spin(loop, 0);
	stops = far_fired = 0;
}

static void
teardown(void)
{
	loop_delete(loop);
}

/* Runs the loop, which something stops once, with `far` armed. */
static void
run_until_stopped(struct loop_timer *far)
{
	ck_assert_int_eq(loop_run(loop), 0);
	ck_assert_int_eq(stops, 1);
	/* it returned without waiting for the next timer */
	ck_assert_int_eq(far_fired, 0);
	ck_assert_uint_lt(loop_now_ns(), far->deadline_ns);
	loop_timer_cancel(loop, far);
}

START_TEST(test_stop_from_timer)
{
	struct loop_timer stop = { .fn = stop_timer };
	struct loop_timer far = { .fn = far_timer };
	loop_timer_arm(loop, &far, FAR_NS);
	loop_timer_arm(loop, &stop, 0);
	run_until_stopped(&far);
}
END_TEST

/* the only timer stops the loop: no timer left, a wait without end */
START_TEST(test_stop_from_last_timer)
{
	struct loop_timer stop = { .fn = stop_timer };
	loop_timer_arm(loop, &stop, 1000 * 1000);
	ck_assert_int_eq(loop_run(loop), 0);
	ck_assert_int_eq(stops, 1);
}
END_TEST

static int
stop_poll(void *arg)
{
	(void) arg;
	stops++;
	loop_stop(loop);
	return 0;
}

static int
no_work(void *arg)
{
	(void) arg;
	return 0;
}

static void
no_wake(void *arg)
{
	(void) arg;
}

START_TEST(test_stop_from_poller)
{
	struct loop_poller p = {
		.poll = stop_poll, .prepare_sleep = no_work, .wake = no_wake,
	};
	struct loop_timer far = { .fn = far_timer };
	loop_timer_arm(loop, &far, FAR_NS);
	loop_poller_add(loop, &p);
	run_until_stopped(&far);
}
END_TEST

int
main(void)
{
	const TTest *const tc_stop[] = { test_stop_from_timer,
		test_stop_from_last_timer, test_stop_from_poller, NULL };
	const struct th_tcase tcases[] = {
		{ "stop", .tests = tc_stop, .setup = setup,
				.teardown = teardown },
	};
	return check_run(th_suite("loop", tcases, TH_N(tcases)), CK_NORMAL);
}
