// SPDX-License-Identifier: BSD-3-Clause
/*
 * as_batch.c -- batches of reads and writes of a client's own memory: how
 * they are gathered, who does them (the client's landing area, else
 * rpmad's thread for the client), and the deadline after which the loop
 * stops waiting for them (as_worker.h)
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clients/addrspace.h"
#include "clients/as_worker_impl.h"
#include "clients/landing.h"
#include "core/daemon.h"
#include "log/log.h"
#include "loop/loop.h"

/* a batch's heap bytes come in chunks of at least this: pointers stay put */
#define CHUNK_MIN (64u << 10)
/* how often the loop looks for batches past their deadline */
#define CHECK_NS (100u * 1000000u)

static struct {
	struct loop *loop;
	struct loop_timer deadline;
	struct as_batch *pending;	/* submitted, not over */
} ab;

struct as_batch *
as_batch_new(struct addrspace *as)
{
	struct as_batch *b = calloc(1, sizeof(*b));
	if (b == NULL)
		return NULL;
	b->as = addrspace_get(as);
	b->all_landed = true;
	return b;
}

uint64_t
as_stream_new(void)
{
	static uint64_t last;
	return ++last;
}

void
as_batch_set_stream(struct as_batch *b, uint64_t stream)
{
	b->stream = stream;
}

/* A chunk of at least n bytes: of the landing area if it has room. */
static struct as_chunk *
chunk_new(struct as_batch *b, size_t n)
{
	struct as_chunk *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	size_t got;
	c->bytes = landing_bytes(b->as, n, &got);
	if (c->bytes) {
		c->landed = true;
		c->size = got;
		return c;
	}
	c->size = n > CHUNK_MIN ? n : CHUNK_MIN;
	c->bytes = malloc(c->size);
	if (c->bytes == NULL) {
		free(c);
		return NULL;
	}
	b->all_landed = false;
	return c;
}

/* n bytes of the batch's own that stay where they are */
static uint8_t *
take_bytes(struct as_batch *b, size_t n)
{
	struct as_chunk *c = b->chunks;
	if (c == NULL || c->size - c->used < n) {
		c = chunk_new(b, n);
		if (c == NULL)
			return NULL;
		c->next = b->chunks;
		b->chunks = c;
	}
	uint8_t *p = c->bytes + c->used;
	c->used += n;
	return p;
}

static struct as_job *
add_job(struct as_batch *b, enum as_job_kind kind, uint64_t addr, size_t len,
		uint64_t tag)
{
	if (b->njobs == b->cap) {
		unsigned cap = b->cap ? b->cap * 2 : 16;
		struct as_job *j = realloc(b->jobs, cap * sizeof(*j));
		if (j == NULL)
			return NULL;
		b->jobs = j;
		b->cap = cap;
	}
	uint8_t *data = take_bytes(b, len);
	if (data == NULL)
		return NULL;
	struct as_job *j = &b->jobs[b->njobs++];
	*j = (struct as_job){ .kind = kind, .addr = addr, .len = len,
			.data = data, .tag = tag };
	b->size += len;
	return j;
}

void *
as_batch_write_space(struct as_batch *b, uint64_t addr, size_t len,
		uint64_t tag)
{
	struct as_job *j = add_job(b, AS_JOB_WRITE, addr, len, tag);
	return j ? j->data : NULL;
}

int
as_batch_write(struct as_batch *b, uint64_t addr, const void *src,
		size_t len, uint64_t tag)
{
	void *p = as_batch_write_space(b, addr, len, tag);
	if (p == NULL)
		return -ENOMEM;
	memcpy(p, src, len);
	return 0;
}

void *
as_batch_read(struct as_batch *b, uint64_t addr, size_t len, uint64_t tag)
{
	struct as_job *j = add_job(b, AS_JOB_READ, addr, len, tag);
	return j ? j->data : NULL;
}

uint64_t
as_batch_first_tag(const struct as_batch *b)
{
	return b->njobs ? b->jobs[0].tag : 0;
}

bool
as_batch_first_lost(const struct as_batch *b, uint64_t *tag)
{
	for (unsigned i = 0; i < b->njobs; i++) {
		if (b->jobs[i].lost) {
			*tag = b->jobs[i].tag;
			return true;
		}
	}
	return false;
}

size_t
as_batch_size(const struct as_batch *b)
{
	return b->size;
}

uint64_t
as_batch_lost(const struct as_batch *b)
{
	return b->lost;
}

