/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librpma.h -- the librpma 1.x programming interface (and 0.12.0's, on
 * request), as implemented by librpmaclient.
 *
 * librpmaclient is a drop-in replacement for librpma: its librpma.so.0
 * carries both symbol versions native librpma had, LIBRPMA_0.12 (0.12.0's 68
 * functions) and LIBRPMA_1.0 (1.x's 84). Instead of driving an RDMA NIC from
 * the application, every call is brokered by the rpmad daemon of the host
 * (see librpmaclient(7)); names, types, signatures and constant values are
 * those of native librpma.
 *
 * By default a program gets the 1.x API and links to LIBRPMA_1.0; sources
 * written for 0.12.0 compile unchanged (rpma_write_atomic stays declared and
 * links to the only version there is of it, LIBRPMA_0.12). A program that
 * wants 0.12.0's exact API and behaviour defines RPMA_API_0_12 before it
 * includes this header (cc -DRPMA_API_0_12): it then sees 0.12.0's
 * declarations only and every call binds to LIBRPMA_0.12.
 *
 * The per-function documentation lives in the section 3 man pages.
 */

#ifndef LIBRPMA_H
#define LIBRPMA_H 1

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returned by blocking calls that may wait for a completion. */
#define RPMA_W_WAIT_FOR_COMPLETION	(1)

/* Error codes: every call returns 0 on success or one of these. */
#define RPMA_E_UNKNOWN		(-100000) /* an error without a better code */
#define RPMA_E_NOSUPP		(-100001) /* the request is not supported */
#define RPMA_E_PROVIDER		(-100002) /* the daemon or transport failed */
#define RPMA_E_NOMEM		(-100003) /* out of memory */
#define RPMA_E_INVAL		(-100004) /* an argument is not acceptable */
#define RPMA_E_NO_COMPLETION	(-100005) /* the completion queue is empty */
#define RPMA_E_NO_EVENT		(-100006) /* no event is pending */
#define RPMA_E_AGAIN		(-100007) /* transient failure, try again */
#ifndef RPMA_API_0_12
/* 1.x: the connection's completion channel is shared (not) */
#define RPMA_E_SHARED_CHANNEL	(-100008)
#define RPMA_E_NOT_SHARED_CHNL	(-100009)
#endif

/* Connection establishment timeout used when none is configured. */
#define RPMA_DEFAULT_TIMEOUT_MS 1000

/* Which side of a connection an address names, for device lookup. */
enum rpma_util_ibv_context_type {
	RPMA_UTIL_IBV_CONTEXT_LOCAL,	/* an address of this host */
	RPMA_UTIL_IBV_CONTEXT_REMOTE	/* an address to connect to */
};

int rpma_utils_get_ibv_context(const char *addr,
		enum rpma_util_ibv_context_type type,
		struct ibv_context **dev_ptr);

int rpma_utils_ibv_context_is_odp_capable(struct ibv_context *dev,
		int *is_odp_capable);

/* ---- peer configuration ---- */

struct rpma_peer_cfg;

int rpma_peer_cfg_new(struct rpma_peer_cfg **pcfg_ptr);

int rpma_peer_cfg_delete(struct rpma_peer_cfg **pcfg_ptr);

int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg *pcfg,
		bool supported);

int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg *pcfg,
		bool *supported);

int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg *pcfg, void *desc);

int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg *pcfg,
		size_t *desc_size);

int rpma_peer_cfg_from_descriptor(const void *desc, size_t desc_size,
		struct rpma_peer_cfg **pcfg_ptr);

/* ---- peer ---- */

struct rpma_peer;

int rpma_peer_new(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr);

int rpma_peer_delete(struct rpma_peer **peer_ptr);

/* ---- memory registrations ---- */

struct rpma_mr_local;
struct rpma_mr_remote;

