// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_memory.c -- registering memory changes nothing else about the
 * application's memory: what issue 18's review tried, replayed, each with
 * the check that native librpma passes
 *
 * S is the application under test; C, on the other rpmad (or the same),
 * reads and writes S's registrations when S asks it to (it_remote_write,
 * it_remote_read), so that "rpmad reaches the very pages the application
 * sees" is checked end to end, not assumed. Over verbs (the VM suite) the
 * same tests run against the library's memfd (vamem.h).
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/mempolicy.h>
#include <unistd.h>

#include "itest.h"
#include "th_suite.h"

static const int RW = IT_REMOTE_USAGE;

/*
 * Who the application is: root, an unprivileged user, or one whose
 * process is not dumpable (a program that dropped privileges or has file
 * capabilities: its /proc/self/mem is root's, so rpmad cannot have its
 * address space and the library moves registered private pages into
 * shared memory, as for RDMA devices).
 */
enum who { WHO_ROOT, WHO_USER, WHO_SEALED };

struct mem_case {
	enum who who;
};

/* Becomes the case's application (a struct mem_case). */
static bool
become(const struct it_env *env, void *arg)
{
	const struct mem_case *mc = arg;
	(void) env;
	if (mc->who != WHO_ROOT)
		it_become_nobody(mc->who == WHO_USER);
	return true;
}

/* A directory the role's application may write in. */
static const char *
writable_dir(const struct it_remote *r)
{
	const struct mem_case *mc = r->arg;
	/* env->dir and "/nobody", with room for a file name in a path[300] */
	static char dir[sizeof(r->env->dir) + 16];
	(void) snprintf(dir, sizeof(dir), "%s%s", r->env->dir,
			mc->who == WHO_ROOT ? "" : "/nobody");
	return dir;
}

/*
 * How much of a workload of n to do: over verbs (in the VM, emulated and
 * many times slower) a sixteenth, under AddressSanitizer a quarter, enough
 * for what it checks.
 */
static int
scaled(int n)
{
#ifdef __SANITIZE_ADDRESS__
	n = (n + 3) / 4;
#endif
	return it_transport_is("verbs") ? (n + 15) / 16 : n;
}

/* Whether registered private pages move into the library's memfd. */
static bool
pages_move(const void *arg)
{
	const struct mem_case *mc = arg;
	return it_transport_is("verbs") || mc->who == WHO_SEALED;
}

