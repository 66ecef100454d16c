/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.h -- connections (and the requests they start as) inside rpmad
 *
 * One object carries a connection through its life: an outgoing request
 * (rpma_conn_req_new) or an incoming one (rpma_ep_next_conn_req), then
 * connecting, established, and ended. It owns the shared queue pair and
 * every work request taken from it: work is validated here, handed to the
 * transport, and completed here, in order, into the client's CQ. What the
 * transport holds meanwhile, works and receives, is kept here too ("in
 * flight"), so that every transport completes them the same way.
 *
 * struct conn is opaque: its fields are conn.c's. What a transport
 * may call of it, and the data handed to a transport (struct work, struct
 * recv_slot), stand in transport/transport.h; rpmactl gets a plain
 * description (conn_describe()).
 */

#ifndef RPMAD_CONN_H
#define RPMAD_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "clients/reply.h"
#include "core/stats.h"
#include "transport/transport.h"

struct qp;

enum conn_state {
	CONN_REQ_OUT,		/* outgoing request, not connecting yet */
	CONN_REQ_IN,		/* incoming request, not accepted yet */
	CONN_CONNECTING,	/* connect or accept under way */
	CONN_ESTABLISHED,
	CONN_DISCONNECTING,	/* we said goodbye, waiting for theirs */
	CONN_ENDED,		/* closed, lost, rejected or unreachable */
};

/*
 * conn_srq_posted -- receives were posted to the shared RQ the connection
 * takes its receives from: look again (srq.c)
 */
void conn_srq_posted(struct conn *conn);

/*
 * conn_qp -- the connection's shared queue pair (the white-box tests
 * write its rings as the library does)
 */
struct qp *conn_qp(struct conn *conn);

/* ---- for the control plane, main.c and the tests ---- */

/* conn_new_passive -- a connection for an incoming request (ep.c) */
struct conn *conn_new_passive(struct req_ctx *rc, struct peer *peer,
		struct incoming *inc, const Rpmad__ConnCfg *cfg);

/* conn_reply_qp -- the QpReply for a new queue pair */
void conn_reply_qp(struct req_ctx *rc, struct conn *conn);

/* conn_init -- register the poller of every connection's queue pair */
void conn_init(void);

/*
 * conn_shutdown_all -- at shutdown: each established connection's
 * transport says goodbye (the connections are closed later, with their
 * sessions). Returns how many.
 */
unsigned conn_shutdown_all(void);

#define CONN_NAME_MAX 80
#define CONN_STATE_TEXT_MAX 64

/* What rpmactl shows of a connection: plain data, filled by conn.c. */
struct conn_info {
	enum conn_state state;
	char state_text[CONN_STATE_TEXT_MAX];	/* as shown (ended: how) */
	char local_name[CONN_NAME_MAX];		/* "-" while not known */
	char remote_name[CONN_NAME_MAX];
	uint32_t qp_num;
	const char *role;			/* "active" or "passive" */
	const char *transport;			/* its transport's name */
	struct op_counters ops;			/* its own operations */
};

/* conn_describe -- a connection as rpmactl shows it */
void conn_describe(const struct conn *conn, struct conn_info *info);

/*
 * conn_polled -- whether the poller visits the connection now: it had work
 * within the spin time (the tests check that an idle one sleeps)
 */
bool conn_polled(const struct conn *conn);

void conn_handle_req_new(struct req_ctx *rc);
void conn_handle_req_delete(struct req_ctx *rc);
void conn_handle_req_connect(struct req_ctx *rc);
void conn_handle_next_event(struct req_ctx *rc);
void conn_handle_disconnect(struct req_ctx *rc);
void conn_handle_delete(struct req_ctx *rc);

#endif /* RPMAD_CONN_H */
