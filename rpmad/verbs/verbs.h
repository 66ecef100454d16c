/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs.h -- the verbs transport's own header: rdma-core (librdmacm,
 * libibverbs) on RDMA NICs, what each of its files offers the others.
 * The transport sees rpmad through transport/transport.h alone.
 *
 *   transport_verbs.c  the operations table, the table entry, devices
 *   verbs_dev.c        the RDMA devices rpmad found
 *   verbs_async.c      their asynchronous events
 *   verbs_hotplug.c    the kernel's uevents: devices coming and going
 *   verbs_gone.c       a device that went away
 *   verbs_channel.c    the CM's event channel
 *   verbs_cm.c         the CM: listening, connecting, accepting
 *   verbs_cm_events.c  the CM's events
 *   verbs_ep.c         listening endpoints
 *   verbs_conn.c       a connection's state
 *   verbs_qp.c         its queue pair
 *   verbs_work.c       work requests and completions
 *   verbs_mr.c         protection domains and registrations
 *   verbs_srq.c        shared receive queues
 */

#ifndef RPMAD_VERBS_H
#define RPMAD_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "transport/transport.h"

struct verbs_conn;
struct verbs_dev;

/* --------------------------------------------------------- verbs_dev.c */

/*
 * verbs_dev.c -- the RDMA devices rpmad found, as every part of the
 * rdma-core transport sees them
 */

/* How many RDMA devices rpmad keeps track of. */
#define VERBS_MAX_DEVICES 16

/* An RDMA device rpmad found, with the device object the core knows. */
struct verbs_dev {
	struct ibv_context *ctx; /* librdmacm's; NULL once removed */
	struct device *dev;
	struct loop_watch async_watch; /* its async events (verbs_async.c) */
	struct loop_timer port_timer; /* armed while its link is down */
	bool dead; /* fatal error or removed */
};

/*
 * verbs_dev_add -- a table entry for a context the CM gave us, with the
 * core's device object for it (served by `tp`); NULL (logged) when the
 * table is full or memory is short
 */
struct verbs_dev *verbs_dev_add(struct ibv_context *ctx,
		const struct transport_ops *tp);

/* verbs_dev_find -- the device of a CM id's context, also when it is gone */
struct verbs_dev *verbs_dev_find(const struct ibv_context *ctx);

/* verbs_dev_of_node -- the live device of /dev/infiniband/<node> (uverbsN) */
struct verbs_dev *verbs_dev_of_node(const char *node);

/* verbs_dev_of_peer -- a peer's device, or NULL when it is not an RDMA one */
struct verbs_dev *verbs_dev_of_peer(const struct peer *peer);

/* verbs_dev_ctx_name -- the device name of a CM id's context ("none") */
const char *verbs_dev_ctx_name(const struct ibv_context *ctx);

/*
 * verbs_dev_forget -- a device that is gone: no more of its events; a
 * removed one's context is forgotten too (a device made again is a new
 * one), a failed one's stays known as dead
 */
void verbs_dev_forget(struct verbs_dev *vd, bool removed);

/* verbs_dev_fini -- empty the table (rpmad ends) */
void verbs_dev_fini(void);

/* ----------------------------------------------------- verbs_channel.c */

/*
 * verbs_channel.c -- rpmad's one RDMA CM event channel, on which every CM
 * id of the transport (listeners and connections) is made
 */

/*
 * Every CM id's context starts with one of these, so that an event finds
 * the part it belongs to.
 */
enum verbs_ctx_kind {
	VCTX_EP = 1,
	VCTX_CONN,
};

/*
 * verbs_channel_open -- make the channel (non-blocking) and have the loop
 * watch it with `ready`, the reader of its events (it stands above the
 * parts that make ids on the channel, as a socket's handler does). 0, or
 * a negative errno with the reason in err.
 */
int verbs_channel_open(loop_fd_fn *ready, char *err, size_t errlen);

/* verbs_channel -- the channel, or NULL while it is not open */
struct rdma_event_channel *verbs_channel(void);

/* verbs_channel_close -- at the end, when no id is left on it */
void verbs_channel_close(void);

/* -------------------------------------------------------- verbs_conn.c */

/*
 * verbs_conn.c -- a connection's state in the rdma-core transport (its CM
 * id, its queue pair), as every part of the transport sees it
 */

/* Private data an RDMA CM connection request carries (RDMA_PS_TCP). */
#define VERBS_CONNECT_PDATA_MAX 56

/* What a flush reads back from the target (librpma's read-after-write). */
#define VERBS_FLUSH_READ_LEN 8

enum vc_state {
	VC_RESOLVING_ADDR, /* active: rdma_resolve_addr under way */
	VC_RESOLVING_ROUTE, /* active: rdma_resolve_route under way */
	VC_CONNECTING, /* active: rdma_connect sent */
	VC_WAITING, /* passive: at the endpoint, for the app */
	VC_ACCEPTING, /* passive: rdma_accept sent */
	VC_ESTABLISHED,
	VC_DISCONNECTING, /* rdma_disconnect sent */
	VC_OVER, /* reported to the core; waiting for release */
};

