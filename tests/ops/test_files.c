// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_files.c -- a client's file cannot stall rpmad (issue 20, item 8),
 * replayed with a real FUSE file system (tests/ops/stallfs.c) whose server
 * answers only its own user, as a tenant's FUSE mount with allow_other
 * can: anyone else's request, rpmad's included, waits for good. A
 * registration of a file there used to block rpmad in the kernel (an
 * fstat of the file asked the server); now it is refused without a
 * single request reaching the server, and rpmad serves everyone on.
 *
 * White-box too: rpmad's core/fstype.c judges a descriptor and a device
 * number of the mount as FUSE, again without a request.
 *
 * And a file system on a loop device whose image lives on the FUSE file
 * system (issue 33): ext4 used to be judged local whatever held its
 * device's data, and rpmad's faults then waited on the FUSE server; a
 * loop device is judged by its file now, white-box and by a tenant's
 * registration of a file there.
 *
 * Needs root (mounting FUSE with allow_other, other users played by
 * forked children); skips without it or without /dev/fuse.
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs/fstype.h"
#include "harness.h"
#include "librpma.h"
#include "th_child.h"
#include "th_logcap.h"
#include "th_peer.h"

#define ATTACKER 4245	/* the user stallfs serves: the FUSE server's own */
#define VICTIM 4242
#define FILE_SIZE (64 * 1024)
/* where the kernel lists FUSE connections */
#define FUSECTL "/sys/fs/fuse/connections"

static struct test_daemon d;

/* The FUSE mount of a test. */
struct fuse_mount {
	char dir[64];		/* scratch: the mount point and the log */
	char mnt[128];
	char log[128];		/* stallfs' requests: "OP UID PID" lines */
	struct proc p;
};

static bool
root(void)
{
	if (geteuid() == 0 && access("/dev/fuse", R_OK | W_OK) == 0)
		return true;
	(void) fprintf(stderr, "not root, or no /dev/fuse: skipping\n");
	return false;
}

/* whether mnt is a mount of type `type` in our mount table */
static bool
mounted(const char *mnt, const char *type)
{
	char *t = read_text("/proc/self/mountinfo");
	ck_assert_ptr_nonnull(t);
	char want[200];
	(void) snprintf(want, sizeof(want), " %s ", mnt);
	bool found = false;
	for (char *l = t; l && *l && !found; l = strchr(l, '\n'),
			l = l ? l + 1 : NULL) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		found = strstr(l, want) && strstr(l, type);
		if (nl)
			*nl = '\n';
	}
	free(t);
	return found;
}

