/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep.h -- listening endpoints and the requests waiting at them
 *
 * struct ep is opaque: its fields are ep.c's. A transport keeps its
 * listener in the endpoint (ep_tp(), ep_set_tp()) and hands it the
 * requests that arrive (struct incoming, the data it fills in);
 * rpmactl gets a plain description (ep_describe()).
 */

#ifndef RPMAD_EP_H
#define RPMAD_EP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "clients/reply.h"
#include "conn_pdata.h"
#include "core/registry.h"
#include "log/origin.h"

struct ep;
struct peer;
struct transport_ops;

/*
 * Most requests that may wait at one endpoint for the application. They
 * are shared fairly between their origins (origin.h: the remote hosts,
 * or the users of this rpmad they come from): the application is handed
 * one origin's request after another's, and a request arriving at a full
 * queue takes the place of the newest of the origin with the most, as
 * long as that one has more than its own; else it is refused. So one
 * origin's flood cannot keep another's requests out or behind it.
 */
#define EP_BACKLOG 1024

/* A connection request that arrived and waits for the application. */
struct incoming {
	struct ep *ep;
	void *tp_state;			/* the transport's connection state */
	uint8_t pdata[CONN_PDATA_MAX];
	uint8_t pdata_len;
	struct sockaddr_storage local, remote;
	socklen_t remote_len;
	/*
	 * The transport sets these when the connecting end is a client of
	 * this very rpmad: the request is then that user's doing, not its
	 * address's (every local client shares the address).
	 */
	bool from_local;
	uid_t from_uid;
	struct origin origin;		/* ep.c's: whose share it is */
	struct incoming *prev, *next;	/* its origin's, oldest first */
};

/* ep_tp -- the transport's own state of the endpoint, or NULL */
void *ep_tp(const struct ep *ep);

/* ep_set_tp -- set it (NULL: the transport let go, in unlisten()) */
void ep_set_tp(struct ep *ep, void *tp_ep);

/* ep_peer -- the client's peer the endpoint listens on */
struct peer *ep_peer(const struct ep *ep);

/* ep_addr, ep_port -- where it listens, as the client said (log lines) */
const char *ep_addr(const struct ep *ep);

/* ep_netns -- its client's network namespace (netns.h; -1: rpmad's) */
int ep_netns(const struct ep *ep);
const char *ep_port(const struct ep *ep);

#define EP_ADDR_MAX 64
#define EP_PORT_MAX 32

/* The largest shares of the waiting requests rpmactl shows. */
#define EP_INFO_SHARES 4

/* What rpmactl shows of an endpoint: plain data, filled by ep.c. */
struct ep_info {
	char addr[EP_ADDR_MAX], port[EP_PORT_MAX];
	unsigned pending;		/* requests waiting at it */
	const char *transport;		/* its transport's name */
	unsigned origins;		/* whom they come from: how many */
	struct {
		char origin[ORIGIN_NAME_MAX];
		unsigned pending;
	} share[EP_INFO_SHARES];	/* the largest, largest first */
	unsigned n_shares;
};

/* ep_describe -- an endpoint as rpmactl shows it */
void ep_describe(const struct ep *ep, struct ep_info *info);

/*
 * ep_incoming -- a transport's new request for the endpoint. Returns 0
 * (it may have taken the place of another origin's, which the transport
 * was told to drop, rejecting it), or -ENOBUFS when the queue is full and
 * its origin has its share already (logged, charged to its origin; the
 * transport rejects it then).
 */
int ep_incoming(struct ep *ep, struct incoming *inc);

void ep_handle_listen(struct req_ctx *rc);
void ep_handle_shutdown(struct req_ctx *rc);
void ep_handle_next_conn_req(struct req_ctx *rc);

#endif /* RPMAD_EP_H */
