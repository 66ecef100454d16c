// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_landing.c -- the library's landing thread (librpmaclient
 * landing_thread.h, rpmad clients/landing.h): what remote peers write
 * into and read of a server's private memory over the software transport
 * is copied by a thread of the server's own, which exists only while such
 * memory is registered; a server that is stopped still has its memory
 * written (rpmad's thread takes over); a landing thread stuck on a page
 * that never comes fails that write after memory_timeout_ms and nothing
 * else; writes posted behind a stuck one land after it, and never after
 * one that failed, whether at its deadline or at once; a server that
 * scribbles over its own landing area harms only itself; a child of
 * fork() has none of it and lands its own.
 */

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "th_suite.h"

#define LEN (2u << 20)

enum { TAG_PID = 100, TAG_WRITTEN, TAG_CHECKED, TAG_STUCK, TAG_FAILED };

static const int RW = IT_REMOTE_USAGE;

/* How many threads of this process are named `name`. */
static int
threads_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	if (d == NULL)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], comm[32] = "";
		(void) snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
				e->d_name);
		FILE *f = fopen(path, "re");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		(void) fclose(f);
		n += strcmp(comm, name) == 0;
	}
	(void) closedir(d);
	return n;
}

/* Whether this process maps the landing area. */
static bool
area_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (f == NULL)
		return false;
	char line[512];
	bool yes = false;
	while (!yes && fgets(line, sizeof(line), f))
		yes = strstr(line, "rpmad-landing") != NULL;
	(void) fclose(f);
	return yes;
}

/* Waits up to ms for the landing thread to be gone: whether it is. */
static bool
thread_gone(int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		if (threads_named("rpma-landing") == 0)
			return true;
		(void) usleep(10000);
	}
	return false;
}

/*
 * Over the software transport only (RDMA devices write the memory
 * themselves): `server` with memory the client writes and reads, on
 * ndaemons rpmads.
 */
static void
run_over_tcp(it_remote_fn *server, int ndaemons)
{
	if (it_transport_is("tcp"))
		it_remote_test(ndaemons, NULL,
				&(struct it_remote_case){ .body = server });
}

/* ------------------------------------------ 1. landed, and then gone */

/*
 * Writes of many sizes and offsets land and read back; the thread and the
 * area exist while the memory is registered, and not after.
 */
static void
landed_server(struct it_remote *r)
{
	IT_EQ(threads_named("rpma-landing"), 0);
	uint8_t *buf = it_anon(LEN, 0x5a);
	struct rpma_mr_local *mr = IT_REG(r->peer, buf, LEN, RW);
	IT_EQ(threads_named("rpma-landing"), 1);
	IT_ASSERT(area_mapped());

	static const struct { size_t off, len; } cut[] = {
		{ 0, 1 }, { 1, 7 }, { 4095, 2 }, { 8192, 4096 },
		{ 12345, 65536 + 17 }, { 200000, 1u << 20 }, { LEN - 3, 3 },
	};
	uint32_t seed = 1;
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++, seed++) {
		it_remote_write(mr, cut[i].off, cut[i].len, seed);
		IT_EQ(it_check(buf + cut[i].off, cut[i].len, seed), -1);
		/* and what the application writes, a remote read sees */
		it_fill(buf + cut[i].off, cut[i].len, seed + 100);
		IT_EQ(it_remote_read(mr, cut[i].off, cut[i].len, seed + 100),
				-1);
	}
	/* the bytes around them are the application's own */
	IT_EQ(buf[100], 0x5a);
	IT_EQ(buf[8191], 0x5a);

	IT_OK(rpma_mr_dereg(&mr));
	IT_ASSERT(thread_gone(5000));
	IT_ASSERT(!area_mapped());
	/* registered again: a thread again */
	IT_OK(rpma_mr_reg(r->peer, buf, LEN, RW, &mr));
	it_remote_write(mr, 64, 4096, 77);
	IT_EQ(it_check(buf + 64, 4096, 77), -1);
	IT_EQ(threads_named("rpma-landing"), 1);
	IT_OK(rpma_mr_dereg(&mr));
	IT_ASSERT(thread_gone(5000));
	IT_EQ(munmap(buf, LEN), 0);
}

