// SPDX-License-Identifier: BSD-3-Clause
/*
 * it_moved.c -- the moved-pages path as an application sees it: what
 * issue 32 found (items 3 to 10) replayed on real rpmads, each with the
 * check that native librpma on a NIC passes
 *
 * Registered private pages move into the library's memfd (vamem.h) for
 * an RDMA device, and for a process whose /proc/self/mem the library
 * cannot have: over the software transport, a process that is not
 * dumpable and not privileged (WHO_SEALED). Over verbs (the VM suite)
 * every process takes that path, root (WHO_ROOT) too; on the software
 * transport WHO_ROOT is the address-space path, where the same checks
 * must pass as well.
 */

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "th_suite.h"

static const int RW = IT_REMOTE_USAGE;

/*
 * Who the application is: root; unprivileged and not dumpable (rpmad
 * cannot have its address space: its pages move); the same with access
 * to /dev/userfaultfd (as an administrator may grant it: the library's
 * write protection then holds the kernel's accesses too).
 */
enum who { WHO_ROOT, WHO_SEALED, WHO_SEALED_UFFD };

static const char *const who_names[] = { "root", "not dumpable",
	"not dumpable, with /dev/userfaultfd" };

/* Whether registered private pages move into the library's memfd. */
static bool
pages_move(enum who who)
{
	return it_transport_is("verbs") || who != WHO_ROOT;
}

/* A sixteenth over verbs (emulated, many times slower). */
static int
scaled(int n)
{
	return it_transport_is("verbs") ? (n + 15) / 16 : n;
}

/*
 * /dev/userfaultfd for nobody, in a mount namespace of this process's
 * own: a node of the same device, owned by nobody, bound over it.
 * False where the kernel has no such device (before Linux 6.1).
 */
static bool
grant_userfaultfd(const struct it_env *env)
{
	struct stat st;
	if (stat("/dev/userfaultfd", &st) || !S_ISCHR(st.st_mode))
		return false;
	IT_EQ(unshare(CLONE_NEWNS), 0);
	IT_EQ(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	char dir[300], node[320];
	(void) snprintf(dir, sizeof(dir), "%s/uffd-dev", env->dir);
	IT_EQ(mkdir(dir, 0755), 0);
	/* a tmpfs of its own: the scratch directory may be nodev */
	IT_EQ(mount("tmpfs", dir, "tmpfs", 0, "mode=0755"), 0);
	(void) snprintf(node, sizeof(node), "%s/userfaultfd", dir);
	IT_EQ(mknod(node, S_IFCHR | 0600, st.st_rdev), 0);
	IT_EQ(chown(node, TH_NOBODY, TH_NOBODY), 0);
	IT_EQ(mount(node, "/dev/userfaultfd", NULL, MS_BIND, NULL), 0);
	return true;
}

/* Becomes `who`; false when this machine cannot make it. */
static bool
become(const struct it_env *env, enum who who)
{
	if (who == WHO_ROOT)
		return true;
	if (who == WHO_SEALED_UFFD && !grant_userfaultfd(env))
		return false;
	it_become_nobody(false);
	return true;
}

struct moved_case {
	enum who who;
};

/*
 * Becomes the case's application (a struct moved_case); false, after
 * saying so, when it cannot be had here
 */
static bool
start(const struct it_env *env, void *arg)
{
	const struct moved_case *mc = arg;
	if (become(env, mc->who))
		return true;
	(void) fprintf(stderr,
			"it_moved: %s: not on this kernel, not "
			"checked\n",
			who_names[mc->who]);
	return false;
}

/*
 * Runs `server` as `who` against it_remote_helper on one rpmad, after
 * `before` (the server role's start)
 */
static void
run_after(it_remote_before *before, it_remote_fn *server, enum who who)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start_nobody(&env, 1), 0);
	struct moved_case mc = { who };
	struct it_remote_case c = { before, server, &mc };
	ck_assert_msg(it_remote_run(&env, &c) == 0, "%s: %s", who_names[who],
			it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}

static void
run(it_remote_fn *server, enum who who)
{
	run_after(start, server, who);
}

/* ------------------------------------------------- what the kernel says */

/* The mappings of /proc/self/maps that overlap [p, p + len). */
static int
mappings_over(const void *p, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "re");
	IT_ASSERT(f != NULL);
	char line[1024];
	int n = 0;
	uintptr_t lo = (uintptr_t)p, hi = lo + len;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < hi && e > lo)
			n++;
	}
	(void) fclose(f);
	return n;
}

/* Whether the mapping at p is the library's memfd (moved pages). */
static bool
moved_here(const void *p)
{
	FILE *f = fopen("/proc/self/maps", "re");
	IT_ASSERT(f != NULL);
	char line[1024];
	bool moved = false;
	uintptr_t a = (uintptr_t)p;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s <= a && a < e)
			moved = strstr(line, "/memfd:rpmaclient") != NULL;
	}
	(void) fclose(f);
	return moved;
}

