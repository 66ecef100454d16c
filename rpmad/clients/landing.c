// SPDX-License-Identifier: BSD-3-Clause
/*
 * landing.c -- a client's landing area on rpmad's side: making it,
 * posting batches to the client's thread, hearing them done, taking back
 * the ones it does not take in time (landing.h, common/landing_area.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clients/addrspace.h"
#include "clients/as_worker_impl.h"
#include "clients/landing.h"
#include "landing_area.h"
#include "log/log.h"
#include "loop/loop.h"
#include "qp_ring.h"

/*
 * how long a posted batch waits for the client's thread before rpmad's
 * does it: longer than a loaded host keeps a runnable thread waiting
 */
#define TAKE_NS (50u * 1000000u)
/* how long the area is passed over after its thread let one wait so */
#define SNUB_NS (1000u * 1000000u)
/* how often the loop looks for batches not taken */
#define CHECK_NS (10u * 1000000u)

struct landing {
	struct as_hook hook; /* on the client's address space */
	struct addrspace *as;		/* whose (not a reference) */
	uint8_t *map;
	size_t size;
	struct landing_header *hdr;
	struct landing_slot *slots;
	uint8_t *data;
	int memfd;
	int done_fd;			/* the client writes, the loop reads */
	struct loop_watch watch;
	bool open;			/* the client's thread may take */
	bool sleeping;			/* need_wakeup is raised */
	uint64_t snubbed_until;		/* posts go to rpmad's thread */
	uint32_t posted;		/* rpmad's own count of posts */
	uint32_t oldest;		/* the oldest slot not yet free again */
	struct as_batch *batch[LANDING_SLOTS];	/* who is in each slot */
	/* taken back, for rpmad's thread once the older ones are done */
	bool revoked[LANDING_SLOTS];
	uint64_t posted_ns[LANDING_SLOTS];
	uint64_t chunk_used[LANDING_CHUNKS / 64];
	struct landing *prev, *next;	/* areas with slots in use */
};

/* the area whose hook this is */
static struct landing *
area_of_hook(struct as_hook *h)
{
	return (struct landing *) ((char *) h - offsetof(struct landing, hook));
}

static struct {
	struct loop *loop;
	const struct as_back *back; /* the batches' way back up */
	struct loop_poller poller;
	struct loop_timer take_check;
	struct landing *busy;		/* areas with slots in use */
} ld;

/* ------------------------------------------------------------- slots */

static struct landing_slot *
slot_of(struct landing *l, uint32_t index)
{
	return &l->slots[index % LANDING_SLOTS];
}

static void
busy_add(struct landing *l)
{
	if (l->prev || ld.busy == l)
		return;
	l->prev = NULL;
	l->next = ld.busy;
	if (ld.busy)
		ld.busy->prev = l;
	ld.busy = l;
	if (!ld.take_check.armed)
		loop_timer_arm(ld.loop, &ld.take_check, CHECK_NS);
}

static void
busy_del(struct landing *l)
{
	if (l->prev == NULL && ld.busy != l)
		return;
	if (l->prev)
		l->prev->next = l->next;
	else
		ld.busy = l->next;
	if (l->next)
		l->next->prev = l->prev;
	l->prev = l->next = NULL;
	/* the client need not wake a loop that no longer waits for it */
	if (l->sleeping) {
		atomic_store_explicit(&l->hdr->need_wakeup, 0,
				memory_order_relaxed);
		l->sleeping = false;
	}
}

/* Frees the oldest slots that are over: posts may use them again. */
static void
reclaim(struct landing *l)
{
	while (l->oldest != l->posted &&
			l->batch[l->oldest % LANDING_SLOTS] == NULL)
		l->oldest++;
	if (l->oldest == l->posted)
		busy_del(l);
}

