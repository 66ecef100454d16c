// SPDX-License-Identifier: BSD-3-Clause
/*
 * abi_v0_12.c -- the symbol version LIBRPMA_0.12: what a program built
 * against native librpma 0.12.0 calls
 *
 * Native librpma 0.12.0 exported its 68 functions as LIBRPMA_0.12 and 1.x
 * its 84 as LIBRPMA_1.0, so librpma.so.0 carries both: the plain names get
 * LIBRPMA_1.0 from librpmaclient.map (the default a new link takes), and
 * each function below is 0.12's entry point, bound to name@LIBRPMA_0.12 by
 * .symver. Where 1.x changed what a function does or reports, the entry
 * here keeps 0.12's; the rest hand over to the one implementation.
 * rpma_write_atomic has no 1.x name: the map gives it LIBRPMA_0.12 alone.
 */

#include "conn.h"
#include "librpma.h"

/* v0_12_NAME: NAME's 0.12 entry point (local; exported as NAME@LIBRPMA_0.12) */
#define V0_12_NAME(name) __asm__(".symver v0_12_" #name ", " #name \
		"@LIBRPMA_0.12")

/* an entry point whose behaviour 1.x kept */
#define SAME(ret, name, params, args) \
	ret v0_12_##name params; \
	ret v0_12_##name params { return name args; } \
	V0_12_NAME(name);

SAME(int, rpma_conn_apply_remote_peer_cfg,
		(struct rpma_conn *conn, const struct rpma_peer_cfg *pcfg),
		(conn, pcfg))
SAME(int, rpma_conn_cfg_delete,
		(struct rpma_conn_cfg **cfg_ptr),
		(cfg_ptr))
SAME(int, rpma_conn_cfg_get_cq_size,
		(const struct rpma_conn_cfg *cfg, uint32_t *cq_size),
		(cfg, cq_size))
SAME(int, rpma_conn_cfg_get_rcq_size,
		(const struct rpma_conn_cfg *cfg, uint32_t *rcq_size),
		(cfg, rcq_size))
SAME(int, rpma_conn_cfg_get_rq_size,
		(const struct rpma_conn_cfg *cfg, uint32_t *rq_size),
		(cfg, rq_size))
SAME(int, rpma_conn_cfg_get_sq_size,
		(const struct rpma_conn_cfg *cfg, uint32_t *sq_size),
		(cfg, sq_size))
SAME(int, rpma_conn_cfg_get_timeout,
		(const struct rpma_conn_cfg *cfg, int *timeout_ms),
		(cfg, timeout_ms))
SAME(int, rpma_conn_cfg_new,
		(struct rpma_conn_cfg **cfg_ptr),
		(cfg_ptr))
SAME(int, rpma_conn_cfg_set_cq_size,
		(struct rpma_conn_cfg *cfg, uint32_t cq_size),
		(cfg, cq_size))
SAME(int, rpma_conn_cfg_set_rcq_size,
		(struct rpma_conn_cfg *cfg, uint32_t rcq_size),
		(cfg, rcq_size))
SAME(int, rpma_conn_cfg_set_rq_size,
		(struct rpma_conn_cfg *cfg, uint32_t rq_size),
		(cfg, rq_size))
SAME(int, rpma_conn_cfg_set_sq_size,
		(struct rpma_conn_cfg *cfg, uint32_t sq_size),
		(cfg, sq_size))
SAME(int, rpma_conn_cfg_set_timeout,
		(struct rpma_conn_cfg *cfg, int timeout_ms),
		(cfg, timeout_ms))
SAME(int, rpma_conn_delete,
		(struct rpma_conn **conn_ptr),
		(conn_ptr))
SAME(int, rpma_conn_disconnect,
		(struct rpma_conn *conn),
		(conn))
SAME(int, rpma_conn_get_cq,
		(const struct rpma_conn *conn, struct rpma_cq **cq_ptr),
		(conn, cq_ptr))
SAME(int, rpma_conn_get_event_fd,
		(const struct rpma_conn *conn, int *fd),
		(conn, fd))
SAME(int, rpma_conn_get_private_data,
		(const struct rpma_conn *conn,
		struct rpma_conn_private_data *pdata),
		(conn, pdata))
SAME(int, rpma_conn_get_qp_num,
		(const struct rpma_conn *conn, uint32_t *qp_num),
		(conn, qp_num))
SAME(int, rpma_conn_get_rcq,
		(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr),
		(conn, rcq_ptr))
