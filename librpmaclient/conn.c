// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn.c -- connections: events, private data, peer configuration, queues,
 * disconnecting and deleting
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker.h"
#include "conn.h"
#include "fork.h"
#include "log_internal.h"
#include "peer_cfg.h"

void
private_data_set(struct private_data *pd, const void *ptr, size_t len)
{
	if (len > sizeof(pd->bytes))
		len = sizeof(pd->bytes);
	if (len)
		memcpy(pd->bytes, ptr, len);
	pd->len = (uint8_t)len;
}

void
private_data_get(struct private_data *pd, struct rpma_conn_private_data *out)
{
	out->ptr = pd->len ? pd->bytes : NULL;
	out->len = pd->len;
}

int
conn_new(struct rpma_conn_req *req, struct rpma_conn **conn_ptr)
{
	struct rpma_conn *conn = calloc(1, sizeof(*conn));
	if (conn == NULL)
		return RPMA_E_NOMEM;

	conn->peer = req->peer;
	conn->qp = req->qp;
	conn->pdata = req->pdata;
	conn->compl_fd = req->compl_fd;
	req->compl_fd = -1;
	pthread_mutex_init(&conn->atomic_lock, NULL);
	req->qp = NULL;
	*conn_ptr = conn;
	return 0;
}

int
rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd)
{
	if (conn == NULL || fd == NULL)
		return RPMA_E_INVAL;

	*fd = conn->qp->event_fd;
	return 0;
}

/* Hands an event rpmad gave to the application. */
static int
deliver_event(struct rpma_conn *conn, int32_t ev, bool has_pdata,
		const void *pdata, size_t pdata_len, enum rpma_abi abi,
		enum rpma_conn_event *event)
{
	switch (ev) {
	case RPMA_CONN_ESTABLISHED:
	case RPMA_CONN_CLOSED:
	case RPMA_CONN_LOST:
	case RPMA_CONN_REJECTED:
		*event = (enum rpma_conn_event)ev;
		break;
	case RPMA_CONN_UNDEFINED:
		/*
		 * rpmad could not reach the server (no route, no answer in
		 * time): 1.x reports RPMA_CONN_UNREACHABLE; librpma 0.12 had
		 * no event for it and failed rpma_conn_next_event with
		 * RPMA_E_UNKNOWN
		 */
		if (abi == RPMA_ABI_1) {
			*event = RPMA_CONN_UNREACHABLE;
			break;
		}
		RLOG_WARNING("Undefined connection event: the server could "
				"not be reached (no route, or no answer within "
				"the connection timeout)");
		*event = RPMA_CONN_UNDEFINED;
		return RPMA_E_UNKNOWN;
	default:
		RLOG_WARNING("unexpected connection event %d", ev);
		*event = RPMA_CONN_UNDEFINED;
		return RPMA_E_UNKNOWN;
	}
	if (has_pdata)
		private_data_set(&conn->pdata, pdata, pdata_len);

	RLOG_NOTICE("%s", rpma_utils_conn_event_2str(*event));
	return 0;
}

/* Asks rpmad for the event its notification announced. */
static int
fetch_event(struct rpma_conn *conn, enum rpma_abi abi,
		enum rpma_conn_event *event)
{
	Rpmad__ConnNextEvent msg = RPMAD__CONN_NEXT_EVENT__INIT;
	msg.conn_id = conn->qp->conn_id;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_CONN_NEXT_EVENT;
	req.conn_next_event = &msg;

	struct broker_reply reply;
	int ret = broker_call(conn->qp->generation, &req, NULL, 0,
			RPMAD__RESPONSE__BODY_EVENT, &reply);
	if (ret)
		return ret;

	const Rpmad__ConnEvent *ev = reply.resp->event;
	ret = deliver_event(conn, ev->event, ev->has_private_data,
			ev->private_data.data, ev->private_data.len, abi,
			event);
	broker_reply_fini(&reply);
	return ret;
}

int
rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event)
{
	return conn_next_event(conn, event, RPMA_ABI_1);
}

int
conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event,
		enum rpma_abi abi)
{
	if (conn == NULL || event == NULL)
		return RPMA_E_INVAL;
	/* the notification would be taken from the parent */
	if (fork_inherited(conn->qp->epoch, "rpma_conn_next_event"))
		return RPMA_E_PROVIDER;

	/*
	 * an event whose fetching gave up on a slow rpmad: its notification
	 * was read then, its answer came (or comes) late
	 */
	struct late_event late;
	int owed = broker_late_event(conn->qp->generation, conn->qp->conn_id,
			&late);
	if (owed < 0)
		return owed;
	if (owed == 1)
		return deliver_event(conn, late.event, late.has_pdata,
				late.pdata, late.pdata_len, abi, event);

