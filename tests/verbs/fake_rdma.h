/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_rdma.h -- test doubles of libibverbs and librdmacm: what a test
 * can make the fake hardware do and what it can ask it
 *
 * fake_verbs.c and fake_rdmacm.c define the libibverbs and librdmacm
 * functions rpmad's verbs transport calls; a test binary links them
 * instead of the real libraries. They simulate RDMA devices in one
 * process: a CM that pairs connecting ids with listeners by address, RC
 * queue pairs that move data between registered memory (checking keys,
 * bounds and access as a NIC does and failing work with the statuses a
 * NIC gives), CQs with completion channels, and event channels with real
 * descriptors (pipes) that rpmad's loop can watch.
 *
 * Work executes when it is posted (or, while execution is held, when it
 * is released); a send waits (RNR) until the target posts a receive.
 */

#ifndef FAKE_RDMA_H
#define FAKE_RDMA_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* fake_rdma_present -- false: no kernel RDMA support (the default: true) */
void fake_rdma_present(bool present);

/* fake_add_device -- a device serving an IPv4 address; 0 or -1 */
int fake_add_device(const char *name, const char *ipv4, bool odp);

/* fake_remove_device -- unplug: DEVICE_REMOVAL to its CM ids, QPs fail */
void fake_remove_device(const char *name);

/* fake_device_fatal -- IBV_EVENT_DEVICE_FATAL, the device's QPs fail */
void fake_device_fatal(const char *name);

/* fake_qp_fatal -- IBV_EVENT_QP_FATAL for a queue pair, which fails */
void fake_qp_fatal(struct ibv_qp *qp);

/* fake_next_rkeys -- the next registrations on the device get these keys */
void fake_next_rkeys(const char *name, const uint32_t *keys, unsigned n);

/* fake_reg_needs_odp -- pinning fails (EOPNOTSUPP) as on fsdax pages */
void fake_reg_needs_odp(bool needs);

/* a registration's iova and access flags */
uint64_t fake_mr_iova(const struct ibv_mr *mr);
unsigned fake_mr_access(const struct ibv_mr *mr);

/* receives a queue pair holds (posted, not consumed) */
unsigned fake_qp_rq_len(const struct ibv_qp *qp);

/*
 * fake_cm_silent_accept -- while set, an accept goes nowhere: neither side
 * ever hears ESTABLISHED (an answer, or its confirmation, lost for good)
 */
void fake_cm_silent_accept(bool silent);

/* fake_hold -- while held, posted work waits; releasing runs it */
void fake_hold(bool hold);

/* One operation a fake NIC executed (or failed), in order. */
struct fake_op {
	uint32_t qp_num;
	enum ibv_wr_opcode opcode;
	unsigned send_flags;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t length;
	enum ibv_wc_status status;
};

unsigned fake_op_count(void);
const struct fake_op *fake_op_get(unsigned i);

/* How many advise calls reached a device. */
unsigned fake_advise_count(void);

/* Objects alive: after a test's teardown all of these must be 0. */
struct fake_counts {
	unsigned pds, mrs, cqs, qps, comp_channels;
	unsigned ids, event_channels, unacked_events;
};
struct fake_counts fake_counts(void);

#endif /* FAKE_RDMA_H */
