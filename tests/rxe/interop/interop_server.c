// SPDX-License-Identifier: BSD-3-Clause
/*
 * interop_server.c -- the target of the interop test: offers its memory
 * (the MR and peer-config descriptors go back in the accept's private
 * data, after the MR descriptor's size), takes the initiator's private data, waits for its "done" message
 * and checks what the initiator wrote, then answers "ok" and waits for the
 * initiator to disconnect. Its memory is anonymous, or with PMEM the
 * start of a device DAX or of a file, which the target's side can make
 * persistent.
 *
 * usage: interop_server ADDR PORT [PMEM]
 */

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define PROG "interop_server"
#include "interop.h"

/* A device DAX maps whole units of its alignment: 2 MiB covers them. */
#define PMEM_MAP (2u << 20)

static uint8_t *
target_memory(const char *pmem)
{
	if (pmem == NULL) {
		uint8_t *mem = aligned_alloc(4096, MEM_SIZE);
		if (mem == NULL)
			FAIL("out of memory");
		return mem;
	}
	int fd = open(pmem, O_RDWR);
	struct stat st;
	if (fd < 0 || fstat(fd, &st))
		FAIL("%s cannot be opened", pmem);
	if (S_ISREG(st.st_mode) && st.st_size < PMEM_MAP &&
			ftruncate(fd, PMEM_MAP))
		FAIL("%s cannot grow", pmem);
	void *mem = mmap(NULL, PMEM_MAP, PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, 0);
	if (mem == MAP_FAILED)
		FAIL("%s cannot be mapped", pmem);
	(void) close(fd);
	return mem;
}

int
main(int argc, char *argv[])
{
	if (argc != 3 && argc != 4)
		FAIL("usage: %s ADDR PORT [PMEM]", PROG);
	const char *addr = argv[1], *port = argv[2];
	const char *pmem = argc == 4 ? argv[3] : NULL;

	struct ibv_context *dev;
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&dev));
	struct rpma_peer *peer;
	CHECK(rpma_peer_new(dev, &peer));

	uint8_t *mem = target_memory(pmem);
	memset(mem, 0, MEM_SIZE);
	strcpy((char *)mem + OFF_READ, READ_ME);
	struct rpma_mr_local *mr;
	CHECK(rpma_mr_reg(peer, mem, MEM_SIZE, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT |
			RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND, &mr));

	/* the descriptors travel in the accept's private data */
	size_t mr_size, cfg_size;
	CHECK(rpma_mr_get_descriptor_size(mr, &mr_size));
	struct rpma_peer_cfg *pcfg;
	CHECK(rpma_peer_cfg_new(&pcfg));
	CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	CHECK(rpma_peer_cfg_get_descriptor_size(pcfg, &cfg_size));
	/*
	 * [MR descriptor size][MR descriptor][peer config descriptor]: on
	 * RDMA the receiver gets the CM's whole private data, zero-padded
	 */
	uint8_t desc[64];
	if (1 + mr_size + cfg_size > sizeof(desc))
		FAIL("descriptors of %zu bytes", mr_size + cfg_size);
	desc[0] = (uint8_t)mr_size;
	CHECK(rpma_mr_get_descriptor(mr, desc + 1));
	CHECK(rpma_peer_cfg_get_descriptor(pcfg, desc + 1 + mr_size));

	struct rpma_ep *ep;
	CHECK(rpma_ep_listen(peer, addr, port, &ep));
	printf("listening\n");
	fflush(stdout);

	struct rpma_conn_req *req;
	alarm(STEP_SECONDS);
	CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
	alarm(0);
	CHECK(rpma_conn_req_recv(req, mr, OFF_RECV, MSG_LEN, NULL));
	struct rpma_conn_private_data pd = { desc,
		(uint8_t)(1 + mr_size + cfg_size) };
	struct rpma_conn *conn;
	CHECK(rpma_conn_req_connect(&req, &pd, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);

	struct rpma_conn_private_data in;
	CHECK(rpma_conn_get_private_data(conn, &in));
	if (in.len < sizeof(CLIENT_PDATA) ||
			memcmp(in.ptr, CLIENT_PDATA, sizeof(CLIENT_PDATA)))
		FAIL("the initiator's private data did not arrive (%u bytes)",
				in.len);

	/* the initiator is done when its message arrives */
	wait_wc(conn, IBV_WC_RECV, "receive");
	const char *msg = (const char *)mem + OFF_RECV;
	if (strcmp(msg, "done"))
		FAIL("message '%.*s', wanted 'done'", MSG_LEN, msg);
	const char *verdict = "ok";
	uint64_t atomic;
	memcpy(&atomic, mem + OFF_ATOMIC, sizeof(atomic));
	if (strcmp((const char *)mem + OFF_WRITE, WRITTEN)) {
		fprintf(stderr, "%s: the write did not land\n", PROG);
		verdict = "bad write";
	} else if (atomic != ATOMIC_VALUE) {
		fprintf(stderr, "%s: the atomic write did not land\n", PROG);
		verdict = "bad atomic";
	}
	strcpy((char *)mem + OFF_RECV + MSG_LEN, verdict);
	CHECK(rpma_send(conn, mr, OFF_RECV + MSG_LEN, strlen(verdict) + 1,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	wait_wc(conn, IBV_WC_SEND, "send");

	expect_event(conn, RPMA_CONN_CLOSED);
	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_ep_shutdown(&ep));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	CHECK(rpma_peer_delete(&peer));
	if (pmem)
		(void) munmap(mem, PMEM_MAP);
	else
		free(mem);
	printf("server: %s\n", verdict);
	return strcmp(verdict, "ok") != 0;
}
