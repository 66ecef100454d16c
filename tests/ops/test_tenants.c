// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_tenants.c -- tenants of one rpmad cannot harm each other or rpmad:
 * each attack of issue 10, replayed, and what stops it now
 *  - a symlink put where the socket was is not followed on reload, and a
 *    socket directory others may write is refused;
 *  - limits count per user, not per control connection; [user] sections
 *    override them; max_registered_bytes = memlock holds a client to its
 *    own RLIMIT_MEMLOCK;
 *  - allow_connect / allow_listen refuse other networks, and are counted;
 *  - log lines a client causes are rate-limited, the rest counted;
 *  - memory a client registers is charged to its own memory cgroup (a
 *    client at its limit is refused or stopped, rpmad's cgroup stays);
 *  - a client cannot make rpmad allocate file blocks from root's reserve,
 *    nor from a reserve a mount gives nobody (issue 20, item 5).
 *
 * Other users are forked children that drop to uid 65534; the tests that
 * need root (all but the first) say so and skip without it.
 */

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "librpma.h"
#include "th_child.h"
#include "th_logcap.h"
#include "th_peer.h"

#define NOBODY TH_NOBODY
#define KiB 1024ULL
#define MiB (1024 * KiB)

static struct test_daemon d;

static void
stop(void)
{
	ck_assert_int_eq(test_daemon_stop(&d), 0);
}

/* ------------------------------------------------------------ socket */

START_TEST(test_socket_dir_writable_by_others)
{
	char dir[] = "/tmp/rpmad-tenants.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 01777), 0);
	char sock[300];
	(void) snprintf(sock, sizeof(sock), "%s/rpmad.sock", dir);
	const char *bin = getenv("RPMAD_BIN");
	char *argv[] = { (char *)(bin && *bin ? bin : "rpmad"), "--foreground",
		"--socket", sock, "--transport", "tcp", "--config",
		"/dev/null", NULL };
	struct run r;
	ck_assert_int_eq(run_cmd(&r, argv, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_int_ne(r.status, 0);
	ck_assert_msg(strstr(r.err, "may be written by others (mode 1777)"),
			"%s", r.err);
	run_free(&r);
	struct stat st;
	ck_assert_int_ne(lstat(sock, &st), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_socket_symlink_on_reload)
{
	if (!child_can_play_users())
		return;
	th_log_daemon_start(&d, "socket_mode = 0660\n");
	/* a root-only file the attacker wants */
	char victim[] = "/tmp/rpmad-victim.XXXXXX";
	int fd = mkstemp(victim);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, 0600), 0);
	(void) close(fd);

	/* the socket's name now points at the victim */
	char moved[400];
	(void) snprintf(moved, sizeof(moved), "%s.moved", d.socket);
	ck_assert_int_eq(rename(d.socket, moved), 0);
	ck_assert_int_eq(symlink(victim, d.socket), 0);
	ck_assert_int_eq(write_text(d.config, "socket_mode = 0666\n"
			"socket_group = 4246\n"), 0);
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	ck_assert(wait_text(d.log,
			"is no longer the socket rpmad made (a "
			"symbolic link); its owner and mode are left alone",
			TH_WAIT_MS));
	ck_assert(wait_text(d.log, "socket_mode 0660 -> 0666", TH_WAIT_MS));

	struct stat st;
	ck_assert_int_eq(stat(victim, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_uint_eq(st.st_gid, 0);
	/* nor is the symlink or its target removed at the end */
	stop();
	ck_assert_int_eq(stat(victim, &st), 0);
	ck_assert_int_eq(unlink(victim), 0);
	(void) unlink(moved);
	(void) unlink(d.socket);
	(void) rmdir(d.dir);
}
END_TEST

/* ------------------------------------------------------------ limits */

struct conns_arg {
	int make;		/* connection requests to make */
	char port[16];
	int got;		/* how many were made */
};

/* makes arg->make requests, pauses, deletes them; exit: the count made */
static int
make_conns(struct child *c, void *p)
{
	struct conns_arg *a = p;
	(void) th_log_capture();
	struct rpma_peer *peer = th_local_peer();
	if (peer == NULL)
		return 99;
	struct rpma_conn_req *req[16] = { NULL };
	int n = 0;
	while (n < a->make && n < 16 && rpma_conn_req_new(peer, "127.0.0.1",
			a->port, NULL, &req[n]) == 0)
		n++;
	child_pause(c);
	for (int i = 0; i < n; i++)
		(void) rpma_conn_req_delete(&req[i]);
	(void) rpma_peer_delete(&peer);
	return n;
}

/* the index of the first client of uid in the listing, or -1 */
static long
client_of(const struct flat *f, unsigned uid)
{
	char want[16];
	(void) snprintf(want, sizeof(want), "%u", uid);
	return flat_find(f, "clients", "uid", want, 0);
}

START_TEST(test_limits_per_user)
{
	if (!child_can_play_users())
		return;
	th_log_daemon_start(&d, "socket_mode = 0666\nmax_connections = 3\n");
	struct conns_arg a = { .make = 2 };
	ck_assert_int_eq(it_free_port(a.port, sizeof(a.port)), 0);

	/* one process of the user holds two */
	struct child c1;
	child_start(&c1, NULL, make_conns, &a);
	child_wait_ready(&c1);

	/* another process (its own control connection) gets one more */
	struct child c2;
	char log[8192];
	child_start(&c2, NULL, make_conns, &a);
	child_wait_ready(&c2);

	/* what the user holds, against its limits */
	struct flat f;
	rpmactl_json(&f, d.socket, "clients");
	long i = client_of(&f, NOBODY);
	ck_assert_int_ge(i, 0);
	ck_assert_str_eq(flat_get(&f, "clients.%ld.user_totals.use.clients",
			i), "2");
	ck_assert_str_eq(flat_get(&f,
			"clients.%ld.user_totals.use.connections", i), "3");
	ck_assert_str_eq(flat_get(&f,
			"clients.%ld.user_totals.limits.max_connections", i),
			"3");
	ck_assert_str_eq(flat_get(&f,
			"clients.%ld.user_totals.refused.limits", i), "1");
	flat_free(&f);
	struct run r;
	ck_assert_int_eq(rpmactl(&r, d.socket, "clients", NULL), 0);
	ck_assert_msg(count_lines_with(r.out, "65534", "3/3", NULL) == 1,
			"%s", r.out);
	run_free(&r);

	ck_assert_int_eq(exit_code(child_end(&c2, log, sizeof(log))), 1);
	ck_assert_msg(strstr(log, "uid 65534 has 3 connections (all its "
			"clients together), its limit: max_connections = 3 "
			"from the default or rpmad.conf"), "%s", log);
	ck_assert_ptr_nonnull(strstr(log, "max_connections under [user "
			"65534]"));
	ck_assert_int_eq(exit_code(child_end(&c1, NULL, 0)), 2);
	stop();

	/* a section for the user raises it, for that user only */
	th_log_daemon_start(&d,
			"socket_mode = 0666\nmax_connections = 1\n"
			"[user 65534]\nmax_connections = 2\n");
	child_start(&c1, NULL, make_conns, &a);
	child_wait_ready(&c1);
	ck_assert_int_eq(exit_code(child_end(&c1, NULL, 0)), 2);
	/* root has 1 */
	struct rpma_peer *peer = th_local_peer();
	ck_assert_ptr_nonnull(peer);
	struct rpma_conn_req *req[2] = { NULL };
	ck_assert_int_eq(rpma_conn_req_new(peer, "127.0.0.1", a.port, NULL,
			&req[0]), 0);
	ck_assert_int_eq(rpma_conn_req_new(peer, "127.0.0.1", a.port, NULL,
			&req[1]), RPMA_E_NOMEM);
	ck_assert_int_eq(rpma_conn_req_delete(&req[0]), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
	stop();

	/* and pending requests have their own limit */
	th_log_daemon_start(&d,
			"socket_mode = 0666\n[user 65534]\n"
			"max_pending_requests = 1\n");
	child_start(&c1, NULL, make_conns, &a);
	child_wait_ready(&c1);
	ck_assert_int_eq(exit_code(child_end(&c1, log, sizeof(log))), 1);
	ck_assert_msg(strstr(log, "max_pending_requests = 1 from [user "
			"65534]"), "%s", log);
	stop();
}
END_TEST

/*
 * Four registrations of pages of a file of the page cache that rpmad
 * writes into, and one it only reads; pauses holding them. Exit: 0, or
 * which registration failed.
 */
static int
register_file_pages(struct child *c, void *p)
{
	const char *path = p;
	(void) th_log_capture();
	struct rpma_peer *peer = th_local_peer();
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (peer == NULL || fd < 0)
		return 99;
	uint8_t *ptr = mmap(NULL, 5 * 4096, PROT_READ | PROT_WRITE,
			MAP_SHARED, fd, 0);
	if (ptr == MAP_FAILED)
		return 98;
	struct rpma_mr_local *mr[5] = { NULL };
	for (int i = 0; i < 5; i++) {
		if (rpma_mr_reg(peer, ptr + i * 4096, 4096, i < 4 ?
				RPMA_MR_USAGE_WRITE_DST :
				RPMA_MR_USAGE_READ_SRC, &mr[i]))
			return 1 + i;
	}
	child_pause(c);
	for (int i = 0; i < 5; i++)
		(void) rpma_mr_dereg(&mr[i]);
	(void) rpma_peer_delete(&peer);
	return 0;
}

/*
 * A registration rpmad writes into a page-cache file through holds a
 * descriptor of it (mr_io.h), counted with its user's; past
 * max_descriptors the next still registers, writing through rpmad's
 * mapping instead. One rpmad only reads needs none.
 */
START_TEST(test_write_descriptors)
{
	if (!child_can_play_users())
		return;
	th_log_daemon_start(&d,
			"socket_mode = 0666\n[user 65534]\n"
			"max_descriptors = 3\n");
	char path[300];
	(void) snprintf(path, sizeof(path), "%s/pages", d.dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 5 * 4096), 0);
	ck_assert_int_eq(fchown(fd, NOBODY, NOBODY), 0);
	struct statfs fs;
	ck_assert_int_eq(fstatfs(fd, &fs), 0);
	(void) close(fd);
	if (fs.f_type == TMPFS_MAGIC) {
		(void) fprintf(stderr, "%s is on tmpfs: no page cache to "
				"write back, skipping\n", d.dir);
		stop();
		return;
	}
	struct child c;
	char log[8192];
	child_start(&c, NULL, register_file_pages, path);
	child_wait_ready(&c);
	/* its session, and two of the four */
	struct flat f;
	rpmactl_json(&f, d.socket, "clients");
	long i = client_of(&f, NOBODY);
	ck_assert_int_ge(i, 0);
	ck_assert_str_eq(flat_get(&f,
			"clients.%ld.user_totals.use.descriptors", i), "3");
	flat_free(&f);
	ck_assert_int_eq(it_proc_fds_of(d.pid, path), 2);
	int code = exit_code(child_end(&c, log, sizeof(log)));
	ck_assert_msg(code == 0, "registration %d failed: %s", code, log);
	/* released with their registrations */
	for (int waited = 0; it_proc_fds_of(d.pid, path) && waited < TH_WAIT_MS;
			waited += 10)
		it_sleep_ms(10);
	ck_assert_int_eq(it_proc_fds_of(d.pid, path), 0);
	stop();
	(void) unlink(path);
}
END_TEST

static int
low_memlock(struct child *c, void *arg)
{
	(void) c;
	(void) arg;
	struct rlimit rl = { 64 * KiB, 64 * KiB };
	return setrlimit(RLIMIT_MEMLOCK, &rl);
}

/* registers 48 KiB, then 32 KiB more; exit: 0 when the second failed */
static int
register_past_memlock(struct child *c, void *arg)
{
	(void) c;
	(void) arg;
	(void) th_log_capture();
	struct rpma_peer *peer = th_local_peer();
	if (peer == NULL)
		return 99;
	char *buf = aligned_alloc(4 * KiB, 80 * KiB);
	if (buf == NULL)
		return 98;
	memset(buf, 1, 80 * KiB);
	struct rpma_mr_local *a = NULL, *b = NULL;
	if (rpma_mr_reg(peer, buf, 48 * KiB, RPMA_MR_USAGE_WRITE_DST, &a))
		return 3;
	int ret = rpma_mr_reg(peer, buf + 48 * KiB, 32 * KiB,
			RPMA_MR_USAGE_WRITE_DST, &b);
	(void) rpma_mr_dereg(&a);
	(void) rpma_peer_delete(&peer);
	return ret == RPMA_E_NOMEM ? 0 : 4;
}

/* max_registered_bytes = memlock: each client's own RLIMIT_MEMLOCK */
START_TEST(test_memlock)
{
	if (!child_can_play_users())
		return;
	th_log_daemon_start(&d,
			"socket_mode = 0666\nmax_registered_bytes = memlock\n");
	struct child c;
	char log[8192];
	child_start(&c, low_memlock, register_past_memlock, NULL);
	ck_assert_int_eq(exit_code(child_end(&c, log, sizeof(log))), 0);
	ck_assert_msg(strstr(log, "registering 32768 more bytes would bring "
			"uid 65534 (all its clients together) to 81920, over "
			"this process's RLIMIT_MEMLOCK of 65536"), "%s", log);
	ck_assert_ptr_nonnull(strstr(log, "ulimit -l"));
	stop();
}
END_TEST

/* ------------------------------------------------------------ networks */

#define REFUSED_CONNECTS 40

struct net_arg {
	char port[16], port2[16];
};

/* exit 0 when every request was refused as it should be */
static int
try_networks(struct child *c, void *p)
{
	(void) c;
	struct net_arg *a = p;
	(void) th_log_capture();
	struct rpma_peer *peer = th_local_peer();
	if (peer == NULL)
		return 99;
	for (int i = 0; i < REFUSED_CONNECTS; i++) {
		struct rpma_conn_req *req = NULL;
		if (rpma_conn_req_new(peer, "127.0.0.1", a->port, NULL, &req)
				!= RPMA_E_PROVIDER)
			return 2;
	}
	struct rpma_ep *ep = NULL;
	if (rpma_ep_listen(peer, "127.0.0.1", a->port, &ep) !=
			RPMA_E_PROVIDER)
		return 3;
	/* the allowed port */
	if (rpma_ep_listen(peer, "127.0.0.1", a->port2, &ep))
		return 4;
	(void) rpma_ep_shutdown(&ep);
	(void) rpma_peer_delete(&peer);
	return 0;
}

START_TEST(test_allow_networks_and_log_share)
{
	if (!child_can_play_users())
		return;
	struct net_arg a;
	ck_assert_int_eq(it_free_port(a.port2, sizeof(a.port2)), 0);
	ck_assert_int_eq(it_free_port(a.port, sizeof(a.port)), 0);
	int p2 = atoi(a.port2);
	char config[512];
	(void) snprintf(config, sizeof(config), "socket_mode = 0666\n"
			"log_level = info\n"
			"allow_connect = 10.9.0.0/16, [fd00::]/8:7204\n"
			"allow_listen = 127.0.0.0/8:%d\n"
			"[user 0]\nallow_connect = any\n", p2);
	th_log_daemon_start(&d, config);

	struct child c;
	char log[16384];
	child_start(&c, NULL, try_networks, &a);
	ck_assert_int_eq(exit_code(child_end(&c, log, sizeof(log))), 0);
	char want[200];
	(void) snprintf(want, sizeof(want), "uid 65534 may not connect to "
			"127.0.0.1:%s (allow_connect of rpmad.conf)", a.port);
	ck_assert_msg(strstr(log, want), "%s", log);
	(void) snprintf(want, sizeof(want), "uid 65534 may not listen on "
			"127.0.0.1:%s (allow_listen of rpmad.conf)", a.port);
	ck_assert_msg(strstr(log, want), "%s", log);

	/* root's own section lets it out */
	struct rpma_peer *peer = th_local_peer();
	ck_assert_ptr_nonnull(peer);
	struct rpma_conn_req *req = NULL;
	ck_assert_int_eq(rpma_conn_req_new(peer, "127.0.0.1", a.port, NULL,
			&req), 0);
	ck_assert_int_eq(rpma_conn_req_delete(&req), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);

	/* counted */
	struct run r;
	ck_assert_int_eq(rpmactl(&r, d.socket, "--json", "status", NULL), 0);
	struct flat f;
	ck_assert_int_eq(flat_parse(&f, r.out), 0);
	ck_assert_str_eq(flat_get(&f, "refused.allow_connect"), "40");
	ck_assert_str_eq(flat_get(&f, "refused.allow_listen"), "1");
	flat_free(&f);
	run_free(&r);

	/*
	 * The user's 40 refusals and its session lines: at most 20 lines
	 * in the window, and the rest said in one line when it ends.
	 */
	ck_assert(wait_text(d.log,
			"messages from uid 65534 (last from "
			"client pid",
			2 * TH_WAIT_MS));
	char *text = read_text(d.log);
	ck_assert_ptr_nonnull(text);
	size_t refusals = count_lines_with(text, "refused: uid 65534 may not",
			NULL);
	ck_assert_msg(refusals > 0 && refusals <= 20, "%zu lines", refusals);
	ck_assert_uint_eq(count_lines_with(text, "suppressed", "messages from "
			"uid 65534", NULL), 1);
	free(text);
	stop();
}
END_TEST

/* ------------------------------------------------------------ cgroups */

/* The memory cgroup (v1 or v2) this process is in, or -1. */
static int
memcg_dir(char *dir, size_t len, bool *v2)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (f == NULL)
		return -1;
	char line[256];
	int ret = -1;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *path;
		if ((path = strstr(line, ":memory:")) != NULL) {
			(void) snprintf(dir, len, "/sys/fs/cgroup/memory%s",
					path + 8);
			*v2 = false;
			ret = 0;
			break;
		}
		if (strncmp(line, "0::", 3) == 0) {
			char ctl[600];
			(void) snprintf(ctl, sizeof(ctl),
					"/sys/fs/cgroup%s/cgroup.controllers",
					line + 3);
			char *c = read_text(ctl);
			if (c && strstr(c, "memory")) {
				(void) snprintf(dir, len, "/sys/fs/cgroup%s",
						line + 3);
				*v2 = true;
				ret = 0;
			}
			free(c);
		}
	}
	(void) fclose(f);
	return ret;
}

struct memcg {
	char dir[600];
	bool v2;
};

static int
memcg_make(struct memcg *m, const char *parent, bool v2, const char *name,
		unsigned long long limit)
{
	(void) snprintf(m->dir, sizeof(m->dir), "%s/%s-%d", parent, name,
			(int)getpid());
	m->v2 = v2;
	if (mkdir(m->dir, 0755) && errno != EEXIST)
		return -1;
	if (limit == 0)
		return 0;
	char path[700], val[32];
	(void) snprintf(path, sizeof(path), "%s/%s", m->dir,
			v2 ? "memory.max" : "memory.limit_in_bytes");
	(void) snprintf(val, sizeof(val), "%llu", limit);
	return write_text(path, val);
}

static int
memcg_join(const struct memcg *m, pid_t pid)
{
	char path[700], val[32];
	(void) snprintf(path, sizeof(path), "%s/cgroup.procs", m->dir);
	(void) snprintf(val, sizeof(val), "%d", (int)pid);
	return write_text(path, val);
}

static unsigned long long
memcg_read(const struct memcg *m, bool peak)
{
	char path[700];
	(void) snprintf(path, sizeof(path), "%s/%s", m->dir, m->v2 ?
			(peak ? "memory.peak" : "memory.current") :
			(peak ? "memory.max_usage_in_bytes" :
			"memory.usage_in_bytes"));
	char *t = read_text(path);
	unsigned long long v = t ? strtoull(t, NULL, 10) : 0;
	free(t);
	return v;
}

static void
memcg_remove(const struct memcg *m)
{
	(void) rmdir(m->dir);
}

struct shm_arg {
	const struct memcg *cg;
	char path[128];
	size_t size;
};

static int
join_client_cg(struct child *c, void *p)
{
	(void) c;
	struct shm_arg *a = p;
	return memcg_join(a->cg, getpid());
}

/*
 * What the attacker did next: make rpmad write into the registration. A
 * connection to itself through rpmad, and reads of 1 MiB at a time from
 * its other registration into every MiB of `dst` (rpmad receives the
 * data straight into its mapping of dst, or through the file: mr_io.h).
 * 0 or -1.
 */
static int
loopback_reads(struct rpma_peer *peer, struct rpma_mr_local *dst,
		size_t size)
{
	char port[16];
	ck_assert_int_eq(it_free_port(port, sizeof(port)), 0);
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *creq = NULL, *sreq = NULL;
	struct rpma_conn *cconn = NULL, *sconn = NULL;
	struct rpma_mr_local *src = NULL;
	struct rpma_mr_remote *rsrc = NULL;
	enum rpma_conn_event ev;
	int ret = -1;
	char *buf = aligned_alloc(4096, MiB);
	if (buf == NULL)
		return -1;
	memset(buf, 0x5a, MiB);
	uint8_t desc[24];
	if (rpma_mr_reg(peer, buf, MiB, RPMA_MR_USAGE_READ_SRC, &src) ||
			rpma_mr_get_descriptor(src, desc) ||
			rpma_mr_remote_from_descriptor(desc, 21, &rsrc) ||
			rpma_ep_listen(peer, "127.0.0.1", port, &ep) ||
			rpma_conn_req_new(peer, "127.0.0.1", port, NULL,
				&creq) ||
			rpma_conn_req_connect(&creq, NULL, &cconn) ||
			rpma_ep_next_conn_req(ep, NULL, &sreq) ||
			rpma_conn_req_connect(&sreq, NULL, &sconn) ||
			rpma_conn_next_event(cconn, &ev) ||
			ev != RPMA_CONN_ESTABLISHED ||
			rpma_conn_next_event(sconn, &ev) ||
			ev != RPMA_CONN_ESTABLISHED)
		goto out;
	struct rpma_cq *cq;
	if (rpma_conn_get_cq(cconn, &cq))
		goto out;
	for (size_t off = 0; off < size; off += MiB) {
		struct ibv_wc wc;
		if (rpma_read(cconn, dst, off, rsrc, 0, MiB,
				RPMA_F_COMPLETION_ALWAYS, NULL))
			goto out;
		int r;
		while ((r = rpma_cq_get_wc(cq, 1, &wc, NULL)) ==
				RPMA_E_NO_COMPLETION)
			(void) rpma_cq_wait(cq);
		if (r || wc.status != IBV_WC_SUCCESS)
			goto out;
	}
	ret = 0;
out:
	if (cconn) {
		(void) rpma_conn_disconnect(cconn);
		(void) rpma_conn_delete(&cconn);
	}
	if (sconn) {
		(void) rpma_conn_disconnect(sconn);
		(void) rpma_conn_delete(&sconn);
	}
	if (ep)
		(void) rpma_ep_shutdown(&ep);
	if (rsrc)
		(void) rpma_mr_remote_delete(&rsrc);
	if (src)
		(void) rpma_mr_dereg(&src);
	free(buf);
	return ret;
}

/*
 * The attack: a sparse shm file registered as a read destination, then
 * filled by rpmad. Exit 0: registered and filled; 1: refused; 2: filling
 * failed.
 */
static int
register_sparse(struct child *c, void *p)
{
	struct shm_arg *a = p;
	(void) th_log_capture();
	struct rpma_peer *peer = th_local_peer();
	if (peer == NULL)
		return 99;
	int fd = open(a->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)a->size))
		return 98;
	void *ptr = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, 0);
	if (ptr == MAP_FAILED)
		return 97;
	struct rpma_mr_local *mr = NULL;
	int ret = rpma_mr_reg(peer, ptr, a->size, RPMA_MR_USAGE_READ_DST,
			&mr);
	if (ret == 0 && loopback_reads(peer, mr, a->size))
		ret = 2;
	child_pause(c);
	if (mr)
		(void) rpma_mr_dereg(&mr);
	(void) rpma_peer_delete(&peer);
	return ret == 0 ? 0 : ret == 2 ? 2 : 1;
}

