// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_cm.c -- connections through the RDMA CM: listening and the
 * requests that arrive, connecting (address, route, connect), accepting,
 * rejecting, the events that end a connection, and tearing down
 *
 * Events map to the core's: ESTABLISHED; DISCONNECTED -> CLOSED;
 * REJECTED -> REJECTED; ADDR_ERROR, ROUTE_ERROR and UNREACHABLE ->
 * CONN_END_UNREACHABLE while connecting; CONNECT_ERROR and DEVICE_REMOVAL
 * -> LOST (as librpma 0.12 maps them; verbs_gone.c lets go of a removed
 * device). A connection that was up, or the passive side of one (whose
 * client did reach it), is LOST by an error or a withdrawn request
 * instead.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "conn.h"
#include "device.h"
#include "ep.h"
#include "librpma.h"
#include "log.h"
#include "peer.h"
#include "verbs_internal.h"

/* ---------------------------------------------------------- bookkeeping */

static struct verbs_conn *
vc_new(void)
{
	struct verbs_conn *vc = calloc(1, sizeof(*vc));
	if (vc == NULL)
		return NULL;
	vc->kind = VCTX_CONN;
	verbs_conn_link(vc);
	return vc;
}

/* The queue pair first, then the id (the CM wants it that way). */
static void
vc_free(struct verbs_conn *vc)
{
	verbs_qp_destroy(vc);
	if (vc->id && rdma_destroy_id(vc->id))
		log_warning("verbs: rdma_destroy_id: %s", strerror(errno));
	vc->id = NULL;
	verbs_conn_unlink(vc);
	free(vc);
}

static uint32_t
timeout_ms(const struct conn *conn)
{
	return conn->timeout_ms ? conn->timeout_ms : RPMA_DEFAULT_TIMEOUT_MS;
}

static const char *
ctx_name(const struct ibv_context *ctx)
{
	return ctx ? ibv_get_device_name(ctx->device) : "none";
}

/* The connection is over: tell the core (once). */
static void
vc_over(struct verbs_conn *vc, enum rpma_conn_event event)
{
	if (vc->state == VC_OVER)
		return;
	if (vc->conn == NULL) {
		/* waiting at the endpoint: the application learns it later */
		vc->remote_gone = true;
		return;
	}
	/* what the device completed before counts as done */
	(void) verbs_qp_poll(vc);
	vc->state = VC_OVER;
	conn_ended(vc->conn, event);
}

/* ---------------------------------------------------------------- passive */

