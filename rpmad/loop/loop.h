/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * loop.h -- rpmad's event loop: descriptors (epoll), timers and pollers
 *
 * rpmad is single-threaded (but for the thread of offload.h, which only
 * runs msync): the loop calls the pollers (the shared queue
 * pairs, the transports) while they find work, keeps spinning for a bounded
 * time after the last work, then asks each poller to prepare for sleep (set
 * need_wakeup and look once more) and blocks in epoll_wait until a
 * descriptor or a timer is due.
 */

#ifndef RPMAD_LOOP_H
#define RPMAD_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop;

struct loop_watch;
typedef void loop_fd_fn(struct loop_watch *w, uint32_t events);

struct loop_watch {
	int fd;
	loop_fd_fn *fn;
	void *arg;
	bool added;
};

struct loop_timer;
typedef void loop_timer_fn(struct loop_timer *t);

struct loop_timer {
	uint64_t deadline_ns;
	loop_timer_fn *fn;
	void *arg;
	bool armed;
	struct loop_timer *prev, *next;
};

/*
 * A poller: poll() returns how much work it did; prepare_sleep() arms the
 * wake-ups and returns non-zero when work appeared meanwhile (then the loop
 * does not sleep); wake() undoes what prepare_sleep() armed.
 */
struct loop_poller {
	int (*poll)(void *arg);
	int (*prepare_sleep)(void *arg);
	void (*wake)(void *arg);
	void *arg;
	struct loop_poller *next;
};

struct loop *loop_new(void);
void loop_delete(struct loop *loop);

/*
 * loop_set_log -- where the loop tells of an epoll call that failed (the
 * "logged" below): rpmad's log, which main.c hands in, as the loop stands
 * below the log; without one it says nothing
 */
typedef void loop_log_fn(int level, const char *fmt, ...)
		__attribute__((format(printf, 2, 3)));
void loop_set_log(struct loop *loop, loop_log_fn *log);

/*
 * loop_add / loop_mod -- watch w->fd for `events` (EPOLLIN, ...); 0, or a
 * negative errno (logged)
 */
int loop_add(struct loop *loop, struct loop_watch *w, uint32_t events);
int loop_mod(struct loop *loop, struct loop_watch *w, uint32_t events);
void loop_del(struct loop *loop, struct loop_watch *w);

void loop_timer_arm(struct loop *loop, struct loop_timer *t, uint64_t in_ns);
void loop_timer_cancel(struct loop *loop, struct loop_timer *t);

void loop_poller_add(struct loop *loop, struct loop_poller *p);

/* loop_set_spin -- how long to keep polling after the last work */
void loop_set_spin(struct loop *loop, uint64_t spin_ns);
uint64_t loop_spin_ns(const struct loop *loop);

/*
 * loop_run -- run until loop_stop(); returns 0, or a negative errno when
 * epoll fails (logged)
 */
int loop_run(struct loop *loop);
void loop_stop(struct loop *loop);

/*
 * loop_run_once -- poll, run due timers and wait up to timeout_ms for
 * descriptors, once (for shutdown, when loop_run() has returned); 0 or a
 * negative errno, as loop_run()
 */
int loop_run_once(struct loop *loop, int timeout_ms);

/* loop_kick -- make the loop poll once more before it sleeps */
void loop_kick(struct loop *loop);

uint64_t loop_now_ns(void);

#endif /* RPMAD_LOOP_H */
