// SPDX-License-Identifier: BSD-3-Clause
/*
 * loop.c -- epoll, a sorted timer list and adaptive polling
 */

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "loop/loop.h"

#define MAX_EVENTS 64

struct loop {
	int epfd;
	/* the batch being dispatched: loop_del() erases its watch from it */
	struct epoll_event *batch;
	int batch_len, batch_pos;
	bool stop;
	bool kicked;
	uint64_t spin_ns;
	struct loop_timer *timers;	/* sorted by deadline */
	struct loop_timer *timers_last;	/* the latest deadline */
	struct loop_poller *pollers;
	loop_log_fn *log; /* who hears of a failed epoll call */
};

uint64_t
loop_now_ns(void)
{
	struct timespec ts;
	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct loop *
loop_new(void)
{
	struct loop *loop = calloc(1, sizeof(*loop));
	if (loop == NULL)
		return NULL;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0) {
		free(loop);
		return NULL;
	}
	loop->spin_ns = 50 * 1000;
	return loop;
}

void
loop_set_log(struct loop *loop, loop_log_fn *log)
{
	loop->log = log;
}

void
loop_delete(struct loop *loop)
{
	if (loop == NULL)
		return;
	(void) close(loop->epfd);
	free(loop);
}

static int
watch_ctl(struct loop *loop, int op, struct loop_watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };
	if (epoll_ctl(loop->epfd, op, w->fd, &ev)) {
		int e = errno;
		if (loop->log)
			loop->log(LOG_ERR, "epoll_ctl(%d, fd %d): %s", op,
					w->fd, strerror(e));
		return -e;
	}
	return 0;
}

int
loop_add(struct loop *loop, struct loop_watch *w, uint32_t events)
{
	int ret = watch_ctl(loop, EPOLL_CTL_ADD, w, events);
	if (ret)
		return ret;
	w->added = true;
	return 0;
}

int
loop_mod(struct loop *loop, struct loop_watch *w, uint32_t events)
{
	return watch_ctl(loop, EPOLL_CTL_MOD, w, events);
}