/* A slot's batch leaves it (the slot is free again once reclaimed). */
static struct as_batch *
slot_clear(struct landing *l, uint32_t index)
{
	struct as_batch *b = l->batch[index % LANDING_SLOTS];
	l->batch[index % LANDING_SLOTS] = NULL;
	l->revoked[index % LANDING_SLOTS] = false;
	return b;
}

/*
 * Takes a posted batch back (true), unless the client's thread took it
 * first: the compare-and-swap decides, once.
 */
static bool
take_back(struct landing *l, uint32_t index)
{
	uint32_t expect = LANDING_POSTED;
	return atomic_compare_exchange_strong_explicit(
			&slot_of(l, index)->state, &expect, LANDING_REVOKED,
			memory_order_acq_rel, memory_order_acquire);
}

/* A batch taken back goes to rpmad's thread, its deadline unchanged. */
static void
to_worker(struct landing *l, uint32_t index)
{
	struct as_batch *b = slot_clear(l, index);
	b->exec = AS_EXEC_WORKER;
	worker_submit(b);
}

/*
 * Takes back every batch still posted: rpmad's thread does them once the
 * client's has done the ones it took (reap_area, from the loop's
 * poller). Newest first, up to one it took: it takes in order, so what is
 * taken back is all after what it has, and a channel's batches land in
 * the order they were posted.
 */
static void
revoke_all(struct landing *l)
{
	for (uint32_t i = l->posted; i != l->oldest; i--) {
		uint32_t index = i - 1;
		if (l->batch[index % LANDING_SLOTS] == NULL ||
				l->revoked[index % LANDING_SLOTS])
			continue;
		if (!take_back(l, index))
			break;
		l->revoked[index % LANDING_SLOTS] = true;
	}
}

/*
 * A batch the client says it did: its jobs' `lost` flags are the client's
 * word about its own memory, which is all they can harm.
 */
static void
done(struct landing *l, uint32_t index)
{
	struct landing_slot *s = slot_of(l, index);
	struct as_batch *b = slot_clear(l, index);
	if (b->abandoned) {
		/* over already (AS_STALLED): only its bytes were kept */
		if (b->loop_freed)
			ld.back->destroy(b);
		else
			b->abandoned = false;	/* as_batch_free destroys it */
		return;
	}
	uint64_t lost = 0;
	for (unsigned i = 0; i < b->njobs; i++) {
		b->jobs[i].lost = s->jobs[i].lost != 0;
		if (b->jobs[i].lost)
			lost += b->jobs[i].len;
	}
	b->lost = lost;
	ld.back->finish(b, AS_OK);
}

/*
 * Batches done in one area, and those taken back that may go to rpmad's
 * thread (none before them is still the client's); how many. A batch's
 * end may let go of the last of its address space, and the area with it:
 * held until the end.
 */
static int
reap_area(struct landing *l)
{
	struct addrspace *as = addrspace_get(l->as);
	int n = 0;
	bool older_out = false; /* an older batch is the client's still */
	for (uint32_t i = l->oldest; i != l->posted; i++) {
		if (l->batch[i % LANDING_SLOTS] == NULL)
			continue;
		if (l->revoked[i % LANDING_SLOTS]) {
			if (older_out)
				continue;
			to_worker(l, i);
			n++;
			continue;
		}
		uint32_t st = atomic_load_explicit(&slot_of(l, i)->state,
				memory_order_acquire);
		if (st != LANDING_DONE) {
			older_out = true;
			continue;
		}
		done(l, i);
		n++;
	}
	reclaim(l);
	addrspace_put(as);
	return n;
}

void
landing_reap(void)
{
	struct landing *l = ld.busy;
	while (l) {
		struct landing *next = l->next;
		(void) reap_area(l);
		l = next;
	}
}

/* ------------------------------------------------- the loop's poller */

static int
poll_all(void *arg)
{
	(void) arg;
	int n = 0;
	struct landing *l = ld.busy;
	while (l) {
		struct landing *next = l->next;
		n += reap_area(l);
		l = next;
	}
	return n;
}