SAME(int, rpma_conn_req_connect,
		(struct rpma_conn_req **req_ptr,
		const struct rpma_conn_private_data *pdata,
		struct rpma_conn **conn_ptr),
		(req_ptr, pdata, conn_ptr))
SAME(int, rpma_conn_req_delete,
		(struct rpma_conn_req **req_ptr),
		(req_ptr))
SAME(int, rpma_conn_req_get_private_data,
		(const struct rpma_conn_req *req,
		struct rpma_conn_private_data *pdata),
		(req, pdata))
SAME(int, rpma_conn_req_new,
		(struct rpma_peer *peer, const char *addr, const char *port,
		const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr),
		(peer, addr, port, cfg, req_ptr))
SAME(int, rpma_conn_req_recv,
		(struct rpma_conn_req *req, struct rpma_mr_local *dst,
		size_t offset, size_t len, const void *op_context),
		(req, dst, offset, len, op_context))
SAME(int, rpma_cq_get_fd,
		(const struct rpma_cq *cq, int *fd),
		(cq, fd))
SAME(int, rpma_cq_get_wc,
		(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc,
		int *num_entries_got),
		(cq, num_entries, wc, num_entries_got))
SAME(int, rpma_cq_wait,
		(struct rpma_cq *cq),
		(cq))
SAME(int, rpma_ep_get_fd,
		(const struct rpma_ep *ep, int *fd),
		(ep, fd))
SAME(int, rpma_ep_listen,
		(struct rpma_peer *peer, const char *addr, const char *port,
		struct rpma_ep **ep_ptr),
		(peer, addr, port, ep_ptr))
SAME(int, rpma_ep_next_conn_req,
		(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr),
		(ep, cfg, req_ptr))
SAME(int, rpma_ep_shutdown,
		(struct rpma_ep **ep_ptr),
		(ep_ptr))
SAME(int, rpma_flush,
		(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, size_t len, enum rpma_flush_type type,
		int flags, const void *op_context),
		(conn, dst, dst_offset, len, type, flags, op_context))
SAME(int, rpma_log_get_threshold,
		(enum rpma_log_threshold threshold, enum rpma_log_level *level),
		(threshold, level))
SAME(int, rpma_log_set_function,
		(rpma_log_function *log_function),
		(log_function))
SAME(int, rpma_log_set_threshold,
		(enum rpma_log_threshold threshold, enum rpma_log_level level),
		(threshold, level))
SAME(int, rpma_mr_advise,
		(struct rpma_mr_local *mr, size_t offset, size_t len,
		int advice, uint32_t flags),
		(mr, offset, len, advice, flags))
SAME(int, rpma_mr_dereg,
		(struct rpma_mr_local **mr_ptr),
		(mr_ptr))
SAME(int, rpma_mr_get_descriptor,
		(const struct rpma_mr_local *mr, void *desc),
		(mr, desc))
SAME(int, rpma_mr_get_descriptor_size,
		(const struct rpma_mr_local *mr, size_t *desc_size),
		(mr, desc_size))
SAME(int, rpma_mr_get_ptr,
		(const struct rpma_mr_local *mr, void **ptr),
		(mr, ptr))
SAME(int, rpma_mr_get_size,
		(const struct rpma_mr_local *mr, size_t *size),
		(mr, size))
SAME(int, rpma_mr_reg,
		(struct rpma_peer *peer, void *ptr, size_t size, int usage,
		struct rpma_mr_local **mr_ptr),
		(peer, ptr, size, usage, mr_ptr))
SAME(int, rpma_mr_remote_delete,
		(struct rpma_mr_remote **mr_ptr),
		(mr_ptr))
SAME(int, rpma_mr_remote_from_descriptor,
		(const void *desc, size_t desc_size,
		struct rpma_mr_remote **mr_ptr),
		(desc, desc_size, mr_ptr))
SAME(int, rpma_mr_remote_get_flush_type,
		(const struct rpma_mr_remote *mr, int *flush_type),
		(mr, flush_type))
SAME(int, rpma_mr_remote_get_size,
		(const struct rpma_mr_remote *mr, size_t *size),
		(mr, size))
SAME(int, rpma_peer_cfg_delete,
		(struct rpma_peer_cfg **pcfg_ptr),
		(pcfg_ptr))
SAME(int, rpma_peer_cfg_from_descriptor,
		(const void *desc, size_t desc_size,
		struct rpma_peer_cfg **pcfg_ptr),
		(desc, desc_size, pcfg_ptr))
