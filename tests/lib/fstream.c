// SPDX-License-Identifier: BSD-3-Clause
/*
 * fstream.c -- a steady stream of every kind of work on one connection and
 * the checks of how it ends when the connection breaks (see fstream.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fstream.h"

/* The stream's buffer, the same layout at both ends. */
#define BUF_SIZE 65536
#define OP_LEN 4096
#define OFF_WRITE_SRC 0		/* also what the other end reads */
#define OFF_WRITE_DST 16384	/* the other end writes and flushes here */
#define OFF_READ_DST 32768
#define OFF_SEND 49152
#define OFF_RECV 57344
#define MSG_LEN 256
#define RECV_SLOT 512		/* FS_RECVS slots up to BUF_SIZE */

#define USAGE (RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_READ_DST | \
	RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_WRITE_DST | \
	RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_SEND | \
	RPMA_MR_USAGE_RECV)

/* One cycle of the stream: every kind, signaled and not. */
static const struct {
	uint8_t kind;
	bool signaled;
} cycle[] = {
	{ FS_WRITE, false }, { FS_FLUSH, true }, { FS_READ, false },
	{ FS_SEND, true }, { FS_WRITE, true }, { FS_READ, true },
	{ FS_SEND, false }, { FS_FLUSH, false },
};
#define CYCLE_LEN (sizeof(cycle) / sizeof(cycle[0]))

/* How long one wait for a completion or an event may sleep. */
#define IDLE_WAIT_MS 20

static const char *const kind_names[FS_KINDS] = {
	"write", "flush", "read", "send", "recv"
};

const struct rpma_conn_cfg *
fs_conn_cfg(void)
{
	/* one per process, reachable until it exits */
	static struct rpma_conn_cfg *cfg;
	if (cfg == NULL) {
		IT_OK(rpma_conn_cfg_new(&cfg));
		IT_OK(rpma_conn_cfg_set_sq_size(cfg, 32));
		IT_OK(rpma_conn_cfg_set_rq_size(cfg, 32));
		/* every signaled, failed and received completion fits */
		IT_OK(rpma_conn_cfg_set_cq_size(cfg, 128));
	}
	return cfg;
}

static void *
wr_id(enum fs_kind kind, uint32_t seq)
{
	return (void *)(uintptr_t)((uint64_t)kind << 56 | seq);
}

static enum ibv_wc_opcode
wc_opcode(enum fs_kind kind)
{
	switch (kind) {
	case FS_WRITE:
		return IBV_WC_RDMA_WRITE;
	case FS_SEND:
		return IBV_WC_SEND;
	case FS_RECV:
		return IBV_WC_RECV;
	default:	/* a flush is a read on the wire, as with librpma */
		return IBV_WC_RDMA_READ;
	}
}

void
fs_init(struct fs_stream *s, struct rpma_peer *peer, struct rpma_conn *conn)
{
	memset(s, 0, sizeof(*s));
	s->conn = conn;
	s->buf = it_alloc(BUF_SIZE);
	it_fill(s->buf, BUF_SIZE, 77);
	IT_OK(rpma_mr_reg(peer, s->buf, BUF_SIZE, USAGE, &s->mr));
	IT_OK(rpma_conn_get_cq(conn, &s->cq));
	IT_OK(rpma_cq_get_fd(s->cq, &s->cq_fd));
	IT_OK(rpma_conn_get_event_fd(conn, &s->ev_fd));
	/* waiting is done here with poll(), on both descriptors */
	int fl = fcntl(s->cq_fd, F_GETFL);
	IT_ASSERT(fl >= 0 && fcntl(s->cq_fd, F_SETFL, fl | O_NONBLOCK) == 0);
	for (int i = 0; i < FS_RECVS; i++) {
		uint32_t seq = s->rq_next++;
		IT_OK(rpma_recv(conn, s->mr, OFF_RECV + (seq % FS_RECVS) *
				RECV_SLOT, RECV_SLOT, wr_id(FS_RECV, seq)));
	}
}

void
fs_set_remote(struct fs_stream *s, const struct it_desc *desc)
{
	s->rmr = it_desc_mr(desc);
}

static void
mark_broken(struct fs_stream *s, const char *cause)
{
	if (s->broken)
		return;
	s->broken = true;
	s->res.t_break = it_now_ms();
	s->res.cause = cause;
	s->res.sq_outstanding = s->sq_next - s->sq_done;
	s->res.rq_outstanding = s->rq_next - s->rq_done;
}

