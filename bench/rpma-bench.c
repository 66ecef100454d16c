// SPDX-License-Identifier: BSD-3-Clause
/*
 * rpma-bench.c -- what rpmad costs, measured against the floor it runs on
 *
 * One run measures, side by side:
 *   - through rpmad, across two daemons on loopback and with both ends on
 *     one daemon: latency (p50, p99) of an 8 B write + flush, of an 8 B
 *     send/receive ping-pong and of a 4 KiB read; bandwidth of 4 KiB and
 *     1 MiB writes at queue depth 1 and 16;
 *   - the floor: a plain TCP ping-pong (and one that polls instead of
 *     sleeping) and a TCP stream between two processes on loopback, and
 *     memcpy;
 * and prints one table with the ratio of each result to its floor and the
 * CPU time the rpmad processes used per operation; then the scale table
 * (bench_scale.c): registrations and connection set-up beside many
 * existing ones, and rpmad's memory per registration and per connection.
 *
 * usage: rpma-bench [--rpmad PATH] [--seconds S] [--wait block|spin]
 *                   [--only two|one|floor|scale] [--scale-regs N]
 *                   [--scale-conns N]
 * Needs an rpmad binary (--rpmad, $RPMAD_BIN, or rpmad in PATH); it starts
 * its own daemons on temporary sockets.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <librpma.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_scale.h"

#define BUF_SIZE	(64u << 20)	/* registered on both sides */
#define MIB		(1u << 20)
#define KIB		1024u
#define MAX_SAMPLES	(1u << 20)
#define ADDR		"127.0.0.1"

enum wait_mode { WAIT_SPIN, WAIT_BLOCK };

static struct {
	const char *rpmad;
	double seconds;
	enum wait_mode wait;
	const char *only;
	int port;
	unsigned scale_regs, scale_conns;
} opt = {
	.seconds = 1.0,
	.wait = WAIT_BLOCK,
	.port = 17400,
	.scale_regs = 100000,
	.scale_conns = 1000,
};

#define CHECK(call) \
	do { \
		int ret_ = (call); \
		if (ret_) { \
			(void) fprintf(stderr, "rpma-bench: %s:%d: %s: %s\n", \
					__FILE__, __LINE__, #call, \
					rpma_err_2str(ret_)); \
			exit(1); \
		} \
	} while (0)

