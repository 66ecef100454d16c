// SPDX-License-Identifier: BSD-3-Clause
/*
 * hostile_ctl.c -- a client that abuses the control socket.
 *
 * Packets no client sends (oversized, empty, undecodable, with 32, 40 or
 * 253 descriptors), well-formed requests naming objects of another session
 * or of nobody, registrations whose segments do not fit, private data of
 * 300 bytes, and descriptors of every kind where a registration expects a
 * file: pipes, sockets, a directory, /dev/null, an eventfd, a memfd that
 * can shrink, read-only files for writable usages. Each gets an error
 * answer or the end of its session; rpmad keeps serving, keeps no
 * descriptor it was passed and leaves other sessions' objects alone.
 *
 * And a file registered by its application and then truncated under a
 * remote writer: rpmad must not die of SIGBUS; the writes fail with
 * IBV_WC_REM_ACCESS_ERR (rpmad/core/guard.c), over the wire and through the
 * memory-to-memory shortcut of one rpmad.
 *
 * The control protocol is spoken here directly (proto/rpmad.proto);
 * test_codec_proto.c covers undecodable and oddly filled requests of one
 * session, this file what crosses sessions and what descriptors do.
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_socket.h"
#include "hostile.h"
#include "rpmad.pb-c.h"
#include "th_ctl.h"
#include "th_suite.h"

#define PAGE 4096
#define RW (RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST)

/* ------------------------------------------------- objects of a session */

/* A session of a client of this program's own, said hello. */
static void
sess_hello(struct th_ctl *s, const struct test_daemon *d)
{
	ck_assert_int_eq(th_ctl_open(s, d->socket, "hostile_ctl"), 0);
}

/* The answer to a request: a success of this kind. */
static Rpmad__Response *
answer_ok(struct th_ctl *s, Rpmad__Request *req, const int *fds, unsigned nfds)
{
	Rpmad__Response *r = NULL;
	ck_assert_int_eq(th_ctl_call(s, req, fds, nfds, &r), 0);
	ck_assert_msg(r->error == NULL, "request %d: %s", (int) req->body_case,
			r->error ? r->error->message : "");
	return r;
}

static uint64_t
new_peer(struct th_ctl *s)
{
	struct th_req q;
	Rpmad__Response *r = answer_ok(s, th_req_device_get(&q, IT_ADDR, false),
			NULL, 0);
	uint32_t dev = r->device->device_id;
	rpmad__response__free_unpacked(r, NULL);

	r = answer_ok(s, th_req_id(&q, RPMAD__REQUEST__BODY_PEER_NEW, dev),
			NULL, 0);
	uint64_t id = r->peer->peer_id;
	rpmad__response__free_unpacked(r, NULL);
	return id;
}

/* A memfd of `size` bytes sealed as the library seals its own. */
static int
sealed_memfd(size_t size)
{
	int fd = memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW),
			0);
	return fd;
}

/* A registration of one page, descriptor 0 (the caller adjusts q->u.mr_reg). */
static Rpmad__Request *
reg_init(struct th_req *q, uint64_t peer, uint32_t usage)
{
	return th_req_mr_reg(q, peer, 0x7f0000000000ull, PAGE, usage);
}

/* The code rpmad answers a request of a kind that names object id with. */
static int
id_code(struct th_ctl *s, Rpmad__Request__BodyCase kind, uint64_t id,
		const int *fds, unsigned nfds)
{
	struct th_req q;
	return th_ctl_code(s, th_req_id(&q, kind, id), fds, nfds);
}

static uint64_t
new_mr(struct th_ctl *s, uint64_t peer)
{
	struct th_req q;
	int fd = sealed_memfd(PAGE);
	Rpmad__Response *resp = answer_ok(s, reg_init(&q, peer, RW), &fd, 1);
	(void) close(fd);
	uint64_t id = resp->mr->mr_id;
	rpmad__response__free_unpacked(resp, NULL);
	return id;
}

/* ------------------------------------------------------ bad packets */

