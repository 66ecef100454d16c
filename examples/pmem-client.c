// SPDX-License-Identifier: BSD-3-Clause
/*
 * pmem-client.c -- the demo's client: writes a message into the server's
 * file, makes it persistent with a PERSISTENT flush, reads it back.
 *
 * usage: pmem-client ADDR PORT MESSAGE [HOLD_MS]
 *
 * HOLD_MS keeps the connection open that long before disconnecting, so
 * that rpmactl can show it.
 */

#include <librpma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo-common.h"

/* Waits for one completion and checks it. */
static int
wait_one(struct rpma_cq *cq, const char *what)
{
	struct ibv_wc wc;
	int ret = rpma_cq_wait(cq);
	if (ret == 0)
		ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
	if (ret) {
		(void) fprintf(stderr, "client: %s: %s\n", what,
				rpma_err_2str(ret));
		return ret;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		(void) fprintf(stderr, "client: %s failed: %s\n", what,
				ibv_wc_status_str(wc.status));
		return -1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	if (argc < 4 || argc > 5 || strlen(argv[3]) >= DEMO_MSG_MAX) {
		(void) fprintf(stderr, "usage: %s ADDR PORT MESSAGE (< %d "
				"bytes) [HOLD_MS]\n", argv[0], DEMO_MSG_MAX);
		return 2;
	}
	long hold_ms = argc == 5 ? strtol(argv[4], NULL, 10) : 0;
	const char *addr = argv[1], *port = argv[2], *msg = argv[3];

	char *buf = aligned_alloc(4096, 4096);
	if (buf == NULL)
		return 1;
	memset(buf, 0, 4096);
	(void) snprintf(buf, DEMO_MSG_MAX, "%s", msg);
	char *back = buf + 2048;

	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_mr_remote *remote = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	enum rpma_conn_event ev;
	int ret;

	DEMO_CHECK(rpma_utils_get_ibv_context(addr,
			RPMA_UTIL_IBV_CONTEXT_REMOTE, &dev));
	DEMO_CHECK(rpma_peer_new(dev, &peer));
	DEMO_CHECK(rpma_mr_reg(peer, buf, 4096, RPMA_MR_USAGE_WRITE_SRC |
			RPMA_MR_USAGE_READ_DST, &mr));
	DEMO_CHECK(rpma_conn_req_new(peer, addr, port, NULL, &req));
	DEMO_CHECK(rpma_conn_req_connect(&req, NULL, &conn));
	DEMO_CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		(void) fprintf(stderr, "client: %s\n",
				rpma_utils_conn_event_2str(ev));
		return 1;
	}

	struct rpma_conn_private_data pdata;
	DEMO_CHECK(rpma_conn_get_private_data(conn, &pdata));
	if (pdata.len < sizeof(struct demo_offer)) {
		(void) fprintf(stderr, "client: the server offered nothing\n");
		return 1;
	}
	const struct demo_offer *offer = pdata.ptr;
	DEMO_CHECK(rpma_mr_remote_from_descriptor(offer->mr_desc,
			sizeof(offer->mr_desc), &remote));
	DEMO_CHECK(rpma_peer_cfg_from_descriptor(offer->pcfg_desc,
			sizeof(offer->pcfg_desc), &pcfg));
	DEMO_CHECK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	DEMO_CHECK(rpma_conn_get_cq(conn, &cq));

	size_t len = strlen(msg) + 1;
	DEMO_CHECK(rpma_write(conn, remote, DEMO_MSG_OFFSET, mr, 0, len,
			RPMA_F_COMPLETION_ON_ERROR, NULL));
	DEMO_CHECK(rpma_flush(conn, remote, DEMO_MSG_OFFSET, len,
			RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			NULL));
	if (wait_one(cq, "write + persistent flush"))
		return 1;
	(void) printf("client: wrote and persisted \"%s\"\n", msg);

	DEMO_CHECK(rpma_read(conn, mr, 2048, remote, DEMO_MSG_OFFSET, len,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	if (wait_one(cq, "read"))
		return 1;
	(void) printf("client: read back \"%s\"\n", back);
	(void) fflush(stdout);
	if (hold_ms > 0)
		(void) usleep((useconds_t)hold_ms * 1000);

	DEMO_CHECK(rpma_conn_disconnect(conn));
	DEMO_CHECK(rpma_conn_next_event(conn, &ev));
	DEMO_CHECK(rpma_conn_delete(&conn));
	DEMO_CHECK(rpma_mr_remote_delete(&remote));
	DEMO_CHECK(rpma_peer_cfg_delete(&pcfg));
	DEMO_CHECK(rpma_mr_dereg(&mr));
	DEMO_CHECK(rpma_peer_delete(&peer));
	ret = strcmp(back, msg) == 0 ? 0 : 1;
	free(buf);
	return ret;
}
