// SPDX-License-Identifier: BSD-3-Clause
/*
 * rpma-pair.c -- one librpma server and one client across a real network,
 * for comparing rpmad-brokered librpma with the native, in-process one:
 * the same source is built against librpmaclient and against Debian's
 * librpma 1.2 (NATIVE_RPMA_1; the calls used here are the same in both).
 *
 *   rpma-pair server ADDR PORT
 *   rpma-pair client ADDR PORT [--wait spin|block] [--iters N]
 *                    [--role all|victim|writer] [--seconds S]
 *
 * The client measures, and prints one line each ("NAME VALUE UNIT"):
 *   write_flush_lat_us   8 B write + persistent flush, p50
 *   read_lat_us          4 KiB read, p50
 *   write_bw_qd1_mbs     1 MiB writes, one at a time
 *   write_bw_qd16_mbs    1 MiB writes, 16 in flight
 *   pingpong_rt_us       8 B send/receive round trip, p50: the server
 *                        answers each message, as an RPC server does
 * `spin` polls rpma_cq_get_wc (as most librpma programs do), `block` waits
 * in rpma_cq_wait; the server waits the way it is told too.
 *
 * For two tenants sharing the NIC (bench-rxe.sh runs them side by side),
 * a client of one role measures for S seconds (default 3) instead:
 *   victim: victim_p50_us, victim_p99_us   8 B write + flush, one at a time
 *   writer: writer_mbs                     1 MiB writes, 16 in flight
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librpma.h>

#define MIB (1u << 20)
#define BUF_SIZE (32u * MIB)
#define QD 16
/* where the ping-pong's messages are, at both ends */
#define MSG_SEND_OFF (BUF_SIZE - 4096)
#define MSG_RECV_OFF (BUF_SIZE - 2048)
#define MSG_LEN 8
#define MSG_STOP UINT64_MAX	/* the client's last message */

#define CHECK(call) do { \
	int ret_ = (call); \
	if (ret_) { \
		(void) fprintf(stderr, "rpma-pair: %s: %s\n", #call, \
				rpma_err_2str(ret_)); \
		exit(1); \
	} \
} while (0)

static int spin = 1;