START_TEST(test_landed_and_gone)
{
	run_over_tcp(landed_server, _i + 1);
}
END_TEST

/* ------------------------------- 1b. registered by threads at once */

enum {
	NREG = 8,
	REG_ROUNDS = 10,
	REG_LEN = 64 << 10
};

struct reg_at_once {
	struct rpma_peer *peer;
	pthread_barrier_t *go;
	uint8_t *buf;
	struct rpma_mr_local *mr;
	int ret;
};

static void *
reg_thread(void *arg)
{
	struct reg_at_once *t = arg;
	(void) pthread_barrier_wait(t->go);
	t->ret = rpma_mr_reg(t->peer, t->buf, REG_LEN, RW, &t->mr);
	return NULL;
}

/*
 * Threads of one process register at the same moment (fio's jobs do):
 * one landing thread for all, and every registration's writes land
 * (a second start of the session's landing lost its registrations).
 */
static void
at_once_server(struct it_remote *r)
{
	uint8_t *bufs = mmap(NULL, NREG * REG_LEN, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	IT_ASSERT(bufs != MAP_FAILED);
	for (int round = 0; round < REG_ROUNDS; round++) {
		pthread_barrier_t go;
		IT_EQ(pthread_barrier_init(&go, NULL, NREG), 0);
		struct reg_at_once t[NREG];
		pthread_t th[NREG];
		for (int i = 0; i < NREG; i++) {
			t[i] = (struct reg_at_once){ r->peer, &go,
				bufs + (size_t) i * REG_LEN, NULL, -1 };
			IT_EQ(pthread_create(&th[i], NULL, reg_thread, &t[i]),
					0);
		}
		for (int i = 0; i < NREG; i++)
			IT_EQ(pthread_join(th[i], NULL), 0);
		IT_EQ(pthread_barrier_destroy(&go), 0);
		IT_EQ(threads_named("rpma-landing"), 1);
		for (int i = 0; i < NREG; i++) {
			IT_OK(t[i].ret);
			uint32_t seed = (uint32_t) (round * NREG + i + 1);
			it_remote_write(t[i].mr, 0, REG_LEN, seed);
			IT_EQ(it_check(t[i].buf, REG_LEN, seed), -1);
		}
		for (int i = 0; i < NREG; i++)
			IT_OK(rpma_mr_dereg(&t[i].mr));
		IT_ASSERT(thread_gone(5000));
	}
	IT_EQ(munmap(bufs, NREG * REG_LEN), 0);
}

START_TEST(test_registered_at_once)
{
	run_over_tcp(at_once_server, 2);
}
END_TEST

/*
 * RPMA_LANDING=0: no thread, and rpmad's own lands the same bytes (the
 * two paths side by side, as bench/ compares them).
 */
static bool
landing_off(const struct it_env *env, void *arg)
{
	(void) env;
	(void) arg;
	IT_EQ(setenv("RPMA_LANDING", "0", 1), 0);
	return true;
}

static void
off_server(struct it_remote *r)
{
	uint8_t *buf = it_alloc(LEN);
	struct rpma_mr_local *mr = IT_REG(r->peer, buf, LEN, RW);
	IT_EQ(threads_named("rpma-landing"), 0);
	it_remote_write(mr, 100, 300000, 9);
	IT_EQ(it_check(buf + 100, 300000, 9), -1);
	IT_OK(rpma_mr_dereg(&mr));
	free(buf);
}

START_TEST(test_switched_off)
{
	if (!it_transport_is("tcp"))
		return;
	it_remote_test(2, NULL,
			&(struct it_remote_case){ .before = landing_off,
					.body = off_server });
}
END_TEST

/* ----------------------------------------------- 2. a stopped server */

/*
 * The client stops the server (SIGSTOP, as a debugger does) and writes
 * into its memory: the write completes while the server stays stopped
 * (a NIC writes a stopped process's pinned pages too), and a read sees
 * it; the server finds it once it runs again.
 */
static int
stopped_server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(LEN);
	struct rpma_mr_local *mr = IT_REG(peer, buf, LEN, RW);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, NULL);
	pid_t self = getpid();
	IT_EQ(it_tell(IT_CLIENT, TAG_PID, &self, sizeof(self)), 0);
	/* stopped and continued meanwhile */
	(void) it_expect(TAG_WRITTEN, NULL, 0);
	IT_EQ(it_check(buf, LEN, 31), -1);
	IT_EQ(it_tell(IT_CLIENT, TAG_CHECKED, NULL, 0), 0);
	it_server_end(&conn, &mr, &ep, &peer, buf);
	return 0;
}

