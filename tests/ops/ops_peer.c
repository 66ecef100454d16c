// SPDX-License-Identifier: BSD-3-Clause
/*
 * ops_peer.c -- a librpma application for the operations tests: it makes
 * resources rpmactl should show, says "ready", then holds them and obeys
 * one-line commands on stdin.
 *
 *   ops_peer server ADDR PORT FILE  register FILE (shared mapping, remote
 *                                   write/read/flush) and a buffer for
 *                                   messages, listen, accept one client,
 *                                   receive its message
 *   ops_peer client ADDR PORT       connect, write twice, flush to
 *                                   persistence, read, send a message
 *   ops_peer many ADDR N            N registrations of 100 bytes, each on
 *                                   its own page of one buffer
 *
 * Output: "ready ROLE pid=PID comm=COMM" once everything is in place.
 * Commands: "reg" registers one more buffer and answers "reg RESULT" (the
 * librpma return value); "quit" exits at once (the daemon cleans up).
 */

#include <fcntl.h>
#include <librpma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MSG_SIZE 64
#define PAGE 4096

struct offer {
	uint8_t mr_desc[21];
	uint8_t pcfg_desc[1];
};

#define CHECK(call) \
	do { \
		int ret_ = (call); \
		if (ret_) { \
			(void) fprintf(stdout, "error %s:%d: %s: %s\n", \
					__FILE__, __LINE__, #call, \
					rpma_err_2str(ret_)); \
			exit(1); \
		} \
	} while (0)

static struct rpma_peer *peer;

static void
ready(const char *role)
{
	char comm[64] = "?";
	FILE *f = fopen("/proc/self/comm", "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		(void) fclose(f);
	}
	(void) printf("ready %s pid=%d comm=%s\n", role, (int)getpid(), comm);
	(void) fflush(stdout);
}

/* The commands, until "quit" or the end of stdin. */
static int
obey(void)
{
	char line[128];
	static char extra[PAGE] __attribute__((aligned(PAGE)));
	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "reg", 3) == 0) {
			struct rpma_mr_local *mr = NULL;
			int ret = rpma_mr_reg(peer, extra, sizeof(extra),
					RPMA_MR_USAGE_READ_SRC, &mr);
			(void) printf("reg %d\n", ret);
			(void) fflush(stdout);
		} else if (strncmp(line, "quit", 4) == 0) {
			break;
		}
	}
	return 0;
}

static void
wait_completions(struct rpma_cq *cq, int n)
{
	while (n > 0) {
		CHECK(rpma_cq_wait(cq));
		struct ibv_wc wc[8];
		int got = 0;
		int ret;
		while ((ret = rpma_cq_get_wc(cq, 8, wc, &got)) == 0) {
			for (int i = 0; i < got; i++) {
				if (wc[i].status != IBV_WC_SUCCESS) {
					(void) printf("error completion "
							"status %d\n",
							(int)wc[i].status);
					exit(1);
				}
			}
			n -= got;
		}
		if (ret != RPMA_E_NO_COMPLETION)
			CHECK(ret);
	}
}

static int
server(const char *addr, const char *port, const char *path)
{
	int fd = open(path, O_RDWR);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || st.st_size < 4 * PAGE) {
		(void) printf("error: %s: need 16 KiB\n", path);
		return 1;
	}
	size_t size = (size_t)st.st_size;
	void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	(void) close(fd);
	if (mem == MAP_FAILED)
		return 1;
	void *msgs = aligned_alloc(PAGE, 2 * PAGE);
	if (msgs == NULL)
		return 1;

	struct ibv_context *dev;
	struct rpma_mr_local *mr, *msg_mr;
	struct rpma_peer_cfg *pcfg;
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	enum rpma_conn_event ev;
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&dev));
	CHECK(rpma_peer_new(dev, &peer));
	CHECK(rpma_mr_reg(peer, mem, size, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr));
	CHECK(rpma_mr_reg(peer, msgs, 2 * PAGE, RPMA_MR_USAGE_RECV |
			RPMA_MR_USAGE_SEND, &msg_mr));
	CHECK(rpma_peer_cfg_new(&pcfg));
	CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	struct offer offer;
	CHECK(rpma_mr_get_descriptor(mr, offer.mr_desc));
	CHECK(rpma_peer_cfg_get_descriptor(pcfg, offer.pcfg_desc));
	struct rpma_conn_private_data pdata = { &offer, sizeof(offer) };

	CHECK(rpma_ep_listen(peer, addr, port, &ep));
	(void) printf("listening\n");
	(void) fflush(stdout);
	CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
	CHECK(rpma_conn_req_recv(req, msg_mr, 0, MSG_SIZE, NULL));
	CHECK(rpma_conn_req_connect(&req, &pdata, &conn));
	CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		(void) printf("error: %s\n", rpma_utils_conn_event_2str(ev));
		return 1;
	}
	CHECK(rpma_conn_get_cq(conn, &cq));
	wait_completions(cq, 1);	/* the client's message */
	ready("server");
	return obey();
}

