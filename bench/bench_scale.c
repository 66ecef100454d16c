// SPDX-License-Identifier: BSD-3-Clause
/*
 * bench_scale.c -- whether a registration and a connection cost the same
 * however many already exist (rpma-bench --only scale)
 *
 * One rpmad of its own (TCP transport). Registrations: one process
 * registers consecutive 4 KiB pages of one buffer, one rpma_mr_reg each,
 * and at 10, 1,000, 10,000 and 100,000 existing registrations times a
 * batch of registrations (and their deregistrations). Connections: a
 * server and a client process on the same rpmad; at 1 and 1,000 existing
 * connections the set-up of one more (rpma_conn_req_new .. ESTABLISHED on
 * both sides) is timed. rpmad's resident memory is read from
 * /proc/PID/status before and after each population. The control path
 * beside idle sessions: a registration and its deregistration are timed
 * beside 10 and beside 15,000 idle sessions (hello said, nothing more) of
 * another user, which every admission check used to walk.
 */

#include <errno.h>
#include <fcntl.h>
#include <librpma.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_scale.h"
#include "bench_util.h"
#include "ctl_call.h"

#define BATCH		200	/* timed registrations per level */
#define CONN_SAMPLES	50	/* timed connections per level */
#define MAX_LEVELS	8

struct level_result {
	unsigned existing;
	double reg_p50_us, reg_p99_us, regs_per_s;
	double dereg_p50_us;
	double desc_ns;		/* rpma_mr_get_descriptor */
};

struct conn_result {
	unsigned existing;
	double p50_us, p99_us;
};

struct admit_result {
	unsigned idle;		/* idle sessions of another user */
	double p50_us, p99_us;	/* rpma_mr_reg + rpma_mr_dereg */
};

struct scale_report {
	unsigned nlevels;
	struct level_result lv[MAX_LEVELS];
	double rss_per_reg_b;
	unsigned nconn_levels;
	struct conn_result cl[MAX_LEVELS];
	double rss_per_conn_b;
	unsigned npending_levels;
	struct conn_result pl[2];	/* rpma_ep_next_conn_req */
	unsigned nadmit_levels;
	struct admit_result al[2];
	int failed;
};

static double
mono_s(void)
{
	struct timespec ts;
	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double
pct(double *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	size_t i = (size_t)(p * (double)(n - 1));
	return v[i];
}

/* rpmad's resident set, bytes */
static double
rss_bytes(pid_t pid)
{
	char path[64], line[256];
	(void) snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return 0;
	double kib = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "VmRSS:", 6) == 0)
			kib = atof(line + 6);
	}
	(void) fclose(f);
	return kib * 1024;
}

/* ------------------------------------------------------ registrations */

/* One timed batch of BATCH registrations of fresh pages, then dereg. */
static void
reg_level(struct rpma_peer *peer, uint8_t *buf, size_t ps, unsigned *next,
		struct level_result *r)
{
	static double t[BATCH], d[BATCH];
	struct rpma_mr_local *mrs[BATCH];
	double t0 = mono_s();
	for (unsigned i = 0; i < BATCH; i++) {
		double a = mono_s();
		BCHECK(rpma_mr_reg(peer, buf + (size_t)(*next + i) * ps, ps,
				RPMA_MR_USAGE_READ_SRC |
				RPMA_MR_USAGE_WRITE_DST, &mrs[i]));
		t[i] = (mono_s() - a) * 1e6;
	}
	double total = mono_s() - t0;

	uint8_t desc[21];
	double a = mono_s();
	for (unsigned rep = 0; rep < 1000; rep++)
		BCHECK(rpma_mr_get_descriptor(mrs[rep % BATCH], desc));
	r->desc_ns = (mono_s() - a) * 1e9 / 1000;

