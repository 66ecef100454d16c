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
 * struct conn is opaque: its fields are conn.c's. A transport keeps its
 * own state in the connection (conn_tp(), conn_set_tp()) and reads the few
 * facts it needs through the functions below; rpmactl gets a plain
 * description (conn_describe()). struct work and struct recv_slot are the
 * data handed to a transport, and stay open.
 */

#ifndef RPMAD_CONN_H
#define RPMAD_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#include "clients/reply.h"
#include "core/stats.h"
#include "librpma.h"
#include "objects/mr.h"
#include "qp_region.h"	/* a work's opcode: enum qp_sq_opcode */

struct conn;
struct ep;
struct incoming;
struct peer;
struct qp;
struct srq;
struct transport_ops;

enum conn_state {
	CONN_REQ_OUT,		/* outgoing request, not connecting yet */
	CONN_REQ_IN,		/* incoming request, not accepted yet */
	CONN_CONNECTING,	/* connect or accept under way */
	CONN_ESTABLISHED,
	CONN_DISCONNECTING,	/* we said goodbye, waiting for theirs */
	CONN_ENDED,		/* closed, lost, rejected or unreachable */
};

/* A validated work request from the SQ. */
struct work {
	uint32_t sq_index;
	uint8_t opcode;		/* enum qp_sq_opcode */
	bool signaled;
	bool persistent;
	uint32_t imm;		/* network byte order */
	uint32_t length;
	uint64_t wr_id;
	uint64_t laddr;		/* the client's address of its local buffer */
	struct mr *lmr;		/* referenced while the work is in flight */
	uint32_t rkey;
	uint64_t raddr;
	uint64_t posted_ns;
	/*
	 * its number once handed over: 1, 2, ... in the order the transport
	 * takes them, set before post() sees it (what a transport matches
	 * answers and completions with)
	 */
	uint64_t tp_seq;
	struct work *next;	/* the next one in flight */
};

/* A posted receive taken for an incoming message. */
struct recv_slot {
	uint64_t wr_id;
	uint64_t addr;		/* the client's address of the buffer */
	uint32_t length;
	struct mr *mr;		/* referenced until conn_recv_done() */
	uint64_t tp_seq;	/* its number once handed over, as a work's */
};

/* ---- for the transports ---- */

/*
 * conn_activate -- put the connection on the poller's list (its transport
 * made progress or changed its state); every conn_* call below does it
 */
void conn_activate(struct conn *conn);

/* conn_established -- the connection is up; the active side gets pdata */
void conn_established(struct conn *conn, const void *pdata, uint8_t len,
		bool has_pdata);

/*
 * Two outcomes that rpmad tells apart in its log and in rpmactl, beyond
 * librpma 0.12's events; the application sees what 0.12 shows for them
 * (docs/internals.md, "Connection outcomes"):
 * CONN_END_REFUSED      nothing listens at the address: RPMA_CONN_REJECTED,
 *                       as an RDMA CM peer without a listener answers;
 * CONN_END_UNREACHABLE  no route, or no answer within the timeout: 0.12
 *                       has no event for RDMA_CM_EVENT_UNREACHABLE and its
 *                       rpma_conn_next_event fails with RPMA_E_UNKNOWN.
 * Values outside the enum's: never compare them in a switch.
 */
#define CONN_END_REFUSED	((enum rpma_conn_event)100)
#define CONN_END_UNREACHABLE	((enum rpma_conn_event)101)

/*
 * conn_ended -- the connection is over (CLOSED, LOST, REJECTED, or one of
 * the CONN_END_* above). The transport must not touch the connection's
 * work after this; release() follows from the poller.
 */
void conn_ended(struct conn *conn, enum rpma_conn_event event);

/*
 * In flight: what a transport took and has not completed yet, kept here
 * for every transport. post() offers one work at a time, in SQ order; the
 * transport that keeps it says so with conn_work_handed(), then completes
 * the oldest (conn_work_oldest(), conn_work_done()) until none is left,
 * or all of them at once when its queue pair fails (conn_work_flush()).
 * Receives go the same way (conn_take_recv(), conn_recv_handed(),
 * conn_recv_oldest(), conn_recv_done(), conn_recv_flush()). What it
 * completes at once it never hands over. When the connection ends, the
 * core flushes what is still in flight after release().
 */

/* conn_work_handed -- the transport took w (given by post()) */
void conn_work_handed(struct conn *conn, struct work *w);

/* conn_work_oldest -- the oldest work in flight, or NULL */
struct work *conn_work_oldest(const struct conn *conn);

/*
 * conn_work_refused -- in post(): the transport cannot start w (say, the
 * client's memory cannot be read); it completes with `status` in its
 * turn, once the work in flight before it completed, and the queue pair
 * fails then. Nothing after it is offered.
 */
void conn_work_refused(struct conn *conn, struct work *w,
		enum ibv_wc_status status);

/* conn_works_in_flight -- how many works are in flight */
uint32_t conn_works_in_flight(const struct conn *conn);

/* conn_work_last_seq -- the newest handed work's number (0: none yet) */
uint64_t conn_work_last_seq(const struct conn *conn);

