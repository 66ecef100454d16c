// SPDX-License-Identifier: BSD-3-Clause
/*
 * as_worker.c -- rpmad's thread per client for the reads and writes of its
 * own memory (the batches its landing area does not take: as_worker.h),
 * and their way back to the loop through one eventfd
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "clients/addrspace.h"
#include "clients/as_worker_impl.h"
#include "core/daemon.h"
#include "log/log.h"
#include "loop/loop.h"
#include "stream_halt.h"

/* how long a thread without work waits for more before it ends */
#define IDLE_NS (2000u * 1000000u)
/*
 * how long it looks for the next batch before it sleeps: under a stream
 * of frames the next one comes within microseconds, and a sleep and a
 * wake-up cost more than that on a loaded host
 */
#define SPIN_NS (50u * 1000u)
/* the thread's stack: it copies through pread and pwrite only */
#define STACK_SIZE (64u << 10)

/*
 * A thread's stack is rpmad's own mapping, unmapped by the loop once the
 * thread is joined: a thread that ended leaves nothing behind (glibc
 * would keep its stack cached)
 */
struct as_thread {
	pthread_t t;
	void *stack;
	size_t len;
	struct as_worker *orphan;	/* the loop frees it, if set */
	struct as_thread *next;
};

struct as_worker {
	struct as_hook hook; /* on the client's address space */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	_Atomic unsigned queued;	/* batches submitted: for its spin */
	struct as_batch *head, *tail;	/* to do, oldest first */
	struct as_batch *current;	/* being done by the thread */
	bool running;			/* a thread exists */
	/* the thread's: streams that lost bytes, of which nothing more moves */
	struct stream_halt halted;
	struct as_thread *thread;	/* ... this one */
	bool stopping;			/* the address space is gone */
	unsigned refs;			/* the address space's, the thread's */
	int mem_fd;			/* the thread's own descriptor */
};

/* the worker whose hook this is */
static struct as_worker *
worker_of_hook(struct as_hook *h)
{
	return (struct as_worker *) ((char *) h -
			offsetof(struct as_worker, hook));
}

static struct {
	struct loop *loop;
	const struct as_back *back; /* the batches' way back up */
	int efd;
	struct loop_watch watch;
	pthread_mutex_t lock;		/* the done list, the ended threads */
	struct as_batch *done_head, *done_tail;
	struct as_thread *ended;
} aw = {
	.efd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* --------------------------------------------------------- the thread */

/*
 * The writes from b->jobs[*i] on whose bytes follow each other in the
 * batch and in the client's memory, as one call (and, when that one lost
 * bytes, again one by one, to tell which lost them; in a stream, up to
 * the first that did): the bytes lost. *i goes past what was done.
 */
static uint64_t
write_run(struct as_worker *w, struct as_batch *b, unsigned *i)
{
	const struct as_job *j = &b->jobs[*i];
	unsigned first = *i, end = first + 1;
	size_t len = j->len;
	while (end < b->njobs && b->jobs[end].kind == AS_JOB_WRITE &&
			b->jobs[end].addr == j->addr + len &&
			b->jobs[end].data == j->data + len)
		len += b->jobs[end++].len;
	*i = end;
	if (addrspace_pwrite(w->mem_fd, j->addr, j->data, len) == 0)
		return 0;
	uint64_t lost = 0;
	for (unsigned k = first; k < end; k++) {
		struct as_job *x = &b->jobs[k];
		size_t n = addrspace_pwrite(w->mem_fd, x->addr, x->data,
				x->len);
		x->lost = n > 0;
		lost += n;
		if (x->lost && b->stream) {
			*i = k + 1;
			break;
		}
	}
	return lost;
}

/*
 * Does the batch's work in order. In a stream, nothing moves after a job
 * that lost bytes (stream_halt.h): the rest are lost too.
 */
static void
run_batch(struct as_worker *w, struct as_batch *b)
{
	uint64_t lost = 0;
	bool halted = stream_halted(&w->halted, b->stream);
	unsigned i = 0;
	while (i < b->njobs && !halted) {
		struct as_job *j = &b->jobs[i];
		if (j->kind == AS_JOB_READ) {
			size_t n = addrspace_pread(w->mem_fd, j->addr, j->data,
					j->len);
			j->lost = n > 0;
			lost += n;
			i++;
		} else {
			lost += write_run(w, b, &i);
		}
		halted = b->stream && b->jobs[i - 1].lost;
	}
	if (halted)
		stream_halt(&w->halted, b->stream);
	for (; i < b->njobs; i++) {
		b->jobs[i].lost = true;
		lost += b->jobs[i].len;
	}
	b->lost = lost;
}

static void
worker_put_locked(struct as_worker *w, bool *free_it)
{
	*free_it = --w->refs == 0;
}

static void
worker_free(struct as_worker *w)
{
	if (w->mem_fd >= 0)
		(void) close(w->mem_fd);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->wake);
	free(w);
}