static int
client(const char *addr, const char *port)
{
	char *buf = aligned_alloc(PAGE, 4 * PAGE);
	if (buf == NULL)
		return 1;
	memset(buf, 'x', 4 * PAGE);

	struct ibv_context *dev;
	struct rpma_mr_local *mr;
	struct rpma_mr_remote *remote;
	struct rpma_peer_cfg *pcfg;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	enum rpma_conn_event ev;
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE,
			&dev));
	CHECK(rpma_peer_new(dev, &peer));
	CHECK(rpma_mr_reg(peer, buf, 4 * PAGE, RPMA_MR_USAGE_WRITE_SRC |
			RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND, &mr));
	CHECK(rpma_conn_req_new(peer, addr, port, NULL, &req));
	CHECK(rpma_conn_req_connect(&req, NULL, &conn));
	CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		(void) printf("error: %s\n", rpma_utils_conn_event_2str(ev));
		return 1;
	}
	struct rpma_conn_private_data pdata;
	CHECK(rpma_conn_get_private_data(conn, &pdata));
	if (pdata.len < sizeof(struct offer)) {
		(void) printf("error: no offer\n");
		return 1;
	}
	const struct offer *offer = pdata.ptr;
	CHECK(rpma_mr_remote_from_descriptor(offer->mr_desc,
			sizeof(offer->mr_desc), &remote));
	CHECK(rpma_peer_cfg_from_descriptor(offer->pcfg_desc,
			sizeof(offer->pcfg_desc), &pcfg));
	CHECK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	CHECK(rpma_conn_get_cq(conn, &cq));

	/* 2 writes (8 KiB), a persistent flush, a read (4 KiB), a message */
	CHECK(rpma_write(conn, remote, 0, mr, 0, PAGE,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	CHECK(rpma_write(conn, remote, PAGE, mr, PAGE, PAGE,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	CHECK(rpma_flush(conn, remote, 0, 2 * PAGE,
			RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			NULL));
	CHECK(rpma_read(conn, mr, 2 * PAGE, remote, 0, PAGE,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	CHECK(rpma_send(conn, mr, 3 * PAGE, MSG_SIZE,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	wait_completions(cq, 5);
	ready("client");
	return obey();
}

static int
many(const char *addr, long n)
{
	char *buf = aligned_alloc(PAGE, (size_t)n * PAGE);
	if (buf == NULL)
		return 1;
	memset(buf, 0, (size_t)n * PAGE);
	struct ibv_context *dev;
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&dev));
	CHECK(rpma_peer_new(dev, &peer));
	/*
	 * One registration of the whole buffer first shares all its pages
	 * at once; the small ones then reuse them (registering thousands of
	 * separate private pages one by one is slow in the library).
	 */
	struct rpma_mr_local *all;
	CHECK(rpma_mr_reg(peer, buf, (size_t)n * PAGE, RPMA_MR_USAGE_READ_SRC,
			&all));
	for (long i = 0; i < n; i++) {
		struct rpma_mr_local *mr;
		CHECK(rpma_mr_reg(peer, buf + i * PAGE, 100,
				RPMA_MR_USAGE_READ_SRC, &mr));
	}
	CHECK(rpma_mr_dereg(&all));
	ready("many");
	return obey();
}

int
main(int argc, char *argv[])
{
	if (argc == 5 && strcmp(argv[1], "server") == 0)
		return server(argv[2], argv[3], argv[4]);
	if (argc == 4 && strcmp(argv[1], "client") == 0)
		return client(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "many") == 0)
		return many(argv[2], strtol(argv[3], NULL, 10));
	(void) fprintf(stderr, "usage: ops_peer server ADDR PORT FILE | "
			"client ADDR PORT | many ADDR N\n");
	return 2;
}
