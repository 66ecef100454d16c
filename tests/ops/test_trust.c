// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_trust.c -- the library and rpmad trust only each other: the
 * attacks of issue 19 (item 3), replayed, and what stops them now.
 *  - A relay of another user at RPMAD_SOCKET: the library asks the kernel
 *    who listens (SO_PEERCRED) and sends nothing to anyone but root (or
 *    rpmad's configured user); it logs why.
 *  - A privileged program (file capabilities) run by that user with
 *    RPMAD_SOCKET at the relay: the library does not read RPMAD_SOCKET
 *    there (secure_getenv); the relay hears nothing. Through a whole
 *    session the library reads RPMAD_SOCKET and RPMA_WAIT_SPIN_US, with
 *    secure_getenv, and no other variable.
 *  - rpmad's socket under a directory of another user, through a symlink
 *    of another user in a sticky directory, or under a directory its
 *    group may write: rpmad refuses to start and names the component;
 *    under a root-owned directory in a sticky one (as /tmp) it starts.
 *
 * The other user is uid 65534, played by forked children and commands;
 * the tests need root and skip without it.
 */

#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "librpma.h"
#include "th_child.h"
#include "th_logcap.h"

#define OTHER 65534

static void
drop_to_other(void)
{
	if (setgroups(0, NULL) || setgid(OTHER) || setuid(OTHER))
		_exit(99);
}

/* ------------------------------------------------------------ the relay */

/*
 * A listening socket of uid OTHER, in a directory of its own under /tmp,
 * run by a child until the test is done with it; then it says how many
 * connections it accepted and how many bytes it was sent.
 */
struct relay {
	pid_t pid;
	int ctl;		/* to the child: closed when the test is done */
	int report;		/* from the child: the path, then the counts */
	char path[PATH_MAX];
	unsigned accepted;
	size_t bytes;
};

static void
relay_serve(int ctl, int report)
{
	drop_to_other();
	char dir[] = "/tmp/rpmad-relay.XXXXXX";
	if (mkdtemp(dir) == NULL)
		_exit(98);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	(void) snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/rpmad.sock",
			dir);
	int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) ||
			listen(lfd, 8))
		_exit(97);
	(void) dprintf(report, "%s\n", sun.sun_path);
	unsigned accepted = 0;
	size_t bytes = 0;
	struct pollfd pfd[2] = { { .fd = ctl, .events = POLLIN },
		{ .fd = lfd, .events = POLLIN } };
	bool done = false;
	while (!done && poll(pfd, 2, -1) >= 0) {
		/* the test is done: take what still waits, then report */
		done = pfd[0].revents & (POLLIN | POLLHUP);
		int c;
		while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
			accepted++;
			/* whatever the client sends before it hangs up */
			char buf[65536];
			struct pollfd cp = { .fd = c, .events = POLLIN };
			ssize_t n;
			while (poll(&cp, 1, 2000) > 0 &&
					(n = recv(c, buf, sizeof(buf), 0)) > 0)
				bytes += (size_t)n;
			(void) close(c);
		}
	}
	(void) unlink(sun.sun_path);
	(void) rmdir(dir);
	(void) dprintf(report, "%u %zu\n", accepted, bytes);
	_exit(0);
}