/* How many of this process's descriptors are the library's memfd. */
static int
memfds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	IT_ASSERT(d != NULL);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char path[300], target[300];
		(void) snprintf(path, sizeof(path), "/proc/self/fd/%s",
				de->d_name);
		ssize_t len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += strstr(target, "memfd:rpmaclient") != NULL;
	}
	(void) closedir(d);
	return n;
}

/* ------------------------------ 3. a signal handler stores into the range */

/*
 * A timer's handler keeps incrementing counters in the pages being
 * registered and deregistered: rpma_mr_reg and rpma_mr_dereg return
 * (before, the handler ran on the registering thread while its pages
 * were write-protected, and waited for that very thread for good), and
 * no increment is lost.
 */
#define SIG_LEN (8u << 20)

static uint8_t *sig_area;
static volatile sig_atomic_t sig_runs;

static void
on_alarm(int sig)
{
	(void) sig;
	size_t slot = (size_t)sig_runs % (SIG_LEN / 4096);
	(*(volatile uint64_t *)(sig_area + slot * 4096))++;
	sig_runs++;
}

static void
signal_server(struct it_remote *r)
{
	sig_area = it_anon(SIG_LEN, 0);
	struct sigaction sa = { .sa_handler = on_alarm,
		.sa_flags = SA_RESTART };
	IT_EQ(sigemptyset(&sa.sa_mask), 0);
	IT_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	struct itimerval every = { { 0, 200 }, { 0, 200 } }, off = { 0 };
	IT_EQ(setitimer(ITIMER_REAL, &every, NULL), 0);
	struct rpma_mr_local *mr = NULL;
	for (int round = 0; round < scaled(16); round++) {
		IT_OK(rpma_mr_reg(r->peer, sig_area, SIG_LEN, RW, &mr));
		IT_OK(rpma_mr_dereg(&mr));
	}
	IT_OK(rpma_mr_reg(r->peer, sig_area, SIG_LEN, RW, &mr));
	IT_EQ(setitimer(ITIMER_REAL, &off, NULL), 0);
	uint64_t sum = 0;
	for (size_t i = 0; i < SIG_LEN; i += 4096)
		sum += *(uint64_t *)(sig_area + i);
	IT_ASSERT_MSG(sum == (uint64_t)sig_runs, "%ld of %ld increments of "
			"the signal handler lost", (long)sig_runs - (long)sum,
			(long)sig_runs);
	IT_ASSERT(sig_runs > 0);
	/* and the registration reaches what the application sees */
	it_remote_write(mr, SIG_LEN - 4096, 4096, 3);
	IT_EQ(it_check(sig_area + SIG_LEN - 4096, 4096, 3), -1);
	IT_OK(rpma_mr_dereg(&mr));
	IT_EQ(munmap(sig_area, SIG_LEN), 0);
}

START_TEST(test_signal_handler_stores)
{
	run(signal_server, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* -------------------- 4. another thread's recv() into the range meanwhile */

/*
 * One thread receives datagrams into the pages being registered and
 * deregistered (the kernel writes them), another sends them: none of
 * the receives fails (before, each one during a move failed with
 * EFAULT: the library's userfaultfd caught faults in user mode only,
 * as root too).
 */
#define RX_LEN (4u << 20)
#define DGRAM 512

struct rx {
	int sock[2];
	uint8_t *area;
	atomic_bool stop;
	atomic_long faults, received;
};

static void *
receiver(void *arg)
{
	struct rx *x = arg;
	unsigned seed = 1;
	while (!atomic_load(&x->stop)) {
		seed = seed * 1103515245u + 12345u;
		size_t off = (seed >> 4) % (RX_LEN - DGRAM);
		ssize_t n = recv(x->sock[0], x->area + off, DGRAM, 0);
		if (n < 0 && errno == EFAULT)
			x->faults++;
		else if (n > 0)
			x->received++;
	}
	return NULL;
}

static void *
sender(void *arg)
{
	struct rx *x = arg;
	uint8_t data[DGRAM];
	memset(data, 0x6b, sizeof(data));
	while (!atomic_load(&x->stop))
		(void) send(x->sock[1], data, sizeof(data), 0);
	return NULL;
}

static void
recv_server(struct it_remote *r)
{
	static struct rx x;
	IT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, x.sock), 0);
	/* neither waits for long once told to stop */
	struct timeval tv = { 0, 100 * 1000 };
	for (int i = 0; i < 2; i++) {
		IT_EQ(setsockopt(x.sock[i], SOL_SOCKET, SO_RCVTIMEO, &tv,
				sizeof(tv)), 0);
		IT_EQ(setsockopt(x.sock[i], SOL_SOCKET, SO_SNDTIMEO, &tv,
				sizeof(tv)), 0);
	}
	x.area = it_anon(RX_LEN, 0x11);
	pthread_t t[2];
	IT_EQ(pthread_create(&t[0], NULL, receiver, &x), 0);
	IT_EQ(pthread_create(&t[1], NULL, sender, &x), 0);
	struct rpma_mr_local *mr = NULL;
	/* and until the receiver had its share of them, on a busy machine */
	uint64_t end = it_now_ms() + IT_WAIT_MS;
	for (int round = 0; round < scaled(48) || (atomic_load(&x.received) <
			1000 && it_now_ms() < end); round++) {
		IT_OK(rpma_mr_reg(r->peer, x.area, RX_LEN, RW, &mr));
		IT_OK(rpma_mr_dereg(&mr));
	}
	atomic_store(&x.stop, true);
	IT_EQ(pthread_join(t[0], NULL), 0);
	IT_EQ(pthread_join(t[1], NULL), 0);
	IT_ASSERT_MSG(x.faults == 0, "%ld of %ld receives into the pages "
			"failed with EFAULT", (long)x.faults,
			(long)(x.faults + x.received));
	IT_ASSERT(x.received > 0);
	IT_OK(rpma_mr_reg(r->peer, x.area, RX_LEN, RW, &mr));
	it_remote_write(mr, 0, 4096, 4);
	IT_EQ(it_check(x.area, 4096, 4), -1);
	IT_OK(rpma_mr_dereg(&mr));
	IT_EQ(munmap(x.area, RX_LEN), 0);
	(void) close(x.sock[0]);
	(void) close(x.sock[1]);
}