START_TEST(test_memory_cgroup)
{
	if (!child_can_play_users())
		return;
	char parent[300];
	bool v2;
	struct memcg dcg, ccg;
	if (memcg_dir(parent, sizeof(parent), &v2) ||
			memcg_make(&dcg, parent, v2, "rpmad", 0) ||
			memcg_make(&ccg, parent, v2, "client", 64 * MiB)) {
		(void) fprintf(stderr, "no writable memory cgroup: skipping\n");
		return;
	}
	th_log_daemon_start(&d,
			"socket_mode = 0666\n[user 65534]\n"
			"max_registered_bytes = 0\n");
	ck_assert_int_eq(memcg_join(&dcg, d.pid), 0);
	unsigned long long before = memcg_read(&dcg, false);

	/* 32 MiB: within the client's limit; filled by rpmad, charged to it */
	struct shm_arg a = { .cg = &ccg, .size = 32 * MiB };
	(void) snprintf(a.path, sizeof(a.path), "/dev/shm/rpmad-tenants-%d",
			(int)getpid());
	struct child c;
	child_start(&c, join_client_cg, register_sparse, &a);
	child_wait_ready(&c);
	unsigned long long client_now = memcg_read(&ccg, false);
	unsigned long long daemon_now = memcg_read(&dcg, true);
	char log[8192];
	int status = child_end(&c, log, sizeof(log));
	ck_assert_msg(exit_code(status) == 0, "status %d: %s", status, log);
	ck_assert_msg(client_now >= 32 * MiB, "client cgroup %llu",
			client_now);
	ck_assert_msg(daemon_now < before + 8 * MiB, "rpmad cgroup peak %llu "
			"(was %llu)", daemon_now, before);
	(void) unlink(a.path);

	/* 256 MiB: past it; the client is refused or stopped, not rpmad */
	a.size = 256 * MiB;
	child_start(&c, join_client_cg, register_sparse, &a);
	/* it pauses only if it was not killed */
	char b;
	ssize_t got = read(c.ready[0], &b, 1);
	daemon_now = memcg_read(&dcg, true);
	status = child_end(&c, log, sizeof(log));
	ck_assert_msg(got == 0 || exit_code(status) == 1, "status %d, log %s",
			status, log);
	ck_assert_msg(daemon_now < before + 8 * MiB, "rpmad cgroup peak %llu "
			"(was %llu)", daemon_now, before);
	ck_assert_uint_le(memcg_read(&ccg, true), 64 * MiB);
	(void) unlink(a.path);
	ck_assert(test_daemon_alive(&d));

	stop();
	memcg_remove(&ccg);
	memcg_remove(&dcg);
}
END_TEST