START_TEST(test_bad_packets)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 1), 0);
	struct test_daemon *d = &env.d[0];
	pid_t pid = d->pid;
	int base = it_proc_fds(pid);

	/* a bystander whose session must survive all of it */
	struct th_ctl by;
	sess_hello(&by, d);
	uint64_t by_peer = new_peer(&by);

	static uint8_t big[CTL_MAX_MSG + 4096];
	memset(big, 0x52, sizeof(big));
	int many[253];
	for (int i = 0; i < 253; i++)
		many[i] = STDERR_FILENO;
	struct th_ctl s;
	struct th_req q;

	/* larger than any control message: the session ends */
	sess_hello(&s, d);
	ck_assert_int_eq(th_ctl_ended_after(&s, big, sizeof(big), NULL, 0), 1);
	th_ctl_close(&s);

	/* an empty packet ends the session too */
	sess_hello(&s, d);
	ck_assert_int_eq(th_ctl_ended_after(&s, big, 0, NULL, 0), 1);
	th_ctl_close(&s);

	/* more descriptors than a message may carry: 33, 40, 253 */
	static const unsigned counts[] = { 33, 40, 253 };
	for (unsigned i = 0; i < 3; i++) {
		sess_hello(&s, d);
		uint8_t buf[64];
		size_t len = rpmad__request__pack(
				th_req_id(&q, RPMAD__REQUEST__BODY_PEER_DELETE,
						0),
				buf);
		ck_assert_int_eq(th_ctl_ended_after(&s, buf, len, many,
						 counts[i]),
				1);
		th_ctl_close(&s);
	}

	/* 32 (the most) where none belong: an error; the session goes on */
	sess_hello(&s, d);
	ck_assert_int_eq(id_code(&s, RPMAD__REQUEST__BODY_PEER_DELETE, 0, many,
					 CTL_MAX_FDS),
			RPMA_E_INVAL);

	/* a registration that says 3 descriptors and carries 2, or 32 */
	uint64_t peer = new_peer(&s);
	Rpmad__Request *reg = reg_init(&q, peer, RPMA_MR_USAGE_READ_SRC);
	q.u.mr_reg.fd_count = 3;
	ck_assert_int_eq(th_ctl_code(&s, reg, many, 2), RPMA_E_INVAL);
	ck_assert_int_eq(th_ctl_code(&s, reg, many, 32), RPMA_E_INVAL);

	/* a registration cut short, with its descriptor */
	q.u.mr_reg.fd_count = 1;
	uint8_t buf[512];
	reg->id = 99;
	size_t len = rpmad__request__pack(reg, buf);
	int fd = sealed_memfd(PAGE);
	for (size_t cut = len - 1; cut > 0; cut = cut > 3 ? cut - 3 : 0) {
		int ended = th_ctl_ended_after(&s, buf, cut, &fd, 1);
		ck_assert_int_ge(ended, 0);
		if (!ended)
			continue;
		th_ctl_close(&s);
		sess_hello(&s, d);
	}
	(void) close(fd);

	/* undecodable, with descriptors */
	memset(buf, 0xff, sizeof(buf));
	ck_assert_int_eq(th_ctl_ended_after(&s, buf, 100, many, 3), 1);
	th_ctl_close(&s);

	/* the bystander is fine; nothing was kept */
	ck_assert_int_eq(it_daemon_serves(d, pid), 0);
	ck_assert_int_eq(id_code(&by, RPMAD__REQUEST__BODY_PEER_DELETE, by_peer,
					 NULL, 0),
			0);
	th_ctl_close(&by);
	ck_assert_int_le(it_proc_wait_fds(pid, base, IT_WAIT_MS), base);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* -------------------------------- objects of another session, of nobody */

/* Every request that names an object, by the field it names it with. */
static const Rpmad__Request__BodyCase naming[] = {
	RPMAD__REQUEST__BODY_PEER_DELETE,
	RPMAD__REQUEST__BODY_MR_REG,
	RPMAD__REQUEST__BODY_MR_DEREG,
	RPMAD__REQUEST__BODY_MR_ADVISE,
	RPMAD__REQUEST__BODY_EP_LISTEN,
	RPMAD__REQUEST__BODY_EP_SHUTDOWN,
	RPMAD__REQUEST__BODY_EP_NEXT_CONN_REQ,
	RPMAD__REQUEST__BODY_CONN_REQ_NEW,
	RPMAD__REQUEST__BODY_CONN_REQ_DELETE,
	RPMAD__REQUEST__BODY_CONN_REQ_CONNECT,
	RPMAD__REQUEST__BODY_CONN_NEXT_EVENT,
	RPMAD__REQUEST__BODY_CONN_DISCONNECT,
	RPMAD__REQUEST__BODY_CONN_DELETE,
};

