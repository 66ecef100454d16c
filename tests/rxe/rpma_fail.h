/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma_fail.h -- how the standalone programs of the VM suite (the interop
 * server and client, pmem_stream) fail: a line on stderr after their
 * PROG, which they define first, and exit 1. They build against native
 * librpma as well, so nothing of the tests' harness.
 */

#ifndef RPMA_FAIL_H
#define RPMA_FAIL_H

#include <stdio.h>
#include <stdlib.h>

#include <librpma.h>

#define FAIL(...) \
	do { \
		(void) fprintf(stderr, "%s: ", PROG); \
		(void) fprintf(stderr, __VA_ARGS__); \
		(void) fprintf(stderr, "\n"); \
		exit(1); \
	} while (0)

/* a librpma call that must return 0 */
#define CHECK(call) \
	do { \
		int ret_ = (call); \
		if (ret_) \
			FAIL("%s: %s", #call, rpma_err_2str(ret_)); \
	} while (0)

#endif /* RPMA_FAIL_H */