/* Runs `server` as `who` against it_remote_helper, on one rpmad or two. */
static void
run(it_remote_fn *server, int ndaemons, enum who who)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start_nobody(&env, ndaemons), 0);
	/* and nobody writes in a directory of its own */
	char dir[300];
	(void) snprintf(dir, sizeof(dir), "%s/nobody", env.dir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(chown(dir, TH_NOBODY, TH_NOBODY), 0);
	struct mem_case mc = { who };
	struct it_remote_case c = { become, server, &mc };
	ck_assert_msg(it_remote_run(&env, &c) == 0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}

/* ------------------------------------------------- what the kernel says */

/* How many descriptors this process has open. */
static int
open_fds(void)
{
	return it_proc_fds(getpid());
}

/* --------------------------------------------------------- 1. fork */

/*
 * A child's stores stay in the child, registered pages and their heap
 * neighbours alike; the parent's registration keeps working (C's writes
 * land in the parent, not in the child); the child's calls on inherited
 * objects fail without touching them, and the library closes none of the
 * child's descriptors.
 */
#define FORK_ROUNDS 20

static int
fork_child(uint8_t *block, uint8_t *buf, size_t buflen,
		struct rpma_conn *conn, struct rpma_mr_local *mr,
		const char *dir)
{
	/* stores into the neighbours and into the registered bytes */
	memset(block, 0xc1, 4096);
	memset(buf, 0xc2, buflen);
	memset(buf + buflen, 0xc3, 64);
	/* the parent's objects: refused, nothing posted, nothing taken */
	struct rpma_cq *cq = NULL;
	if (rpma_conn_get_cq(conn, &cq))
		return 10;
	struct rpma_mr_remote *self = NULL;
	uint8_t desc[32];
	size_t dlen;
	if (rpma_mr_get_descriptor_size(mr, &dlen) ||
			rpma_mr_get_descriptor(mr, desc) ||
			rpma_mr_remote_from_descriptor(desc, dlen, &self))
		return 11;
	if (rpma_write(conn, self, 0, mr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
			(void *)0xbad) != RPMA_E_PROVIDER)
		return 12;
	struct ibv_wc wc;
	if (rpma_cq_get_wc(cq, 1, &wc, NULL) != RPMA_E_PROVIDER)
		return 13;
	(void) rpma_mr_remote_delete(&self);
	/* its own descriptors: closed, reopened, and left alone by us */
	for (int fd = 3; fd < 1024; fd++)
		(void) close(fd);
	char pa[300], pb[300];
	(void) snprintf(pa, sizeof(pa), "%s/child-%d-a", dir, (int)getpid());
	(void) snprintf(pb, sizeof(pb), "%s/child-%d-b", dir, (int)getpid());
	int a = open(pa, O_RDWR | O_CREAT | O_TRUNC, 0600);
	int b = open(pb, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (a != 3 || b != 4)
		return 14;
	/* the library in the child: a fresh session of its own */
	struct ibv_context *dev = NULL;
	if (rpma_utils_get_ibv_context(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&dev))
		return 15;
	/* deleting the parent's objects frees the child's copies only */
	if (rpma_mr_dereg(&mr) || rpma_conn_delete(&conn))
		return 16;
	if (write(3, "A", 1) != 1 || write(4, "B", 1) != 1)
		return 17;
	char c = 0;
	if (pread(3, &c, 1, 0) != 1 || c != 'A' || pread(4, &c, 1, 0) != 1 ||
			c != 'B')
		return 18;
	(void) unlink(pa);
	(void) unlink(pb);
	return 0;
}

static void
fork_server(struct it_remote *r)
{
	const char *dir = writable_dir(r);
	/* an 8 KiB buffer in the middle of a heap block, not page-aligned */
	uint8_t *block = malloc(64 * 1024);
	IT_ASSERT(block != NULL);
	memset(block, 0x5a, 64 * 1024);
	uint8_t *buf = block + 4096 + 16;
	const size_t buflen = 8192;
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(r->peer, buf, buflen, RW, &mr));

	for (int round = 0; round < scaled(FORK_ROUNDS); round++) {
		(void) fflush(NULL);
		pid_t pid = fork();
		IT_ASSERT(pid >= 0);
		if (pid == 0)
			_exit(fork_child(block, buf, buflen, r->conn, mr, dir));
		int st = it_child_status(pid);
		IT_ASSERT_MSG(st == 0, "round %d: the child failed at step %d",
				round, st);
		for (size_t i = 0; i < 64 * 1024; i++)
			IT_ASSERT_MSG(block[i] == 0x5a, "round %d: byte %zu of "
					"the parent's heap block changed to "
					"%#x in the child", round, i, block[i]);
	}
	/* C's writes land in the parent's pages */
	it_remote_write(mr, 0, buflen, 77);
	IT_EQ(it_check(buf, buflen, 77), -1);
	IT_EQ(block[4096 + 15], 0x5a);
	IT_EQ(buf[buflen], 0x5a);

	IT_OK(rpma_mr_dereg(&mr));
	free(block);
}

START_TEST(test_fork)
{
	run(fork_server, _i & 1 ? 1 : 2, (_i & 2) ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/*
 * Both sides of a fork use malloc freely after the parent registered heap
 * memory: their heaps are their own (before, they shared malloc's
 * metadata and one of them aborted).
 */
static void
heap_churn(unsigned seed)
{
	void *slot[512] = { 0 };
	for (int i = 0; i < scaled(200000); i++) {
		seed = seed * 1103515245u + 12345u;
		unsigned k = (seed >> 8) % 512;
		free(slot[k]);
		slot[k] = malloc(16 + (seed >> 20) % 4000);
		if (slot[k])
			memset(slot[k], (int)k, 16);
	}
	for (int k = 0; k < 512; k++)
		free(slot[k]);
}

static void
fork_heap_server(struct it_remote *r)
{
	void *small[64];
	struct rpma_mr_local *mr[64];
	for (int i = 0; i < 64; i++) {
		small[i] = malloc(8192);
		IT_ASSERT(small[i] != NULL);
		IT_OK(rpma_mr_reg(r->peer, small[i], 8192, RW, &mr[i]));
	}
	for (int round = 0; round < scaled(5); round++) {
		(void) fflush(NULL);
		pid_t pid = fork();
		IT_ASSERT(pid >= 0);
		if (pid == 0) {
			heap_churn(1);
			_exit(0);
		}
		heap_churn(2);
		IT_EQ(it_child_status(pid), 0);
	}
	for (int i = 0; i < 64; i++) {
		IT_OK(rpma_mr_dereg(&mr[i]));
		free(small[i]);
	}
}

START_TEST(test_fork_heap)
{
	run(fork_heap_server, 1, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* ------------------------------------------------- 2. other threads' stores */

/*
 * One thread keeps incrementing counters that share pages with buffers
 * the main thread registers meanwhile: no increment may be lost (with
 * native librpma nothing is copied, so nothing can be).
 */
#define STORE_BUFS 2048

struct counters {
	uint64_t *c[STORE_BUFS];
	atomic_bool stop;
	uint64_t done;		/* increments made */
};

static void *
count_forever(void *arg)
{
	struct counters *k = arg;
	uint64_t n = 0;
	while (!atomic_load_explicit(&k->stop, memory_order_relaxed)) {
		for (int i = 0; i < STORE_BUFS; i++)
			(*(volatile uint64_t *)k->c[i])++;
		n += STORE_BUFS;
	}
	k->done = n;
	return NULL;
}

static void
stores_server(struct it_remote *r)
{
	size_t ps = it_page();
	/* each buffer takes most of a page, its counter the rest */
	uint8_t *area = mmap(NULL, STORE_BUFS * ps, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	IT_ASSERT(area != MAP_FAILED);
	static struct counters k;
	for (int i = 0; i < STORE_BUFS; i++)
		k.c[i] = (uint64_t *)(area + i * ps + ps - 64);
	pthread_t t;
	IT_EQ(pthread_create(&t, NULL, count_forever, &k), 0);

	/*
	 * moving pages reads /proc/self/smaps for their attributes, which
	 * costs more the more mappings there are: fewer then (librpmaclient(7))
	 */
	int n = scaled(pages_move(r->arg) ? STORE_BUFS / 8 : STORE_BUFS);
	static struct rpma_mr_local *mr[STORE_BUFS];
	for (int i = 0; i < n; i++)
		IT_OK(rpma_mr_reg(r->peer, area + i * ps, ps - 128, RW,
				&mr[i]));
	for (int i = 0; i < n; i += 2)
		IT_OK(rpma_mr_dereg(&mr[i]));
	atomic_store(&k.stop, true);
	IT_EQ(pthread_join(t, NULL), 0);

	uint64_t sum = 0;
	for (int i = 0; i < STORE_BUFS; i++)
		sum += *k.c[i];
	IT_ASSERT_MSG(sum == k.done, "%llu increments lost",
			(unsigned long long)(k.done - sum));
	/* and a registration still reaches what the application sees */
	it_remote_write(mr[1], 0, ps - 128, 5);
	IT_EQ(it_check(area + ps, ps - 128, 5), -1);
	for (int i = 1; i < n; i += 2)
		IT_OK(rpma_mr_dereg(&mr[i]));
	IT_EQ(munmap(area, STORE_BUFS * ps), 0);
}

START_TEST(test_other_threads_stores)
{
	run(stores_server, 1, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* ----------------------------------------------- 3. freed memory is zeroed */

/*
 * After register, deregister and free, memory from calloc (or of a
 * mapping after MADV_DONTNEED) reads as zeros, and MADV_FREE works: the
 * pages are private anonymous memory again. The same with jemalloc
 * (LD_PRELOAD) is mem_allocator.c's, run by test_freed_memory_jemalloc.
 */
static void
freed_server(struct it_remote *r)
{
	static const size_t sizes[] = { 100 * 1000, 1 << 20, 4 << 20 };
	for (int round = 0; round < scaled(20); round++) {
		for (size_t s = 0; s < 3; s++) {
			uint8_t *p = malloc(sizes[s]);
			IT_ASSERT(p != NULL);
			memset(p, 0xaa, sizes[s]);
			struct rpma_mr_local *mr = NULL;
			IT_OK(rpma_mr_reg(r->peer, p, sizes[s], RW, &mr));
			IT_OK(rpma_mr_dereg(&mr));
			free(p);
			uint8_t *q = calloc(1, sizes[s]);
			IT_ASSERT(q != NULL);
			for (size_t i = 0; i < sizes[s]; i += 511)
				IT_ASSERT_MSG(q[i] == 0, "size %zu: calloc'ed "
						"byte %zu is %#x", sizes[s], i,
						q[i]);
			free(q);
		}
	}
	size_t len = 16 * it_page();
	uint8_t *m = it_anon(len, 0xbb);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(r->peer, m + 100, len - 200, RW, &mr));
	it_remote_write(mr, 0, len - 200, 9);
	IT_OK(rpma_mr_dereg(&mr));
	IT_EQ(it_check(m + 100, len - 200, 9), -1);
	IT_EQ(madvise(m, len, MADV_DONTNEED), 0);
	for (size_t i = 0; i < len; i++)
		IT_ASSERT_MSG(m[i] == 0, "byte %zu after MADV_DONTNEED", i);
	IT_EQ(madvise(m, len, MADV_FREE), 0);
	IT_EQ(munmap(m, len), 0);
}

START_TEST(test_freed_memory)
{
	run(freed_server, 1, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/*
 * The same with jemalloc, as the application's allocator (LD_PRELOAD):
 * mem_allocator registers, deregisters and frees blocks, then checks that
 * calloc gives zeros, against the daemon of this test.
 */
#define JEMALLOC "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"

START_TEST(test_freed_memory_jemalloc)
{
#ifdef __SANITIZE_ADDRESS__
	/* AddressSanitizer's allocator and jemalloc cannot both be it */
	(void) fprintf(stderr, "it_memory: jemalloc under AddressSanitizer: "
			"skipped\n");
	return;
#endif
	if (access(JEMALLOC, R_OK)) {
		(void) fprintf(stderr, "it_memory: %s missing (Debian package "
				"libjemalloc2): skipped\n", JEMALLOC);
		return;
	}
	char self[512], prog[600];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	/* libtool's wrapper runs the binary from .libs/ */
	const char *up = strstr(self, "/.libs") ? "/.." : "";
	(void) snprintf(prog, sizeof(prog), "%s%s/mem_allocator", self, up);
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 1), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		(void) setenv("LD_PRELOAD", JEMALLOC, 1);
		(void) setenv("RPMAD_SOCKET", env.d[0].socket, 1);
		execl(prog, prog, it_addr(), (char *)NULL);
		_exit(127);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "mem_allocator "
			"under jemalloc: status %#x", st);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* --------------------------------------------------------- 4. growing */

/*
 * A block that sat below a later registration grows with realloc: its
 * bytes and the registration's stay apart; one that was registered and
 * deregistered grows past what any registration held without a fault.
 * The same with mmap and mremap.
 */
static void
grow_server(struct it_remote *r)
{
	const size_t small = 256 * 1024;
	/* mmap'ed blocks: the later one lands below the earlier one */
	uint8_t *a = malloc(small);
	uint8_t *b = malloc(small);
	IT_ASSERT(a && b);
	memset(a, 0x11, small);
	struct rpma_mr_local *mrb = NULL;
	IT_OK(rpma_mr_reg(r->peer, b, small, RW, &mrb));
	it_remote_write(mrb, 0, small, 21);
	uint8_t *a2 = realloc(a, 8 << 20);
	IT_ASSERT(a2 != NULL);
	memset(a2 + small, 0x22, (8 << 20) - small);
	for (size_t i = 0; i < small; i++)
		IT_ASSERT_MSG(a2[i] == 0x11, "grown block byte %zu", i);
	IT_EQ(it_check(b, small, 21), -1);
	it_remote_write(mrb, 0, small, 22);
	for (size_t i = small; i < (8u << 20); i += 4093)
		IT_ASSERT_MSG(a2[i] == 0x22, "grown block byte %zu", i);
	IT_EQ(it_remote_read(mrb, 0, small, 22), -1);
	IT_OK(rpma_mr_dereg(&mrb));
	free(b);

	/* a deregistered block grows far beyond its old size */
	uint8_t *c = malloc(small);
	IT_ASSERT(c != NULL);
	struct rpma_mr_local *mrc = NULL;
	IT_OK(rpma_mr_reg(r->peer, c, small, RW, &mrc));
	IT_OK(rpma_mr_dereg(&mrc));
	uint8_t *c2 = realloc(c, 48 << 20);
	IT_ASSERT(c2 != NULL);
	memset(c2, 0x33, 48 << 20);
	free(c2);
	free(a2);

	/* mmap and mremap */
	size_t ps = it_page();
	uint8_t *m = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *n = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	IT_ASSERT(m != MAP_FAILED && n != MAP_FAILED);
	struct rpma_mr_local *mrn = NULL;
	IT_OK(rpma_mr_reg(r->peer, n, 4 * ps, RW, &mrn));
	it_remote_write(mrn, 0, 4 * ps, 23);
	uint8_t *m2 = mremap(m, 4 * ps, 2048 * ps, MREMAP_MAYMOVE);
	IT_ASSERT(m2 != MAP_FAILED);
	memset(m2, 0x44, 2048 * ps);
	IT_EQ(it_check(n, 4 * ps, 23), -1);
	IT_OK(rpma_mr_dereg(&mrn));
	uint8_t *n2 = mremap(n, 4 * ps, 8192 * ps, MREMAP_MAYMOVE);
	IT_ASSERT(n2 != MAP_FAILED);
	IT_EQ(it_check(n2, 4 * ps, 23), -1);
	memset(n2, 0x55, 8192 * ps);
	IT_EQ(munmap(m2, 2048 * ps), 0);
	IT_EQ(munmap(n2, 8192 * ps), 0);
}

START_TEST(test_growing_memory)
{
	run(grow_server, 1, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* ------------------------------------------------- 5. read-only memory */

static const char constant[4096] __attribute__((aligned(64))) =
	"a constant: 42";

__attribute__((noinline)) static int
answer(void)
{
	return 42;
}

/*
 * A usage a device writes through is refused on memory the application
 * cannot write, as ibv_reg_mr refuses it (RPMA_E_PROVIDER); reading it
 * remotely works, and nothing changes the constant or the code.
 */
static void
readonly_server(struct it_remote *r)
{
	struct rpma_mr_local *mr = NULL;
	static const int writes[] = { RPMA_MR_USAGE_WRITE_DST,
		RPMA_MR_USAGE_READ_DST, RPMA_MR_USAGE_RECV,
		RPMA_MR_USAGE_WRITE_SRC };
	uint8_t *ro = mmap(NULL, it_page(), PROT_READ,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	IT_ASSERT(ro != MAP_FAILED);
	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		IT_ERR(RPMA_E_PROVIDER,
				rpma_mr_reg(r->peer, (void *) constant,
						sizeof(constant), writes[i],
						&mr));
		IT_ERR(RPMA_E_PROVIDER,
				rpma_mr_reg(r->peer, (void *) answer, 64,
						writes[i], &mr));
		IT_ERR(RPMA_E_PROVIDER,
				rpma_mr_reg(r->peer, ro, it_page(), writes[i],
						&mr));
	}
	IT_ASSERT(mr == NULL);
	/* reading works: C sees the constant */
	IT_OK(rpma_mr_reg(r->peer, (void *) constant, sizeof(constant),
			RPMA_MR_USAGE_READ_SRC, &mr));
	struct it_remote_res res = it_remote_do(IT_OP_READ, mr, 0, 64, 0);
	IT_EQ(res.status, IBV_WC_SUCCESS);
	IT_OK(rpma_mr_dereg(&mr));
	IT_ASSERT(strcmp(constant, "a constant: 42") == 0);
	IT_EQ(answer(), 42);
	IT_EQ(munmap(ro, it_page()), 0);
}

START_TEST(test_readonly_memory)
{
	run(readonly_server, 1, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* ------------------------------------- 6. memory another subsystem pinned */

#include <liburing.h>

/*
 * Buffers registered with io_uring as fixed buffers (pinned by the
 * kernel for it), then with rpma_mr_reg: io_uring, the application and
 * rpmad keep seeing the same bytes both ways.
 */
static void
uring_server(struct it_remote *r)
{
	const char *dir = writable_dir(r);
	const size_t len = 64 * 1024;
	struct io_uring ring;
	int ret = io_uring_queue_init(4, &ring, 0);
	if (ret == -ENOSYS || ret == -EPERM) {
		(void) fprintf(stderr, "it_memory: io_uring not available "
				"(%s): skipped\n", strerror(-ret));
		return;
	}
	IT_EQ(ret, 0);
	uint8_t *buf = it_alloc(len);
	struct iovec iov = { buf, len };
	IT_EQ(io_uring_register_buffers(&ring, &iov, 1), 0);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(r->peer, buf, len, RW, &mr));

	char path[300];
	(void) snprintf(path, sizeof(path), "%s/uring-file", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	IT_ASSERT(fd >= 0);
	uint8_t *pattern = malloc(len);
	IT_ASSERT(pattern != NULL);
	it_fill(pattern, len, 61);
	IT_EQ(pwrite(fd, pattern, len, 0), (ssize_t)len);

	/* the file into the fixed buffer: the application and C see it */
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read_fixed(sqe, fd, buf, len, 0, 0);
	struct io_uring_cqe *cqe;
	IT_EQ(io_uring_submit_and_wait(&ring, 1), 1);
	IT_EQ(io_uring_peek_cqe(&ring, &cqe), 0);
	IT_EQ(cqe->res, (int)len);
	io_uring_cqe_seen(&ring, cqe);
	if (pages_move(r->arg)) {
		/*
		 * What librpmaclient(7) says: moved pages are new pages, and
		 * io_uring keeps reading into and writing from the pinned
		 * old ones (no kernel interface tells a pinned page)
		 */
		IT_ASSERT_MSG(it_check(buf, len, 61) != -1, "io_uring's pinned "
				"pages are the moved pages after all: "
				"librpmaclient(7) must say so");
		goto out;
	}
	IT_EQ(it_check(buf, len, 61), -1);
	IT_EQ(it_remote_read(mr, 0, len, 61), -1);

	/* C's write out of the fixed buffer into the file */
	it_remote_write(mr, 0, len, 62);
	IT_EQ(it_check(buf, len, 62), -1);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write_fixed(sqe, fd, buf, len, 0, 0);
	IT_EQ(io_uring_submit_and_wait(&ring, 1), 1);
	IT_EQ(io_uring_peek_cqe(&ring, &cqe), 0);
	IT_EQ(cqe->res, (int)len);
	io_uring_cqe_seen(&ring, cqe);
	IT_EQ(pread(fd, pattern, len, 0), (ssize_t)len);
	IT_EQ(it_check(pattern, len, 62), -1);
out:
	IT_OK(rpma_mr_dereg(&mr));
	io_uring_queue_exit(&ring);
	(void) close(fd);
	free(pattern);
	free(buf);
}

START_TEST(test_pinned_by_io_uring)
{
	run(uring_server, _i & 1 ? 1 : 2, (_i & 2) ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* ------------------------------------------------------- 7. descriptors */

/*
 * Registrations hold no descriptor of the application's: 2,000 scattered
 * ones under a limit of 1,024 descriptors take two of the library's at
 * most (librpmaclient(7)), and the application's own open() still gets a
 * low number.
 */
#define SCATTERED 2000

static void
fds_server(struct it_remote *r)
{
	struct rlimit lim = { 1024, 1024 };
	IT_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
	size_t ps = it_page();
	/* a page each, a page apart: nothing to merge */
	uint8_t *area = mmap(NULL, 2 * SCATTERED * ps, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	IT_ASSERT(area != MAP_FAILED);
	int before = open_fds();
	/* fewer where pages move (their cost grows with the mappings) */
	int n = scaled(pages_move(r->arg) ? SCATTERED / 8 : SCATTERED);
	static struct rpma_mr_local *mr[SCATTERED];
	for (int i = 0; i < n; i++)
		IT_OK(rpma_mr_reg(r->peer, area + 2 * i * ps, ps, RW, &mr[i]));
	int during = open_fds();
	/*
	 * at most two of the library's own for all of them: its memfd of
	 * moved pages, or its landing area and that area's doorbell
	 */
	IT_ASSERT_MSG(during <= before + 2, "%d descriptors before, %d with "
			"%d registrations", before, during, n);
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	IT_ASSERT_MSG(fd >= 0 && fd < 64, "open() gave %d", fd);
	(void) close(fd);
	it_remote_write(mr[n - 1], 0, ps, 71);
	IT_EQ(it_check(area + 2 * (n - 1) * ps, ps, 71), -1);
	for (int i = 0; i < n; i++)
		IT_OK(rpma_mr_dereg(&mr[i]));
	IT_ASSERT(open_fds() <= before + 1);
	IT_EQ(munmap(area, 2 * SCATTERED * ps), 0);
}

START_TEST(test_descriptors)
{
	run(fds_server, 1, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* -------------------------------------------- 8. memory given back */

/*
 * Registration costs the buffer's size, no more, at its peak (nothing is
 * copied over the software transport; over verbs the pages move a few
 * MiB at a time); deregistration and munmap give all of it back, and no
 * shared memory stays behind, also when a page of the same pool stays
 * mapped.
 */
#define BIG (64u << 20)

static void
given_back_server(struct it_remote *r)
{
	long shmem0 = it_status_kb("RssShmem"), anon0 = it_status_kb("RssAnon");
	uint8_t *big = it_anon(BIG + it_page(), 0x66);
	long anon1 = it_status_kb("RssAnon");
	/*
	 * the peak from here on: reset it (Linux 4.0) where the process may
	 * (not dumpable: its clear_refs is root's); else the peak so far,
	 * which the memset just made
	 */
	int clear = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	if (clear >= 0) {
		IT_EQ(write(clear, "5", 1), 1);
		(void) close(clear);
	}
	long hwm0 = it_status_kb("VmHWM");

	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(r->peer, big + it_page(), BIG, RW, &mr));
	long hwm1 = it_status_kb("VmHWM");
	IT_ASSERT_MSG(hwm1 - hwm0 <= 8 * 1024, "registering %u MiB took %ld "
			"kB more at its peak", BIG >> 20, hwm1 - hwm0);
	it_remote_write(mr, BIG - 4096, 4096, 81);
	IT_EQ(it_check(big + it_page() + BIG - 4096, 4096, 81), -1);
	IT_OK(rpma_mr_dereg(&mr));
	/* the pool's header page stays mapped, the rest goes */
	IT_EQ(munmap(big + it_page(), BIG), 0);
	long shmem2 = it_status_kb("RssShmem"), anon2 = it_status_kb("RssAnon");
	IT_ASSERT_MSG(shmem2 - shmem0 < 2048, "RssShmem %ld kB -> %ld kB",
			shmem0, shmem2);
	IT_ASSERT_MSG(anon2 < anon1 - (long)(BIG >> 10) + 4096, "RssAnon "
			"%ld kB before, %ld kB with %u MiB, %ld kB after",
			anon0, anon1, BIG >> 20, anon2);
	IT_EQ(munmap(big, it_page()), 0);
}

START_TEST(test_memory_given_back)
{
	run(given_back_server, 1, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* ------------------------------------------- 9. the mapping's attributes */

/* What the kernel says about the mapping at p. */
struct attrs {
	char vmflags[256];
	char pkey[32];
	int policy;
	unsigned long nodes;
};

static void
attrs_of(const void *p, struct attrs *a)
{
	memset(a, 0, sizeof(*a));
	IT_EQ(it_smaps_field(p, "VmFlags:", a->vmflags, sizeof(a->vmflags)), 0);
	(void) it_smaps_field(p, "ProtectionKey:", a->pkey, sizeof(a->pkey));
	if (syscall(SYS_get_mempolicy, &a->policy, &a->nodes, 64, p,
			MPOL_F_ADDR))
		a->policy = -1;
}

/*
 * Whether the mapping at p has the attributes of `want`: all its VmFlags,
 * or (`flag`: over verbs registered pages are shared memory, whose
 * VmFlags differ by nature) the one mnemonic the attribute sets.
 */
static void
attrs_same(const void *p, const struct attrs *want, const char *what,
		const char *when, const char *flag)
{
	struct attrs now;
	attrs_of(p, &now);
	if (flag == NULL)
		IT_ASSERT_MSG(strcmp(now.vmflags, want->vmflags) == 0, "%s %s: "
				"VmFlags \"%s\", was \"%s\"", what, when,
				now.vmflags, want->vmflags);
	else if (*flag)
		IT_ASSERT_MSG(it_has_vmflag(p, flag),
				"%s %s: VmFlags \"%s\" "
				"without %s",
				what, when, now.vmflags, flag);
	IT_ASSERT_MSG(strcmp(now.pkey, want->pkey) == 0, "%s %s: protection "
			"key %s, was %s", what, when, now.pkey, want->pkey);
	IT_ASSERT_MSG(now.policy == want->policy && now.nodes == want->nodes,
			"%s %s: NUMA policy %d/%#lx, was %d/%#lx", what, when,
			now.policy, now.nodes, want->policy, want->nodes);
}

/* One mapping of its own per attribute, each 2 MiB-aligned. */
#define ATTR_LEN (2u << 20)

static uint8_t *
attr_area(void)
{
	uint8_t *p = mmap(NULL, 2 * ATTR_LEN, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	IT_ASSERT(p != MAP_FAILED);
	uintptr_t a = ((uintptr_t)p + ATTR_LEN - 1) & ~(uintptr_t)(ATTR_LEN - 1);
	if (a > (uintptr_t)p)
		IT_EQ(munmap(p, a - (uintptr_t)p), 0);
	uintptr_t end = (uintptr_t)p + 2 * ATTR_LEN;
	if (end > a + ATTR_LEN)
		IT_EQ(munmap((void *)(a + ATTR_LEN), end - (a + ATTR_LEN)), 0);
	return (uint8_t *)a;
}

static bool
thp_enabled(void)
{
	char line[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
	if (f == NULL)
		return false;
	bool on = fgets(line, sizeof(line), f) && !strstr(line, "[never]");
	(void) fclose(f);
	return on;
}

enum attr_kind { A_MLOCK, A_DONTDUMP, A_DONTFORK, A_WIPEONFORK, A_HUGE,
	A_PKEY, A_NUMA, A_KINDS };
static const char *const attr_names[A_KINDS] = { "mlock", "MADV_DONTDUMP",
	"MADV_DONTFORK", "MADV_WIPEONFORK", "MADV_HUGEPAGE", "protection key",
	"NUMA policy" };
/* what each sets in VmFlags ("": nothing a shared mapping can show) */
static const char *const attr_flags[A_KINDS] = { "lo", "dd", "dc", "", "hg",
	"", "" };

/* Sets attribute k on p; false when this machine cannot have it. */
static bool
attr_set(enum attr_kind k, uint8_t *p, int *pkey)
{
	switch (k) {
	case A_MLOCK:
		return mlock(p, ATTR_LEN) == 0;
	case A_DONTDUMP:
		return madvise(p, ATTR_LEN, MADV_DONTDUMP) == 0;
	case A_DONTFORK:
		return madvise(p, ATTR_LEN, MADV_DONTFORK) == 0;
	case A_WIPEONFORK:
		return madvise(p, ATTR_LEN, MADV_WIPEONFORK) == 0;
	case A_HUGE:
		return thp_enabled() &&
			madvise(p, ATTR_LEN, MADV_HUGEPAGE) == 0;
	case A_PKEY:
		*pkey = pkey_alloc(0, 0);
		return *pkey > 0 && pkey_mprotect(p, ATTR_LEN, PROT_READ |
				PROT_WRITE, *pkey) == 0;
	case A_NUMA: {
		unsigned long node0 = 1;
		return syscall(SYS_mbind, p, ATTR_LEN, MPOL_PREFERRED, &node0,
				64, 0) == 0;
	}
	default:
		return false;
	}
}

/* Whether the pages at p are backed by a transparent huge page. */
static bool
huge_backed(const void *p)
{
	return it_smaps_kb(p, "AnonHugePages:") > 0;
}

/*
 * In a child of fork(): a MADV_WIPEONFORK mapping reads zeros, a
 * MADV_DONTFORK one is not there, a protection key still denies access
 * when its rights say so. Returns 0 or a step that failed.
 */
static int
attr_child(enum attr_kind k, uint8_t *p, int pkey)
{
	switch (k) {
	case A_WIPEONFORK:
		for (size_t i = 0; i < ATTR_LEN; i++)
			if (p[i])
				return 1;
		return 0;
	case A_DONTFORK:
		return msync(p, it_page(), MS_ASYNC) == -1 && errno == ENOMEM ?
				0 :
				2;
	case A_PKEY: {
		if (pkey_set(pkey, PKEY_DISABLE_ACCESS))
			return 3;
		pid_t pid = fork();
		if (pid == 0) {
			(void) *(volatile uint8_t *)p;
			_exit(0);	/* the key let the read through */
		}
		int st;
		return waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
			WTERMSIG(st) == SIGSEGV ? 0 : 4;
	}
	default:
		return 0;
	}
}

static void
attrs_server(struct it_remote *r)
{
	for (int k = 0; k < A_KINDS; k++) {
		const char *what = attr_names[k];
		uint8_t *p = attr_area();
		memset(p, 0x77, ATTR_LEN);
		int pkey = 0;
		if (!attr_set((enum attr_kind)k, p, &pkey)) {
			(void) fprintf(stderr, "it_memory: %s: not on this "
					"machine, not checked\n", what);
			IT_EQ(munmap(p, ATTR_LEN), 0);
			continue;
		}
		memset(p, 0x77, ATTR_LEN);
		if (*attr_flags[k] && !it_has_vmflag(p, attr_flags[k])) {
			/* e.g. AddressSanitizer's mlock, which does nothing */
			(void) fprintf(stderr, "it_memory: %s: not in effect "
					"here, not checked\n", what);
			IT_EQ(munmap(p, ATTR_LEN), 0);
			continue;
		}
		struct attrs before;
		attrs_of(p, &before);
		long lck = it_status_kb("VmLck");
		bool huge = huge_backed(p);
		/* a registration in the middle of the mapping */
		struct rpma_mr_local *mr = NULL;
		IT_OK(rpma_mr_reg(r->peer, p + ATTR_LEN / 4 + 100, ATTR_LEN / 2,
				RW, &mr));
		attrs_same(p + ATTR_LEN / 2, &before, what, "registered",
				pages_move(r->arg) ? attr_flags[k] : NULL);
		IT_EQ(it_status_kb("VmLck"), lck);
		if (huge && !pages_move(r->arg))
			IT_ASSERT_MSG(huge_backed(p), "%s: the huge page is "
					"gone", what);
		it_remote_write(mr, 0, 4096, 91);
		IT_EQ(it_check(p + ATTR_LEN / 4 + 100, 4096, 91), -1);
		(void) fflush(NULL);
		pid_t pid = fork();
		IT_ASSERT(pid >= 0);
		if (pid == 0)
			_exit(attr_child((enum attr_kind)k, p, pkey));
		IT_ASSERT_MSG(it_child_status(pid) == 0,
				"%s: the child saw the "
				"parent's memory unlike the kernel's rule",
				what);
		IT_EQ(p[0], 0x77);
		IT_OK(rpma_mr_dereg(&mr));
		attrs_same(p, &before, what, "deregistered", NULL);
		attrs_same(p + ATTR_LEN / 2, &before, what, "deregistered",
				NULL);
		IT_EQ(it_status_kb("VmLck"), lck);
		IT_EQ(munmap(p, ATTR_LEN), 0);
		if (pkey > 0)
			(void) pkey_free(pkey);
	}
}

START_TEST(test_mapping_attributes)
{
	run(attrs_server, 1, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* ------------------------------- 10. memory native librpma takes as it is */

/* The kinds of shared memory an application may already have. */
enum shared_kind { SH_ANON, SH_MEMFD, SH_SYSV, SH_UNLINKED_OPEN,
	SH_UNLINKED_CLOSED, SH_KINDS };
static const char *const shared_names[SH_KINDS] = {
	"MAP_SHARED|MAP_ANONYMOUS", "a memfd of the application's",
	"SysV shm", "an unlinked file (still open)",
	"an unlinked file (closed)" };

#define SH_LEN (16 * 4096)

static uint8_t *
shared_map(enum shared_kind k, const char *dir, int *shmid)
{
	void *p = MAP_FAILED;
	int fd = -1;
	char path[400];
	switch (k) {
	case SH_ANON:
		p = mmap(NULL, SH_LEN, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		break;
	case SH_MEMFD:
		fd = memfd_create("application", MFD_CLOEXEC);
		IT_ASSERT(fd >= 0 && ftruncate(fd, SH_LEN) == 0);
		p = mmap(NULL, SH_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				0);
		/* the application keeps its memfd open */
		return p == MAP_FAILED ? NULL : p;
	case SH_SYSV:
		*shmid = shmget(IPC_PRIVATE, SH_LEN, IPC_CREAT | 0600);
		IT_ASSERT(*shmid >= 0);
		p = shmat(*shmid, NULL, 0);
		IT_ASSERT(p != (void *)-1);
		return p;
	default:
		(void) snprintf(path, sizeof(path), "%s/unlinked-%d", dir,
				(int)k);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		IT_ASSERT(fd >= 0 && ftruncate(fd, SH_LEN) == 0);
		IT_EQ(unlink(path), 0);
		p = mmap(NULL, SH_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				0);
		if (k == SH_UNLINKED_OPEN)
			return p == MAP_FAILED ? NULL : p;
		break;
	}
	if (fd >= 0)
		(void) close(fd);
	IT_ASSERT(p != MAP_FAILED);
	return p;
}

/* Whether this setting cannot give rpmad an RDMA device's view of it. */
static bool
shared_refused_here(enum shared_kind k, const void *arg)
{
	/*
	 * For an RDMA device rpmad needs a descriptor of the file behind
	 * the mapping: an unprivileged process has one only of files it has
	 * open or can open by name (librpmaclient(7))
	 */
	return pages_move(arg) && geteuid() != 0 &&
		(k == SH_ANON || k == SH_SYSV || k == SH_UNLINKED_CLOSED);
}

/*
 * A child of fork() shares the registered pages, as it would natively (a
 * NIC reads and writes the same pages): C reads the 4 KiB the child
 * stored at offset 8192 of the registration at p, and the child sees the
 * 4 KiB C writes at 12288 after it.
 */
static void
shared_with_child(struct rpma_mr_local *mr, uint8_t *p, uint32_t seed)
{
	int go[2], done[2];
	IT_EQ(pipe(go), 0);
	IT_EQ(pipe(done), 0);
	pid_t pid = fork();
	IT_ASSERT(pid >= 0);
	char c = 0;
	if (pid == 0) {
		/* a parent that failed closes go: the read ends, not hangs */
		(void) close(go[1]);
		(void) close(done[0]);
		it_fill(p + 8192, 4096, seed);
		if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(it_check(p + 12288, 4096, seed + 1) == -1 ? 0 : 1);
	}
	(void) close(go[0]);
	(void) close(done[1]);
	IT_EQ(read(done[0], &c, 1), 1);
	IT_EQ(it_remote_read(mr, 8192, 4096, seed), -1);
	it_remote_write(mr, 12288, 4096, seed + 1);
	IT_EQ(write(go[1], &c, 1), 1);
	int status = 0;
	IT_EQ(waitpid(pid, &status, 0), pid);
	IT_ASSERT_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			"the child saw no write of C's: status %d", status);
	(void) close(go[1]);
	(void) close(done[0]);
}

static void
shared_kinds(struct it_remote *r, const char *dir, const void *arg)
{
	for (int k = 0; k < SH_KINDS; k++) {
		int shmid = -1;
		uint8_t *p = shared_map((enum shared_kind)k, dir, &shmid);
		IT_ASSERT(p != NULL);
		memset(p, 0x12, SH_LEN);
		struct rpma_mr_local *mr = NULL;
		int ret = rpma_mr_reg(r->peer, p + 100, SH_LEN - 200, RW, &mr);
		if (shared_refused_here((enum shared_kind)k, arg)) {
			IT_ASSERT_MSG(ret == RPMA_E_PROVIDER, "%s: %d",
					shared_names[k], ret);
		} else {
			IT_ASSERT_MSG(ret == 0, "%s: %s", shared_names[k],
					rpma_err_2str(ret));
			/* C's writes reach the application, and back */
			it_remote_write(mr, 0, SH_LEN - 200, 100 + (uint32_t)k);
			IT_EQ(it_check(p + 100, SH_LEN - 200, 100 + (uint32_t)k),
					-1);
			it_fill(p + 100, 4096, 200 + (uint32_t)k);
			IT_EQ(it_remote_read(mr, 0, 4096, 200 + (uint32_t)k), -1);
			shared_with_child(mr, p + 100, 300 + (uint32_t) k);
			IT_OK(rpma_mr_dereg(&mr));
			IT_EQ(it_check(p + 100, 4096, 200 + (uint32_t)k), -1);
		}
		if (k == SH_SYSV) {
			IT_EQ(shmdt(p), 0);
			IT_EQ(shmctl(shmid, IPC_RMID, NULL), 0);
		} else {
			IT_EQ(munmap(p, SH_LEN), 0);
		}
	}
}

/*
 * A MAP_PRIVATE file mapping shows later changes of the file in the pages
 * the application did not write, and so does a remote read of it (over
 * the software transport; over verbs the pages are a copy, see
 * librpmaclient(7)).
 */
static void
private_file_changes(struct it_remote *r, const char *dir, const void *arg)
{
	char path[400];
	(void) snprintf(path, sizeof(path), "%s/private-file", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	IT_ASSERT(fd >= 0 && ftruncate(fd, SH_LEN) == 0);
	uint8_t *p = mmap(NULL, SH_LEN, PROT_READ, MAP_PRIVATE, fd, 0);
	IT_ASSERT(p != MAP_FAILED);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(r->peer, p, SH_LEN, RPMA_MR_USAGE_READ_SRC, &mr));
	uint8_t *data = malloc(SH_LEN);
	IT_ASSERT(data != NULL);
	it_fill(data, SH_LEN, 111);
	IT_EQ(pwrite(fd, data, SH_LEN, 0), SH_LEN);
	if (pages_move(arg)) {
		/*
		 * moved pages are a copy: the file's later changes do not
		 * show (librpmaclient(7); in-process librpma before Linux 6.2
		 * broke copy-on-write the same way)
		 */
		IT_ASSERT(it_check(p, SH_LEN, 111) != -1);
	} else {
		IT_EQ(it_check(p, SH_LEN, 111), -1);
		IT_EQ(it_remote_read(mr, 0, SH_LEN, 111), -1);
	}
	IT_OK(rpma_mr_dereg(&mr));
	IT_EQ(munmap(p, SH_LEN), 0);
	free(data);
	(void) close(fd);
	(void) unlink(path);
}

static void
native_kinds_server(struct it_remote *r)
{
	const char *dir = writable_dir(r);
	shared_kinds(r, dir, r->arg);
	private_file_changes(r, dir, r->arg);
}

/* _i: bit 0 one rpmad (else two), bit 1 as an unprivileged user */
START_TEST(test_memory_native_takes)
{
	run(native_kinds_server, _i & 1 ? 1 : 2, (_i & 2) ? WHO_USER :
			WHO_ROOT);
}
END_TEST

/* A process rpmad cannot reach (not dumpable), root and unprivileged. */
START_TEST(test_memory_native_takes_sealed)
{
	run(native_kinds_server, 1, WHO_SEALED);
}
END_TEST

/* _i of the tests without a loop of their own: 0 root, 1 WHO_SEALED */
int
main(void)
{
	const struct th_test tc_memory[] = { TH_LOOP(test_fork, 0, 4),
		TH_LOOP(test_fork_heap, 0, 2),
		TH_LOOP(test_other_threads_stores, 0, 2),
		TH_LOOP(test_freed_memory, 0, 2),
		TH_TEST(test_freed_memory_jemalloc),
		TH_LOOP(test_growing_memory, 0, 2),
		TH_LOOP(test_readonly_memory, 0, 2),
		TH_LOOP(test_pinned_by_io_uring, 0, 4),
		TH_LOOP(test_descriptors, 0, 2),
		TH_LOOP(test_memory_given_back, 0, 2),
		TH_LOOP(test_mapping_attributes, 0, 2),
		TH_LOOP(test_memory_native_takes, 0, 4),
		TH_TEST(test_memory_native_takes_sealed), TH_END };
	const struct th_tcase tcases[] = {
		{ "memory", .steps = tc_memory, .create = it_tcase_create },
	};
	return check_run(th_suite("integration: the application's memory",
					 tcases, TH_N(tcases)),
			CK_ENV);
}