static int
stopped_client(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer = it_peer(IT_ADDR,
			RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *src = it_alloc(LEN), *back = it_alloc(LEN);
	struct rpma_mr_local *ms = NULL, *mb = NULL;
	IT_OK(rpma_mr_reg(peer, src, LEN, RPMA_MR_USAGE_WRITE_SRC, &ms));
	IT_OK(rpma_mr_reg(peer, back, LEN, RPMA_MR_USAGE_READ_DST, &mb));
	struct rpma_mr_remote *rmr = NULL;
	struct rpma_cq *cq = NULL;
	struct rpma_conn *conn = it_connect_mr(peer, env, &rmr, &cq);
	pid_t server;
	IT_EQ(it_expect(TAG_PID, &server, sizeof(server)), sizeof(server));

	IT_EQ(kill(server, SIGSTOP), 0);
	it_fill(src, LEN, 31);
	struct ibv_wc wc;
	IT_OK(rpma_write(conn, rmr, 0, ms, 0, LEN, RPMA_F_COMPLETION_ALWAYS,
			(void *)1));
	it_wc_ok(conn, cq, 1, IBV_WC_RDMA_WRITE, &wc);
	IT_OK(rpma_read(conn, mb, 0, rmr, 0, LEN, RPMA_F_COMPLETION_ALWAYS,
			(void *)2));
	it_wc_ok(conn, cq, 2, IBV_WC_RDMA_READ, &wc);
	IT_EQ(it_check(back, LEN, 31), -1);
	/* still stopped: rpmad's thread did it all */
	char path[64], stat[256] = "";
	(void) snprintf(path, sizeof(path), "/proc/%d/stat", (int)server);
	FILE *f = fopen(path, "re");
	IT_ASSERT(f != NULL && fgets(stat, sizeof(stat), f) != NULL);
	(void) fclose(f);
	IT_ASSERT_MSG(strstr(stat, ") T ") != NULL, "server: %s", stat);
	IT_EQ(kill(server, SIGCONT), 0);

	IT_EQ(it_tell(IT_SERVER, TAG_WRITTEN, NULL, 0), 0);
	(void) it_expect(TAG_CHECKED, NULL, 0);
	it_close(&conn);
	IT_OKS(rpma_mr_remote_delete(&rmr), rpma_mr_dereg(&ms),
			rpma_mr_dereg(&mb), rpma_peer_delete(&peer));
	free(src);
	free(back);
	return 0;
}

START_TEST(test_stopped_server)
{
	if (!it_transport_is("tcp"))
		return;
	it_pair_test(_i + 1, stopped_server, stopped_client, NULL);
}
END_TEST

/* --------------------------------------- 3. a page that never comes */

/* Ends a connection however it stands (one that failed work is broken). */
static void
drop(struct rpma_conn **conn)
{
	(void) rpma_conn_disconnect(*conn);
	IT_OK(rpma_conn_delete(conn));
}

/*
 * A server whose own userfaultfd will hold a page of its memory (kernel
 * faults wait only on a full userfaultfd: root's): the userfaultfd, or -1
 * after telling the client to skip; its peer, memory and registration.
 */
static int
held_server_start(struct rpma_peer **peer, uint8_t **buf,
		struct rpma_mr_local **mr)
{
	int uffd = (int) syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0) {
		IT_EQ(it_tell(IT_CLIENT, TAG_STUCK, "skip", 4), 0);
		return -1;
	}
	*peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	*buf = it_anon(LEN, 0x33);
	*mr = IT_REG(*peer, *buf, LEN, RW);
	IT_EQ(it_tell(IT_CLIENT, TAG_STUCK, "go", 2), 0);
	return uffd;
}

