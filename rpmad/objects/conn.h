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
 * struct conn is opaque: its fields (conn_impl.h) are those of its files,
 * each above the ones before it: conn.c its state (its facts, owner,
 * states and events, the poller's list), conn_work.c the work path,
 * conn_poll.c the poller, conn_life.c its life and the calls of its
 * client (a shared RQ, srq.c, stands between the work path and the
 * life). What a transport may call of it, and the data handed to a
 * transport (struct work, struct recv_slot), stand in
 * transport/transport.h; rpmactl gets a plain description
 * (conn_describe()).
 */

#ifndef RPMAD_CONN_H
#define RPMAD_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "clients/call.h"
#include "core/stats.h"
#include "objects/qp.h"
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

/*
 * What a client asks of a new connection's queues (librpma's
 * rpma_conn_cfg), as its request carried it.
 */
struct conn_cfg {
	uint32_t timeout_ms;
	uint32_t cq_size, rcq_size, sq_size, rq_size;
	uint64_t srq_id; /* receives from this shared RQ; 0: none */
	uint32_t sq_staging, rq_staging; /* bytes wished for */
};

/*
 * The new queue pair as the client gets it: the client's ends of its
 * region and doorbells (the receiver's to send and close) and what the
 * library needs to use it.
 */
struct conn_handover {
	uint64_t id;
	uint32_t qp_num;
	uint64_t region_size;
	const uint8_t *pdata; /* incoming requests: what the client sent */
	uint8_t pdata_len;
	uint32_t staging_lkey, sq_staging, rq_staging;
	int fds[QP_FD_MAX];
	unsigned nfds;
};

/* An event of a connection as its client reads it (conn_next_event). */
struct conn_event_view {
	int event; /* enum rpma_conn_event */
	bool has_pdata;
	const uint8_t *pdata; /* valid until the connection's next call */
	uint8_t pdata_len;
};

/*
 * The calls of a client on its connections. Each fails the call (call.h)
 * when it returns NULL or a negative errno.
 *
 * conn_find -- the calling client's connection `id`
 * conn_new_active -- an outgoing request to addr:port (numbers) on the
 *	peer (rpma_conn_req_new); `cfg` NULL: none given
 * conn_new_passive -- a connection for an incoming request (ep.c)
 * conn_handover -- hands the new queue pair's client ends over
 * conn_connect -- connects or accepts with the private data
 * conn_next_event -- the oldest event not read yet (RPMA_E_NO_EVENT)
 * conn_disconnect -- says goodbye (rpma_conn_disconnect)
 * conn_delete -- deletes the request or the connection, orderly
 */
struct conn *conn_find(struct call *call, uint64_t id);
struct conn *conn_new_active(struct call *call, struct peer *peer,
		const char *addr, const char *port, const struct conn_cfg *cfg);
struct conn *conn_new_passive(struct call *call, struct peer *peer,
		struct incoming *inc, const struct conn_cfg *cfg);
void conn_handover(struct conn *conn, struct conn_handover *h);
int conn_connect(struct call *call, struct conn *conn, const uint8_t *pdata,
		size_t pdata_len);
int conn_next_event(struct call *call, struct conn *conn,
		struct conn_event_view *ev);
int conn_disconnect(struct call *call, struct conn *conn);
void conn_delete(struct conn *conn);

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

#endif /* RPMAD_CONN_H */