/* Frees it and its bytes, whoever held them. */
static void
as_batch_destroy(struct as_batch *b)
{
	while (b->chunks) {
		struct as_chunk *c = b->chunks;
		b->chunks = c->next;
		if (c->landed)
			landing_bytes_put(b->as, c->bytes, c->size);
		else
			free(c->bytes);
		free(c);
	}
	addrspace_put(b->as);
	free(b->jobs);
	free(b);
}

/* ------------------------------------------------ submitted, not over */

static void
pending_add(struct as_batch *b)
{
	b->pending_prev = NULL;
	b->pending_next = ab.pending;
	if (ab.pending)
		ab.pending->pending_prev = b;
	ab.pending = b;
	if (!ab.deadline.armed)
		loop_timer_arm(ab.loop, &ab.deadline, CHECK_NS);
}

static void
pending_del(struct as_batch *b)
{
	if (b->pending_prev)
		b->pending_prev->pending_next = b->pending_next;
	else
		ab.pending = b->pending_next;
	if (b->pending_next)
		b->pending_next->pending_prev = b->pending_prev;
	b->pending_prev = b->pending_next = NULL;
}

/*
 * On the loop: the batch is over; its done() gets `status` (AS_OK becomes
 * AS_LOST when it lost bytes)
 */
static void
as_batch_finish(struct as_batch *b, enum as_status status)
{
	pending_del(b);
	if (status == AS_OK && b->lost)
		status = AS_LOST;
	b->done(b, status, b->arg);
}

void
as_batch_submit(struct as_batch *b, as_done_fn *done, void *arg)
{
	b->done = done;
	b->arg = arg;
	b->submitted_ns = loop_now_ns();
	pending_add(b);
	/* the client's own thread when it can, rpmad's otherwise */
	if (b->all_landed && landing_submit(b) == 0) {
		b->exec = AS_EXEC_LANDING;
		return;
	}
	b->exec = AS_EXEC_WORKER;
	worker_submit(b);
}

bool
as_batch_can_follow(const struct as_batch *b, const struct as_batch *prev)
{
	return b->as == prev->as && b->all_landed &&
			prev->exec == AS_EXEC_LANDING && landing_would_take(b);
}

/* what a cancelled batch's end does */
static void
free_when_done(struct as_batch *b, enum as_status status, void *arg)
{
	(void) status;
	(void) arg;
	as_batch_free(b);
}

void
as_batch_withdraw(struct as_batch *b)
{
	if (b->exec == AS_EXEC_LANDING && landing_withdraw(b)) {
		pending_del(b);
		as_batch_destroy(b);
		return;
	}
	as_batch_cancel(b);
}

void
as_batch_cancel(struct as_batch *b)
{
	b->done = free_when_done;
	b->arg = NULL;
}

void
as_batch_free(struct as_batch *b)
{
	if (b == NULL)
		return;
	/* a thread still in it: freed once back */
	if ((b->exec == AS_EXEC_WORKER && worker_keeps(b)) ||
			(b->exec == AS_EXEC_LANDING && landing_keeps(b)))
		return;
	as_batch_destroy(b);
}

/*
 * Batches past their deadline end with AS_STALLED: the work waiting for
 * them fails; the thread in one keeps it (and it is freed once back), and
 * the client's later batches fail at once until then.
 */
static void
check_deadlines(struct loop_timer *t)
{
	(void) t;
	/* batches that came back end first (and may submit more) */
	worker_reap();
	landing_reap();
	uint64_t now = loop_now_ns();
	uint64_t limit = (uint64_t)rpmad.cfg.memory_timeout_ms * 1000000u;
	struct as_batch *b = ab.pending;
	while (b) {
		struct as_batch *next = b->pending_next;
		if (now - b->submitted_ns >= limit &&
				(b->exec == AS_EXEC_LANDING ?
				 landing_abandon(b) : worker_abandon(b))) {
			log_warning("a client's memory did not answer within "
					"%u ms: its work fails",
					rpmad.cfg.memory_timeout_ms);
			as_batch_finish(b, AS_STALLED);
		}
		b = next;
	}
	if (ab.pending)
		loop_timer_arm(ab.loop, &ab.deadline, CHECK_NS);
}

/* what those below that do batches call when one is back (upcalls) */
static const struct as_back back = {
	.finish = as_batch_finish,
	.destroy = as_batch_destroy,
};

void
as_workers_init(struct loop *loop)
{
	ab.loop = loop;
	ab.deadline.fn = check_deadlines;
	worker_init(loop, &back);
	landing_init(loop, &back);
}

void
as_workers_fini(void)
{
	loop_timer_cancel(ab.loop, &ab.deadline);
	landing_fini();
	worker_fini();
}