	for (unsigned i = 0; i < BATCH; i++) {
		double b = mono_s();
		BCHECK(rpma_mr_dereg(&mrs[i]));
		d[i] = (mono_s() - b) * 1e6;
	}
	r->regs_per_s = BATCH / total;
	r->reg_p99_us = pct(t, BATCH, 0.99);
	r->reg_p50_us = pct(t, BATCH, 0.5);
	r->dereg_p50_us = pct(d, BATCH, 0.5);
	*next += BATCH;
}

static void
reg_child(const char *sock, pid_t daemon, const unsigned *levels,
		unsigned nlevels, struct scale_report *rep)
{
	(void) setenv("RPMAD_SOCKET", sock, 1);
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	unsigned max = levels[nlevels - 1];
	size_t pages = (size_t)max + (size_t)nlevels * BATCH + 16;
	uint8_t *buf = mmap(NULL, pages * ps, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(1);
	for (size_t i = 0; i < pages; i++)
		buf[i * ps] = (uint8_t)i;
	struct rpma_peer *peer = bench_peer(RPMA_UTIL_IBV_CONTEXT_LOCAL);

	struct rpma_mr_local **held = calloc(max, sizeof(*held));
	if (held == NULL)
		_exit(1);
	unsigned nheld = 0, next = 0;
	double rss0 = rss_bytes(daemon);
	for (unsigned l = 0; l < nlevels; l++) {
		while (nheld < levels[l]) {
			BCHECK(rpma_mr_reg(peer, buf + (size_t)next * ps, ps,
					RPMA_MR_USAGE_READ_SRC |
					RPMA_MR_USAGE_WRITE_DST,
					&held[nheld]));
			nheld++;
			next++;
		}
		rep->lv[l].existing = nheld;
		if (l == nlevels - 1 && nheld > 0)
			rep->rss_per_reg_b = (rss_bytes(daemon) - rss0) / nheld;
		reg_level(peer, buf, ps, &next, &rep->lv[l]);
	}
	rep->nlevels = nlevels;
	for (unsigned i = 0; i < nheld; i++)
		BCHECK(rpma_mr_dereg(&held[i]));
	free(held);
	BCHECK(rpma_peer_delete(&peer));
}

/* -------------------------------------------------------- connections */

static void
conn_child(const char *sock, pid_t daemon, const char *port,
		const unsigned *levels, unsigned nlevels,
		struct scale_report *rep)
{
	/* as many as the loop below makes */
	unsigned total = 0;
	for (unsigned l = 0; l < nlevels; l++)
		total = (total > levels[l] ? total : levels[l]) + CONN_SAMPLES;
	int ready[2], done[2];
	if (pipe(ready) || pipe(done))
		_exit(1);
	pid_t server = fork();
	if (server == 0) {
		(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
		(void) close(ready[0]);
		(void) close(done[1]);
		bench_conn_server(sock, port, total, ready[1], done[0]);
	}
	(void) close(ready[1]);
	(void) close(done[0]);
	char ok;
	if (read(ready[0], &ok, 1) != 1)
		_exit(1);

	(void) setenv("RPMAD_SOCKET", sock, 1);
	struct rpma_peer *peer = bench_peer(RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_conn_cfg *cfg = bench_small_cfg();
	struct rpma_conn **conns = calloc(total, sizeof(*conns));
	if (conns == NULL)
		_exit(1);
	unsigned n = 0;
	double rss0 = rss_bytes(daemon);
	for (unsigned l = 0; l < nlevels; l++) {
		while (n < levels[l]) {
			conns[n] = bench_conn_one(peer, cfg, port);
			n++;
		}
		if (l == nlevels - 1 && n > 0)
			rep->rss_per_conn_b = (rss_bytes(daemon) - rss0) / n;
		rep->cl[l].existing = n;
		double t[CONN_SAMPLES];
		for (unsigned i = 0; i < CONN_SAMPLES; i++) {
			double a = mono_s();
			conns[n] = bench_conn_one(peer, cfg, port);
			t[i] = (mono_s() - a) * 1e6;
			n++;
		}
		rep->cl[l].p99_us = pct(t, CONN_SAMPLES, 0.99);
		rep->cl[l].p50_us = pct(t, CONN_SAMPLES, 0.5);
	}
	rep->nconn_levels = nlevels;
	(void) close(done[1]);
	for (unsigned i = 0; i < n; i++) {
		enum rpma_conn_event ev;
		(void) rpma_conn_next_event(conns[i], &ev);
		(void) rpma_conn_delete(&conns[i]);
	}
	free(conns);
	(void) waitpid(server, NULL, 0);
	BCHECK(rpma_peer_delete(&peer));
}

/* ------------------------------------------------- pending requests */

#define PENDING_SAMPLES 50

/* Waits until `n` requests wait at the endpoint (one byte each). */
static void
wait_pending(struct rpma_ep *ep, int n)
{
	int fd, avail = 0;
	BCHECK(rpma_ep_get_fd(ep, &fd));
	for (int i = 0; i < 60000; i++) {
		if (ioctl(fd, FIONREAD, &avail) == 0 && avail >= n)
			return;
		(void) usleep(1000);
	}
	(void) fprintf(stderr, "rpma-bench: %d requests of %d arrived\n",
			avail, n);
	_exit(1);
}

/* Times rpma_ep_next_conn_req; the request is rejected after. */
static double
next_req_us(struct rpma_ep *ep, struct rpma_conn_cfg *cfg)
{
	struct rpma_conn_req *req;
	double a = mono_s();
	BCHECK(rpma_ep_next_conn_req(ep, cfg, &req));
	double t = (mono_s() - a) * 1e6;
	BCHECK(rpma_conn_req_delete(&req));
	return t;
}

/*
 * The server of the pending-request run: one request pending at a time,
 * then `many` (the client sends each when the one before arrived).
 */
static void
pending_server(const char *sock, const char *port, unsigned many, int ready,
		int go, struct scale_report *rep)
{
	(void) setenv("RPMAD_SOCKET", sock, 1);
	struct rpma_peer *peer = bench_peer(RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_ep *ep;
	BCHECK(rpma_ep_listen(peer, BENCH_ADDR, port, &ep));
	struct rpma_conn_cfg *cfg = bench_small_cfg();
	char ok = 1;
	if (write(ready, &ok, 1) != 1)
		_exit(1);
	double t[PENDING_SAMPLES];
	for (unsigned i = 0; i < PENDING_SAMPLES; i++) {
		wait_pending(ep, 1);
		t[i] = next_req_us(ep, cfg);
		if (write(ready, &ok, 1) != 1)
			_exit(1);
	}
	rep->pl[0].existing = 1;
	rep->pl[0].p99_us = pct(t, PENDING_SAMPLES, 0.99);
	rep->pl[0].p50_us = pct(t, PENDING_SAMPLES, 0.5);
	/* one at a time: rpmad drops sockets that pile up unpaired */
	for (unsigned i = 1; i <= many; i++) {
		wait_pending(ep, (int)i);
		if (write(ready, &ok, 1) != 1)
			_exit(1);
	}
	unsigned samples = many < PENDING_SAMPLES ? many : PENDING_SAMPLES;
	for (unsigned i = 0; i < samples; i++)
		t[i] = next_req_us(ep, cfg);
	rep->pl[1].existing = many;
	rep->pl[1].p99_us = pct(t, samples, 0.99);
	rep->pl[1].p50_us = pct(t, samples, 0.5);
	rep->npending_levels = 2;
	if (write(ready, &ok, 1) != 1)
		_exit(1);
	/* rpmad drops the rest with the session */
	(void) go;
	_exit(0);
}

static void
pending_child(const char *sock, const char *port, unsigned many,
		struct scale_report *rep)
{
	int ready[2];
	if (pipe(ready))
		_exit(1);
	pid_t server = fork();
	if (server == 0) {
		(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
		(void) close(ready[0]);
		pending_server(sock, port, many, ready[1], -1, rep);
	}
	(void) close(ready[1]);
	char ok;
	if (read(ready[0], &ok, 1) != 1)
		_exit(1);
	(void) setenv("RPMAD_SOCKET", sock, 1);
	struct rpma_peer *peer = bench_peer(RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_conn_cfg *cfg = bench_small_cfg();
	struct rpma_conn **conns = calloc(many + PENDING_SAMPLES,
			sizeof(*conns));
	if (conns == NULL)
		_exit(1);
	unsigned n = 0;
	for (unsigned i = 0; i < PENDING_SAMPLES; i++) {
		struct rpma_conn_req *req;
		BCHECK(rpma_conn_req_new(peer, BENCH_ADDR, port, cfg, &req));
		BCHECK(rpma_conn_req_connect(&req, NULL, &conns[n++]));
		if (read(ready[0], &ok, 1) != 1)
			_exit(1);
	}
	for (unsigned i = 0; i < many; i++) {
		struct rpma_conn_req *req;
		BCHECK(rpma_conn_req_new(peer, BENCH_ADDR, port, cfg, &req));
		BCHECK(rpma_conn_req_connect(&req, NULL, &conns[n++]));
		if (read(ready[0], &ok, 1) != 1)
			_exit(1);
	}
	if (read(ready[0], &ok, 1) != 1)
		_exit(1);
	(void) waitpid(server, NULL, 0);
	/* rpmad drops the connections with the session */
	_exit(0);
}

/* ------------------------------------------------- idle sessions */

#define ADMIT_SAMPLES 400

/* A control connection that said hello and does nothing: its fd. */
static int
idle_session(const char *sock)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	(void) snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)))
		_exit(1);
	Rpmad__Request req;
	Rpmad__Hello hello;
	ctl_hello(&req, &hello, "rpma-bench-idle");
	req.id = 1;
	struct ctl_answer ans = { .fds = NULL };
	if (ctl_call(fd, &req, NULL, 0, 10000, &ans) || ans.resp->error) {
		(void) fprintf(stderr, "rpma-bench: an idle session was "
				"refused\n");
		_exit(1);
	}
	rpmad__response__free_unpacked(ans.resp, NULL);
	return fd;
}

/*
 * The crowd: another user's process (nobody, when the bench runs as
 * root) holding as many idle sessions as the last number read from `cmd`
 * says, answering each number with a byte on `ack` once it holds them.
 */
static void
crowd_proc(const char *sock, int cmd, int ack, unsigned max)
{
	if (geteuid() == 0)
		bench_become_user(65534);
	int *fds = calloc(max, sizeof(*fds));
	if (fds == NULL)
		_exit(1);
	unsigned n = 0, want;
	while (read(cmd, &want, sizeof(want)) == sizeof(want)) {
		while (n < want && n < max)
			fds[n++] = idle_session(sock);
		while (n > want)
			(void) close(fds[--n]);
		char ok = 1;
		if (write(ack, &ok, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

/* rpma_mr_reg + rpma_mr_dereg of one page, ADMIT_SAMPLES times */
static void
admit_level(struct rpma_peer *peer, uint8_t *page, size_t ps,
		struct admit_result *r)
{
	static double t[ADMIT_SAMPLES];
	for (unsigned i = 0; i < ADMIT_SAMPLES; i++) {
		struct rpma_mr_local *mr;
		double a = mono_s();
		BCHECK(rpma_mr_reg(peer, page, ps, RPMA_MR_USAGE_READ_SRC,
				&mr));
		BCHECK(rpma_mr_dereg(&mr));
		t[i] = (mono_s() - a) * 1e6;
	}
	r->p99_us = pct(t, ADMIT_SAMPLES, 0.99);
	r->p50_us = pct(t, ADMIT_SAMPLES, 0.5);
}

static void
admit_child(const char *sock, unsigned crowd, struct scale_report *rep)
{
	int cmd[2], ack[2];
	if (pipe(cmd) || pipe(ack))
		_exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
		(void) close(cmd[1]);
		(void) close(ack[0]);
		crowd_proc(sock, cmd[0], ack[1], crowd);
	}
	(void) close(cmd[0]);
	(void) close(ack[1]);

	(void) setenv("RPMAD_SOCKET", sock, 1);
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *page = mmap(NULL, ps, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		_exit(1);
	page[0] = 1;
	struct rpma_peer *peer = bench_peer(RPMA_UTIL_IBV_CONTEXT_LOCAL);
	const unsigned levels[2] = { 10, crowd };
	for (unsigned l = 0; l < 2; l++) {
		char ok;
		if (write(cmd[1], &levels[l], sizeof(levels[l])) !=
				sizeof(levels[l]) || read(ack[0], &ok, 1) != 1)
			_exit(1);
		rep->al[l].idle = levels[l];
		admit_level(peer, page, ps, &rep->al[l]);
	}
	rep->nadmit_levels = 2;
	BCHECK(rpma_peer_delete(&peer));
	(void) close(cmd[1]);
	(void) waitpid(pid, NULL, 0);
}

/* ------------------------------------------------------------ driver */

/* Runs fn in a child (one rpmad session per process) and collects rep. */
static int
in_child(void (*fn)(void *arg, struct scale_report *rep), void *arg,
		struct scale_report *rep)
{
	struct scale_report *shared = mmap(NULL, sizeof(*shared),
			PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			-1, 0);
	if (shared == MAP_FAILED)
		return -1;
	memset(shared, 0, sizeof(*shared));
	pid_t pid = fork();
	if (pid == 0) {
		(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
		fn(arg, shared);
		_exit(0);
	}
	int status = 1;
	(void) waitpid(pid, &status, 0);
	*rep = *shared;
	(void) munmap(shared, sizeof(*shared));
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

struct run_args {
	const char *sock;
	pid_t daemon;
	const char *port;
	const unsigned *levels;
	unsigned nlevels;
};

static void
run_regs(void *arg, struct scale_report *rep)
{
	struct run_args *a = arg;
	reg_child(a->sock, a->daemon, a->levels, a->nlevels, rep);
}

static void
run_pending(void *arg, struct scale_report *rep)
{
	struct run_args *a = arg;
	pending_child(a->sock, a->port, a->levels[a->nlevels - 1], rep);
}

static void
run_admit(void *arg, struct scale_report *rep)
{
	struct run_args *a = arg;
	admit_child(a->sock, a->levels[0], rep);
}

static void
run_conns(void *arg, struct scale_report *rep)
{
	struct run_args *a = arg;
	conn_child(a->sock, a->daemon, a->port, a->levels, a->nlevels, rep);
}

int
bench_scale(const char *rpmad, const char *dir, int port, unsigned max_regs,
		unsigned max_conns, unsigned idle_sessions)
{
	/* 1,000 connections take two descriptors each per process, more in rpmad */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void) setrlimit(RLIMIT_NOFILE, &rl);
	}
	char sock[108], portstr[16];
	(void) snprintf(sock, sizeof(sock), "%s/scale.sock", dir);
	/* the idle sessions' user (nobody, when run as root) reaches it */
	(void) chmod(dir, 0711);
	(void) snprintf(portstr, sizeof(portstr), "%d", port);
	pid_t daemon = bench_daemon_start(rpmad, sock, 0);
	if (daemon < 0)
		return -1;

	static const unsigned all_regs[] = { 10, 1000, 10000, 100000 };
	unsigned reg_levels[MAX_LEVELS], nreg = 0;
	for (unsigned i = 0; i < 4 && all_regs[i] <= max_regs; i++)
		reg_levels[nreg++] = all_regs[i];
	static const unsigned all_conns[] = { 1, 10, 100, 1000 };
	unsigned conn_levels[MAX_LEVELS], nconn = 0;
	for (unsigned i = 0; i < 4 && all_conns[i] <= max_conns; i++)
		conn_levels[nconn++] = all_conns[i];

	struct scale_report regs, conns;
	memset(&regs, 0, sizeof(regs));
	memset(&conns, 0, sizeof(conns));
	struct run_args ra = { sock, daemon, portstr, reg_levels, nreg };
	int failed = 0;
	if (nreg > 0 && in_child(run_regs, &ra, &regs)) {
		(void) fprintf(stderr, "rpma-bench: the registration scale run "
				"failed\n");
		failed = 1;
	}
	struct run_args ca = { sock, daemon, portstr, conn_levels, nconn };
	if (nconn > 0 && in_child(run_conns, &ca, &conns)) {
		(void) fprintf(stderr, "rpma-bench: the connection scale run "
				"failed\n");
		failed = 1;
	}
	struct scale_report pending;
	memset(&pending, 0, sizeof(pending));
	if (nconn > 1 && in_child(run_pending, &ca, &pending)) {
		(void) fprintf(stderr, "rpma-bench: the pending-request run "
				"failed\n");
		failed = 1;
	}
	struct scale_report admit;
	memset(&admit, 0, sizeof(admit));
	struct run_args aa = { sock, daemon, portstr, &idle_sessions, 1 };
	if (idle_sessions > 10 && in_child(run_admit, &aa, &admit)) {
		(void) fprintf(stderr, "rpma-bench: the idle-session run "
				"failed\n");
		failed = 1;
	}
	bench_daemon_stop(daemon, sock);

	(void) printf("\n%-34s %10s %10s %10s %10s %10s %8s\n",
			"registrations (4 KiB, one buffer)", "existing",
			"reg/s", "reg p50 us", "reg p99 us", "dereg p50",
			"desc ns");
	for (unsigned i = 0; i < regs.nlevels; i++)
		(void) printf("%-34s %10u %10.0f %10.1f %10.1f %10.1f %8.0f\n",
				"", regs.lv[i].existing, regs.lv[i].regs_per_s,
				regs.lv[i].reg_p50_us, regs.lv[i].reg_p99_us,
				regs.lv[i].dereg_p50_us, regs.lv[i].desc_ns);
	if (regs.nlevels > 0)
		(void) printf("%-34s %10.0f B per registration (at %u)\n",
				"rpmad resident memory", regs.rss_per_reg_b,
				regs.lv[regs.nlevels - 1].existing);
	(void) printf("%-34s %10s %10s %10s\n", "connection set-up (one rpmad)",
			"existing", "p50 us", "p99 us");
	for (unsigned i = 0; i < conns.nconn_levels; i++)
		(void) printf("%-34s %10u %10.1f %10.1f\n", "",
				conns.cl[i].existing, conns.cl[i].p50_us,
				conns.cl[i].p99_us);
	if (conns.nconn_levels > 0)
		(void) printf("%-34s %10.0f B per connection (at %u, both "
				"ends on this rpmad)\n",
				"rpmad resident memory", conns.rss_per_conn_b,
				conns.cl[conns.nconn_levels - 1].existing);
	(void) printf("%-34s %10s %10s %10s\n", "rpma_ep_next_conn_req",
			"pending", "p50 us", "p99 us");
	for (unsigned i = 0; i < pending.npending_levels; i++)
		(void) printf("%-34s %10u %10.1f %10.1f\n", "",
				pending.pl[i].existing, pending.pl[i].p50_us,
				pending.pl[i].p99_us);
	(void) printf("%-34s %10s %10s %10s\n", "reg + dereg beside idle sessions",
			"idle", "p50 us", "p99 us");
	for (unsigned i = 0; i < admit.nadmit_levels; i++)
		(void) printf("%-34s %10u %10.1f %10.1f\n", "",
				admit.al[i].idle, admit.al[i].p50_us,
				admit.al[i].p99_us);
	if (admit.nadmit_levels == 2 && admit.al[0].p50_us > 0)
		(void) printf("%-34s %10.2fx p50 beside %u idle sessions "
				"(another user's) against 10\n", "",
				admit.al[1].p50_us / admit.al[0].p50_us,
				admit.al[1].idle);
	return failed ? -1 : 0;
}
