// SPDX-License-Identifier: BSD-3-Clause
/*
 * itest_conn.c -- librpma steps the role processes repeat: peers,
 * listening, connecting, waiting for events and completions with a bound,
 * closing, exchanging descriptors, data patterns
 */

#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "itest.h"

struct rpma_peer *
it_peer(const char *addr, enum rpma_util_ibv_context_type type)
{
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	IT_OK(rpma_utils_get_ibv_context(addr, type, &dev));
	IT_OK(rpma_peer_new(dev, &peer));
	return peer;
}

struct rpma_peer *
it_role_peer(const char *addr)
{
	return it_peer(addr,
			it_role() == IT_SERVER ? RPMA_UTIL_IBV_CONTEXT_LOCAL :
						 RPMA_UTIL_IBV_CONTEXT_REMOTE);
}

struct rpma_ep *
it_listen(struct rpma_peer *peer, const struct it_env *env)
{
	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, env->port, &ep));
	IT_EQ(it_tell(IT_CLIENT, IT_TAG_LISTENING, NULL, 0), 0);
	return ep;
}

/* Waits until fd is readable (or at its end); fails after timeout_ms. */
static void
wait_readable(int fd, int timeout_ms, const char *what)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t end = it_now_ms() + (uint64_t)timeout_ms;
	for (;;) {
		uint64_t now = it_now_ms();
		int r = poll(&pfd, 1, now >= end ? 0 : (int)(end - now));
		if (r > 0)
			return;
		IT_ASSERT_MSG(r == 0 || errno == EINTR, "poll: %s",
				strerror(errno));
		IT_ASSERT_MSG(r != 0, "no %s within %d ms", what, timeout_ms);
	}
}

struct rpma_conn_req *
it_next_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg)
{
	int fd = -1;
	IT_OK(rpma_ep_get_fd(ep, &fd));
	wait_readable(fd, IT_WAIT_MS, "connection request");
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_ep_next_conn_req(ep, cfg, &req));
	return req;
}

enum rpma_conn_event
it_next_event(struct rpma_conn *conn, int timeout_ms)
{
	int fd = -1;
	IT_OK(rpma_conn_get_event_fd(conn, &fd));
	wait_readable(fd, timeout_ms, "connection event");
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	IT_OK(rpma_conn_next_event(conn, &ev));
	return ev;
}

void
it_expect_event(struct rpma_conn *conn, enum rpma_conn_event want)
{
	enum rpma_conn_event ev = it_next_event(conn, IT_WAIT_MS);
	IT_ASSERT_MSG(ev == want, "connection event %s, wanted %s",
			rpma_utils_conn_event_2str(ev),
			rpma_utils_conn_event_2str(want));
}

struct rpma_conn *
it_accept(struct rpma_conn_req **req,
		const struct rpma_conn_private_data *pdata)
{
	struct rpma_conn *conn = NULL;
	IT_OK(rpma_conn_req_connect(req, pdata, &conn));
	IT_ASSERT(*req == NULL);
	it_expect_event(conn, RPMA_CONN_ESTABLISHED);
	return conn;
}

struct rpma_conn *
it_accept_next(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata)
{
	struct rpma_conn_req *req = it_next_req(ep, cfg);
	return it_accept(&req, pdata);
}

struct rpma_conn *
it_connect(struct rpma_peer *peer, const struct it_env *env,
		const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata)
{
	(void) it_expect(IT_TAG_LISTENING, NULL, 0);
	return it_connect_to(peer, env->port, cfg, pdata);
}

struct rpma_conn *
it_connect_mr(struct rpma_peer *peer, const struct it_env *env,
		struct rpma_mr_remote **rmr, struct rpma_cq **cq)
{
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	struct it_desc desc;
	it_expect_desc(&desc);
	*rmr = it_desc_mr(&desc);
	*cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, cq));
	return conn;
}

struct rpma_conn *
it_connect_to(struct rpma_peer *peer, const char *port,
		const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata)
{
	struct rpma_conn_req *req = NULL;
	IT_OK(rpma_conn_req_new(peer, IT_ADDR, port, cfg, &req));
	struct rpma_conn *conn = NULL;
	IT_OK(rpma_conn_req_connect(&req, pdata, &conn));
	it_expect_event(conn, RPMA_CONN_ESTABLISHED);
	return conn;
}

int
it_get_wc(struct rpma_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	uint64_t end = it_now_ms() + (uint64_t)timeout_ms;
	for (;;) {
		int ret = rpma_cq_get_wc(cq, 1, wc, NULL);
		if (ret != RPMA_E_NO_COMPLETION)
			return ret;
		if (it_now_ms() >= end)
			return RPMA_E_NO_COMPLETION;
		it_sleep_ms(1);
	}
}

void
it_wc(struct rpma_cq *cq, struct ibv_wc *wc)
{
	int ret = it_get_wc(cq, wc, IT_WAIT_MS);
	IT_ASSERT_MSG(ret == 0, "no completion within %d ms: %s", IT_WAIT_MS,
			rpma_err_2str(ret));
}

void
it_wc_ok(struct rpma_conn *conn, struct rpma_cq *cq, uint64_t wr_id,
		enum ibv_wc_opcode opcode, struct ibv_wc *wc)
{
	it_wc(cq, wc);
	IT_ASSERT_MSG(wc->status == IBV_WC_SUCCESS, "wr_id %#llx: status %s",
			(unsigned long long)wc->wr_id,
			ibv_wc_status_str(wc->status));
	IT_EQ(wc->wr_id, wr_id);
	IT_EQ(wc->opcode, opcode);
	uint32_t qp_num = 0;
	IT_OK(rpma_conn_get_qp_num(conn, &qp_num));
	IT_EQ(wc->qp_num, qp_num);
}

