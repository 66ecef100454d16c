/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * as_worker_impl.h -- what a batch of as_worker.h is inside, for the one
 * that gathers batches and those that do them; and rpmad's thread for a
 * client (as_worker.c), the first of those. Not for anyone else.
 *
 * The ones that do batches lie below the one that gathers them: a batch
 * they are done with goes back up through the calls it gave them at start
 * (struct as_back), as a completion does.
 */

#ifndef RPMAD_AS_WORKER_IMPL_H
#define RPMAD_AS_WORKER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clients/as_worker.h"

struct loop;

enum as_job_kind { AS_JOB_WRITE, AS_JOB_READ };

struct as_job {
	enum as_job_kind kind;
	bool lost;		/* some of its bytes could not be reached */
	uint64_t addr;
	size_t len;
	uint8_t *data;
	uint64_t tag;		/* the caller's name of what it is part of */
};

/* Bytes of a batch: of the heap, or a run of its client's landing area. */
struct as_chunk {
	struct as_chunk *next;
	size_t used, size;
	uint8_t *bytes;
	bool landed; /* in the client's landing area */
};

/* Who does a submitted batch. */
enum as_exec { AS_EXEC_NONE, AS_EXEC_WORKER, AS_EXEC_LANDING };

struct as_batch {
	struct addrspace *as;
	struct as_job *jobs;
	unsigned njobs, cap;
	struct as_chunk *chunks;	/* the newest first */
	bool all_landed;	/* every byte in the landing area */
	size_t size;
	uint64_t stream; /* as_batch_set_stream; 0: none */
	uint64_t lost;
	enum as_status status;	/* set when it never reached a thread */
	as_done_fn *done;
	void *arg;
	uint64_t submitted_ns;
	enum as_exec exec;
	unsigned slot;		/* AS_EXEC_LANDING: its slot */
	/* AS_EXEC_WORKER: under the worker's lock */
	bool abandoned;		/* the loop gave up on it (AS_STALLED) */
	bool loop_freed;	/* ... and freed it: its executor frees it */
	struct as_batch *next;		/* in the thread's queue */
	struct as_batch *pending_prev, *pending_next;	/* the loop's */
};

/*
 * How a batch goes back to the one that gathered it, on the loop; given
 * to each that does batches once, at start:
 * finish -- the batch is over; its done() gets `status` (AS_OK becomes
 *   AS_LOST when it lost bytes)
 * destroy -- frees it and its bytes, whoever held them (a batch the loop
 *   gave up on and freed, back from the thread that was in it)
 */
struct as_back {
	void (*finish)(struct as_batch *b, enum as_status status);
	void (*destroy)(struct as_batch *b);
};

/*
 * rpmad's thread (as_worker.c):
 * worker_submit -- hand it over; its end comes through back->finish, on
 *   the loop (never from within this call)
 * worker_abandon -- it is past its deadline: whether it ends now, as
 *   AS_STALLED (false: it is already back, and ends on the next reap)
 * worker_keeps -- the loop frees it: true when the thread is in it, which
 *   then frees it once back (back->destroy, on the loop)
 * worker_reap -- end the batches the threads gave back
 */
void worker_submit(struct as_batch *b);
bool worker_abandon(struct as_batch *b);
bool worker_keeps(struct as_batch *b);
void worker_reap(void);
void worker_init(struct loop *loop, const struct as_back *back);
void worker_fini(void);

#endif /* RPMAD_AS_WORKER_IMPL_H */