static int
post_sq(struct fs_stream *s, enum fs_kind kind, bool signaled, uint32_t seq)
{
	int flags = signaled ? RPMA_F_COMPLETION_ALWAYS :
		RPMA_F_COMPLETION_ON_ERROR;
	void *ctx = wr_id(kind, seq);
	switch (kind) {
	case FS_WRITE:
		return rpma_write(s->conn, s->rmr, OFF_WRITE_DST, s->mr,
				OFF_WRITE_SRC, OP_LEN, flags, ctx);
	case FS_FLUSH:
		return rpma_flush(s->conn, s->rmr, OFF_WRITE_DST, OP_LEN,
				RPMA_FLUSH_TYPE_VISIBILITY, flags, ctx);
	case FS_READ:
		return rpma_read(s->conn, s->mr, OFF_READ_DST, s->rmr,
				OFF_WRITE_SRC, OP_LEN, flags, ctx);
	default:
		return rpma_send(s->conn, s->mr, OFF_SEND, MSG_LEN, flags,
				ctx);
	}
}

static int
post_recv(struct fs_stream *s, uint32_t seq)
{
	return rpma_recv(s->conn, s->mr, OFF_RECV + (seq % FS_RECVS) *
			RECV_SLOT, RECV_SLOT, wr_id(FS_RECV, seq));
}

/* Fills the window; a refused post is a sign of the break. */
static void
post_work(struct fs_stream *s)
{
	while (!s->broken && s->sq_next - s->sq_done < FS_WINDOW) {
		uint32_t seq = s->sq_next;
		enum fs_kind kind = cycle[seq % CYCLE_LEN].kind;
		bool sig = cycle[seq % CYCLE_LEN].signaled;
		int ret = post_sq(s, kind, sig, seq);
		if (ret == RPMA_E_PROVIDER) {
			mark_broken(s, "a post refused");
			return;
		}
		IT_ASSERT_MSG(ret == 0, "posting %s %u: %s", kind_names[kind],
				seq, rpma_err_2str(ret));
		s->sq_kind[seq % FS_RING] = (uint8_t)kind;
		s->sq_signaled[seq % FS_RING] = sig;
		s->sq_next = seq + 1;
	}
}

static void
on_recv_wc(struct fs_stream *s, const struct ibv_wc *wc, uint32_t seq)
{
	IT_EQ(wc->opcode, IBV_WC_RECV);
	/* receives complete in the order they were posted, each once */
	IT_ASSERT_MSG(seq == s->rq_done, "receive %u completed, expected %u "
			"(posted up to %u)", seq, s->rq_done, s->rq_next);
	s->rq_done++;
	if (wc->status != IBV_WC_SUCCESS) {
		s->rq_failed = true;
		s->res.failed[FS_RECV]++;
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			s->res.failed_other++;
		return;
	}
	IT_ASSERT_MSG(!s->rq_failed, "receive %u succeeded after a failed "
			"one", seq);
	IT_EQ(wc->byte_len, MSG_LEN);
	s->res.ok++;
	if (s->broken)
		return;
	uint32_t next = s->rq_next;
	int ret = post_recv(s, next);
	if (ret == RPMA_E_PROVIDER) {
		mark_broken(s, "a post refused");
		return;
	}
	IT_OK(ret);
	s->rq_next = next + 1;
}

static void
on_sq_wc(struct fs_stream *s, const struct ibv_wc *wc, enum fs_kind kind,
		uint32_t seq)
{
	IT_ASSERT_MSG(seq - s->sq_done < s->sq_next - s->sq_done,
			"completion of %s %u, which is not outstanding "
			"(%u..%u)", kind_names[kind], seq, s->sq_done,
			s->sq_next);
	IT_EQ(kind, s->sq_kind[seq % FS_RING]);
	IT_EQ(wc->opcode, wc_opcode(kind));
	bool sig = s->sq_signaled[seq % FS_RING];
	bool ok = wc->status == IBV_WC_SUCCESS;

	if (ok || !s->sq_failed) {
		/* work before it completed silently: unsignaled only */
		for (uint32_t u = s->sq_done; u != seq; u++)
			IT_ASSERT_MSG(!s->sq_signaled[u % FS_RING], "signaled "
					"%s %u got no completion (%s %u "
					"came)", kind_names[s->sq_kind[u %
					FS_RING]], u, kind_names[kind], seq);
	} else {
		/* after a failure everything fails, in order */
		IT_ASSERT_MSG(seq == s->sq_done, "failed completions skip "
				"work: %s %u after %u", kind_names[kind], seq,
				s->sq_done - 1);
	}
	if (ok) {
		IT_ASSERT_MSG(sig, "unsignaled %s %u completed successfully",
				kind_names[kind], seq);
		IT_ASSERT_MSG(!s->sq_failed, "%s %u succeeded after a failed "
				"work request", kind_names[kind], seq);
		s->res.ok++;
	} else {
		s->sq_failed = true;
		s->res.failed[kind]++;
		if (!sig)
			s->res.failed_unsignaled++;
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			s->res.failed_other++;
	}
	s->sq_done = seq + 1;
}

