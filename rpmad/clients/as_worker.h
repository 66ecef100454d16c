/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * as_worker.h -- a client's own memory, read and written away from rpmad's
 * loop
 *
 * Reaching a client's private memory through its address space
 * (addrspace.h) may wait on whatever backs those pages: a client that maps
 * a file of its own FUSE server over registered memory can hold a page for
 * as long as it likes, and a thread that reads or writes it waits as long.
 * So rpmad's loop never does: it gathers what a connection's frames need of
 * the client's memory into a batch, hands the batch to a thread of that
 * client's own, and goes on serving everyone else; the batch comes back to
 * the loop when it is done (its done() runs there). A client whose memory
 * stalls stalls only its own batches, and those end with AS_STALLED after
 * memory_timeout_ms (rpmad.conf(5)): the work waiting for them fails, and
 * the client's later batches fail at once until its thread is back.
 *
 * A batch is a list of reads and writes, done in order. Writes to
 * consecutive addresses whose bytes are consecutive in the batch become one
 * system call: the bytes of a stream of sequential writes reach the client
 * in a few large copies rather than one per frame.
 *
 * The thread starts with the client's first batch and ends after a while
 * without any, or when the client's address space goes; one stuck in a
 * system call ends when the call returns, freeing what it holds itself.
 */

#ifndef RPMAD_AS_WORKER_H
#define RPMAD_AS_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addrspace;
struct as_batch;
struct loop;

enum as_status {
	AS_OK,
	AS_LOST,	/* some bytes could not be reached (as_batch_lost) */
	AS_STALLED,	/* not done within memory_timeout_ms, or the
			 * client's thread is still stuck on an earlier one */
	AS_NOMEM,	/* rpmad could not hold the batch */
};

typedef void as_done_fn(struct as_batch *b, enum as_status status,
		void *arg);

/*
 * as_batch_new -- an empty batch for the client's address space (a
 * reference is taken); NULL when out of memory
 */
struct as_batch *as_batch_new(struct addrspace *as);

/*
 * as_stream_new -- a stream never named before (never 0);
 * as_batch_set_stream -- b is one of a stream: once a read or write of
 * the stream loses bytes, nothing after it in the stream moves (its reads
 * and writes are lost too), as a NIC executes nothing after an operation
 * it refused (common/stream_halt.h). Without one, a batch's reads and
 * writes stand alone.
 */
uint64_t as_stream_new(void);
void as_batch_set_stream(struct as_batch *b, uint64_t stream);

/*
 * Each read or write carries a `tag` of the caller's (say, the frame it is
 * part of): as_batch_first_lost tells which one lost bytes first.
 *
 * as_batch_write -- len bytes from src into the client's addr, after
 * everything added before (copied into the batch now). 0, or -ENOMEM.
 * as_batch_write_space -- the same, the bytes to be put by the caller
 * before it submits the batch where this returns (NULL: out of memory);
 * they stay where they are
 */
int as_batch_write(struct as_batch *b, uint64_t addr, const void *src,
		size_t len, uint64_t tag);
void *as_batch_write_space(struct as_batch *b, uint64_t addr, size_t len,
		uint64_t tag);

/*
 * as_batch_read -- len bytes of the client's addr, after everything added
 * before: where they will be once the batch is done (valid until it is
 * freed), or NULL when out of memory
 */
void *as_batch_read(struct as_batch *b, uint64_t addr, size_t len,
		uint64_t tag);

/* as_batch_size -- how many bytes the batch moves (0: empty) */
size_t as_batch_size(const struct as_batch *b);

/*
 * as_batch_lost -- after it is done: the bytes it could not reach;
 * as_batch_first_lost -- and the tag of the first read or write that lost
 * any (false: none did)
 */
uint64_t as_batch_lost(const struct as_batch *b);
/* as_batch_first_tag -- the tag of its first read or write (0: none) */
uint64_t as_batch_first_tag(const struct as_batch *b);
bool as_batch_first_lost(const struct as_batch *b, uint64_t *tag);

/*
 * as_batch_submit -- hand it to the client's thread; done() runs on the
 * loop once it is over (never from within this call). The batch is the
 * thread's until then, the caller's again in done().
 */
void as_batch_submit(struct as_batch *b, as_done_fn *done, void *arg);

/*
 * as_batch_can_follow -- whether b, submitted now, would be done after
 * prev (submitted before and not back yet) and never beside it: both go
 * to the client's landing area, which does its batches in order. Only
 * such a batch may be submitted while prev is out.
 */
bool as_batch_can_follow(const struct as_batch *b, const struct as_batch *prev);

/*
 * as_batch_cancel -- whoever waited for a submitted batch goes away: it is
 * freed when it is over, and no done() of the caller's runs
 */
void as_batch_cancel(struct as_batch *b);

/*
 * as_batch_withdraw -- the same, and what of it was not started never
 * happens: a batch still waiting in the client's landing area is taken
 * back and freed now, one already started runs to its end
 */
void as_batch_withdraw(struct as_batch *b);

/*
 * as_batch_free -- in done(), or a batch never submitted. A batch that
 * ended AS_STALLED is freed by its thread when it comes back.
 */
void as_batch_free(struct as_batch *b);

/* as_workers_init / as_workers_fini -- rpmad's start and end */
void as_workers_init(struct loop *loop);
void as_workers_fini(void);

#endif /* RPMAD_AS_WORKER_H */
