// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_ctl_socket.c -- common/ctl_socket.c over a real
 * socketpair(AF_UNIX, SOCK_SEQPACKET): packets with 0..CTL_MAX_FDS
 * descriptors, and every way a packet can be refused without a descriptor
 * staying open; common/ctl_call.c, the request round trip, against a
 * daemon end played here: every step that can fail says which, and leaves
 * no response and no descriptor behind
 */

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_call.h"
#include "ctl_socket.h"
#include "th_suite.h"

static int sv[2];

static void
setup(void)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
			sv), 0);
	/* room for a whole CTL_MAX_MSG packet in flight */
	int size = 4 * CTL_MAX_MSG;
	(void) setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	(void) setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

static void
teardown(void)
{
	(void) close(sv[0]);
	(void) close(sv[1]);
}

/* how many descriptors this process has open */
static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	ck_assert_ptr_nonnull(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] != '.')
			n++;
	}
	(void) closedir(d);
	return n - 1;	/* the directory's own descriptor */
}

/* the n lowest descriptor numbers not in use: where new ones would go */
static void
free_numbers(int *out, int n)
{
	int found = 0;
	for (int fd = 0; found < n && fd < 4096; fd++) {
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			out[found++] = fd;
	}
	ck_assert_int_eq(found, n);
}

static void
assert_closed(const int *numbers, int n)
{
	for (int i = 0; i < n; i++) {
		errno = 0;
		ck_assert_msg(fcntl(numbers[i], F_GETFD) == -1 &&
				errno == EBADF, "fd %d is open", numbers[i]);
	}
}

/* n descriptors of n distinct new files, to tell them apart */
static void
make_fds(int *fds, int n)
{
	for (int i = 0; i < n; i++) {
		char path[] = "/tmp/rpma-unit-ctl.XXXXXX";
		fds[i] = mkstemp(path);
		ck_assert_int_ge(fds[i], 0);
		(void) unlink(path);
	}
}

static uint64_t
inode_of(int fd)
{
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	return (uint64_t)st.st_ino;
}

/* a packet of 0..CTL_MAX_FDS descriptors arrives whole (loop index) */
START_TEST(fds_pass)
{
	int n = _i;
	int fds[CTL_MAX_FDS];
	make_fds(fds, n);
	char msg[100];
	for (int i = 0; i < (int)sizeof(msg); i++)
		msg[i] = (char)(i + n);

	ck_assert_int_eq(ctl_send(sv[0], msg, sizeof(msg), fds, (unsigned)n),
			0);
	char buf[200];
	int got[CTL_MAX_FDS];
	unsigned ngot = 999;
	ck_assert_int_eq(ctl_recv(sv[1], buf, sizeof(buf), got, CTL_MAX_FDS,
			&ngot), (long)sizeof(msg));
	ck_assert_mem_eq(buf, msg, sizeof(msg));
	ck_assert_uint_eq(ngot, (unsigned)n);
	for (int i = 0; i < n; i++) {
		/* the same files, in order, in new close-on-exec descriptors */
		ck_assert_int_ne(got[i], fds[i]);
		ck_assert_uint_eq(inode_of(got[i]), inode_of(fds[i]));
		ck_assert_int_eq(fcntl(got[i], F_GETFD) & FD_CLOEXEC,
				FD_CLOEXEC);
	}
	ctl_close_fds(got, ngot);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(got[i], -1);
	ctl_close_fds(fds, (unsigned)n);
}
END_TEST

START_TEST(send_limits)
{
	static char big[CTL_MAX_MSG + 1];
	int fds[CTL_MAX_FDS + 1];
	for (int i = 0; i <= CTL_MAX_FDS; i++)
		fds[i] = STDIN_FILENO;
	ck_assert_int_eq(ctl_send(sv[0], big, sizeof(big), NULL, 0),
			-EMSGSIZE);
	ck_assert_int_eq(ctl_send(sv[0], "x", 1, fds, CTL_MAX_FDS + 1),
			-EMSGSIZE);

	/* the largest packet goes through */
	memset(big, 'b', sizeof(big));
	ck_assert_int_eq(ctl_send(sv[0], big, CTL_MAX_MSG, NULL, 0), 0);
	char *buf = malloc(CTL_MAX_MSG);
	ck_assert_ptr_nonnull(buf);
	unsigned n;
	int got[1];
	ck_assert_int_eq(ctl_recv(sv[1], buf, CTL_MAX_MSG, got, 1, &n),
			CTL_MAX_MSG);
	ck_assert_mem_eq(buf, big, CTL_MAX_MSG);
	free(buf);
}
END_TEST

