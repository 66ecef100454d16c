// SPDX-License-Identifier: BSD-3-Clause
/*
 * rpma-bench.c -- what rpmad costs, measured against the floor it runs on
 *
 * One run measures, side by side:
 *   - through rpmad, across two daemons on loopback and with both ends on
 *     one daemon: latency (p50, p99) of an 8 B write + flush, of an 8 B
 *     send/receive ping-pong and of a 4 KiB read; bandwidth of 4 KiB and
 *     1 MiB writes at queue depth 1 and 16 and of a 1 MiB send/receive
 *     ping-pong;
 *   - each of them in four ways: one client that blocks in rpma_cq_wait,
 *     and 1, 2 and 4 client processes at once (each with its own server
 *     and connection) that busy-poll rpma_cq_get_wc as fio does (their
 *     echo servers too);
 *   - the floor: a plain TCP ping-pong (and one that polls instead of
 *     sleeping), a TCP stream between two processes on loopback, memcpy,
 *     and libfabric's fi_pingpong (tcp provider, msg endpoints; shm
 *     provider, rdm endpoints -- shm has no msg endpoints) when installed;
 * and prints one table with the ratio of each result to its floor and the
 * CPU time the rpmad processes used per operation; then the scale table
 * (bench_scale.c): registrations and connection set-up beside many
 * existing ones, rpmad's memory per registration and per connection, and
 * a registration beside another user's idle sessions.
 *
 * usage: rpma-bench [--rpmad PATH] [--seconds S] [--modes LIST] [--moved]
 *                   [--only two|one|fair|floor|scale] [--rows TEXT]
 *                   [--port N] [--rpmad-nice DELTA]
 *                   [--idle N] [--idle-conns N] [--idle-regs N]
 *                   [--scale-regs N] [--scale-conns N]
 *                   [--scale-sessions N] [--server-regs N] [--tls]
 * LIST: comma-separated of block, busy1, busy2, busy4 (default: all);
 * TEXT: only the measurements whose name holds it ("ping-pong");
 * DELTA: added to the daemons' niceness (negative: needs CAP_SYS_NICE);
 * --idle N, --idle-conns N, --idle-regs N: then everything again beside
 * another process's crowd at each daemon: N connection requests that never
 * connect, N idle connections, N registrations ("two +idle", "one +idle").
 * --server-regs N: every server registers N pages of its own first, then
 * its buffer (the landing thread checks each access against all of a
 * process's registrations).
 * Needs an rpmad binary (--rpmad, $RPMAD_BIN, or rpmad in PATH); it starts
 * its own daemons on temporary sockets, without the per-user limits;
 * $RPMA_BENCH_CONF adds lines of rpmad.conf(5) of one's own to theirs, and
 * $RPMA_BENCH_RPMAD_LOG names a file for their log. --moved makes the
 * clients and servers non-dumpable and, when the bench runs as root,
 * another user's (root opens its /proc/self/mem whatever its dumpable
 * flag says): the library then moves registered private pages into its
 * memfd (the RDMA devices' way) instead of handing rpmad the address
 * space, to compare the two. --tls: the 4 KiB
 * QD16 writes and the 1 MiB ping-pong across two rpmads again, between
 * two rpmads with tls = required (rpmad.conf(5); the keys made for the
 * run), beside the same rows without TLS ("two +tls"); the kernel's TLS
 * when it has one, else rpmad's relay (its log says which).
 * --only fair runs the
 * neighbour rows alone (run_neighbours); --no-weights leaves out the
 * weighted writers and their [user] sections (an rpmad without weights).
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_scale.h"
#include "bench_util.h"

#define BUF_SIZE	(64u << 20)	/* registered on both sides */
#define MIB		(1u << 20)
#define KIB		1024u
#define MAX_SAMPLES	(1u << 20)
#define ADDR		"127.0.0.1"
#define MAX_PROCS	4
#define MOVED_UID 61004 /* --moved's measuring processes, under root */
/* where the echo server receives and sends from (1 MiB messages fit) */
#define ECHO_RECV_OFF	0
#define ECHO_SEND_OFF	(2 * MIB)
#define PP_RECV_OFF	(4 * MIB)

enum wait_mode { WAIT_SPIN, WAIT_BLOCK };

/* How a measurement is run: blocking waits, or n busy-polling processes. */
struct mode {
	const char *name;
	enum wait_mode wait;
	int procs;
};

static const struct mode all_modes[] = {
	{ "block", WAIT_BLOCK, 1 },
	{ "busy x1", WAIT_SPIN, 1 },
	{ "busy x2", WAIT_SPIN, 2 },
	{ "busy x4", WAIT_SPIN, 4 },
};
#define N_MODES (sizeof(all_modes) / sizeof(all_modes[0]))

static struct {
	const char *rpmad;
	double seconds;
	enum wait_mode wait;	/* of this process (set per measurement) */
	bool mode_on[N_MODES];
	const char *only;
	const char *rows;	/* only measurements whose name holds this */
	int port;
	int rpmad_nice;		/* added to the daemons' niceness */
	/* another tenant's crowd, for a second pass: idle connection
	 * requests, idle connections, registrations */
	int idle, idle_conns, idle_regs;
	unsigned scale_regs, scale_conns, scale_sessions;
	unsigned server_regs; /* pages each server registers first */
	bool no_weights;	/* an rpmad without the weight setting */
	/*
	 * the clients and servers not dumpable: the library cannot hand
	 * rpmad their address space, and moves registered private pages
	 * into its memfd instead (the RDMA devices' way), to compare
	 */
	bool moved;
	bool tls;		/* the TLS rows beside their plain twins */
} opt = {
	.seconds = 1.0,
	.wait = WAIT_BLOCK,
	.mode_on = { true, true, true, true },
	.port = 17400,
	.scale_regs = 100000,
	.scale_conns = 1000,
	.scale_sessions = 15000,
};

#define CHECK(call) BENCH_CHECK(call, exit)

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
	d->pid = bench_daemon_start(opt.rpmad, d->sock, opt.rpmad_nice);
	if (d->pid < 0)
		exit(1);
}

