/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep.h -- listening endpoints and the requests waiting at them
 */

#ifndef RPMAD_EP_H
#define RPMAD_EP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "conn_pdata.h"
#include "registry.h"
#include "reply.h"

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

struct ep {
	struct obj obj;
	struct peer *peer;
	const struct transport_ops *tp;
	void *tp_ep;
	int notify_sock;		/* one byte per waiting request */
	unsigned notify_owed;		/* bytes the socket had no room for */
	struct incoming *head, *tail;
	unsigned pending;
	char addr[64], port[32];
};

/*
 * ep_incoming -- a transport's new request for the endpoint. Returns 0, or
 * -ENOBUFS when the backlog is full (logged; the transport rejects it then).
 */
int ep_incoming(struct ep *ep, struct incoming *inc);

void ep_handle_listen(struct req_ctx *rc);
void ep_handle_shutdown(struct req_ctx *rc);
void ep_handle_next_conn_req(struct req_ctx *rc);

#endif /* RPMAD_EP_H */