/* The page at `held` goes, and only the userfaultfd could bring it. */
static void
hold_page(int uffd, uint8_t *held)
{
	struct uffdio_api api = { .api = UFFD_API };
	IT_EQ(ioctl(uffd, UFFDIO_API, &api), 0);
	IT_EQ(madvise(held, it_page(), MADV_DONTNEED), 0);
	struct uffdio_register reg = { .range = { (uintptr_t) held, it_page() },
		.mode = UFFDIO_REGISTER_MODE_MISSING };
	IT_EQ(ioctl(uffd, UFFDIO_REGISTER, &reg), 0);
}

/* The page comes: a copy stuck on it goes on. */
static void
bring_page(int uffd, uint8_t *held)
{
	struct uffdio_zeropage zp = { .range = { (uintptr_t) held,
						      it_page() } };
	IT_EQ(ioctl(uffd, UFFDIO_ZEROPAGE, &zp), 0);
}

/* Such a server's end, its connections closed: nothing left of it. */
static void
held_server_end(int uffd, struct rpma_ep **ep, struct rpma_mr_local **mr,
		struct rpma_peer **peer, uint8_t *buf)
{
	(void) close(uffd);
	IT_OK(rpma_mr_dereg(mr));
	IT_ASSERT(thread_gone(5000));
	IT_OK(rpma_ep_shutdown(ep));
	IT_OK(rpma_peer_delete(peer));
	IT_EQ(munmap(buf, LEN), 0);
}

/*
 * Its client: NULL when the server has no such userfaultfd, else a peer
 * with `src` registered as the source of writes.
 */
static struct rpma_peer *
held_client_start(uint8_t **src, struct rpma_mr_local **ms)
{
	char go[8];
	IT_ASSERT(it_expect(TAG_STUCK, go, sizeof(go)) > 0);
	if (memcmp(go, "skip", 4) == 0)
		return NULL;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	*src = it_alloc(LEN);
	*ms = IT_REG(peer, *src, LEN, RPMA_MR_USAGE_WRITE_SRC);
	return peer;
}

/*
 * The server's own userfaultfd holds a page of its registration, and the
 * landing thread's copy into it waits for good: that write fails after
 * memory_timeout_ms (IBV_WC_REM_OP_ERR), writes into the rest of the
 * registration land meanwhile (rpmad's thread does them), and once the
 * page comes the thread goes on.
 */
static int
stuck_server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct rpma_peer *peer;
	uint8_t *buf;
	struct rpma_mr_local *mr;
	int uffd = held_server_start(&peer, &buf, &mr);
	if (uffd < 0)
		return 0;
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *one = it_accept_next(ep, NULL, NULL);
	struct rpma_conn *two = it_accept_next(ep, NULL, NULL);

	/* the last page */
	uint8_t *held = buf + LEN - it_page();
	hold_page(uffd, held);
	it_send_desc(IT_CLIENT, mr, NULL);

	(void) it_expect(TAG_FAILED, NULL, 0);
	IT_EQ(it_check(buf + 4096, 8192, 42), -1);
	/* the stuck copy ends, the thread goes on */
	bring_page(uffd, held);
	IT_EQ(it_tell(IT_CLIENT, TAG_CHECKED, NULL, 0), 0);
	(void) it_expect(TAG_WRITTEN, NULL, 0);
	IT_EQ(it_check(buf + 65536, 4096, 43), -1);

	drop(&one);
	it_await_close(&two);
	held_server_end(uffd, &ep, &mr, &peer, buf);
	return 0;
}