/*
 * Root, and an unprivileged process that may open /dev/userfaultfd. One
 * that may not is left with the window librpmaclient(7) describes.
 */
START_TEST(test_recv_during_registration)
{
	run(recv_server, _i ? WHO_SEALED_UFFD : WHO_ROOT);
}
END_TEST

/* --------------- 5. attributes the application changes while registered */

/*
 * mprotect, mlock and MADV_DONTDUMP applied to registered memory stay
 * after rpma_mr_dereg (before, the attributes of the time of
 * registration came back: the buffer was writable, unlocked and dumpable
 * again); so do MADV_DODUMP, munlock and MADV_DONTFORK.
 */
static void
attrs_later_server(struct it_remote *r)
{
	const size_t len = 64 * it_page();
	uint8_t *p = it_anon(len, 0x21);
	uint8_t *mid = p + 16 * it_page();
	const size_t mlen = 32 * it_page();
	long lck = it_status_kb("VmLck");
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(r->peer, mid, mlen, RW, &mr));
	IT_EQ(mlock(mid, mlen), 0);
	/* AddressSanitizer's mlock does nothing */
	bool locks = it_has_vmflag(mid, "lo");
	IT_EQ(madvise(mid, mlen, MADV_DONTDUMP), 0);
	IT_EQ(mprotect(mid, mlen, PROT_READ), 0);
	/* a remote write still lands: the NIC's pages stay writable */
	it_remote_write(mr, 0, 4096, 5);
	IT_EQ(it_check(mid, 4096, 5), -1);
	IT_OK(rpma_mr_dereg(&mr));
	char flags[256];
	IT_EQ(it_smaps_field(mid, "VmFlags:", flags, sizeof(flags)), 0);
	IT_ASSERT_MSG(it_has_vmflag(mid, "rd") && !it_has_vmflag(mid, "wr"),
			"mprotect(PROT_READ) undone: VmFlags %s", flags);
	IT_ASSERT_MSG(it_has_vmflag(mid, "lo") || !locks,
			"mlock undone: "
			"VmFlags %s",
			flags);
	IT_ASSERT_MSG(it_has_vmflag(mid, "dd"),
			"MADV_DONTDUMP undone: VmFlags "
			"%s",
			flags);
	IT_EQ(it_status_kb("VmLck"), lck + (locks ? (long) (mlen >> 10) : 0));
	IT_EQ(it_check(mid, 4096, 5), -1);
	IT_EQ(mid[mlen - 1], 0x21);

	/* and the other way: taken back while registered */
	IT_OK(rpma_mr_reg(r->peer, mid, mlen, RPMA_MR_USAGE_READ_SRC, &mr));
	IT_EQ(munlock(mid, mlen), 0);
	IT_EQ(madvise(mid, mlen, MADV_DODUMP), 0);
	IT_EQ(mprotect(mid, mlen, PROT_READ | PROT_WRITE), 0);
	IT_EQ(madvise(mid, mlen, MADV_DONTFORK), 0);
	IT_OK(rpma_mr_dereg(&mr));
	IT_EQ(it_smaps_field(mid, "VmFlags:", flags, sizeof(flags)), 0);
	IT_ASSERT_MSG(it_has_vmflag(mid, "wr") && !it_has_vmflag(mid, "lo") &&
					!it_has_vmflag(mid, "dd") &&
					it_has_vmflag(mid, "dc"),
			"VmFlags %s", flags);
	IT_EQ(it_status_kb("VmLck"), lck);
	mid[0] = 1;	/* writable */
	IT_EQ(munmap(p, len), 0);
}