/* a packet bigger than the buffer: -EMSGSIZE, every descriptor closed */
START_TEST(packet_too_big)
{
	int fds[3];
	make_fds(fds, 3);
	char msg[64] = "a packet that does not fit";
	ck_assert_int_eq(ctl_send(sv[0], msg, sizeof(msg), fds, 3), 0);
	ctl_close_fds(fds, 3);

	int before = open_fds();
	int would_be[3];
	free_numbers(would_be, 3);
	char buf[10];
	int got[CTL_MAX_FDS];
	unsigned n = 999;
	ck_assert_int_eq(ctl_recv(sv[1], buf, sizeof(buf), got, CTL_MAX_FDS,
			&n), -EMSGSIZE);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(open_fds(), before);
	assert_closed(would_be, 3);

	/* the socket goes on with the next packet */
	ck_assert_int_eq(ctl_send(sv[0], "ok", 2, NULL, 0), 0);
	ck_assert_int_eq(ctl_recv(sv[1], buf, sizeof(buf), got, CTL_MAX_FDS,
			&n), 2);
}
END_TEST

/* more descriptors than asked for: -EMSGSIZE, every one closed */
START_TEST(too_many_fds)
{
	int fds[5];
	make_fds(fds, 5);
	ck_assert_int_eq(ctl_send(sv[0], "five", 4, fds, 5), 0);
	ctl_close_fds(fds, 5);

	int before = open_fds();
	int would_be[5];
	free_numbers(would_be, 5);
	char buf[16];
	int got[CTL_MAX_FDS];
	unsigned n = 999;
	ck_assert_int_eq(ctl_recv(sv[1], buf, sizeof(buf), got, 2, &n),
			-EMSGSIZE);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(open_fds(), before);
	assert_closed(would_be, 5);

	/* none expected at all */
	make_fds(fds, 1);
	ck_assert_int_eq(ctl_send(sv[0], "one", 3, fds, 1), 0);
	ctl_close_fds(fds, 1);
	before = open_fds();
	ck_assert_int_eq(ctl_recv(sv[1], buf, sizeof(buf), got, 0, &n),
			-EMSGSIZE);
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

/* a max_fds above CTL_MAX_FDS is CTL_MAX_FDS */
START_TEST(max_fds_clamped)
{
	int fds[CTL_MAX_FDS];
	make_fds(fds, CTL_MAX_FDS);
	ck_assert_int_eq(ctl_send(sv[0], "all", 3, fds, CTL_MAX_FDS), 0);
	ctl_close_fds(fds, CTL_MAX_FDS);
	char buf[16];
	int got[CTL_MAX_FDS];
	unsigned n = 0;
	ck_assert_int_eq(ctl_recv(sv[1], buf, sizeof(buf), got, 1000, &n), 3);
	ck_assert_uint_eq(n, CTL_MAX_FDS);
	ctl_close_fds(got, n);
}
END_TEST

/* an empty packet with descriptors is never valid: they are closed */
START_TEST(empty_packet_with_fds)
{
	int fds[2];
	make_fds(fds, 2);
	int ret = ctl_send(sv[0], "", 0, fds, 2);
	ctl_close_fds(fds, 2);
	if (ret != 0)
		return;	/* the kernel refused it: nothing arrives */
	int before = open_fds();
	char buf[16];
	int got[CTL_MAX_FDS];
	unsigned n = 999;
	ck_assert_int_eq(ctl_recv(sv[1], buf, sizeof(buf), got, CTL_MAX_FDS,
			&n), -EBADMSG);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

START_TEST(end_of_stream)
{
	(void) close(sv[0]);
	sv[0] = -1;
	char buf[16];
	int got[CTL_MAX_FDS];
	unsigned n = 999;
	ck_assert_int_eq(ctl_recv(sv[1], buf, sizeof(buf), got, CTL_MAX_FDS,
			&n), 0);
	ck_assert_uint_eq(n, 0);
	/* and sending to a closed peer fails without SIGPIPE */
	ck_assert_int_eq(ctl_send(sv[1], "x", 1, NULL, 0), -EPIPE);
}
END_TEST

START_TEST(nothing_pending)
{
	ck_assert_int_eq(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	char buf[16];
	int got[CTL_MAX_FDS];
	unsigned n = 999;
	ck_assert_int_eq(ctl_recv(sv[1], buf, sizeof(buf), got, CTL_MAX_FDS,
			&n), -EAGAIN);
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(close_fds)
{
	int fds[4];
	make_fds(fds, 2);
	fds[2] = -1;
	int keep = fds[0];
	ctl_close_fds(fds, 2);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(fds[i], -1);
	errno = 0;
	ck_assert_int_eq(fcntl(keep, F_GETFD), -1);
	ck_assert_int_eq(errno, EBADF);
	/* negative entries are skipped */
	ctl_close_fds(&fds[2], 1);
	ck_assert_int_eq(fds[2], -1);
}
END_TEST

/* ------------------------------------------------------ the round trip */

/* The daemon's end: an answer to request `id`, queued before the call. */
static void
answer(uint64_t id, const int *fds, unsigned nfds)
{
	Rpmad__Response resp = RPMAD__RESPONSE__INIT;
	Rpmad__Empty ok = RPMAD__EMPTY__INIT;
	resp.id = id;
	resp.body_case = RPMAD__RESPONSE__BODY_OK;
	resp.ok = &ok;
	uint8_t buf[64];
	size_t len = rpmad__response__pack(&resp, buf);
	ck_assert_int_eq(ctl_send(sv[1], buf, len, fds, nfds), 0);
}

/* The daemon's end: the request that arrived, and its descriptors. */
static Rpmad__Request *
request_arrived(int *fds, unsigned *nfds)
{
	static uint8_t buf[CTL_MAX_MSG];
	long n = ctl_recv(sv[1], buf, sizeof(buf), fds, CTL_MAX_FDS, nfds);
	ck_assert_int_gt(n, 0);
	Rpmad__Request *r = rpmad__request__unpack(NULL, (size_t)n, buf);
	ck_assert_ptr_nonnull(r);
	return r;
}

/* A hello numbered `id` through ctl_call, from the client's end. */
static int
call_hello(uint64_t id, const int *fds, unsigned nfds, int timeout_ms,
		struct ctl_answer *ans)
{
	Rpmad__Hello hello;
	Rpmad__Request req;
	ctl_hello(&req, &hello, "test_ctl_socket");
	req.id = id;
	return ctl_call(sv[0], &req, fds, nfds, timeout_ms, ans);
}

/* whether the daemon's end has nothing (more) to read */
static void
assert_nothing_sent(void)
{
	char buf[16];
	int got[CTL_MAX_FDS];
	unsigned n;
	ck_assert_int_eq(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(ctl_recv(sv[1], buf, sizeof(buf), got, CTL_MAX_FDS,
			&n), -EAGAIN);
}

/* descriptors both ways; the answer's are the caller's, in order */
START_TEST(call_ok)
{
	int out[3], in[2];
	make_fds(out, 3);
	make_fds(in, 2);
	answer(7, in, 2);

	int fds[CTL_MAX_FDS];
	struct ctl_answer ans = { .fds = fds };
	ck_assert_int_eq(call_hello(7, out, 3, 1000, &ans), 0);
	ck_assert_ptr_nonnull(ans.resp);
	ck_assert_uint_eq(ans.resp->id, 7);
	ck_assert_int_eq(ans.resp->body_case, RPMAD__RESPONSE__BODY_OK);
	ck_assert_uint_eq(ans.nfds, 2);
	for (int i = 0; i < 2; i++)
		ck_assert_uint_eq(inode_of(fds[i]), inode_of(in[i]));
	rpmad__response__free_unpacked(ans.resp, NULL);
	ctl_close_fds(fds, ans.nfds);

	/* what rpmad got: a hello of this version, and the descriptors */
	int got[CTL_MAX_FDS];
	unsigned n;
	Rpmad__Request *r = request_arrived(got, &n);
	ck_assert_uint_eq(r->id, 7);
	ck_assert_int_eq(r->body_case, RPMAD__REQUEST__BODY_HELLO);
	ck_assert_uint_eq(r->hello->version,
			RPMAD__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT);
	ck_assert_str_eq(r->hello->client_name, "test_ctl_socket");
	ck_assert_uint_eq(n, 3);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(inode_of(got[i]), inode_of(out[i]));
	rpmad__request__free_unpacked(r, NULL);
	ctl_close_fds(got, n);
	ctl_close_fds(out, 3);
	ctl_close_fds(in, 2);
}
END_TEST

/* a caller that takes no descriptors (rpmactl): the answer's are closed */
START_TEST(call_fds_not_taken)
{
	int in[3];
	make_fds(in, 3);
	answer(1, in, 3);
	ctl_close_fds(in, 3);
	int before = open_fds();
	int would_be[3];
	free_numbers(would_be, 3);

	struct ctl_answer ans = { .fds = NULL };
	ck_assert_int_eq(call_hello(1, NULL, 0, 1000, &ans), 0);
	ck_assert_uint_eq(ans.nfds, 0);
	rpmad__response__free_unpacked(ans.resp, NULL);
	ck_assert_int_eq(open_fds(), before);
	assert_closed(would_be, 3);
}
END_TEST

/*
 * An answer to another request, or one that does not decode: -EBADMSG at
 * CTL_STEP_DECODE, no response, its descriptors closed (loop: which).
 */
START_TEST(call_bad_answer)
{
	int in[2];
	make_fds(in, 2);
	if (_i == 0) {
		answer(8, in, 2);
	} else {
		uint8_t junk[32];
		memset(junk, 0xff, sizeof(junk));
		ck_assert_int_eq(ctl_send(sv[1], junk, sizeof(junk), in, 2), 0);
	}
	ctl_close_fds(in, 2);
	int before = open_fds();

	int fds[CTL_MAX_FDS];
	struct ctl_answer ans = { .fds = fds };
	ck_assert_int_eq(call_hello(7, NULL, 0, 1000, &ans), -EBADMSG);
	ck_assert_int_eq(ans.failed, CTL_STEP_DECODE);
	ck_assert_ptr_null(ans.resp);
	ck_assert_uint_eq(ans.nfds, 0);
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

/* an answer with more descriptors than a message may carry */
START_TEST(call_answer_too_many_fds)
{
	int in[CTL_MAX_FDS + 1];
	make_fds(in, CTL_MAX_FDS + 1);
	/* ctl_send refuses that many: the hostile daemon's raw sendmsg */
	union {
		char buf[CMSG_SPACE(sizeof(in))];
		struct cmsghdr align;
	} control;
	memset(&control, 0, sizeof(control));
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control.buf, .msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(in));
	memcpy(CMSG_DATA(cm), in, sizeof(in));
	ck_assert_int_eq(sendmsg(sv[1], &msg, 0), 1);
	ctl_close_fds(in, CTL_MAX_FDS + 1);
	int before = open_fds();

	int fds[CTL_MAX_FDS];
	struct ctl_answer ans = { .fds = fds };
	ck_assert_int_eq(call_hello(3, NULL, 0, 1000, &ans),
			-EMSGSIZE);
	ck_assert_int_eq(ans.failed, CTL_STEP_RECV);
	ck_assert_ptr_null(ans.resp);
	ck_assert_uint_eq(ans.nfds, 0);
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

/* no answer in time: sent, -ETIMEDOUT at CTL_STEP_WAIT */
START_TEST(call_no_answer)
{
	struct ctl_answer ans = { .fds = NULL };
	ck_assert_int_eq(call_hello(5, NULL, 0, 20, &ans), -ETIMEDOUT);
	ck_assert_int_eq(ans.failed, CTL_STEP_WAIT);
	ck_assert_ptr_null(ans.resp);
	int got[CTL_MAX_FDS];
	unsigned n;
	Rpmad__Request *r = request_arrived(got, &n);
	ck_assert_uint_eq(r->id, 5);
	rpmad__request__free_unpacked(r, NULL);
}
END_TEST

/* rpmad closes after reading: -ECONNRESET at CTL_STEP_END */
START_TEST(call_daemon_ends)
{
	ck_assert_int_eq(shutdown(sv[1], SHUT_WR), 0);
	struct ctl_answer ans = { .fds = NULL };
	ck_assert_int_eq(call_hello(5, NULL, 0, 1000, &ans),
			-ECONNRESET);
	ck_assert_int_eq(ans.failed, CTL_STEP_END);
	ck_assert_ptr_null(ans.resp);
}
END_TEST

/* rpmad is gone: nothing sent, CTL_STEP_SEND */
START_TEST(call_daemon_gone)
{
	(void) close(sv[1]);
	sv[1] = -1;
	struct ctl_answer ans = { .fds = NULL };
	ck_assert_int_eq(call_hello(0, NULL, 0, 1000, &ans), -EPIPE);
	ck_assert_int_eq(ans.failed, CTL_STEP_SEND);
	ck_assert_ptr_null(ans.resp);
}
END_TEST

/* larger than a message may be, or too many descriptors: nothing sent */
START_TEST(call_too_large)
{
	char *name = malloc(CTL_MAX_MSG + 1);
	ck_assert_ptr_nonnull(name);
	memset(name, 'n', CTL_MAX_MSG);
	name[CTL_MAX_MSG] = '\0';
	Rpmad__Hello hello;
	Rpmad__Request req;
	ctl_hello(&req, &hello, name);
	struct ctl_answer ans = { .fds = NULL };
	ck_assert_int_eq(ctl_call(sv[0], &req, NULL, 0, 1000, &ans),
			-EMSGSIZE);
	ck_assert_int_eq(ans.failed, CTL_STEP_PACK);
	free(name);

	int fds[CTL_MAX_FDS + 1];
	for (int i = 0; i <= CTL_MAX_FDS; i++)
		fds[i] = STDIN_FILENO;
	ck_assert_int_eq(call_hello(1, fds, CTL_MAX_FDS + 1, 1000, &ans),
			-EMSGSIZE);
	ck_assert_int_eq(ans.failed, CTL_STEP_SEND);
	assert_nothing_sent();
}
END_TEST

/* ------------------------------------------------------- late answers */

/* A caller's requests answered late: these ids, and what came for them. */
struct late_ids {
	uint64_t ids[4];
	unsigned n;
	unsigned taken;
	unsigned fds_seen;
};

static bool
take_late(void *arg, Rpmad__Response *resp, int *fds, unsigned nfds)
{
	struct late_ids *l = arg;
	for (unsigned i = 0; i < l->n; i++) {
		if (l->ids[i] != resp->id)
			continue;
		l->ids[i] = 0;
		l->taken++;
		l->fds_seen += nfds;
		ctl_close_fds(fds, nfds);
		rpmad__response__free_unpacked(resp, NULL);
		return true;
	}
	return false;
}

/*
 * Answers to earlier requests come first: each is offered to the caller's
 * late hook and the call goes on to its own; their descriptors are the
 * hook's (it closes them here).
 */
START_TEST(call_late_answers_first)
{
	int in[2];
	make_fds(in, 2);
	answer(3, in, 2);
	answer(4, NULL, 0);
	answer(7, NULL, 0);
	ctl_close_fds(in, 2);
	int before = open_fds();

	struct late_ids l = { .ids = { 3, 4 }, .n = 2 };
	const struct ctl_late late = { .answer = take_late, .arg = &l };
	struct ctl_answer ans = { .fds = NULL, .late = &late };
	ck_assert_int_eq(call_hello(7, NULL, 0, 1000, &ans), 0);
	ck_assert_uint_eq(ans.resp->id, 7);
	rpmad__response__free_unpacked(ans.resp, NULL);
	ck_assert_uint_eq(l.taken, 2);
	ck_assert_uint_eq(l.fds_seen, 2);
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

/* An answer to nothing asked, with a hook that does not know it either. */
START_TEST(call_late_unknown)
{
	answer(5, NULL, 0);
	answer(7, NULL, 0);
	struct late_ids l = { .ids = { 3 }, .n = 1 };
	const struct ctl_late late = { .answer = take_late, .arg = &l };
	struct ctl_answer ans = { .fds = NULL, .late = &late };
	ck_assert_int_eq(call_hello(7, NULL, 0, 1000, &ans), -EBADMSG);
	ck_assert_int_eq(ans.failed, CTL_STEP_DECODE);
	ck_assert_uint_eq(l.taken, 0);
}
END_TEST

/*
 * The time-out covers the late answers too: they do not extend it. A
 * late answer, then nothing: -ETIMEDOUT at CTL_STEP_WAIT.
 */
START_TEST(call_late_then_nothing)
{
	answer(3, NULL, 0);
	struct late_ids l = { .ids = { 3 }, .n = 1 };
	const struct ctl_late late = { .answer = take_late, .arg = &l };
	struct ctl_answer ans = { .fds = NULL, .late = &late };
	ck_assert_int_eq(call_hello(7, NULL, 0, 50, &ans), -ETIMEDOUT);
	ck_assert_int_eq(ans.failed, CTL_STEP_WAIT);
	ck_assert_uint_eq(l.taken, 1);
}
END_TEST

/* Between calls: late answers taken, then nothing, or the end, or junk. */
START_TEST(drain)
{
	struct late_ids l = { .ids = { 3, 4 }, .n = 2 };
	const struct ctl_late late = { .answer = take_late, .arg = &l };
	ck_assert_int_eq(ctl_drain(sv[0], &late), 0);
	answer(3, NULL, 0);
	answer(4, NULL, 0);
	ck_assert_int_eq(ctl_drain(sv[0], &late), 0);
	ck_assert_uint_eq(l.taken, 2);
	answer(9, NULL, 0);
	ck_assert_int_eq(ctl_drain(sv[0], &late), -EBADMSG);
	ck_assert_int_eq(shutdown(sv[1], SHUT_WR), 0);
	ck_assert_int_eq(ctl_drain(sv[0], &late), -ECONNRESET);
}
END_TEST

/*
 * A peer that reads nothing: once its queue is full the call waits for
 * room only as long as its time-out, and sends nothing (CTL_STEP_SEND).
 */
START_TEST(call_no_room)
{
	/* fill the queue as a stopped rpmad leaves it */
	char big[4096] = { 0 };
	ck_assert_int_eq(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	while (ctl_send(sv[0], big, sizeof(big), NULL, 0) == 0)
		;
	ck_assert_int_eq(fcntl(sv[0], F_SETFL, 0), 0);
	struct ctl_answer ans = { .fds = NULL };
	ck_assert_int_eq(call_hello(1, NULL, 0, 50, &ans), -ETIMEDOUT);
	ck_assert_int_eq(ans.failed, CTL_STEP_SEND);
}
END_TEST

int
main(void)
{
	const struct th_test tc_packets[] = { TH_LOOP(fds_pass, 0,
							      CTL_MAX_FDS + 1),
		TH_TEST(send_limits), TH_TEST(packet_too_big),
		TH_TEST(too_many_fds), TH_TEST(max_fds_clamped),
		TH_TEST(empty_packet_with_fds), TH_TEST(end_of_stream),
		TH_TEST(nothing_pending), TH_TEST(close_fds), TH_END };
	const struct th_test tc_round_trip[] = { TH_TEST(call_ok),
		TH_TEST(call_fds_not_taken), TH_LOOP(call_bad_answer, 0, 2),
		TH_TEST(call_answer_too_many_fds), TH_TEST(call_no_answer),
		TH_TEST(call_daemon_ends), TH_TEST(call_daemon_gone),
		TH_TEST(call_too_large), TH_TEST(call_no_room), TH_END };
	const TTest *const tc_late_answers[] = { call_late_answers_first,
		call_late_unknown, call_late_then_nothing, drain, NULL };
	const struct th_tcase tcases[] = {
		{ "packets", .steps = tc_packets, .setup = setup,
				.teardown = teardown },
		{ "round trip", .steps = tc_round_trip, .setup = setup,
				.teardown = teardown },
		{ "late answers", .tests = tc_late_answers, .setup = setup,
				.teardown = teardown },
	};
	return check_run_forked(th_suite("ctl_socket", tcases, TH_N(tcases)),
			CK_NORMAL);
}
