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
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_socket.h"
#include "hostile.h"
#include "rpmad.pb-c.h"
#include "th_suite.h"

#define PAGE 4096
/* the answer to a request comes at once; this only bounds a hang */
#define ANSWER_MS 10000

/* ------------------------------------------------ raw control sessions */

struct sess {
	int fd;
	uint64_t next_id;
};

static void
sess_connect(struct sess *s, const struct test_daemon *d)
{
	s->next_id = 1;
	s->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(s->fd, 0);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	ck_assert_uint_lt(strlen(d->socket), sizeof(sun.sun_path));
	strcpy(sun.sun_path, d->socket);
	ck_assert_int_eq(connect(s->fd, (struct sockaddr *)&sun, sizeof(sun)),
			0);
}

/* Sends one packet as given: any length, any number of descriptors. */
static int
send_raw(int sock, const void *buf, size_t len, const int *fds, unsigned n)
{
	size_t space = CMSG_SPACE(sizeof(int) * n);
	char *control = n ? calloc(1, space) : NULL;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (n) {
		ck_assert_ptr_nonnull(control);
		msg.msg_control = control;
		msg.msg_controllen = space;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	}
	ssize_t r = sendmsg(sock, &msg, MSG_NOSIGNAL);
	free(control);
	return r == (ssize_t)len ? 0 : -1;
}

/* The next answer, or NULL when rpmad ended the session. */
static Rpmad__Response *
sess_answer(struct sess *s, int *fds, unsigned *nfds)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	ck_assert_msg(poll(&pfd, 1, ANSWER_MS) == 1, "no answer within %d ms",
			ANSWER_MS);
	static uint8_t buf[CTL_MAX_MSG];
	int got[CTL_MAX_FDS];
	unsigned n = 0;
	long len = ctl_recv(s->fd, buf, sizeof(buf), got, CTL_MAX_FDS, &n);
	if (fds) {
		memcpy(fds, got, n * sizeof(int));
		*nfds = n;
	} else {
		ctl_close_fds(got, n);
	}
	if (len == 0 || len == -ECONNRESET)
		return NULL;
	ck_assert_int_gt(len, 0);
	Rpmad__Response *r = rpmad__response__unpack(NULL, (size_t)len, buf);
	ck_assert_ptr_nonnull(r);
	return r;
}

static Rpmad__Response *
sess_call(struct sess *s, Rpmad__Request *req, const int *fds, unsigned nfds)
{
	req->id = s->next_id++;
	size_t len = rpmad__request__get_packed_size(req);
	uint8_t *buf = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(buf);
	rpmad__request__pack(req, buf);
	ck_assert_int_eq(send_raw(s->fd, buf, len, fds, nfds), 0);
	free(buf);
	Rpmad__Response *r = sess_answer(s, NULL, NULL);
	if (r)
		ck_assert_uint_eq(r->id, req->id);
	return r;
}

/* The RPMA_E_* code of the answer (0: success); the session must go on. */
static int
sess_code(struct sess *s, Rpmad__Request *req, const int *fds, unsigned nfds)
{
	Rpmad__Response *r = sess_call(s, req, fds, nfds);
	ck_assert_msg(r != NULL, "rpmad ended the session (request %d)",
			(int)req->body_case);
	int code = r->error ? r->error->code : 0;
	if (r->error)
		ck_assert_ptr_nonnull(r->error->message);
	rpmad__response__free_unpacked(r, NULL);
	return code;
}

/* Whether rpmad ended the session after this packet (else: an error). */
static int
sess_ended_after(struct sess *s, const void *buf, size_t len, const int *fds,
		unsigned nfds)
{
	if (send_raw(s->fd, buf, len, fds, nfds))
		return 1;	/* refused by the kernel: nothing reached rpmad */
	Rpmad__Response *r = sess_answer(s, NULL, NULL);
	if (r == NULL)
		return 1;
	ck_assert_ptr_nonnull(r->error);
	rpmad__response__free_unpacked(r, NULL);
	return 0;
}