START_TEST(test_attributes_set_while_registered)
{
	run(attrs_later_server, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* ------------------------------------------------ 6. fork and its advice */

/*
 * Memory the application marked MADV_DONTFORK (as programs that called
 * ibv_fork_init do) and then MADV_DOFORK while registered: a child's
 * stores stay in the child (before, they reached the parent). One marked
 * MADV_DONTFORK while registered is not in the child. MADV_WIPEONFORK
 * given before registering holds (the child reads zeros); given to
 * moved pages it fails with EINVAL, as on any shared memory
 * (librpmaclient(7)), and the child then reads the data.
 */
static void
fork_advice_server(struct it_remote *r)
{
	const struct moved_case *mc = r->arg;
	const size_t len = 16 * it_page();
	uint8_t *a = it_anon(len, 0x31), *b = it_anon(len, 0x32);
	uint8_t *w = it_anon(len, 0x33), *v = it_anon(len, 0x34);
	IT_EQ(madvise(a, len, MADV_DONTFORK), 0);
	IT_EQ(madvise(w, len, MADV_WIPEONFORK), 0);
	struct rpma_mr_local *mra = NULL, *mrb = NULL, *mrw = NULL, *mrv = NULL;
	IT_OK(rpma_mr_reg(r->peer, a, len, RW, &mra));
	IT_OK(rpma_mr_reg(r->peer, b, len, RW, &mrb));
	IT_OK(rpma_mr_reg(r->peer, w, len, RW, &mrw));
	IT_OK(rpma_mr_reg(r->peer, v, len, RW, &mrv));
	IT_EQ(madvise(a, len, MADV_DOFORK), 0);
	IT_EQ(madvise(b, len, MADV_DONTFORK), 0);
	int wiped = madvise(v, len, MADV_WIPEONFORK);
	if (pages_move(mc->who))
		IT_ASSERT_MSG(wiped == -1 && errno == EINVAL, "MADV_WIPEONFORK "
				"of moved pages: %d", wiped);
	else
		IT_EQ(wiped, 0);
	(void) fflush(NULL);
	pid_t pid = fork();
	IT_ASSERT(pid >= 0);
	if (pid == 0) {
		for (size_t i = 0; i < len; i++)
			if (a[i] != 0x31 || w[i] != 0 ||
					v[i] != (wiped ? 0x34 : 0))
				_exit(1);
		memset(a, 0xc1, len);
		memset(w, 0xc3, len);
		memset(v, 0xc4, len);
		/* b is not there */
		_exit(msync(b, it_page(), MS_ASYNC) == -1 && errno == ENOMEM ?
						0 :
						2);
	}
	IT_EQ(it_child_status(pid), 0);
	for (size_t i = 0; i < len; i++)
		IT_ASSERT_MSG(a[i] == 0x31 && b[i] == 0x32 && w[i] == 0x33 &&
				v[i] == 0x34, "byte %zu: the child's store "
				"reached the parent", i);
	IT_OKS(rpma_mr_dereg(&mra), rpma_mr_dereg(&mrb), rpma_mr_dereg(&mrw),
			rpma_mr_dereg(&mrv));
	IT_ASSERT(!it_has_vmflag(a, "dc") && it_has_vmflag(b, "dc"));
	IT_ASSERT(it_has_vmflag(w, "wf"));
	uint8_t *maps[] = { a, b, w, v };
	for (int i = 0; i < 4; i++)
		IT_EQ(munmap(maps[i], len), 0);
}

START_TEST(test_fork_advice)
{
	run(fork_advice_server, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* ---------------------------------------- 7. fork under a debugger */

/*
 * A tracer that stops every child of the application at its birth and
 * keeps it stopped, as gdb does with detach-on-fork off: fork() returns
 * in the parent all the same (before, the parent waited for the child to
 * copy the moved pages, for good); released, the child has the pages as
 * they were at the fork and its stores stay its own.
 */
static void
tracer(pid_t app, int ready, int release)
{
	if (ptrace(PTRACE_SEIZE, app, 0, PTRACE_O_TRACEFORK))
		_exit(1);
	if (write(ready, "", 1) != 1)
		_exit(2);
	pid_t child = 0;
	bool go = false;	/* released: once nothing is pending */
	for (;;) {
		char c;
		if (!go)
			go = read(release, &c, 1) == 1;
		int st;
		pid_t pid = waitpid(-1, &st, __WALL | WNOHANG);
		if (pid <= 0 && go) {
			if (child > 0)
				(void) ptrace(PTRACE_DETACH, child, 0, 0);
			_exit(0);	/* the application is let go too */
		}
		if (pid <= 0) {
			(void) usleep(1000);
			continue;
		}
		if (pid != app) {
			child = pid;	/* stopped at its birth: stays so */
			continue;
		}
		if (!WIFSTOPPED(st))
			_exit(0);
		int event = st >> 16, sig = WSTOPSIG(st);
		/* the application's own signals go on to it */
		(void) ptrace(PTRACE_CONT, app, 0, event ? 0 : sig);
	}
}

/* the tracer of the server role, and where it is told to let go */
static pid_t tracer_pid;
static int tracer_release;

/* the tracer first: it stays root, as a debugger may trace anyone */
static bool
traced_start(const struct it_env *env, void *arg)
{
	int ready[2], release[2];
	IT_EQ(pipe2(ready, O_CLOEXEC), 0);
	IT_EQ(pipe2(release, O_CLOEXEC | O_NONBLOCK), 0);
	pid_t app = getpid();
	tracer_pid = fork();
	IT_ASSERT(tracer_pid >= 0);
	if (tracer_pid == 0)
		tracer(app, ready[1], release[0]);
	char c;
	IT_EQ(read(ready[0], &c, 1), 1);
	tracer_release = release[1];
	IT_ASSERT(start(env, arg));
	return true;
}

static void
traced_fork_server(struct it_remote *r)
{
	const struct moved_case *mc = r->arg;
	const size_t len = 256 * it_page();
	uint8_t *p = it_anon(len, 0x5a);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(r->peer, p, len, RW, &mr));
	IT_EQ(moved_here(p), pages_move(mc->who));
	(void) fflush(NULL);
	pid_t pid = fork();
	IT_ASSERT(pid >= 0);
	if (pid == 0) {
		for (size_t i = 0; i < len; i++)
			if (p[i] != 0x5a)
				_exit(1);
		memset(p, 0xc5, len);
		_exit(0);
	}
	/* here while the child is held: store, then let it go */
	memset(p, 0x99, len);
	IT_EQ(write(tracer_release, "", 1), 1);
	IT_EQ(it_child_status(pid), 0);
	IT_EQ(it_child_status(tracer_pid), 0);
	for (size_t i = 0; i < len; i++)
		IT_ASSERT_MSG(p[i] == 0x99, "byte %zu: %#x", i, p[i]);
	it_remote_write(mr, 0, 4096, 7);
	IT_EQ(it_check(p, 4096, 7), -1);
	IT_OK(rpma_mr_dereg(&mr));
	IT_EQ(munmap(p, len), 0);
}

START_TEST(test_fork_under_debugger)
{
	run_after(traced_start, traced_fork_server, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* ------------------------------------------- 8. a pool partly registered */

/*
 * A pool of which a part was registered is one mapping again after
 * deregistration, and grows with mremap (before, it stayed split in
 * three and mremap failed with EFAULT); so does the heap part of a
 * large malloc'ed block, registered in pieces.
 */
static void
pool_server(struct it_remote *r)
{
	const size_t ps = it_page(), len = 1024 * ps;
	uint8_t *pool = it_anon(len, 0x41);
	IT_EQ(mappings_over(pool, len), 1);
	struct rpma_mr_local *mr[3] = { NULL };
	IT_OK(rpma_mr_reg(r->peer, pool + 100 * ps + 10, 600 * ps, RW, &mr[0]));
	IT_OK(rpma_mr_reg(r->peer, pool + 300 * ps, 8, RW, &mr[1]));
	IT_OK(rpma_mr_reg(r->peer, pool + 900 * ps, 100 * ps, RW, &mr[2]));
	it_remote_write(mr[0], 0, 4096, 8);
	IT_OKS(rpma_mr_dereg(&mr[1]), rpma_mr_dereg(&mr[0]),
			rpma_mr_dereg(&mr[2]));
	IT_ASSERT_MSG(mappings_over(pool, len) == 1, "the pool is %d "
			"mappings after deregistration",
			mappings_over(pool, len));
	uint8_t *grown = mremap(pool, len, 4 * len, MREMAP_MAYMOVE);
	IT_ASSERT_MSG(grown != MAP_FAILED, "mremap of the pool: %s",
			strerror(errno));
	IT_EQ(it_check(grown + 100 * ps + 10, 4096, 8), -1);
	IT_EQ(grown[0], 0x41);
	IT_EQ(grown[len - 1], 0x41);
	memset(grown + len, 0x42, 3 * len);
	IT_EQ(munmap(grown, 4 * len), 0);
}

START_TEST(test_pool_merges_again)
{
	run(pool_server, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* ------------------------------------------------ huge pages (hugetlb) */

/*
 * Private MAP_HUGETLB memory cannot move into the memfd and stay huge:
 * where pages move, rpma_mr_reg refuses it (before, aligned ranges became
 * small pages for good and unaligned ones failed with EINVAL), and the
 * pages stay huge and the application's. Shared huge pages (a memfd made
 * with MFD_HUGETLB) register and stay huge. Where the machine has no
 * free huge page, not checked.
 */
static bool
huge_backed(const void *p)
{
	return it_smaps_kb(p, "KernelPageSize:") > 4;
}

static void
hugetlb_server(struct it_remote *r)
{
	const size_t len = 4u << 20;
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
			MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED) {
		(void) fprintf(stderr, "it_moved: no free huge pages here, "
				"not checked\n");
		return;
	}
	memset(p, 0x81, len);
	struct rpma_mr_local *mr = NULL;
	IT_ERR(RPMA_E_PROVIDER, rpma_mr_reg(r->peer, p, len, RW, &mr));
	IT_ERR(RPMA_E_PROVIDER, rpma_mr_reg(r->peer, p + 100, 4096, RW, &mr));
	IT_ASSERT(huge_backed(p) && !moved_here(p));
	IT_EQ(p[len - 1], 0x81);
	IT_EQ(munmap(p, len), 0);

	int fd = memfd_create("huge", MFD_HUGETLB | MFD_CLOEXEC);
	IT_ASSERT(fd >= 0);
	IT_EQ(ftruncate(fd, (off_t)len), 0);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		(void) fprintf(stderr, "it_moved: no free huge pages here, "
				"not checked\n");
		(void) close(fd);
		return;
	}
	memset(p, 0x82, len);
	IT_OK(rpma_mr_reg(r->peer, p + 100, len - 200, RW, &mr));
	IT_ASSERT(huge_backed(p));
	it_remote_write(mr, 0, len - 200, 10);
	IT_EQ(it_check(p + 100, len - 200, 10), -1);
	IT_OK(rpma_mr_dereg(&mr));
	IT_ASSERT(huge_backed(p));
	IT_EQ(munmap(p, len), 0);
	(void) close(fd);
}

/* where pages move: not dumpable (and over verbs, root) */
START_TEST(test_private_hugetlb)
{
	run(hugetlb_server, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* ------------------------------------------------ 9. MADV_DONTNEED */

/*
 * What librpmaclient(7) says remains: moved pages are shared memory,
 * whose pages rpmad and the application cannot see differently, so
 * MADV_DONTNEED on them keeps their contents (natively the application
 * reads zeros while the NIC keeps the old pages); MADV_FREE fails with
 * EINVAL, and MADV_REMOVE punches a hole rpmad sees too (natively
 * EINVAL). After deregistration they mean what they meant.
 */
static void
dontneed_server(struct it_remote *r)
{
	const struct moved_case *mc = r->arg;
	const size_t len = 32 * it_page();
	uint8_t *p = it_anon(len, 0x51);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(r->peer, p, len, RW, &mr));
	IT_EQ(madvise(p, len, MADV_DONTNEED), 0);
	IT_EQ(p[0], pages_move(mc->who) ? 0x51 : 0);
	int freed = madvise(p, len, MADV_FREE);
	IT_ASSERT(pages_move(mc->who) ? freed == -1 && errno == EINVAL :
			freed == 0);
	/* a hole in shared memory, for rpmad too; natively EINVAL */
	memset(p, 0x53, it_page());
	int removed = madvise(p, it_page(), MADV_REMOVE);
	IT_ASSERT(pages_move(mc->who) ? removed == 0 :
			removed == -1 && errno == EINVAL);
	IT_EQ(p[0], pages_move(mc->who) ? 0 : 0x53);
	IT_OK(rpma_mr_dereg(&mr));
	memset(p, 0x52, len);
	IT_EQ(madvise(p, len, MADV_DONTNEED), 0);
	IT_EQ(p[len - 1], 0);
	IT_EQ(madvise(p, len, MADV_FREE), 0);
	IT_EQ(munmap(p, len), 0);
}

START_TEST(test_dontneed_documented)
{
	run(dontneed_server, _i ? WHO_SEALED : WHO_ROOT);
}
END_TEST

/* -------------------------------- 10. errno, and the memfd let go of */

/*
 * A successful call leaves errno as it was, on both sides of a session:
 * every call here is made with errno set to a value no call sets
 * (before, the failed open of /proc/self/mem of a process that is not
 * dumpable left EACCES behind the first call). Then the memfd: held
 * while pages are moved, closed with the last deregistration.
 */
#define ERRNO_MARK 4242

#define E(call) do { \
	errno = ERRNO_MARK; \
	IT_OK(call); \
	IT_ASSERT_MSG(errno == ERRNO_MARK, "%s: errno %d (%s) after " \
			"success", #call, errno, strerror(errno)); \
} while (0)

/* A completion within IT_WAIT_MS, errno checked at each poll. */
static void
wc_kept_errno(struct rpma_cq *cq, struct ibv_wc *wc)
{
	uint64_t end = it_now_ms() + IT_WAIT_MS;
	for (;;) {
		errno = ERRNO_MARK;
		int ret = rpma_cq_get_wc(cq, 1, wc, NULL);
		if (ret == 0) {
			IT_ASSERT_MSG(errno == ERRNO_MARK, "rpma_cq_get_wc: "
					"errno %d after success", errno);
			IT_EQ(wc->status, IBV_WC_SUCCESS);
			return;
		}
		IT_EQ(ret, RPMA_E_NO_COMPLETION);
		IT_ASSERT_MSG(it_now_ms() < end, "no completion");
		it_sleep_ms(1);
	}
}

static int
errno_server(const struct it_env *env, void *arg)
{
	const struct moved_case *mc = arg;
	IT_ASSERT(become(env, mc->who));
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	E(rpma_utils_get_ibv_context(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&dev));
	E(rpma_peer_new(dev, &peer));
	const size_t len = 64 * it_page();
	uint8_t *buf = it_anon(len, 0);
	struct rpma_mr_local *mr = NULL;
	E(rpma_mr_reg(peer, buf + 100, len - 200, RW | RPMA_MR_USAGE_SEND |
			RPMA_MR_USAGE_RECV, &mr));
	IT_EQ(memfds_open(), pages_move(mc->who) ? 1 : 0);
	struct rpma_ep *ep = NULL;
	E(rpma_ep_listen(peer, IT_ADDR, env->port, &ep));
	IT_EQ(it_tell(IT_CLIENT, IT_TAG_LISTENING, NULL, 0), 0);
	int fd = -1;
	E(rpma_ep_get_fd(ep, &fd));
	struct rpma_conn_req *req = it_next_req(ep, NULL);
	E(rpma_conn_req_recv(req, mr, 0, 64, NULL));
	struct rpma_conn *conn = NULL;
	E(rpma_conn_req_connect(&req, NULL, &conn));
	enum rpma_conn_event ev;
	E(rpma_conn_get_event_fd(conn, &fd));
	(void) it_expect(IT_TAG_GO, NULL, 0);
	E(rpma_conn_next_event(conn, &ev));
	IT_EQ(ev, RPMA_CONN_ESTABLISHED);
	struct rpma_cq *cq = NULL;
	E(rpma_conn_get_cq(conn, &cq));
	E(rpma_cq_get_fd(cq, &fd));
	size_t dlen = 0;
	struct it_desc desc = { 0 };
	E(rpma_mr_get_descriptor_size(mr, &dlen));
	E(rpma_mr_get_descriptor(mr, desc.mr));
	desc.mr_len = (uint8_t)dlen;
	IT_EQ(it_tell(IT_CLIENT, IT_TAG_DESC, &desc, sizeof(desc)), 0);
	/* the client writes, reads, flushes and sends */
	struct ibv_wc wc;
	wc_kept_errno(cq, &wc);
	IT_EQ(wc.opcode, IBV_WC_RECV);
	E(rpma_send(conn, mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, NULL));
	wc_kept_errno(cq, &wc);
	(void) it_expect(IT_TAG_DONE, NULL, 0);
	E(rpma_conn_next_event(conn, &ev));
	IT_EQ(ev, RPMA_CONN_CLOSED);
	E(rpma_conn_disconnect(conn));
	E(rpma_conn_delete(&conn));
	E(rpma_mr_dereg(&mr));
	/* nothing moved any more: the memfd is gone */
	IT_EQ(memfds_open(), 0);
	E(rpma_mr_reg(peer, buf, len, RW, &mr));
	IT_EQ(memfds_open(), pages_move(mc->who) ? 1 : 0);
	E(rpma_mr_dereg(&mr));
	E(rpma_ep_shutdown(&ep));
	E(rpma_peer_delete(&peer));
	IT_EQ(memfds_open(), 0);
	IT_EQ(munmap(buf, len), 0);
	return 0;
}

static int
errno_client(const struct it_env *env, void *arg)
{
	const struct moved_case *mc = arg;
	IT_ASSERT(become(env, mc->who));
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	E(rpma_utils_get_ibv_context(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE,
			&dev));
	E(rpma_peer_new(dev, &peer));
	const size_t len = 16 * it_page();
	uint8_t *buf = it_anon(len, 0x61);
	struct rpma_mr_local *mr = NULL;
	E(rpma_mr_reg(peer, buf, len, RPMA_MR_USAGE_WRITE_SRC |
			RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND |
			RPMA_MR_USAGE_RECV, &mr));
	struct rpma_conn_cfg *cfg = NULL;
	E(rpma_conn_cfg_new(&cfg));
	E(rpma_conn_cfg_set_sq_size(cfg, 16));
	(void) it_expect(IT_TAG_LISTENING, NULL, 0);
	struct rpma_conn_req *req = NULL;
	E(rpma_conn_req_new(peer, IT_ADDR, env->port, cfg, &req));
	E(rpma_conn_req_recv(req, mr, 4096, 64, NULL));
	struct rpma_conn *conn = NULL;
	E(rpma_conn_req_connect(&req, NULL, &conn));
	it_expect_event(conn, RPMA_CONN_ESTABLISHED);
	IT_EQ(it_tell(IT_SERVER, IT_TAG_GO, NULL, 0), 0);
	struct it_desc desc;
	it_expect_desc(&desc);
	struct rpma_mr_remote *rmr = NULL;
	E(rpma_mr_remote_from_descriptor(desc.mr, desc.mr_len, &rmr));
	size_t rsize = 0;
	E(rpma_mr_remote_get_size(rmr, &rsize));
	struct rpma_cq *cq = NULL;
	E(rpma_conn_get_cq(conn, &cq));
	struct ibv_wc wc;
	E(rpma_write(conn, rmr, 0, mr, 0, 4096, RPMA_F_COMPLETION_ALWAYS,
			NULL));
	wc_kept_errno(cq, &wc);
	E(rpma_read(conn, mr, 8192, rmr, 0, 4096, RPMA_F_COMPLETION_ALWAYS,
			NULL));
	wc_kept_errno(cq, &wc);
	E(rpma_flush(conn, rmr, 0, 4096, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, NULL));
	wc_kept_errno(cq, &wc);
	E(rpma_send(conn, mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, NULL));
	wc_kept_errno(cq, &wc);
	wc_kept_errno(cq, &wc);	/* the server's send, into the recv */
	IT_EQ(memcmp(buf + 8192, buf, 4096), 0);
	E(rpma_mr_remote_delete(&rmr));
	E(rpma_conn_disconnect(conn));
	enum rpma_conn_event ev;
	E(rpma_conn_next_event(conn, &ev));
	IT_EQ(ev, RPMA_CONN_CLOSED);
	E(rpma_conn_delete(&conn));
	IT_EQ(it_tell(IT_SERVER, IT_TAG_DONE, NULL, 0), 0);
	E(rpma_conn_cfg_delete(&cfg));
	E(rpma_mr_dereg(&mr));
	E(rpma_peer_delete(&peer));
	IT_EQ(munmap(buf, len), 0);
	return 0;
}

/* _i: 0 root, 1 not dumpable */
START_TEST(test_errno_and_memfd)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start_nobody(&env, 1), 0);
	struct moved_case mc = { _i ? WHO_SEALED : WHO_ROOT };
	ck_assert_msg(it_run_pair(&env, errno_server, errno_client, &mc) ==
			0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* --------------------------------------- which path, and without /proc */

/*
 * What librpmaclient(7) says of the paths: a process that is not
 * dumpable but privileged (root) stays on the address-space path; one
 * without /proc cannot register memory at all (the library learns the
 * application's mappings there): rpma_mr_reg fails with RPMA_E_PROVIDER,
 * while the rest works.
 */
static int
paths_server(const struct it_env *env, void *arg)
{
	(void) arg;
	IT_EQ(prctl(PR_SET_DUMPABLE, 0), 0);
	struct it_remote r;
	it_remote_open(&r, env);
	const size_t len = 16 * it_page();
	uint8_t *p = it_anon(len, 0x71);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(r.peer, p, len, RW, &mr));
	IT_EQ(moved_here(p), it_transport_is("verbs"));
	it_remote_write(mr, 0, len, 9);
	IT_EQ(it_check(p, len, 9), -1);
	IT_OK(rpma_mr_dereg(&mr));
	it_remote_close(&r);
	IT_EQ(munmap(p, len), 0);
	return 0;
}

static int
no_proc_server(const struct it_env *env, void *arg)
{
	(void) arg;
	IT_EQ(unshare(CLONE_NEWNS), 0);
	IT_EQ(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	/* hidden, however many are stacked there */
	IT_EQ(mount("none", "/proc", "tmpfs", 0, "mode=0755"), 0);
	IT_ASSERT(access("/proc/self/maps", F_OK) == -1);
	struct it_remote r;
	it_remote_open(&r, env);
	const size_t len = 16 * it_page();
	uint8_t *p = it_anon(len, 0x72);
	struct rpma_mr_local *mr = NULL;
	IT_ERR(RPMA_E_PROVIDER, rpma_mr_reg(r.peer, p, len, RW, &mr));
	IT_ASSERT(mr == NULL);
	IT_EQ(p[0], 0x72);
	it_remote_close(&r);
	IT_EQ(munmap(p, len), 0);
	return 0;
}

START_TEST(test_which_path)
{
	if (_i && IT_ASAN) {
		/* its runtime needs /proc to end the process */
		(void) fprintf(stderr, "it_moved: without /proc under "
				"AddressSanitizer: skipped\n");
		return;
	}
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 1), 0);
	ck_assert_msg(it_run_pair(&env, _i ? no_proc_server : paths_server,
			it_remote_helper, NULL) == 0, "%s", it_report());
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

int
main(void)
{
	const struct th_test tc_moved[] = { TH_LOOP(test_signal_handler_stores,
							    0, 2),
		TH_LOOP(test_recv_during_registration, 0, 2),
		TH_LOOP(test_attributes_set_while_registered, 0, 2),
		TH_LOOP(test_fork_advice, 0, 2),
		TH_LOOP(test_fork_under_debugger, 0, 2),
		TH_LOOP(test_pool_merges_again, 0, 2),
		TH_LOOP(test_private_hugetlb, it_transport_is("verbs") ? 0 : 1,
				2),
		TH_LOOP(test_dontneed_documented, 0, 2),
		TH_LOOP(test_errno_and_memfd, 0, 2),
		TH_LOOP(test_which_path, 0, 2), TH_END };
	const struct th_tcase tcases[] = {
		{ "moved", .steps = tc_moved, .create = it_tcase_create },
	};
	return check_run(th_suite("integration: the moved-pages path", tcases,
					 TH_N(tcases)),
			CK_ENV);
}
