/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_internal.h -- the parts of the rdma-core transport, shared among
 *   transport_verbs.c  the operations table, rpmad's CM event channel and
 *                      the dispatch of its events
 *   verbs_dev.c        finding the RDMA device of an address, its async
 *                      events
 *   verbs_mr.c         protection domains, memory registration, advice
 *   verbs_cm.c         listening, connecting, accepting, tearing down
 *   verbs_qp.c         the queue pair: posting work and receives, reaping
 *                      completions
 *   verbs_gone.c       a device that went away: letting go of it
 *   verbs_hotplug.c    noticing that a device is being removed
 */

#ifndef RPMAD_VERBS_INTERNAL_H
#define RPMAD_VERBS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "conn.h"
#include "loop.h"

struct device;
struct ep;
struct incoming;
struct mr;
struct peer;

/* How many RDMA devices rpmad keeps track of. */
#define VERBS_MAX_DEVICES 16

/* Private data the RDMA CM carries (RDMA_PS_TCP over IB/RoCE). */
#define VERBS_CONNECT_PDATA_MAX 56
#define VERBS_ACCEPT_PDATA_MAX 196

/* What a flush reads back from the target (librpma's read-after-write). */
#define VERBS_FLUSH_READ_LEN 8

/* An RDMA device rpmad found, with the device object the core knows. */
struct verbs_dev {
	struct ibv_context *ctx;
	struct device *dev;
	struct loop_watch async_watch;
	struct loop_timer port_timer;	/* armed while its link is down */
	bool dead;		/* fatal error or removed */
};

/* Every CM id's context starts with one of these. */
enum verbs_ctx_kind {
	VCTX_EP = 1,
	VCTX_CONN,
};

struct verbs_ep {
	uint8_t kind;		/* VCTX_EP */
	struct ep *ep;
	struct rdma_cm_id *id;
};

enum vc_state {
	VC_RESOLVING_ADDR,	/* active: rdma_resolve_addr under way */
	VC_RESOLVING_ROUTE,	/* active: rdma_resolve_route under way */
	VC_CONNECTING,		/* active: rdma_connect sent */
	VC_WAITING,		/* passive: at the endpoint, for the app */
	VC_ACCEPTING,		/* passive: rdma_accept sent */
	VC_ESTABLISHED,
	VC_DISCONNECTING,	/* rdma_disconnect sent */
	VC_OVER,		/* reported to the core; waiting for release */
};

struct verbs_conn {
	uint8_t kind;		/* VCTX_CONN */
	struct conn *conn;	/* NULL until a passive one is adopted */
	struct rdma_cm_id *id;
	enum vc_state state;
	bool passive;
	bool remote_gone;	/* passive, before adoption: the peer left */
	uint8_t pdata[VERBS_CONNECT_PDATA_MAX];	/* active: for rdma_connect */
	uint8_t pdata_len;

	/* the queue pair (once created) and its completion queues */
	struct verbs_dev *vdev;
	struct ibv_comp_channel *channel;
	struct loop_watch channel_watch;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_qp *qp;
	uint32_t max_send_wr, max_recv_wr;
	uint64_t *flush_buf;	/* where flushes read into */
	struct ibv_mr *flush_mr;
	bool qp_failed;		/* the device put the queue pair in error */
	bool polled;		/* on the poller's list */

	/* work handed to the device, in order (wr_id = work->tp_seq) */
	struct work *out_head, *out_tail;
	uint64_t next_wr_id;
	uint32_t sends_out;

	/* receives handed to the device, in order (wr_id = sequence) */
	struct recv_slot *recvs;
	uint64_t recv_posted, recv_done;

	struct verbs_conn *prev, *next;	/* the poller's list */
	struct verbs_conn *all_prev, *all_next;	/* every one */
};

/* ---- transport_verbs.c ---- */
/* the CM event channel, watched by the loop; NULL when unavailable */
struct rdma_event_channel *verbs_cm_channel(char *err, size_t errlen);
/* every live connection state (for device-wide events) */
struct verbs_conn *verbs_conn_all(void);
void verbs_conn_link(struct verbs_conn *vc);
void verbs_conn_unlink(struct verbs_conn *vc);