static int
prepare_sleep_all(void *arg)
{
	(void) arg;
	for (struct landing *l = ld.busy; l; l = l->next) {
		/* pairs with the client's check after marking a slot done */
		qp_wakeup_request(&l->hdr->need_wakeup);
		l->sleeping = true;
	}
	return poll_all(NULL);
}

static void
wake_all(void *arg)
{
	(void) arg;
	for (struct landing *l = ld.busy; l; l = l->next) {
		if (!l->sleeping)
			continue;
		atomic_store_explicit(&l->hdr->need_wakeup, 0,
				memory_order_relaxed);
		l->sleeping = false;
	}
}

static void
done_fd_ready(struct loop_watch *w, uint32_t events)
{
	(void) events;
	uint64_t n;
	(void) !read(w->fd, &n, sizeof(n));
	landing_reap();
}

/*
 * Batches not taken in time go to rpmad's thread, and so do the area's
 * next ones for a while: its thread is stopped, or starved, or gone.
 */
static void
check_takes(struct loop_timer *t)
{
	(void) t;
	uint64_t now = loop_now_ns();
	struct landing *l = ld.busy;
	while (l) {
		struct landing *next = l->next;
		bool late = false;
		for (uint32_t i = l->oldest; i != l->posted && !late; i++)
			late = l->batch[i % LANDING_SLOTS] &&
				atomic_load_explicit(&slot_of(l, i)->state,
					memory_order_acquire) ==
				LANDING_POSTED &&
				now - l->posted_ns[i % LANDING_SLOTS] >= TAKE_NS;
		if (late) {
			log_info("a client's thread took no batch of its "
					"landing area in %u ms: rpmad's does "
					"them for a while",
					TAKE_NS / 1000000u);
			l->snubbed_until = now + SNUB_NS;
			revoke_all(l);
		}
		l = next;
	}
	if (ld.busy)
		loop_timer_arm(ld.loop, &ld.take_check, CHECK_NS);
}

/* --------------------------------------------------------- batches */

static void area_release(struct as_hook *h);

static const struct as_hook_ops area_hook_ops = {
	.release = area_release,
};

static struct landing *
area_of(struct addrspace *as)
{
	struct as_hook *h = as ? addrspace_hook_find(as, &area_hook_ops) : NULL;
	return h ? area_of_hook(h) : NULL;
}

/* The client's thread sleeps on `posted`: wake it. */
static void
wake_client(struct landing *l)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&l->hdr->client_sleeps,
			memory_order_relaxed) == 0)
		return;
	(void) syscall(SYS_futex, &l->hdr->posted, FUTEX_WAKE, 1, NULL,
			NULL, 0);
}

/* Whether the area takes b at `now`. */
static bool
takes(const struct landing *l, const struct as_batch *b, uint64_t now)
{
	return l && l->open && now >= l->snubbed_until &&
			b->njobs <= LANDING_SLOT_JOBS &&
			l->posted - l->oldest < LANDING_SLOTS;
}

bool
landing_would_take(const struct as_batch *b)
{
	return takes(area_of(b->as), b, loop_now_ns());
}

int
landing_submit(struct as_batch *b)
{
	struct landing *l = area_of(b->as);
	uint64_t now = loop_now_ns();
	if (!takes(l, b, now))
		return -EAGAIN;
	uint32_t index = l->posted;
	struct landing_slot *s = slot_of(l, index);
	for (unsigned i = 0; i < b->njobs; i++) {
		const struct as_job *j = &b->jobs[i];
		s->jobs[i] = (struct landing_job){
			.kind = j->kind == AS_JOB_WRITE ? LANDING_WRITE :
				LANDING_READ,
			.len = (uint32_t)j->len,
			.addr = j->addr,
			.data_off = (uint64_t)(j->data - l->map),
		};
	}
	s->njobs = b->njobs;
	s->stream = b->stream;
	atomic_store_explicit(&s->state, LANDING_POSTED, memory_order_release);
	l->batch[index % LANDING_SLOTS] = b;
	l->posted_ns[index % LANDING_SLOTS] = now;
	b->slot = index;
	l->posted = index + 1;
	atomic_store_explicit(&l->hdr->posted, l->posted,
			memory_order_release);
	busy_add(l);
	wake_client(l);
	return 0;
}