/* What a registered region may be used for (bitwise OR). */
#define RPMA_MR_USAGE_READ_SRC			(1 << 0)
#define RPMA_MR_USAGE_READ_DST			(1 << 1)
#define RPMA_MR_USAGE_WRITE_SRC			(1 << 2)
#define RPMA_MR_USAGE_WRITE_DST			(1 << 3)
#define RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY	(1 << 4)
#define RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT	(1 << 5)
#define RPMA_MR_USAGE_SEND			(1 << 6)
#define RPMA_MR_USAGE_RECV			(1 << 7)

int rpma_mr_reg(struct rpma_peer *peer, void *ptr, size_t size,
		int usage, struct rpma_mr_local **mr_ptr);

int rpma_mr_dereg(struct rpma_mr_local **mr_ptr);

int rpma_mr_get_descriptor(const struct rpma_mr_local *mr, void *desc);

int rpma_mr_remote_from_descriptor(const void *desc,
		size_t desc_size, struct rpma_mr_remote **mr_ptr);

int rpma_mr_get_descriptor_size(const struct rpma_mr_local *mr,
		size_t *desc_size);

int rpma_mr_get_ptr(const struct rpma_mr_local *mr, void **ptr);

int rpma_mr_get_size(const struct rpma_mr_local *mr, size_t *size);

int rpma_mr_remote_get_size(const struct rpma_mr_remote *mr, size_t *size);

int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote *mr,
		int *flush_type);

int rpma_mr_remote_delete(struct rpma_mr_remote **mr_ptr);

int rpma_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len,
		int advice, uint32_t flags);

/* ---- connection configuration ---- */

struct rpma_conn_cfg;

int rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr);

int rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr);

int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg *cfg, int timeout_ms);

int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg *cfg, int *timeout_ms);

int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg *cfg, uint32_t cq_size);

int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg *cfg,
		uint32_t *cq_size);

int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg *cfg, uint32_t rcq_size);

int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg *cfg,
		uint32_t *rcq_size);

int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg *cfg, uint32_t sq_size);

int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg *cfg,
		uint32_t *sq_size);

int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg *cfg, uint32_t rq_size);

int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg *cfg,
		uint32_t *rq_size);

#ifndef RPMA_API_0_12
int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg *cfg, bool shared);

int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg *cfg,
		bool *shared);

/* ---- shared receive queues (1.x) ---- */

struct rpma_srq_cfg;

int rpma_srq_cfg_new(struct rpma_srq_cfg **cfg_ptr);

int rpma_srq_cfg_delete(struct rpma_srq_cfg **cfg_ptr);

int rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg *cfg, uint32_t rq_size);

int rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg *cfg,
		uint32_t *rq_size);

int rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg *cfg, uint32_t rcq_size);

int rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg *cfg,
		uint32_t *rcq_size);

struct rpma_srq;

int rpma_srq_new(struct rpma_peer *peer, struct rpma_srq_cfg *cfg,
		struct rpma_srq **srq_ptr);

int rpma_srq_delete(struct rpma_srq **srq_ptr);

int rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst,
		size_t offset, size_t len, const void *op_context);

int rpma_conn_cfg_set_srq(struct rpma_conn_cfg *cfg, struct rpma_srq *srq);

int rpma_conn_cfg_get_srq(const struct rpma_conn_cfg *cfg,
		struct rpma_srq **srq_ptr);
#endif

/* ---- connection ---- */

struct rpma_conn;

int rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd);

/* Connection events: librpma 1.x's (0.12.0 had no RPMA_CONN_UNREACHABLE). */
enum rpma_conn_event {
	RPMA_CONN_UNDEFINED = -1,	/* no event / unknown event */
	RPMA_CONN_ESTABLISHED,		/* the connection is ready */
	RPMA_CONN_CLOSED,		/* orderly disconnect by either side */
	RPMA_CONN_LOST,			/* the other side vanished */
	RPMA_CONN_REJECTED		/* the server refused the request */
#ifndef RPMA_API_0_12
	,
	RPMA_CONN_UNREACHABLE		/* no route, no answer in time */
#endif
};

int rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event);

