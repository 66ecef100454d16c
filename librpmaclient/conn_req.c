// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_req.c -- connection requests: outgoing (rpma_conn_req_new) and
 * incoming (made by rpma_ep_next_conn_req), receiving before connecting,
 * connecting or rejecting
 */

#include <stdlib.h>
#include <unistd.h>

#include "addr.h"
#include "broker.h"
#include "conn.h"
#include "conn_cfg.h"
#include "conn_req.h"
#include "log_internal.h"
#include "mr.h"
#include "ops.h"
#include "peer.h"
#include "srq.h"

/*
 * The queue pair's depths: the configuration's; with a shared RQ (1.x)
 * the connection's RQ has the shared one's depth (what bounds its
 * receives in flight and their completions) and no receive CQ of its own
 * when the shared RQ has one, as native 1.x makes none then.
 */
static void
conn_sizes(const struct rpma_conn_cfg *cfg, struct qp_sizes *sizes,
		struct qp_staging *staging)
{
	qp_sizes_from_cfg(cfg, sizes);
	qp_staging_for(sizes, staging);
	const struct rpma_srq *srq = conn_cfg_or_default(cfg)->srq;
	if (srq) {
		sizes->rq = srq->rq_size;
		if (srq->has_rcq)
			sizes->rcq = 0;
		/* its receives are posted to the shared RQ, never to this one */
		staging->rq = 0;
	}
}

void
conn_cfg_to_msg(const struct rpma_conn_cfg *cfg, Rpmad__ConnCfg *msg)
{
	struct qp_sizes sizes;
	struct qp_staging staging;
	conn_sizes(cfg, &sizes, &staging);
	cfg = conn_cfg_or_default(cfg);
	msg->timeout_ms = (uint32_t)cfg->timeout_ms;
	msg->cq_size = sizes.cq;
	msg->rcq_size = sizes.rcq;
	msg->sq_size = sizes.sq;
	msg->rq_size = sizes.rq;
	msg->srq_id = cfg->srq ? cfg->srq->qp->conn_id : 0;
	msg->sq_staging = staging.sq;
	msg->rq_staging = staging.rq;
}

int
conn_req_from_reply(struct rpma_peer *peer, struct broker_reply *reply,
		const struct rpma_conn_cfg *cfg, bool incoming,
		struct rpma_conn_req **req_ptr)
{
	struct rpma_conn_req *req = calloc(1, sizeof(*req));
	if (req == NULL)
		return RPMA_E_NOMEM;

	struct qp_sizes sizes;
	struct qp_staging staging;
	conn_sizes(cfg, &sizes, &staging);
	int ret = qp_new(reply, &sizes, &staging, &req->qp);
	if (ret) {
		free(req);
		return ret;
	}
	const struct rpma_srq *srq = conn_cfg_or_default(cfg)->srq;
	req->qp->srq_qp = srq ? srq->qp : NULL;
	req->peer = peer;
	req->incoming = incoming;
	req->compl_fd = -1;
	if (conn_cfg_or_default(cfg)->shared_comp_channel) {
		ret = compl_channel_new(req->qp, &req->compl_fd);
		if (ret) {
			qp_delete(&req->qp);
			free(req);
			return ret;
		}
	}
	if (incoming)
		private_data_set(&req->pdata, reply->resp->qp->private_data.data,
				reply->resp->qp->private_data.len);
	*req_ptr = req;
	return 0;
}

int
rpma_conn_req_new(struct rpma_peer *peer, const char *addr, const char *port,
		const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr)
{
	if (peer == NULL || addr == NULL || port == NULL || req_ptr == NULL)
		return RPMA_E_INVAL;
	int ret = conn_cfg_check(cfg);
	if (ret)
		return ret;

	char host[ADDR_HOST_MAX], serv[ADDR_SERV_MAX];
	ret = addr_numeric(addr, port, host, serv);
	if (ret)
		return ret == RPMA_E_INVAL ? RPMA_E_PROVIDER : ret;

	Rpmad__ConnCfg cfg_msg = RPMAD__CONN_CFG__INIT;
	conn_cfg_to_msg(cfg, &cfg_msg);
	Rpmad__ConnReqNew msg = RPMAD__CONN_REQ_NEW__INIT;
	msg.peer_id = peer->peer_id;
	msg.addr = host;
	msg.port = serv;
	msg.cfg = &cfg_msg;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_CONN_REQ_NEW;
	req.conn_req_new = &msg;

	struct broker_reply reply;
	ret = broker_call(peer->generation, &req, NULL, 0,
			RPMAD__RESPONSE__BODY_QP, &reply);
	if (ret)
		return ret;

	ret = conn_req_from_reply(peer, &reply, cfg, false, req_ptr);
	uint64_t conn_id = reply.resp->qp->conn_id;
	broker_reply_fini(&reply);
	if (ret)
		conn_req_forget(peer->generation, conn_id);
	return ret;
}