struct verbs_conn {
	uint8_t kind; /* VCTX_CONN */
	struct conn *conn; /* NULL until a passive one is adopted */
	struct rdma_cm_id *id;
	enum vc_state state;
	bool passive;
	bool remote_gone; /* passive, before adoption: the peer left */
	uint8_t pdata[VERBS_CONNECT_PDATA_MAX]; /* active: for rdma_connect */
	uint8_t pdata_len;

	/* the queue pair (once created) and its completion queues */
	struct verbs_dev *vdev;
	struct ibv_comp_channel *channel;
	struct loop_watch channel_watch;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_qp *qp;
	uint32_t max_send_wr, max_recv_wr;
	uint64_t *flush_buf; /* where flushes read into */
	struct ibv_mr *flush_mr;
	bool qp_failed; /* the device put the queue pair in error */
	bool polled; /* on the poller's list */
	/* set-up: the peer's answer (active) or its confirmation (passive) */
	struct loop_timer setup_timer;

	struct verbs_conn *prev, *next; /* the poller's list */
	struct verbs_conn *all_prev, *all_next; /* every one */
};

/* verbs_conn_new -- a state on the list of all; NULL without memory */
struct verbs_conn *verbs_conn_new(void);

/*
 * verbs_conn_drop_id -- destroy its CM id (its queue pair first: the CM
 * wants it that way)
 */
void verbs_conn_drop_id(struct verbs_conn *vc);

/* verbs_conn_free -- its id, then the state (its queue pair is gone) */
void verbs_conn_free(struct verbs_conn *vc);

/* verbs_conn_all -- every live state (for device-wide events) */
struct verbs_conn *verbs_conn_all(void);

/* verbs_conn_of_qp -- the state whose queue pair this is, or NULL */
struct verbs_conn *verbs_conn_of_qp(const struct ibv_qp *qp);

/*
 * verbs_conn_over -- the connection is over: tell the core (once); one
 * waiting at its endpoint remembers it for when the application comes.
 * Whoever ends it takes the device's completions first.
 */
void verbs_conn_over(struct verbs_conn *vc, enum rpma_conn_event event);

/* ------------------------------------------------------- verbs_async.c */

/*
 * verbs_async.c -- an RDMA device's asynchronous events
 */

/*
 * verbs_async_watch -- hear the device's events from now on (a warning
 * when they cannot be watched); verbs_dev_forget() stops it
 */
void verbs_async_watch(struct verbs_dev *vd);

/* -------------------------------------------------------- verbs_gone.c */

/*
 * verbs_gone.c -- letting go of an RDMA device that went away, as the
 * parts that hear of it call it
 */

/* verbs_dev_gone -- removed or failed: LOST, let go of everything on it */
void verbs_dev_gone(struct verbs_dev *vd, bool removed);

/* ----------------------------------------------------- verbs_hotplug.c */

/*
 * verbs_hotplug.c -- noticing that an RDMA device is being removed
 */

/* start watching for devices being removed (once; a warning if it fails) */
void verbs_hotplug_watch(void);
void verbs_hotplug_fini(void);

/* ---------------------------------------------------------- verbs_cm.c */

/*
 * verbs_cm.c -- connections through the RDMA CM, as the operations table
 * and the CM's events reach them
 */

/* the operations: connection life cycle (see transport.h) */
int verbs_adopt(struct conn *conn, struct incoming *inc, char *err,
		size_t errlen);
int verbs_connect(struct conn *conn, const void *pdata, uint8_t pdata_len,
		char *err, size_t errlen);
int verbs_accept(struct conn *conn, const void *pdata, uint8_t pdata_len,
		char *err, size_t errlen);
void verbs_reject(struct conn *conn);
void verbs_disconnect(struct conn *conn);
void verbs_release(struct conn *conn, bool abort);

/* verbs_cm_event -- one event of a connection's id (copied, acknowledged) */
void verbs_cm_event(struct verbs_conn *vc, const struct rdma_cm_event *ev);

/*
 * verbs_create_id -- rdma_create_id on channel `ch` in network namespace
 * `nsfd` (netns.h; -1: rpmad's): the CM takes the namespace of the thread
 * that makes an id, and resolves, binds and routes in it. 0, or -1 with
 * errno set.
 */
int verbs_create_id(int nsfd, struct rdma_event_channel *ch,
		struct rdma_cm_id **id, void *context);

/* --------------------------------------------------- verbs_cm_events.c */

/*
 * verbs_cm_events.c -- the reader of rpmad's RDMA CM event channel
 */