/*
 * conn_work_done -- complete a work: the oldest in flight (it leaves the
 * list), or one that post() was given and the transport did not hand
 * over while nothing is in flight. After completing one with an error,
 * the transport completes every later work it holds with
 * IBV_WC_WR_FLUSH_ERR (conn_work_flush()).
 */
void conn_work_done(struct conn *conn, struct work *w,
		enum ibv_wc_status status);

/*
 * conn_work_flush -- complete every work in flight, oldest first, with
 * IBV_WC_WR_FLUSH_ERR (the transport's queue pair failed)
 */
void conn_work_flush(struct conn *conn);

/*
 * conn_qp_error -- the queue pair failed but the connection stays up
 * (the transport has completed its own work already): flush the rest.
 */
void conn_qp_error(struct conn *conn);

/*
 * conn_take_recv -- the next posted receive for a message of `len` bytes
 * (0: any), in *rs (the connection's; valid until it is completed or the
 * next one is taken). Returns 0; -EAGAIN when none is posted (the
 * transport hears recv_posted() when one is); -EPROTO when the receive is
 * invalid or too small (it was completed with an error and the queue pair
 * failed).
 */
int conn_take_recv(struct conn *conn, uint32_t len, struct recv_slot **rs);

/* conn_recv_handed -- the transport holds the receive it just took */
void conn_recv_handed(struct conn *conn, struct recv_slot *rs);

/* conn_recv_oldest -- the oldest receive in flight, or NULL */
struct recv_slot *conn_recv_oldest(const struct conn *conn);

/* conn_recvs_in_flight -- how many receives are in flight */
uint32_t conn_recvs_in_flight(const struct conn *conn);

/*
 * conn_recv_done -- complete a receive: the oldest in flight, or the one
 * just taken and not handed over
 */
void conn_recv_done(struct conn *conn, struct recv_slot *rs,
		enum ibv_wc_status status, uint32_t byte_len,
		enum ibv_wc_opcode opcode, bool with_imm, uint32_t imm);

/*
 * conn_recv_flush -- complete every receive in flight, oldest first, with
 * IBV_WC_WR_FLUSH_ERR
 */
void conn_recv_flush(struct conn *conn);

/*
 * conn_target_access -- check a remote access to this connection's peer
 * (key, bounds, usage) and find its registration. 0, or -EACCES.
 */
int conn_target_access(struct conn *conn, uint32_t rkey, uint64_t raddr,
		uint64_t len, enum mr_access access, struct mr **mrp);

/*
 * conn_count_served -- the peer's operation (enum qp_sq_opcode) on this
 * connection's memory succeeded here, the target
 */
void conn_count_served(struct conn *conn, uint8_t opcode, uint64_t len);

/*
 * conn_srq_posted -- receives were posted to the shared RQ the connection
 * takes its receives from: look again (srq.c)
 */
void conn_srq_posted(struct conn *conn);

/* conn_srq -- the shared RQ its receives come from (1.x), or NULL */
struct srq *conn_srq(const struct conn *conn);

/* conn_set_names -- the addresses shown by rpmactl (NULL: unchanged) */
void conn_set_names(struct conn *conn, const struct sockaddr_storage *local,
		const struct sockaddr_storage *remote);

/*
 * The connection's facts a transport needs. Cheap calls: post() and a
 * transport's completions take conn_tp() and conn_qp_failed() for every
 * work.
 */

/* conn_tp -- the transport's own state of the connection, or NULL */
void *conn_tp(const struct conn *conn);

/* conn_set_tp -- set it (NULL: the transport let go, in release()) */
void conn_set_tp(struct conn *conn, void *tp_conn);

/* conn_qp_num -- the queue pair number the client knows it by */
uint32_t conn_qp_num(const struct conn *conn);

/* conn_uid -- the user of the client that owns it */
uid_t conn_uid(const struct conn *conn);

/* conn_netns -- its client's network namespace (netns.h; -1: rpmad's) */
int conn_netns(const struct conn *conn);

/* conn_peer -- the client's peer the connection was made on */
struct peer *conn_peer(const struct conn *conn);

/*
 * conn_remote -- where an outgoing request connects to, or where an
 * incoming one came from (its length in *len)
 */
const struct sockaddr_storage *conn_remote(const struct conn *conn,
		socklen_t *len);

/* conn_remote_name -- the remote address as the log and rpmactl show it */
const char *conn_remote_name(const struct conn *conn);

/*
 * conn_log -- a log line about the connection: for one that came in,
 * charged to whoever sent the request, at every level (a remote host's
 * share, remote_log.h, or a local user's, tenant.h; "(from ORIGIN)" is
 * added); for one its client made, a line as any other (bounded by the
 * client's connections)
 */
void conn_log(const struct conn *conn, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* conn_timeout_ms -- the client's connection timeout (0: the default) */
uint32_t conn_timeout_ms(const struct conn *conn);

/*
 * conn_qp_failed -- the queue pair failed: every further work request is
 * flushed (conn_work_flush(), conn_qp_error())
 */
bool conn_qp_failed(const struct conn *conn);

/*
 * conn_qp -- the connection's shared queue pair (its layout says the
 * rings' depths; the white-box tests write its rings as the library does)
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

/* conn_fairq -- whose share of the data path its work is (fairq.h) */
struct fairq_tenant *conn_fairq(const struct conn *conn);

#endif /* RPMAD_CONN_H */