/* Hands a finished batch to the loop. */
static void
hand_back(struct as_batch *b)
{
	(void) pthread_mutex_lock(&aw.lock);
	b->next = NULL;
	if (aw.done_tail)
		aw.done_tail->next = b;
	else
		aw.done_head = b;
	aw.done_tail = b;
	(void) pthread_mutex_unlock(&aw.lock);
	uint64_t one = 1;
	/* a full counter still wakes the loop: nothing to retry */
	(void) !write(aw.efd, &one, sizeof(one));
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;
	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Looks for a next batch a little while without the lock (held on entry). */
static void
spin_for_more(struct as_worker *w)
{
	unsigned seen = atomic_load_explicit(&w->queued, memory_order_acquire);
	(void) pthread_mutex_unlock(&w->lock);
	uint64_t end = mono_ns() + SPIN_NS;
	while (atomic_load_explicit(&w->queued, memory_order_acquire) == seen &&
			mono_ns() < end)
		(void) sched_yield();
	(void) pthread_mutex_lock(&w->lock);
}

static void *
thread_main(void *arg)
{
	struct as_worker *w = arg;
	(void) pthread_mutex_lock(&w->lock);
	for (;;) {
		if (w->head == NULL && !w->stopping)
			spin_for_more(w);
		struct timespec until;
		(void) clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += IDLE_NS / 1000000000u;
		until.tv_nsec += IDLE_NS % 1000000000u;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		int waited = 0;
		while (w->head == NULL && !w->stopping && waited != ETIMEDOUT)
			waited = pthread_cond_timedwait(&w->wake, &w->lock,
					&until);
		struct as_batch *b = w->head;
		if (b == NULL)
			break;	/* stopping, or idle for long enough */
		w->head = b->next;
		if (w->head == NULL)
			w->tail = NULL;
		w->current = b;
		(void) pthread_mutex_unlock(&w->lock);
		run_batch(w, b);
		(void) pthread_mutex_lock(&w->lock);
		w->current = NULL;
		/*
		 * one the loop gave up on and freed goes back to be destroyed
		 * there: this thread frees nothing (glibc would give it an
		 * arena of its own, a mapping left behind)
		 */
		if (b->loop_freed || !b->abandoned)
			hand_back(b);
	}
	w->running = false;
	struct as_thread *self = w->thread;
	w->thread = NULL;
	bool free_it;
	worker_put_locked(w, &free_it);
	(void) pthread_mutex_unlock(&w->lock);
	self->orphan = free_it ? w : NULL;
	/* the loop joins it, unmaps its stack, frees what it left */
	(void) pthread_mutex_lock(&aw.lock);
	self->next = aw.ended;
	aw.ended = self;
	(void) pthread_mutex_unlock(&aw.lock);
	uint64_t one = 1;
	(void) !write(aw.efd, &one, sizeof(one));
	return NULL;
}

/* Starts the thread (w->lock held): 0 or a negative errno. */
static int
start_thread(struct as_worker *w)
{
	struct as_thread *th = calloc(1, sizeof(*th));
	if (th == NULL)
		return -ENOMEM;
	long page = sysconf(_SC_PAGESIZE);
	th->len = STACK_SIZE + (size_t)page;
	th->stack = mmap(NULL, th->len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (th->stack == MAP_FAILED) {
		free(th);
		return -ENOMEM;
	}
	/* a guard page under it */
	(void) mprotect(th->stack, (size_t)page, PROT_NONE);
	pthread_attr_t attr;
	(void) pthread_attr_init(&attr);
	(void) pthread_attr_setstack(&attr, (char *)th->stack + page,
			STACK_SIZE);
	sigset_t all, old;
	(void) sigfillset(&all);
	(void) pthread_sigmask(SIG_SETMASK, &all, &old);
	w->refs++;
	w->thread = th;
	int ret = pthread_create(&th->t, &attr, thread_main, w);
	(void) pthread_sigmask(SIG_SETMASK, &old, NULL);
	(void) pthread_attr_destroy(&attr);
	if (ret) {
		w->refs--;
		w->thread = NULL;
		(void) munmap(th->stack, th->len);
		free(th);
		return -ret;
	}
	w->running = true;
	return 0;
}

/* Joins the threads that ended and unmaps their stacks. */
static void
join_ended(void)
{
	(void) pthread_mutex_lock(&aw.lock);
	struct as_thread *th = aw.ended;
	aw.ended = NULL;
	(void) pthread_mutex_unlock(&aw.lock);
	while (th) {
		struct as_thread *next = th->next;
		(void) pthread_join(th->t, NULL);
		(void) munmap(th->stack, th->len);
		if (th->orphan)
			worker_free(th->orphan);
		free(th);
		th = next;
	}
}

/* ------------------------------------------------------------ the loop */

static void worker_release(struct as_hook *h);

static const struct as_hook_ops worker_hook_ops = {
	.release = worker_release,
};

/* The client's worker, if it has one. */
static struct as_worker *
worker_find(struct addrspace *as)
{
	struct as_hook *h = addrspace_hook_find(as, &worker_hook_ops);
	return h ? worker_of_hook(h) : NULL;
}

static struct as_worker *
worker_of(struct addrspace *as)
{
	struct as_worker *w = worker_find(as);
	if (w)
		return w;
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	/* its own: the thread may outlive the address space's */
	w->mem_fd = fcntl(addrspace_mem_fd(as), F_DUPFD_CLOEXEC, 0);
	if (w->mem_fd < 0) {
		free(w);
		return NULL;
	}
	(void) pthread_mutex_init(&w->lock, NULL);
	/* its idle time-out is measured on the monotonic clock */
	pthread_condattr_t ca;
	(void) pthread_condattr_init(&ca);
	(void) pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	(void) pthread_cond_init(&w->wake, &ca);
	(void) pthread_condattr_destroy(&ca);
	w->refs = 1;	/* the address space's */
	w->hook.ops = &worker_hook_ops;
	addrspace_hook_add(as, &w->hook);
	return w;
}

void
worker_submit(struct as_batch *b)
{
	struct as_worker *w = worker_of(b->as);
	if (w == NULL) {
		b->status = AS_NOMEM;
		hand_back(b);
		return;
	}
	(void) pthread_mutex_lock(&w->lock);
	/* a thread still stuck in an earlier batch's call: no more waiting */
	bool stuck = w->current && w->current->abandoned;
	int ret = stuck ? -EAGAIN : w->running ? 0 : start_thread(w);
	if (ret == 0) {
		b->next = NULL;
		if (w->tail)
			w->tail->next = b;
		else
			w->head = b;
		w->tail = b;
		atomic_fetch_add_explicit(&w->queued, 1, memory_order_release);
		(void) pthread_cond_signal(&w->wake);
	}
	(void) pthread_mutex_unlock(&w->lock);
	if (ret == 0)
		return;
	if (ret != -EAGAIN)
		log_err("cannot start a thread for a client's memory: %s",
				strerror(-ret));
	/* its end comes from the loop's next pass, as any batch's */
	b->status = ret == -EAGAIN ? AS_STALLED : AS_NOMEM;
	hand_back(b);
}

bool
worker_keeps(struct as_batch *b)
{
	struct as_worker *w = worker_find(b->as);
	if (w == NULL)
		return false;
	(void) pthread_mutex_lock(&w->lock);
	bool in_it = w->current == b;
	if (in_it)
		b->loop_freed = true;
	(void) pthread_mutex_unlock(&w->lock);
	return in_it;
}

bool
worker_abandon(struct as_batch *b)
{
	struct as_worker *w = worker_find(b->as);
	if (w == NULL)
		return false;	/* never reached one: in the done list */
	bool ends = true;
	(void) pthread_mutex_lock(&w->lock);
	if (w->current == b) {
		b->abandoned = true;
	} else {
		/* queued behind a stuck one: out of the queue */
		struct as_batch **p = &w->head, *prev = NULL;
		while (*p && *p != b) {
			prev = *p;
			p = &(*p)->next;
		}
		if (*p) {
			*p = b->next;
			if (w->tail == b)
				w->tail = prev;
		} else {
			ends = false;	/* in the done list */
		}
	}
	(void) pthread_mutex_unlock(&w->lock);
	return ends;
}

void
worker_reap(void)
{
	(void) pthread_mutex_lock(&aw.lock);
	struct as_batch *b = aw.done_head;
	aw.done_head = aw.done_tail = NULL;
	(void) pthread_mutex_unlock(&aw.lock);
	while (b) {
		struct as_batch *next = b->next;
		if (b->loop_freed)
			aw.back->destroy(b); /* given up on, and freed */
		else
			aw.back->finish(b, b->status);
		b = next;
	}
}

static void
efd_ready(struct loop_watch *watch, uint32_t events)
{
	(void) events;
	uint64_t n;
	(void) !read(watch->fd, &n, sizeof(n));
	worker_reap();
	join_ended();
}

/* The client's address space goes: its thread ends once it has nothing left. */
static void
worker_release(struct as_hook *h)
{
	struct as_worker *w = worker_of_hook(h);
	(void) pthread_mutex_lock(&w->lock);
	w->stopping = true;
	(void) pthread_cond_signal(&w->wake);
	bool free_it;
	worker_put_locked(w, &free_it);
	(void) pthread_mutex_unlock(&w->lock);
	if (free_it)
		worker_free(w);
}

void
worker_init(struct loop *loop, const struct as_back *back)
{
	aw.loop = loop;
	aw.back = back;
	aw.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (aw.efd < 0) {
		log_err("cannot make an eventfd for clients' memory: %s",
				strerror(errno));
		return;
	}
	aw.watch.fd = aw.efd;
	aw.watch.fn = efd_ready;
	if (loop_add(loop, &aw.watch, EPOLLIN))
		log_err("cannot watch the eventfd for clients' memory");
}

void
worker_fini(void)
{
	join_ended();
	if (aw.efd >= 0) {
		loop_del(aw.loop, &aw.watch);
		(void) close(aw.efd);
	}
	aw.efd = -1;
}