static void
on_wc(struct fs_stream *s, const struct ibv_wc *wc)
{
	enum fs_kind kind = (enum fs_kind)(wc->wr_id >> 56);
	uint32_t seq = (uint32_t)wc->wr_id;
	IT_ASSERT_MSG(kind < FS_KINDS && (wc->wr_id >> 32 & 0xffffff) == 0,
			"a completion with a wr_id never posted: %#llx",
			(unsigned long long)wc->wr_id);
	if (wc->status != IBV_WC_SUCCESS)
		mark_broken(s, "an error completion");
	if (kind == FS_RECV)
		on_recv_wc(s, wc, seq);
	else
		on_sq_wc(s, wc, kind, seq);
}

/* Takes the connection event when one is announced. */
static void
check_event(struct fs_stream *s)
{
	if (s->event_seen)
		return;
	struct pollfd pfd = { .fd = s->ev_fd, .events = POLLIN };
	if (poll(&pfd, 1, 0) <= 0)
		return;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	IT_OK(rpma_conn_next_event(s->conn, &ev));
	IT_ASSERT_MSG(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED,
			"connection event %s in the middle of the stream",
			rpma_utils_conn_event_2str(ev));
	s->event_seen = true;
	s->res.event = ev;
	s->res.t_event = it_now_ms();
	mark_broken(s, "the connection event");
}

/*
 * Takes the completions there are; when none, waits a little for one or
 * for an event. Returns whether completions may still come.
 */
static bool
reap(struct fs_stream *s)
{
	struct ibv_wc wc[16];
	int got = 0;
	int ret = rpma_cq_get_wc(s->cq, 16, wc, &got);
	if (ret == 0) {
		for (int i = 0; i < got; i++)
			on_wc(s, &wc[i]);
		return true;
	}
	if (ret == RPMA_E_PROVIDER) {
		/* rpmad's side is gone and nothing more is owed */
		mark_broken(s, "the completion queue");
		return false;
	}
	IT_ASSERT_MSG(ret == RPMA_E_NO_COMPLETION, "rpma_cq_get_wc: %s",
			rpma_err_2str(ret));
	check_event(s);

	/* arm the queue (its fd is non-blocking), then sleep on both fds */
	ret = rpma_cq_wait(s->cq);
	if (ret == 0)
		return true;
	if (ret == RPMA_E_PROVIDER) {
		mark_broken(s, "the completion queue");
		return false;
	}
	IT_ASSERT_MSG(ret == RPMA_E_NO_COMPLETION, "rpma_cq_wait: %s",
			rpma_err_2str(ret));
	struct pollfd pfd[2] = {
		{ .fd = s->cq_fd, .events = POLLIN },
		{ .fd = s->ev_fd, .events = s->event_seen ? 0 : POLLIN },
	};
	int r = poll(pfd, 2, IDLE_WAIT_MS);
	IT_ASSERT_MSG(r >= 0 || errno == EINTR, "poll: %s", strerror(errno));
	return true;
}

void
fs_run_ok(struct fs_stream *s, uint64_t n)
{
	uint64_t end = it_now_ms() + IT_WAIT_MS;
	while (s->res.ok < n) {
		post_work(s);
		(void) reap(s);
		IT_ASSERT_MSG(!s->broken, "the stream broke (%s) after %llu "
				"completions", s->res.cause,
				(unsigned long long)s->res.ok);
		IT_ASSERT_MSG(it_now_ms() < end, "only %llu of %llu "
				"completions within %d ms",
				(unsigned long long)s->res.ok,
				(unsigned long long)n, IT_WAIT_MS);
	}
}

static void
until_broken(struct fs_stream *s, int timeout_ms, bool post)
{
	uint64_t end = it_now_ms() + (uint64_t)timeout_ms;
	while (!s->broken) {
		if (post)
			post_work(s);
		(void) reap(s);
		IT_ASSERT_MSG(it_now_ms() < end, "the connection did not break "
				"within %d ms (%llu completions)", timeout_ms,
				(unsigned long long)s->res.ok);
	}
}