/* A well-formed request of this kind naming `id`, to port (a listener). */
static Rpmad__Request *
naming_req(struct th_req *q, Rpmad__Request__BodyCase kind, uint64_t id,
		const char *port)
{
	Rpmad__Request *req;
	switch (kind) {
	case RPMAD__REQUEST__BODY_MR_REG:
		return reg_init(q, id, RPMA_MR_USAGE_READ_SRC);
	case RPMAD__REQUEST__BODY_MR_ADVISE:
		return th_req_mr_advise(q, id, 0, 1, 0);
	case RPMAD__REQUEST__BODY_EP_LISTEN:
		return th_req_ep_listen(q, id, IT_ADDR, "0");
	case RPMAD__REQUEST__BODY_EP_NEXT_CONN_REQ:
		req = th_req_ep_next(q, id);
		break;
	case RPMAD__REQUEST__BODY_CONN_REQ_NEW:
		req = th_req_conn_req_new(q, id, IT_ADDR, port);
		break;
	default:
		return th_req_id(q, kind, id);
	}
	q->cfg.cq_size = q->cfg.sq_size = q->cfg.rq_size = 10;
	return req;
}

START_TEST(test_foreign_ids)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 1), 0);
	struct test_daemon *d = &env.d[0];
	pid_t pid = d->pid;
	int base = it_proc_fds(pid);

	/* the owner: a peer, a registration, an endpoint, a request */
	struct th_ctl x;
	sess_hello(&x, d);
	uint64_t peer = new_peer(&x);
	uint64_t mr = new_mr(&x, peer);
	char port[16];
	ck_assert_int_eq(it_free_port(port, sizeof(port)), 0);
	struct th_req q;
	Rpmad__Response *resp = answer_ok(&x,
			th_req_ep_listen(&q, peer, IT_ADDR, port), NULL, 0);
	uint64_t ep = resp->ep->ep_id;
	rpmad__response__free_unpacked(resp, NULL);
	resp = answer_ok(&x,
			naming_req(&q, RPMAD__REQUEST__BODY_CONN_REQ_NEW, peer,
					port),
			NULL, 0);
	uint64_t conn = resp->qp->conn_id;
	rpmad__response__free_unpacked(resp, NULL);

	/* another session names them (and ids of nothing), every way */
	struct th_ctl y;
	sess_hello(&y, d);
	const uint64_t ids[] = { peer, mr, ep, conn, 0, UINT64_MAX,
		peer + 1000, conn ^ (1ull << 40) };
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		for (size_t k = 0; k < sizeof(naming) / sizeof(naming[0]);
				k++) {
			int fd = sealed_memfd(PAGE);
			bool reg = naming[k] == RPMAD__REQUEST__BODY_MR_REG;
			ck_assert_msg(th_ctl_code(&y,
						      naming_req(&q, naming[k],
								      ids[i],
								      port),
						      &fd, reg) == RPMA_E_INVAL,
					"request %d naming %#llx",
					(int) naming[k],
					(unsigned long long) ids[i]);
			(void) close(fd);
		}
	}
	/* the owner's own ids of the wrong kind are nothing either */
	ck_assert_int_eq(id_code(&x, RPMAD__REQUEST__BODY_MR_DEREG, peer, NULL,
					 0),
			RPMA_E_INVAL);
	th_ctl_close(&y);

	/* the owner's objects are all there and go away as asked */
	const struct {
		Rpmad__Request__BodyCase kind;
		uint64_t id;
	} mine[] = {
		{ RPMAD__REQUEST__BODY_CONN_REQ_DELETE, conn },
		{ RPMAD__REQUEST__BODY_EP_SHUTDOWN, ep },
		{ RPMAD__REQUEST__BODY_MR_DEREG, mr },
		{ RPMAD__REQUEST__BODY_PEER_DELETE, peer },
	};
	for (size_t k = 0; k < sizeof(mine) / sizeof(mine[0]); k++)
		ck_assert_int_eq(th_ctl_code(&x,
						 th_req_id(&q, mine[k].kind,
								 mine[k].id),
						 NULL, 0),
				0);
	th_ctl_close(&x);

	ck_assert_int_eq(it_daemon_serves(d, pid), 0);
	ck_assert_int_le(it_proc_wait_fds(pid, base, IT_WAIT_MS), base);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ------------------------------------------ registrations that do not fit */