/* ------------------------------------------------------------ blocks */

struct fs_arg {
	char mnt[300];
};

/* fills the file system, then registers a hole of its own file */
static int
fill_then_register(struct child *c, void *p)
{
	(void) c;
	struct fs_arg *a = p;
	(void) th_log_capture();
	char path[400];
	(void) snprintf(path, sizeof(path), "%s/fill", a->mnt);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 98;
	static char block[64 * 1024];
	memset(block, 7, sizeof(block));
	while (write(fd, block, sizeof(block)) > 0)
		;
	if (errno != ENOSPC)
		return 97;
	(void) fsync(fd);
	(void) close(fd);

	(void) snprintf(path, sizeof(path), "%s/target", a->mnt);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)(2 * MiB)))
		return 96;
	void *ptr = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, 0);
	if (ptr == MAP_FAILED)
		return 95;
	struct rpma_peer *peer = th_local_peer();
	if (peer == NULL)
		return 99;
	struct rpma_mr_local *mr = NULL;
	int ret = rpma_mr_reg(peer, ptr, 2 * MiB, RPMA_MR_USAGE_WRITE_DST,
			&mr);
	if (mr)
		(void) rpma_mr_dereg(&mr);
	(void) rpma_peer_delete(&peer);
	return ret == 0 ? 0 : 1;
}