bool
landing_keeps(struct as_batch *b)
{
	struct landing *l = area_of(b->as);
	if (l == NULL || l->batch[b->slot % LANDING_SLOTS] != b)
		return false;
	b->loop_freed = true;
	return true;
}

bool
landing_withdraw(struct as_batch *b)
{
	struct landing *l = area_of(b->as);
	if (l == NULL || l->batch[b->slot % LANDING_SLOTS] != b)
		return false;
	if (!l->revoked[b->slot % LANDING_SLOTS] && !take_back(l, b->slot))
		return false;
	(void) slot_clear(l, b->slot);
	reclaim(l);
	return true;
}

bool
landing_abandon(struct as_batch *b)
{
	if (landing_withdraw(b))
		return true;
	struct landing *l = area_of(b->as);
	if (l == NULL || l->batch[b->slot % LANDING_SLOTS] != b)
		return false;
	/* taken, and not done: its bytes stay until the thread is back */
	b->abandoned = true;
	l->snubbed_until = loop_now_ns() + SNUB_NS;
	return true;
}

/* ------------------------------------------------------------ bytes */

static bool
chunk_used(const struct landing *l, unsigned i)
{
	return l->chunk_used[i / 64] & (UINT64_C(1) << (i % 64));
}

static void
chunk_mark(struct landing *l, unsigned i, bool used)
{
	if (used)
		l->chunk_used[i / 64] |= UINT64_C(1) << (i % 64);
	else
		l->chunk_used[i / 64] &= ~(UINT64_C(1) << (i % 64));
}

uint8_t *
landing_bytes(struct addrspace *as, size_t n, size_t *got)
{
	struct landing *l = area_of(as);
	if (l == NULL || !l->open || n > LANDING_DATA_SIZE)
		return NULL;
	unsigned want = n ? (unsigned)((n + LANDING_CHUNK - 1) / LANDING_CHUNK)
		: 1;
	/* the first run that fits */
	for (unsigned i = 0; i + want <= LANDING_CHUNKS; i++) {
		unsigned k = 0;
		while (k < want && !chunk_used(l, i + k))
			k++;
		if (k < want) {
			i += k;
			continue;
		}
		for (k = 0; k < want; k++)
			chunk_mark(l, i + k, true);
		*got = (size_t)want * LANDING_CHUNK;
		return l->data + (size_t)i * LANDING_CHUNK;
	}
	return NULL;
}

void
landing_bytes_put(struct addrspace *as, uint8_t *p, size_t size)
{
	struct landing *l = area_of(as);
	if (l == NULL)
		return;
	unsigned first = (unsigned)((size_t)(p - l->data) / LANDING_CHUNK);
	for (unsigned k = 0; k < size / LANDING_CHUNK; k++)
		chunk_mark(l, first + k, false);
}

/* ------------------------------------------------------------ areas */

