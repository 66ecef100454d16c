// SPDX-License-Identifier: BSD-3-Clause
/*
 * landing_thread.c -- the library's landing thread: taking the batches rpmad
 * posts, checking them against the process's own registrations, and
 * copying between the application's memory and the landing area
 * (landing_thread.h, common/landing_area.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "broker.h"
#include "errno_keep.h"
#include "fork.h"
#include "landing_thread.h"
#include "landing_area.h"
#include "log_internal.h"
#include "qp_ring.h"
#include "range_set.h"
#include "stream_halt.h"

/*
 * how long the thread looks for the next batch before it sleeps: under a
 * stream the next one comes within microseconds, and a sleep and a wake
 * cost more than that
 */
#define SPIN_NS (50u * 1000u)
/* how long it sleeps at most before it looks whether it must stop */
#define SLEEP_S 1
/* its stack: it copies through system calls only */
#define STACK_SIZE (64u << 10)
/* how long a stop waits for it before leaving it to end by itself */
#define STOP_WAIT_MS 200

/*
 * One session's landing: its area, its thread, and the registrations it
 * lands for. Freed by whichever of the library and the thread lets go of
 * it last (refs): a thread stuck in a copy of a page that never comes
 * must not hold up rpma_mr_dereg.
 */
struct landing {
	uint64_t generation;
	unsigned epoch;		/* of the process that made it */
	int area_fd, done_fd;
	uint8_t *map;
	size_t size;
	struct landing_header *hdr;
	struct landing_slot *slots;
	uint32_t first;
	pthread_t thread;
	_Atomic bool stop;
	unsigned refs;		/* under lk.lock */
	/* under lk.lock: the registrations it may copy into and out of */
	struct range_set *ranges;
	/* the thread's: streams that lost bytes, of which nothing more moves */
	struct stream_halt halted;
	struct landing *next;
};

static struct {
	pthread_mutex_t lock;
	struct landing *all;
	/*
	 * Starting and ending a session's landing, one at a time: rpmad
	 * opens one area a session, so two threads registering at once
	 * must not both open it, and a new start must not meet the close
	 * of the last one. Taken before lock, never by a landing thread.
	 */
	pthread_mutex_t start;
	/* the session whose start failed: rpmad lands all of its accesses
	 * itself (a later area would meet ranges its thread never had);
	 * 0 is none, as sessions count from 1 (broker.c) */
	uint64_t failed_generation;
	unsigned failed_epoch;
} lk = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.start = PTHREAD_MUTEX_INITIALIZER,
};

/* --------------------------------------------------------- the area */

static void
landing_unref_locked(struct landing *l, bool *free_it)
{
	*free_it = --l->refs == 0;
}

static void
landing_destroy(struct landing *l)
{
	if (l->map)
		(void) munmap(l->map, l->size);
	if (l->area_fd >= 0)
		(void) close(l->area_fd);
	if (l->done_fd >= 0)
		(void) close(l->done_fd);
	range_set_delete(l->ranges);
	free(l);
}

/* Whether [addr, addr + len) lies in one of its registrations. */
static bool
registered(struct landing *l, uint64_t addr, uint64_t len)
{
	(void) pthread_mutex_lock(&lk.lock);
	bool yes = l->ranges && range_set_covers(l->ranges, addr, len);
	(void) pthread_mutex_unlock(&lk.lock);
	return yes;
}

/* Whether a job names bytes of the area's data and of its registrations. */
static bool
job_valid(struct landing *l, const struct landing_job *j)
{
	if (j->kind != LANDING_WRITE && j->kind != LANDING_READ)
		return false;
	uint64_t lo = landing_data_offset(), hi = lo + LANDING_DATA_SIZE;
	if (j->data_off < lo || j->data_off > hi || j->len > hi - j->data_off)
		return false;
	return registered(l, j->addr, j->len);
}

/* ------------------------------------------------------- the copies */

/*
 * Where the kernel's copy with this process's page tables cannot go (a
 * page made read-only, or without access), /proc/self/mem goes as a
 * debugger would, as a NIC writes pinned pages; 0: all moved.
 */