SAME(int, rpma_peer_cfg_get_descriptor,
		(const struct rpma_peer_cfg *pcfg, void *desc),
		(pcfg, desc))
SAME(int, rpma_peer_cfg_get_descriptor_size,
		(const struct rpma_peer_cfg *pcfg, size_t *desc_size),
		(pcfg, desc_size))
SAME(int, rpma_peer_cfg_get_direct_write_to_pmem,
		(const struct rpma_peer_cfg *pcfg, bool *supported),
		(pcfg, supported))
SAME(int, rpma_peer_cfg_new,
		(struct rpma_peer_cfg **pcfg_ptr),
		(pcfg_ptr))
SAME(int, rpma_peer_cfg_set_direct_write_to_pmem,
		(struct rpma_peer_cfg *pcfg, bool supported),
		(pcfg, supported))
SAME(int, rpma_peer_delete,
		(struct rpma_peer **peer_ptr),
		(peer_ptr))
SAME(int, rpma_peer_new,
		(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr),
		(ibv_ctx, peer_ptr))
SAME(int, rpma_read,
		(struct rpma_conn *conn, struct rpma_mr_local *dst,
		size_t dst_offset, const struct rpma_mr_remote *src,
		size_t src_offset, size_t len, int flags,
		const void *op_context),
		(conn, dst, dst_offset, src, src_offset, len, flags,
		op_context))
SAME(int, rpma_recv,
		(struct rpma_conn *conn, struct rpma_mr_local *dst,
		size_t offset, size_t len, const void *op_context),
		(conn, dst, offset, len, op_context))
SAME(int, rpma_send,
		(struct rpma_conn *conn, const struct rpma_mr_local *src,
		size_t offset, size_t len, int flags, const void *op_context),
		(conn, src, offset, len, flags, op_context))
SAME(int, rpma_send_with_imm,
		(struct rpma_conn *conn, const struct rpma_mr_local *src,
		size_t offset, size_t len, int flags, uint32_t imm,
		const void *op_context),
		(conn, src, offset, len, flags, imm, op_context))
SAME(int, rpma_utils_get_ibv_context,
		(const char *addr, enum rpma_util_ibv_context_type type,
		struct ibv_context **dev_ptr),
		(addr, type, dev_ptr))
SAME(int, rpma_utils_ibv_context_is_odp_capable,
		(struct ibv_context *dev, int *is_odp_capable),
		(dev, is_odp_capable))
SAME(int, rpma_write,
		(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const struct rpma_mr_local *src,
		size_t src_offset, size_t len, int flags,
		const void *op_context),
		(conn, dst, dst_offset, src, src_offset, len, flags,
		op_context))
SAME(int, rpma_write_with_imm,
		(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const struct rpma_mr_local *src,
		size_t src_offset, size_t len, int flags, uint32_t imm,
		const void *op_context),
		(conn, dst, dst_offset, src, src_offset, len, flags, imm,
		op_context))

/* 0.12 had no text for RPMA_E_AGAIN (1.0 added it) */
const char *v0_12_rpma_err_2str(int ret);
const char *
v0_12_rpma_err_2str(int ret)
{
	switch (ret) {
	case RPMA_E_AGAIN:
	case RPMA_E_SHARED_CHANNEL:
	case RPMA_E_NOT_SHARED_CHNL:
		return "Unknown error";
	default:
		return rpma_err_2str(ret);
	}
}
V0_12_NAME(rpma_err_2str);

/* 0.12 had no RPMA_CONN_UNREACHABLE (0.14 added it) */
const char *v0_12_rpma_utils_conn_event_2str(enum rpma_conn_event conn_event);
const char *
v0_12_rpma_utils_conn_event_2str(enum rpma_conn_event conn_event)
{
	if (conn_event == RPMA_CONN_UNREACHABLE)
		return "Unsupported connection event";
	return rpma_utils_conn_event_2str(conn_event);
}
V0_12_NAME(rpma_utils_conn_event_2str);

/* 0.12 fails with RPMA_E_UNKNOWN where 1.x says RPMA_CONN_UNREACHABLE */
int v0_12_rpma_conn_next_event(struct rpma_conn *conn,
		enum rpma_conn_event *event);
int
v0_12_rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event)
{
	return conn_next_event(conn, event, RPMA_ABI_0_12);
}
V0_12_NAME(rpma_conn_next_event);
