/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp_region.h -- layout of the shared memory region of one queue pair.
 *
 * rpmad creates one region per connection (a sealed memfd) and passes it to
 * the client. It holds a header and four single-producer/single-consumer
 * rings:
 *   SQ  send queue             client produces, daemon consumes
 *   RQ  receive queue          client produces, daemon consumes
 *   CQ  completion queue       daemon produces, client consumes
 *   RCQ receive completions    daemon produces, client consumes (optional)
 *
 * Indices are free-running uint32 counters; a slot is index & (entries - 1).
 * A producer writes the slot, then publishes the tail with a release store;
 * the consumer reads the tail with an acquire load. Head and tail sit on
 * cache lines of their own. Every value the daemon reads from the region is
 * hostile: it copies entries out before validating them and checks every
 * index against the ring size. Both sides take those steps with
 * common/qp_ring.h.
 */

#ifndef RPMAD_COMMON_QP_REGION_H
#define RPMAD_COMMON_QP_REGION_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define QP_REGION_MAGIC		UINT64_C(0x3150514441504d52) /* "RMPADQP1" */
#define QP_REGION_VERSION	1u
#define QP_CACHELINE		64

/* Largest queue the daemon creates; a bigger request is refused. */
#define QP_MAX_QUEUE_SIZE	(1u << 15)

/* ---- send queue entries ---- */

enum qp_sq_opcode {
	QP_OP_READ = 1,
	QP_OP_WRITE,
	QP_OP_WRITE_IMM,
	QP_OP_ATOMIC_WRITE,
	QP_OP_FLUSH,
	QP_OP_SEND,
	QP_OP_SEND_IMM,
	QP_OP_MAX
};

/* sqe.flags */
#define QP_SQE_SIGNALED		(1u << 0) /* completion on success too */
#define QP_SQE_PERSISTENT	(1u << 1) /* flush to the persistence domain */
#define QP_SQE_FLAGS_ALL	(QP_SQE_SIGNALED | QP_SQE_PERSISTENT)

/*
 * One work request. Local buffers are named like an ibv_sge: the key of a
 * registration of this connection's peer and an address inside it (the
 * application's virtual address). Remote buffers likewise: rkey and the
 * address in the target application's space, as found in a descriptor.
 */
struct qp_sqe {
	uint8_t opcode;
	uint8_t flags;
	uint16_t reserved0;
	uint32_t imm;		/* network byte order, passed through */
	uint64_t wr_id;
	uint64_t laddr;
	uint32_t lkey;
	uint32_t length;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t reserved1;
	uint64_t reserved2[2];
};

/* One posted receive buffer. */
struct qp_rqe {
	uint64_t wr_id;
	uint64_t laddr;
	uint32_t lkey;
	uint32_t length;
	uint64_t reserved;
};

/* cqe.source: which queue the completed work came from */
enum qp_cqe_source {
	QP_CQE_FROM_SQ = 1,
	QP_CQE_FROM_RQ = 2,
	QP_CQE_FROM_SRQ = 3,	/* a shared RQ's receive (1.x): qp_num */
};

/*
 * One completion; the library turns it into a struct ibv_wc. sq_index is
 * the SQ position of the completed work request: seeing it lets the client
 * reuse every SQ slot up to it, as a verbs provider does.
 */
struct qp_cqe {
	uint64_t wr_id;
	uint32_t status;	/* enum ibv_wc_status */
	uint32_t opcode;	/* enum ibv_wc_opcode */
	uint32_t byte_len;
	uint32_t imm_data;	/* network byte order */
	uint32_t wc_flags;	/* IBV_WC_WITH_IMM ... */
	uint32_t vendor_err;
	uint32_t sq_index;
	uint32_t source;	/* enum qp_cqe_source */
	uint32_t qp_num;	/* QP_CQE_FROM_SRQ: the receiving queue pair */
	uint32_t reserved;
};

/* ---- ring indices ---- */

struct qp_ring_idx {
	_Alignas(QP_CACHELINE) _Atomic uint32_t head;
	_Alignas(QP_CACHELINE) _Atomic uint32_t tail;
};

/* header.state, written by the daemon only */
enum qp_state {
	QP_STATE_INIT = 0,	/* request, not connected yet */
	QP_STATE_READY = 1,	/* connected */
	QP_STATE_ERROR = 2,	/* broken or closed: posts fail */
};

struct qp_region_header {
	uint64_t magic;
	uint32_t version;
	uint32_t qp_num;
	uint64_t region_size;

	/* ring capacities (powers of two) and configured depths */
	uint32_t sq_entries, rq_entries, cq_entries, rcq_entries;
	uint32_t sq_depth, rq_depth, cq_depth, rcq_depth;

	/* byte offsets of the entry arrays from the start of the region */
	uint64_t sq_offset, rq_offset, cq_offset, rcq_offset;

	/* daemon: "I am asleep; ring the doorbell after posting" */
	_Alignas(QP_CACHELINE) _Atomic uint32_t need_wakeup;
	/* daemon: enum qp_state */
	_Atomic uint32_t state;

	/*
	 * daemon: "completions wait for room in a full CQ/RCQ; ring the
	 * doorbell after taking some"
	 */
	_Atomic uint32_t cq_space_wanted;

	/*
	 * daemon: bumped whenever it takes work of this queue pair or
	 * completes some. A client that busy-polls an empty CQ with work
	 * outstanding and sees it stand still (rpmad preempted, or waiting
	 * for its peer, which may need this CPU) gives the CPU away now and
	 * then (librpmaclient/cq.c).
	 */
	_Atomic uint32_t progress;

