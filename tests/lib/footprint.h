/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * footprint.h -- what a daemon holds, for leak checks in the parent of an
 * integration test: its resources as its admin protocol counts them, its
 * open descriptors (/proc/PID/fd) and its mappings (/proc/PID/maps; only
 * the shared ones in AddressSanitizer builds, whose allocator maps as it
 * goes). Failures are Check assertions.
 */

#ifndef FOOTPRINT_H
#define FOOTPRINT_H

#include <stddef.h>
#include <sys/types.h>

#include "itest.h"

struct footprint {
	struct it_counts counts;
	int fds, shared_maps, maps;
};

/* footprint_now -- the daemon's footprint now */
void footprint_now(struct it_admin *adm, pid_t daemon, struct footprint *f);

/*
 * footprint_expect -- wait until the daemon is back to `want` (it
 * releases what a client held as soon as it notices the client's end;
 * `bound_ms` only keeps a broken test from waiting forever). Returns the
 * milliseconds it took.
 */
long footprint_expect(struct it_admin *adm, pid_t daemon,
		const struct footprint *want, int bound_ms, const char *when);

/*
 * footprint_expect_no_conns -- wait until the daemon holds no connection
 * and no connection request; returns the milliseconds it took
 */
long footprint_expect_no_conns(struct it_admin *adm, int bound_ms,
		const char *when);

#endif /* FOOTPRINT_H */
