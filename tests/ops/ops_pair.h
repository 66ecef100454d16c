/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ops_pair.h -- the applications rpmactl and the metrics tests look at:
 * an ops_peer server registering a 64 KiB file and an ops_peer client
 * connected to it, on the test's rpmad
 */

#ifndef OPS_PAIR_H
#define OPS_PAIR_H

#include "th_run.h"

struct ops_pair {
	struct proc server, client;
	char port[16]; /* the server's, on 127.0.0.1 */
	char pmem[512]; /* its file */
};

/* ops_peer_bin -- tests/ops/ops_peer of the build */
const char *ops_peer_bin(void);

/*
 * ops_pair_start -- create the file `pmem` (64 KiB), start the server on
 * a free port, wait until it listens, start the client; each step a
 * Check assertion. Once in place each says "ready ROLE pid=N comm=C".
 */
void ops_pair_start(struct ops_pair *p, const char *pmem);

/* ops_pair_stop -- kill both, remove the file */
void ops_pair_stop(struct ops_pair *p);

#endif /* OPS_PAIR_H */