/* the capabilities and file-system uid of a process, from /proc */
static void
proc_ids_once(pid_t pid, unsigned *fsuid, unsigned long long *cap_eff)
{
	char path[64];
	(void) snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	char *t = read_text(path);
	ck_assert_ptr_nonnull(t);
	unsigned a, b, c;
	char *u = strstr(t, "\nUid:");
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(sscanf(u, "\nUid: %u %u %u %u", &a, &b, &c, fsuid),
			4);
	char *e = strstr(t, "\nCapEff:");
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(sscanf(e, "\nCapEff: %llx", cap_eff), 1);
	free(t);
}

/*
 * rpmad's identity once it serves: its socket listens a moment before it
 * gives up root's file-system identity (the loop, which serves, starts
 * after), so a fresh rpmad is read until it did or TH_WAIT_MS passed
 */
static void
proc_ids(pid_t pid, unsigned *fsuid, unsigned long long *cap_eff)
{
	for (int waited = 0; ; waited += 10) {
		proc_ids_once(pid, fsuid, cap_eff);
		if (*fsuid != 0 || waited >= TH_WAIT_MS)
			return;
		it_sleep_ms(10);
	}
}

/*
 * A small ext4 (16 MiB, 10% reserved) in dir, mounted at dir/mnt with
 * `opts` (NULL: none) and open to everyone; false (said on stderr) when
 * it cannot be made here.
 */
