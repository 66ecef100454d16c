// SPDX-License-Identifier: BSD-3-Clause
/*
 * itest_remote.c -- a remote helper for tests about a server's memory:
 * the client connects once and then reads and writes the server's
 * registrations on request (itest.h, "Remote accesses on request")
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

enum { TAG_OP = 90, TAG_OP_DONE };

/* A request of the server's. */
struct remote_op {
	uint8_t kind;		/* enum it_remote_kind */
	uint8_t desc[32];
	uint8_t desc_len;
	uint32_t seed;
	uint64_t off, len;
};

size_t
it_page(void)
{
	return (size_t) sysconf(_SC_PAGESIZE);
}

int
it_remote_helper(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR,
			RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(IT_REMOTE_MAX);
	struct rpma_mr_local *mr = IT_REG(peer, buf, IT_REMOTE_MAX,
			RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
	struct rpma_conn *conn = it_connect(peer, env, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	/* what buf holds: the pattern of `seed` over `filled` bytes */
	uint32_t seed = 0;
	uint64_t filled = 0;
	for (;;) {
		/* the server may work a while between its requests */
		struct remote_op op;
		IT_EQ(it_hear(TAG_OP, &op, sizeof(op), IT_ROLE_MS), sizeof(op));
		if (op.kind == IT_OP_END)
			break;
		IT_ASSERT(op.len <= IT_REMOTE_MAX);
		struct rpma_mr_remote *rmr = NULL;
		IT_OK(rpma_mr_remote_from_descriptor(op.desc, op.desc_len,
				&rmr));
		struct it_remote_res res = { .status = -1, .mismatch = -1 };
		struct ibv_wc wc;
		if (op.kind == IT_OP_WRITE) {
			if (seed != op.seed || filled < op.len) {
				it_fill(buf, op.len, op.seed);
				seed = op.seed;
				filled = op.len;
			}
			IT_OK(rpma_write(conn, rmr, op.off, mr, 0, op.len,
					RPMA_F_COMPLETION_ON_ERROR, NULL));
			/* visible at the target when the flush completes */
			IT_OK(rpma_flush(conn, rmr, op.off, op.len,
					RPMA_FLUSH_TYPE_VISIBILITY,
					RPMA_F_COMPLETION_ALWAYS, NULL));
		} else {
			filled = 0;	/* the read lands in buf */
			IT_OK(rpma_read(conn, mr, 0, rmr, op.off, op.len,
					RPMA_F_COMPLETION_ALWAYS, NULL));
		}
		it_wc(cq, &wc);
		res.status = (int32_t)wc.status;
		if (op.kind == IT_OP_READ && wc.status == IBV_WC_SUCCESS)
			res.mismatch = it_check(buf, op.len, op.seed);
		IT_OK(rpma_mr_remote_delete(&rmr));
		IT_EQ(it_tell(IT_SERVER, TAG_OP_DONE, &res, sizeof(res)), 0);
	}
	it_close(&conn);
	IT_OK(rpma_mr_dereg(&mr));
	IT_OK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

void
it_remote_open(struct it_remote *r, const struct it_env *env)
{
	memset(r, 0, sizeof(*r));
	r->env = env;
	r->peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	r->ep = it_listen(r->peer, env);
	struct rpma_conn_req *req = it_next_req(r->ep, NULL);
	r->conn = it_accept(&req, NULL);
}

void
it_remote_close(struct it_remote *r)
{
	struct remote_op op = { .kind = IT_OP_END };
	IT_EQ(it_tell(IT_CLIENT, TAG_OP, &op, sizeof(op)), 0);
	it_await_close(&r->conn);
	IT_OK(rpma_ep_shutdown(&r->ep));
	IT_OK(rpma_peer_delete(&r->peer));
}

int
it_remote_server(const struct it_env *env, void *arg)
{
	const struct it_remote_case *c = arg;
	bool ok = c->before == NULL || c->before(env, c->arg);
	struct it_remote r;
	/* opened and closed either way: the client waits for both */
	it_remote_open(&r, env);
	r.arg = c->arg;
	if (ok)
		c->body(&r);
	it_remote_close(&r);
	return 0;
}

int
it_remote_run(const struct it_env *env, const struct it_remote_case *c)
{
	return it_run_pair(env, it_remote_server, it_remote_helper, (void *) c);
}

void
it_remote_test(int ndaemons, const char *config, const struct it_remote_case *c)
{
	it_pair_test_cfg(ndaemons, config, it_remote_server, it_remote_helper,
			(void *) c);
}

struct it_remote_res
it_remote_do(enum it_remote_kind kind, const struct rpma_mr_local *mr,
		size_t off, size_t len, uint32_t seed)
{
	struct remote_op op = { .kind = (uint8_t)kind, .seed = seed,
			.off = off, .len = len };
	size_t dlen = 0;
	IT_OK(rpma_mr_get_descriptor_size(mr, &dlen));
	IT_ASSERT(dlen <= sizeof(op.desc));
	IT_OK(rpma_mr_get_descriptor(mr, op.desc));
	op.desc_len = (uint8_t)dlen;
	IT_EQ(it_tell(IT_CLIENT, TAG_OP, &op, sizeof(op)), 0);
	struct it_remote_res res;
	IT_EQ(it_expect(TAG_OP_DONE, &res, sizeof(res)), sizeof(res));
	return res;
}

/* it_remote_do, which must succeed */
static struct it_remote_res
remote_ok(enum it_remote_kind kind, const struct rpma_mr_local *mr, size_t off,
		size_t len, uint32_t seed)
{
	struct it_remote_res res = it_remote_do(kind, mr, off, len, seed);
	IT_ASSERT_MSG(res.status == IBV_WC_SUCCESS, "remote %s: %s",
			kind == IT_OP_WRITE ? "write" : "read",
			ibv_wc_status_str((enum ibv_wc_status) res.status));
	return res;
}

void
it_remote_write(const struct rpma_mr_local *mr, size_t off, size_t len,
		uint32_t seed)
{
	(void) remote_ok(IT_OP_WRITE, mr, off, len, seed);
}

long
it_remote_read(const struct rpma_mr_local *mr, size_t off, size_t len,
		uint32_t seed)
{
	return (long) remote_ok(IT_OP_READ, mr, off, len, seed).mismatch;
}
