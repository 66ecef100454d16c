/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hostile.h -- what the hostile-input tests share: reaching a
 * connection's shared queue-pair region behind the library's back, and an
 * innocent client/server pair that works on while others misbehave.
 *
 * The tests build on the integration helpers (itest.h): real rpmads,
 * role processes, messages, bounded waits.
 */

#ifndef HOSTILE_H
#define HOSTILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "itest.h"
#include "qp_region.h"

/* ------------------------------------- a queue pair behind the library */

struct hu_qp {
	void *region;
	size_t size;
	struct qp_region_header *hdr;
	struct qp_layout layout;
};

/*
 * hu_qp_find -- this process's mapping of the shared region of the queue
 * pair `qp_num` (found in /proc/self/maps as the memfd "rpmad-qp" whose
 * header names that queue pair; 0: the only one there is), with the
 * layout of the given depths. Fails the role when there is none.
 */
void hu_qp_find(uint32_t qp_num, const struct qp_sizes *sizes,
		struct hu_qp *q);

/*
 * hu_qp_post_raw -- write an entry at the SQ tail the region shows and
 * publish it, as the library would, then ring every doorbell
 */
void hu_qp_post_raw(struct hu_qp *q, const struct qp_sqe *sqe);

/* hu_qp_post_recv_raw -- likewise for the receive queue */
void hu_qp_post_recv_raw(struct hu_qp *q, const struct qp_rqe *rqe);

/*
 * hu_ring_doorbells -- write every eventfd of this process: the doorbells
 * of its queue pairs (the library has no other eventfds)
 */
void hu_ring_doorbells(void);

/* ------------------------------------------------- the innocent pair */

/*
 * A client that writes a fresh pattern to its server's registration and
 * reads it back, round after round, while the test does nasty things
 * elsewhere on the same rpmads. Its server keeps guard pages around the
 * registration; the client keeps a registered guard buffer it never uses.
 *
 * Messages: the server tells the client HU_TAG_LISTENING and the
 * descriptor; the client tells the parent HU_TAG_INNOCENT_UP once it
 * works, runs until the parent says HU_TAG_INNOCENT_STOP, then runs
 * HU_FINAL_ROUNDS more (which must take less than HU_FINAL_MS: a liveness
 * bound, not a performance one) and checks everything. When `steal_to`
 * is not IT_PARENT the client first gives that role the descriptors of
 * its two local registrations (HU_TAG_STOLEN, two struct it_desc): keys
 * of another client, for a hostile one to try.
 */
struct hu_pair {
	enum it_role server, client;
	enum it_role steal_to;
	char port[16];
};

#define HU_FINAL_ROUNDS 100
#define HU_FINAL_MS 10000

enum {
	HU_TAG_LISTENING = 200,
	HU_TAG_INNOCENT_UP,
	HU_TAG_INNOCENT_STOP,
	HU_TAG_INNOCENT_DONE,	/* client -> server: its last seed */
	HU_TAG_STOLEN,
};

int hu_innocent_server(const struct it_env *env, void *arg);
int hu_innocent_client(const struct it_env *env, void *arg);

/* descriptor fields (spec/FACTS.md: addr, length LE u64, key LE u32) */
uint64_t hu_desc_addr(const uint8_t *desc);
uint64_t hu_desc_len(const uint8_t *desc);
uint32_t hu_desc_key(const uint8_t *desc);

#endif /* HOSTILE_H */