int
verbs_listen(struct ep *ep, const struct sockaddr_storage *ss,
		socklen_t len, char *err, size_t errlen)
{
	struct verbs_dev *vd = verbs_dev_of_peer(ep->peer);
	struct rdma_event_channel *ch = verbs_cm_channel(err, errlen);
	if (ch == NULL)
		return -ENODEV;
	struct verbs_ep *vep = calloc(1, sizeof(*vep));
	if (vep == NULL) {
		(void) snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	vep->kind = VCTX_EP;
	vep->ep = ep;

	int ret;
	const char *call = "rdma_create_id";
	if (rdma_create_id(ch, &vep->id, vep, RDMA_PS_TCP))
		goto err_errno;
	call = "rdma_bind_addr";
	if (rdma_bind_addr(vep->id, (struct sockaddr *)ss))
		goto err_errno;
	if (vep->id->verbs && vep->id->verbs != vd->ctx) {
		(void) snprintf(err, errlen, "cannot listen at %s:%s: it is "
				"served by RDMA device %s, the peer's device "
				"is %s", ep->addr, ep->port,
				ctx_name(vep->id->verbs), ep->peer->dev->name);
		ret = -EINVAL;
		goto err;
	}
	call = "rdma_listen";
	if (rdma_listen(vep->id, EP_BACKLOG))
		goto err_errno;
	ep->tp_ep = vep;
	return 0;

err_errno:
	/* the core adds the errno's text */
	ret = errno ? -errno : -EIO;
	(void) snprintf(err, errlen, "cannot listen at %s:%s: %s", ep->addr,
			ep->port, call);
err:
	if (vep->id)
		(void) rdma_destroy_id(vep->id);
	free(vep);
	return ret;
}

void
verbs_unlisten(struct ep *ep)
{
	struct verbs_ep *vep = ep->tp_ep;
	if (vep == NULL)
		return;
	if (rdma_destroy_id(vep->id))
		log_warning("verbs: rdma_destroy_id: %s", strerror(errno));
	free(vep);
	ep->tp_ep = NULL;
}

static void
refuse_request(struct rdma_cm_id *id)
{
	(void) rdma_reject(id, NULL, 0);
	(void) rdma_destroy_id(id);
}

/* A CONNECT_REQUEST: a new id waits at the endpoint for the application. */
static void
request_arrived(const struct rdma_cm_event *ev)
{
	struct verbs_ep *vep = ev->listen_id->context;
	struct ep *ep = vep->ep;
	struct rdma_cm_id *id = ev->id;

	struct verbs_dev *vd = verbs_dev_of_peer(ep->peer);
	if (vd == NULL || id->verbs != vd->ctx) {
		log_warning("verbs: endpoint %s:%s: a request came through "
				"RDMA device %s, the endpoint's peer uses %s; "
				"rejecting it", ep->addr, ep->port,
				ctx_name(id->verbs), ep->peer->dev->name);
		refuse_request(id);
		return;
	}
	struct verbs_conn *vc = vc_new();
	struct incoming *inc = calloc(1, sizeof(*inc));
	if (vc == NULL || inc == NULL) {
		log_warning("verbs: endpoint %s:%s: out of memory for a "
				"request; rejecting it", ep->addr, ep->port);
		if (vc)
			vc_free(vc);
		free(inc);
		refuse_request(id);
		return;
	}
	vc->passive = true;
	vc->id = id;
	vc->state = VC_WAITING;
	id->context = vc;

	inc->tp_state = vc;
	inc->pdata_len = ev->param.conn.private_data ?
		ev->param.conn.private_data_len : 0;
	if (inc->pdata_len)
		memcpy(inc->pdata, ev->param.conn.private_data,
				inc->pdata_len);
	memcpy(&inc->local, &id->route.addr.src_storage, sizeof(inc->local));
	memcpy(&inc->remote, &id->route.addr.dst_storage,
			sizeof(inc->remote));
	inc->remote_len = inc->remote.ss_family == AF_INET6 ?
		sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	if (ep_incoming(ep, inc))
		verbs_incoming_drop(inc, true);
}

void
verbs_incoming_drop(struct incoming *inc, bool reject)
{
	struct verbs_conn *vc = inc->tp_state;
	if (reject && !vc->remote_gone)
		(void) rdma_reject(vc->id, NULL, 0);
	vc_free(vc);
	free(inc);
}

int
verbs_adopt(struct conn *conn, struct incoming *inc, char *err,
		size_t errlen)
{
	struct verbs_conn *vc = inc->tp_state;
	vc->conn = conn;
	/* gone already (its device too, perhaps): accepting reports it */
	int ret = vc->remote_gone ? 0 :
		verbs_qp_create(vc, conn->peer, err, errlen);
	if (ret) {
		/* the request stays at the endpoint, as it was */
		vc->conn = NULL;
		return ret;
	}
	conn->tp_conn = vc;
	return 0;
}

int
verbs_accept(struct conn *conn, const void *pdata, uint8_t pdata_len,
		char *err, size_t errlen)
{
	struct verbs_conn *vc = conn->tp_conn;
	if (pdata_len > VERBS_ACCEPT_PDATA_MAX) {
		(void) snprintf(err, errlen, "private data of %u bytes: an "
				"RDMA CM accept carries at most %d",
				pdata_len, VERBS_ACCEPT_PDATA_MAX);
		return -EINVAL;
	}
	if (vc->remote_gone) {
		vc->state = VC_OVER;
		conn_ended(conn, RPMA_CONN_LOST);
		return 0;
	}
	struct rdma_conn_param param = {
		.private_data = pdata_len ? pdata : NULL,
		.private_data_len = pdata_len,
		.responder_resources = RDMA_MAX_RESP_RES,
		.initiator_depth = RDMA_MAX_INIT_DEPTH,
		.flow_control = 1,
		.rnr_retry_count = 7,	/* infinite, as librpma */
	};
	if (rdma_accept(vc->id, &param)) {
		int e = errno ? errno : EIO;
		(void) snprintf(err, errlen, "rdma_accept");
		return -e;
	}
	vc->state = VC_ACCEPTING;
	return 0;
}

void
verbs_reject(struct conn *conn)
{
	struct verbs_conn *vc = conn->tp_conn;
	if (vc == NULL)
		return;
	if (!vc->remote_gone && vc->id && rdma_reject(vc->id, NULL, 0))
		log_info("verbs: connection qp %u: rdma_reject: %s",
				conn->qp_num, strerror(errno));
	vc->state = VC_OVER;
}

/* ----------------------------------------------------------------- active */

int
verbs_connect(struct conn *conn, const void *pdata, uint8_t pdata_len,
		char *err, size_t errlen)
{
	if (pdata_len > VERBS_CONNECT_PDATA_MAX) {
		(void) snprintf(err, errlen, "private data of %u bytes: an "
				"RDMA CM connection request carries at most %d",
				pdata_len, VERBS_CONNECT_PDATA_MAX);
		return -EINVAL;
	}
	struct rdma_event_channel *ch = verbs_cm_channel(err, errlen);
	if (ch == NULL)
		return -ENODEV;
	struct verbs_conn *vc = vc_new();
	if (vc == NULL) {
		(void) snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	vc->conn = conn;
	vc->state = VC_RESOLVING_ADDR;
	if (pdata_len)
		memcpy(vc->pdata, pdata, pdata_len);
	vc->pdata_len = pdata_len;

	const char *call = "rdma_create_id";
	if (rdma_create_id(ch, &vc->id, vc, RDMA_PS_TCP))
		goto err;
	call = "rdma_resolve_addr";
	if (rdma_resolve_addr(vc->id, NULL, (struct sockaddr *)&conn->remote,
			(int)timeout_ms(conn)))
		goto err;
	conn->tp_conn = vc;
	return 0;

err:;
	int e = errno ? errno : EIO;
	(void) snprintf(err, errlen, "connecting to %s: %s",
			conn->remote_name, call);
	vc_free(vc);
	return -e;
}

static void
addr_resolved(struct verbs_conn *vc)
{
	struct conn *conn = vc->conn;
	if (vc->state != VC_RESOLVING_ADDR)
		return;
	struct verbs_dev *vd = verbs_dev_of_peer(conn->peer);
	if (vd == NULL || vc->id->verbs != vd->ctx) {
		log_info("verbs: connection qp %u: %s is reached through RDMA "
				"device %s, the peer's device is %s",
				conn->qp_num, conn->remote_name,
				ctx_name(vc->id->verbs), conn->peer->dev->name);
		vc_over(vc, CONN_END_UNREACHABLE);
		return;
	}
	if (rdma_resolve_route(vc->id, (int)timeout_ms(conn))) {
		log_info("verbs: connection qp %u: rdma_resolve_route: %s",
				conn->qp_num, strerror(errno));
		vc_over(vc, CONN_END_UNREACHABLE);
		return;
	}
	vc->state = VC_RESOLVING_ROUTE;
}

static void
route_resolved(struct verbs_conn *vc)
{
	struct conn *conn = vc->conn;
	if (vc->state != VC_RESOLVING_ROUTE)
		return;
	char err[256];
	if (verbs_qp_create(vc, conn->peer, err, sizeof(err))) {
		log_warning("verbs: connection qp %u: %s", conn->qp_num, err);
		vc_over(vc, RPMA_CONN_LOST);
		return;
	}
	struct rdma_conn_param param = {
		.private_data = vc->pdata_len ? vc->pdata : NULL,
		.private_data_len = vc->pdata_len,
		.responder_resources = RDMA_MAX_RESP_RES,
		.initiator_depth = RDMA_MAX_INIT_DEPTH,
		.flow_control = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,	/* infinite, as librpma */
	};
	if (rdma_connect(vc->id, &param)) {
		log_info("verbs: connection qp %u: rdma_connect: %s",
				conn->qp_num, strerror(errno));
		vc_over(vc, CONN_END_UNREACHABLE);
		return;
	}
	vc->state = VC_CONNECTING;
	conn_set_names(conn, &vc->id->route.addr.src_storage, NULL);
}

/* ------------------------------------------------------------ tear-down */

void
verbs_disconnect(struct conn *conn)
{
	struct verbs_conn *vc = conn->tp_conn;
	if (vc == NULL)
		return;
	switch (vc->state) {
	case VC_ESTABLISHED:
		/* the device flushes what is left; both sides see CLOSED */
		if (rdma_disconnect(vc->id)) {
			log_info("verbs: connection qp %u: rdma_disconnect: %s",
					conn->qp_num, strerror(errno));
			vc_over(vc, RPMA_CONN_CLOSED);
			return;
		}
		vc->state = VC_DISCONNECTING;
		break;
	case VC_DISCONNECTING:
	case VC_OVER:
		break;
	default:
		/* not up yet: the core reports the close; release ends it */
		vc->state = VC_OVER;
		break;
	}
}

void
verbs_release(struct conn *conn, bool abort)
{
	struct verbs_conn *vc = conn->tp_conn;
	if (vc == NULL)
		return;
	if (!abort && vc->state == VC_ESTABLISHED)
		(void) rdma_disconnect(vc->id);
	vc_free(vc);
	conn->tp_conn = NULL;
}

void
verbs_conn_lost(struct verbs_conn *vc)
{
	/* the device stops touching the buffers; what it held is flushed */
	verbs_qp_failed(vc);
	/* the CM's view follows: it stops waiting for a peer that is gone */
	if (vc->state == VC_ESTABLISHED)
		(void) rdma_disconnect(vc->id);
	vc_over(vc, RPMA_CONN_LOST);
}

/* --------------------------------------------------------------- events */

static void
established(struct verbs_conn *vc, const struct rdma_cm_event *ev)
{
	if (vc->state != VC_CONNECTING && vc->state != VC_ACCEPTING)
		return;
	vc->state = VC_ESTABLISHED;
	if (vc->passive)
		conn_established(vc->conn, NULL, 0, false);
	else
		conn_established(vc->conn, ev->param.conn.private_data,
				ev->param.conn.private_data_len, true);
}

/*
 * Whether a failure means the connection was lost rather than not made:
 * it was up, or this is the passive side (its client reached it).
 */
static bool
was_reached(const struct verbs_conn *vc)
{
	return vc->passive || vc->state == VC_ESTABLISHED ||
		vc->state == VC_DISCONNECTING;
}

/* The IB CM's reasons for a REJ that an operator meets (IBTA 12.6.7). */
static const char *
reject_reason(int reason)
{
	switch (reason) {
	case 3: return "no resources at the peer";
	case 4: return "timed out";
	case 8: return "nothing listens there";
	case 10: return "stale connection (the peer remembers an old one)";
	case 28: return "refused by the peer's application";
	default: return "refused by the peer's connection manager";
	}
}

static void
conn_event(struct verbs_conn *vc, const struct rdma_cm_event *ev)
{
	const char *what = rdma_event_str(ev->event);
	if (vc->conn)
		log_debug("verbs: connection qp %u: %s (status %d)",
				vc->conn->qp_num, what, ev->status);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		addr_resolved(vc);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		route_resolved(vc);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		established(vc, ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		/* the reason says who refused: the peer, or its kernel's CM */
		if (vc->conn)
			log_info("verbs: connection qp %u: rejected: %s "
					"(IB CM reason %d)", vc->conn->qp_num,
					reject_reason(ev->status), ev->status);
		/* passive: the client withdrew its request */
		vc_over(vc, vc->passive ? RPMA_CONN_LOST : RPMA_CONN_REJECTED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (vc->conn)
			log_info("verbs: connection qp %u: %s (status %d)",
					vc->conn->qp_num, what, ev->status);
		vc_over(vc, was_reached(vc) ||
				ev->event == RDMA_CM_EVENT_CONNECT_ERROR ?
				RPMA_CONN_LOST : CONN_END_UNREACHABLE);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		vc_over(vc, RPMA_CONN_CLOSED);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* verbs_cm_event let go of the whole device already */
		vc_over(vc, RPMA_CONN_LOST);
		break;
	default:
		break;	/* TIMEWAIT_EXIT, ADDR_CHANGE: nothing to do */
	}
}

void
verbs_cm_event(const struct rdma_cm_event *ev)
{
	/* the first id to hear it: everything on the device goes now */
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL && ev->id &&
			ev->id->verbs) {
		struct verbs_dev *vd = verbs_dev_find(ev->id->verbs);
		if (vd)
			verbs_dev_gone(vd, true);
		return;
	}
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		request_arrived(ev);
		return;
	}
	void *ctx = ev->id ? ev->id->context : NULL;
	if (ctx == NULL)
		return;
	if (*(const uint8_t *)ctx == VCTX_EP) {
		const struct verbs_ep *vep = ctx;
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			log_warning("verbs: endpoint %s:%s: its RDMA device "
					"was removed", vep->ep->addr,
					vep->ep->port);
		return;
	}
	conn_event(ctx, ev);
}
