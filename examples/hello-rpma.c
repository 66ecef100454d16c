// SPDX-License-Identifier: BSD-3-Clause
/*
 * hello-rpma.c -- a first librpma program: a server offers a buffer, a
 * client reads it with one RDMA read (through rpmad, as with a NIC)
 *
 * usage: hello-rpma server ADDR PORT
 *        hello-rpma client ADDR PORT
 *
 * Build against an installed librpmaclient:
 *   cc -o hello-rpma hello-rpma.c $(pkg-config --cflags --libs librpma)
 */

#include <librpma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_SIZE 4096

/* Leaves main() with a message when an API call fails. */
#define CHECK(call) \
	do { \
		int ret_ = (call); \
		if (ret_) { \
			(void) fprintf(stderr, "%s: %s\n", #call, \
					rpma_err_2str(ret_)); \
			return 1; \
		} \
	} while (0)

/*
 * The server: register the buffer, listen, hand the buffer's descriptor
 * to the first client as private data, wait until it disconnects.
 */
static int
server(struct rpma_peer *peer, const char *addr, const char *port, char *buf)
{
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event ev;
	char desc[64];
	size_t desc_size;

	(void) snprintf(buf, BUF_SIZE, "hello from the server's memory");
	CHECK(rpma_mr_reg(peer, buf, BUF_SIZE, RPMA_MR_USAGE_READ_SRC, &mr));
	CHECK(rpma_mr_get_descriptor_size(mr, &desc_size));
	if (desc_size > sizeof(desc))
		return 1;
	CHECK(rpma_mr_get_descriptor(mr, desc));

	CHECK(rpma_ep_listen(peer, addr, port, &ep));
	(void) printf("server: listening at %s:%s\n", addr, port);
	(void) fflush(stdout);
	CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
	struct rpma_conn_private_data pdata = { desc, (uint8_t) desc_size };
	CHECK(rpma_conn_req_connect(&req, &pdata, &conn));
	CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED)
		return 1;
	CHECK(rpma_conn_next_event(conn, &ev));
	(void) printf("server: %s\n", rpma_utils_conn_event_2str(ev));

	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_ep_shutdown(&ep));
	CHECK(rpma_mr_dereg(&mr));
	return 0;
}

/*
 * The client: connect, take the server's buffer from the private data,
 * read it into a buffer of its own, wait for the completion.
 */
static int
client(struct rpma_peer *peer, const char *addr, const char *port, char *buf)
{
	struct rpma_mr_local *mr = NULL;
	struct rpma_mr_remote *remote = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	struct rpma_conn_private_data pdata;
	enum rpma_conn_event ev;
	struct ibv_wc wc;

	CHECK(rpma_mr_reg(peer, buf, BUF_SIZE, RPMA_MR_USAGE_READ_DST, &mr));
	CHECK(rpma_conn_req_new(peer, addr, port, NULL, &req));
	CHECK(rpma_conn_req_connect(&req, NULL, &conn));
	CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		(void) fprintf(stderr, "client: %s\n",
				rpma_utils_conn_event_2str(ev));
		return 1;
	}
	CHECK(rpma_conn_get_private_data(conn, &pdata));
	CHECK(rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &remote));

	CHECK(rpma_read(conn, mr, 0, remote, 0, BUF_SIZE,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	CHECK(rpma_conn_get_cq(conn, &cq));
	CHECK(rpma_cq_wait(cq));
	CHECK(rpma_cq_get_wc(cq, 1, &wc, NULL));
	if (wc.status != IBV_WC_SUCCESS) {
		(void) fprintf(stderr, "client: read: status %d\n",
				(int) wc.status);
		return 1;
	}
	(void) printf("client: read \"%s\"\n", buf);

	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_next_event(conn, &ev));
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_mr_remote_delete(&remote));
	CHECK(rpma_mr_dereg(&mr));
	return 0;
}

int
main(int argc, char *argv[])
{
	int is_server = argc == 4 && strcmp(argv[1], "server") == 0;
	int is_client = argc == 4 && strcmp(argv[1], "client") == 0;
	if (!is_server && !is_client) {
		(void) fprintf(stderr, "usage: %s server|client ADDR PORT\n",
				argv[0]);
		return 2;
	}
	const char *addr = argv[2], *port = argv[3];
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	int ret;

	char *buf = aligned_alloc(BUF_SIZE, BUF_SIZE);
	if (buf == NULL)
		return 1;
	memset(buf, 0, BUF_SIZE);

	/* the device that serves the address: rpmad's, never opened here */
	enum rpma_util_ibv_context_type type = RPMA_UTIL_IBV_CONTEXT_REMOTE;
	if (is_server)
		type = RPMA_UTIL_IBV_CONTEXT_LOCAL;
	CHECK(rpma_utils_get_ibv_context(addr, type, &dev));
	CHECK(rpma_peer_new(dev, &peer));
	if (is_server)
		ret = server(peer, addr, port, buf);
	else
		ret = client(peer, addr, port, buf);
	if (ret == 0)
		CHECK(rpma_peer_delete(&peer));
	free(buf);
	return ret;
}