const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event);

/* Private data exchanged while connecting (at most 255 bytes). */
struct rpma_conn_private_data {
	void *ptr;
	uint8_t len;
};

int rpma_conn_get_private_data(const struct rpma_conn *conn,
		struct rpma_conn_private_data *pdata);

int rpma_conn_apply_remote_peer_cfg(struct rpma_conn *conn,
		const struct rpma_peer_cfg *pcfg);

int rpma_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num);

struct rpma_cq;

int rpma_conn_get_cq(const struct rpma_conn *conn, struct rpma_cq **cq_ptr);

int rpma_conn_get_rcq(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr);

#ifndef RPMA_API_0_12
int rpma_srq_get_rcq(const struct rpma_srq *srq, struct rpma_cq **rcq_ptr);

int rpma_conn_get_compl_fd(const struct rpma_conn *conn, int *fd);

int rpma_conn_wait(struct rpma_conn *conn, int flags, struct rpma_cq **cq,
		bool *is_rcq);
#endif

int rpma_conn_disconnect(struct rpma_conn *conn);

int rpma_conn_delete(struct rpma_conn **conn_ptr);

/* ---- connection requests ---- */

struct rpma_conn_req;

int rpma_conn_req_new(struct rpma_peer *peer, const char *addr,
		const char *port, const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr);

int rpma_conn_req_delete(struct rpma_conn_req **req_ptr);

int rpma_conn_req_connect(struct rpma_conn_req **req_ptr,
		const struct rpma_conn_private_data *pdata,
		struct rpma_conn **conn_ptr);

int rpma_conn_req_recv(struct rpma_conn_req *req,
		struct rpma_mr_local *dst, size_t offset,
		size_t len, const void *op_context);

/* ---- endpoints (server side) ---- */

struct rpma_ep;

int rpma_ep_listen(struct rpma_peer *peer, const char *addr,
		const char *port, struct rpma_ep **ep_ptr);

int rpma_ep_shutdown(struct rpma_ep **ep_ptr);

int rpma_ep_get_fd(const struct rpma_ep *ep, int *fd);

int rpma_ep_next_conn_req(struct rpma_ep *ep,
		const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr);

int rpma_conn_req_get_private_data(const struct rpma_conn_req *req,
		struct rpma_conn_private_data *pdata);

/* ---- remote memory access and messaging ---- */

/* Completion only when the operation fails. */
#define RPMA_F_COMPLETION_ON_ERROR	(1 << 0)
/* Completion whatever the result (implies RPMA_F_COMPLETION_ON_ERROR). */
#define RPMA_F_COMPLETION_ALWAYS	(1 << 1 | RPMA_F_COMPLETION_ON_ERROR)

int rpma_read(struct rpma_conn *conn,
		struct rpma_mr_local *dst, size_t dst_offset,
		const struct rpma_mr_remote *src,  size_t src_offset,
		size_t len, int flags, const void *op_context);

int rpma_write(struct rpma_conn *conn,
		struct rpma_mr_remote *dst, size_t dst_offset,
		const struct rpma_mr_local *src,  size_t src_offset,
		size_t len, int flags, const void *op_context);

int rpma_write_with_imm(struct rpma_conn *conn,
		struct rpma_mr_remote *dst, size_t dst_offset,
		const struct rpma_mr_local *src,  size_t src_offset,
		size_t len, int flags, uint32_t imm, const void *op_context);

/* Size and alignment of the target of an atomic write. */
#define RPMA_ATOMIC_WRITE_ALIGNMENT 8

#ifndef RPMA_API_0_12
int rpma_atomic_write(struct rpma_conn *conn,
		struct rpma_mr_remote *dst, size_t dst_offset,
		const char src[8], int flags, const void *op_context);
#endif

/*
 * 0.12.0's atomic write, replaced by rpma_atomic_write in 1.x: declared in
 * either mode so that 0.12 sources build unchanged; its only symbol version
 * is LIBRPMA_0.12.
 */