static int
stuck_client(const struct it_env *env, void *arg)
{
	(void) arg;
	uint8_t *src;
	struct rpma_mr_local *ms;
	struct rpma_peer *peer = held_client_start(&src, &ms);
	if (peer == NULL)
		return 0;	/* no userfaultfd that holds kernel faults */
	struct rpma_conn *one = it_connect(peer, env, NULL, NULL);
	struct rpma_conn *two = it_connect_to(peer, env->port, NULL, NULL);
	struct it_desc desc;
	it_expect_desc(&desc);
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);
	struct rpma_cq *cq1 = NULL, *cq2 = NULL;
	IT_OK(rpma_conn_get_cq(one, &cq1));
	IT_OK(rpma_conn_get_cq(two, &cq2));
	struct ibv_wc wc;

	/* into the page that never comes: fails after the deadline */
	it_fill(src, it_page(), 41);
	IT_OK(rpma_write(one, rmr, LEN - it_page(), ms, 0, it_page(),
			RPMA_F_COMPLETION_ALWAYS, (void *) 1));
	IT_EQ(it_get_wc(cq1, &wc, 4 * IT_WAIT_MS), 0);
	IT_EQ(wc.wr_id, 1);
	IT_EQ(wc.status, IBV_WC_REM_OP_ERR);

	/* the rest of the registration still takes writes */
	it_fill(src, 8192, 42);
	IT_OK(rpma_write(two, rmr, 4096, ms, 0, 8192,
			RPMA_F_COMPLETION_ALWAYS, (void *)2));
	it_wc_ok(two, cq2, 2, IBV_WC_RDMA_WRITE, &wc);
	IT_EQ(it_tell(IT_SERVER, TAG_FAILED, NULL, 0), 0);
	(void) it_expect(TAG_CHECKED, NULL, 0);
	it_fill(src, 4096, 43);
	IT_OK(rpma_write(two, rmr, 65536, ms, 0, 4096,
			RPMA_F_COMPLETION_ALWAYS, (void *)3));
	it_wc_ok(two, cq2, 3, IBV_WC_RDMA_WRITE, &wc);
	IT_EQ(it_tell(IT_SERVER, TAG_WRITTEN, NULL, 0), 0);

	drop(&one);
	it_client_end(&two, &rmr, &ms, &peer, src);
	return 0;
}

START_TEST(test_stuck_page)
{
	if (!it_transport_is("tcp"))
		return;
	it_pair_test_cfg(2, "memory_timeout_ms = 1000\n", stuck_server,
			stuck_client, NULL);
}
END_TEST

/* ------------------------------- 3b. in order behind a stuck copy */

#define HELD_OFF (1u << 20)

/* A server of one connection whose page at HELD_OFF its userfaultfd holds. */
struct held_one {
	int uffd;
	struct rpma_peer *peer;
	uint8_t *buf, *held;
	struct rpma_mr_local *mr;
	struct rpma_ep *ep;
	struct rpma_conn *conn;
};

/* Its client: one connection to it, the source of its writes registered. */
struct held_writer {
	struct rpma_peer *peer;
	uint8_t *src;
	struct rpma_mr_local *ms;
	struct rpma_mr_remote *rmr;
	struct rpma_cq *cq;
	struct rpma_conn *conn;
	/* the second write was posted (one after a failure may be refused) */
	bool second;
};

/*
 * The client's two writes: `first` bytes at HELD_OFF (seed `seed`), then,
 * pause_ms later, a page at HELD_OFF + second (seed + 1), with completions
 * 1 and 2 (w->second: whether the second was posted: the connection may
 * have failed already). false: skipped (the server has no userfaultfd).
 */
static bool
held_writes(const struct it_env *env, struct held_writer *w, size_t first,
		unsigned pause_ms, size_t second, uint32_t seed)
{
	w->peer = held_client_start(&w->src, &w->ms);
	if (w->peer == NULL)
		return false;
	w->conn = it_connect_mr(w->peer, env, &w->rmr, &w->cq);
	it_fill(w->src, first, seed);
	IT_OK(rpma_write(w->conn, w->rmr, HELD_OFF, w->ms, 0, first,
			RPMA_F_COMPLETION_ALWAYS, (void *) 1));
	(void) usleep(pause_ms * 1000);
	/* its source after the first one's, which may still be read */
	it_fill(w->src + first, 4096, seed + 1);
	w->second = rpma_write(w->conn, w->rmr, HELD_OFF + second, w->ms, first,
				    4096, RPMA_F_COMPLETION_ALWAYS,
				    (void *) 2) == 0;
	return true;
}

/* Its start, up to the descriptor sent; false: skipped (no userfaultfd). */
static bool
held_one_start(const struct it_env *env, struct held_one *h)
{
	h->uffd = held_server_start(&h->peer, &h->buf, &h->mr);
	if (h->uffd < 0)
		return false;
	h->ep = it_listen(h->peer, env);
	h->conn = it_accept_next(h->ep, NULL, NULL);
	h->held = h->buf + HELD_OFF;
	hold_page(h->uffd, h->held);
	it_send_desc(IT_CLIENT, h->mr, NULL);
	return true;
}