static double
now_us(void)
{
	struct timespec ts;
	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One completion, by polling or by waiting; it must be a success. */
static void
next_wc(struct rpma_cq *cq, struct ibv_wc *out)
{
	struct ibv_wc wc;
	int n;
	for (;;) {
		int ret = rpma_cq_get_wc(cq, 1, &wc, &n);
		if (ret == 0)
			break;
		if (ret != RPMA_E_NO_COMPLETION)
			CHECK(ret);
		if (!spin)
			CHECK(rpma_cq_wait(cq));
	}
	if (wc.status != IBV_WC_SUCCESS) {
		(void) fprintf(stderr, "rpma-pair: %s\n",
				ibv_wc_status_str(wc.status));
		exit(1);
	}
	*out = wc;
}

static void
take_wc(struct rpma_cq *cq)
{
	struct ibv_wc wc;
	next_wc(cq, &wc);
}

static void *
buffer(void)
{
	void *p = aligned_alloc(4096, BUF_SIZE);
	if (p == NULL)
		exit(1);
	memset(p, 0x5a, BUF_SIZE);
	return p;
}

/* Answers each message with one of its own, until MSG_STOP. */
static void
echo(struct rpma_conn *conn, struct rpma_mr_local *mr, uint8_t *mem)
{
	struct rpma_cq *cq;
	CHECK(rpma_conn_get_cq(conn, &cq));
	for (;;) {
		struct ibv_wc wc;
		next_wc(cq, &wc);
		if (wc.opcode != IBV_WC_RECV)
			continue;	/* an answer of ours completed */
		uint64_t v;
		memcpy(&v, mem + MSG_RECV_OFF, sizeof(v));
		if (v == MSG_STOP)
			return;
		CHECK(rpma_recv(conn, mr, MSG_RECV_OFF, MSG_LEN, NULL));
		memcpy(mem + MSG_SEND_OFF, &v, sizeof(v));
		CHECK(rpma_send(conn, mr, MSG_SEND_OFF, MSG_LEN,
				RPMA_F_COMPLETION_ALWAYS, NULL));
	}
}

static int
server(const char *addr, const char *port)
{
	struct ibv_context *dev;
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&dev));
	struct rpma_peer *peer;
	CHECK(rpma_peer_new(dev, &peer));
	void *mem = buffer();
	struct rpma_mr_local *mr;
	CHECK(rpma_mr_reg(peer, mem, BUF_SIZE, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT |
			RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &mr));
	/* [MR descriptor size][MR descriptor][peer config descriptor]: the
	 * client gets the CM's whole private data, zero-padded */
	uint8_t desc[32];
	size_t size;
	CHECK(rpma_mr_get_descriptor_size(mr, &size));
	desc[0] = (uint8_t)size;
	CHECK(rpma_mr_get_descriptor(mr, desc + 1));
	struct rpma_peer_cfg *pcfg;
	CHECK(rpma_peer_cfg_new(&pcfg));
	CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	CHECK(rpma_peer_cfg_get_descriptor(pcfg, desc + 1 + size));

	struct rpma_ep *ep;
	CHECK(rpma_ep_listen(peer, addr, port, &ep));
	(void) printf("listening\n");
	(void) fflush(stdout);
	struct rpma_conn_req *req;
	CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
	struct rpma_conn_private_data pd = { desc, (uint8_t)(size + 2) };
	/* the ping-pong's first message finds a receive */
	CHECK(rpma_conn_req_recv(req, mr, MSG_RECV_OFF, MSG_LEN, NULL));
	struct rpma_conn *conn;
	CHECK(rpma_conn_req_connect(&req, &pd, &conn));
	enum rpma_conn_event ev;
	CHECK(rpma_conn_next_event(conn, &ev));	/* ESTABLISHED */
	echo(conn, mr, (uint8_t *)mem);
	CHECK(rpma_conn_next_event(conn, &ev));	/* CLOSED, when done */
	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_ep_shutdown(&ep));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	CHECK(rpma_peer_delete(&peer));
	free(mem);
	return 0;
}

struct client {
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct rpma_mr_local *mr;
	struct rpma_mr_remote *rmr;
	/*
	 * the deepest flush the target grants: rpmad grants a persistent one
	 * only into memory it can make persistent, which this buffer is not;
	 * on RDMA both are the same read after the write
	 */
	enum rpma_flush_type flush;
};