enum seg_case {
	SEG_INDEX_BEYOND,	/* fd_index past the descriptors */
	SEG_LENGTH_ZERO,
	SEG_LENGTH_UNALIGNED,
	SEG_OFFSET_UNALIGNED,
	SEG_OFFSET_BEYOND_FILE,
	SEG_LENGTH_BEYOND_FILE,
	SEG_TOO_SHORT,		/* segments cover less than the span */
	SEG_TOO_LONG,		/* one segment longer than the span */
	SEG_NONE,
	SEG_65,			/* more segments than allowed */
	REG_ADDR_ZERO,
	REG_LENGTH_ZERO,
	REG_WRAPS,		/* addr + length overflows */
	REG_USAGE_ZERO,
	REG_USAGE_UNKNOWN,
	REG_PEER_ZERO,
	SEG_CASES
};

START_TEST(test_bad_segments)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 1), 0);
	struct test_daemon *d = &env.d[0];
	pid_t pid = d->pid;
	int base = it_proc_fds(pid);
	struct th_ctl s;
	sess_hello(&s, d);
	uint64_t peer = new_peer(&s);
	int fds[2] = { sealed_memfd(4 * PAGE), sealed_memfd(4 * PAGE) };

	for (int c = 0; c < SEG_CASES; c++) {
		struct th_req r;
		Rpmad__Request *req = reg_init(&r, peer,
				RPMA_MR_USAGE_READ_SRC |
						RPMA_MR_USAGE_WRITE_DST);
		r.u.mr_reg.fd_count = 2;
		switch (c) {
		case SEG_INDEX_BEYOND:
			r.seg[0].fd_index = 2;
			break;
		case SEG_LENGTH_ZERO:
			r.seg[0].length = 0;
			break;
		case SEG_LENGTH_UNALIGNED:
			r.seg[0].length = PAGE - 1;
			break;
		case SEG_OFFSET_UNALIGNED:
			r.seg[0].offset = 512;
			break;
		case SEG_OFFSET_BEYOND_FILE:
			r.seg[0].offset = 8 * PAGE;
			break;
		case SEG_LENGTH_BEYOND_FILE:
			r.u.mr_reg.length = 8 * PAGE;
			r.seg[0].length = 8 * PAGE;
			break;
		case SEG_TOO_SHORT:
			r.u.mr_reg.length = 3 * PAGE;
			r.u.mr_reg.n_segments = 2;
			r.seg[1].fd_index = 1;
			r.seg[1].length = PAGE;
			break;
		case SEG_TOO_LONG:
			r.seg[0].length = 2 * PAGE;
			break;
		case SEG_NONE:
			r.u.mr_reg.n_segments = 0;
			break;
		case SEG_65:
			r.u.mr_reg.length = 65 * PAGE;
			r.u.mr_reg.n_segments = 65;
			break;
		case REG_ADDR_ZERO:
			r.u.mr_reg.addr = 0;
			break;
		case REG_LENGTH_ZERO:
			r.u.mr_reg.length = 0;
			break;
		case REG_WRAPS:
			r.u.mr_reg.addr = UINT64_MAX - PAGE + 1;
			r.u.mr_reg.length = 2 * PAGE;
			break;
		case REG_USAGE_ZERO:
			r.u.mr_reg.usage = 0;
			break;
		case REG_USAGE_UNKNOWN:
			r.u.mr_reg.usage = 0x100;
			break;
		case REG_PEER_ZERO:
			r.u.mr_reg.peer_id = 0;
			break;
		}
		int code = th_ctl_code(&s, req, fds, 2);
		ck_assert_msg(code == RPMA_E_INVAL || code == RPMA_E_PROVIDER,
				"case %d: answer %d", c, code);
	}
	/* ... and the very same registration, well-formed, works */
	struct th_req r;
	Rpmad__Request *req = reg_init(&r, peer,
			RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST);
	r.u.mr_reg.fd_count = 2;
	r.u.mr_reg.length = 2 * PAGE;
	r.u.mr_reg.n_segments = 2;
	r.seg[1].fd_index = 1;
	r.seg[1].offset = 3 * PAGE;
	r.seg[1].length = PAGE;
	ck_assert_int_eq(th_ctl_code(&s, req, fds, 2), 0);

	struct it_admin a;
	ck_assert_int_eq(it_admin_open(&a, d), 0);
	struct it_counts cnt;
	ck_assert_int_eq(it_admin_status(&a, &cnt), 0);
	ck_assert_uint_eq(cnt.mrs, 1);
	ck_assert_uint_eq(cnt.pinned_bytes, 2 * PAGE);
	it_admin_close(&a);
	th_ctl_close(&s);
	(void) close(fds[0]);
	(void) close(fds[1]);
	ck_assert_int_le(it_proc_wait_fds(pid, base, IT_WAIT_MS), base);
	ck_assert_int_eq(it_daemon_serves(d, pid), 0);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ------------------------------------------------ descriptors of any kind */