void
conn_req_forget(uint64_t generation, uint64_t conn_id)
{
	Rpmad__ConnReqDelete msg = RPMAD__CONN_REQ_DELETE__INIT;
	msg.conn_id = conn_id;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_CONN_REQ_DELETE;
	req.conn_req_delete = &msg;
	(void) broker_call_simple(generation, &req);
}

int
rpma_conn_req_delete(struct rpma_conn_req **req_ptr)
{
	if (req_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_conn_req *req = *req_ptr;
	if (req == NULL)
		return 0;

	int ret = 0;
	if (broker_session_alive(req->qp->generation)) {
		Rpmad__ConnReqDelete msg = RPMAD__CONN_REQ_DELETE__INIT;
		msg.conn_id = req->qp->conn_id;
		Rpmad__Request r = RPMAD__REQUEST__INIT;
		r.body_case = RPMAD__REQUEST__BODY_CONN_REQ_DELETE;
		r.conn_req_delete = &msg;
		ret = broker_call_simple(req->qp->generation, &r);
		/* a session that ended just now took the object with it */
		if (ret && !broker_session_alive(req->qp->generation))
			ret = 0;
	}

	if (req->compl_fd >= 0)
		(void) close(req->compl_fd);
	qp_delete(&req->qp);
	free(req);
	*req_ptr = NULL;
	return ret ? RPMA_E_PROVIDER : 0;
}

int
rpma_conn_req_connect(struct rpma_conn_req **req_ptr,
		const struct rpma_conn_private_data *pdata,
		struct rpma_conn **conn_ptr)
{
	if (req_ptr == NULL || *req_ptr == NULL || conn_ptr == NULL)
		return RPMA_E_INVAL;
	if (pdata != NULL && (pdata->ptr == NULL || pdata->len == 0))
		return RPMA_E_INVAL;

	struct rpma_conn_req *req = *req_ptr;
	struct rpma_conn *conn = NULL;
	int ret = conn_new(req, &conn);
	if (ret) {
		(void) rpma_conn_req_delete(req_ptr);
		return ret;
	}

	Rpmad__ConnReqConnect msg = RPMAD__CONN_REQ_CONNECT__INIT;
	msg.conn_id = conn->qp->conn_id;
	if (pdata) {
		msg.private_data.data = pdata->ptr;
		msg.private_data.len = pdata->len;
	}
	Rpmad__Request r = RPMAD__REQUEST__INIT;
	r.body_case = RPMAD__REQUEST__BODY_CONN_REQ_CONNECT;
	r.conn_req_connect = &msg;
	ret = broker_call_simple(conn->qp->generation, &r);

	/* the request is consumed either way */
	free(req);
	*req_ptr = NULL;
	if (ret) {
		(void) rpma_conn_delete(&conn);
		return ret;
	}

	*conn_ptr = conn;
	return 0;
}

int
rpma_conn_req_recv(struct rpma_conn_req *req, struct rpma_mr_local *dst,
		size_t offset, size_t len, const void *op_context)
{
	/* as librpma does: a NULL op_context is a valid wr_id of 0 */
	if (req == NULL || dst == NULL)
		return RPMA_E_INVAL;

	return ops_post_recv(req->qp, dst, offset, len, op_context);
}

int
rpma_conn_req_get_private_data(const struct rpma_conn_req *req,
		struct rpma_conn_private_data *pdata)
{
	if (req == NULL || pdata == NULL)
		return RPMA_E_INVAL;

	private_data_get(&((struct rpma_conn_req *)req)->pdata, pdata);
	return 0;
}
