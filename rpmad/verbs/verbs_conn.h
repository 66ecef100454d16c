/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_conn.h -- a connection's state in the rdma-core transport (its CM
 * id, its queue pair), as every part of the transport sees it
 */

#ifndef RPMAD_VERBS_CONN_H
#define RPMAD_VERBS_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "loop/loop.h"
#include "objects/conn.h"

struct verbs_dev;

/* Private data an RDMA CM connection request carries (RDMA_PS_TCP). */
#define VERBS_CONNECT_PDATA_MAX 56

/* What a flush reads back from the target (librpma's read-after-write). */
#define VERBS_FLUSH_READ_LEN 8

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
	/* set-up: the peer's answer (active) or its confirmation (passive) */
	struct loop_timer setup_timer;

	struct verbs_conn *prev, *next;	/* the poller's list */
	struct verbs_conn *all_prev, *all_next;	/* every one */
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

#endif /* RPMAD_VERBS_CONN_H */