/*
 * A write's copy waits on a page the server's userfaultfd holds; the next
 * write, to the page after it, is posted behind it and taken back by
 * rpmad when the landing thread does not take it in time. It lands after
 * the first write all the same: the page both wrote ends with the second
 * one's bytes, as on a NIC, which writes in order.
 */
static int
order_server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct held_one h;
	if (!held_one_start(env, &h))
		return 0;
	/* both posted: the second is taken back after 50 ms; then the page */
	(void) it_expect(TAG_WRITTEN, NULL, 0);
	(void) usleep(300 * 1000);
	bring_page(h.uffd, h.held);
	(void) it_expect(TAG_CHECKED, NULL, 0);
	IT_EQ(it_check(h.held, 4096, 61), -1);
	IT_EQ(it_check(h.held + 4096, 4096, 62), -1);
	it_await_close(&h.conn);
	held_server_end(h.uffd, &h.ep, &h.mr, &h.peer, h.buf);
	return 0;
}

static int
order_client(const struct it_env *env, void *arg)
{
	(void) arg;
	struct held_writer w;
	/*
	 * the held page and the one after it (the copy waits at the first),
	 * then the page after it, posted while the first is in the copy
	 */
	if (!held_writes(env, &w, 8192, 100, 4096, 61))
		return 0; /* no userfaultfd that holds kernel faults */
	IT_ASSERT(w.second);
	IT_EQ(it_tell(IT_SERVER, TAG_WRITTEN, NULL, 0), 0);
	struct ibv_wc wc;
	it_wc_ok(w.conn, w.cq, 1, IBV_WC_RDMA_WRITE, &wc);
	it_wc_ok(w.conn, w.cq, 2, IBV_WC_RDMA_WRITE, &wc);
	IT_EQ(it_tell(IT_SERVER, TAG_CHECKED, NULL, 0), 0);
	it_client_end(&w.conn, &w.rmr, &w.ms, &w.peer, w.src);
	return 0;
}

START_TEST(test_order_behind_stuck)
{
	if (!it_transport_is("tcp"))
		return;
	it_pair_test(2, order_server, order_client, NULL);
}
END_TEST

/* ----------------------- 3c. nothing lands behind a failed write */

/* Nothing of the second write is in its page, `at`. */
static void
second_never_landed(const uint8_t *at)
{
	for (size_t i = 0; i < 4096; i++)
		IT_ASSERT_MSG(at[i] == 0x33, "byte %zu: %#x", i, at[i]);
}

/*
 * A client whose first write, of `first` bytes, fails with `status`, the
 * second (to `second`) posted pause_ms after it: that one fails too (or
 * is not even posted), and the server finds none of its bytes.
 */
static int
refused_writes(const struct it_env *env, size_t first, unsigned pause_ms,
		size_t second, uint32_t seed, enum ibv_wc_status status)
{
	struct held_writer w;
	if (!held_writes(env, &w, first, pause_ms, second, seed))
		return 0; /* no userfaultfd that holds kernel faults */
	struct ibv_wc wc;
	IT_EQ(it_get_wc(w.cq, &wc, 4 * IT_WAIT_MS), 0);
	IT_EQ(wc.wr_id, 1);
	IT_EQ(wc.status, status);
	if (w.second) {
		IT_EQ(it_get_wc(w.cq, &wc, 4 * IT_WAIT_MS), 0);
		IT_EQ(wc.wr_id, 2);
		IT_ASSERT(wc.status != IBV_WC_SUCCESS);
	}
	IT_EQ(it_tell(IT_SERVER, TAG_FAILED, NULL, 0), 0);
	(void) it_expect(TAG_CHECKED, NULL, 0);
	drop(&w.conn);
	IT_OKS(rpma_mr_remote_delete(&w.rmr), rpma_mr_dereg(&w.ms),
			rpma_peer_delete(&w.peer));
	free(w.src);
	return 0;
}

/*
 * The first write waits on a held page until memory_timeout_ms (1 s)
 * fails it; the second, to another page, was posted 600 ms after it and
 * is refused with it (flushed). When the page comes afterwards, the
 * first write's copy ends, but the second never lands: as on a NIC,
 * which executes nothing after an operation it refused.
 */