static bool
ext4_mount(const char *dir, const char *opts, char *mnt, size_t len)
{
	char img[300];
	(void) snprintf(img, sizeof(img), "%s/fs.img", dir);
	(void) snprintf(mnt, len, "%s/mnt", dir);
	int fd = open(img, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 16 * MiB), 0);
	(void) close(fd);
	char *mkfs[] = { "mkfs.ext4", "-q", "-F", "-m", "10", img, NULL };
	struct run r;
	ck_assert_int_eq(run_cmd(&r, mkfs, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	int mkfs_status = r.status;
	run_free(&r);
	ck_assert_int_eq(mkdir(mnt, 0755), 0);
	char o[128];
	(void) snprintf(o, sizeof(o), "loop%s%s", opts ? "," : "",
			opts ? opts : "");
	char *mount_cmd[] = { "mount", "-o", o, img, mnt, NULL };
	if (mkfs_status != 0 ||
			run_cmd(&r, mount_cmd, (uid_t) -1, 0, NULL, 0,
					TH_WAIT_MS) ||
			r.status != 0) {
		(void) fprintf(stderr, "cannot make or mount an ext4 image: "
				"skipping the file-system part\n");
		(void) rmdir(mnt);
		(void) unlink(img);
		return false;
	}
	run_free(&r);
	ck_assert_int_eq(chmod(mnt, 0777), 0);
	return true;
}

static void
ext4_unmount(const char *dir, const char *mnt)
{
	char *umount_cmd[] = { "umount", (char *)mnt, NULL };
	struct run r;
	ck_assert_int_eq(run_cmd(&r, umount_cmd, (uid_t) -1, 0, NULL, 0,
					 TH_WAIT_MS),
			0);
	run_free(&r);
	(void) rmdir(mnt);
	char img[300];
	(void) snprintf(img, sizeof(img), "%s/fs.img", dir);
	(void) unlink(img);
}

/* whether the reserve (10% of the blocks) of the file system is whole */
static void
assert_reserve_whole(const char *mnt)
{
	struct statvfs st;
	ck_assert_int_eq(statvfs(mnt, &st), 0);
	ck_assert_msg((unsigned long long)st.f_bfree * st.f_frsize >=
			(unsigned long long)st.f_blocks * st.f_frsize / 10 -
			64 * KiB, "%llu of %llu blocks free",
			(unsigned long long)st.f_bfree,
			(unsigned long long)st.f_blocks);
}

START_TEST(test_reserved_blocks)
{
	if (!child_can_play_users())
		return;
	th_log_daemon_start(&d,
			"socket_mode = 0666\n[user 65534]\n"
			"max_registered_bytes = 0\n");

	/*
	 * whatever rpmad writes into a file, it writes without root's rights,
	 * in every thread (each has its own file-system identity)
	 */
	unsigned fsuid;
	unsigned long long caps;
	proc_ids(d.pid, &fsuid, &caps);
	char dir[64];
	(void) snprintf(dir, sizeof(dir), "/proc/%d/task", (int) d.pid);
	DIR *tasks = opendir(dir);
	ck_assert_ptr_nonnull(tasks);
	int threads = 0;
	for (struct dirent *de; (de = readdir(tasks)) != NULL;) {
		if (de->d_name[0] == '.')
			continue;
		proc_ids_once((pid_t)atoi(de->d_name), &fsuid, &caps);
		ck_assert_msg(fsuid != 0, "thread %s has fsuid 0", de->d_name);
		ck_assert_msg(!(caps & (1ULL << 24)), "thread %s has "
				"CAP_SYS_RESOURCE in %llx", de->d_name, caps);
		threads++;
	}
	(void) closedir(tasks);
	ck_assert_int_ge(threads, 1);

	/* a small ext4 with 10% for root, full for the client */
	char mnt[300];
	if (!ext4_mount(d.dir, NULL, mnt, sizeof(mnt))) {
		stop();
		return;
	}
	struct fs_arg a;
	(void) snprintf(a.mnt, sizeof(a.mnt), "%s", mnt);
	struct child c;
	char log[8192];
	child_start(&c, NULL, fill_then_register, &a);
	int status = exit_code(child_end(&c, log, sizeof(log)));
	/* refused: its own faulting finds no block it may use */
	ck_assert_msg(status == 1, "status %d: %s", status, log);
	ck_assert_msg(strstr(log, "cannot fault in the 2097152 bytes"),
			"%s", log);
	/* and root's reserve is whole */
	assert_reserve_whole(mnt);
	ext4_unmount(d.dir, mnt);
	stop();
}
END_TEST

/* the attacker of issue 20: neither root nor nobody */
#define ATTACKER 4245

/*
 * The attack of issue 20, item 5: the client registers a file of its own
 * (its pages and blocks its own), punches a hole in it, fills the file
 * system up to its reserve, and makes rpmad write into the hole (a read
 * from its other registration lands there). Exit 0: rpmad's write
 * failed, or took only blocks outside the reserve; 2: rpmad wrote more
 * than those; 1: refused at registration.
 */
static int
punch_then_fill(struct child *c, void *p)
{
	(void) c;
	struct fs_arg *a = p;
	(void) th_log_capture();
	char path[400];
	(void) snprintf(path, sizeof(path), "%s/target", a->mnt);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	static char block[64 * 1024];
	memset(block, 7, sizeof(block));
	for (size_t off = 0; fd >= 0 && off < 2 * MiB; off += sizeof(block)) {
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			return 98;
	}
	if (fd < 0 || fsync(fd))
		return 98;
	void *ptr = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, 0);
	struct rpma_peer *peer = th_local_peer();
	if (ptr == MAP_FAILED || peer == NULL)
		return 97;
	struct rpma_mr_local *mr = NULL;
	if (rpma_mr_reg(peer, ptr, 2 * MiB, RPMA_MR_USAGE_READ_DST, &mr))
		return 1;
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
			(off_t)MiB))
		return 96;
	(void) snprintf(path, sizeof(path), "%s/fill", a->mnt);
	int fill = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	while (fill >= 0 && write(fill, block, sizeof(block)) > 0)
		;
	if (fill < 0 || errno != ENOSPC)
		return 95;
	(void) fsync(fill);
	/*
	 * What is left outside the reserve: delayed allocation reserves more
	 * than it uses until the fsync, so the client's ENOSPC can leave a
	 * few blocks anyone may take
	 */
	struct statvfs sv;
	if (statvfs(a->mnt, &sv))
		return 93;
	unsigned long long free_bytes =
		(unsigned long long)sv.f_bavail * sv.f_frsize;
	/* rpmad fills the hole: 1 MiB read into the first MiB */
	int ret = loopback_reads(peer, mr, MiB);
	(void) rpma_mr_dereg(&mr);
	(void) rpma_peer_delete(&peer);
	if (ret)
		return 0;
	/*
	 * the read completed: as into pages a NIC has pinned and the file
	 * no longer has, the bytes that found no block went nowhere; those
	 * that did may only have taken blocks outside the reserve (pread
	 * reads a hole without filling it)
	 */
	static char back[1024 * 1024];
	if (pread(fd, back, sizeof(back), 0) != (ssize_t)sizeof(back))
		return 94;
	unsigned long long landed = 0;
	for (size_t i = 0; i < sizeof(back); i++)
		landed += back[i] == 0x5a;
	return landed > free_bytes ? 2 : 0;
}

