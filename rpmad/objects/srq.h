/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq.h -- a shared receive queue (librpma 1.x): one receive queue whose
 * posted buffers take the messages of every connection made with it, and
 * optionally its own receive completion queue
 *
 * It is a queue pair region (qp.h) of its own that the client maps: its
 * RQ is the shared queue, its CQ the shared receive completion queue (the
 * region's SQ is unused). The software transport takes a connection's
 * receives from it (conn_take_recv); completions go to its CQ when it has
 * one, else to the receiving connection's queues.
 */

#ifndef RPMAD_SRQ_H
#define RPMAD_SRQ_H

#include <stdbool.h>
#include <stdint.h>

#include "qp.h"
#include "registry.h"
#include "reply.h"

struct conn;
struct peer;

struct srq {
	struct obj obj;
	struct peer *peer;
	struct qp qp;
	bool has_rcq;		/* completions go to qp's CQ */
	struct conn **users;	/* the connections made with it */
	uint32_t n_users, cap_users;
};

/* srq_find -- the asking client's shared RQ `id`, or NULL (answer failed) */
struct srq *srq_find(struct req_ctx *rc, uint64_t id);

void srq_handle_new(struct req_ctx *rc);
void srq_handle_delete(struct req_ctx *rc);

/* srq_attach / srq_detach -- conn takes its receives from srq (or not) */
int srq_attach(struct srq *srq, struct conn *conn);
void srq_detach(struct srq *srq, struct conn *conn);

#endif /* RPMAD_SRQ_H */