int rpma_write_atomic(struct rpma_conn *conn,
		struct rpma_mr_remote *dst, size_t dst_offset,
		const struct rpma_mr_local *src,  size_t src_offset,
		int flags, const void *op_context);

/* How deep rpma_flush() pushes the data at the target. */
enum rpma_flush_type {
	RPMA_FLUSH_TYPE_PERSISTENT,	/* into the persistence domain */
	RPMA_FLUSH_TYPE_VISIBILITY,	/* visible to the target's CPUs */
};

int rpma_flush(struct rpma_conn *conn,
		struct rpma_mr_remote *dst, size_t dst_offset, size_t len,
		enum rpma_flush_type type, int flags, const void *op_context);

int rpma_send(struct rpma_conn *conn,
		const struct rpma_mr_local *src, size_t offset, size_t len,
		int flags, const void *op_context);

int rpma_send_with_imm(struct rpma_conn *conn,
		const struct rpma_mr_local *src, size_t offset, size_t len,
		int flags, uint32_t imm, const void *op_context);

int rpma_recv(struct rpma_conn *conn,
		struct rpma_mr_local *dst, size_t offset, size_t len,
		const void *op_context);

/* ---- completions ---- */

int rpma_cq_get_fd(const struct rpma_cq *cq, int *fd);

int rpma_cq_wait(struct rpma_cq *cq);

int rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc,
		int *num_entries_got);

/* ---- errors ---- */

const char *rpma_err_2str(int ret);

/* ---- logging ---- */

/* Severity of a message; also the values of the thresholds. */
enum rpma_log_level {
	RPMA_LOG_DISABLED = -1,		/* as a threshold: log nothing */
	RPMA_LOG_LEVEL_FATAL,		/* the library cannot go on */
	RPMA_LOG_LEVEL_ERROR,		/* an operation failed */
	RPMA_LOG_LEVEL_WARNING,		/* a problem the caller may handle */
	RPMA_LOG_LEVEL_NOTICE,		/* infrequent news, e.g. connected */
	RPMA_LOG_LEVEL_INFO,		/* frequent news, e.g. per operation */
	RPMA_LOG_LEVEL_DEBUG,		/* details for debugging */
};

enum rpma_log_threshold {
	RPMA_LOG_THRESHOLD,		/* messages above it are dropped */
	RPMA_LOG_THRESHOLD_AUX,		/* second threshold (stderr) */
	RPMA_LOG_THRESHOLD_MAX
};

int rpma_log_set_threshold(enum rpma_log_threshold threshold,
		enum rpma_log_level level);

int rpma_log_get_threshold(enum rpma_log_threshold threshold,
		enum rpma_log_level *level);

/* A logging function: printf-like, and it must be thread-safe. */
typedef void rpma_log_function(
	enum rpma_log_level level,
	const char *file_name,
	const int line_no,
	const char *function_name,
	const char *message_format,
	...);

#define RPMA_LOG_USE_DEFAULT_FUNCTION (NULL)

int rpma_log_set_function(rpma_log_function *log_function);


/*
 * RPMA_API_0_12: every call binds to the symbol version LIBRPMA_0.12, the
 * one a program built against native librpma 0.12.0 names (GNU assembler
 * .symver).
 */