static void
relay_start(struct relay *r)
{
	int ctl[2], report[2];
	ck_assert_int_eq(pipe(ctl), 0);
	ck_assert_int_eq(pipe(report), 0);
	r->pid = fork();
	ck_assert_int_ge(r->pid, 0);
	if (r->pid == 0) {
		(void) close(ctl[1]);
		(void) close(report[0]);
		relay_serve(ctl[0], report[1]);
	}
	(void) close(ctl[0]);
	(void) close(report[1]);
	r->ctl = ctl[1];
	r->report = report[0];
	FILE *f = fdopen(dup(r->report), "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(r->path, sizeof(r->path), f));
	(void) fclose(f);
	/* listening already: it said where only after listen() */
	r->path[strcspn(r->path, "\n")] = '\0';
}

static void
relay_stop(struct relay *r)
{
	(void) close(r->ctl);
	char line[64] = "";
	ssize_t n = 0, got;
	while ((got = read(r->report, line + n, sizeof(line) - 1 - (size_t)n)) >
			0)
		n += got;
	line[n > 0 ? n : 0] = '\0';
	(void) close(r->report);
	int status;
	ck_assert_int_eq(waitpid(r->pid, &status, 0), r->pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			"relay: status %d", status);
	/* the first line was the path, read already */
	ck_assert_int_eq(sscanf(line, "%u %zu", &r->accepted, &r->bytes), 2);
}

/*
 * A program run as root with RPMAD_SOCKET at another user's relay (a
 * mistake, or someone else's doing): the library refuses before it sends
 * a byte, and says who listens there.
 */
START_TEST(test_relay_of_another_user)
{
	if (!child_can_play_users())
		return;
	struct relay r;
	relay_start(&r);
	ck_assert_int_eq(setenv("RPMAD_SOCKET", r.path, 1), 0);
	ck_assert_int_eq(th_log_capture(), 0);
	struct ibv_context *dev;
	ck_assert_int_eq(rpma_utils_get_ibv_context("127.0.0.1",
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev), RPMA_E_PROVIDER);
	/* asked again, refused again: nothing is remembered as good */
	ck_assert_int_eq(rpma_utils_get_ibv_context("127.0.0.1",
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev), RPMA_E_PROVIDER);
	char want[PATH_MAX + 64];
	(void) snprintf(want, sizeof(want), "refusing %s: it is served by "
			"uid %d", r.path, OTHER);
	ck_assert_msg(strstr(th_logged, want), "%s", th_logged);
	ck_assert_msg(strstr(th_logged, "nothing was sent to it"), "%s",
			th_logged);
	relay_stop(&r);
	ck_assert_uint_eq(r.accepted, 2);
	ck_assert_uint_eq(r.bytes, 0);
	(void) unsetenv("RPMAD_SOCKET");
}
END_TEST

/*
 * The attack: a program with cap_ipc_lock+ep, run by the relay's
 * user with RPMAD_SOCKET at the relay. The library runs in secure mode
 * there and does not read RPMAD_SOCKET: it goes to the default socket,
 * and the relay hears nothing.
 */
START_TEST(test_privileged_program_ignores_socket_env)
{
	if (!child_can_play_users())
		return;
	char dir[] = "/tmp/rpmad-trust.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	char prog[PATH_MAX];
	(void) snprintf(prog, sizeof(prog), "%s/ops_device", dir);
	char *cp[] = { "cp", (char *)builddir_path("tests/ops/ops_device"),
		prog, NULL };
	char *setcap[] = { "setcap", "cap_ipc_lock+ep", prog, NULL };
	struct run r;
	ck_assert_int_eq(run_cmd(&r, cp, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	run_free(&r);
	if (run_cmd(&r, setcap, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS) ||
			r.status != 0) {
		(void) fprintf(stderr, "setcap failed (libcap2-bin, or a file "
				"system without capabilities): skipping\n");
		if (r.out)
			run_free(&r);
		goto out;
	}
	run_free(&r);

	struct relay relay;
	relay_start(&relay);
	char env[PATH_MAX + 16];
	(void) snprintf(env, sizeof(env), "RPMAD_SOCKET=%s", relay.path);
	char *argv[] = { "env", env, prog, NULL };
	ck_assert_int_eq(run_cmd(&r, argv, OTHER, OTHER, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_msg(r.status == 0 && strstr(r.out, "result "), "%d: %s%s",
			r.status, r.out, r.err);
	ck_assert_msg(strstr(r.out, relay.path) == NULL, "%s", r.out);
	/* it went where rpmad lives by default (running there or not) */
	ck_assert_msg(strstr(r.out, "result 0") ||
			strstr(r.out, "/run/rpmad/rpmad.sock"), "%s", r.out);
	run_free(&r);
	relay_stop(&relay);
	ck_assert_uint_eq(relay.accepted, 0);
	ck_assert_uint_eq(relay.bytes, 0);
out:
	(void) unlink(prog);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* ---------------------------------------------------- the environment */

/*
 * What the library asks of the environment, seen through this program's
 * own getenv and secure_getenv: a shared library calls the executable's
 * definitions of them first.
 */
static bool recording;
static char asked[1024];

static void
record(const char *how, const char *name)
{
	/* Check's own, which its assertions ask for */
	if (!recording || strncmp(name, "CK_", 3) == 0)
		return;
	size_t used = strlen(asked);
	(void) snprintf(asked + used, sizeof(asked) - used, "%s(%s)\n", how,
			name);
}

char *
getenv(const char *name)
{
	record("getenv", name);
	char *(*next)(const char *) = (char *(*)(const char *))
		dlsym(RTLD_NEXT, "getenv");
	return next(name);
}

char *
secure_getenv(const char *name)
{
	record("secure_getenv", name);
	char *(*next)(const char *) = (char *(*)(const char *))
		dlsym(RTLD_NEXT, "secure_getenv");
	return next(name);
}

/*
 * Through a session with every kind of object, the library reads two
 * variables, each with secure_getenv, and nothing else.
 */
START_TEST(test_environment_read)
{
	struct test_daemon od;
	ck_assert_int_eq(test_daemon_start_cfg(&od, NULL), 0);
	char port[16];
	ck_assert_int_eq(it_free_port(port, sizeof(port)), 0);
	asked[0] = '\0';
	recording = true;
	struct ibv_context *dev;
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *mr = NULL;
	static char buf[4096] __attribute__((aligned(4096)));
	ck_assert_int_eq(rpma_utils_get_ibv_context("127.0.0.1",
			RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev), 0);
	ck_assert_int_eq(rpma_peer_new(dev, &peer), 0);
	ck_assert_int_eq(rpma_mr_reg(peer, buf, sizeof(buf),
			RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &mr), 0);
	ck_assert_int_eq(rpma_ep_listen(peer, "127.0.0.1", port, &ep), 0);
	ck_assert_int_eq(rpma_conn_req_new(peer, "127.0.0.1", port, NULL,
			&req), 0);
	ck_assert_int_eq(rpma_conn_req_connect(&req, NULL, &conn), 0);
	struct rpma_conn_req *in = NULL;
	struct pollfd pfd = { .events = POLLIN };
	ck_assert_int_eq(rpma_ep_get_fd(ep, &pfd.fd), 0);
	ck_assert_int_eq(poll(&pfd, 1, TH_WAIT_MS), 1);
	ck_assert_int_eq(rpma_ep_next_conn_req(ep, NULL, &in), 0);
	struct rpma_conn *srv = NULL;
	ck_assert_int_eq(rpma_conn_req_connect(&in, NULL, &srv), 0);
	enum rpma_conn_event ev;
	ck_assert_int_eq(rpma_conn_next_event(conn, &ev), 0);
	ck_assert_int_eq(ev, RPMA_CONN_ESTABLISHED);
	ck_assert_int_eq(rpma_conn_next_event(srv, &ev), 0);
	ck_assert_int_eq(ev, RPMA_CONN_ESTABLISHED);
	/* a send into a receive, waited for */
	struct rpma_cq *cq;
	ck_assert_int_eq(rpma_conn_get_cq(srv, &cq), 0);
	ck_assert_int_eq(rpma_recv(srv, mr, 0, 64, NULL), 0);
	ck_assert_int_eq(rpma_send(conn, mr, 64, 64, RPMA_F_COMPLETION_ON_ERROR,
			NULL), 0);
	ck_assert_int_eq(rpma_cq_wait(cq), 0);
	ck_assert_int_eq(rpma_conn_disconnect(conn), 0);
	ck_assert_int_eq(rpma_conn_delete(&conn), 0);
	ck_assert_int_eq(rpma_conn_delete(&srv), 0);
	ck_assert_int_eq(rpma_ep_shutdown(&ep), 0);
	ck_assert_int_eq(rpma_mr_dereg(&mr), 0);
	ck_assert_int_eq(rpma_peer_delete(&peer), 0);
	recording = false;

	ck_assert_msg(strstr(asked, "secure_getenv(RPMAD_SOCKET)") &&
			strstr(asked, "secure_getenv(RPMA_WAIT_SPIN_US)"), "%s",
			asked);
	size_t ours = count_lines_with(asked, "secure_getenv(RPMA_", NULL) +
			count_lines_with(asked, "secure_getenv(RPMAD_", NULL);
	ck_assert_msg(count_lines_with(asked, "(", NULL) == ours, "%s", asked);
	ck_assert_int_eq(test_daemon_stop(&od), 0);
}
END_TEST

/* ------------------------------------------------------- rpmad's socket */

static char base[64];

static const char *
at(const char *rel)
{
	return th_path(base, rel);
}

static void
setup_base(void)
{
	(void) snprintf(base, sizeof(base), "/tmp/rpmad-trust.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
	ck_assert_int_eq(chmod(base, 0755), 0);
}

static void
teardown_base(void)
{
	th_remove_tree(base);
}

static void
make_dir(const char *rel, mode_t mode, uid_t owner)
{
	ck_assert_int_eq(th_mkdir_owned(at(rel), mode, owner), 0);
}

/*
 * rpmad with its socket at `sock` must refuse to start, naming `who` and
 * `why`, and leave no socket there.
 */
static void
rpmad_refuses(const char *sock, const char *who, const char *why)
{
	const char *bin = getenv("RPMAD_BIN");
	char *argv[] = { (char *)(bin && *bin ? bin : "rpmad"), "--foreground",
		"--socket", (char *)sock, "--transport", "tcp", "--config",
		"/dev/null", NULL };
	struct run r;
	ck_assert_int_eq(run_cmd(&r, argv, (uid_t) -1, 0, NULL, 0, TH_WAIT_MS),
			0);
	ck_assert_msg(r.status != 0, "rpmad started on %s", sock);
	ck_assert_msg(strstr(r.err, who) && strstr(r.err, why),
			"%s: wanted \"%s\" ... \"%s\" in:\n%s", sock, who, why,
			r.err);
	run_free(&r);
	struct stat st;
	ck_assert_int_ne(lstat(sock, &st), 0);
}

/*
 * A root-owned directory under a directory of another user: that user can
 * rename it away and put one of their own in its place, with a socket of
 * their own in it.
 */
START_TEST(test_socket_under_attacker_dir)
{
	if (!child_can_play_users())
		return;
	make_dir("evil", 0755, OTHER);
	make_dir("evil/run", 0700, 0);
	rpmad_refuses(at("evil/run/rpmad.sock"), at("evil"),
			"belongs to uid 65534");
	/* the attack of the issue, had rpmad started: the directory swapped */
	ck_assert_int_eq(rename(at("evil/run"), at("evil/old")), 0);
}
END_TEST

/*
 * A symlink of another user in a sticky directory anyone may write (as
 * /tmp), to a root-owned directory: its owner can point it elsewhere.
 */
START_TEST(test_socket_through_attacker_symlink)
{
	if (!child_can_play_users())
		return;
	make_dir("run", 0700, 0);
	make_dir("tmp", 01777, 0);
	ck_assert_int_eq(symlink(at("run"), at("tmp/link")), 0);
	ck_assert_int_eq(lchown(at("tmp/link"), OTHER, OTHER), 0);
	rpmad_refuses(at("tmp/link/rpmad.sock"), at("tmp/link"),
			"belongs to uid 65534 and lies in");
	struct stat st;
	ck_assert_int_ne(lstat(at("run/rpmad.sock"), &st), 0);
}
END_TEST

/* A directory on the way its group may write (and that is not sticky). */
START_TEST(test_socket_under_group_writable_dir)
{
	if (!child_can_play_users())
		return;
	make_dir("shared", 0775, 0);
	make_dir("shared/run", 0700, 0);
	rpmad_refuses(at("shared/run/rpmad.sock"), at("shared"),
			"may be written by its group");
}
END_TEST

/*
 * What root owns in a sticky directory nobody else can replace: a
 * root-owned 0700 directory in /tmp-like sticky directory serves, as the
 * tests' rpmads in /tmp do. A root-owned symlink there is as good.
 */
START_TEST(test_socket_in_sticky_dir_of_root)
{
	if (!child_can_play_users())
		return;
	make_dir("tmp", 01777, 0);
	make_dir("tmp/run", 0700, 0);
	ck_assert_int_eq(symlink(at("tmp/run"), at("tmp/link")), 0);
	const char *bin = getenv("RPMAD_BIN");
	char *argv[] = { (char *)(bin && *bin ? bin : "rpmad"), "--foreground",
		"--socket", (char *)at("tmp/link/rpmad.sock"), "--transport",
		"tcp", "--config", "/dev/null", NULL };
	struct proc p;
	char err[PATH_MAX];
	(void) snprintf(err, sizeof(err), "%s/rpmad.log", base);
	ck_assert_int_eq(proc_start(&p, argv, NULL, err), 0);
	ck_assert_msg(th_wait_socket(at("tmp/run/rpmad.sock"), TH_WAIT_MS),
			"%s", read_text(err));
	ck_assert_int_eq(proc_end(&p, SIGTERM), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_library[] = { test_relay_of_another_user,
		test_privileged_program_ignores_socket_env,
		test_environment_read, NULL };
	const TTest *const tc_rpmad[] = { test_socket_under_attacker_dir,
		test_socket_through_attacker_symlink,
		test_socket_under_group_writable_dir,
		test_socket_in_sticky_dir_of_root, NULL };
	const struct th_tcase tcases[] = {
		{ "library", .tests = tc_library, .timeout = 60 },
		{ "rpmad", .tests = tc_rpmad, .timeout = 60,
				.setup = setup_base,
				.teardown = teardown_base },
	};
	return check_run(th_suite("trust", tcases, TH_N(tcases)), CK_NORMAL);
}