enum fd_kind {
	FD_PIPE_READ,
	FD_PIPE_WRITE,
	FD_SOCKET,
	FD_DIRECTORY,
	FD_DEV_NULL,
	FD_EVENTFD,
	FD_MEMFD_UNSEALED,	/* could shrink under rpmad: refused */
	FD_MEMFD_READ_ONLY,	/* sealed, but opened read-only */
	FD_FILE_READ_ONLY,	/* a file for a writable usage */
	FD_FILE_SHORT,		/* smaller than the segment */
	FD_MEMFD_SEALED,	/* what the library passes: accepted */
	FD_FILE,		/* an application's file: accepted */
	FD_KINDS
};

static const char *const fd_names[FD_KINDS] = {
	"pipe (read end)", "pipe (write end)", "socket", "directory",
	"/dev/null", "eventfd", "unsealed memfd", "read-only memfd",
	"read-only file", "short file", "sealed memfd", "file",
};

static int
make_fd(enum fd_kind k, const char *dir, int *extra)
{
	int p[2], fd = -1;
	char path[300];
	*extra = -1;
	switch (k) {
	case FD_PIPE_READ:
	case FD_PIPE_WRITE:
		ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
		*extra = p[k == FD_PIPE_READ];
		return p[k == FD_PIPE_WRITE];
	case FD_SOCKET:
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
				0, p), 0);
		*extra = p[1];
		return p[0];
	case FD_DIRECTORY:
		return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	case FD_DEV_NULL:
		return open("/dev/null", O_RDWR | O_CLOEXEC);
	case FD_EVENTFD:
		return eventfd(0, EFD_CLOEXEC);
	case FD_MEMFD_UNSEALED:
		fd = memfd_create("hostile", MFD_CLOEXEC);
		ck_assert_int_eq(ftruncate(fd, PAGE), 0);
		return fd;
	case FD_MEMFD_READ_ONLY:
		*extra = sealed_memfd(PAGE);
		(void) snprintf(path, sizeof(path), "/proc/self/fd/%d", *extra);
		return open(path, O_RDONLY | O_CLOEXEC);
	case FD_FILE_READ_ONLY:
	case FD_FILE_SHORT:
	case FD_FILE:
		(void) snprintf(path, sizeof(path), "%s/file-%d", dir, (int)k);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(ftruncate(fd, k == FD_FILE_SHORT ? 100 : PAGE),
				0);
		if (k != FD_FILE_READ_ONLY)
			return fd;
		(void) close(fd);
		return open(path, O_RDONLY | O_CLOEXEC);
	case FD_MEMFD_SEALED:
		return sealed_memfd(PAGE);
	default:
		return -1;
	}
}

