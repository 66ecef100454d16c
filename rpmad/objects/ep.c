// SPDX-License-Identifier: BSD-3-Clause
/*
 * ep.c -- endpoints: listening, queueing incoming requests, handing them
 * to the application, shutting down
 */

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client.h"
#include "conn.h"
#include "daemon.h"
#include "device.h"
#include "ep.h"
#include "librpma.h"
#include "log.h"
#include "peer.h"
#include "tenant.h"
#include "transport.h"

/* The fields are this file's: other files have the functions of ep.h. */
struct ep {
	struct obj obj;
	struct peer *peer;
	const struct transport_ops *tp;
	void *tp_ep;
	int notify_sock;		/* one byte per waiting request */
	unsigned notify_owed;		/* bytes the socket had no room for */
	struct incoming *head, *tail;
	unsigned pending;
	char addr[EP_ADDR_MAX], port[EP_PORT_MAX];
};

void *
ep_tp(const struct ep *ep)
{
	return ep->tp_ep;
}

void
ep_set_tp(struct ep *ep, void *tp_ep)
{
	ep->tp_ep = tp_ep;
}

struct peer *
ep_peer(const struct ep *ep)
{
	return ep->peer;
}

const char *
ep_addr(const struct ep *ep)
{
	return ep->addr;
}

const char *
ep_port(const struct ep *ep)
{
	return ep->port;
}

void
ep_describe(const struct ep *ep, struct ep_info *info)
{
	memset(info, 0, sizeof(*info));
	memcpy(info->addr, ep->addr, sizeof(info->addr));
	memcpy(info->port, ep->port, sizeof(info->port));
	info->pending = ep->pending;
	info->transport = ep->tp->name;
}

/* The first port an unprivileged process may bind, as the kernel says. */
static unsigned
unprivileged_port_start(void)
{
	unsigned start = 1024;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_unprivileged_port_start", "re");
	if (f) {
		if (fscanf(f, "%u", &start) != 1)
			start = 1024;
		(void) fclose(f);
	}
	return start;
}

static unsigned
port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

/*
 * Every 1-byte send takes a buffer of its own: the socket holds a few
 * hundred before it is full. What did not fit is owed, and sent as the
 * application reads (each rpma_ep_next_conn_req reads one byte first).
 */