static void
daemon_stop(struct daemon *d)
{
	bench_daemon_stop(d->pid, d->sock);
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

enum server_mode { SERVE_PASSIVE = 1, SERVE_ECHO = 2, SERVE_FILE = 3 };

/* SERVE_FILE: a file of the page cache, persisted by msync in rpmad */
#define FILE_SIZE	(256u << 20)
static char file_dir[64];

/* The size of the echo server's messages (set before the fork). */
static size_t echo_size = 8;

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

/*
 * --server-regs: as many pages of the server's own registered first, one
 * registration each, kept until it exits.
 */
static void
register_pages(struct rpma_peer *peer, unsigned n)
{
	if (n == 0)
		return;
	size_t ps = (size_t) sysconf(_SC_PAGESIZE);
	uint8_t *pages = mmap(NULL, n * ps, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (pages == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	for (unsigned i = 0; i < n; i++) {
		struct rpma_mr_local *mr;
		CHECK(rpma_mr_reg(peer, pages + i * ps, ps,
				RPMA_MR_USAGE_WRITE_DST, &mr));
	}
}

/* A new file of FILE_SIZE on the disk, shared: its pages are written back. */
static void *
file_buf(void)
{
	char path[128];
	(void) snprintf(path, sizeof(path), "%s/persist.%d", file_dir,
			(int)getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, FILE_SIZE)) {
		perror(path);
		exit(1);
	}
	(void) unlink(path);
	void *p = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	(void) memset(p, 0, FILE_SIZE);	/* its blocks allocated */
	/*
	 * fd stays open: an unprivileged process's unlinked file reaches
	 * rpmad by a descriptor it holds (librpmaclient(7))
	 */
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
	uint8_t *buf = mode == SERVE_FILE ? file_buf() : alloc_buf();

	CHECK(rpma_utils_get_ibv_context(ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&dev));
	CHECK(rpma_peer_new(dev, &peer));
	register_pages(peer, opt.server_regs);
	CHECK(rpma_mr_reg(peer, buf, mode == SERVE_FILE ? FILE_SIZE : BUF_SIZE,
			0xff, &mr));
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
		CHECK(rpma_conn_req_recv(req, mr, ECHO_RECV_OFF, echo_size,
				NULL));
	CHECK(rpma_conn_req_connect(&req, &pdata, &conn));
	CHECK(rpma_conn_next_event(conn, &ev));

	if (mode == SERVE_ECHO) {
		struct rpma_cq *cq;
		CHECK(rpma_conn_get_cq(conn, &cq));
		struct ibv_wc wc;
		for (;;) {
			get_wc_wait(cq, &wc);	/* a message arrived */
			if (*(uint64_t *)(buf + ECHO_RECV_OFF) == UINT64_MAX)
				break;
			CHECK(rpma_recv(conn, mr, ECHO_RECV_OFF, echo_size,
					NULL));
			CHECK(rpma_send(conn, mr, ECHO_SEND_OFF, echo_size,
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

/* Round trips of `size`-byte messages; MB/s counts both directions. */
static void
lat_pingpong(struct client *c, size_t size, struct result *r)
{
	double *lat = malloc(MAX_SAMPLES * sizeof(*lat));
	size_t n = 0;
	struct ibv_wc wc;
	double t_start = now_s(), end = t_start + opt.seconds;
	while (n < MAX_SAMPLES && now_s() < end) {
		double t0 = now_s();
		CHECK(rpma_recv(c->conn, c->mr, PP_RECV_OFF, size, NULL));
		*(uint64_t *)c->buf = n;
		CHECK(rpma_send(c->conn, c->mr, 0, size,
				RPMA_F_COMPLETION_ALWAYS, NULL));
		get_wc_wait(c->cq, &wc);
		get_wc_wait(c->cq, &wc);
		lat[n++] = now_s() - t0;
	}
	double secs = now_s() - t_start;
	/* tell the echo server to stop */
	*(uint64_t *)c->buf = UINT64_MAX;
	CHECK(rpma_send(c->conn, c->mr, 0, size, RPMA_F_COMPLETION_ALWAYS,
			NULL));
	get_wc_wait(c->cq, &wc);
	latencies(lat, n, r);
	r->mbps = (double)n * 2.0 * (double)size / secs / 1e6;
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
		if (out == 0)
			break;	/* the time ended between the two checks */
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

/* ------------------------------------------------------ libfabric floor */

/*
 * One fi_pingpong run (server and client processes on loopback): the
 * round trip of `size`-byte messages, and MB/s counting both directions
 * as fi_pingpong does. Returns -1 when it cannot run (not installed, the
 * provider or endpoint type missing, or it took longer than a minute).
 */
static int
fi_run(const char *prov, const char *ep, size_t size, long iters,
		struct result *r)
{
	char sz[32], it[32], port[16];
	(void) snprintf(sz, sizeof(sz), "%zu", size);
	(void) snprintf(it, sizeof(it), "%ld", iters);
	(void) snprintf(port, sizeof(port), "%d", opt.port++);
	pid_t srv = fork();
	if (srv == 0) {
		int null = open("/dev/null", O_WRONLY);
		(void) dup2(null, STDOUT_FILENO);
		(void) dup2(null, STDERR_FILENO);
		(void) alarm(60);
		execlp("fi_pingpong", "fi_pingpong", "-p", prov, "-e", ep, "-I",
				it, "-S", sz, "-B", port, (char *)NULL);
		_exit(127);
	}
	(void) usleep(300 * 1000);	/* the server's control port listens */
	int pfd[2];
	if (pipe(pfd))
		exit(1);
	pid_t cli = fork();
	if (cli == 0) {
		int null = open("/dev/null", O_WRONLY);
		(void) dup2(pfd[1], STDOUT_FILENO);
		(void) dup2(null, STDERR_FILENO);
		(void) close(pfd[0]);
		(void) alarm(60);
		execlp("fi_pingpong", "fi_pingpong", "-p", prov, "-e", ep, "-I",
				it, "-S", sz, "-P", port, ADDR, (char *)NULL);
		_exit(127);
	}
	(void) close(pfd[1]);
	char out[4096];
	size_t len = 0;
	ssize_t n;
	while (len < sizeof(out) - 1 &&
			(n = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	(void) close(pfd[0]);
	int st_cli = 1, st_srv = 1;
	(void) waitpid(cli, &st_cli, 0);
	if (st_cli != 0)
		(void) kill(srv, SIGKILL);
	(void) waitpid(srv, &st_srv, 0);
	/* the last line: bytes #sent #ack total time MB/sec usec/xfer ... */
	char *line = strrchr(out, '\n');
	while (line && line > out && line[1] == '\0') {
		*line = '\0';
		line = strrchr(out, '\n');
	}
	line = line ? line + 1 : out;
	double mbps = 0, usec = 0;
	if (st_cli != 0 || sscanf(line, "%*s %*s %*s %*s %*s %lf %lf", &mbps,
			&usec) != 2 || usec <= 0)
		return -1;
	memset(r, 0, sizeof(*r));
	r->p50_us = r->p99_us = 2 * usec;	/* a transfer is one way */
	r->mbps = mbps;
	r->ops = (double)iters;
	return 0;
}

/* Iterations for about opt.seconds at `us` per round trip. */
static long
fi_iters(double us)
{
	long n = (long)(opt.seconds * 1e6 / us);
	return n < 50 ? 50 : n > 200000 ? 200000 : n;
}

struct fi_floor {
	const char *name;
	const char *prov, *ep;
	size_t size;
	bool ok;
	struct result r;
};

static struct fi_floor fi_floors[] = {
	{ .name = "fi_pingpong tcp 8 B", .prov = "tcp", .ep = "msg",
		.size = 8 },
	{ .name = "fi_pingpong tcp 1 MiB", .prov = "tcp", .ep = "msg",
		.size = MIB },
	{ .name = "fi_pingpong shm 8 B", .prov = "shm", .ep = "rdm",
		.size = 8 },
	{ .name = "fi_pingpong shm 1 MiB", .prov = "shm", .ep = "rdm",
		.size = MIB },
};
#define N_FI (sizeof(fi_floors) / sizeof(fi_floors[0]))
enum { FI_TCP_8, FI_TCP_1M, FI_SHM_8, FI_SHM_1M };

/*
 * Measures the libfabric floors (a short run first, to size the real one
 * to opt.seconds); keeps the better of the runs before and after.
 */
static void
fi_measure(void)
{
	for (unsigned i = 0; i < N_FI; i++) {
		struct fi_floor *f = &fi_floors[i];
		struct result r;
		if (fi_run(f->prov, f->ep, f->size, 50, &r) ||
				fi_run(f->prov, f->ep, f->size,
					fi_iters(r.p50_us), &r))
			continue;
		if (!f->ok || r.p50_us < f->r.p50_us)
			f->r = r;
		f->ok = true;
	}
}

/* ------------------------------------------------------------- the run */

struct row {
	const char *name;
	const char *setup;
	const char *mode;
	struct result r;
	const struct result *floor;
	bool latency;
	bool both;	/* latency and MB/s (ping-pong) */
	double rpmad_cpu_us_per_op;
};

#define MAX_ROWS 256
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
	lat_pingpong(c, s, r);
}

static void
do_bw(struct client *c, struct result *r, size_t s, unsigned d)
{
	bw_write(c, s, d, r);
}

/* What a measuring child reports back. */
struct child_report {
	struct result r;
};

/* What one measurement is. */
struct bench {
	const char *name;
	bench_fn *fn;
	size_t size;
	unsigned depth;
	enum server_mode server;
	bool latency, both;
};

static void
read_all(int fd, void *buf, size_t len)
{
	if (full_io(fd, buf, len, 0)) {
		(void) fprintf(stderr, "rpma-bench: a measuring process "
				"failed\n");
		exit(1);
	}
}

/*
 * Makes this process one whose /proc/self/mem the library cannot open:
 * not dumpable and, under root, another user (the file belongs to root).
 */
static void
take_moved_path(void)
{
	if (geteuid() == 0)
		bench_become_user(MOVED_UID);
	if (prctl(PR_SET_DUMPABLE, 0)) {
		perror("rpma-bench: prctl");
		_exit(1);
	}
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		(void) fprintf(stderr,
				"rpma-bench: --moved: /proc/self/mem "
				"still opens\n");
		_exit(1);
	}
}

/*
 * One measurement in `m->procs` child processes at once, each with its
 * own server and connection: librpmaclient keeps one rpmad session per
 * process, so a client must start fresh to talk to the daemon this setup
 * names. They start measuring together once all are connected.
 */
static void
run_rpma(const char *setup, struct daemon *ds, struct daemon *dc,
		const struct bench *b, const struct mode *m,
		const struct result *floor)
{
	int up[2], go[2];
	if (pipe(up) || pipe(go)) {
		perror("pipe");
		exit(1);
	}
	pid_t child[MAX_PROCS];
	for (int i = 0; i < m->procs; i++) {
		child[i] = fork();
		if (child[i] != 0)
			continue;
		(void) close(up[0]);
		(void) close(go[1]);
		opt.wait = m->wait;	/* the server forked next inherits it */
		if (opt.moved)	/* before the first call; the server's too */
			take_moved_path();
		echo_size = b->size;
		opt.port += 97 * i;
		struct client c;
		client_open(&c, ds->sock, dc->sock, b->server);
		char byte = 1;
		if (write(up[1], &byte, 1) != 1 || read(go[0], &byte, 1) != 1)
			_exit(1);
		struct child_report rep;
		memset(&rep, 0, sizeof(rep));
		b->fn(&c, &rep.r, b->size, b->depth);
		client_close(&c);
		if (write(up[1], &rep, sizeof(rep)) != sizeof(rep))
			_exit(1);
		_exit(0);
	}
	opt.port += 97 * m->procs;
	(void) close(up[1]);
	(void) close(go[0]);
	for (int i = 0; i < m->procs; i++) {
		char byte;
		read_all(up[0], &byte, 1);
	}
	double cpu0 = cpu_seconds(ds->pid) +
		(dc != ds ? cpu_seconds(dc->pid) : 0);
	char gos[MAX_PROCS] = { 0 };
	if (write(go[1], gos, (size_t)m->procs) != m->procs)
		exit(1);
	struct result sum;
	memset(&sum, 0, sizeof(sum));
	for (int i = 0; i < m->procs; i++) {
		struct child_report rep;
		read_all(up[0], &rep, sizeof(rep));
		/* latency: the mean of the p50s, the worst p99; MB/s: summed */
		sum.p50_us += rep.r.p50_us / m->procs;
		if (rep.r.p99_us > sum.p99_us)
			sum.p99_us = rep.r.p99_us;
		sum.mbps += rep.r.mbps;
		sum.ops += rep.r.ops;
	}
	double cpu = cpu_seconds(ds->pid) +
		(dc != ds ? cpu_seconds(dc->pid) : 0) - cpu0;
	(void) close(up[0]);
	(void) close(go[1]);
	for (int i = 0; i < m->procs; i++) {
		int status = 1;
		(void) waitpid(child[i], &status, 0);
		if (status != 0) {
			(void) fprintf(stderr, "rpma-bench: %s, %s, %s failed\n",
					b->name, setup, m->name);
			exit(1);
		}
	}
	if (nrows == MAX_ROWS)
		return;
	struct row *row = &rows[nrows++];
	row->name = b->name;
	row->setup = setup;
	row->mode = m->name;
	row->floor = floor;
	row->latency = b->latency;
	row->both = b->both;
	row->r = sum;
	row->rpmad_cpu_us_per_op = sum.ops > 0 ? cpu * 1e6 / sum.ops : 0;
}

/* the rows --tls measures with TLS beside without */
static bool
tls_row(const char *name)
{
	return strcmp(name, "4 KiB write bw, QD16") == 0 ||
		strcmp(name, "1 MiB send/recv ping-pong") == 0;
}

/*
 * Two rpmads with tls = required, each knowing the other's key: the keys'
 * file in dir, named in their rpmad.conf (bench_conf_global).
 */
static void
tls_daemons_start(struct daemon *a, struct daemon *b, const char *dir)
{
	char keys[128], conf[256];
	(void) snprintf(keys, sizeof(keys), "%s/tls.psk", dir);
	int fd = open(keys, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	unsigned char key[32];
	int rnd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || rnd < 0 || read(rnd, key, sizeof(key)) !=
			(ssize_t)sizeof(key)) {
		perror("rpma-bench: keys");
		exit(1);
	}
	(void) close(rnd);
	(void) dprintf(fd, "bench:");
	for (size_t i = 0; i < sizeof(key); i++)
		(void) dprintf(fd, "%02x", key[i]);
	(void) dprintf(fd, "\n");
	(void) close(fd);
	(void) snprintf(conf, sizeof(conf), "tls = required\n"
			"tls_psk_file = %s\n", keys);
	bench_conf_global = conf;
	daemon_start(a, dir, "TA");
	daemon_start(b, dir, "TB");
	bench_conf_global = NULL;
}

static void
run_setup(const char *setup, struct daemon *ds, struct daemon *dc)
{
	bool one = ds == dc;
	const struct result *mem = one ? &fl_memcpy : &fl_stream;
	const struct fi_floor *pp8 = &fi_floors[one ? FI_SHM_8 : FI_TCP_8];
	const struct fi_floor *pp1m = &fi_floors[one ? FI_SHM_1M : FI_TCP_1M];
	const struct bench benches[] = {
		{ "8 B write+flush latency", do_lat_wf, 8, 1, SERVE_PASSIVE,
			true, false },
		{ "8 B send/recv ping-pong", do_lat_pp, 8, 1, SERVE_ECHO,
			true, true },
		{ "4 KiB read latency", do_lat_read, 4 * KIB, 1, SERVE_PASSIVE,
			true, false },
		{ "4 KiB write bw, QD1", do_bw, 4 * KIB, 1, SERVE_PASSIVE,
			false, false },
		{ "4 KiB write bw, QD16", do_bw, 4 * KIB, 16, SERVE_PASSIVE,
			false, false },
		{ "1 MiB write bw, QD1", do_bw, MIB, 1, SERVE_PASSIVE,
			false, false },
		{ "1 MiB write bw, QD16", do_bw, MIB, 16, SERVE_PASSIVE,
			false, false },
		{ "1 MiB send/recv ping-pong", do_lat_pp, MIB, 1, SERVE_ECHO,
			true, true },
	};
	for (unsigned i = 0; i < sizeof(benches) / sizeof(benches[0]); i++) {
		const struct bench *b = &benches[i];
		if (opt.rows && strstr(b->name, opt.rows) == NULL)
			continue;
		if (opt.tls && !tls_row(b->name))
			continue;
		const struct result *floor = b->latency ? &fl_pingpong : mem;
		if (b->fn == do_lat_pp) {
			const struct fi_floor *f = b->size == 8 ? pp8 : pp1m;
			floor = f->ok ? &f->r : b->size == 8 ? &fl_pingpong :
				NULL;
		}
		for (unsigned k = 0; k < N_MODES; k++) {
			if (opt.mode_on[k])
				run_rpma(setup, ds, dc, b, &all_modes[k],
						floor);
		}
	}
}

static void
print_floor(const char *name, const struct result *r, bool latency,
		const char *ratio)
{
	if (latency)
		(void) printf("%-26s %-10s %-8s %9.1f %9.1f %8s %7s %11s\n",
				name, "floor", "", r->p50_us, r->p99_us, "-",
				ratio, "-");
	else
		(void) printf("%-26s %-10s %-8s %9s %9s %8.0f %7s %11s\n",
				name, "floor", "", "-", "-", r->mbps, ratio,
				"-");
}

static void
print_table(void)
{
	(void) printf("\n%-26s %-10s %-8s %9s %9s %8s %7s %11s\n",
			"measurement", "setup", "mode", "p50 us", "p99 us",
			"MB/s", "ratio", "rpmad us/op");
	print_floor("TCP 8 B ping-pong", &fl_pingpong, true, "1.00");
	char ratio[16];
	(void) snprintf(ratio, sizeof(ratio), "%.2f",
			fl_pingpong_spin.p50_us / fl_pingpong.p50_us);
	print_floor("TCP 8 B ping-pong, spin", &fl_pingpong_spin, true, ratio);
	print_floor("TCP stream 1 MiB", &fl_stream, false, "1.00");
	print_floor("memcpy 1 MiB", &fl_memcpy, false, "1.00");
	for (unsigned i = 0; i < N_FI; i++) {
		const struct fi_floor *f = &fi_floors[i];
		if (!f->ok) {
			(void) printf("%-26s %-10s (could not run: skipped)\n",
					f->name, "floor");
			continue;
		}
		(void) printf("%-26s %-10s %-8s %9.1f %9s %8.*f %7s %11s\n",
				f->name, "floor", "", f->r.p50_us, "-",
				f->r.mbps < 10 ? 2 : 0, f->r.mbps, "1.00",
				"-");
	}
	for (int i = 0; i < nrows; i++) {
		const struct row *w = &rows[i];
		char p50[16] = "-", p99[16] = "-", mbps[16] = "-";
		char rt[16] = "-";
		if (w->latency) {
			(void) snprintf(p50, sizeof(p50), "%.1f", w->r.p50_us);
			(void) snprintf(p99, sizeof(p99), "%.1f", w->r.p99_us);
		}
		if (!w->latency || w->both)
			(void) snprintf(mbps, sizeof(mbps), w->r.mbps < 10 ?
					"%.2f" : "%.0f", w->r.mbps);
		if (w->floor && w->latency && w->floor->p50_us > 0)
			(void) snprintf(rt, sizeof(rt), "%.2f",
					w->r.p50_us / w->floor->p50_us);
		else if (w->floor && !w->latency && w->floor->mbps > 0)
			(void) snprintf(rt, sizeof(rt), "%.2f",
					w->r.mbps / w->floor->mbps);
		(void) printf("%-26s %-10s %-8s %9s %9s %8s %7s %11.1f\n",
				w->name, w->setup, w->mode, p50, p99, mbps, rt,
				w->rpmad_cpu_us_per_op);
	}
	(void) printf("\nmode: block = one client waiting in rpma_cq_wait; "
			"busy xN = N client processes at once, each spinning "
			"on rpma_cq_get_wc (p50: their mean, p99: the worst, "
			"MB/s: their sum).\nratio: latency / floor latency "
			"(lower is better): the TCP ping-pong, for ping-pongs "
			"fi_pingpong (tcp across two rpmads, shm on one; its "
			"usec/xfer doubled to a round trip); bandwidth / TCP "
			"stream (two rpmads) or memcpy (one rpmad) (higher is "
			"better). Ping-pong MB/s counts both directions, as "
			"fi_pingpong does. Each floor is the better of a "
			"measurement before and after.\n");
}

/* ------------------------------------------------------------ neighbours */

/*
 * One tenant's bulk traffic beside another's small operations: a victim
 * (an 8 B write + flush at a time, blocking or spinning) alone and beside
 * a neighbour, and the neighbour's bandwidth alone and beside the victim.
 * The neighbours: a writer (1 MiB writes at QD16), a persister (1 MiB
 * writes at QD16 over a 256 MiB file of the page cache, then one
 * persistent flush of all of it, which rpmad msyncs), and two writers of
 * two users whose weights are 3 and 1 (bench_util.c's rpmad.conf). And a
 * control that uses no rpmad at all: two processes spinning on the CPU,
 * what a victim pays for the cores alone where the neighbours keep them
 * busy (the writer keeps rpmads' threads busy).
 */

enum neighbour { NB_NONE, NB_WRITER, NB_PERSISTER, NB_HOG };

static const char *const nb_names[] = { "alone", "1 MiB QD16 writer",
		"256 MiB persister", "2 CPU hogs" };

/* The CPU hogs in the rows beside them. */
#define HOGS 2

/* Spins on the CPU until a byte (or EOF) arrives on stop_fd. */
static void
hog_run(int stop_fd)
{
	char b;
	while (read(stop_fd, &b, 1) < 0 && errno == EAGAIN) {
		/* about a millisecond of work between looks */
		for (volatile unsigned i = 0; i < 1000000; i++)
			;
	}
}

/* The neighbour's traffic until a byte (or EOF) arrives on stop_fd. */
static void
neighbour_run(struct client *c, enum neighbour nb, int stop_fd,
		struct result *r)
{
	const unsigned depth = 16;
	size_t span = nb == NB_PERSISTER ? FILE_SIZE : BUF_SIZE;
	size_t slots = span / MIB, lslots = BUF_SIZE / MIB;
	unsigned out = 0;
	uint64_t done = 0, posted = 0;
	struct ibv_wc wc;
	bool stop = false;
	/* the persister wrote the whole file: no more until it is persisted */
	bool file_written = false;
	double t0 = now_s();
	while (!stop || out > 0) {
		char b;
		if (!stop && (read(stop_fd, &b, 1) >= 0 || errno != EAGAIN))
			stop = true;
		while (!stop && !file_written && out < depth) {
			size_t off = (posted % slots) * MIB;
			CHECK(rpma_write(c->conn, c->remote, off, c->mr,
					(posted % lslots) * MIB, MIB,
					RPMA_F_COMPLETION_ALWAYS, NULL));
			posted++;
			out++;
			file_written = nb == NB_PERSISTER &&
				posted % slots == 0;
		}
		if (out == 0)
			break;
		get_wc_wait(c->cq, &wc);
		out--;
		done++;
		if (file_written && out == 0) {
			CHECK(rpma_flush(c->conn, c->remote, 0, FILE_SIZE,
					RPMA_FLUSH_TYPE_PERSISTENT,
					RPMA_F_COMPLETION_ALWAYS, NULL));
			get_wc_wait(c->cq, &wc);
			r->ops++;	/* persists */
			file_written = false;
		}
	}
	r->mbps = (double)done * MIB / (now_s() - t0) / 1e6;
}

/* One process of a neighbour run: a victim, or a neighbour of a user. */
struct nb_proc {
	enum neighbour nb;	/* NB_NONE: the victim */
	enum wait_mode wait;
	uid_t uid;		/* 0: the bench's own */
};

static pid_t
nb_spawn(const struct nb_proc *p, int i, struct daemon *ds,
		struct daemon *dc, int up, const int go[2], const int stop[2])
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	/* the parent's ends: its close of them is what this one waits for */
	(void) close(go[1]);
	(void) close(stop[1]);
	opt.wait = p->wait;
	opt.port += 97 * i;
	/*
	 * changing uid made the process non-dumpable, whose registrations
	 * take the moved-pages path (librpmaclient(7)): dumpable again, as a
	 * process its user starts is
	 */
	if (p->uid) {
		bench_become_user(p->uid);
		if (prctl(PR_SET_DUMPABLE, 1)) {
			perror("rpma-bench: prctl");
			_exit(1);
		}
	}
	(void) fcntl(stop[0], F_SETFL, O_NONBLOCK);
	char byte = 1;
	struct child_report rep;
	memset(&rep, 0, sizeof(rep));
	if (p->nb == NB_HOG) {
		if (write(up, &byte, 1) != 1 || read(go[0], &byte, 1) != 1)
			_exit(1);
		hog_run(stop[0]);
		if (write(up, &rep, sizeof(rep)) != sizeof(rep))
			_exit(1);
		_exit(0);
	}
	struct client c;
	client_open(&c, ds->sock, dc->sock, p->nb == NB_PERSISTER ?
			SERVE_FILE : SERVE_PASSIVE);
	if (write(up, &byte, 1) != 1 || read(go[0], &byte, 1) != 1)
		_exit(1);
	if (p->nb == NB_NONE)
		lat_write_flush(&c, &rep.r);
	else
		neighbour_run(&c, p->nb, stop[0], &rep.r);
	client_close(&c);
	if (write(up, &rep, sizeof(rep)) != sizeof(rep))
		_exit(1);
	_exit(0);
}

/*
 * The processes at once, each with its own server and connection, the
 * victim (if any) first: they start together, the neighbours stop when
 * the victim is done (or after opt.seconds). Results in procs' order.
 */
static void
nb_run(struct daemon *ds, struct daemon *dc, const struct nb_proc *procs,
		int n, struct result *res)
{
	int up[MAX_PROCS][2], go[2], stop[2];
	pid_t pid[MAX_PROCS];
	if (pipe(go) || pipe(stop)) {
		perror("pipe");
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		if (pipe(up[i])) {
			perror("pipe");
			exit(1);
		}
		pid[i] = nb_spawn(&procs[i], i, ds, dc, up[i][1], go, stop);
		(void) close(up[i][1]);
	}
	opt.port += 97 * n;
	(void) close(go[0]);
	(void) close(stop[0]);
	for (int i = 0; i < n; i++) {
		char byte;
		read_all(up[i][0], &byte, 1);
	}
	char gos[MAX_PROCS] = { 0 };
	if (write(go[1], gos, (size_t)n) != n)
		exit(1);
	int first = 0;
	if (procs[0].nb == NB_NONE) {
		struct child_report rep;
		read_all(up[0][0], &rep, sizeof(rep));
		res[0] = rep.r;
		first = 1;
	} else {
		(void) usleep((useconds_t)(opt.seconds * 1e6));
	}
	(void) close(stop[1]);	/* the neighbours stop */
	for (int i = first; i < n; i++) {
		struct child_report rep;
		read_all(up[i][0], &rep, sizeof(rep));
		res[i] = rep.r;
	}
	(void) close(go[1]);
	for (int i = 0; i < n; i++) {
		int status = 1;
		(void) close(up[i][0]);
		(void) waitpid(pid[i], &status, 0);
		if (status != 0) {
			(void) fprintf(stderr, "rpma-bench: a neighbour run "
					"failed\n");
			exit(1);
		}
	}
}

struct nb_row {
	const char *setup, *mode, *what;
	struct result victim, alone;	/* the victim's, beside and alone */
	enum neighbour nb;		/* who was beside */
	double mbps, mbps_alone;	/* the neighbour's, or 0 */
	double persists;		/* the persister's, beside the victim */
	double weighted[2];		/* weights 3:1: MB/s of each */
};

#define MAX_NB_ROWS 32
static struct nb_row nb_rows[MAX_NB_ROWS];
static int n_nb_rows;

/* The users of the weighted writers, and their weights in rpmad.conf. */
#define WEIGHT_UID_HEAVY 61003
#define WEIGHT_UID_LIGHT 61001
/* the neighbour's user: another tenant than the victim (the bench's) */
#define NEIGHBOUR_UID 61002

/*
 * Each neighbour's bandwidth alone, added to sum[nb]: run before the rows
 * beside it and again after them, since a neighbour's figure alone drifts
 * by a tenth or more over a minute on a shared machine.
 */
static void
neighbours_alone(struct daemon *ds, struct daemon *dc, double sum[])
{
	for (int nb = NB_WRITER; nb <= NB_PERSISTER; nb++) {
		if (opt.rows && strstr(nb_names[nb], opt.rows) == NULL)
			continue;
		struct nb_proc p = { (enum neighbour)nb, WAIT_BLOCK,
				NEIGHBOUR_UID };
		struct result r;
		nb_run(ds, dc, &p, 1, &r);
		sum[nb] += r.mbps;
	}
}

static void
run_neighbours(const char *setup, struct daemon *ds, struct daemon *dc)
{
	double alone_mbps[NB_HOG + 1] = { 0 };
	int first_row = n_nb_rows;
	neighbours_alone(ds, dc, alone_mbps);
	for (unsigned k = 0; k < 2; k++) {	/* block, busy x1 */
		if (!opt.mode_on[k])
			continue;
		struct nb_proc v = { NB_NONE, all_modes[k].wait, 0 };
		struct result alone;
		nb_run(ds, dc, &v, 1, &alone);
		for (int nb = NB_NONE; nb <= NB_HOG; nb++) {
			if (nb != NB_NONE && opt.rows &&
					strstr(nb_names[nb], opt.rows) == NULL)
				continue;
			if (n_nb_rows == MAX_NB_ROWS)
				return;
			struct nb_row *row = &nb_rows[n_nb_rows++];
			row->setup = setup;
			row->mode = all_modes[k].name;
			row->what = nb_names[nb];
			row->alone = alone;
			if (nb == NB_NONE) {
				row->victim = alone;
				continue;
			}
			struct nb_proc procs[1 + HOGS] = { v };
			int n = nb == NB_HOG ? 1 + HOGS : 2;
			for (int i = 1; i < n; i++)
				procs[i] = (struct nb_proc){
					(enum neighbour)nb, WAIT_BLOCK,
					NEIGHBOUR_UID };
			struct result r[1 + HOGS];
			nb_run(ds, dc, procs, n, r);
			row->victim = r[0];
			row->mbps = r[1].mbps;
			row->persists = r[1].ops;
			row->nb = (enum neighbour)nb;
		}
	}
	/* the mean of the runs alone before and after those beside */
	neighbours_alone(ds, dc, alone_mbps);
	for (int i = first_row; i < n_nb_rows; i++)
		if (nb_rows[i].mbps > 0)
			nb_rows[i].mbps_alone = alone_mbps[nb_rows[i].nb] / 2;
	if (opt.no_weights || (opt.rows && strstr("weights 3:1", opt.rows) ==
			NULL))
		return;
	struct nb_proc w[2] = {
		{ NB_WRITER, WAIT_BLOCK, WEIGHT_UID_HEAVY },
		{ NB_WRITER, WAIT_BLOCK, WEIGHT_UID_LIGHT },
	};
	struct result r[2];
	nb_run(ds, dc, w, 2, r);
	if (n_nb_rows == MAX_NB_ROWS)
		return;
	struct nb_row *row = &nb_rows[n_nb_rows++];
	row->setup = setup;
	row->mode = "block";
	row->what = "weights 3:1";
	row->weighted[0] = r[0].mbps;
	row->weighted[1] = r[1].mbps;
}

static void
print_neighbours(void)
{
	if (n_nb_rows == 0)
		return;
	(void) printf("\n%-10s %-8s %-18s %9s %9s %8s %8s %8s %8s\n",
			"setup", "mode", "victim beside", "p50 us", "p99 us",
			"p99 x", "nb MB/s", "alone", "MB/s x");
	for (int i = 0; i < n_nb_rows; i++) {
		const struct nb_row *w = &nb_rows[i];
		if (w->weighted[0] > 0 || w->weighted[1] > 0) {
			(void) printf("%-10s %-8s %-18s %9s %9s %8s %8.0f "
					"%8.0f %8.2f\n", w->setup, w->mode,
					w->what, "-", "-", "-", w->weighted[0],
					w->weighted[1], w->weighted[1] > 0 ?
					w->weighted[0] / w->weighted[1] : 0);
			continue;
		}
		char mb[16] = "-", al[16] = "-", x[16] = "-";
		if (w->mbps > 0) {
			(void) snprintf(mb, sizeof(mb), "%.0f", w->mbps);
			(void) snprintf(al, sizeof(al), "%.0f", w->mbps_alone);
			if (w->mbps_alone > 0)
				(void) snprintf(x, sizeof(x), "%.2f",
						w->mbps / w->mbps_alone);
		}
		char persists[32] = "";
		if (w->nb == NB_PERSISTER)
			(void) snprintf(persists, sizeof(persists),
					"  %.0f persists", w->persists);
		(void) printf("%-10s %-8s %-18s %9.1f %9.1f %8.2f %8s %8s "
				"%8s%s\n", w->setup, w->mode, w->what,
				w->victim.p50_us, w->victim.p99_us,
				w->alone.p99_us > 0 ? w->victim.p99_us /
				w->alone.p99_us : 0, mb, al, x, persists);
	}
	(void) printf("\nvictim: 8 B write + flush, one at a time; p99 x: its "
			"p99 beside / alone. nb MB/s: the neighbour's beside "
			"the victim, alone: without it (the mean of runs before "
			"and after), MB/s x: their ratio; persists: the "
			"persister's while beside the victim. "
			"weights 3:1: two 1 MiB QD16 writers of users %d "
			"(weight 3) and %d (weight 1): nb MB/s the first's, "
			"alone the second's, MB/s x: their ratio.\n",
			WEIGHT_UID_HEAVY, WEIGHT_UID_LIGHT);
}

/*
 * Another tenant's crowd at a daemon, held by a process of its own:
 * opt.idle connection requests that never connect, opt.idle_conns idle
 * connections (a server child on `server_sock` accepts them: the other
 * daemon, so that they cross between the two as a tenant's would) and
 * opt.idle_regs registrations of single pages. rpmad's poller, timers and
 * look-ups must not pay for them. Returns its pid; it lets go of
 * everything and exits when *release_fd is closed.
 */
static pid_t
crowd_start(const char *sock, const char *server_sock, int *release_fd)
{
	int up[2], down[2];
	if (pipe(up) || pipe(down))
		exit(1);
	char port[16];
	(void) snprintf(port, sizeof(port), "%d", opt.port++);
	pid_t pid = fork();
	if (pid == 0) {
		(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
		(void) close(up[0]);
		(void) close(down[1]);
		(void) setenv("RPMAD_SOCKET", sock, 1);
		pid_t server = -1;
		if (opt.idle_conns > 0) {
			int ready[2];
			if (pipe(ready))
				_exit(1);
			server = fork();
			if (server == 0) {
				(void) close(ready[0]);
				bench_conn_server(server_sock, port,
						opt.idle_conns, ready[1],
						down[0]);
			}
			(void) close(ready[1]);
			char ok;
			if (read(ready[0], &ok, 1) != 1)
				_exit(1);
		}
		struct rpma_peer *peer = bench_peer(
				RPMA_UTIL_IBV_CONTEXT_REMOTE);
		for (int i = 0; i < opt.idle; i++) {
			struct rpma_conn_req *req;
			BCHECK(rpma_conn_req_new(peer, ADDR, "9", NULL, &req));
		}
		struct rpma_conn_cfg *cfg = bench_small_cfg();
		for (int i = 0; i < opt.idle_conns; i++)
			(void) bench_conn_one(peer, cfg, port);
		size_t ps = (size_t)sysconf(_SC_PAGESIZE);
		uint8_t *buf = NULL;
		if (opt.idle_regs > 0) {
			buf = malloc((size_t)opt.idle_regs * ps + ps);
			if (buf == NULL)
				_exit(1);
			buf = (uint8_t *)(((uintptr_t)buf + ps - 1) & ~(ps - 1));
		}
		for (int i = 0; i < opt.idle_regs; i++) {
			struct rpma_mr_local *mr;
			BCHECK(rpma_mr_reg(peer, buf + (size_t)i * ps, ps,
					RPMA_MR_USAGE_READ_SRC |
					RPMA_MR_USAGE_WRITE_DST, &mr));
		}
		char byte = 1;
		if (write(up[1], &byte, 1) != 1)
			_exit(1);
		(void) read(down[0], &byte, 1);	/* until the parent closes */
		if (server > 0)
			(void) waitpid(server, NULL, 0);
		_exit(0);	/* rpmad lets go of the rest with the session */
	}
	(void) close(up[1]);
	(void) close(down[0]);
	char byte;
	if (read(up[0], &byte, 1) != 1) {
		(void) fprintf(stderr, "rpma-bench: cannot hold the crowd (%d "
				"requests, %d connections, %d registrations)\n",
				opt.idle, opt.idle_conns, opt.idle_regs);
		exit(1);
	}
	(void) close(up[0]);
	*release_fd = down[1];
	return pid;
}

/* Parses --modes block,busy1,busy2,busy4. */
static int
parse_modes(const char *list)
{
	static const char *const names[N_MODES] = { "block", "busy1", "busy2",
		"busy4" };
	for (unsigned k = 0; k < N_MODES; k++)
		opt.mode_on[k] = false;
	char *copy = strdup(list), *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t;
			t = strtok_r(NULL, ",", &save)) {
		unsigned k;
		for (k = 0; k < N_MODES && strcmp(t, names[k]); k++)
			;
		if (k == N_MODES) {
			free(copy);
			return -1;
		}
		opt.mode_on[k] = true;
	}
	free(copy);
	return 0;
}

static void
measure_floors(bool again)
{
	struct result r;
	floor_pingpong(&r, false);
	if (!again || r.p50_us < fl_pingpong.p50_us)
		fl_pingpong = r;
	floor_pingpong(&r, true);
	if (!again || r.p50_us < fl_pingpong_spin.p50_us)
		fl_pingpong_spin = r;
	floor_stream(&r);
	if (!again || r.mbps > fl_stream.mbps)
		fl_stream = r;
	floor_memcpy(&r);
	if (!again || r.mbps > fl_memcpy.mbps)
		fl_memcpy = r;
	fi_measure();
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "rpmad", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 's' },
		{ "modes", required_argument, NULL, 'm' },
		{ "only", required_argument, NULL, 'o' },
		{ "rows", required_argument, NULL, 'w' },
		{ "port", required_argument, NULL, 'p' },
		{ "rpmad-nice", required_argument, NULL, 'n' },
		{ "idle", required_argument, NULL, 'i' },
		{ "idle-conns", required_argument, NULL, 'I' },
		{ "idle-regs", required_argument, NULL, 'G' },
		{ "scale-regs", required_argument, NULL, 'R' },
		{ "scale-conns", required_argument, NULL, 'C' },
		{ "scale-sessions", required_argument, NULL, 'S' },
		{ "server-regs", required_argument, NULL, 'g' },
		{ "no-weights", no_argument, NULL, 'W' },
		{ "moved", no_argument, NULL, 'M' },
		{ "tls", no_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	opt.rpmad = getenv("RPMAD_BIN") ? getenv("RPMAD_BIN") : "rpmad";
	int ch;
	while ((ch = getopt_long(argc, argv, "r:s:m:o:w:p:n:i:I:G:R:C:S:g:WMT",
				longopts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			opt.rpmad = optarg;
			break;
		case 's':
			opt.seconds = atof(optarg);
			break;
		case 'm':
			if (parse_modes(optarg)) {
				(void) fprintf(stderr, "rpma-bench: --modes takes "
						"block,busy1,busy2,busy4\n");
				return 2;
			}
			break;
		case 'o':
			opt.only = optarg;
			break;
		case 'w':
			opt.rows = optarg;
			break;
		case 'p':
			opt.port = atoi(optarg);
			break;
		case 'n':
			opt.rpmad_nice = atoi(optarg);
			break;
		case 'i':
			opt.idle = atoi(optarg);
			break;
		case 'I':
			opt.idle_conns = atoi(optarg);
			break;
		case 'G':
			opt.idle_regs = atoi(optarg);
			break;
		case 'R':
			opt.scale_regs = (unsigned)atoi(optarg);
			break;
		case 'C':
			opt.scale_conns = (unsigned)atoi(optarg);
			break;
		case 'S':
			opt.scale_sessions = (unsigned)atoi(optarg);
			break;
		case 'g':
			opt.server_regs = (unsigned) atoi(optarg);
			break;
		case 'W':
			opt.no_weights = true;
			break;
		case 'M':
			opt.moved = true;
			break;
		case 'T':
			opt.tls = true;
			break;
		default:
			(void) fprintf(stderr,
					"usage: rpma-bench [--rpmad PATH] "
					"[--seconds S] [--modes block,busy1,"
					"busy2,busy4] [--only two|one|fair|floor|"
					"scale] [--rows TEXT] [--port N] [--rpmad-nice DELTA] "
					"[--idle N] [--idle-conns N] "
					"[--idle-regs N] [--scale-regs N] "
					"[--scale-conns N] [--scale-sessions N] "
					"[--server-regs N] "
					"[--no-weights] [--moved] [--tls]\n");
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
				opt.scale_conns, opt.scale_sessions);
		(void) rmdir(dir);
		return ret ? 1 : 0;
	}
	bool fair_only = opt.only && strcmp(opt.only, "fair") == 0;
	if (!fair_only)
		measure_floors(false);

	/*
	 * the weighted writers (run_neighbours) are other users: they reach
	 * the sockets in here, and have their weights
	 */
	(void) chmod(dir, 0711);
	if (opt.only == NULL || fair_only) {
		/* the persister's file: the neighbour's user writes it */
		(void) snprintf(file_dir, sizeof(file_dir), "%s/nb", dir);
		if (mkdir(file_dir, 0700) || chown(file_dir, NEIGHBOUR_UID,
				NEIGHBOUR_UID)) {
			perror(file_dir);
			(void) rmdir(dir);
			return 1;
		}
	}
	if (!opt.no_weights)
		bench_conf_sections = "[user 61003]\nweight = 3\n"
			"[user 61001]\nweight = 1\n";
	struct daemon a, b;
	daemon_start(&a, dir, "A");
	daemon_start(&b, dir, "B");
	if (opt.only == NULL || strcmp(opt.only, "two") == 0)
		run_setup("two rpmads", &a, &b);
	if (opt.tls && (opt.only == NULL || strcmp(opt.only, "two") == 0)) {
		struct daemon ta, tb;
		tls_daemons_start(&ta, &tb, dir);
		run_setup("two +tls", &ta, &tb);
		daemon_stop(&ta);
		daemon_stop(&tb);
		char keys[128];
		(void) snprintf(keys, sizeof(keys), "%s/tls.psk", dir);
		(void) unlink(keys);
	}
	if (opt.only == NULL || strcmp(opt.only, "one") == 0)
		run_setup("one rpmad", &a, &a);
	if (opt.only == NULL || strcmp(opt.only, "fair") == 0) {
		run_neighbours("two rpmads", &a, &b);
		run_neighbours("one rpmad", &a, &a);
	}
	if (opt.idle > 0 || opt.idle_conns > 0 || opt.idle_regs > 0) {
		/* again, beside another tenant's crowd at both daemons */
		int rel_a, rel_b;
		pid_t ha = crowd_start(a.sock, b.sock, &rel_a);
		pid_t hb = crowd_start(b.sock, a.sock, &rel_b);
		if (opt.only == NULL || strcmp(opt.only, "two") == 0)
			run_setup("two +idle", &a, &b);
		if (opt.only == NULL || strcmp(opt.only, "one") == 0)
			run_setup("one +idle", &a, &a);
		(void) close(rel_a);
		(void) close(rel_b);
		(void) waitpid(ha, NULL, 0);
		(void) waitpid(hb, NULL, 0);
	}
	daemon_stop(&a);
	daemon_stop(&b);
	if (file_dir[0])
		(void) rmdir(file_dir);
	if (fair_only) {
		(void) rmdir(dir);
		print_neighbours();
		return 0;
	}
	int scale_failed = opt.only == NULL && bench_scale(opt.rpmad, dir,
			opt.port, opt.scale_regs, opt.scale_conns,
			opt.scale_sessions) ? 1 : 0;
	(void) rmdir(dir);

	/* the floors again: the better of the two is the one compared to */
	measure_floors(true);

	print_table();
	print_neighbours();
	return scale_failed;
}