void
loop_del(struct loop *loop, struct loop_watch *w)
{
	if (!w->added)
		return;
	(void) epoll_ctl(loop->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	w->added = false;
	/* the watch may be freed next: forget its events still to come */
	for (int i = loop->batch_pos; i < loop->batch_len; i++) {
		if (loop->batch[i].data.ptr == w)
			loop->batch[i].data.ptr = NULL;
	}
}

void
loop_timer_cancel(struct loop *loop, struct loop_timer *t)
{
	if (!t->armed)
		return;
	if (t->prev)
		t->prev->next = t->next;
	else
		loop->timers = t->next;
	if (t->next)
		t->next->prev = t->prev;
	else
		loop->timers_last = t->prev;
	t->prev = t->next = NULL;
	t->armed = false;
}

void
loop_timer_arm(struct loop *loop, struct loop_timer *t, uint64_t in_ns)
{
	loop_timer_cancel(loop, t);
	t->deadline_ns = loop_now_ns() + in_ns;
	/*
	 * From the latest deadline back: most timers (heartbeats, time-outs)
	 * are armed for later than every other, so this costs the same with
	 * thousands of connections as with one.
	 */
	struct loop_timer *prev = loop->timers_last;
	while (prev && prev->deadline_ns > t->deadline_ns)
		prev = prev->prev;
	struct loop_timer *next = prev ? prev->next : loop->timers;
	t->prev = prev;
	t->next = next;
	if (prev)
		prev->next = t;
	else
		loop->timers = t;
	if (next)
		next->prev = t;
	else
		loop->timers_last = t;
	t->armed = true;
}

void
loop_poller_add(struct loop *loop, struct loop_poller *p)
{
	p->next = loop->pollers;
	loop->pollers = p;
}

void
loop_set_spin(struct loop *loop, uint64_t spin_ns)
{
	loop->spin_ns = spin_ns;
}

uint64_t
loop_spin_ns(const struct loop *loop)
{
	return loop->spin_ns;
}

void
loop_stop(struct loop *loop)
{
	loop->stop = true;
}

void
loop_kick(struct loop *loop)
{
	loop->kicked = true;
}

static void
run_timers(struct loop *loop, uint64_t now)
{
	while (loop->timers && loop->timers->deadline_ns <= now) {
		struct loop_timer *t = loop->timers;
		loop_timer_cancel(loop, t);
		t->fn(t);
	}
}

static int
run_pollers(struct loop *loop)
{
	int work = 0;
	for (struct loop_poller *p = loop->pollers; p; p = p->next)
		work += p->poll(p->arg);
	return work;
}

/* Arms every poller's wake-up; non-zero when one found work meanwhile. */
static int
prepare_sleep(struct loop *loop)
{
	int work = 0;
	for (struct loop_poller *p = loop->pollers; p; p = p->next)
		work += p->prepare_sleep(p->arg);
	return work;
}

static void
wake_pollers(struct loop *loop)
{
	for (struct loop_poller *p = loop->pollers; p; p = p->next)
		p->wake(p->arg);
}

/* epoll_wait's time-out until the next timer (-1, not an error: none) */
static int
timeout_ms(struct loop *loop, uint64_t now)
{
	if (loop->timers == NULL)
		return -1;	/* no timer: epoll_wait's "no time-out" */
	uint64_t deadline = loop->timers->deadline_ns;
	if (deadline <= now)
		return 0;
	uint64_t ms = (deadline - now + 999999) / 1000000;
	return ms > 60000 ? 60000 : (int)ms;
}

/* Runs the descriptors' events: how many, or a negative errno (logged). */
static int
dispatch(struct loop *loop, int timeout)
{
	struct epoll_event events[MAX_EVENTS];
	int n = epoll_wait(loop->epfd, events, MAX_EVENTS, timeout);
	if (n < 0) {
		int e = errno;
		if (e == EINTR)
			return 0;
		if (loop->log)
			loop->log(LOG_ERR, "epoll_wait: %s", strerror(e));
		return -e;
	}
	loop->batch = events;
	loop->batch_len = n;
	for (loop->batch_pos = 0; loop->batch_pos < n;) {
		struct epoll_event *ev = &events[loop->batch_pos++];
		struct loop_watch *w = ev->data.ptr;
		if (w != NULL)
			w->fn(w, ev->events);
	}
	loop->batch = NULL;
	loop->batch_len = loop->batch_pos = 0;
	return n;
}

int
loop_run_once(struct loop *loop, int timeout)
{
	(void) run_pollers(loop);
	run_timers(loop, loop_now_ns());
	int ret = dispatch(loop, timeout);
	return ret < 0 ? ret : 0;
}

int
loop_run(struct loop *loop)
{
	uint64_t last_work = loop_now_ns();

	while (!loop->stop) {
		loop->kicked = false;
		int work = run_pollers(loop);
		uint64_t now = loop_now_ns();
		run_timers(loop, now);
		/*
		 * a stop asked by a poller or a timer (a drain that ended)
		 * ends the loop now: the wait below could last until the
		 * next timer, or for ever
		 */
		if (loop->stop)
			break;
		if (work || loop->kicked)
			last_work = now;

		if (now - last_work < loop->spin_ns) {
			/*
			 * awake: pick up descriptor events without blocking,
			 * and let the applications we serve run first: on a
			 * host with few cores they need the CPU we spin on
			 */
			int ret = dispatch(loop, 0);
			if (ret < 0)
				return ret;
			/* not when an event left work for the next pass */
			if (!work && !loop->kicked)
				(void) sched_yield();
			continue;
		}

		if (prepare_sleep(loop) || loop->kicked) {
			wake_pollers(loop);
			last_work = loop_now_ns();
			continue;
		}
		int ret = dispatch(loop, timeout_ms(loop, loop_now_ns()));
		wake_pollers(loop);
		if (ret < 0)
			return ret;
		last_work = loop_now_ns();
	}
	return 0;
}