static double
now_s(void)
{
	struct timespec ts;
	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------- daemons */

struct daemon {
	pid_t pid;
	char sock[108];
};

static void
daemon_start(struct daemon *d, const char *dir, const char *name)
{
	(void) snprintf(d->sock, sizeof(d->sock), "%s/%s.sock", dir, name);
	d->pid = fork();
	if (d->pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		(void) dup2(null, STDERR_FILENO);
		execlp(opt.rpmad, opt.rpmad, "--foreground", "--socket", d->sock,
				"--transport", "tcp", "--config", "/dev/null",
				(char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		memcpy(sun.sun_path, d->sock, strlen(d->sock) + 1);
		int ok = connect(s, (struct sockaddr *)&sun, sizeof(sun)) == 0;
		(void) close(s);
		if (ok)
			return;
		(void) usleep(10000);
	}
	(void) fprintf(stderr, "rpma-bench: %s did not start\n", opt.rpmad);
	exit(1);
}

static void
daemon_stop(struct daemon *d)
{
	(void) kill(d->pid, SIGTERM);
	(void) waitpid(d->pid, NULL, 0);
}

/* CPU seconds (user + system) a process used so far. */
static double
cpu_seconds(pid_t pid)
{
	char path[64], buf[1024];
	(void) snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	(void) fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	unsigned long utime = 0, stime = 0;
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u "
			"%*u %*u %lu %lu", &utime, &stime) != 2)
		return 0;
	return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* ----------------------------------------------------- rpma side, server */

/* What the server offers: its buffer's descriptor. */
struct offer {
	uint8_t mr_desc[21];
	uint8_t pcfg_desc[1];
};

enum server_mode { SERVE_PASSIVE = 1, SERVE_ECHO = 2 };

static void *
alloc_buf(void)
{
	void *p = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static void
get_wc_wait(struct rpma_cq *cq, struct ibv_wc *wc)
{
	for (;;) {
		int ret = rpma_cq_get_wc(cq, 1, wc, NULL);
		if (ret == 0) {
			if (wc->status != IBV_WC_SUCCESS) {
				(void) fprintf(stderr, "rpma-bench: completion "
						"failed: %s\n",
						ibv_wc_status_str(wc->status));
				exit(1);
			}
			return;
		}
		if (ret != RPMA_E_NO_COMPLETION)
			CHECK(ret);
		if (opt.wait == WAIT_BLOCK) {
			ret = rpma_cq_wait(cq);
			if (ret && ret != RPMA_E_NO_COMPLETION)
				CHECK(ret);
		}
	}
}

/*
 * The server: one connection at a time; ECHO answers every message with a
 * message, PASSIVE just waits for the goodbye.
 */
static void
serve(const char *port, enum server_mode mode, int ready_fd)
{
	struct ibv_context *dev;
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_mr_local *mr;
	struct rpma_peer_cfg *pcfg;
	uint8_t *buf = alloc_buf();

	CHECK(rpma_utils_get_ibv_context(ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&dev));
	CHECK(rpma_peer_new(dev, &peer));
	CHECK(rpma_mr_reg(peer, buf, BUF_SIZE, 0xff, &mr));
	CHECK(rpma_peer_cfg_new(&pcfg));
	CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	struct offer offer;
	CHECK(rpma_mr_get_descriptor(mr, offer.mr_desc));
	CHECK(rpma_peer_cfg_get_descriptor(pcfg, offer.pcfg_desc));
	CHECK(rpma_ep_listen(peer, ADDR, port, &ep));
	char ok = 1;
	if (write(ready_fd, &ok, 1) != 1)
		exit(1);

	struct rpma_conn_cfg *cfg;
	CHECK(rpma_conn_cfg_new(&cfg));
	CHECK(rpma_conn_cfg_set_sq_size(cfg, 64));
	CHECK(rpma_conn_cfg_set_rq_size(cfg, 64));
	CHECK(rpma_conn_cfg_set_cq_size(cfg, 128));

	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata = { &offer, sizeof(offer) };
	enum rpma_conn_event ev;
	CHECK(rpma_ep_next_conn_req(ep, cfg, &req));
	if (mode == SERVE_ECHO)
		CHECK(rpma_conn_req_recv(req, mr, 0, 8, NULL));
	CHECK(rpma_conn_req_connect(&req, &pdata, &conn));
	CHECK(rpma_conn_next_event(conn, &ev));

	if (mode == SERVE_ECHO) {
		struct rpma_cq *cq;
		CHECK(rpma_conn_get_cq(conn, &cq));
		struct ibv_wc wc;
		for (;;) {
			get_wc_wait(cq, &wc);	/* a message arrived */
			if (*(uint64_t *)buf == UINT64_MAX)
				break;
			CHECK(rpma_recv(conn, mr, 0, 8, NULL));
			CHECK(rpma_send(conn, mr, 8, 8,
					RPMA_F_COMPLETION_ALWAYS, NULL));
			get_wc_wait(cq, &wc);	/* the answer left */
		}
	}
	CHECK(rpma_conn_next_event(conn, &ev));
	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_delete(&conn));
	exit(0);
}

/* ----------------------------------------------------- rpma side, client */

struct client {
	struct rpma_peer *peer;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct rpma_mr_local *mr;
	struct rpma_mr_remote *remote;
	uint8_t *buf;
	pid_t server;
};

static void
client_open(struct client *c, const char *server_sock,
		const char *client_sock, enum server_mode mode)
{
	char port[16];
	(void) snprintf(port, sizeof(port), "%d", opt.port++);
	int pfd[2];
	if (pipe(pfd))
		exit(1);
	c->server = fork();
	if (c->server == 0) {
		(void) setenv("RPMAD_SOCKET", server_sock, 1);
		(void) close(pfd[0]);
		serve(port, mode, pfd[1]);
	}
	(void) close(pfd[1]);
	char ok;
	if (read(pfd[0], &ok, 1) != 1) {
		(void) fprintf(stderr, "rpma-bench: the server did not start\n");
		exit(1);
	}
	(void) close(pfd[0]);

	(void) setenv("RPMAD_SOCKET", client_sock, 1);
	struct ibv_context *dev;
	CHECK(rpma_utils_get_ibv_context(ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE,
			&dev));
	CHECK(rpma_peer_new(dev, &c->peer));
	c->buf = alloc_buf();
	CHECK(rpma_mr_reg(c->peer, c->buf, BUF_SIZE, 0xff, &c->mr));
	struct rpma_conn_cfg *cfg;
	CHECK(rpma_conn_cfg_new(&cfg));
	CHECK(rpma_conn_cfg_set_sq_size(cfg, 64));
	CHECK(rpma_conn_cfg_set_rq_size(cfg, 64));
	CHECK(rpma_conn_cfg_set_cq_size(cfg, 128));
	struct rpma_conn_req *req;
	CHECK(rpma_conn_req_new(c->peer, ADDR, port, cfg, &req));
	CHECK(rpma_conn_cfg_delete(&cfg));
	CHECK(rpma_conn_req_connect(&req, NULL, &c->conn));
	enum rpma_conn_event ev;
	CHECK(rpma_conn_next_event(c->conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		(void) fprintf(stderr, "rpma-bench: %s\n",
				rpma_utils_conn_event_2str(ev));
		exit(1);
	}
	struct rpma_conn_private_data pd;
	CHECK(rpma_conn_get_private_data(c->conn, &pd));
	const struct offer *offer = pd.ptr;
	struct rpma_peer_cfg *pcfg;
	CHECK(rpma_mr_remote_from_descriptor(offer->mr_desc, 21, &c->remote));
	CHECK(rpma_peer_cfg_from_descriptor(offer->pcfg_desc, 1, &pcfg));
	CHECK(rpma_conn_apply_remote_peer_cfg(c->conn, pcfg));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	CHECK(rpma_conn_get_cq(c->conn, &c->cq));
}

static void
client_close(struct client *c)
{
	enum rpma_conn_event ev;
	CHECK(rpma_conn_disconnect(c->conn));
	CHECK(rpma_conn_next_event(c->conn, &ev));
	CHECK(rpma_conn_delete(&c->conn));
	CHECK(rpma_mr_remote_delete(&c->remote));
	CHECK(rpma_mr_dereg(&c->mr));
	CHECK(rpma_peer_delete(&c->peer));
	(void) munmap(c->buf, BUF_SIZE);
	(void) waitpid(c->server, NULL, 0);
}

struct result {
	double p50_us, p99_us;	/* latency tests */
	double mbps;		/* bandwidth tests */
	double ops;
};

static void
latencies(double *lat, size_t n, struct result *r)
{
	qsort(lat, n, sizeof(*lat), cmp_double);
	r->p50_us = lat[n / 2] * 1e6;
	r->p99_us = lat[n * 99 / 100] * 1e6;
	r->ops = (double)n;
}

static void
lat_write_flush(struct client *c, struct result *r)
{
	double *lat = malloc(MAX_SAMPLES * sizeof(*lat));
	size_t n = 0;
	struct ibv_wc wc;
	double end = now_s() + opt.seconds;
	while (n < MAX_SAMPLES && now_s() < end) {
		double t0 = now_s();
		CHECK(rpma_write(c->conn, c->remote, 0, c->mr, 0, 8,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
		CHECK(rpma_flush(c->conn, c->remote, 0, 8,
				RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, NULL));
		get_wc_wait(c->cq, &wc);
		lat[n++] = now_s() - t0;
	}
	latencies(lat, n, r);
	free(lat);
}

static void
lat_read(struct client *c, size_t size, struct result *r)
{
	double *lat = malloc(MAX_SAMPLES * sizeof(*lat));
	size_t n = 0;
	struct ibv_wc wc;
	double end = now_s() + opt.seconds;
	while (n < MAX_SAMPLES && now_s() < end) {
		double t0 = now_s();
		CHECK(rpma_read(c->conn, c->mr, 0, c->remote, 0, size,
				RPMA_F_COMPLETION_ALWAYS, NULL));
		get_wc_wait(c->cq, &wc);
		lat[n++] = now_s() - t0;
	}
	latencies(lat, n, r);
	free(lat);
}

static void
lat_pingpong(struct client *c, struct result *r)
{
	double *lat = malloc(MAX_SAMPLES * sizeof(*lat));
	size_t n = 0;
	struct ibv_wc wc;
	double end = now_s() + opt.seconds;
	while (n < MAX_SAMPLES && now_s() < end) {
		double t0 = now_s();
		CHECK(rpma_recv(c->conn, c->mr, 16, 8, NULL));
		*(uint64_t *)c->buf = n;
		CHECK(rpma_send(c->conn, c->mr, 0, 8,
				RPMA_F_COMPLETION_ALWAYS, NULL));
		get_wc_wait(c->cq, &wc);
		get_wc_wait(c->cq, &wc);
		lat[n++] = now_s() - t0;
	}
	/* tell the echo server to stop */
	*(uint64_t *)c->buf = UINT64_MAX;
	CHECK(rpma_send(c->conn, c->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL));
	get_wc_wait(c->cq, &wc);
	latencies(lat, n, r);
	free(lat);
}

/* Writes of `size` bytes, `depth` outstanding, for opt.seconds. */
static void
bw_write(struct client *c, size_t size, unsigned depth, struct result *r)
{
	size_t slots = BUF_SIZE / size;
	unsigned out = 0;
	uint64_t done = 0, posted = 0;
	struct ibv_wc wc;
	double t0 = now_s(), end = t0 + opt.seconds;
	while (now_s() < end || out > 0) {
		while (out < depth && now_s() < end) {
			size_t off = (posted % slots) * size;
			CHECK(rpma_write(c->conn, c->remote, off, c->mr, off,
					size, RPMA_F_COMPLETION_ALWAYS, NULL));
			posted++;
			out++;
		}
		get_wc_wait(c->cq, &wc);
		out--;
		done++;
	}
	double secs = now_s() - t0;
	r->mbps = (double)done * (double)size / secs / 1e6;
	r->ops = (double)done;
}

/* -------------------------------------------------------------- floor */

static int
tcp_pair(int *a, int *b)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(sin);
	if (bind(l, (struct sockaddr *)&sin, len) || listen(l, 1) ||
			getsockname(l, (struct sockaddr *)&sin, &len))
		return -1;
	*a = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(*a, (struct sockaddr *)&sin, len))
		return -1;
	*b = accept(l, NULL, NULL);
	(void) close(l);
	int one = 1;
	(void) setsockopt(*a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void) setsockopt(*b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return *b < 0 ? -1 : 0;
}

static int
full_io(int fd, void *buf, size_t len, int do_write)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = do_write ? write(fd, (char *)buf + done, len - done) :
			read(fd, (char *)buf + done, len - done);
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* Reads all of len, spinning on a non-blocking socket (yielding). */
static int
full_read_spin(int fd, void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = recv(fd, (char *)buf + done, len - done,
				MSG_DONTWAIT);
		if (n == 0)
			return -1;
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -1;
			(void) sched_yield();
			continue;
		}
		done += (size_t)n;
	}
	return 0;
}

static void
floor_pingpong(struct result *r, bool spin)
{
	int a, b;
	if (tcp_pair(&a, &b)) {
		perror("tcp");
		exit(1);
	}
	pid_t echo = fork();
	if (echo == 0) {
		(void) close(a);
		uint64_t v;
		while ((spin ? full_read_spin(b, &v, 8) : full_io(b, &v, 8, 0))
				== 0 && full_io(b, &v, 8, 1) == 0)
			;
		_exit(0);
	}
	(void) close(b);
	double *lat = malloc(MAX_SAMPLES * sizeof(*lat));
	size_t n = 0;
	double end = now_s() + opt.seconds;
	while (n < MAX_SAMPLES && now_s() < end) {
		uint64_t v = n;
		double t0 = now_s();
		if (full_io(a, &v, 8, 1) || (spin ? full_read_spin(a, &v, 8) :
				full_io(a, &v, 8, 0)))
			break;
		lat[n++] = now_s() - t0;
	}
	(void) close(a);
	(void) waitpid(echo, NULL, 0);
	latencies(lat, n, r);
	free(lat);
}

static void
floor_stream(struct result *r)
{
	int a, b;
	if (tcp_pair(&a, &b)) {
		perror("tcp");
		exit(1);
	}
	pid_t sink = fork();
	if (sink == 0) {
		(void) close(a);
		char *buf = malloc(MIB);
		while (read(b, buf, MIB) > 0)
			;
		_exit(0);
	}
	(void) close(b);
	char *buf = malloc(MIB);
	memset(buf, 1, MIB);
	uint64_t done = 0;
	double t0 = now_s(), end = t0 + opt.seconds;
	while (now_s() < end && full_io(a, buf, MIB, 1) == 0)
		done++;
	double secs = now_s() - t0;
	(void) close(a);
	(void) waitpid(sink, NULL, 0);
	free(buf);
	r->mbps = (double)done * MIB / secs / 1e6;
	r->ops = (double)done;
}

/* 1 MiB copies walking through buffers as big as the benchmark's. */
static void
floor_memcpy(struct result *r)
{
	uint8_t *src = alloc_buf(), *dst = alloc_buf();
	size_t slots = BUF_SIZE / MIB;
	uint64_t done = 0;
	double t0 = now_s(), end = t0 + opt.seconds;
	while (now_s() < end) {
		size_t off = (done % slots) * MIB;
		memcpy(dst + off, src + off, MIB);
		/* the copy must happen: the compiler may not drop it */
		__asm__ volatile("" : : "r"(dst) : "memory");
		done++;
	}
	double secs = now_s() - t0;
	r->mbps = (double)done * MIB / secs / 1e6;
	(void) munmap(src, BUF_SIZE);
	(void) munmap(dst, BUF_SIZE);
}

/* ------------------------------------------------------------- the run */

struct row {
	const char *name;
	const char *setup;
	struct result r;
	const struct result *floor;
	bool latency;
	double rpmad_cpu_us_per_op;
};

#define MAX_ROWS 32
static struct row rows[MAX_ROWS];
static int nrows;

static struct result fl_pingpong, fl_pingpong_spin, fl_stream, fl_memcpy;

typedef void bench_fn(struct client *c, struct result *r, size_t size,
		unsigned depth);

static void
do_lat_wf(struct client *c, struct result *r, size_t s, unsigned d)
{
	lat_write_flush(c, r);
}

static void
do_lat_read(struct client *c, struct result *r, size_t s, unsigned d)
{
	lat_read(c, s, r);
}

static void
do_lat_pp(struct client *c, struct result *r, size_t s, unsigned d)
{
	lat_pingpong(c, r);
}

static void
do_bw(struct client *c, struct result *r, size_t s, unsigned d)
{
	bw_write(c, s, d, r);
}

/* What a measuring child reports back. */
struct child_report {
	struct result r;
	double rpmad_cpu_s;
};

/*
 * One measurement, in a child process of its own: librpmaclient keeps one
 * rpmad session per process, so the client must start fresh to talk to
 * the daemon this setup names.
 */
static void
run_rpma(const char *setup, struct daemon *ds, struct daemon *dc,
		const char *name, bench_fn *fn, size_t size, unsigned depth,
		enum server_mode mode, const struct result *floor, bool latency)
{
	int pfd[2];
	if (pipe(pfd)) {
		perror("pipe");
		exit(1);
	}
	pid_t child = fork();
	if (child == 0) {
		(void) close(pfd[0]);
		struct client c;
		client_open(&c, ds->sock, dc->sock, mode);
		struct child_report rep;
		memset(&rep, 0, sizeof(rep));
		double cpu0 = cpu_seconds(ds->pid) +
			(dc != ds ? cpu_seconds(dc->pid) : 0);
		fn(&c, &rep.r, size, depth);
		rep.rpmad_cpu_s = cpu_seconds(ds->pid) +
			(dc != ds ? cpu_seconds(dc->pid) : 0) - cpu0;
		client_close(&c);
		if (write(pfd[1], &rep, sizeof(rep)) != sizeof(rep))
			_exit(1);
		_exit(0);
	}
	(void) close(pfd[1]);
	struct child_report rep;
	ssize_t n = read(pfd[0], &rep, sizeof(rep));
	(void) close(pfd[0]);
	int status = 1;
	(void) waitpid(child, &status, 0);
	if (n != sizeof(rep) || status != 0) {
		(void) fprintf(stderr, "rpma-bench: %s, %s failed\n", name,
				setup);
		exit(1);
	}
	struct row *row = &rows[nrows++];
	row->name = name;
	row->setup = setup;
	row->floor = floor;
	row->latency = latency;
	row->r = rep.r;
	row->rpmad_cpu_us_per_op = rep.r.ops > 0 ?
		rep.rpmad_cpu_s * 1e6 / rep.r.ops : 0;
}

static void
run_setup(const char *setup, struct daemon *ds, struct daemon *dc)
{
	const struct result *mem = ds == dc ? &fl_memcpy : &fl_stream;
	run_rpma(setup, ds, dc, "8 B write+flush latency", do_lat_wf, 8, 1,
			SERVE_PASSIVE, &fl_pingpong, true);
	run_rpma(setup, ds, dc, "8 B send/recv ping-pong", do_lat_pp, 8, 1,
			SERVE_ECHO, &fl_pingpong, true);
	run_rpma(setup, ds, dc, "4 KiB read latency", do_lat_read, 4 * KIB, 1,
			SERVE_PASSIVE, &fl_pingpong, true);
	run_rpma(setup, ds, dc, "4 KiB write bw, QD1", do_bw, 4 * KIB, 1,
			SERVE_PASSIVE, mem, false);
	run_rpma(setup, ds, dc, "4 KiB write bw, QD16", do_bw, 4 * KIB, 16,
			SERVE_PASSIVE, mem, false);
	run_rpma(setup, ds, dc, "1 MiB write bw, QD1", do_bw, MIB, 1,
			SERVE_PASSIVE, mem, false);
	run_rpma(setup, ds, dc, "1 MiB write bw, QD16", do_bw, MIB, 16,
			SERVE_PASSIVE, mem, false);
}

static void
print_table(void)
{
	(void) printf("\n%-24s %-12s %10s %10s %10s %8s %12s\n", "measurement",
			"setup", "p50 us", "p99 us", "MB/s", "ratio",
			"rpmad us/op");
	(void) printf("%-24s %-12s %10.1f %10.1f %10s %8s %12s\n",
			"TCP 8 B ping-pong", "floor", fl_pingpong.p50_us,
			fl_pingpong.p99_us, "-", "1.00", "-");
	(void) printf("%-24s %-12s %10.1f %10.1f %10s %8.2f %12s\n",
			"TCP 8 B ping-pong, spin", "floor", fl_pingpong_spin.p50_us,
			fl_pingpong_spin.p99_us, "-",
			fl_pingpong_spin.p50_us / fl_pingpong.p50_us, "-");
	(void) printf("%-24s %-12s %10s %10s %10.0f %8s %12s\n",
			"TCP stream 1 MiB", "floor", "-", "-", fl_stream.mbps,
			"1.00", "-");
	(void) printf("%-24s %-12s %10s %10s %10.0f %8s %12s\n",
			"memcpy 1 MiB", "floor", "-", "-", fl_memcpy.mbps,
			"1.00", "-");
	for (int i = 0; i < nrows; i++) {
		const struct row *w = &rows[i];
		if (w->latency)
			(void) printf("%-24s %-12s %10.1f %10.1f %10s %8.2f "
					"%12.1f\n", w->name, w->setup,
					w->r.p50_us, w->r.p99_us, "-",
					w->r.p50_us / w->floor->p50_us,
					w->rpmad_cpu_us_per_op);
		else
			(void) printf("%-24s %-12s %10s %10s %10.0f %8.2f "
					"%12.1f\n", w->name, w->setup, "-",
					"-", w->r.mbps,
					w->r.mbps / w->floor->mbps,
					w->rpmad_cpu_us_per_op);
	}
	(void) printf("\nratio: latency / TCP ping-pong latency (lower is "
			"better); bandwidth / TCP stream (two rpmads) or / "
			"memcpy (one rpmad) (higher is better); each floor is "
			"the better of a measurement before and after; the "
			"spinning ping-pong polls its socket without sleeping, "
			"as librpmaclient polls its queues\n");
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "rpmad", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 's' },
		{ "wait", required_argument, NULL, 'w' },
		{ "only", required_argument, NULL, 'o' },
		{ "port", required_argument, NULL, 'p' },
		{ "scale-regs", required_argument, NULL, 'R' },
		{ "scale-conns", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	opt.rpmad = getenv("RPMAD_BIN") ? getenv("RPMAD_BIN") : "rpmad";
	int ch;
	while ((ch = getopt_long(argc, argv, "r:s:w:o:p:R:C:", longopts,
			NULL)) != -1) {
		switch (ch) {
		case 'r':
			opt.rpmad = optarg;
			break;
		case 's':
			opt.seconds = atof(optarg);
			break;
		case 'w':
			opt.wait = strcmp(optarg, "spin") == 0 ? WAIT_SPIN :
				WAIT_BLOCK;
			break;
		case 'o':
			opt.only = optarg;
			break;
		case 'p':
			opt.port = atoi(optarg);
			break;
		case 'R':
			opt.scale_regs = (unsigned)atoi(optarg);
			break;
		case 'C':
			opt.scale_conns = (unsigned)atoi(optarg);
			break;
		default:
			(void) fprintf(stderr, "usage: rpma-bench [--rpmad PATH] "
					"[--seconds S] [--wait spin|block] "
					"[--only two|one|floor|scale] [--port N] "
					"[--scale-regs N] [--scale-conns N]\n");
			return 2;
		}
	}
	(void) signal(SIGPIPE, SIG_IGN);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_ERROR);

	char dir[] = "/tmp/rpma-bench.XXXXXX";
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	if (opt.only && strcmp(opt.only, "scale") == 0) {
		int ret = bench_scale(opt.rpmad, dir, opt.port, opt.scale_regs,
				opt.scale_conns);
		(void) rmdir(dir);
		return ret ? 1 : 0;
	}
	floor_pingpong(&fl_pingpong, false);
	floor_pingpong(&fl_pingpong_spin, true);
	floor_stream(&fl_stream);
	floor_memcpy(&fl_memcpy);

	struct daemon a, b;
	daemon_start(&a, dir, "A");
	daemon_start(&b, dir, "B");
	if (opt.only == NULL || strcmp(opt.only, "two") == 0)
		run_setup("two rpmads", &a, &b);
	if (opt.only == NULL || strcmp(opt.only, "one") == 0)
		run_setup("one rpmad", &a, &a);
	daemon_stop(&a);
	daemon_stop(&b);
	int scale_failed = opt.only == NULL && bench_scale(opt.rpmad, dir,
			opt.port, opt.scale_regs, opt.scale_conns) ? 1 : 0;
	(void) rmdir(dir);

	/* the floor again: the faster of the two is the one compared to */
	struct result again;
	floor_pingpong(&again, false);
	if (again.p50_us < fl_pingpong.p50_us)
		fl_pingpong = again;
	floor_pingpong(&again, true);
	if (again.p50_us < fl_pingpong_spin.p50_us)
		fl_pingpong_spin = again;
	floor_stream(&again);
	if (again.mbps > fl_stream.mbps)
		fl_stream = again;
	floor_memcpy(&again);
	if (again.mbps > fl_memcpy.mbps)
		fl_memcpy = again;

	print_table();
	return scale_failed;
}
