/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * landing.h -- a client's landing area (common/landing_area.h): the batches of
 * reads and writes of its private memory (as_worker.h) that a thread of
 * the client's own does, by copies the kernel makes with the client's own
 * page tables, instead of rpmad's thread through /proc/PID/mem.
 *
 * The client asks for its area when it first registers memory rpmad
 * reaches through its address space (MrRegReply.landing), and gives it up
 * when it deregisters the last. Meanwhile as_batch.c puts the bytes of its
 * batches in the area and posts the batches there; one the client's thread
 * does not take within LANDING_TAKE_MS (a stopped process, one a debugger
 * holds, a thread that never came) is taken back and done by rpmad's
 * thread, as is everything while the area is full, closed, or the client's
 * thread has not taken anything lately. What the client's thread reports
 * is believed only about its own memory: a lying client loses its own
 * bytes.
 */

#ifndef RPMAD_LANDING_H
#define RPMAD_LANDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addrspace;
struct as_back;
struct as_batch;
struct loop;

/*
 * landing_open -- the client's area (made on first use): fds[] get the
 * descriptors to pass (common/landing_area.h, enum landing_fd; the caller
 * closes them once passed), *first the slot its thread starts at. 0, or a
 * negative errno.
 */
int landing_open(struct addrspace *as, int fds[2], uint32_t *first);

/*
 * landing_close -- the client's thread is gone (it asked): batches go to
 * rpmad's thread; the area stays mapped until the address space goes
 */
void landing_close(struct addrspace *as);

/*
 * landing_end -- the client's session ended: as landing_close, and the
 * batches its thread took are given up (their work fails at once)
 */
void landing_end(struct addrspace *as);

/*
 * Batches (as_worker_impl.h), handed to the area when it can take them:
 * landing_submit -- post it to the client's thread (0), or -EAGAIN: the
 *   area cannot take it now (rpmad's thread does it instead)
 * landing_would_take -- whether landing_submit would post it now
 * landing_withdraw -- takes it back if the client's thread has not taken
 *   it (true: it never runs, and is the caller's again)
 * landing_abandon, landing_keeps, landing_reap -- as the worker's
 * landing_bytes -- a run of at least n bytes of the area (*got: how many),
 *   or NULL (none open, or full: the heap's then)
 * landing_bytes_put -- its return, once the batch is destroyed
 * landing_init -- rpmad's start: a batch the client's thread did goes back
 *   through `back`
 *
 * The area is freed with the address space (it hangs on it: addrspace.h).
 */
int landing_submit(struct as_batch *b);
bool landing_would_take(const struct as_batch *b);
bool landing_withdraw(struct as_batch *b);
bool landing_abandon(struct as_batch *b);
bool landing_keeps(struct as_batch *b);
void landing_reap(void);
uint8_t *landing_bytes(struct addrspace *as, size_t n, size_t *got);
void landing_bytes_put(struct addrspace *as, uint8_t *p, size_t size);
void landing_init(struct loop *loop, const struct as_back *back);
void landing_fini(void);

#endif /* RPMAD_LANDING_H */
