// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_cm.c -- a connection through the RDMA CM, from the request to its
 * end: adopting a request that waited at its endpoint and accepting or
 * rejecting it, connecting (address, route, connect), the events of a
 * connection, disconnecting and releasing it
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
#include <string.h>

#include "librpma.h"
#include "verbs/verbs.h"

/* Private data an RDMA CM accept carries (RDMA_PS_TCP over IB/RoCE). */
#define VERBS_ACCEPT_PDATA_MAX 196

/* ---------------------------------------------------------- bookkeeping */

/* The queue pair first, then the id (the CM wants it that way). */
static void
vc_free(struct verbs_conn *vc)
{
	verbs_qp_destroy(vc);
	verbs_conn_free(vc);
}

/* The connection is over: what the device completed before counts. */
static void
vc_over(struct verbs_conn *vc, enum rpma_conn_event event)
{
	(void) verbs_work_poll(vc);
	verbs_conn_over(vc, event);
}

static uint32_t
timeout_ms(const struct conn *conn)
{
	uint32_t ms = conn_timeout_ms(conn);
	return ms ? ms : RPMA_DEFAULT_TIMEOUT_MS;
}

/*
 * Set-up has a deadline of rpmad's own at the steps that wait on the
 * other side, whatever the CM's retries would allow: the active side
 * waits accept_timeout_ms for the server application's answer (then
 * unreachable, as when the CM gives up), the passive side
 * setup_timeout_ms for the client's confirmation after rdma_accept (then
 * lost, as a CM connect error is).
 */
static void
setup_overdue(struct loop_timer *t)
{
	struct verbs_conn *vc = t->arg;
	struct conn *conn = vc->conn;
	if (vc->passive) {
		remote_log(&vc->id->route.addr.dst_storage, LOG_NOTICE,
				"verbs: connection qp %u: %s did not confirm "
				"the accepted connection within %u ms; it is "
				"lost",
				conn_qp_num(conn), conn_remote_name(conn),
				verbs_env->set.setup_timeout_ms);
		vc_over(vc, RPMA_CONN_LOST);
	} else {
		conn_log(conn, LOG_INFO,
				"verbs: connection qp %u: %s did "
				"not accept or "
				"reject the request within %u ms",
				conn_qp_num(conn), conn_remote_name(conn),
				verbs_env->set.accept_timeout_ms);
		vc_over(vc, CONN_END_UNREACHABLE);
	}
}

static void
setup_deadline(struct verbs_conn *vc, uint32_t ms)
{
	vc->setup_timer.fn = setup_overdue;
	loop_timer_arm(verbs_env->loop, &vc->setup_timer,
			(uint64_t) ms * 1000000);
}

/* ---------------------------------------------------------------- passive */

int
verbs_adopt(struct conn *conn, struct incoming *inc, char *err,
		size_t errlen)
{
	struct verbs_conn *vc = inc->tp_state;
	vc->conn = conn;
	/* gone already (its device too, perhaps): accepting reports it */
	int ret = vc->remote_gone ? 0 :
		verbs_qp_create(vc, conn_peer(conn), err, errlen);
	if (ret) {
		/* the request stays at the endpoint, as it was */
		vc->conn = NULL;
		return ret;
	}
	conn_set_tp(conn, vc);
	return 0;
}

int
verbs_accept(struct conn *conn, const void *pdata, uint8_t pdata_len,
		char *err, size_t errlen)
{
	struct verbs_conn *vc = conn_tp(conn);
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
	setup_deadline(vc, verbs_env->set.setup_timeout_ms);
	return 0;
}

void
verbs_reject(struct conn *conn)
{
	struct verbs_conn *vc = conn_tp(conn);
	if (vc == NULL)
		return;
	if (!vc->remote_gone && vc->id && rdma_reject(vc->id, NULL, 0))
		conn_log(conn, LOG_INFO, "verbs: connection qp %u: "
				"rdma_reject: %s",
				conn_qp_num(conn), strerror(errno));
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
	struct rdma_event_channel *ch = verbs_channel();
	if (ch == NULL) {
		(void) snprintf(err, errlen, "no RDMA CM event channel");
		return -ENODEV;
	}
	struct verbs_conn *vc = verbs_conn_new();
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
	if (verbs_create_id(conn_netns(conn), ch, &vc->id, vc))
		goto err;
	call = "rdma_resolve_addr";
	socklen_t len;
	const struct sockaddr_storage *remote = conn_remote(conn, &len);
	if (rdma_resolve_addr(vc->id, NULL, (struct sockaddr *)remote,
			(int)timeout_ms(conn)))
		goto err;
	conn_set_tp(conn, vc);
	return 0;

err:;
	int e = errno ? errno : EIO;
	(void) snprintf(err, errlen, "connecting to %s: %s",
			conn_remote_name(conn), call);
	vc_free(vc);
	return -e;
}