#ifdef RPMA_API_0_12
#define RPMA_V0_12_(name) __asm__(".symver " #name "," #name "@LIBRPMA_0.12");
RPMA_V0_12_(rpma_conn_apply_remote_peer_cfg)
RPMA_V0_12_(rpma_conn_cfg_delete)
RPMA_V0_12_(rpma_conn_cfg_get_cq_size)
RPMA_V0_12_(rpma_conn_cfg_get_rcq_size)
RPMA_V0_12_(rpma_conn_cfg_get_rq_size)
RPMA_V0_12_(rpma_conn_cfg_get_sq_size)
RPMA_V0_12_(rpma_conn_cfg_get_timeout)
RPMA_V0_12_(rpma_conn_cfg_new)
RPMA_V0_12_(rpma_conn_cfg_set_cq_size)
RPMA_V0_12_(rpma_conn_cfg_set_rcq_size)
RPMA_V0_12_(rpma_conn_cfg_set_rq_size)
RPMA_V0_12_(rpma_conn_cfg_set_sq_size)
RPMA_V0_12_(rpma_conn_cfg_set_timeout)
RPMA_V0_12_(rpma_conn_delete)
RPMA_V0_12_(rpma_conn_disconnect)
RPMA_V0_12_(rpma_conn_get_cq)
RPMA_V0_12_(rpma_conn_get_event_fd)
RPMA_V0_12_(rpma_conn_get_private_data)
RPMA_V0_12_(rpma_conn_get_qp_num)
RPMA_V0_12_(rpma_conn_get_rcq)
RPMA_V0_12_(rpma_conn_next_event)
RPMA_V0_12_(rpma_conn_req_connect)
RPMA_V0_12_(rpma_conn_req_delete)
RPMA_V0_12_(rpma_conn_req_get_private_data)
RPMA_V0_12_(rpma_conn_req_new)
RPMA_V0_12_(rpma_conn_req_recv)
RPMA_V0_12_(rpma_cq_get_fd)
RPMA_V0_12_(rpma_cq_get_wc)
RPMA_V0_12_(rpma_cq_wait)
RPMA_V0_12_(rpma_ep_get_fd)
RPMA_V0_12_(rpma_ep_listen)
RPMA_V0_12_(rpma_ep_next_conn_req)
RPMA_V0_12_(rpma_ep_shutdown)
RPMA_V0_12_(rpma_err_2str)
RPMA_V0_12_(rpma_flush)
RPMA_V0_12_(rpma_log_get_threshold)
RPMA_V0_12_(rpma_log_set_function)
RPMA_V0_12_(rpma_log_set_threshold)
RPMA_V0_12_(rpma_mr_advise)
RPMA_V0_12_(rpma_mr_dereg)
RPMA_V0_12_(rpma_mr_get_descriptor)
RPMA_V0_12_(rpma_mr_get_descriptor_size)
RPMA_V0_12_(rpma_mr_get_ptr)
RPMA_V0_12_(rpma_mr_get_size)
RPMA_V0_12_(rpma_mr_reg)
RPMA_V0_12_(rpma_mr_remote_delete)
RPMA_V0_12_(rpma_mr_remote_from_descriptor)
RPMA_V0_12_(rpma_mr_remote_get_flush_type)
RPMA_V0_12_(rpma_mr_remote_get_size)
RPMA_V0_12_(rpma_peer_cfg_delete)
RPMA_V0_12_(rpma_peer_cfg_from_descriptor)
RPMA_V0_12_(rpma_peer_cfg_get_descriptor)
RPMA_V0_12_(rpma_peer_cfg_get_descriptor_size)
RPMA_V0_12_(rpma_peer_cfg_get_direct_write_to_pmem)
RPMA_V0_12_(rpma_peer_cfg_new)
RPMA_V0_12_(rpma_peer_cfg_set_direct_write_to_pmem)
RPMA_V0_12_(rpma_peer_delete)
RPMA_V0_12_(rpma_peer_new)
RPMA_V0_12_(rpma_read)
RPMA_V0_12_(rpma_recv)
RPMA_V0_12_(rpma_send)
RPMA_V0_12_(rpma_send_with_imm)
RPMA_V0_12_(rpma_utils_conn_event_2str)
RPMA_V0_12_(rpma_utils_get_ibv_context)
RPMA_V0_12_(rpma_utils_ibv_context_is_odp_capable)
RPMA_V0_12_(rpma_write)
RPMA_V0_12_(rpma_write_atomic)
RPMA_V0_12_(rpma_write_with_imm)
#undef RPMA_V0_12_
#endif

#ifdef __cplusplus
}
#endif

#endif /* LIBRPMA_H */