static void
fuse_start(struct fuse_mount *f)
{
	(void) snprintf(f->dir, sizeof(f->dir), "/tmp/rpmad-fuse.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	ck_assert_int_eq(chmod(f->dir, 0755), 0);
	(void) snprintf(f->mnt, sizeof(f->mnt), "%s/mnt", f->dir);
	(void) snprintf(f->log, sizeof(f->log), "%s/requests", f->dir);
	ck_assert_int_eq(mkdir(f->mnt, 0755), 0);
	char uid[16];
	(void) snprintf(uid, sizeof(uid), "%d", ATTACKER);
	char *argv[] = { (char *)builddir_path("tests/ops/stallfs"), f->mnt,
		uid, f->log, NULL };
	char err[160];
	(void) snprintf(err, sizeof(err), "%s/stallfs.err", f->dir);
	ck_assert_int_eq(proc_start(&f->p, argv, NULL, err), 0);
	for (int waited = 0; !mounted(f->mnt, "fuse.stallfs"); waited += 50) {
		ck_assert_msg(waited < TH_WAIT_MS && proc_alive(&f->p),
				"stallfs did not mount %s", f->mnt);
		it_sleep_ms(50);
	}
}

static void
fuse_stop(struct fuse_mount *f)
{
	(void) proc_end(&f->p, SIGKILL);
	char *umount_cmd[] = { "umount", "-l", f->mnt, NULL };
	struct run r;
	ck_assert_int_eq(run_cmd(&r, umount_cmd, (uid_t) -1, 0, NULL, 0,
					 TH_WAIT_MS),
			0);
	run_free(&r);
	(void) rmdir(f->mnt);
	(void) unlink(f->log);
	char err[160];
	(void) snprintf(err, sizeof(err), "%s/stallfs.err", f->dir);
	(void) unlink(err);
	(void) rmdir(f->dir);
}

/* lines of the server's log of requests, and of those not from uids a, b */
static size_t
requests(const struct fuse_mount *f, unsigned a, unsigned b,
		size_t *others)
{
	*others = 0;
	FILE *fp = fopen(f->log, "r");
	if (fp == NULL)
		return 0;
	size_t n = 0;
	char op[32];
	unsigned uid;
	int pid;
	while (fscanf(fp, "%31s %u %d", op, &uid, &pid) == 3) {
		n++;
		if (uid != a && uid != b)
			(*others)++;
	}
	(void) fclose(fp);
	return n;
}

/* ------------------------------------------------------------ children */

/* how the attacker maps the file */
struct fuse_attack {
	const char *path;	/* the file */
	int map_flags;	/* MAP_SHARED: passed by descriptor; MAP_PRIVATE:
			 * reached through the client's address space */
};

/*
 * The attack: the FUSE server's own user maps the file (its own requests
 * are answered: its faults, its populate) and registers it for rpmad to
 * serve. Exit 0: refused, and the log names the file system.
 */
static int
register_fuse_file(struct child *c, void *p)
{
	(void) c;
	const struct fuse_attack *a = p;
	/*
	 * dumpable again after the change of user, so that the library hands
	 * rpmad its address space (else private pages move into its memfd,
	 * faulted in by the client itself, and rpmad never sees the file)
	 */
	if (prctl(PR_SET_DUMPABLE, 1))
		return 96;
	(void) th_log_capture();
	int fd = open(a->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 98;
	void *ptr = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE,
			a->map_flags, fd, 0);
	struct rpma_peer *peer = th_local_peer();
	if (ptr == MAP_FAILED || peer == NULL)
		return 97;
	struct rpma_mr_local *mr = NULL;
	int ret = rpma_mr_reg(peer, ptr, FILE_SIZE, RPMA_MR_USAGE_READ_SRC,
			&mr);
	if (mr)
		(void) rpma_mr_dereg(&mr);
	(void) rpma_peer_delete(&peer);
	if (ret != RPMA_E_PROVIDER)
		return 1;
	return strstr(th_logged, "fuse.stallfs") ? 0 : 2;
}

/* anyone else's registration of anonymous memory; exit 0: it works */
static int
register_memory(struct child *c, void *p)
{
	(void) c;
	(void) p;
	(void) th_log_capture();
	struct rpma_peer *peer = th_local_peer();
	static char buf[FILE_SIZE] __attribute__((aligned(4096)));
	struct rpma_mr_local *mr = NULL;
	if (peer == NULL || rpma_mr_reg(peer, buf, sizeof(buf),
			RPMA_MR_USAGE_WRITE_DST, &mr))
		return 1;
	(void) rpma_mr_dereg(&mr);
	(void) rpma_peer_delete(&peer);
	return 0;
}

/* ------------------------------------------------------------ tests */

/* a shared mapping of the file, and a private one (copy-on-write) */
static const int map_flags[] = { MAP_SHARED, MAP_PRIVATE };

START_TEST(test_fuse_file_refused)
{
	if (!root())
		return;
	struct fuse_mount f;
	fuse_start(&f);
	ck_assert_int_eq(test_daemon_start_cfg(&d, "socket_mode = 0666\n"), 0);

	struct child c;
	char log[8192];
	char path[200];
	(void) snprintf(path, sizeof(path), "%s/data", f.mnt);
	struct fuse_attack a = { path, map_flags[_i] };
	child_start_as(&c, ATTACKER, NULL, register_fuse_file, &a);
	int status = exit_code(child_end(&c, log, sizeof(log)));
	ck_assert_msg(status == 0, "status %d: %s", status, log);
	ck_assert_msg(strstr(log, "a file system that can make rpmad wait"),
			"%s", log);

	/* rpmad asked the server nothing: every request is the client's */
	size_t others;
	ck_assert_uint_gt(requests(&f, 0, ATTACKER, &others), 0);
	ck_assert_uint_eq(others, 0);

	/* and serves everyone on */
	child_start_as(&c, VICTIM, NULL, register_memory, NULL);
	ck_assert_int_eq(exit_code(child_end(&c, NULL, 0)), 0);
	struct run r;
	ck_assert_int_eq(rpmactl(&r, d.socket, "status", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	run_free(&r);
	ck_assert_int_eq(test_daemon_stop(&d), 0);
	fuse_stop(&f);
}
END_TEST

/* rpmad's judge of file systems, on the mount itself */
START_TEST(test_fstype_of_fuse)
{
	if (!root())
		return;
	struct fuse_mount f;
	fuse_start(&f);
	char path[200];
	(void) snprintf(path, sizeof(path), "%s/data", f.mnt);
	/* root's requests are answered: open and stat ask the server */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	size_t others, before = requests(&f, 0, ATTACKER, &others);

	struct fstype fs;
	ck_assert_int_eq(fstype_of_fd(fd, 0, &fs), 0);
	ck_assert_int_eq(fs.verdict, FSTYPE_MAY_BLOCK);
	ck_assert_str_eq(fs.type, "fuse.stallfs");
	ck_assert_str_eq(fs.mount_point, f.mnt);
	/* the device number, as /proc/PID/maps shows a mapping of the file */
	ck_assert_int_eq(fstype_of_dev(major(st.st_dev), minor(st.st_dev), 0,
			&fs), 0);
	ck_assert_int_eq(fs.verdict, FSTYPE_MAY_BLOCK);
	ck_assert_str_eq(fs.type, "fuse.stallfs");
	/* neither asked the server anything */
	ck_assert_uint_eq(requests(&f, 0, ATTACKER, &others), before);

	/*
	 * detached (umount -l) with the file still open: no mount table shows
	 * it, and the kernel's list of FUSE connections (fusectl) tells it,
	 * mounted here for the moment if nobody had
	 */
	ck_assert_int_eq(umount2(f.mnt, MNT_DETACH), 0);
	bool ours = mount("fusectl", FUSECTL, "fusectl", 0, NULL) == 0;
	ck_assert_int_eq(fstype_of_fd(fd, 0, &fs), 0);
	ck_assert_int_eq(fs.verdict, FSTYPE_MAY_BLOCK);
	ck_assert_int_eq(fstype_of_dev(major(st.st_dev), minor(st.st_dev), 0,
			&fs), 0);
	ck_assert_int_eq(fs.verdict, FSTYPE_MAY_BLOCK);
	/* without fusectl, FUSE loaded: it cannot be told, so not local */
	if (ours) {
		ck_assert_int_eq(umount(FUSECTL), 0);
		ck_assert_int_eq(fstype_of_fd(fd, 0, &fs), 0);
		ck_assert_int_eq(fs.verdict, FSTYPE_UNKNOWN);
	}
	ck_assert_uint_eq(requests(&f, 0, ATTACKER, &others), before);
	(void) close(fd);
	fuse_stop(&f);
}
END_TEST

/* ---------------------------- a FUSE file mapped over a registration */

/* A connection of a child's to itself through rpmad (one rpmad). */
struct self_conn {
	struct rpma_ep *ep;
	struct rpma_conn *cli, *srv;
	struct rpma_cq *cq;
};

static int
self_connect(struct rpma_peer *peer, struct self_conn *s)
{
	char port[16];
	ck_assert_int_eq(it_free_port(port, sizeof(port)), 0);
	struct rpma_conn_req *creq = NULL, *sreq = NULL;
	enum rpma_conn_event ev;
	memset(s, 0, sizeof(*s));
	if (rpma_ep_listen(peer, "127.0.0.1", port, &s->ep) ||
			rpma_conn_req_new(peer, "127.0.0.1", port, NULL,
				&creq) ||
			rpma_conn_req_connect(&creq, NULL, &s->cli) ||
			rpma_ep_next_conn_req(s->ep, NULL, &sreq) ||
			rpma_conn_req_connect(&sreq, NULL, &s->srv) ||
			rpma_conn_next_event(s->cli, &ev) ||
			ev != RPMA_CONN_ESTABLISHED ||
			rpma_conn_next_event(s->srv, &ev) ||
			ev != RPMA_CONN_ESTABLISHED ||
			rpma_conn_get_cq(s->cli, &s->cq))
		return -1;
	return 0;
}

/* One write of len bytes from src into dst and its flush: its status. */
static int
write_flush(struct self_conn *s, struct rpma_mr_local *dst,
		struct rpma_mr_local *src, size_t len)
{
	uint8_t desc[24];
	struct rpma_mr_remote *rdst = NULL;
	if (rpma_mr_get_descriptor(dst, desc) ||
			rpma_mr_remote_from_descriptor(desc, 21, &rdst) ||
			rpma_write(s->cli, rdst, 0, src, 0, len,
				RPMA_F_COMPLETION_ON_ERROR, NULL) ||
			rpma_flush(s->cli, rdst, 0, len,
				RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, NULL))
		return -1;
	struct ibv_wc wc;
	int r;
	while ((r = rpma_cq_get_wc(s->cq, 1, &wc, NULL)) ==
			RPMA_E_NO_COMPLETION)
		(void) rpma_cq_wait(s->cq);
	(void) rpma_mr_remote_delete(&rdst);
	return r ? -1 : (int)wc.status;
}

struct stall_arg {
	const struct fuse_mount *f;
	int *result;	/* shared with the parent: how the write ended */
};

/*
 * The attacker: registers anonymous memory for remote writes, then maps
 * its own FUSE file over it (its own requests are answered; rpmad's wait
 * for good), and writes into it through rpmad. *result 0: the write
 * ended, after memory_timeout_ms, with an error; never a success. It says
 * so before it ends (its exit asks the stalled server, which answers once
 * the parent kills it).
 */
static int
write_into_fuse(struct child *c, void *p)
{
	const struct stall_arg *sa = p;
	const struct fuse_mount *f = sa->f;
	if (prctl(PR_SET_DUMPABLE, 1))
		return 96;
	/*
	 * rpmad's own thread meets the page (the library's landing thread
	 * would be served by its own user's FUSE server: it_landing.c)
	 */
	if (setenv("RPMA_LANDING", "0", 1))
		return 96;
	(void) th_log_capture();
	struct rpma_peer *peer = th_local_peer();
	static char src_buf[FILE_SIZE] __attribute__((aligned(4096)));
	uint8_t *dst_buf = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rpma_mr_local *dst = NULL, *src = NULL;
	struct self_conn s;
	if (peer == NULL || dst_buf == MAP_FAILED ||
			rpma_mr_reg(peer, dst_buf, FILE_SIZE,
				RPMA_MR_USAGE_WRITE_DST |
				RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &dst) ||
			rpma_mr_reg(peer, src_buf, FILE_SIZE,
				RPMA_MR_USAGE_WRITE_SRC, &src) ||
			self_connect(peer, &s))
		return 97;
	/* a write before: it lands */
	if (write_flush(&s, dst, src, 4096) != IBV_WC_SUCCESS)
		return 95;
	char path[200];
	(void) snprintf(path, sizeof(path), "%s/data", f->mnt);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || mmap(dst_buf, FILE_SIZE, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_FIXED, fd, 0) != dst_buf)
		return 98;
	child_pause(c);	/* the parent watches the others meanwhile */
	int status = write_flush(&s, dst, src, 4096);
	*sa->result = status == IBV_WC_SUCCESS ? 1 : status < 0 ? 2 : 0;
	child_pause(c);
	return 0;
}

/*
 * The victim, another user: writes through a connection to itself, one
 * at a time, `VICTIM_WRITES` of them. Exit 0: all landed.
 */
#define VICTIM_WRITES 100

static int
write_own(struct child *c, void *p)
{
	(void) c;
	(void) p;
	struct rpma_peer *peer = th_local_peer();
	static char a[4096] __attribute__((aligned(4096)));
	static char b[4096] __attribute__((aligned(4096)));
	struct rpma_mr_local *dst = NULL, *src = NULL;
	struct self_conn s;
	if (peer == NULL || rpma_mr_reg(peer, a, sizeof(a),
				RPMA_MR_USAGE_WRITE_DST |
				RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &dst) ||
			rpma_mr_reg(peer, b, sizeof(b),
				RPMA_MR_USAGE_WRITE_SRC, &src) ||
			self_connect(peer, &s))
		return 97;
	for (int i = 0; i < VICTIM_WRITES; i++) {
		memset(b, i, sizeof(b));
		if (write_flush(&s, dst, src, sizeof(b)) != IBV_WC_SUCCESS ||
				a[0] != (char)i)
			return 1;
	}
	return 0;
}

/*
 * The documented route of issue 33: memory registered as anonymous, a
 * FUSE file of the tenant's own mapped over it afterwards. rpmad's
 * writes into it wait in the FUSE server for as long as it likes -- in
 * the tenant's own thread of rpmad's, not in the loop: another user's
 * writes and root's rpmactl are served meanwhile, and the tenant's write
 * fails after memory_timeout_ms.
 */
START_TEST(test_fuse_over_registration)
{
	if (!root())
		return;
	struct fuse_mount f;
	fuse_start(&f);
	ck_assert_int_eq(test_daemon_start_cfg(&d,
					 "socket_mode = 0666\n"
					 "memory_timeout_ms = 2000\n"),
			0);

	struct child attacker, victim;
	char log[8192];
	int *result = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert(result != MAP_FAILED);
	*result = -1;
	struct stall_arg sa = { &f, result };
	child_start_as(&attacker, ATTACKER, NULL, write_into_fuse, &sa);
	child_wait_ready(&attacker);
	/* its write goes now; the server holds rpmad's request */
	child_go(&attacker);
	it_sleep_ms(300);

	child_start_as(&victim, VICTIM, NULL, write_own, NULL);
	int status = exit_code(child_end(&victim, log, sizeof(log)));
	ck_assert_msg(status == 0, "victim: status %d: %s", status, log);
	struct run r;
	ck_assert_int_eq(rpmactl(&r, d.socket, "status", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	run_free(&r);

	/* the stalled write fails after the deadline, never succeeds */
	child_wait_ready(&attacker);
	ck_assert_msg(*result == 0, "attacker's write: %d", *result);
	ck_assert(wait_text(d.log, "did not answer within", TH_WAIT_MS));

	/* the server lets go: the stuck thread comes back, rpmad serves on */
	fuse_stop(&f);
	status = exit_code(child_end(&attacker, log, sizeof(log)));
	ck_assert_msg(status == 0, "attacker: status %d: %s", status, log);
	(void) munmap(result, sizeof(int));
	child_start_as(&victim, VICTIM, NULL, write_own, NULL);
	ck_assert_int_eq(exit_code(child_end(&victim, NULL, 0)), 0);
	ck_assert_int_eq(test_daemon_stop(&d), 0);
}
END_TEST

/* runs a command as root; fails the test unless it exits 0; its output */
static char *
sh(char *const argv[])
{
	struct run r;
	ck_assert_int_eq(run_cmd(&r, argv, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_msg(r.status == 0, "%s: %s", argv[0], r.err);
	char *out = strdup(r.out);
	run_free(&r);
	return out;
}

/* ext4 on a loop device whose image is the FUSE file system's file */
struct loop_fs {
	char dev[64];		/* /dev/loopN */
	char mnt[160];
	char file[200];		/* a tenant's file there */
};

static void
loop_fs_start(struct loop_fs *l, const struct fuse_mount *f)
{
	char image[200];
	(void) snprintf(image, sizeof(image), "%s/data", f->mnt);
	char *losetup[] = { "losetup", "--find", "--show", image, NULL };
	char *out = sh(losetup);
	out[strcspn(out, "\n")] = '\0';
	(void) snprintf(l->dev, sizeof(l->dev), "%s", out);
	free(out);
	char *mkfs[] = { "mkfs.ext4", "-q", "-F", l->dev, NULL };
	free(sh(mkfs));
	(void) snprintf(l->mnt, sizeof(l->mnt), "%s/ext4", f->dir);
	ck_assert_int_eq(mkdir(l->mnt, 0755), 0);
	ck_assert_int_eq(mount(l->dev, l->mnt, "ext4", 0, NULL), 0);
	(void) snprintf(l->file, sizeof(l->file), "%s/file", l->mnt);
	int fd = open(l->file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, FILE_SIZE), 0);
	ck_assert_int_eq(fchown(fd, ATTACKER, ATTACKER), 0);
	(void) close(fd);
}

static void
loop_fs_stop(struct loop_fs *l)
{
	ck_assert_int_eq(umount(l->mnt), 0);
	(void) rmdir(l->mnt);
	char *detach[] = { "losetup", "-d", l->dev, NULL };
	free(sh(detach));
}

/* rpmad's judge of a file system on a loop device over FUSE */
START_TEST(test_fstype_of_loop_on_fuse)
{
	if (!root())
		return;
	struct fuse_mount f;
	fuse_start(&f);
	struct loop_fs l;
	loop_fs_start(&l, &f);
	int fd = open(l.file, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);

	struct fstype fs;
	ck_assert_int_eq(fstype_of_fd(fd, 0, &fs), 0);
	ck_assert_msg(fs.verdict == FSTYPE_MAY_BLOCK, "%d %s", fs.verdict,
			fs.type);
	ck_assert_msg(strstr(fs.type, "ext4 on loop") &&
			strstr(fs.type, "fuse.stallfs"), "%s", fs.type);
	/* the device number, as /proc/PID/maps shows a mapping of the file */
	ck_assert_int_eq(fstype_of_dev(major(st.st_dev), minor(st.st_dev), 0,
			&fs), 0);
	ck_assert_msg(fs.verdict == FSTYPE_MAY_BLOCK, "%d %s", fs.verdict,
			fs.type);
	ck_assert_msg(strstr(fs.type, "fuse.stallfs"), "%s", fs.type);
	(void) close(fd);

	loop_fs_stop(&l);
	fuse_stop(&f);
}
END_TEST

/* a tenant registers its file on that ext4: refused, rpmad serves on */
START_TEST(test_loop_on_fuse_refused)
{
	if (!root())
		return;
	struct fuse_mount f;
	fuse_start(&f);
	struct loop_fs l;
	loop_fs_start(&l, &f);
	ck_assert_int_eq(test_daemon_start_cfg(&d, "socket_mode = 0666\n"), 0);

	struct child c;
	char log[8192];
	struct fuse_attack a = { l.file, map_flags[_i] };
	child_start_as(&c, ATTACKER, NULL, register_fuse_file, &a);
	int status = exit_code(child_end(&c, log, sizeof(log)));
	ck_assert_msg(status == 0, "status %d: %s", status, log);
	ck_assert_msg(strstr(log, "a file system that can make rpmad wait"),
			"%s", log);

	child_start_as(&c, VICTIM, NULL, register_memory, NULL);
	ck_assert_int_eq(exit_code(child_end(&c, NULL, 0)), 0);
	ck_assert_int_eq(test_daemon_stop(&d), 0);
	loop_fs_stop(&l);
	fuse_stop(&f);
}
END_TEST

/*
 * a loop device whose file is on a local file system stays local: a
 * tmpfs of the test's own (/tmp itself may be an overlay, or 9p in the
 * VM, where the image's file system cannot be told or may block)
 */
START_TEST(test_fstype_of_loop_local)
{
	if (!root())
		return;
	char dir[] = "/tmp/rpmad-loop.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(mount("tmpfs", dir, "tmpfs", 0, "size=4m"), 0);
	char image[64], mnt[64];
	(void) snprintf(image, sizeof(image), "%s/image", dir);
	(void) snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	int fd = open(image, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 1024 * 1024), 0);
	(void) close(fd);
	char *losetup[] = { "losetup", "--find", "--show", image, NULL };
	char *dev = sh(losetup);
	dev[strcspn(dev, "\n")] = '\0';
	char *mkfs[] = { "mkfs.ext4", "-q", "-F", dev, NULL };
	free(sh(mkfs));
	ck_assert_int_eq(mkdir(mnt, 0755), 0);
	ck_assert_int_eq(mount(dev, mnt, "ext4", 0, NULL), 0);
	fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	struct fstype fs;
	ck_assert_int_eq(fstype_of_fd(fd, 0, &fs), 0);
	(void) close(fd);
	ck_assert_msg(fs.verdict == FSTYPE_LOCAL, "%d %s", fs.verdict,
			fs.type);
	ck_assert_int_eq(umount(mnt), 0);
	char *detach[] = { "losetup", "-d", dev, NULL };
	free(sh(detach));
	free(dev);
	(void) rmdir(mnt);
	(void) unlink(image);
	ck_assert_int_eq(umount(dir), 0);
	(void) rmdir(dir);
}
END_TEST

int
main(void)
{
	const struct th_test tc_fuse[] = { TH_LOOP(test_fuse_file_refused, 0,
							   2),
		TH_TEST(test_fstype_of_fuse),
		TH_TEST(test_fuse_over_registration),
		TH_TEST(test_fstype_of_loop_on_fuse),
		TH_LOOP(test_loop_on_fuse_refused, 0, 2),
		TH_TEST(test_fstype_of_loop_local), TH_END };
	const struct th_tcase tcases[] = {
		{ "fuse", .steps = tc_fuse, .timeout = 60 },
	};
	return check_run(th_suite("files", tcases, TH_N(tcases)), CK_NORMAL);
}
