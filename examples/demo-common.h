/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * demo-common.h -- what the demo's server and client agree on
 */

#ifndef DEMO_COMMON_H
#define DEMO_COMMON_H

#include <stdint.h>
#include <stdio.h>

#define DEMO_MIN_FILE 4096
#define DEMO_MSG_OFFSET 0
#define DEMO_MSG_MAX 1024

/* the server's private data: 21-byte MR descriptor and 1-byte peer cfg */
struct demo_offer {
	uint8_t mr_desc[21];
	uint8_t pcfg_desc[1];
};

/* Ends the program with a message when an API call fails. */
#define DEMO_CHECK(call) \
	do { \
		if ((ret = (call)) != 0) { \
			(void) fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, \
					__LINE__, #call, rpma_err_2str(ret)); \
			return 1; \
		} \
	} while (0)

#endif /* DEMO_COMMON_H */