START_TEST(test_fd_kinds)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 1), 0);
	struct test_daemon *d = &env.d[0];
	pid_t pid = d->pid;
	int base = it_proc_fds(pid);
	struct th_ctl s;
	sess_hello(&s, d);
	uint64_t peer = new_peer(&s);

	for (int k = 0; k < FD_KINDS; k++) {
		for (int file_backed = 0; file_backed < 2; file_backed++) {
			int extra;
			int fd = make_fd((enum fd_kind)k, env.dir, &extra);
			ck_assert_int_ge(fd, 0);
			struct th_req r;
			Rpmad__Request *req = reg_init(&r, peer, RW);
			r.seg[0].file_backed = file_backed;
			Rpmad__Response *resp;
			ck_assert_msg(th_ctl_call(&s, req, &fd, 1, &resp) == 0,
					"%s ended the session", fd_names[k]);
			/* only files that cannot shrink pass as memory */
			int ok = k == FD_MEMFD_SEALED || (k == FD_FILE &&
					file_backed) || (k ==
					FD_MEMFD_UNSEALED && file_backed);
			ck_assert_msg(ok ? resp->error == NULL :
					resp->error != NULL, "%s%s: %s",
					fd_names[k], file_backed ?
					" (file-backed)" : "", resp->error ?
					resp->error->message : "accepted");
			const int dereg = RPMAD__REQUEST__BODY_MR_DEREG;
			if (resp->error == NULL)
				ck_assert_int_eq(
						id_code(&s, dereg,
								resp->mr->mr_id,
								NULL, 0),
						0);
			rpmad__response__free_unpacked(resp, NULL);
			(void) close(fd);
			if (extra >= 0)
				(void) close(extra);
		}
	}
	/* every kind at once, 12 of them, in one (refused) registration */
	int all[FD_KINDS], extras[FD_KINDS];
	for (int k = 0; k < FD_KINDS; k++)
		all[k] = make_fd((enum fd_kind)k, env.dir, &extras[k]);
	struct th_req r;
	Rpmad__Request *req = reg_init(&r, peer,
			RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST);
	r.u.mr_reg.fd_count = FD_KINDS;
	r.u.mr_reg.length = FD_KINDS * PAGE;
	r.u.mr_reg.n_segments = FD_KINDS;
	for (int k = 0; k < FD_KINDS; k++) {
		r.seg[k].fd_index = (uint32_t)k;
		r.seg[k].length = PAGE;
	}
	ck_assert_int_ne(th_ctl_code(&s, req, all, FD_KINDS), 0);
	for (int k = 0; k < FD_KINDS; k++) {
		(void) close(all[k]);
		if (extras[k] >= 0)
			(void) close(extras[k]);
	}
	th_ctl_close(&s);
	ck_assert_int_le(it_proc_wait_fds(pid, base, IT_WAIT_MS), base);
	ck_assert_int_eq(it_daemon_serves(d, pid), 0);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ------------------------------------------------------- private data */

START_TEST(test_private_data_300)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 1), 0);
	struct test_daemon *d = &env.d[0];
	struct th_ctl s;
	sess_hello(&s, d);
	uint64_t peer = new_peer(&s);
	struct th_req q;
	th_req_conn_req_new(&q, peer, IT_ADDR, env.port);
	q.cfg.cq_size = 10;
	Rpmad__Response *resp = answer_ok(&s, &q.req, NULL, 0);
	uint64_t conn = resp->qp->conn_id;
	rpmad__response__free_unpacked(resp, NULL);

	static uint8_t pdata[300];
	memset(pdata, 0xab, sizeof(pdata));
	Rpmad__Request *req = th_req_connect(&q, conn, pdata, sizeof(pdata));
	ck_assert_int_eq(th_ctl_code(&s, req, NULL, 0), RPMA_E_INVAL);
	q.u.conn_req_connect.private_data.len = 256;
	ck_assert_int_eq(th_ctl_code(&s, req, NULL, 0), RPMA_E_INVAL);
	/* the request is still a request: it can be deleted */
	ck_assert_int_eq(id_code(&s, RPMAD__REQUEST__BODY_CONN_REQ_DELETE, conn,
					 NULL, 0),
			0);
	th_ctl_close(&s);
	ck_assert_int_eq(it_daemon_serves(d, d->pid), 0);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ----------------------------------------- a file truncated under a writer */

enum { TAG_NEXT = 100, TAG_TRUNCATED };
enum { NEXT_END = -1, NEXT_CONN, NEXT_TRUNCATE };

#define FILE_SIZE (64 * 1024)

/*
 * S registers a file mapping of its own and accepts connections, one per
 * operation of the client; between the first and the others it truncates
 * the file to nothing (its own mapping it no longer touches).
 */
