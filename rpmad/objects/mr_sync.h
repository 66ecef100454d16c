/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr_sync.h -- the page-cache part of a persistent flush, written back by
 * the thread of offload.h while the loop serves everyone else
 */

#ifndef RPMAD_MR_SYNC_H
#define RPMAD_MR_SYNC_H

#include <stdint.h>

struct mr;
struct mr_sync;

/* on the loop, once the range was written back: 0 or msync's -errno */
typedef void mr_sync_done_fn(void *arg, int result);

/*
 * mr_sync_start -- msync the page-cache segments of mr's [addr, addr +
 * len) in the thread; done(arg, result) follows on the loop. The
 * registration is held meanwhile. NULL when it was done at once, here
 * (the thread cannot run): *result is its outcome then.
 */
struct mr_sync *mr_sync_start(struct mr *mr, uint64_t addr, uint64_t len,
		mr_sync_done_fn *done, void *arg, int *result);

/* mr_sync_forget -- its owner goes first: done is not called */
void mr_sync_forget(struct mr_sync *s);

#endif /* RPMAD_MR_SYNC_H */