/* ---- verbs_dev.c ---- */
/* the device object of a context the CM gave us (made on first sight) */
struct verbs_dev *verbs_dev_of(struct ibv_context *ctx);
/* the verbs device of a peer, or NULL when it is not an RDMA device */
struct verbs_dev *verbs_dev_of_peer(const struct peer *peer);
void verbs_dev_fini(void);

/*
 * forget a device that is gone: its async events; a removed one's context
 * too (a device made again is a new one), a failed one's stays known as
 * dead
 */
void verbs_dev_forget(struct verbs_dev *vd, bool removed);

/* the device of a CM id's context, also when it is gone already */
struct verbs_dev *verbs_dev_find(const struct ibv_context *ctx);

/* the live device whose verbs node is /dev/infiniband/<node> (uverbsN) */
struct verbs_dev *verbs_dev_of_node(const char *node);

/* ---- verbs_hotplug.c ---- */
/* start watching for devices being removed (once; a warning if it fails) */
void verbs_hotplug_watch(void);
void verbs_hotplug_fini(void);

/* ---- verbs_gone.c ---- */
/* the device was removed or failed: LOST, let go of everything on it */
void verbs_dev_gone(struct verbs_dev *vd, bool removed);

/* ---- verbs_mr.c ---- */
int verbs_pd_alloc(struct peer *peer, char *err, size_t errlen);
void verbs_pd_free(struct peer *peer);
int verbs_mr_register(struct mr *mr, char *err, size_t errlen);
void verbs_mr_deregister(struct mr *mr);
int verbs_mr_advise(struct mr *mr, uint64_t offset, uint64_t len,
		int advice, uint32_t flags, char *err, size_t errlen);
/* the client's address (the registration's iova) of rpmad's pointer */
uint64_t verbs_mr_iova(const struct mr *mr, const void *ptr);
uint32_t verbs_mr_lkey(const struct mr *mr);

/* ---- verbs_cm.c ---- */
int verbs_listen(struct ep *ep, const struct sockaddr_storage *ss,
		socklen_t len, char *err, size_t errlen);
void verbs_unlisten(struct ep *ep);
void verbs_incoming_drop(struct incoming *inc, bool reject);
int verbs_adopt(struct conn *conn, struct incoming *inc, char *err,
		size_t errlen);
int verbs_connect(struct conn *conn, const void *pdata, uint8_t pdata_len,
		char *err, size_t errlen);
int verbs_accept(struct conn *conn, const void *pdata, uint8_t pdata_len,
		char *err, size_t errlen);
void verbs_reject(struct conn *conn);
void verbs_disconnect(struct conn *conn);
void verbs_release(struct conn *conn, bool abort);
/* one CM event (copied, already acknowledged) for a listener or conn */
void verbs_cm_event(const struct rdma_cm_event *ev);
/*
 * the peer cannot be reached (the device gave up retrying, the link
 * stayed down): the queue pair fails and the connection is lost, as the
 * TCP transport reports a silent peer
 */
void verbs_conn_lost(struct verbs_conn *vc);

/* ---- verbs_qp.c ---- */
/* make the queue pair of vc on its CM id, for the conn's sizes */
int verbs_qp_create(struct verbs_conn *vc, struct peer *peer, char *err,
		size_t errlen);
void verbs_qp_destroy(struct verbs_conn *vc);
/* take every completion the device has; returns how many */
int verbs_qp_poll(struct verbs_conn *vc);
/* the device failed the queue pair: flush what it holds */
void verbs_qp_failed(struct verbs_conn *vc);
/* forget all work: the connection ends (the core flushes it) */
void verbs_qp_forget(struct verbs_conn *vc);
int verbs_post(struct conn *conn, struct work *w);
void verbs_recv_posted(struct conn *conn);
/* the poller of every queue pair */
void verbs_qp_init(void);

#endif /* RPMAD_VERBS_INTERNAL_H */