static int
forced(const struct landing_job *j, uint8_t *data)
{
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < j->len) {
		ssize_t n = j->kind == LANDING_WRITE ?
			pwrite(fd, data + done, j->len - done,
					(off_t)(j->addr + done)) :
			pread(fd, data + done, j->len - done,
					(off_t)(j->addr + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	(void) close(fd);
	return done == j->len ? 0 : -1;
}

/* One job; 0, or -1: its bytes did not all move. */
static int
move_one(struct landing *l, const struct landing_job *j)
{
	size_t done = 0;
	while (done < j->len) {
		void *at = (void *)(uintptr_t)(j->addr + done);
		off_t off = (off_t)(j->data_off + done);
		ssize_t n = j->kind == LANDING_WRITE ?
			pread(l->area_fd, at, j->len - done, off) :
			pwrite(l->area_fd, at, j->len - done, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (done == j->len)
		return 0;
	return forced(j, l->map + j->data_off);
}

/*
 * Writes whose bytes follow each other in the area go in one preadv;
 * returns how many jobs from `first` it took (all landed), or 0: do them
 * one by one.
 */
static unsigned
move_run(struct landing *l, const struct landing_job *jobs, unsigned first,
		unsigned n)
{
	struct iovec iov[LANDING_SLOT_JOBS];
	unsigned k = 0;
	size_t total = 0;
	while (first + k < n && jobs[first + k].kind == LANDING_WRITE &&
			(k == 0 || jobs[first + k].data_off ==
			 jobs[first + k - 1].data_off +
			 jobs[first + k - 1].len)) {
		iov[k].iov_base = (void *)(uintptr_t)jobs[first + k].addr;
		iov[k].iov_len = jobs[first + k].len;
		total += jobs[first + k].len;
		k++;
	}
	if (k < 2)
		return 0;
	ssize_t got = preadv(l->area_fd, iov, (int)k,
			(off_t)jobs[first].data_off);
	return got == (ssize_t)total ? k : 0;
}

/*
 * A batch: each job checked, then moved; its `lost` flags say how. In a
 * stream, nothing moves after a lost job (stream_halt.h): those after it
 * are lost too.
 */
static void
run(struct landing *l, struct landing_slot *s)
{
	unsigned n = s->njobs;
	if (n > LANDING_SLOT_JOBS)
		n = LANDING_SLOT_JOBS;
	struct landing_job jobs[LANDING_SLOT_JOBS];
	uint8_t bad[LANDING_SLOT_JOBS];
	unsigned nbad = 0;
	/* what rpmad posted, read once */
	uint64_t stream = s->stream;
	memcpy(jobs, s->jobs, n * sizeof(jobs[0]));
	for (unsigned i = 0; i < n; i++) {
		bad[i] = !job_valid(l, &jobs[i]);
		nbad += bad[i];
	}
	bool halted = stream_halted(&l->halted, stream);
	for (unsigned i = 0; i < n; ) {
		unsigned took = nbad || halted ? 0 : move_run(l, jobs, i, n);
		if (took) {
			for (unsigned k = i; k < i + took; k++)
				s->jobs[k].lost = 0;
			i += took;
			continue;
		}
		s->jobs[i].lost =
				halted || bad[i] || move_one(l, &jobs[i]) != 0;
		if (s->jobs[i].lost && stream && !halted) {
			stream_halt(&l->halted, stream);
			halted = true;
		}
		i++;
	}
}

/* ------------------------------------------------------- the thread */

static uint64_t
mono_ns(void)
{
	struct timespec ts;
	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Waits until rpmad posts past `seen`, or for a while. */
static void
wait_posts(struct landing *l, uint32_t seen)
{
	uint64_t end = mono_ns() + SPIN_NS;
	while (atomic_load_explicit(&l->hdr->posted, memory_order_acquire) ==
			seen && mono_ns() < end && !atomic_load(&l->stop))
		(void) sched_yield();
	/* pairs with rpmad's check after posting (wake_client) */
	qp_wakeup_request(&l->hdr->client_sleeps);
	if (atomic_load_explicit(&l->hdr->posted, memory_order_acquire) ==
			seen && !atomic_load(&l->stop)) {
		struct timespec t = { .tv_sec = SLEEP_S };
		(void) syscall(SYS_futex, &l->hdr->posted, FUTEX_WAIT, seen,
				&t, NULL, 0);
	}
	atomic_store_explicit(&l->hdr->client_sleeps, 0, memory_order_relaxed);
}

static void *
thread_main(void *arg)
{
	struct landing *l = arg;
	uint32_t next = l->first;
	while (!atomic_load(&l->stop)) {
		uint32_t posted = atomic_load_explicit(&l->hdr->posted,
				memory_order_acquire);
		if (next == posted) {
			wait_posts(l, posted);
			continue;
		}
		/* never further behind than the slots go */
		if (posted - next > LANDING_SLOTS)
			next = posted - LANDING_SLOTS;
		struct landing_slot *s = &l->slots[next++ % LANDING_SLOTS];
		uint32_t expect = LANDING_POSTED;
		if (!atomic_compare_exchange_strong_explicit(&s->state,
				&expect, LANDING_TAKEN, memory_order_acq_rel,
				memory_order_acquire))
			continue;	/* taken back by rpmad, or not posted */
		run(l, s);
		atomic_store_explicit(&s->state, LANDING_DONE,
				memory_order_release);
		if (qp_wakeup_wanted(&l->hdr->need_wakeup)) {
			uint64_t one = 1;
			(void) !write(l->done_fd, &one, sizeof(one));
		}
	}
	(void) pthread_mutex_lock(&lk.lock);
	bool free_it;
	landing_unref_locked(l, &free_it);
	(void) pthread_mutex_unlock(&lk.lock);
	if (free_it)
		landing_destroy(l);
	return NULL;
}

/* ------------------------------------------------- opening, closing */

/* Whether the area rpmad passed has the layout this library knows. */
static bool
area_sane(const struct landing_header *h, size_t size)
{
	return h->magic == LANDING_MAGIC && h->version == LANDING_VERSION &&
		h->nslots == LANDING_SLOTS &&
		h->slot_jobs == LANDING_SLOT_JOBS &&
		h->slots_offset == landing_slots_offset() &&
		h->data_offset == landing_data_offset() &&
		h->data_size == LANDING_DATA_SIZE && h->area_size == size;
}

/* Asks rpmad for the session's area and maps it: 0 or an RPMA_E_* code. */
static int
area_open(struct landing *l)
{
	Rpmad__LandingOpen msg = RPMAD__LANDING_OPEN__INIT;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_LANDING_OPEN;
	req.landing_open = &msg;
	struct broker_reply reply;
	int ret = broker_call(l->generation, &req, NULL, 0,
			RPMAD__RESPONSE__BODY_LANDING, &reply);
	if (ret)
		return ret;
	l->first = reply.resp->landing->first_slot;
	l->area_fd = broker_take_fd(&reply, LANDING_FD_AREA);
	l->done_fd = broker_take_fd(&reply, LANDING_FD_DONE);
	broker_reply_fini(&reply);
	if (l->area_fd < 0 || l->done_fd < 0)
		return RPMA_E_PROVIDER;
	l->size = landing_area_size();
	void *map = mmap(NULL, l->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			l->area_fd, 0);
	if (map == MAP_FAILED)
		return RPMA_E_NOMEM;
	l->map = map;
	/* rpmad's alone: a child of fork() gets none of it */
	(void) madvise(map, l->size, MADV_DONTFORK);
	l->hdr = (struct landing_header *)map;
	if (!area_sane(l->hdr, l->size)) {
		RLOG_ERROR("rpmad's landing area has a layout this library "
				"does not know");
		return RPMA_E_PROVIDER;
	}
	l->slots = (struct landing_slot *)(l->map + landing_slots_offset());
	/* its pages are this process's: charged to its memory cgroup */
	uint8_t *data = l->map + landing_data_offset();
#ifdef MADV_POPULATE_WRITE
	if (madvise(data, LANDING_DATA_SIZE, MADV_POPULATE_WRITE) == 0)
		return 0;
#endif
	for (size_t o = 0; o < LANDING_DATA_SIZE; o += 4096)
		data[o] = 0;
	return 0;
}

/* Tells rpmad the thread is gone (its posts go to rpmad's own). */
static void
area_close(uint64_t generation)
{
	if (!broker_session_alive(generation))
		return;
	Rpmad__LandingClose msg = RPMAD__LANDING_CLOSE__INIT;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_LANDING_CLOSE;
	req.landing_close = &msg;
	(void) broker_call_simple(generation, &req);
}

static int
thread_start(struct landing *l)
{
	pthread_attr_t attr;
	(void) pthread_attr_init(&attr);
	(void) pthread_attr_setstacksize(&attr, STACK_SIZE);
	/* no signal of the application's is ever delivered to it */
	sigset_t all, old;
	(void) sigfillset(&all);
	(void) pthread_sigmask(SIG_SETMASK, &all, &old);
	int ret = pthread_create(&l->thread, &attr, thread_main, l);
	(void) pthread_sigmask(SIG_SETMASK, &old, NULL);
	(void) pthread_attr_destroy(&attr);
	if (ret == 0)
		(void) pthread_setname_np(l->thread, "rpma-landing");
	return ret;
}

/*
 * Stops the thread: joined if it ends soon, else left to end (and free the
 * landing) by itself once its copy returns.
 */
static void
thread_stop(struct landing *l)
{
	atomic_store(&l->stop, true);
	(void) syscall(SYS_futex, &l->hdr->posted, FUTEX_WAKE, 1, NULL, NULL,
			0);
	struct timespec until;
	(void) clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += STOP_WAIT_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (pthread_timedjoin_np(l->thread, NULL, &until) != 0) {
		RLOG_INFO("the landing thread is still in a copy: it ends "
				"by itself");
		(void) pthread_detach(l->thread);
	}
}

/* ------------------------------------------------------------ calls */

void
landing_atfork_child(void)
{
	/* the parent's landings are not the child's; a lock held in the
	 * parent at the fork would be held for good */
	(void) pthread_mutex_init(&lk.lock, NULL);
	(void) pthread_mutex_init(&lk.start, NULL);
	lk.all = NULL;
	lk.failed_generation = 0;
}

static struct landing *
find_locked(uint64_t generation)
{
	for (struct landing *l = lk.all; l; l = l->next)
		if (l->generation == generation && l->epoch == fork_epoch())
			return l;
	return NULL;
}

static int
add_range_locked(struct landing *l, const void *ptr, size_t size)
{
	if (l->ranges == NULL && (l->ranges = range_set_new()) == NULL)
		return -1;
	uint64_t start = (uint64_t)(uintptr_t)ptr;
	return range_set_add(l->ranges, start, start + size);
}

/* A new landing for the session, its area open and its thread running. */
static struct landing *
landing_start(uint64_t generation)
{
	struct landing *l = calloc(1, sizeof(*l));
	if (l == NULL)
		return NULL;
	l->generation = generation;
	l->epoch = fork_epoch();
	l->area_fd = l->done_fd = -1;
	int ret = area_open(l);
	if (ret == 0 && (ret = thread_start(l)) == 0) {
		l->refs = 2;	/* the library's, the thread's */
		return l;
	}
	RLOG_INFO("no landing thread (rpmad lands remote accesses itself): "
			"%s", ret > 0 ? strerror(ret) : rpma_err_2str(ret));
	bool opened = l->map != NULL;
	landing_destroy(l);
	if (opened)
		area_close(generation);
	return NULL;
}

/* RPMA_LANDING=0: never (read each time: a test's child may set it) */
static bool
landing_wanted(void)
{
	const char *env = secure_getenv("RPMA_LANDING");
	return !(env && strcmp(env, "0") == 0);
}

/* Whether the session's landing failed to start (under lk.start). */
static bool
start_failed(uint64_t generation)
{
	return lk.failed_generation == generation &&
			lk.failed_epoch == fork_epoch();
}

void
landing_add(uint64_t generation, const void *ptr, size_t size)
{
	ERRNO_KEEP();
	if (!landing_wanted())
		return;
	(void) pthread_mutex_lock(&lk.start);
	(void) pthread_mutex_lock(&lk.lock);
	struct landing *l = find_locked(generation);
	(void) pthread_mutex_unlock(&lk.lock);
	if (l == NULL && !start_failed(generation)) {
		/* outside lk.lock: the thread of another session uses it */
		l = landing_start(generation);
		(void) pthread_mutex_lock(&lk.lock);
		if (l) {
			l->next = lk.all;
			lk.all = l;
		}
		(void) pthread_mutex_unlock(&lk.lock);
		if (l == NULL) {
			lk.failed_generation = generation;
			lk.failed_epoch = fork_epoch();
		}
	}
	if (l) {
		/* before the caller has its key: no access can come sooner */
		(void) pthread_mutex_lock(&lk.lock);
		if (add_range_locked(l, ptr, size))
			RLOG_INFO("a registration the landing thread cannot "
					"land: out of memory");
		(void) pthread_mutex_unlock(&lk.lock);
	}
	(void) pthread_mutex_unlock(&lk.start);
}

void
landing_remove(uint64_t generation, const void *ptr, size_t size)
{
	ERRNO_KEEP();
	uint64_t start = (uint64_t)(uintptr_t)ptr;
	(void) pthread_mutex_lock(&lk.start);
	(void) pthread_mutex_lock(&lk.lock);
	struct landing *l = find_locked(generation);
	bool last = false;
	if (l) {
		if (l->ranges)
			(void) range_set_remove(l->ranges, start, start + size);
		last = l->ranges == NULL || range_set_empty(l->ranges);
		if (last) {
			struct landing **p = &lk.all;
			while (*p != l)
				p = &(*p)->next;
			*p = l->next;
		}
	}
	(void) pthread_mutex_unlock(&lk.lock);
	if (last) {
		thread_stop(l);
		area_close(generation);
		(void) pthread_mutex_lock(&lk.lock);
		bool free_it;
		landing_unref_locked(l, &free_it);
		(void) pthread_mutex_unlock(&lk.lock);
		if (free_it)
			landing_destroy(l);
	}
	(void) pthread_mutex_unlock(&lk.start);
}