static void
notify_flush(struct ep *ep)
{
	if (ep->notify_owed > ep->pending)
		ep->notify_owed = ep->pending;
	char byte = 1;
	while (ep->notify_owed > 0 && send(ep->notify_sock, &byte, 1,
			MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
		ep->notify_owed--;
}

static void
notify(struct ep *ep)
{
	ep->notify_owed++;
	notify_flush(ep);
}

int
ep_incoming(struct ep *ep, struct incoming *inc)
{
	if (ep->pending >= EP_BACKLOG) {
		tenant_log(obj_client(&ep->obj), LOG_WARNING, "endpoint "
				"%s:%s: %u requests wait already; rejecting "
				"another", ep->addr, ep->port, ep->pending);
		return -ENOBUFS;
	}
	inc->ep = ep;
	inc->next = NULL;
	if (ep->tail)
		ep->tail->next = inc;
	else
		ep->head = inc;
	ep->tail = inc;
	ep->pending++;
	notify(ep);
	return 0;
}

static struct incoming *
ep_pop(struct ep *ep)
{
	struct incoming *inc = ep->head;
	if (inc == NULL)
		return NULL;
	ep->head = inc->next;
	if (ep->head == NULL)
		ep->tail = NULL;
	ep->pending--;
	return inc;
}

/* Stops listening; waiting requests are rejected. */
static void
ep_destroy(struct ep *ep)
{
	struct incoming *inc;
	while ((inc = ep_pop(ep)) != NULL)
		ep->tp->incoming_drop(inc, true);
	ep->tp->unlisten(ep);
	(void) close(ep->notify_sock);
	registry_remove(&ep->obj);
	ep->peer->users--;
	log_info("session %s: endpoint %s:%s closed",
			obj_client(&ep->obj)->name, ep->addr, ep->port);
	free(ep);
}

static void
ep_release(struct obj *o, enum obj_release how)
{
	(void) how;
	ep_destroy((struct ep *)o);
}

/* what the registry does with an endpoint whose client goes */
static const struct obj_type ep_type = { OBJ_EP, ep_release };

void
ep_handle_listen(struct req_ctx *rc)
{
	const Rpmad__EpListen *m = rc->req->ep_listen;
	struct peer *peer = peer_find(rc, m->peer_id);
	if (peer == NULL)
		return;
	if (m->addr == NULL || m->port == NULL) {
		req_fail(rc, RPMA_E_INVAL, 0, "no address or port");
		return;
	}
	if (tenant_admit_ep(rc))
		return;

	struct sockaddr_storage ss;
	socklen_t len;
	if (resolve_addr(rc, m->addr, m->port, &ss, &len))
		return;
	if (tenant_check_listen(rc, (struct sockaddr *)&ss))
		return;

	/* rpmad's privileges are not the client's: no privileged ports */
	if (rc->client->uid != 0 && port_of(&ss) < unprivileged_port_start()) {
		req_fail(rc, RPMA_E_PROVIDER, EACCES, "port %u is privileged "
				"and the client is not root", port_of(&ss));
		return;
	}

	struct ep *ep = calloc(1, sizeof(*ep));
	if (ep == NULL) {
		req_fail(rc, RPMA_E_NOMEM, ENOMEM, "endpoint");
		return;
	}
	ep->peer = peer;
	ep->tp = peer->dev->tp;
	(void) snprintf(ep->addr, sizeof(ep->addr), "%s", m->addr);
	(void) snprintf(ep->port, sizeof(ep->port), "%s", m->port);

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		req_fail(rc, RPMA_E_PROVIDER, errno, "socketpair");
		free(ep);
		return;
	}
	(void) fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	(void) shutdown(sv[0], SHUT_RD);
	(void) shutdown(sv[1], SHUT_WR);
	/* room for a byte per request of a full backlog, where allowed */
	int sndbuf = EP_BACKLOG * 1024;
	if (setsockopt(sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf,
			sizeof(sndbuf)))
		(void) setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf,
				sizeof(sndbuf));
	ep->notify_sock = sv[0];

	char err[256];
	int ret = ep->tp->listen(ep, &ss, len, err, sizeof(err));
	if (ret) {
		req_fail(rc, ret == -ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER,
				-ret, "%s", err);
		(void) close(sv[0]);
		(void) close(sv[1]);
		free(ep);
		return;
	}

	registry_add(&ep->obj, &ep_type, &rc->client->owner);
	peer->users++;
	log_info("session %s: listening at %s:%s", rc->client->name,
			ep->addr, ep->port);

	rpmad__ep_reply__init(&rc->ep);
	rc->ep.ep_id = ep->obj.id;
	rc->ep.fd_count = 1;
	req_pass_fd(rc, sv[1]);
	rc->resp.body_case = RPMAD__RESPONSE__BODY_EP;
	rc->resp.ep = &rc->ep;
}

static struct ep *
ep_find(struct req_ctx *rc, uint64_t id)
{
	return (struct ep *)req_find(rc, id, OBJ_EP);
}

void
ep_handle_shutdown(struct req_ctx *rc)
{
	struct ep *ep = ep_find(rc, rc->req->ep_shutdown->ep_id);
	if (ep == NULL)
		return;
	ep_destroy(ep);
	req_ok(rc);
}

void
ep_handle_next_conn_req(struct req_ctx *rc)
{
	const Rpmad__EpNextConnReq *m = rc->req->ep_next_conn_req;
	struct ep *ep = ep_find(rc, m->ep_id);
	if (ep == NULL)
		return;
	/* the application read a byte: room for one owed */
	notify_flush(ep);
	struct incoming *inc = ep_pop(ep);
	if (inc == NULL) {
		req_fail(rc, RPMA_E_NO_EVENT, 0, "no connection request waits");
		return;
	}

	struct conn *conn = conn_new_passive(rc, ep->peer, inc, m->cfg);
	if (conn == NULL) {
		/* the request stays for a later try; keep the count right */
		inc->next = ep->head;
		ep->head = inc;
		if (ep->tail == NULL)
			ep->tail = inc;
		ep->pending++;
		notify(ep);
		return;
	}
	free(inc);
	conn_reply_qp(rc, conn);
}