/* verbs_cm_ready -- the channel's loop handler (verbs_channel_open) */
void verbs_cm_ready(struct loop_watch *w, uint32_t events);

/* ---------------------------------------------------------- verbs_ep.c */

/*
 * verbs_ep.c -- listening endpoints on RDMA devices and the requests that
 * arrive at them, as the operations table and the CM's events reach them
 */

/* A listener's CM id context. */
struct verbs_ep {
	uint8_t kind; /* VCTX_EP */
	struct ep *ep;
	struct rdma_cm_id *id;
};

/* the operations: endpoints (see transport.h) */
int verbs_listen(struct ep *ep, const struct sockaddr_storage *ss,
		socklen_t len, char *err, size_t errlen);
void verbs_unlisten(struct ep *ep);
void verbs_incoming_drop(struct incoming *inc, bool reject);

/* verbs_ep_request -- a CONNECT_REQUEST: its new id waits at the endpoint */
void verbs_ep_request(const struct rdma_cm_event *ev);

/* verbs_ep_event -- any other event of a listener's own id */
void verbs_ep_event(const struct verbs_ep *vep, const struct rdma_cm_event *ev);

/* ---------------------------------------------------------- verbs_qp.c */

/*
 * verbs_qp.c -- a connection's queue pair on its RDMA device: made,
 * watched and destroyed
 */

/*
 * verbs_qp_create -- the queue pair of vc on its CM id, for the conn's
 * sizes, with its completion queues, watched from now on. 0, or a
 * negative errno with the reason in err.
 */
int verbs_qp_create(struct verbs_conn *vc, struct peer *peer, char *err,
		size_t errlen);

/* verbs_qp_destroy -- everything verbs_qp_create made (none: nothing) */
void verbs_qp_destroy(struct verbs_conn *vc);

/* verbs_qp_init -- the loop's poller of every queue pair (once) */
void verbs_qp_init(void);

/* -------------------------------------------------------- verbs_work.c */

/*
 * verbs_work.c -- the data path on a connection's queue pair, as the
 * operations table, the queue pair's watchers and the connection's end
 * use it
 */

/* the operations: data path (see transport.h) */
int verbs_post(struct conn *conn, struct work *w);
void verbs_recv_posted(struct conn *conn);

/* verbs_work_post_recvs -- the client's posted receives to the device,
 * while it has room */
void verbs_work_post_recvs(struct verbs_conn *vc);

/* verbs_work_poll -- take every completion the device has; how many */
int verbs_work_poll(struct verbs_conn *vc);

/* verbs_work_failed -- the queue pair failed: flush what it holds */
void verbs_work_failed(struct verbs_conn *vc);

/*
 * verbs_work_lost -- the peer cannot be reached (the device gave up
 * retrying, the link stayed down): the queue pair fails and the
 * connection is lost, as the TCP transport reports a silent peer
 */
void verbs_work_lost(struct verbs_conn *vc);

/* ---------------------------------------------------------- verbs_mr.c */

/*
 * verbs_mr.c -- protection domains and registrations on RDMA devices, as
 * the operations table and the data path use them
 */

int verbs_pd_alloc(struct peer *peer, char *err, size_t errlen);
void verbs_pd_free(struct peer *peer);
int verbs_mr_register(struct mr *mr, char *err, size_t errlen);
void verbs_mr_deregister(struct mr *mr);
int verbs_mr_advise(struct mr *mr, uint64_t offset, uint64_t len, int advice,
		uint32_t flags, char *err, size_t errlen);

uint32_t verbs_mr_lkey(const struct mr *mr);

/* --------------------------------------------------------- verbs_srq.c */

/*
 * verbs_srq.c -- shared receive queues of an RDMA device (ibv_srq)
 */

int verbs_srq_create(struct srq *srq, char *err, size_t errlen);
void verbs_srq_posted(struct srq *srq);
void verbs_srq_destroy(struct srq *srq);

/* --------------------------------------------------- transport_verbs.c */

/*
 * transport_verbs.c -- the rdma-core transport as its table entry and the
 * tests see it
 */

extern const struct transport_ops transport_verbs;
extern const struct transport_entry transport_verbs_entry;

/* what rpmad gave the transport at init (transport.h) */
extern const struct transport_env *verbs_env;

/*
 * transport_verbs_init -- find the RDMA devices there are (none is not an
 * error: every address then goes to the software transport)
 */
void transport_verbs_init(const struct transport_env *env);

/* transport_verbs_fini -- release rpmad's CM channel and devices */
void transport_verbs_fini(void);

/*
 * transport_verbs_device_for -- the RDMA device serving the address (as
 * the local address of a listener when `local`, else as a destination), or
 * NULL when no RDMA device does (or verbs support is unavailable).
 */
struct device *transport_verbs_device_for(const struct sockaddr_storage *ss,
		socklen_t len, bool local);

#endif /* RPMAD_VERBS_H */