static int
refused_server(const struct it_env *env, void *arg)
{
	(void) arg;
	struct held_one h;
	if (!held_one_start(env, &h))
		return 0;
	/* both ended: the page comes, the stuck copy goes on */
	(void) it_expect(TAG_FAILED, NULL, 0);
	bring_page(h.uffd, h.held);
	(void) usleep(300 * 1000);
	second_never_landed(h.held + 65536);
	IT_EQ(it_tell(IT_CLIENT, TAG_CHECKED, NULL, 0), 0);
	drop(&h.conn);
	held_server_end(h.uffd, &h.ep, &h.mr, &h.peer, h.buf);
	return 0;
}

static int
refused_client(const struct it_env *env, void *arg)
{
	(void) arg;
	return refused_writes(env, 4096, 600, 65536, 71, IBV_WC_REM_OP_ERR);
}

START_TEST(test_nothing_after_refused)
{
	if (!it_transport_is("tcp"))
		return;
	it_pair_test_cfg(2, "memory_timeout_ms = 1000\n", refused_server,
			refused_client, NULL);
}
END_TEST

/*
 * The first write, PROTECTED_LEN bytes, ends in a page the server
 * write-protected with its own userfaultfd: its copy fails there, at once
 * (IBV_WC_REM_ACCESS_ERR). The second, to a page that is there, is
 * posted right behind it and lands in the same batch or the next one
 * while the first is being copied, before rpmad has heard of the
 * failure. Neither the client's thread nor rpmad's (arg: the server's
 * landing switched off) moves it.
 */
#define PROTECTED_LEN (256u << 10)
static int
protected_server(const struct it_env *env, void *arg)
{
	if (arg)
		IT_EQ(setenv("RPMA_LANDING", "0", 1), 0);
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_anon(LEN, 0x33);
	struct rpma_mr_local *mr = IT_REG(peer, buf, LEN, RW);
	int uffd = it_write_protect(buf + HELD_OFF + PROTECTED_LEN - it_page(),
			it_page());
	IT_EQ(it_tell(IT_CLIENT, TAG_STUCK, "go", 2), 0);
	struct rpma_ep *ep = it_listen(peer, env);
	struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
	it_send_desc(IT_CLIENT, mr, NULL);

	(void) it_expect(TAG_FAILED, NULL, 0);
	second_never_landed(buf + HELD_OFF + 2 * PROTECTED_LEN);
	IT_EQ(it_tell(IT_CLIENT, TAG_CHECKED, NULL, 0), 0);
	drop(&conn);
	held_server_end(uffd, &ep, &mr, &peer, buf);
	return 0;
}

static int
protected_client(const struct it_env *env, void *arg)
{
	(void) arg;
	return refused_writes(env, PROTECTED_LEN, 0, 2 * PROTECTED_LEN, 81,
			IBV_WC_REM_ACCESS_ERR);
}

START_TEST(test_nothing_after_lost)
{
	if (!it_transport_is("tcp"))
		return;
	/* one rpmad or two; the client's thread or rpmad's */
	it_pair_test(_i % 2 + 1, protected_server, protected_client,
			(void *) (uintptr_t) (_i / 2));
}
END_TEST

/* -------------------------------------- 4. an area scribbled over */

struct scribbler {
	volatile uint32_t *words;
	size_t n;
	volatile int stop;
};

static void *
scribble(void *arg)
{
	struct scribbler *s = arg;
	uint32_t x = 12345;
	while (!s->stop) {
		x = x * 1103515245u + 12345u;
		s->words[(x >> 8) % s->n] = x;
	}
	return NULL;
}

/*
 * A server that writes garbage all over its own landing area (slots'
 * states, jobs, the header) while the client writes: every write ends
 * (landed or failed) within the deadline, and rpmad serves on.
 */
