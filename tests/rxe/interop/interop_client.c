// SPDX-License-Identifier: BSD-3-Clause
/*
 * interop_client.c -- the initiator of the interop test: connects with
 * private data, takes the target's descriptors from the accept, reads the
 * target's data, writes, flushes (to visibility, and to persistence where
 * the target's registration offers it, which it says: "flush:
 * persistent"), makes an atomic write, sends "done" and receives the
 * target's verdict.
 *
 * usage: interop_client ADDR PORT
 */

#include <stdint.h>
#include <string.h>

#define PROG "interop_client"
#include "interop.h"

int
main(int argc, char *argv[])
{
	if (argc != 3)
		FAIL("usage: %s ADDR PORT", PROG);
	const char *addr = argv[1], *port = argv[2];

	struct ibv_context *dev;
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE,
			&dev));
	struct rpma_peer *peer;
	CHECK(rpma_peer_new(dev, &peer));

	uint8_t *mem = aligned_alloc(4096, MEM_SIZE);
	if (mem == NULL)
		FAIL("out of memory");
	memset(mem, 0, MEM_SIZE);
	struct rpma_mr_local *mr;
	CHECK(rpma_mr_reg(peer, mem, MEM_SIZE, RPMA_MR_USAGE_READ_DST |
			RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND |
			RPMA_MR_USAGE_RECV, &mr));

	struct rpma_conn_req *req;
	CHECK(rpma_conn_req_new(peer, addr, port, NULL, &req));
	CHECK(rpma_conn_req_recv(req, mr, OFF_RECV, MSG_LEN, NULL));
	struct rpma_conn_private_data pd = { CLIENT_PDATA,
		sizeof(CLIENT_PDATA) };
	struct rpma_conn *conn;
	CHECK(rpma_conn_req_connect(&req, &pd, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);

	/* the target's descriptors: [MR's size][MR's][peer config's] */
	struct rpma_conn_private_data in;
	CHECK(rpma_conn_get_private_data(conn, &in));
	const uint8_t *desc = in.ptr;
	struct rpma_peer_cfg *pcfg;
	CHECK(rpma_peer_cfg_new(&pcfg));
	size_t cfg_size;
	CHECK(rpma_peer_cfg_get_descriptor_size(pcfg, &cfg_size));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	if (desc == NULL || in.len < 1 || in.len < 1 + desc[0] + cfg_size)
		FAIL("the target's private data has %u bytes", in.len);
	size_t mr_size = desc[0];
	struct rpma_mr_remote *rmr;
	CHECK(rpma_mr_remote_from_descriptor(desc + 1, mr_size, &rmr));
	CHECK(rpma_peer_cfg_from_descriptor(desc + 1 + mr_size, cfg_size,
			&pcfg));
	CHECK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	size_t rsize;
	CHECK(rpma_mr_remote_get_size(rmr, &rsize));
	if (rsize != MEM_SIZE)
		FAIL("the target's registration has %zu bytes", rsize);

	/* read what the target offers */
	CHECK(rpma_read(conn, mr, 0, rmr, OFF_READ, sizeof(READ_ME),
			RPMA_F_COMPLETION_ALWAYS, NULL));
	wait_wc(conn, IBV_WC_RDMA_READ, "read");
	if (strcmp((const char *)mem, READ_ME))
		FAIL("read '%s', wanted '%s'", (const char *)mem, READ_ME);

	/* persistence where the target grants it (its memory can be) */
	int ftype = 0;
	CHECK(rpma_mr_remote_get_flush_type(rmr, &ftype));
	enum rpma_flush_type deepest = RPMA_FLUSH_TYPE_VISIBILITY;
	if (ftype & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)
		deepest = RPMA_FLUSH_TYPE_PERSISTENT;
	printf("flush: %s\n", deepest == RPMA_FLUSH_TYPE_PERSISTENT ?
			"persistent" : "visibility");

	/* write, flush to visibility, flush as deep as it goes */
	strcpy((char *)mem + 256, WRITTEN);
	CHECK(rpma_write(conn, rmr, OFF_WRITE, mr, 256, sizeof(WRITTEN),
			RPMA_F_COMPLETION_ON_ERROR, NULL));
	CHECK(rpma_flush(conn, rmr, OFF_WRITE, sizeof(WRITTEN),
			RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			NULL));
	wait_wc(conn, IBV_WC_RDMA_READ, "flush to visibility");
	CHECK(rpma_flush(conn, rmr, OFF_WRITE, sizeof(WRITTEN), deepest,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	wait_wc(conn, IBV_WC_RDMA_READ, "flush as deep as it goes");

	/* the atomic write, flushed */
	uint64_t value = ATOMIC_VALUE;
#ifdef NATIVE_RPMA_1
	char atomic[8];
	memcpy(atomic, &value, sizeof(atomic));
	CHECK(rpma_atomic_write(conn, rmr, OFF_ATOMIC, atomic,
			RPMA_F_COMPLETION_ALWAYS, NULL));
#else
	memcpy(mem + 768, &value, sizeof(value));
	CHECK(rpma_write_atomic(conn, rmr, OFF_ATOMIC, mr, 768,
			RPMA_F_COMPLETION_ALWAYS, NULL));
#endif
	wait_wc(conn, IBV_WC_RDMA_WRITE, "atomic write");
	CHECK(rpma_flush(conn, rmr, OFF_ATOMIC, 8, deepest,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	wait_wc(conn, IBV_WC_RDMA_READ, "flush of the atomic write");

	/* done: the target checks and answers */
	strcpy((char *)mem + 512, "done");
	CHECK(rpma_send(conn, mr, 512, sizeof("done"),
			RPMA_F_COMPLETION_ALWAYS, NULL));
	/* the send and the receive complete in either order */
	wait_wc_either(conn, "send and receive");
	const char *verdict = (const char *)mem + OFF_RECV;
	if (strcmp(verdict, "ok"))
		FAIL("the target says '%.*s'", MSG_LEN, verdict);

	CHECK(rpma_conn_disconnect(conn));
	expect_event(conn, RPMA_CONN_CLOSED);
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_mr_remote_delete(&rmr));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_peer_delete(&peer));
	free(mem);
	printf("client: ok\n");
	return 0;
}
