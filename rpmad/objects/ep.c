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
#include <utlist.h>
#include <uthash.h>

#include "clients/client.h"
#include "clients/tenant.h"
#include "core/daemon.h"
#include "librpma.h"
#include "log/log.h"
#include "objects/conn.h"
#include "objects/device.h"
#include "objects/ep.h"
#include "objects/peer.h"
#include "transport/transport.h"

/* One origin's requests waiting at an endpoint. */
struct ep_origin {
	struct origin key;
	struct incoming *queue;		/* oldest first (utlist DL) */
	unsigned n;
	struct ep_origin *prev, *next;	/* the ring of turns */
	UT_hash_handle hh;
};

/* The fields are this file's: other files have the functions of ep.h. */
struct ep {
	struct obj obj;
	struct peer *peer;
	const struct transport_ops *tp;
	void *tp_ep;
	int notify_sock;		/* one byte per waiting request */
	unsigned notify_owed;		/* bytes the socket had no room for */
	/* the origins with requests waiting, by key and in a ring of turns */
	struct ep_origin *origins;
	struct ep_origin *turn;		/* whose request goes out next */
	unsigned pending;
	char addr[EP_ADDR_MAX], port[EP_PORT_MAX];
	int netns;			/* its client's (client.h), not owned */
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

int
ep_netns(const struct ep *ep)
{
	return ep->netns;
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

uint64_t
ep_id(const struct ep *ep)
{
	return ep->obj.id;
}

void
ep_describe(const struct ep *ep, struct ep_info *info)
{
	memset(info, 0, sizeof(*info));
	memcpy(info->addr, ep->addr, sizeof(info->addr));
	memcpy(info->port, ep->port, sizeof(info->port));
	info->pending = ep->pending;
	info->transport = ep->tp->name;
	/* the largest shares, by insertion into a short sorted list */
	const struct ep_origin *top[EP_INFO_SHARES];
	unsigned n = 0;
	for (const struct ep_origin *o = ep->origins; o; o = o->hh.next) {
		info->origins++;
		unsigned i = n < EP_INFO_SHARES ? n++ : EP_INFO_SHARES;
		while (i > 0 && top[i - 1]->n < o->n) {
			if (i < EP_INFO_SHARES)
				top[i] = top[i - 1];
			i--;
		}
		if (i < EP_INFO_SHARES)
			top[i] = o;
	}
	for (unsigned i = 0; i < n; i++) {
		origin_name(&top[i]->key, info->share[i].origin,
				sizeof(info->share[i].origin));
		info->share[i].pending = top[i]->n;
	}
	info->n_shares = n;
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

/* ------------------------------------------- the requests, by origin */

static struct ep_origin *
origin_find(const struct ep *ep, const struct origin *key)
{
	struct ep_origin *o;
	HASH_FIND(hh, ep->origins, key, sizeof(*key), o);
	return o;
}

/* The origin's entry, made (last in the ring of turns) when new; NULL. */
static struct ep_origin *
origin_get(struct ep *ep, const struct origin *key)
{
	struct ep_origin *o = origin_find(ep, key);
	if (o)
		return o;
	o = calloc(1, sizeof(*o));
	if (o == NULL)
		return NULL;
	o->key = *key;
	HASH_ADD(hh, ep->origins, key, sizeof(o->key), o);
	/* the turn is where the ring starts: a new origin goes last */
	CDL_PREPEND2(ep->turn, o, prev, next);
	ep->turn = o->next;
	return o;
}

/* An origin without requests leaves (its turn passes to the next one). */
static void
origin_drop_if_empty(struct ep *ep, struct ep_origin *o)
{
	if (o->n)
		return;
	CDL_DELETE2(ep->turn, o, prev, next);
	HASH_DEL(ep->origins, o);
	free(o);
}

static void
origin_push(struct ep_origin *o, struct incoming *inc)
{
	DL_APPEND(o->queue, inc);
	o->n++;
}

static struct incoming *
origin_take(struct ep_origin *o, struct incoming *inc)
{
	DL_DELETE(o->queue, inc);
	o->n--;
	return inc;
}

/* The origin with the most requests waiting (the queue is full). */
static struct ep_origin *
heaviest(const struct ep *ep)
{
	struct ep_origin *o, *tmp, *most = NULL;
	HASH_ITER(hh, ep->origins, o, tmp) {
		if (most == NULL || o->n > most->n)
			most = o;
	}
	return most;
}

/* A line an origin caused, charged to it (never to the endpoint's owner). */
#define ep_origin_log(ep, o, level, fmt, ...) \
	tenant_log_origin(o, level, "endpoint %s:%s: " fmt " (from %s)", \
			(ep)->addr, (ep)->port, __VA_ARGS__)

int
ep_incoming(struct ep *ep, struct incoming *inc)
{
	inc->ep = ep;
	if (inc->from_local)
		origin_of_user(inc->from_uid, &inc->origin);
	else
		origin_of_addr(&inc->remote, &inc->origin);
	char who[ORIGIN_NAME_MAX];
	origin_name(&inc->origin, who, sizeof(who));

	struct ep_origin *mine = origin_find(ep, &inc->origin);
	unsigned have = mine ? mine->n : 0;
	struct ep_origin *most = NULL;
	if (ep->pending >= EP_BACKLOG) {
		most = heaviest(ep);
		if (most->n <= have + 1) {
			ep_origin_log(ep, &inc->origin, LOG_WARNING, "%u "
					"requests wait already, %u of them of "
					"this origin's; rejecting another",
					ep->pending, have, who);
			return -ENOBUFS;
		}
	}
	if (mine == NULL && (mine = origin_get(ep, &inc->origin)) == NULL)
		return -ENOMEM;
	origin_push(mine, inc);
	if (most == NULL) {
		ep->pending++;
		notify(ep);
		return 0;
	}
	/* its place, not a new one: the application's count stays */
	char them[ORIGIN_NAME_MAX];
	origin_name(&most->key, them, sizeof(them));
	ep_origin_log(ep, &most->key, LOG_WARNING, "%u requests wait, %u of "
			"them of this origin's; rejecting its newest for one "
			"of %s", ep->pending, most->n, who, them);
	/* the newest: the oldest is the nearest to being served */
	struct incoming *evicted = origin_take(most, most->queue->prev);
	origin_drop_if_empty(ep, most);
	ep->tp->incoming_drop(evicted, true);
	return 0;
}

/* The next request for the application: each origin in its turn. */
static struct incoming *
ep_pop(struct ep *ep)
{
	struct ep_origin *o = ep->turn;
	if (o == NULL)
		return NULL;
	struct incoming *inc = origin_take(o, o->queue);
	ep->turn = o->next;
	origin_drop_if_empty(ep, o);
	ep->pending--;
	return inc;
}

/* Puts a request back where ep_pop took it (the application could not). */
static void
ep_unpop(struct ep *ep, struct incoming *inc)
{
	struct ep_origin *o = origin_get(ep, &inc->origin);
	if (o == NULL) {
		ep->tp->incoming_drop(inc, true);
		return;
	}
	DL_PREPEND(o->queue, inc);
	o->n++;
	ep->turn = o;
	ep->pending++;
	notify(ep);
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

struct ep *
ep_listen(struct call *call, struct peer *peer, const char *addr,
		const char *port, int *client_fd)
{
	if (addr == NULL || port == NULL) {
		call_fail(call, RPMA_E_INVAL, 0, "no address or port");
		return NULL;
	}
	if (tenant_admit_ep(call))
		return NULL;

	struct sockaddr_storage ss;
	socklen_t len;
	if (resolve_addr(call, addr, port, &ss, &len))
		return NULL;
	if (tenant_check_listen(call, (struct sockaddr *) &ss))
		return NULL;

	/* rpmad's privileges are not the client's: no privileged ports */
	if (call->client->uid != 0 &&
			port_of(&ss) < unprivileged_port_start()) {
		call_fail(call, RPMA_E_PROVIDER, EACCES,
				"port %u is privileged "
				"and the client is not root",
				port_of(&ss));
		return NULL;
	}

	struct ep *ep = calloc(1, sizeof(*ep));
	if (ep == NULL) {
		call_fail(call, RPMA_E_NOMEM, ENOMEM, "endpoint");
		return NULL;
	}
	ep->peer = peer;
	ep->tp = peer->dev->tp;
	(void) snprintf(ep->addr, sizeof(ep->addr), "%s", addr);
	(void) snprintf(ep->port, sizeof(ep->port), "%s", port);

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		call_fail(call, RPMA_E_PROVIDER, errno, "socketpair");
		free(ep);
		return NULL;
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
	/* known before it is the client's: the transport listens there */
	ep->netns = call->client->netns;

	char err[256];
	int ret = ep->tp->listen(ep, &ss, len, err, sizeof(err));
	if (ret) {
		call_fail(call, ret == -ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER,
				-ret, "%s", err);
		(void) close(sv[0]);
		(void) close(sv[1]);
		free(ep);
		return NULL;
	}

	registry_add(&ep->obj, &ep_type, &call->client->owner);
	peer->users++;
	log_info("session %s: listening at %s:%s", call->client->name, ep->addr,
			ep->port);

	*client_fd = sv[1];
	return ep;
}

struct ep *
ep_find(struct call *call, uint64_t id)
{
	return (struct ep *) call_find(call, id, OBJ_EP);
}

void
ep_shutdown(struct ep *ep)
{
	ep_destroy(ep);
}

struct conn *
ep_next_conn(struct call *call, struct ep *ep, const struct conn_cfg *cfg)
{
	/* the application read a byte: room for one owed */
	notify_flush(ep);
	struct incoming *inc = ep_pop(ep);
	if (inc == NULL) {
		call_fail(call, RPMA_E_NO_EVENT, 0,
				"no connection request "
				"waits");
		return NULL;
	}

	struct conn *conn = conn_new_passive(call, ep->peer, inc, cfg);
	if (conn == NULL) {
		/* the request stays for a later try; keep the count right */
		ep_unpop(ep, inc);
		return NULL;
	}
	free(inc);
	return conn;
}
