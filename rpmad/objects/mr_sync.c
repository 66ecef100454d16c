// SPDX-License-Identifier: BSD-3-Clause
/*
 * mr_sync.c -- msync of a registration's page-cache range in the thread
 * of offload.h (mr_sync_start(), transport/transport.h)
 *
 * An msync of a quarter gigabyte takes rpmad half a second and more (it
 * waits for the disk), and cut into slices it is several times slower in
 * all and still waits tens of milliseconds at a time for the journal: the
 * loop must not do it at all. The thread only reads the registration's
 * segments, which do not change while it is held.
 */

#include <stdlib.h>
#include <string.h>

#include "core/offload.h"
#include "log/log.h"
#include "loop/fairq.h"
#include "objects/mr.h"
#include "objects/mr_io.h"
#include "transport/transport.h"

struct mr_sync {
	struct offload_job job;		/* first: the job is the sync */
	struct mr *mr;
	uint64_t addr, len;
	mr_sync_done_fn *done;		/* NULL once forgotten */
	void *arg;
};

static int
sync_work(struct offload_job *j)
{
	struct mr_sync *s = (struct mr_sync *)j;
	return mr_persist_msync(s->mr, s->addr, s->len);
}

static void
note_failure(uint64_t len, int result)
{
	if (result)
		log_info("msync of %llu bytes: %s", (unsigned long long)len,
				strerror(-result));
}

static void
sync_done(struct offload_job *j, int result)
{
	struct mr_sync *s = (struct mr_sync *)j;
	note_failure(s->len, result);
	fairq_release();
	mr_put(s->mr);
	if (s->done)
		s->done(s->arg, result);
	free(s);
}

struct mr_sync *
mr_sync_start(struct mr *mr, uint64_t addr, uint64_t len,
		mr_sync_done_fn *done, void *arg, int *result)
{
	mr_io_note_persist(mr, addr, len);
	struct mr_sync *s = malloc(sizeof(*s));
	if (s != NULL) {
		*s = (struct mr_sync){
			.job = { .run = sync_work, .done = sync_done },
			.mr = mr,
			.addr = addr,
			.len = len,
			.done = done,
			.arg = arg,
		};
		mr_get(mr);
		if (offload_submit(&s->job) == 0) {
			/* its CPU is the loop's and the clients' too */
			fairq_hold();
			return s;
		}
		mr_put(mr);
		free(s);
	}
	/* no thread (or no memory for the job): here, as before there was one */
	*result = mr_persist_msync(mr, addr, len);
	note_failure(len, *result);
	return NULL;
}

void
mr_sync_forget(struct mr_sync *s)
{
	if (s)
		s->done = NULL;
}