static void
sess_hello(struct sess *s, const struct test_daemon *d)
{
	sess_connect(s, d);
	Rpmad__Hello h = RPMAD__HELLO__INIT;
	h.version = RPMAD__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT;
	h.client_name = "hostile_ctl";
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_HELLO;
	req.hello = &h;
	ck_assert_int_eq(sess_code(s, &req, NULL, 0), 0);
}

static void
sess_close(struct sess *s)
{
	(void) close(s->fd);
	s->fd = -1;
}

/* ------------------------------------------------- objects of a session */

static uint64_t
new_peer(struct sess *s)
{
	Rpmad__DeviceGet dg = RPMAD__DEVICE_GET__INIT;
	dg.addr = (char *)IT_ADDR;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_DEVICE_GET;
	req.device_get = &dg;
	Rpmad__Response *r = sess_call(s, &req, NULL, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_null(r->error);
	uint32_t dev = r->device->device_id;
	rpmad__response__free_unpacked(r, NULL);

	Rpmad__PeerNew pn = RPMAD__PEER_NEW__INIT;
	pn.device_id = dev;
	req.body_case = RPMAD__REQUEST__BODY_PEER_NEW;
	req.peer_new = &pn;
	r = sess_call(s, &req, NULL, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_null(r->error);
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

/* A registration request of one segment of fd 0 (the caller adjusts). */
struct reg {
	Rpmad__MrReg m;
	Rpmad__Segment seg[70];
	Rpmad__Segment *segp[70];
	Rpmad__Request req;
};

static void
reg_init(struct reg *r, uint64_t peer, uint32_t usage)
{
	rpmad__mr_reg__init(&r->m);
	for (int i = 0; i < 70; i++) {
		rpmad__segment__init(&r->seg[i]);
		r->segp[i] = &r->seg[i];
	}
	r->m.peer_id = peer;
	r->m.addr = 0x7f0000000000ull;
	r->m.length = PAGE;
	r->m.usage = usage;
	r->m.n_segments = 1;
	r->m.segments = r->segp;
	r->m.fd_count = 1;
	r->seg[0].length = PAGE;
	rpmad__request__init(&r->req);
	r->req.body_case = RPMAD__REQUEST__BODY_MR_REG;
	r->req.mr_reg = &r->m;
}

static uint64_t
new_mr(struct sess *s, uint64_t peer)
{
	struct reg r;
	reg_init(&r, peer, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST);
	int fd = sealed_memfd(PAGE);
	Rpmad__Response *resp = sess_call(s, &r.req, &fd, 1);
	(void) close(fd);
	ck_assert_ptr_nonnull(resp);
	ck_assert_ptr_null(resp->error);
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
	struct sess by;
	sess_hello(&by, d);
	uint64_t by_peer = new_peer(&by);

	static uint8_t big[CTL_MAX_MSG + 4096];
	memset(big, 0x52, sizeof(big));
	int many[253];
	for (int i = 0; i < 253; i++)
		many[i] = STDERR_FILENO;
	struct sess s;

	/* larger than any control message: the session ends */
	sess_hello(&s, d);
	ck_assert(sess_ended_after(&s, big, sizeof(big), NULL, 0));
	sess_close(&s);

	/* an empty packet ends the session too */
	sess_hello(&s, d);
	ck_assert(sess_ended_after(&s, big, 0, NULL, 0));
	sess_close(&s);

	/* more descriptors than a message may carry: 33, 40, 253 */
	static const unsigned counts[] = { 33, 40, 253 };
	for (unsigned i = 0; i < 3; i++) {
		sess_hello(&s, d);
		Rpmad__PeerDelete pd = RPMAD__PEER_DELETE__INIT;
		Rpmad__Request req = RPMAD__REQUEST__INIT;
		req.body_case = RPMAD__REQUEST__BODY_PEER_DELETE;
		req.peer_delete = &pd;
		uint8_t buf[64];
		size_t len = rpmad__request__pack(&req, buf);
		ck_assert(sess_ended_after(&s, buf, len, many, counts[i]));
		sess_close(&s);
	}

	/* 32 (the most) where none belong: an error; the session goes on */
	sess_hello(&s, d);
	Rpmad__PeerDelete pd = RPMAD__PEER_DELETE__INIT;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_PEER_DELETE;
	req.peer_delete = &pd;
	ck_assert_int_eq(sess_code(&s, &req, many, CTL_MAX_FDS), RPMA_E_INVAL);

	/* a registration that says 3 descriptors and carries 2, or 32 */
	struct reg r;
	uint64_t peer = new_peer(&s);
	reg_init(&r, peer, RPMA_MR_USAGE_READ_SRC);
	r.m.fd_count = 3;
	ck_assert_int_eq(sess_code(&s, &r.req, many, 2), RPMA_E_INVAL);
	ck_assert_int_eq(sess_code(&s, &r.req, many, 32), RPMA_E_INVAL);

	/* a registration cut short, with its descriptor */
	r.m.fd_count = 1;
	uint8_t buf[512];
	r.req.id = 99;
	size_t len = rpmad__request__pack(&r.req, buf);
	int fd = sealed_memfd(PAGE);
	for (size_t cut = len - 1; cut > 0; cut = cut > 3 ? cut - 3 : 0) {
		if (!sess_ended_after(&s, buf, cut, &fd, 1))
			continue;
		sess_close(&s);
		sess_hello(&s, d);
	}
	(void) close(fd);

	/* undecodable, with descriptors */
	memset(buf, 0xff, sizeof(buf));
	ck_assert(sess_ended_after(&s, buf, 100, many, 3));
	sess_close(&s);

	/* the bystander is fine; nothing was kept */
	ck_assert_int_eq(it_daemon_serves(d, pid), 0);
	Rpmad__PeerDelete bpd = RPMAD__PEER_DELETE__INIT;
	bpd.peer_id = by_peer;
	req.peer_delete = &bpd;
	ck_assert_int_eq(sess_code(&by, &req, NULL, 0), 0);
	sess_close(&by);
	ck_assert_int_le(it_proc_wait_fds(pid, base, IT_WAIT_MS), base);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* -------------------------------- objects of another session, of nobody */

START_TEST(test_foreign_ids)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 1), 0);
	struct test_daemon *d = &env.d[0];
	pid_t pid = d->pid;
	int base = it_proc_fds(pid);

	/* the owner: a peer, a registration, an endpoint, a request */
	struct sess x;
	sess_hello(&x, d);
	uint64_t peer = new_peer(&x);
	uint64_t mr = new_mr(&x, peer);
	char port[16];
	ck_assert_int_eq(it_free_port(port, sizeof(port)), 0);
	Rpmad__EpListen el = RPMAD__EP_LISTEN__INIT;
	el.peer_id = peer;
	el.addr = (char *)IT_ADDR;
	el.port = port;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_EP_LISTEN;
	req.ep_listen = &el;
	Rpmad__Response *resp = sess_call(&x, &req, NULL, 0);
	ck_assert_ptr_nonnull(resp);
	ck_assert_ptr_null(resp->error);
	uint64_t ep = resp->ep->ep_id;
	rpmad__response__free_unpacked(resp, NULL);
	Rpmad__ConnCfg cfg = RPMAD__CONN_CFG__INIT;
	cfg.cq_size = cfg.sq_size = cfg.rq_size = 10;
	Rpmad__ConnReqNew crn = RPMAD__CONN_REQ_NEW__INIT;
	crn.peer_id = peer;
	crn.addr = (char *)IT_ADDR;
	crn.port = port;
	crn.cfg = &cfg;
	req.body_case = RPMAD__REQUEST__BODY_CONN_REQ_NEW;
	req.conn_req_new = &crn;
	resp = sess_call(&x, &req, NULL, 0);
	ck_assert_ptr_nonnull(resp);
	ck_assert_ptr_null(resp->error);
	uint64_t conn = resp->qp->conn_id;
	rpmad__response__free_unpacked(resp, NULL);

	/* another session names them (and ids of nothing), every way */
	struct sess y;
	sess_hello(&y, d);
	const uint64_t ids[] = { peer, mr, ep, conn, 0, UINT64_MAX,
		peer + 1000, conn ^ (1ull << 40) };
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		uint64_t id = ids[i];
		Rpmad__PeerDelete a = RPMAD__PEER_DELETE__INIT;
		a.peer_id = id;
		req.body_case = RPMAD__REQUEST__BODY_PEER_DELETE;
		req.peer_delete = &a;
		ck_assert_int_eq(sess_code(&y, &req, NULL, 0), RPMA_E_INVAL);

		struct reg r;
		reg_init(&r, id, RPMA_MR_USAGE_READ_SRC);
		int fd = sealed_memfd(PAGE);
		ck_assert_int_eq(sess_code(&y, &r.req, &fd, 1), RPMA_E_INVAL);
		(void) close(fd);

		Rpmad__MrDereg b = RPMAD__MR_DEREG__INIT;
		b.mr_id = id;
		req.body_case = RPMAD__REQUEST__BODY_MR_DEREG;
		req.mr_dereg = &b;
		ck_assert_int_eq(sess_code(&y, &req, NULL, 0), RPMA_E_INVAL);

		Rpmad__MrAdvise c = RPMAD__MR_ADVISE__INIT;
		c.mr_id = id;
		c.length = 1;
		req.body_case = RPMAD__REQUEST__BODY_MR_ADVISE;
		req.mr_advise = &c;
		ck_assert_int_eq(sess_code(&y, &req, NULL, 0), RPMA_E_INVAL);

		Rpmad__EpListen e = RPMAD__EP_LISTEN__INIT;
		e.peer_id = id;
		e.addr = (char *)IT_ADDR;
		e.port = "0";
		req.body_case = RPMAD__REQUEST__BODY_EP_LISTEN;
		req.ep_listen = &e;
		ck_assert_int_eq(sess_code(&y, &req, NULL, 0), RPMA_E_INVAL);

		Rpmad__EpShutdown f = RPMAD__EP_SHUTDOWN__INIT;
		f.ep_id = id;
		req.body_case = RPMAD__REQUEST__BODY_EP_SHUTDOWN;
		req.ep_shutdown = &f;
		ck_assert_int_eq(sess_code(&y, &req, NULL, 0), RPMA_E_INVAL);

		Rpmad__EpNextConnReq g = RPMAD__EP_NEXT_CONN_REQ__INIT;
		g.ep_id = id;
		g.cfg = &cfg;
		req.body_case = RPMAD__REQUEST__BODY_EP_NEXT_CONN_REQ;
		req.ep_next_conn_req = &g;
		ck_assert_int_eq(sess_code(&y, &req, NULL, 0), RPMA_E_INVAL);

		Rpmad__ConnReqNew h = RPMAD__CONN_REQ_NEW__INIT;
		h.peer_id = id;
		h.addr = (char *)IT_ADDR;
		h.port = port;
		h.cfg = &cfg;
		req.body_case = RPMAD__REQUEST__BODY_CONN_REQ_NEW;
		req.conn_req_new = &h;
		ck_assert_int_eq(sess_code(&y, &req, NULL, 0), RPMA_E_INVAL);

		Rpmad__ConnReqDelete k = RPMAD__CONN_REQ_DELETE__INIT;
		k.conn_id = id;
		req.body_case = RPMAD__REQUEST__BODY_CONN_REQ_DELETE;
		req.conn_req_delete = &k;
		ck_assert_int_eq(sess_code(&y, &req, NULL, 0), RPMA_E_INVAL);

		Rpmad__ConnReqConnect l = RPMAD__CONN_REQ_CONNECT__INIT;
		l.conn_id = id;
		req.body_case = RPMAD__REQUEST__BODY_CONN_REQ_CONNECT;
		req.conn_req_connect = &l;
		ck_assert_int_eq(sess_code(&y, &req, NULL, 0), RPMA_E_INVAL);

		Rpmad__ConnNextEvent m = RPMAD__CONN_NEXT_EVENT__INIT;
		m.conn_id = id;
		req.body_case = RPMAD__REQUEST__BODY_CONN_NEXT_EVENT;
		req.conn_next_event = &m;
		ck_assert_int_eq(sess_code(&y, &req, NULL, 0), RPMA_E_INVAL);

		Rpmad__ConnDisconnect n = RPMAD__CONN_DISCONNECT__INIT;
		n.conn_id = id;
		req.body_case = RPMAD__REQUEST__BODY_CONN_DISCONNECT;
		req.conn_disconnect = &n;
		ck_assert_int_eq(sess_code(&y, &req, NULL, 0), RPMA_E_INVAL);

		Rpmad__ConnDelete o = RPMAD__CONN_DELETE__INIT;
		o.conn_id = id;
		req.body_case = RPMAD__REQUEST__BODY_CONN_DELETE;
		req.conn_delete = &o;
		ck_assert_int_eq(sess_code(&y, &req, NULL, 0), RPMA_E_INVAL);
	}
	/* the owner's own ids of the wrong kind are nothing either */
	Rpmad__MrDereg wrong = RPMAD__MR_DEREG__INIT;
	wrong.mr_id = peer;
	req.body_case = RPMAD__REQUEST__BODY_MR_DEREG;
	req.mr_dereg = &wrong;
	ck_assert_int_eq(sess_code(&x, &req, NULL, 0), RPMA_E_INVAL);
	sess_close(&y);

	/* the owner's objects are all there and go away as asked */
	Rpmad__ConnReqDelete cd = RPMAD__CONN_REQ_DELETE__INIT;
	cd.conn_id = conn;
	req.body_case = RPMAD__REQUEST__BODY_CONN_REQ_DELETE;
	req.conn_req_delete = &cd;
	ck_assert_int_eq(sess_code(&x, &req, NULL, 0), 0);
	Rpmad__EpShutdown es = RPMAD__EP_SHUTDOWN__INIT;
	es.ep_id = ep;
	req.body_case = RPMAD__REQUEST__BODY_EP_SHUTDOWN;
	req.ep_shutdown = &es;
	ck_assert_int_eq(sess_code(&x, &req, NULL, 0), 0);
	Rpmad__MrDereg md = RPMAD__MR_DEREG__INIT;
	md.mr_id = mr;
	req.body_case = RPMAD__REQUEST__BODY_MR_DEREG;
	req.mr_dereg = &md;
	ck_assert_int_eq(sess_code(&x, &req, NULL, 0), 0);
	Rpmad__PeerDelete pd = RPMAD__PEER_DELETE__INIT;
	pd.peer_id = peer;
	req.body_case = RPMAD__REQUEST__BODY_PEER_DELETE;
	req.peer_delete = &pd;
	ck_assert_int_eq(sess_code(&x, &req, NULL, 0), 0);
	sess_close(&x);

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
	struct sess s;
	sess_hello(&s, d);
	uint64_t peer = new_peer(&s);
	int fds[2] = { sealed_memfd(4 * PAGE), sealed_memfd(4 * PAGE) };

	for (int c = 0; c < SEG_CASES; c++) {
		struct reg r;
		reg_init(&r, peer, RPMA_MR_USAGE_READ_SRC |
				RPMA_MR_USAGE_WRITE_DST);
		r.m.fd_count = 2;
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
			r.m.length = 8 * PAGE;
			r.seg[0].length = 8 * PAGE;
			break;
		case SEG_TOO_SHORT:
			r.m.length = 3 * PAGE;
			r.m.n_segments = 2;
			r.seg[1].fd_index = 1;
			r.seg[1].length = PAGE;
			break;
		case SEG_TOO_LONG:
			r.seg[0].length = 2 * PAGE;
			break;
		case SEG_NONE:
			r.m.n_segments = 0;
			break;
		case SEG_65:
			r.m.length = 65 * PAGE;
			r.m.n_segments = 65;
			break;
		case REG_ADDR_ZERO:
			r.m.addr = 0;
			break;
		case REG_LENGTH_ZERO:
			r.m.length = 0;
			break;
		case REG_WRAPS:
			r.m.addr = UINT64_MAX - PAGE + 1;
			r.m.length = 2 * PAGE;
			break;
		case REG_USAGE_ZERO:
			r.m.usage = 0;
			break;
		case REG_USAGE_UNKNOWN:
			r.m.usage = 0x100;
			break;
		case REG_PEER_ZERO:
			r.m.peer_id = 0;
			break;
		}
		int code = sess_code(&s, &r.req, fds, 2);
		ck_assert_msg(code == RPMA_E_INVAL || code == RPMA_E_PROVIDER,
				"case %d: answer %d", c, code);
	}
	/* ... and the very same registration, well-formed, works */
	struct reg r;
	reg_init(&r, peer, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST);
	r.m.fd_count = 2;
	r.m.length = 2 * PAGE;
	r.m.n_segments = 2;
	r.seg[1].fd_index = 1;
	r.seg[1].offset = 3 * PAGE;
	r.seg[1].length = PAGE;
	ck_assert_int_eq(sess_code(&s, &r.req, fds, 2), 0);

	struct it_admin a;
	ck_assert_int_eq(it_admin_open(&a, d), 0);
	struct it_counts cnt;
	ck_assert_int_eq(it_admin_status(&a, &cnt), 0);
	ck_assert_uint_eq(cnt.mrs, 1);
	ck_assert_uint_eq(cnt.pinned_bytes, 2 * PAGE);
	it_admin_close(&a);
	sess_close(&s);
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
	struct sess s;
	sess_hello(&s, d);
	uint64_t peer = new_peer(&s);

	for (int k = 0; k < FD_KINDS; k++) {
		for (int file_backed = 0; file_backed < 2; file_backed++) {
			int extra;
			int fd = make_fd((enum fd_kind)k, env.dir, &extra);
			ck_assert_int_ge(fd, 0);
			struct reg r;
			reg_init(&r, peer, RPMA_MR_USAGE_READ_SRC |
					RPMA_MR_USAGE_WRITE_DST);
			r.seg[0].file_backed = file_backed;
			Rpmad__Response *resp = sess_call(&s, &r.req, &fd, 1);
			ck_assert_msg(resp != NULL, "%s ended the session",
					fd_names[k]);
			/* only files that cannot shrink pass as memory */
			int ok = k == FD_MEMFD_SEALED || (k == FD_FILE &&
					file_backed) || (k ==
					FD_MEMFD_UNSEALED && file_backed);
			ck_assert_msg(ok ? resp->error == NULL :
					resp->error != NULL, "%s%s: %s",
					fd_names[k], file_backed ?
					" (file-backed)" : "", resp->error ?
					resp->error->message : "accepted");
			if (resp->error == NULL) {
				Rpmad__MrDereg md = RPMAD__MR_DEREG__INIT;
				md.mr_id = resp->mr->mr_id;
				Rpmad__Request req = RPMAD__REQUEST__INIT;
				req.body_case = RPMAD__REQUEST__BODY_MR_DEREG;
				req.mr_dereg = &md;
				ck_assert_int_eq(sess_code(&s, &req, NULL, 0),
						0);
			}
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
	struct reg r;
	reg_init(&r, peer, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST);
	r.m.fd_count = FD_KINDS;
	r.m.length = FD_KINDS * PAGE;
	r.m.n_segments = FD_KINDS;
	for (int k = 0; k < FD_KINDS; k++) {
		r.seg[k].fd_index = (uint32_t)k;
		r.seg[k].length = PAGE;
	}
	ck_assert_int_ne(sess_code(&s, &r.req, all, FD_KINDS), 0);
	for (int k = 0; k < FD_KINDS; k++) {
		(void) close(all[k]);
		if (extras[k] >= 0)
			(void) close(extras[k]);
	}
	sess_close(&s);
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
	struct sess s;
	sess_hello(&s, d);
	uint64_t peer = new_peer(&s);
	Rpmad__ConnCfg cfg = RPMAD__CONN_CFG__INIT;
	cfg.cq_size = 10;
	Rpmad__ConnReqNew crn = RPMAD__CONN_REQ_NEW__INIT;
	crn.peer_id = peer;
	crn.addr = (char *)IT_ADDR;
	crn.port = env.port;
	crn.cfg = &cfg;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_CONN_REQ_NEW;
	req.conn_req_new = &crn;
	Rpmad__Response *resp = sess_call(&s, &req, NULL, 0);
	ck_assert_ptr_nonnull(resp);
	ck_assert_ptr_null(resp->error);
	uint64_t conn = resp->qp->conn_id;
	rpmad__response__free_unpacked(resp, NULL);

	static uint8_t pdata[300];
	memset(pdata, 0xab, sizeof(pdata));
	Rpmad__ConnReqConnect cc = RPMAD__CONN_REQ_CONNECT__INIT;
	cc.conn_id = conn;
	cc.private_data.data = pdata;
	cc.private_data.len = sizeof(pdata);
	req.body_case = RPMAD__REQUEST__BODY_CONN_REQ_CONNECT;
	req.conn_req_connect = &cc;
	ck_assert_int_eq(sess_code(&s, &req, NULL, 0), RPMA_E_INVAL);
	cc.private_data.len = 256;
	ck_assert_int_eq(sess_code(&s, &req, NULL, 0), RPMA_E_INVAL);
	/* the request is still a request: it can be deleted */
	Rpmad__ConnReqDelete cd = RPMAD__CONN_REQ_DELETE__INIT;
	cd.conn_id = conn;
	req.body_case = RPMAD__REQUEST__BODY_CONN_REQ_DELETE;
	req.conn_req_delete = &cd;
	ck_assert_int_eq(sess_code(&s, &req, NULL, 0), 0);
	sess_close(&s);
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
	char path[300];
	(void) snprintf(path, sizeof(path), "%s/truncated.pmem", env->dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	IT_ASSERT(fd >= 0);
	IT_EQ(ftruncate(fd, FILE_SIZE), 0);
	uint8_t *pm = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE,
			MAP_SHARED, fd, 0);
	IT_ASSERT(pm != MAP_FAILED);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(peer, pm, FILE_SIZE, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr));
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
		struct rpma_conn_req *req = it_next_req(ep, NULL);
		struct rpma_conn *conn = it_accept(&req, NULL);
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
	IT_OK(rpma_peer_cfg_delete(&pcfg));
	IT_OK(rpma_mr_dereg(&mr));
	IT_OK(rpma_ep_shutdown(&ep));
	IT_OK(rpma_peer_delete(&peer));
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
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(peer, buf, FILE_SIZE, RPMA_MR_USAGE_WRITE_SRC |
			RPMA_MR_USAGE_READ_DST, &mr));
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
	Suite *s = suite_create("hostile_ctl");
	TCase *tc = it_tcase_create("control");
	tcase_add_test(tc, test_bad_packets);
	tcase_add_test(tc, test_foreign_ids);
	tcase_add_test(tc, test_bad_segments);
	tcase_add_test(tc, test_fd_kinds);
	tcase_add_test(tc, test_private_data_300);
	tcase_add_loop_test(tc, test_truncated_file, 0, 2);
	suite_add_tcase(s, tc);
	return check_run_forked(s, CK_NORMAL);
}