/* registers a file of the mount to write into; exit 0: it was refused */
static int
register_target(struct child *c, void *p)
{
	(void) c;
	struct fs_arg *a = p;
	(void) th_log_capture();
	char path[400];
	(void) snprintf(path, sizeof(path), "%s/mine", a->mnt);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)(64 * KiB)))
		return 98;
	void *ptr = mmap(NULL, 64 * KiB, PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, 0);
	struct rpma_peer *peer = th_local_peer();
	if (ptr == MAP_FAILED || peer == NULL)
		return 97;
	struct rpma_mr_local *mr = NULL;
	int ret = rpma_mr_reg(peer, ptr, 64 * KiB, RPMA_MR_USAGE_WRITE_DST,
			&mr);
	if (mr)
		(void) rpma_mr_dereg(&mr);
	(void) rpma_peer_delete(&peer);
	return ret == RPMA_E_PROVIDER ? 0 : 1;
}

/*
 * A file system that reserves its blocks for nobody, as this project's
 * own build host mounts / (resuid=65534,resgid=65534): rpmad used to
 * write clients' files as nobody, and a client made it write 8 MiB out of
 * the reserve. Now it writes as its own user, and refuses a file system
 * that reserves blocks for that one.
 */
START_TEST(test_reserved_for_nobody)
{
	if (!child_can_play_users())
		return;
	char dir[] = "/tmp/rpmad-reserve.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	char mnt[300];
	if (!ext4_mount(dir, "resuid=65534,resgid=65534", mnt, sizeof(mnt))) {
		(void) rmdir(dir);
		return;
	}
	/* without a user rpmad, the identity is one no mount reserves for */
	th_log_daemon_start(&d,
			"socket_mode = 0666\n[user 4245]\n"
			"max_registered_bytes = 0\n");
	unsigned fsuid;
	unsigned long long caps;
	proc_ids(d.pid, &fsuid, &caps);
	ck_assert_uint_ne(fsuid, 0);
	ck_assert_uint_ne(fsuid, NOBODY);

	struct fs_arg a;
	(void) snprintf(a.mnt, sizeof(a.mnt), "%s", mnt);
	struct child c;
	char log[8192];
	child_start_as(&c, ATTACKER, NULL, punch_then_fill, &a);
	int status = exit_code(child_end(&c, log, sizeof(log)));
	ck_assert_msg(status == 0, "status %d: %s", status, log);
	assert_reserve_whole(mnt);
	stop();

	/* rpmad told to write as nobody: files there are refused */
	char path[400];
	(void) snprintf(path, sizeof(path), "%s/fill", mnt);
	ck_assert_int_eq(unlink(path), 0);
	th_log_daemon_start(&d,
			"socket_mode = 0666\nfile_user = 65534\n"
			"[user 4245]\nmax_registered_bytes = 0\n");
	ck_assert(wait_text(d.log, "reserves blocks for", TH_WAIT_MS));
	child_start_as(&c, ATTACKER, NULL, register_target, &a);
	status = exit_code(child_end(&c, log, sizeof(log)));
	ck_assert_msg(status == 0, "status %d: %s", status, log);
	ck_assert_msg(strstr(log, "reserves blocks for uid 65534"), "%s", log);
	stop();
	ext4_unmount(dir, mnt);
	(void) rmdir(dir);
}
END_TEST

int
main(void)
{
	const TTest *const tc_socket[] = { test_socket_dir_writable_by_others,
		test_socket_symlink_on_reload, NULL };
	const TTest *const tc_limits[] = { test_limits_per_user,
		test_write_descriptors, test_memlock,
		test_allow_networks_and_log_share, NULL };
	const TTest *const tc_charging[] = { test_memory_cgroup,
		test_reserved_blocks, test_reserved_for_nobody, NULL };
	const struct th_tcase tcases[] = {
		{ "socket", .tests = tc_socket, .timeout = 60 },
		{ "limits", .tests = tc_limits, .timeout = 120 },
		{ "charging", .tests = tc_charging, .timeout = 120 },
	};
	return check_run(th_suite("tenants", tcases, TH_N(tcases)), CK_NORMAL);
}
