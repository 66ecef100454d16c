/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_impl.h -- a connection's fields, and the calls of conn.c, the
 * bottom of a connection's files, for those above it (conn.h says which).
 * Nothing outside objects/conn*.c includes it.
 */

#ifndef RPMAD_CONN_IMPL_H
#define RPMAD_CONN_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "conn_pdata.h"
#include "core/registry.h"
#include "core/stats.h"
#include "librpma.h"
#include "log/origin.h"
#include "loop/loop.h"
#include "objects/conn.h"
#include "objects/qp.h"
#include "transport/transport.h"

struct client;
struct srq;

/*
 * In flight: works and receives the transport took (conn_work_handed(),
 * conn_recv_handed()) and has not completed yet, oldest first.
 */
struct conn_inflight {
	struct work *head, *tail; /* through work.next */
	uint32_t works; /* on the list */
	uint64_t work_seq; /* the newest's number (0: none yet) */
	struct recv_slot *recvs; /* by number & (rq_entries - 1) */
	uint64_t recv_done, recv_seq; /* numbers: completed, handed over */
};

#define CONN_MAX_EVENTS 8

struct conn_event_entry {
	int event;
	bool has_pdata;
	uint8_t pdata_len;
	uint8_t pdata[CONN_PDATA_MAX];
};

/*
 * The fields are conn*.c's alone: transports, the control plane and
 * main.c go through the functions of conn.h, so that what a connection
 * owes its client (order, counts, states) is kept in one place.
 */
struct conn {
	struct obj obj;
	struct peer *peer;
	const struct transport_ops *tp;
	void *tp_conn;
	enum conn_state state;
	const char *end_reason; /* once ended: how, in rpmad's terms */
	bool passive;
	bool qp_error; /* every further work request is flushed */
	bool release_pending; /* ended: the transport is to be released */
	uint32_t qp_num;
	uint32_t timeout_ms;
	struct qp qp;
	struct mr *staging; /* its staging bytes' registration, or NULL */

	struct sockaddr_storage remote;
	socklen_t remote_len;
	/*
	 * who causes what happens to it, when it came in: the remote host
	 * (or the local user) that sent the request; its log lines are that
	 * origin's share (conn_log)
	 */
	struct origin origin;
	char local_name[CONN_NAME_MAX], remote_name[CONN_NAME_MAX];
	uint8_t pdata_in[CONN_PDATA_MAX]; /* passive: what the client sent */
	uint8_t pdata_in_len;

	struct work *works; /* by SQ index & (entries - 1) */
	uint32_t sq_done; /* next SQ index to complete */
	uint32_t sq_taken; /* next SQ index to take */
	bool deferred; /* works[sq_taken - 1] waits for post() */
	/*
	 * rpmad refused works[sq_taken - 1] (an ibv_wc_status, 0: none), or
	 * the receive after those in flight: each completes with it in its
	 * turn, once everything before it completed (reliable connections
	 * complete in order)
	 */
	uint8_t rejected;
	uint8_t recv_rejected;
	bool rnr_waiting; /* a message waits for a receive */
	struct conn_inflight inflight;
	/*
	 * 1.x: the shared RQ its receives come from, not qp.rq; what its work
	 * path needs of it: its queue pair, and whether their completions go
	 * to that one's CQ (else to the connection's)
	 */
	struct srq *srq;
	struct qp *srq_qp;
	bool srq_rcq;

	struct conn_event_entry events[CONN_MAX_EVENTS];
	unsigned ev_head, ev_count;

	struct op_counters ops;
	struct conn *all_prev, *all_next; /* every connection */

	/*
	 * The poller's list: connections that had work within the spin time
	 * or wait on their transport. The others sleep with need_wakeup set
	 * and come back by their doorbell or by an event of their transport
	 * (conn_activate), so a pass costs what the busy connections cost.
	 */
	bool active;
	uint64_t last_work_ns;
	struct conn *active_prev, *active_next;
};

/* ---- conn.c */

/* The client the connection is of: its log share, its counts. */
struct client *conn_owner(const struct conn *conn);

/* What a state and an event are called in log lines and by rpmactl. */
const char *conn_state_name(enum conn_state state);
const char *conn_event_name(enum rpma_conn_event event);

/* Whether a connection in `state` is a request (not connecting yet). */
bool conn_is_request(enum conn_state state);

/*
 * Every change of state comes here: the client counts its requests (not
 * connecting yet) for max_pending_requests and rpmactl.
 */
void conn_set_state(struct conn *conn, enum conn_state state);

/* Queues an event for the client (dropped, logged, when the queue is full). */
void conn_push_event(struct conn *conn, enum rpma_conn_event event,
		const void *pdata, uint8_t len, bool has_pdata);

/* Lines about conn and its owner until log_subject_pop() (the journal's
 * fields). */
void conn_log_subject(const struct conn *conn);

/*
 * The poller's list: conn_activate() (transport.h) joins it,
 * conn_deactivate() leaves it; conn_active_first() is its first (the
 * others follow through active_next).
 */
void conn_deactivate(struct conn *conn);
struct conn *conn_active_first(void);

#endif /* RPMAD_CONN_IMPL_H */