void
fs_run_until_broken(struct fs_stream *s, int timeout_ms)
{
	until_broken(s, timeout_ms, true);
}

void
fs_idle_until_broken(struct fs_stream *s, int timeout_ms)
{
	until_broken(s, timeout_ms, false);
}

static bool
all_done(const struct fs_stream *s)
{
	return s->sq_done == s->sq_next && s->rq_done == s->rq_next;
}

void
fs_drain(struct fs_stream *s, int timeout_ms)
{
	IT_ASSERT(s->broken);
	uint64_t end = it_now_ms() + (uint64_t)timeout_ms;
	bool more = true;
	for (;;) {
		if (all_done(s) && s->res.t_flushed == 0)
			s->res.t_flushed = it_now_ms();
		if (all_done(s) && s->event_seen)
			break;
		if (more)
			more = reap(s);
		else
			check_event(s);
		IT_ASSERT_MSG(all_done(s) || more, "rpmad's side is gone with "
				"%u send-queue and %u receive completions "
				"missing", s->sq_next - s->sq_done,
				s->rq_next - s->rq_done);
		if (!more && !s->event_seen) {
			struct pollfd pfd = { .fd = s->ev_fd, .events = POLLIN };
			(void) poll(&pfd, 1, IDLE_WAIT_MS);
		}
		IT_ASSERT_MSG(it_now_ms() < end, "within %d ms of the break "
				"(%s): event %s, %u send-queue and %u receive "
				"completions missing", timeout_ms, s->res.cause,
				s->event_seen ? "seen" : "not seen",
				s->sq_next - s->sq_done,
				s->rq_next - s->rq_done);
	}
	/* nothing more, ever */
	struct ibv_wc wc;
	int ret = rpma_cq_get_wc(s->cq, 1, &wc, NULL);
	IT_ASSERT_MSG(ret == RPMA_E_NO_COMPLETION || ret == RPMA_E_PROVIDER,
			"one more completion (%d): wr_id %#llx status %s", ret,
			(unsigned long long)wc.wr_id,
			ibv_wc_status_str(wc.status));
}

void
fs_posts_fail(struct fs_stream *s)
{
	uint32_t seq = s->sq_next;
	for (int k = FS_WRITE; k < FS_RECV; k++) {
		IT_ERR(RPMA_E_PROVIDER, post_sq(s, (enum fs_kind)k, true,
				seq));
		IT_ERR(RPMA_E_PROVIDER, post_sq(s, (enum fs_kind)k, false,
				seq));
	}
	IT_ERR(RPMA_E_PROVIDER, post_recv(s, s->rq_next));
	/* and nothing completes for them */
	struct ibv_wc wc;
	int ret = rpma_cq_get_wc(s->cq, 1, &wc, NULL);
	IT_ASSERT_MSG(ret == RPMA_E_NO_COMPLETION || ret == RPMA_E_PROVIDER,
			"a refused post completed (%d): wr_id %#llx", ret,
			(unsigned long long)wc.wr_id);
}

static long long
rel(uint64_t t, uint64_t since)
{
	return t ? (long long)t - (long long)since : -1;
}

void
fs_report(const struct fs_stream *s, const char *who, uint64_t since)
{
	const struct fs_result *r = &s->res;
	(void) fprintf(stderr, "%s: broke after %lld ms (%s), %s after %lld "
			"ms, %u+%u outstanding failed within %lld ms "
			"(write %u flush %u read %u send %u recv %u; "
			"unsignaled %u; not WR_FLUSH_ERR %u); %llu completed "
			"before\n", who, rel(r->t_break, since), r->cause,
			rpma_utils_conn_event_2str(r->event),
			rel(r->t_event, since), r->sq_outstanding,
			r->rq_outstanding, rel(r->t_flushed, since),
			r->failed[FS_WRITE], r->failed[FS_FLUSH],
			r->failed[FS_READ], r->failed[FS_SEND],
			r->failed[FS_RECV], r->failed_unsignaled,
			r->failed_other, (unsigned long long)r->ok);
}

void
fs_fini(struct fs_stream *s)
{
	IT_OK(rpma_conn_disconnect(s->conn));
	IT_OK(rpma_conn_delete(&s->conn));
	if (s->rmr)
		IT_OK(rpma_mr_remote_delete(&s->rmr));
	IT_OK(rpma_mr_dereg(&s->mr));
	free(s->buf);
	s->buf = NULL;
}