static int
area_new(struct addrspace *as, struct landing **out)
{
	struct landing *l = calloc(1, sizeof(*l));
	if (l == NULL)
		return -ENOMEM;
	l->hook.ops = &area_hook_ops;
	l->as = as;
	l->memfd = l->done_fd = -1;
	l->size = landing_area_size();
	int ret;
	l->memfd = memfd_create("rpmad-landing",
			MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (l->memfd < 0 || ftruncate(l->memfd, (off_t)l->size) ||
			fcntl(l->memfd, F_ADD_SEALS, F_SEAL_SHRINK |
				F_SEAL_GROW | F_SEAL_SEAL)) {
		ret = -errno;
		goto err;
	}
	l->map = mmap(NULL, l->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			l->memfd, 0);
	if (l->map == MAP_FAILED) {
		l->map = NULL;
		ret = -errno;
		goto err;
	}
	l->done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (l->done_fd < 0) {
		ret = -errno;
		goto err;
	}
	l->hdr = (struct landing_header *)l->map;
	l->slots = (struct landing_slot *)(l->map + landing_slots_offset());
	l->data = l->map + landing_data_offset();
	*l->hdr = (struct landing_header){
		.magic = LANDING_MAGIC,
		.version = LANDING_VERSION,
		.nslots = LANDING_SLOTS,
		.slot_jobs = LANDING_SLOT_JOBS,
		.slots_offset = landing_slots_offset(),
		.data_offset = landing_data_offset(),
		.data_size = LANDING_DATA_SIZE,
		.area_size = l->size,
	};
	l->watch.fd = l->done_fd;
	l->watch.fn = done_fd_ready;
	ret = loop_add(ld.loop, &l->watch, EPOLLIN);
	if (ret)
		goto err;
	*out = l;
	return 0;
err:
	if (l->done_fd >= 0)
		(void) close(l->done_fd);
	if (l->map)
		(void) munmap(l->map, l->size);
	if (l->memfd >= 0)
		(void) close(l->memfd);
	free(l);
	return ret;
}

int
landing_open(struct addrspace *as, int fds[2], uint32_t *first)
{
	struct landing *l = area_of(as);
	if (l == NULL) {
		int ret = area_new(as, &l);
		if (ret)
			return ret;
		addrspace_hook_add(as, &l->hook);
	}
	/* one thread at a time: an earlier one's batches are done first */
	if (l->open || l->oldest != l->posted)
		return -EBUSY;
	fds[LANDING_FD_AREA] = fcntl(l->memfd, F_DUPFD_CLOEXEC, 0);
	fds[LANDING_FD_DONE] = fcntl(l->done_fd, F_DUPFD_CLOEXEC, 0);
	if (fds[0] < 0 || fds[1] < 0) {
		int ret = -errno;
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				(void) close(fds[i]);
		return ret;
	}
	atomic_store_explicit(&l->hdr->client_sleeps, 0, memory_order_relaxed);
	l->open = true;
	l->snubbed_until = 0;
	*first = l->posted;
	return 0;
}

void
landing_close(struct addrspace *as)
{
	struct landing *l = area_of(as);
	if (l == NULL)
		return;
	l->open = false;
	revoke_all(l);
}

void
landing_end(struct addrspace *as)
{
	struct landing *l = area_of(as);
	if (l == NULL)
		return;
	landing_close(as);
	/* what its thread took fails now; the bytes are never used again */
	for (uint32_t i = l->oldest; i != l->posted; i++) {
		struct as_batch *b = l->batch[i % LANDING_SLOTS];
		if (b == NULL)
			continue;
		(void) slot_clear(l, i);
		if (b->abandoned) {
			if (b->loop_freed)
				ld.back->destroy(b);
			else
				b->abandoned = false;
		} else {
			ld.back->finish(b, AS_STALLED);
		}
	}
	reclaim(l);
}

/* The address space goes (nothing of it is in flight): so does its area. */
static void
area_release(struct as_hook *h)
{
	struct landing *l = area_of_hook(h);
	busy_del(l);
	loop_del(ld.loop, &l->watch);
	(void) close(l->done_fd);
	(void) munmap(l->map, l->size);
	(void) close(l->memfd);
	free(l);
}

void
landing_init(struct loop *loop, const struct as_back *back)
{
	ld.loop = loop;
	ld.back = back;
	ld.take_check.fn = check_takes;
	ld.poller.poll = poll_all;
	ld.poller.prepare_sleep = prepare_sleep_all;
	ld.poller.wake = wake_all;
	loop_poller_add(loop, &ld.poller);
}

void
landing_fini(void)
{
	loop_timer_cancel(ld.loop, &ld.take_check);
}