static void
scribbled_server(struct it_remote *r)
{
	uint8_t *buf = it_alloc(LEN);
	struct rpma_mr_local *mr = IT_REG(r->peer, buf, LEN, RW);
	/* where the library mapped the area */
	FILE *f = fopen("/proc/self/maps", "re");
	IT_ASSERT(f != NULL);
	char line[512];
	unsigned long lo = 0, hi = 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "rpmad-landing") &&
				sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			break;
	(void) fclose(f);
	IT_ASSERT(hi > lo);
	/* the header and the slots, not the data */
	struct scribbler s = { .words = (volatile uint32_t *)lo,
			.n = (256u << 10) / 4 };
	pthread_t th;
	IT_EQ(pthread_create(&th, NULL, scribble, &s), 0);
	for (int i = 0; i < 40; i++) {
		struct it_remote_res res = it_remote_do(IT_OP_WRITE, mr,
				(size_t)i * 4096, 4096, (uint32_t)i);
		IT_ASSERT_MSG(res.status == IBV_WC_SUCCESS ||
				res.status == IBV_WC_REM_ACCESS_ERR ||
				res.status == IBV_WC_REM_OP_ERR,
				"write %d: status %d", i, res.status);
		if (res.status != IBV_WC_SUCCESS)
			break;	/* a failed write breaks the connection */
	}
	s.stop = 1;
	IT_EQ(pthread_join(th, NULL), 0);
	IT_OK(rpma_mr_dereg(&mr));
	free(buf);
}

START_TEST(test_scribbled_area)
{
	if (!it_transport_is("tcp"))
		return;
	struct it_env env;
	ck_assert_int_eq(it_env_start_cfg(&env, 1,
			"memory_timeout_ms = 1000\n"), 0);
	struct it_remote_case c = { .body = scribbled_server };
	ck_assert_msg(it_remote_run(&env, &c) == 0, "%s", it_report());
	/* rpmad serves on: a clean pair afterwards */
	c.body = landed_server;
	ck_assert_msg(it_remote_run(&env, &c) == 0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ---------------------------------------------------------- 5. fork */

/*
 * A child of fork() has neither the thread nor the area; its own
 * registrations land by a thread of its own.
 */
static void
fork_server(struct it_remote *r)
{
	uint8_t *buf = it_alloc(LEN);
	struct rpma_mr_local *mr = IT_REG(r->peer, buf, LEN, RW);
	it_remote_write(mr, 0, 4096, 51);
	pid_t child = fork();
	IT_ASSERT(child >= 0);
	if (child == 0) {
		int bad = threads_named("rpma-landing") != 0 || area_mapped();
		struct rpma_peer *peer = it_peer(IT_ADDR,
				RPMA_UTIL_IBV_CONTEXT_LOCAL);
		struct rpma_mr_local *cmr = NULL;
		uint8_t *cbuf = malloc(LEN);
		bad |= cbuf == NULL ||
			rpma_mr_reg(peer, cbuf, LEN, RW, &cmr) != 0;
		bad |= threads_named("rpma-landing") != 1;
		bad |= rpma_mr_dereg(&cmr) != 0 ||
			rpma_peer_delete(&peer) != 0;
		bad |= !thread_gone(5000);
		_exit(bad);
	}
	int status = 0;
	IT_EQ(waitpid(child, &status, 0), child);
	IT_ASSERT_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			"child: status %#x", status);
	/* the parent's thread lands on */
	it_remote_write(mr, 8192, 4096, 52);
	IT_EQ(it_check(buf + 8192, 4096, 52), -1);
	IT_OK(rpma_mr_dereg(&mr));
	free(buf);
}

START_TEST(test_fork)
{
	run_over_tcp(fork_server, 1);
}
END_TEST

static Suite *
suite(void)
{
	const struct th_test tc_landing[] = {
		TH_LOOP(test_landed_and_gone, 0, 2),
		TH_TEST(test_switched_off),
		TH_LOOP(test_stopped_server, 0, 2),
		TH_TEST(test_stuck_page),
		TH_TEST(test_order_behind_stuck),
		TH_TEST(test_nothing_after_refused),
		TH_LOOP(test_nothing_after_lost, 0, 4),
		TH_TEST(test_scribbled_area),
		TH_TEST(test_fork),
		TH_TEST(test_registered_at_once),
		TH_END,
	};
	const struct th_tcase tcases[] = {
		{ "landing", .steps = tc_landing, .create = it_tcase_create },
	};
	return th_suite("landing", tcases, TH_N(tcases));
}

int
main(void)
{
	return check_run(suite(), CK_NORMAL);
}