	/*
	 * daemon: set when it last took work of this queue pair while
	 * another tenant had more work than its turns (rpmad's data path is
	 * shared out in slices) or rpmad's own thread was persisting: the
	 * answer waits behind others' bulk, so a client waiting for it
	 * sleeps rather than spin on a CPU rpmad needs
	 * (librpmaclient/cq.c). 0 from a daemon that never sets it.
	 */
	_Atomic uint32_t contended;

	/*
	 * daemon: how far a message has filled the receive it lands in, as
	 * (RQ index << 32) | bytes, stored once a piece is in the receive's
	 * buffer (over TCP when the socket has no more for now, so not
	 * always for the last piece: the completion copies whatever the
	 * library has not). A library spinning on
	 * its CQ copies a staged receive's bytes out while the rest is still
	 * on its way, and only the rest when the completion comes
	 * (librpmaclient/staging.c): a destination's contents are defined
	 * only once the completion is seen, so copying early changes nothing
	 * the application may rely on. 0 from a daemon that never sets it.
	 */
	_Atomic uint64_t rq_filled;

	/* client: "notify me through the CQ fd on the next completion" */
	_Alignas(QP_CACHELINE) _Atomic uint32_t cq_armed;
	_Atomic uint32_t rcq_armed;

	struct qp_ring_idx sq, rq, cq, rcq;
};

/*
 * The descriptors of a queue pair, in the order a QpReply passes them
 * (proto/rpmad.proto); the last only when the queue pair has an RCQ.
 */
enum qp_fd {
	QP_FD_REGION,	/* this region (a sealed memfd) */
	QP_FD_DOORBELL,	/* the eventfd rpmad sleeps on */
	QP_FD_EVENT,	/* connection event notifications */
	QP_FD_CQ,	/* CQ notifications */
	QP_FD_RCQ,	/* RCQ notifications */
	QP_FD_MAX
};

/* qp_fd_count -- how many of them a queue pair has */
static inline unsigned
qp_fd_count(uint32_t rcq_depth)
{
	return rcq_depth ? QP_FD_MAX : QP_FD_RCQ;
}

/* Sizes asked for by the client, after defaults and clamping. */
struct qp_sizes {
	uint32_t sq, rq, cq, rcq;
};

/*
 * ---- staging ----
 *
 * The payloads of a client's own work do not have to be reached in the
 * client's memory: the library copies a write's or send's source into the
 * region when it posts the work, and a read's or receive's data out of it
 * when it collects the completion (librpmaclient/staging.c). rpmad then
 * moves them through its own mapping of the region, batching many of them
 * into one system call, and never touches the client's memory for them.
 *
 * The staging bytes follow the rings (qp_layout.size): first the send
 * side's, then the receive side's. Ring entries name them as a
 * registration rpmad makes for the queue pair (QpReply.staging_lkey) whose
 * addresses start at QP_STAGING_ADDR, checked as any local buffer: they
 * grant local access only, never a remote key. Work that does not fit
 * names the application's registration as before.
 */
#define QP_STAGING_ADDR		UINT64_C(0x10000000000)	/* 1 TiB */
/* The most staging rpmad grants a side of a queue pair. */
#define QP_STAGING_MAX		(64u << 20)

/* Staging bytes of the two sides: asked for, or granted. */
struct qp_staging {
	uint32_t sq, rq;
};

/* Where everything lives in a region built for given sizes. */
struct qp_layout {
	uint32_t sq_entries, rq_entries, cq_entries, rcq_entries;
	uint64_t sq_offset, rq_offset, cq_offset, rcq_offset;
	uint64_t size;
};

/*
 * qp_layout_compute -- the layout for the given depths. Both sides compute
 * it; the client checks the header against its own result. Returns 0, or -1
 * when the CQ depth is 0 or a depth is beyond QP_MAX_QUEUE_SIZE.
 */
int qp_layout_compute(const struct qp_sizes *sizes, struct qp_layout *layout);

/* qp_layout_init_header -- fill a fresh region's header. */
void qp_layout_init_header(struct qp_region_header *hdr,
		const struct qp_sizes *sizes, const struct qp_layout *layout,
		uint32_t qp_num);

/*
 * qp_layout_check_header -- 0 when the header matches the layout computed
 * from `sizes` and `region_size`, -1 otherwise.
 */
int qp_layout_check_header(const struct qp_region_header *hdr,
		const struct qp_sizes *sizes, uint64_t region_size);

/* ring slot accessors: index masked by the (power of two) ring size */
static inline struct qp_sqe *
qp_sq_slot(void *region, const struct qp_layout *l, uint32_t idx)
{
	return (struct qp_sqe *)((char *)region + l->sq_offset) +
		(idx & (l->sq_entries - 1));
}

static inline struct qp_rqe *
qp_rq_slot(void *region, const struct qp_layout *l, uint32_t idx)
{
	return (struct qp_rqe *)((char *)region + l->rq_offset) +
		(idx & (l->rq_entries - 1));
}

static inline struct qp_cqe *
qp_cq_slot(void *region, uint64_t offset, uint32_t entries, uint32_t idx)
{
	return (struct qp_cqe *)((char *)region + offset) +
		(idx & (entries - 1));
}

#endif /* RPMAD_COMMON_QP_REGION_H */