/* One 8 B write + flush: how long it took, in us */
static double
write_flush(struct client *c)
{
	double t0 = now_us();
	CHECK(rpma_write(c->conn, c->rmr, 0, c->mr, 0, 8,
			RPMA_F_COMPLETION_ON_ERROR, NULL));
	CHECK(rpma_flush(c->conn, c->rmr, 0, 8, c->flush,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	take_wc(c->cq);
	return now_us() - t0;
}

static double
lat_write_flush(struct client *c, int iters)
{
	double *t = malloc(sizeof(double) * (size_t)iters);
	for (int i = 0; i < iters; i++)
		t[i] = write_flush(c);
	qsort(t, (size_t)iters, sizeof(*t), cmp);
	double p50 = t[iters / 2];
	free(t);
	return p50;
}

static double
lat_read(struct client *c, int iters)
{
	double *t = malloc(sizeof(double) * (size_t)iters);
	for (int i = 0; i < iters; i++) {
		double t0 = now_us();
		CHECK(rpma_read(c->conn, c->mr, 0, c->rmr, 0, 4096,
				RPMA_F_COMPLETION_ALWAYS, NULL));
		take_wc(c->cq);
		t[i] = now_us() - t0;
	}
	qsort(t, (size_t)iters, sizeof(*t), cmp);
	double p50 = t[iters / 2];
	free(t);
	return p50;
}

/*
 * 1 MiB writes, `qd` in flight, each signaled: `total` of them, or (total
 * 0) as many as `seconds` allow; MB/s
 */
static double
bw_write(struct client *c, int qd, long total, double seconds)
{
	double t0 = now_us(), end = t0 + seconds * 1e6;
	long posted = 0, done = 0;
	for (;;) {
		bool more = total ? posted < total : now_us() < end;
		if (!more && done == posted)
			break;
		while (more && posted - done < qd) {
			size_t off = (size_t)(posted % QD) * MIB;
			CHECK(rpma_write(c->conn, c->rmr, off, c->mr, off, MIB,
					RPMA_F_COMPLETION_ALWAYS, NULL));
			posted++;
			more = total ? posted < total : now_us() < end;
		}
		take_wc(c->cq);
		done++;
	}
	return (double)done * MIB / (now_us() - t0);
}

/* 8 B round trips: our message, the server's answer; p50 */
static double
lat_pingpong(struct client *c, uint8_t *mem, int iters)
{
	double *t = malloc(sizeof(double) * (size_t)iters);
	for (int i = 0; i <= iters; i++) {
		uint64_t v = i < iters ? (uint64_t)i : MSG_STOP;
		double t0 = now_us();
		if (v != MSG_STOP)
			CHECK(rpma_recv(c->conn, c->mr, MSG_RECV_OFF, MSG_LEN,
					NULL));
		memcpy(mem + MSG_SEND_OFF, &v, sizeof(v));
		CHECK(rpma_send(c->conn, c->mr, MSG_SEND_OFF, MSG_LEN,
				RPMA_F_COMPLETION_ALWAYS, NULL));
		take_wc(c->cq);
		if (v == MSG_STOP)
			break;
		take_wc(c->cq);	/* the send's and the answer's, either order */
		t[i] = now_us() - t0;
	}
	qsort(t, (size_t)iters, sizeof(*t), cmp);
	double p50 = t[iters / 2];
	free(t);
	return p50;
}

/* 8 B write + flush, one at a time, for `seconds`: p50 and p99 */
static void
victim(struct client *c, double seconds)
{
	size_t cap = 1u << 16, n = 0;
	double *t = malloc(sizeof(double) * cap);
	double end = now_us() + seconds * 1e6;
	while (t != NULL && now_us() < end) {
		double took = write_flush(c);
		if (n == cap) {
			cap *= 2;
			double *more = realloc(t, sizeof(double) * cap);
			if (more == NULL)
				exit(1);
			t = more;
		}
		t[n++] = took;
	}
	if (t == NULL || n == 0)
		exit(1);
	qsort(t, n, sizeof(*t), cmp);
	(void) printf("victim_p50_us %.1f us\n", t[n / 2]);
	(void) printf("victim_p99_us %.1f us\n", t[n * 99 / 100]);
	free(t);
}

/* The server's echo ends on MSG_STOP: a role that sends nothing else. */
static void
say_stop(struct client *c, uint8_t *mem)
{
	uint64_t v = MSG_STOP;
	memcpy(mem + MSG_SEND_OFF, &v, sizeof(v));
	CHECK(rpma_send(c->conn, c->mr, MSG_SEND_OFF, MSG_LEN,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	take_wc(c->cq);
}

enum role { ROLE_ALL, ROLE_VICTIM, ROLE_WRITER };

static int
client(const char *addr, const char *port, int iters, enum role role,
		double seconds)
{
	struct ibv_context *dev;
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE,
			&dev));
	struct rpma_peer *peer;
	CHECK(rpma_peer_new(dev, &peer));
	void *mem = buffer();
	struct client c;
	CHECK(rpma_mr_reg(peer, mem, BUF_SIZE, RPMA_MR_USAGE_READ_DST |
			RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND |
			RPMA_MR_USAGE_RECV, &c.mr));
	struct rpma_conn_cfg *cfg;
	CHECK(rpma_conn_cfg_new(&cfg));
	CHECK(rpma_conn_cfg_set_sq_size(cfg, 2 * QD));
	CHECK(rpma_conn_cfg_set_cq_size(cfg, 2 * QD));
	struct rpma_conn_req *req;
	CHECK(rpma_conn_req_new(peer, addr, port, cfg, &req));
	CHECK(rpma_conn_req_connect(&req, NULL, &c.conn));
	enum rpma_conn_event ev;
	CHECK(rpma_conn_next_event(c.conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		(void) fprintf(stderr, "rpma-pair: %s\n",
				rpma_utils_conn_event_2str(ev));
		return 1;
	}
	struct rpma_conn_private_data pd;
	CHECK(rpma_conn_get_private_data(c.conn, &pd));
	const uint8_t *desc = pd.ptr;
	if (desc == NULL || pd.len < 2 || pd.len < (size_t)desc[0] + 2) {
		(void) fprintf(stderr, "rpma-pair: private data of %u bytes\n",
				pd.len);
		return 1;
	}
	CHECK(rpma_mr_remote_from_descriptor(desc + 1, desc[0], &c.rmr));
	int ftype = 0;
	CHECK(rpma_mr_remote_get_flush_type(c.rmr, &ftype));
	c.flush = ftype & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT ?
		RPMA_FLUSH_TYPE_PERSISTENT : RPMA_FLUSH_TYPE_VISIBILITY;
	struct rpma_peer_cfg *pcfg;
	CHECK(rpma_peer_cfg_from_descriptor(desc + 1 + desc[0], 1, &pcfg));
	CHECK(rpma_conn_apply_remote_peer_cfg(c.conn, pcfg));
	CHECK(rpma_conn_get_cq(c.conn, &c.cq));

	(void) lat_write_flush(&c, iters / 10 + 1);	/* warm-up */
	if (role == ROLE_ALL) {
		(void) printf("write_flush_lat_us %.1f us\n",
				lat_write_flush(&c, iters));
		(void) printf("read_lat_us %.1f us\n", lat_read(&c, iters));
		(void) printf("write_bw_qd1_mbs %.0f MB/s\n", bw_write(&c, 1,
				iters / 10 + 16, 0));
		(void) printf("write_bw_qd16_mbs %.0f MB/s\n", bw_write(&c,
				QD, iters / 5 + 32, 0));
		(void) printf("pingpong_rt_us %.1f us\n", lat_pingpong(&c,
				(uint8_t *)mem, iters));
	} else {
		if (role == ROLE_VICTIM)
			victim(&c, seconds);
		else
			(void) printf("writer_mbs %.0f MB/s\n", bw_write(&c,
					QD, 0, seconds));
		say_stop(&c, (uint8_t *)mem);
	}
	(void) fflush(stdout);

	CHECK(rpma_conn_disconnect(c.conn));
	CHECK(rpma_conn_next_event(c.conn, &ev));
	CHECK(rpma_conn_delete(&c.conn));
	CHECK(rpma_mr_remote_delete(&c.rmr));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	CHECK(rpma_conn_cfg_delete(&cfg));
	CHECK(rpma_mr_dereg(&c.mr));
	CHECK(rpma_peer_delete(&peer));
	free(mem);
	return 0;
}

int
main(int argc, char *argv[])
{
	if (argc < 4) {
		(void) fprintf(stderr, "usage: %s server|client ADDR PORT "
				"[--wait spin|block] [--iters N] [--role "
				"all|victim|writer] [--seconds S]\n", argv[0]);
		return 2;
	}
	int iters = 2000;
	enum role role = ROLE_ALL;
	double seconds = 3;
	for (int i = 4; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--wait") == 0)
			spin = strcmp(argv[i + 1], "block") != 0;
		else if (strcmp(argv[i], "--iters") == 0)
			iters = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--role") == 0)
			role = strcmp(argv[i + 1], "victim") == 0 ? ROLE_VICTIM :
				strcmp(argv[i + 1], "writer") == 0 ?
				ROLE_WRITER : ROLE_ALL;
		else if (strcmp(argv[i], "--seconds") == 0)
			seconds = atof(argv[i + 1]);
	}
	if (iters < 10)
		iters = 10;
	if (seconds <= 0)
		seconds = 3;
	if (strcmp(argv[1], "server") == 0)
		return server(argv[2], argv[3]);
	return client(argv[2], argv[3], iters, role, seconds);
}