void
it_no_wc(struct rpma_cq *cq, int ms)
{
	struct ibv_wc wc;
	int ret = it_get_wc(cq, &wc, ms);
	IT_ASSERT_MSG(ret == RPMA_E_NO_COMPLETION, "unexpected completion "
			"(ret %d): wr_id %#llx status %s opcode %d", ret,
			(unsigned long long)wc.wr_id,
			ibv_wc_status_str(wc.status), (int)wc.opcode);
}

void
it_close(struct rpma_conn **conn)
{
	IT_OK(rpma_conn_disconnect(*conn));
	it_expect_event(*conn, RPMA_CONN_CLOSED);
	IT_OK(rpma_conn_delete(conn));
	IT_ASSERT(*conn == NULL);
}

void
it_await_close(struct rpma_conn **conn)
{
	it_expect_event(*conn, RPMA_CONN_CLOSED);
	IT_OK(rpma_conn_disconnect(*conn));
	IT_OK(rpma_conn_delete(conn));
	IT_ASSERT(*conn == NULL);
}

void
it_client_end(struct rpma_conn **conn, struct rpma_mr_remote **rmr,
		struct rpma_mr_local **mr, struct rpma_peer **peer, void *buf)
{
	it_close(conn);
	IT_OKS(rpma_mr_remote_delete(rmr), rpma_mr_dereg(mr),
			rpma_peer_delete(peer));
	free(buf);
}

void
it_server_end(struct rpma_conn **conn, struct rpma_mr_local **mr,
		struct rpma_ep **ep, struct rpma_peer **peer, void *buf)
{
	it_await_close(conn);
	IT_OKS(rpma_mr_dereg(mr), rpma_ep_shutdown(ep), rpma_peer_delete(peer));
	free(buf);
}

void *
it_alloc(size_t size)
{
	void *p = NULL;
	IT_ASSERT_MSG(posix_memalign(&p, 4096, size) == 0, "no memory for "
			"%zu bytes", size);
	memset(p, 0, size);
	return p;
}

uint8_t *
it_anon(size_t len, int byte)
{
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	IT_ASSERT_MSG(p != MAP_FAILED, "no mapping of %zu bytes", len);
	memset(p, byte, len);
	return p;
}

int
it_write_protect(void *p, size_t len)
{
	int uffd = (int) syscall(SYS_userfaultfd,
			O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	IT_ASSERT_MSG(uffd >= 0, "userfaultfd: %s", strerror(errno));
	struct uffdio_api api = { .api = UFFD_API,
		.features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };
	IT_EQ(ioctl(uffd, UFFDIO_API, &api), 0);
	struct uffdio_range range = { (uintptr_t) p, len };
	struct uffdio_register reg = { .range = range,
		.mode = UFFDIO_REGISTER_MODE_WP };
	IT_EQ(ioctl(uffd, UFFDIO_REGISTER, &reg), 0);
	struct uffdio_writeprotect prot = { .range = range,
		.mode = UFFDIO_WRITEPROTECT_MODE_WP };
	IT_EQ(ioctl(uffd, UFFDIO_WRITEPROTECT, &prot), 0);
	return uffd;
}

void
it_send_desc(enum it_role to, const struct rpma_mr_local *mr,
		const struct rpma_peer_cfg *pcfg)
{
	struct it_desc d;
	memset(&d, 0, sizeof(d));
	size_t len = 0;
	IT_OK(rpma_mr_get_descriptor_size(mr, &len));
	IT_ASSERT(len <= sizeof(d.mr));
	IT_OK(rpma_mr_get_descriptor(mr, d.mr));
	d.mr_len = (uint8_t)len;
	if (pcfg) {
		IT_OK(rpma_peer_cfg_get_descriptor_size(pcfg, &len));
		IT_ASSERT(len <= sizeof(d.pcfg));
		IT_OK(rpma_peer_cfg_get_descriptor(pcfg, d.pcfg));
		d.pcfg_len = (uint8_t)len;
	}
	IT_EQ(it_tell(to, IT_TAG_DESC, &d, sizeof(d)), 0);
}

void
it_expect_desc(struct it_desc *desc)
{
	IT_EQ(it_expect(IT_TAG_DESC, desc, sizeof(*desc)), sizeof(*desc));
}

struct rpma_mr_remote *
it_desc_mr(const struct it_desc *desc)
{
	struct rpma_mr_remote *mr = NULL;
	IT_OK(rpma_mr_remote_from_descriptor(desc->mr, desc->mr_len, &mr));
	return mr;
}

static uint8_t
pattern_byte(size_t i, uint32_t seed)
{
	uint32_t x = (uint32_t)i * 2654435761u ^ seed * 40503u;
	return (uint8_t)(x ^ (x >> 13) ^ (x >> 24));
}

void
it_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *b = buf;
	for (size_t i = 0; i < len; i++)
		b[i] = pattern_byte(i, seed);
}

long
it_check(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *b = buf;
	for (size_t i = 0; i < len; i++) {
		if (b[i] != pattern_byte(i, seed))
			return (long)i;
	}
	return -1;
}
