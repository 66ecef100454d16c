// SPDX-License-Identifier: BSD-3-Clause
/*
 * pmem-server.c -- the demo's server: offers a file (persistent memory, or
 * a plain file standing in for it) to one client for writing and flushing.
 *
 * usage: pmem-server ADDR PORT FILE
 *
 * It maps FILE shared, registers it for remote writes and persistent
 * flushes, declares direct write to pmem, sends the registration's
 * descriptor as private data and waits until the client disconnects.
 */

#include <fcntl.h>
#include <librpma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demo-common.h"

int
main(int argc, char *argv[])
{
	if (argc != 4) {
		(void) fprintf(stderr, "usage: %s ADDR PORT FILE\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1], *port = argv[2], *path = argv[3];

	int fd = open(path, O_RDWR);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || st.st_size < DEMO_MIN_FILE) {
		(void) fprintf(stderr, "%s: need a file of at least %d bytes\n",
				path, DEMO_MIN_FILE);
		return 1;
	}
	size_t size = (size_t)st.st_size;
	void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	(void) close(fd);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}

	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event ev;
	int ret;

	DEMO_CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&dev));
	DEMO_CHECK(rpma_peer_new(dev, &peer));
	DEMO_CHECK(rpma_mr_reg(peer, mem, size, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr));
	DEMO_CHECK(rpma_peer_cfg_new(&pcfg));
	DEMO_CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));

	/* what the client needs: the registration and the peer config */
	struct demo_offer offer;
	memset(&offer, 0, sizeof(offer));
	DEMO_CHECK(rpma_mr_get_descriptor(mr, offer.mr_desc));
	DEMO_CHECK(rpma_peer_cfg_get_descriptor(pcfg, offer.pcfg_desc));
	struct rpma_conn_private_data pdata = { &offer, sizeof(offer) };

	DEMO_CHECK(rpma_ep_listen(peer, addr, port, &ep));
	(void) printf("server: listening at %s:%s, offering %s (%zu bytes)\n",
			addr, port, path, size);
	(void) fflush(stdout);
	DEMO_CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
	DEMO_CHECK(rpma_conn_req_connect(&req, &pdata, &conn));
	DEMO_CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		(void) fprintf(stderr, "server: %s\n",
				rpma_utils_conn_event_2str(ev));
		return 1;
	}
	(void) printf("server: client connected\n");
	(void) fflush(stdout);

	/* the client writes and flushes; it says goodbye when it is done */
	DEMO_CHECK(rpma_conn_next_event(conn, &ev));
	(void) printf("server: %s\n", rpma_utils_conn_event_2str(ev));
	DEMO_CHECK(rpma_conn_disconnect(conn));
	DEMO_CHECK(rpma_conn_delete(&conn));
	DEMO_CHECK(rpma_ep_shutdown(&ep));
	DEMO_CHECK(rpma_mr_dereg(&mr));
	DEMO_CHECK(rpma_peer_cfg_delete(&pcfg));
	DEMO_CHECK(rpma_peer_delete(&peer));
	(void) munmap(mem, size);
	return 0;
}
