/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq.h -- a shared receive queue (librpma 1.x): one receive queue whose
 * posted buffers take the messages of every connection made with it, and
 * optionally its own receive completion queue
 *
 * It is a queue pair region (qp.h) of its own that the client maps: its
 * RQ is the shared queue, its CQ the shared receive completion queue (the
 * region's SQ is unused). The software transport takes a connection's
 * receives from it (conn_take_recv); a transport that hands receives to
 * its device (verbs) makes a queue of the device (srq_create) and posts
 * to it (srq_take), the receives in its hands kept here by slot until a
 * queue pair's completion names one (srq_done). Completions go to its CQ
 * when it has one, else to the receiving connection's queues.
 */

#ifndef RPMAD_SRQ_H
#define RPMAD_SRQ_H

#include <stdbool.h>
#include <stdint.h>

#include "clients/call.h"
#include "core/registry.h"
#include "objects/conn.h"
#include "objects/qp.h"

struct peer;

struct srq {
	struct obj obj;
	struct peer *peer;
	struct qp qp;
	bool has_rcq;		/* completions go to qp's CQ */
	struct conn **users;	/* the connections made with it */
	uint32_t n_users, cap_users;

	/* a transport that holds receives (verbs): its queue, its slots */
	void *tp_srq;
	struct recv_slot *slots;	/* n_slots; wr_id = index + 1 */
	uint32_t *free_slots;		/* a stack of free indices */
	uint32_t n_slots, n_free;
};

/* srq_find -- the asking client's shared RQ `id`, or NULL (answer failed) */
struct srq *srq_find(struct call *call, uint64_t id);

/*
 * srq_new -- a shared receive queue of `rq_size` receives on the peer,
 * with a completion queue of `rcq_size` (0: none, completions go to the
 * connections'); NULL with the call failed. The client's ends of its
 * queue stand in qp.client_fds until the answer takes them.
 */
struct srq *srq_new(struct call *call, struct peer *peer, uint32_t rq_size,
		uint32_t rcq_size);

/*
 * srq_delete -- deletes the queue: 0, or -EBUSY with the call failed
 * while connections use it
 */
int srq_delete(struct call *call, struct srq *srq);

/* srq_attach / srq_detach -- conn takes its receives from srq (or not) */
int srq_attach(struct srq *srq, struct conn *conn);
void srq_detach(struct srq *srq, struct conn *conn);

#endif /* RPMAD_SRQ_H */
