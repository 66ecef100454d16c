/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep.h -- listening endpoints and the requests waiting at them
 *
 * struct ep is opaque: its fields are ep.c's. What a transport may call
 * of it, and the requests it hands in (struct incoming), stand in
 * transport/transport.h; rpmactl gets a plain description
 * (ep_describe()).
 */

#ifndef RPMAD_EP_H
#define RPMAD_EP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "clients/call.h"
#include "core/registry.h"
#include "log/origin.h"
#include "transport/transport.h"

struct conn;
struct conn_cfg;
struct peer;

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
 * ep_listen -- an endpoint of the calling client listening at addr:port
 * (numbers) for the peer; the client's end of its notification socket
 * in *client_fd (the caller's to pass on and close). NULL with the call
 * failed.
 */
struct ep *ep_listen(struct call *call, struct peer *peer, const char *addr,
		const char *port, int *client_fd);

/* ep_id -- the number the client knows the endpoint by */
uint64_t ep_id(const struct ep *ep);

/* ep_find -- the calling client's endpoint `id`; NULL with the call failed */
struct ep *ep_find(struct call *call, uint64_t id);

/* ep_shutdown -- stops listening; waiting requests are rejected */
void ep_shutdown(struct ep *ep);

/*
 * ep_next_conn -- a connection for the oldest request waiting at the
 * endpoint (conn_new_passive); NULL with the call failed (RPMA_E_NO_EVENT
 * when none waits; otherwise the request waits on).
 */
struct conn *ep_next_conn(struct call *call, struct ep *ep,
		const struct conn_cfg *cfg);

#endif /* RPMAD_EP_H */