static int
file_server(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	int fd;
	uint8_t *pm = it_file_map(env, "truncated.pmem", FILE_SIZE, &fd);
	struct rpma_mr_local *mr = IT_REG(peer, pm, FILE_SIZE,
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
					RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	/* a persistent flush needs the remote side to say it may */
	struct rpma_peer_cfg *pcfg = NULL;
	IT_OK(rpma_peer_cfg_new(&pcfg));
	IT_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	struct rpma_ep *ep = it_listen(peer, env);
	for (;;) {
		int next;
		IT_EQ(it_expect(TAG_NEXT, &next, sizeof(next)), sizeof(next));
		if (next == NEXT_END)
			break;
		if (next == NEXT_TRUNCATE) {
			IT_EQ(ftruncate(fd, 0), 0);
			IT_EQ(it_tell(IT_CLIENT, TAG_TRUNCATED, NULL, 0), 0);
			continue;
		}
		struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
		it_send_desc(IT_CLIENT, mr, pcfg);
		enum rpma_conn_event ev = it_next_event(conn, IT_WAIT_MS);
		IT_ASSERT(ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST);
		(void) rpma_conn_disconnect(conn);
		IT_OK(rpma_conn_delete(&conn));
	}
	/* the writes after the cut were dropped: none grew the file again */
	struct stat st;
	IT_EQ(fstat(fd, &st), 0);
	IT_EQ(st.st_size, 0);
	IT_OKS(rpma_peer_cfg_delete(&pcfg), rpma_mr_dereg(&mr),
			rpma_ep_shutdown(&ep), rpma_peer_delete(&peer));
	IT_EQ(munmap(pm, FILE_SIZE), 0);
	IT_EQ(close(fd), 0);
	return 0;
}

enum file_op {
	OP_GOOD_WRITE,		/* before the truncation: works */
	OP_SMALL_WRITE,		/* through rpmad's staging buffer */
	OP_LARGE_WRITE,		/* straight from the socket */
	OP_SMALL_READ,
	OP_LARGE_READ,
	OP_PERSIST,
	OP_ATOMIC,
	FILE_OPS
};

static const char *const op_names[FILE_OPS] = { "good write",
	"small write", "large write", "small read", "large read",
	"persistent flush", "atomic write" };

/*
 * One operation on a connection of its own. The pages of the truncated
 * file are gone from its mapping, as a NIC's registration would keep
 * writing into and reading from pinned pages the application no longer
 * has: writes into them complete and are dropped, reads complete with
 * zeros (native: the old contents, which nobody can see any more), a
 * persistent flush has nothing left to write. The connection lives on,
 * and none of it may kill or hang rpmad.
 */
static void
file_op(const struct it_env *env, struct rpma_peer *peer, enum file_op op,
		struct rpma_mr_local *mr)
{
	int next = NEXT_CONN;
	IT_EQ(it_tell(IT_SERVER, TAG_NEXT, &next, sizeof(next)), 0);
	struct rpma_conn *conn = it_connect_to(peer, env->port, NULL, NULL);
	struct rpma_cq *cq = NULL;
	IT_OK(rpma_conn_get_cq(conn, &cq));
	struct it_desc desc;
	it_expect_desc(&desc);
	struct rpma_mr_remote *rmr = it_desc_mr(&desc);
	struct rpma_peer_cfg *pcfg = NULL;
	IT_OK(rpma_peer_cfg_from_descriptor(desc.pcfg, desc.pcfg_len, &pcfg));
	IT_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	IT_OK(rpma_peer_cfg_delete(&pcfg));
	const int f = RPMA_F_COMPLETION_ALWAYS;
	void *ctx = (void *)0x77;
	uint8_t *local = NULL;
	IT_OK(rpma_mr_get_ptr(mr, (void **)&local));
	memset(local, 0xab, FILE_SIZE);
	switch (op) {
	case OP_GOOD_WRITE:
		IT_OK(rpma_write(conn, rmr, 0, mr, 0, FILE_SIZE, f, ctx));
		break;
	case OP_SMALL_WRITE:
		IT_OK(rpma_write(conn, rmr, 4096, mr, 0, 64, f, ctx));
		break;
	case OP_LARGE_WRITE:
		IT_OK(rpma_write(conn, rmr, 0, mr, 0, FILE_SIZE, f, ctx));
		break;
	case OP_SMALL_READ:
		IT_OK(rpma_read(conn, mr, 0, rmr, 4096, 64, f, ctx));
		break;
	case OP_LARGE_READ:
		IT_OK(rpma_read(conn, mr, 0, rmr, 0, FILE_SIZE, f, ctx));
		break;
	case OP_PERSIST:
		IT_OK(rpma_flush(conn, rmr, 0, 4096,
				RPMA_FLUSH_TYPE_PERSISTENT, f, ctx));
		break;
	default:
		IT_OK(rpma_write_atomic(conn, rmr, 8192, mr, 0, f, ctx));
		break;
	}
	struct ibv_wc wc;
	it_wc(cq, &wc);
	IT_EQ(wc.wr_id, 0x77);
	(void) fprintf(stderr, "hostile_ctl: %s: %s\n", op_names[op],
			ibv_wc_status_str(wc.status));
	IT_ASSERT_MSG(wc.status == IBV_WC_SUCCESS, "%s: %s", op_names[op],
			ibv_wc_status_str(wc.status));
	size_t read = op == OP_SMALL_READ ? 64 : op == OP_LARGE_READ ?
		FILE_SIZE : 0;
	for (size_t i = 0; i < read; i++)
		IT_ASSERT_MSG(local[i] == 0, "%s: byte %zu is %#x, not 0",
				op_names[op], i, local[i]);
	/* and the connection still works */
	if (op != OP_GOOD_WRITE) {
		IT_OK(rpma_read(conn, mr, 0, rmr, 0, 8, f, ctx));
		it_wc(cq, &wc);
		IT_ASSERT_MSG(wc.status == IBV_WC_SUCCESS, "a read after %s: %s",
				op_names[op], ibv_wc_status_str(wc.status));
	}
	IT_OK(rpma_mr_remote_delete(&rmr));
	if (rpma_conn_disconnect(conn) == 0)
		(void) it_next_event(conn, IT_WAIT_MS);
	IT_OK(rpma_conn_delete(&conn));
}

static int
file_client(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	uint8_t *buf = it_alloc(FILE_SIZE);
	struct rpma_mr_local *mr = IT_REG(peer, buf, FILE_SIZE,
			RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
	(void) it_expect(IT_TAG_LISTENING, NULL, 0);
	for (int op = 0; op < FILE_OPS; op++) {
		if (op == OP_GOOD_WRITE + 1) {
			int next = NEXT_TRUNCATE;
			IT_EQ(it_tell(IT_SERVER, TAG_NEXT, &next,
					sizeof(next)), 0);
			(void) it_expect(TAG_TRUNCATED, NULL, 0);
		}
		file_op(env, peer, (enum file_op)op, mr);
	}
	/* once more after the persist: through the file's descriptor now */
	file_op(env, peer, OP_LARGE_WRITE, mr);
	int next = NEXT_END;
	IT_EQ(it_tell(IT_SERVER, TAG_NEXT, &next, sizeof(next)), 0);
	IT_OK(rpma_mr_dereg(&mr));
	IT_OK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

/* _i: 0 two rpmads (the wire), 1 one rpmad (memory to memory) */
START_TEST(test_truncated_file)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, _i ? 1 : 2), 0);
	pid_t pids[2] = { env.d[0].pid, _i ? 0 : env.d[1].pid };
	ck_assert_msg(it_run_pair(&env, file_server, file_client, NULL) == 0,
			"%s", it_report());
	for (int i = 0; i < env.ndaemons; i++)
		ck_assert_int_eq(it_daemon_serves(&env.d[i], pids[i]), 0);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

int
main(void)
{
	const struct th_test tc_control[] = { TH_TEST(test_bad_packets),
		TH_TEST(test_foreign_ids), TH_TEST(test_bad_segments),
		TH_TEST(test_fd_kinds), TH_TEST(test_private_data_300),
		TH_LOOP(test_truncated_file, 0, 2), TH_END };
	const struct th_tcase tcases[] = {
		{ "control", .steps = tc_control, .create = it_tcase_create },
	};
	return check_run_forked(th_suite("hostile_ctl", tcases, TH_N(tcases)),
			CK_NORMAL);
}