static void
addr_resolved(struct verbs_conn *vc)
{
	struct conn *conn = vc->conn;
	if (vc->state != VC_RESOLVING_ADDR)
		return;
	struct verbs_dev *vd = verbs_dev_of_peer(conn_peer(conn));
	if (vd == NULL || vc->id->verbs != vd->ctx) {
		conn_log(conn, LOG_INFO,
				"verbs: connection qp %u: %s is "
				"reached through RDMA "
				"device %s, the peer's device is %s",
				conn_qp_num(conn), conn_remote_name(conn),
				verbs_dev_ctx_name(vc->id->verbs),
				device_name(peer_device(conn_peer(conn))));
		vc_over(vc, CONN_END_UNREACHABLE);
		return;
	}
	if (rdma_resolve_route(vc->id, (int)timeout_ms(conn))) {
		conn_log(conn, LOG_INFO, "verbs: connection qp %u: "
				"rdma_resolve_route: %s",
				conn_qp_num(conn), strerror(errno));
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
	if (verbs_qp_create(vc, conn_peer(conn), err, sizeof(err))) {
		log_warning("verbs: connection qp %u: %s", conn_qp_num(conn),
				err);
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
		conn_log(conn, LOG_INFO, "verbs: connection qp %u: "
				"rdma_connect: %s",
				conn_qp_num(conn), strerror(errno));
		vc_over(vc, CONN_END_UNREACHABLE);
		return;
	}
	vc->state = VC_CONNECTING;
	setup_deadline(vc, verbs_env->set.accept_timeout_ms);
	conn_set_names(conn, &vc->id->route.addr.src_storage, NULL);
}

/* ------------------------------------------------------------ tear-down */

void
verbs_disconnect(struct conn *conn)
{
	struct verbs_conn *vc = conn_tp(conn);
	if (vc == NULL)
		return;
	switch (vc->state) {
	case VC_ESTABLISHED:
		/* the device flushes what is left; both sides see CLOSED */
		if (rdma_disconnect(vc->id)) {
			conn_log(conn, LOG_INFO, "verbs: connection qp %u: "
					"rdma_disconnect: %s",
					conn_qp_num(conn), strerror(errno));
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
	struct verbs_conn *vc = conn_tp(conn);
	if (vc == NULL)
		return;
	if (!abort && vc->state == VC_ESTABLISHED)
		(void) rdma_disconnect(vc->id);
	vc_free(vc);
	conn_set_tp(conn, NULL);
}

/* --------------------------------------------------------------- events */

static void
established(struct verbs_conn *vc, const struct rdma_cm_event *ev)
{
	if (vc->state != VC_CONNECTING && vc->state != VC_ACCEPTING)
		return;
	loop_timer_cancel(verbs_env->loop, &vc->setup_timer);
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

void
verbs_cm_event(struct verbs_conn *vc, const struct rdma_cm_event *ev)
{
	const char *what = rdma_event_str(ev->event);
	if (vc->conn)
		conn_log(vc->conn, LOG_DEBUG, "verbs: connection qp %u: %s "
				"(status %d)",
				conn_qp_num(vc->conn), what, ev->status);
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
			conn_log(vc->conn, LOG_INFO, "verbs: connection qp "
					"%u: rejected: %s "
					"(IB CM reason %d)",
					conn_qp_num(vc->conn),
					reject_reason(ev->status), ev->status);
		/* passive: the client withdrew its request */
		vc_over(vc, vc->passive ? RPMA_CONN_LOST : RPMA_CONN_REJECTED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (vc->conn)
			conn_log(vc->conn, LOG_INFO, "verbs: connection qp "
					"%u: %s (status %d)",
					conn_qp_num(vc->conn), what,
					ev->status);
		vc_over(vc, was_reached(vc) ||
				ev->event == RDMA_CM_EVENT_CONNECT_ERROR ?
				RPMA_CONN_LOST : CONN_END_UNREACHABLE);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		vc_over(vc, RPMA_CONN_CLOSED);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* verbs_cm_events.c let go of the whole device already */
		vc_over(vc, RPMA_CONN_LOST);
		break;
	default:
		break;	/* TIMEWAIT_EXIT, ADDR_CHANGE: nothing to do */
	}
}

struct create_id {
	struct rdma_event_channel *ch;
	struct rdma_cm_id **id;
	void *context;
};

static int
create_id(void *arg)
{
	struct create_id *c = arg;
	return rdma_create_id(c->ch, c->id, c->context, RDMA_PS_TCP) ?
		-errno : 0;
}

int
verbs_create_id(int nsfd, struct rdma_event_channel *ch,
		struct rdma_cm_id **id, void *context)
{
	struct create_id c = { ch, id, context };
	int ret = netns_run(nsfd, create_id, &c);
	if (ret) {
		errno = -ret;
		return -1;
	}
	return 0;
}
