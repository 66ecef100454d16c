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

#include "conn_pdata.h"
#include "registry.h"
#include "reply.h"

struct ep;
struct peer;
struct transport_ops;

/* Most requests that may wait at one endpoint for the application. */
#define EP_BACKLOG 1024

/* A connection request that arrived and waits for the application. */
struct incoming {
	struct ep *ep;
	void *tp_state;			/* the transport's connection state */
	uint8_t pdata[CONN_PDATA_MAX];
	uint8_t pdata_len;
	struct sockaddr_storage local, remote;
	socklen_t remote_len;
	struct incoming *next;
};

/* ep_tp -- the transport's own state of the endpoint, or NULL */
void *ep_tp(const struct ep *ep);

/* ep_set_tp -- set it (NULL: the transport let go, in unlisten()) */
void ep_set_tp(struct ep *ep, void *tp_ep);

/* ep_peer -- the client's peer the endpoint listens on */
struct peer *ep_peer(const struct ep *ep);

/* ep_addr, ep_port -- where it listens, as the client said (log lines) */
const char *ep_addr(const struct ep *ep);
const char *ep_port(const struct ep *ep);

#define EP_ADDR_MAX 64
#define EP_PORT_MAX 32

/* What rpmactl shows of an endpoint: plain data, filled by ep.c. */
struct ep_info {
	char addr[EP_ADDR_MAX], port[EP_PORT_MAX];
	unsigned pending;		/* requests waiting at it */
	const char *transport;		/* its transport's name */
};

/* ep_describe -- an endpoint as rpmactl shows it */
void ep_describe(const struct ep *ep, struct ep_info *info);

/*
 * ep_incoming -- a transport's new request for the endpoint. Returns 0, or
 * -ENOBUFS when the backlog is full (logged; the transport rejects it then).
 */
int ep_incoming(struct ep *ep, struct incoming *inc);

void ep_handle_listen(struct req_ctx *rc);
void ep_handle_shutdown(struct req_ctx *rc);
void ep_handle_next_conn_req(struct req_ctx *rc);

#endif /* RPMAD_EP_H */