	for (;;) {
		char byte;
		ssize_t n = recv(conn->qp->event_fd, &byte, 1, 0);
		if (n == 1) {
			int ret = fetch_event(conn, abi, event);
			/*
			 * announced, but rpmad went before it told us what
			 * (stopped, or its drain after an upgrade ended):
			 * its side is gone, as at the end of the stream
			 */
			if (ret == RPMA_E_PROVIDER &&
					broker_session_ended_by_rpmad(
					conn->qp->generation))
				break;
			return ret;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			/*
			 * librpma 0.12 fails here as rdma_get_cm_event does on
			 * a non-blocking channel (RPMA_E_NO_EVENT came later)
			 */
			RLOG_ERROR("no connection event is pending: %s",
					strerror(errno));
			return RPMA_E_PROVIDER;
		}
		if (n < 0) {
			RLOG_ERROR("waiting for a connection event: %s",
					strerror(errno));
			return RPMA_E_PROVIDER;
		}
		break;
	}

	/* end of the stream: rpmad's side of the connection is gone */
	qp_mark_dead(conn->qp);
	if (!conn->lost_reported) {
		conn->lost_reported = true;
		*event = RPMA_CONN_LOST;
		RLOG_NOTICE("%s (rpmad's side is gone)",
				rpma_utils_conn_event_2str(*event));
		return 0;
	}
	RLOG_ERROR("no more events: rpmad's side of the connection is gone");
	return RPMA_E_PROVIDER;
}

int
rpma_conn_get_private_data(const struct rpma_conn *conn,
		struct rpma_conn_private_data *pdata)
{
	if (conn == NULL || pdata == NULL)
		return RPMA_E_INVAL;

	private_data_get(&((struct rpma_conn *)conn)->pdata, pdata);
	return 0;
}

int
rpma_conn_apply_remote_peer_cfg(struct rpma_conn *conn,
		const struct rpma_peer_cfg *pcfg)
{
	if (conn == NULL || pcfg == NULL)
		return RPMA_E_INVAL;

	conn->direct_write_to_pmem = pcfg->direct_write_to_pmem;
	return 0;
}

int
rpma_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num)
{
	if (conn == NULL || qp_num == NULL)
		return RPMA_E_INVAL;

	*qp_num = conn->qp->qp_num;
	return 0;
}

int
rpma_conn_get_cq(const struct rpma_conn *conn, struct rpma_cq **cq_ptr)
{
	if (conn == NULL || cq_ptr == NULL)
		return RPMA_E_INVAL;

	*cq_ptr = &conn->qp->cq;
	return 0;
}

int
rpma_conn_get_rcq(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr)
{
	if (conn == NULL || rcq_ptr == NULL)
		return RPMA_E_INVAL;

	*rcq_ptr = conn->qp->has_rcq ? &conn->qp->rcq : NULL;
	return 0;
}

/* One request about this connection, answered by "ok". */
static int
conn_request(struct rpma_conn *conn, Rpmad__Request__BodyCase which)
{
	Rpmad__ConnDisconnect disc = RPMAD__CONN_DISCONNECT__INIT;
	Rpmad__ConnDelete del = RPMAD__CONN_DELETE__INIT;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = which;
	if (which == RPMAD__REQUEST__BODY_CONN_DISCONNECT) {
		disc.conn_id = conn->qp->conn_id;
		req.conn_disconnect = &disc;
	} else {
		del.conn_id = conn->qp->conn_id;
		req.conn_delete = &del;
	}
	return broker_call_simple(conn->qp->generation, &req);
}

int
rpma_conn_disconnect(struct rpma_conn *conn)
{
	if (conn == NULL)
		return RPMA_E_INVAL;

	/* with rpmad's side gone there is nothing left to tear down */
	if (qp_is_dead(conn->qp) || !broker_session_alive(conn->qp->generation))
		return 0;

	return conn_request(conn, RPMAD__REQUEST__BODY_CONN_DISCONNECT);
}

int
rpma_conn_delete(struct rpma_conn **conn_ptr)
{
	if (conn_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_conn *conn = *conn_ptr;
	if (conn == NULL)
		return 0;

	/* the staging registration is of the peer, which may go next */
	int ret = conn_staging_delete(conn);
	broker_late_event_forget(conn->qp->generation, conn->qp->conn_id);
	if (broker_session_alive(conn->qp->generation) &&
			conn_request(conn, RPMAD__REQUEST__BODY_CONN_DELETE))
		ret = RPMA_E_PROVIDER;
	/* a session that ended just now took the object with it */
	if (ret && !broker_session_alive(conn->qp->generation))
		ret = 0;

	if (conn->compl_fd >= 0)
		(void) close(conn->compl_fd);
	qp_delete(&conn->qp);
	pthread_mutex_destroy(&conn->atomic_lock);
	free(conn);
	*conn_ptr = NULL;
	return ret ? RPMA_E_PROVIDER : 0;
}
