// SPDX-License-Identifier: BSD-3-Clause
/*
 * hostile_wire.c -- a remote peer that lies on the software transport's
 * wire (rpmad/transport/tcp/tcp_wire.h), spoken here with rpmad's own encoder.
 *
 * The liar as the active side, against a server application S that uses
 * the library normally on rpmad A: truncated frames, impossible lengths,
 * unknown types, reserved bytes set, frames out of sequence or on the
 * wrong socket, keys it was never given, accesses past or across the end
 * of a registration, a read of 2^32-1 bytes, a message acknowledging
 * operations never sent, a message longer than the receive waiting for
 * it, a write into a file its owner truncated,
 * floods of requests whose answers it never reads, and abuse of the
 * HELLO pairing (unknown tokens, two primaries with one token, missing
 * secondaries, silent sockets, a hundred half-open connections).
 *
 * The liar as the passive side, against a client application C on rpmad
 * B: answers for nothing, answers of the wrong kind or length, a refusal
 * with a status no target sends, operations on the wrong socket and into
 * memory C never offered.
 *
 * Expected: every lie is refused (a NAK with the status the protocol
 * names, or the connection closed); the applications see error
 * completions or RPMA_CONN_LOST, never a byte outside what they
 * registered for the purpose; rpmad's memory stays bounded under a flood;
 * the pairing timeout (5 s) closes what never pairs; an innocent pair on
 * the same two rpmads works on undisturbed; both rpmads keep their pids
 * and every descriptor they took comes back.
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "hostile.h"
#include "th_suite.h"
#include "wire_peer.h"

#define PAGE 4096
#define SEED_W 501
#define S_REG_OFF (PAGE + 128)
#define S_REG_LEN 2048
#define S_RECV_OFF 64		/* where S's receive buffer starts */
#define S_RECV_LEN 64
#define FILE_SIZE (64 * 1024)
/* a frame the liar waits for comes at once; this bounds a hang */
#define FRAME_MS 5000
/* rpmad closes a socket that never pairs after 5 s (tcp_open.c) */
#define PAIRING_MS 5000
/* how much more memory a flood may cost rpmad (KiB) */
#define FLOOD_RSS_KB (100 * 1024)

enum {
	TAG_DESCS = 100,	/* S -> parent: its two descriptors */
	TAG_NEXT,		/* parent -> S: int what */
	TAG_RECV_POSTED,	/* S -> parent */
	TAG_ESTABLISHED, /* S -> parent: its accept completed */
	TAG_S_DONE,
	TAG_C_NEXT,		/* parent -> C: int lie */
	TAG_C_READY,		/* C -> parent: its descriptor, posted */
	TAG_C_DONE,
};

/* NEXT_CONN_RECV: the message is too long; _FLUSHED: the connection ends */
enum next { NEXT_END = -1, NEXT_CONN, NEXT_CONN_RECV, NEXT_CONN_RECV_FLUSHED,
	NEXT_TRUNCATE };

/* ==================================================== the server S */

static int
server(const struct it_env *env, void *arg)
{
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	uint8_t *buf = it_alloc(3 * PAGE), *ref = it_alloc(3 * PAGE);
	it_fill(buf, 3 * PAGE, SEED_W);
	memcpy(ref, buf, 3 * PAGE);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(peer, buf + S_REG_OFF, S_REG_LEN,
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr));
	/* receives land in the first page, guarded by the pattern too */
	struct rpma_mr_local *rmr = IT_REG(peer, buf, PAGE, RPMA_MR_USAGE_RECV);
	/* a file this process will truncate under the liar's write */
	int fd;
	void *pm = it_file_map(env, "wire.pmem", FILE_SIZE, &fd);
	struct rpma_mr_local *fmr =
			IT_REG(peer, pm, FILE_SIZE, RPMA_MR_USAGE_WRITE_DST);

	struct rpma_ep *ep = NULL;
	IT_OK(rpma_ep_listen(peer, IT_ADDR, env->port, &ep));
	struct it_desc d[2];
	memset(d, 0, sizeof(d));
	size_t len = 0;
	IT_OK(rpma_mr_get_descriptor_size(mr, &len));
	IT_OK(rpma_mr_get_descriptor(mr, d[0].mr));
	IT_OK(rpma_mr_get_descriptor(fmr, d[1].mr));
	d[0].mr_len = d[1].mr_len = (uint8_t)len;
	IT_EQ(it_tell(IT_PARENT, TAG_DESCS, d, sizeof(d)), 0);

	for (;;) {
		int next;
		IT_EQ(it_expect(TAG_NEXT, &next, sizeof(next)), sizeof(next));
		if (next == NEXT_END)
			break;
		if (next == NEXT_TRUNCATE) {
			IT_EQ(ftruncate(fd, 0), 0);
			IT_EQ(it_tell(IT_PARENT, TAG_RECV_POSTED, NULL, 0), 0);
			continue;
		}
		struct rpma_conn *conn = it_accept_next(ep, NULL, NULL);
		IT_EQ(it_tell(IT_PARENT, TAG_ESTABLISHED, NULL, 0), 0);
		if (next == NEXT_CONN_RECV || next == NEXT_CONN_RECV_FLUSHED) {
			IT_OK(rpma_recv(conn, rmr, S_RECV_OFF, S_RECV_LEN,
					(void *)0x5e));
			IT_EQ(it_tell(IT_PARENT, TAG_RECV_POSTED, NULL, 0), 0);
			struct rpma_cq *cq = NULL;
			IT_OK(rpma_conn_get_cq(conn, &cq));
			struct ibv_wc wc;
			it_wc(cq, &wc);
			IT_EQ(wc.wr_id, 0x5e);
			enum ibv_wc_status want = next == NEXT_CONN_RECV ?
				IBV_WC_LOC_LEN_ERR : IBV_WC_WR_FLUSH_ERR;
			IT_ASSERT_MSG(wc.status == want, "the receive of a bad "
					"message: %s, wanted %s",
					ibv_wc_status_str(wc.status),
					ibv_wc_status_str(want));
		}
		enum rpma_conn_event ev = it_next_event(conn, IT_WAIT_MS);
		IT_ASSERT_MSG(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED,
				"event %s", rpma_utils_conn_event_2str(ev));
		(void) rpma_conn_disconnect(conn);
		IT_OK(rpma_conn_delete(&conn));
	}

	for (size_t i = 0; i < 3 * PAGE; i++)
		IT_ASSERT_MSG(buf[i] == ref[i], "byte %zu of S's buffer changed",
				i);
	IT_OKS(rpma_ep_shutdown(&ep), rpma_mr_dereg(&fmr), rpma_mr_dereg(&rmr),
			rpma_mr_dereg(&mr), rpma_peer_delete(&peer));
	IT_EQ(munmap(pm, FILE_SIZE), 0);
	IT_EQ(close(fd), 0);
	free(ref);
	free(buf);
	IT_EQ(it_tell(IT_PARENT, TAG_S_DONE, NULL, 0), 0);
	return 0;
}

/* ================================================ the liar, active */

struct liar {
	struct it_group *g;
	const struct it_env *env;
	int p, s;		/* primary, secondary */
	uint64_t seq;		/* the next operation's */
	uint64_t addr, len;	/* S's registration */
	uint32_t key;
	uint64_t faddr;		/* S's file registration */
	uint32_t fkey;
	uint8_t ref[3 * PAGE];	/* S's buffer as it must stay */
};

static void
tell_s(struct liar *l, int next)
{
	ck_assert_int_eq(it_tell(IT_SERVER, TAG_NEXT, &next, sizeof(next)),
			0);
}

/* Both sockets, HELLOs, ACCEPT, READY: an established connection. */
static void
liar_connect(struct liar *l, int next)
{
	tell_s(l, next);
	uint8_t token[TCP_TOKEN_SIZE];
	wire_token(token);
	l->p = wire_connect(l->env->port);
	l->s = wire_connect(l->env->port);
	wire_hello(l->p, HELLO_PRIMARY, token, NULL, 0);
	wire_hello(l->s, HELLO_SECONDARY, token, NULL, 0);
	struct tcp_frame f;
	uint8_t pdata[TCP_PDATA_MAX];
	ck_assert_msg(wire_recv_frame(l->p, &f, pdata, sizeof(pdata), FRAME_MS) == 1,
			"no ACCEPT (%s)", it_report());
	ck_assert_int_eq(f.type, TF_ACCEPT);
	struct tcp_frame ready = { .type = TF_READY };
	wire_send_frame(l->p, &ready, NULL, 0);
	/*
	 * the two sockets are not ordered: a lie on the secondary, or its
	 * end, could reach rpmad before the READY and S would see its
	 * connection lost instead of established
	 */
	ck_assert_msg(it_group_hear(l->g, TAG_ESTABLISHED, 1) == 0, "%s",
			it_report());
	l->seq = 1;
}

static void
liar_close(struct liar *l)
{
	(void) close(l->p);
	(void) close(l->s);
	l->p = l->s = -1;
}

/* An operation of the liar's (its sequence number taken). */
static void
liar_op(struct liar *l, uint8_t type, uint8_t flags, uint64_t raddr,
		uint32_t rkey, uint32_t length, const void *payload,
		size_t plen)
{
	struct tcp_frame f = { .type = type, .flags = flags, .length = length,
			.seq = l->seq++, .raddr = raddr, .rkey = rkey };
	wire_send_frame(l->p, &f, payload, plen);
}

/* The next answer on the primary must be a NAK of `seq` with `status`. */
static void
expect_nak(struct liar *l, uint64_t seq, enum ibv_wc_status status,
		const char *what)
{
	struct tcp_frame f;
	uint8_t junk[PAGE];
	int r = wire_recv_frame(l->p, &f, junk, sizeof(junk), FRAME_MS);
	ck_assert_msg(r == 1, "%s: no answer (%d)", what, r);
	ck_assert_msg(f.type == TF_NAK, "%s: answer type %u, wanted NAK", what,
			f.type);
	ck_assert_uint_eq(f.seq, seq);
	ck_assert_msg(f.imm == status, "%s: NAK %s, wanted %s", what,
			ibv_wc_status_str((enum ibv_wc_status)f.imm),
			ibv_wc_status_str(status));
}

/* Nothing more comes on the primary for a while (refused: discarded). */
static void
expect_silence(struct liar *l, const char *what)
{
	struct tcp_frame f;
	uint8_t junk[PAGE];
	int r = wire_recv_frame(l->p, &f, junk, sizeof(junk), 100);
	ck_assert_msg(r != 1, "%s: an answer (type %u) after the refusal",
			what, f.type);
}

static void
expect_closed(struct liar *l, const char *what)
{
	ck_assert_msg(wire_closed_within(l->p, FRAME_MS), "%s: rpmad kept the "
			"connection", what);
}

/* Raw header bytes, whatever they say. */
static void
send_raw_head(int fd, uint8_t type, uint8_t flags, uint16_t reserved,
		uint32_t length, uint64_t seq)
{
	uint8_t h[TCP_FRAME_SIZE];
	memset(h, 0, sizeof(h));
	h[0] = type;
	h[1] = flags;
	memcpy(h + 2, &reserved, 2);
	memcpy(h + 4, &length, 4);
	memcpy(h + 8, &seq, 8);
	wire_send_all(fd, h, sizeof(h));
}

enum lie {
	/* the connection must end */
	TRUNCATED_HEADER,
	TRUNCATED_PAYLOAD,
	ATOMIC_LEN7,
	ACCEPT_LEN300,
	UNKNOWN_TYPE,
	RESERVED_SET,
	FLAGS_NOT_ALLOWED,
	OUT_OF_SEQUENCE,
	HELLO_AGAIN,
	READY_AGAIN,
	ANSWER_ON_PRIMARY,
	ACK_FOR_NOTHING,
	READ_RESP_FOR_NOTHING,
	NAK_FOR_NOTHING,
	OP_ON_SECONDARY,
	MSG_ACKS_UNSENT,
	/* refused with a NAK; what follows is discarded */
	KEY_NEVER_GIVEN,
	OFFSET_PAST_END,
	WRITE_ACROSS_END,
	READ_4G,
	ATOMIC_MISALIGNED,
	ATOMIC_BEYOND,
	FLUSH_PERSIST_NOT_ALLOWED,
	FLUSH_BEYOND,
	SEND_TOO_LONG,
	WRITE_INTO_TRUNCATED,
	/* answered: the liar gets its data */
	READ_GOOD,
	LIES
};

static const char *const lie_names[LIES] = {
	"truncated header", "truncated payload", "atomic of 7 bytes",
	"accept of 300 bytes", "unknown type", "reserved bytes set",
	"flags not allowed", "out of sequence", "hello again", "ready again",
	"answer on the primary", "ack for nothing",
	"read response for nothing", "nak for nothing",
	"operation on the secondary",
	"message acknowledging operations never sent",
	"key never given", "offset past the end", "write across the end",
	"read of 4 GiB", "atomic misaligned", "atomic beyond",
	"persistent flush not allowed", "flush beyond", "send too long",
	"write into a truncated file", "read",
};

static void
one_lie(struct liar *l, int lie)
{
	const char *what = lie_names[lie];
	uint8_t junk[2 * PAGE];
	memset(junk, 0xee, sizeof(junk));
	const uint8_t *good = l->ref + S_REG_OFF;	/* what S has there */

	if (lie == WRITE_INTO_TRUNCATED) {
		tell_s(l, NEXT_TRUNCATE);
		ck_assert_msg(it_group_hear(l->g, TAG_RECV_POSTED, 1) == 0,
				"%s", it_report());
	}
	liar_connect(l, lie == SEND_TOO_LONG ? NEXT_CONN_RECV :
			lie == MSG_ACKS_UNSENT ? NEXT_CONN_RECV_FLUSHED : NEXT_CONN);
	switch (lie) {
	case TRUNCATED_HEADER:
		wire_send_all(l->p, junk, 10);
		liar_close(l);
		return;
	case TRUNCATED_PAYLOAD:
		liar_op(l, TF_WRITE, 0, l->addr, l->key, 100, good, 50);
		liar_close(l);
		return;
	case ATOMIC_LEN7:
		send_raw_head(l->p, TF_ATOMIC, 0, 0, 7, 1);
		wire_send_all(l->p, junk, 7);
		break;
	case ACCEPT_LEN300:
		send_raw_head(l->p, TF_ACCEPT, 0, 0, 300, 0);
		wire_send_all(l->p, junk, 300);
		break;
	case UNKNOWN_TYPE:
		send_raw_head(l->p, 99, 0, 0, 0, 1);
		break;
	case RESERVED_SET:
		send_raw_head(l->p, TF_READ, 0, 0x100, 8, 1);
		break;
	case FLAGS_NOT_ALLOWED:
		liar_op(l, TF_WRITE, TF_F_PERSIST, l->addr, l->key, 8, good, 8);
		break;
	case OUT_OF_SEQUENCE:
		l->seq = 5;
		liar_op(l, TF_WRITE, 0, l->addr, l->key, 8, good, 8);
		break;
	case HELLO_AGAIN: {
		uint8_t token[TCP_TOKEN_SIZE];
		wire_token(token);
		wire_hello(l->p, HELLO_PRIMARY, token, NULL, 0);
		break;
	}
	case READY_AGAIN: {
		struct tcp_frame f = { .type = TF_READY };
		wire_send_frame(l->p, &f, NULL, 0);
		break;
	}
	case ANSWER_ON_PRIMARY: {
		struct tcp_frame f = { .type = TF_ACK, .seq = 1 };
		wire_send_frame(l->p, &f, NULL, 0);
		break;
	}
	case ACK_FOR_NOTHING: {
		struct tcp_frame f = { .type = TF_ACK, .seq = 1 };
		wire_send_frame(l->s, &f, NULL, 0);
		break;
	}
	case READ_RESP_FOR_NOTHING: {
		struct tcp_frame f = { .type = TF_READ_RESP, .seq = 1,
				.length = 64 };
		wire_send_frame(l->s, &f, junk, 64);
		break;
	}
	case NAK_FOR_NOTHING: {
		struct tcp_frame f = { .type = TF_NAK, .seq = 1,
				.imm = IBV_WC_REM_ACCESS_ERR };
		wire_send_frame(l->s, &f, NULL, 0);
		break;
	}
	case OP_ON_SECONDARY: {
		struct tcp_frame f = { .type = TF_WRITE, .seq = 1, .length = 8,
				.raddr = l->addr, .rkey = l->key };
		wire_send_frame(l->s, &f, good, 8);
		break;
	}
	case MSG_ACKS_UNSENT:
		ck_assert_msg(it_group_hear(l->g, TAG_RECV_POSTED, 1) == 0,
				"%s", it_report());
		/* S handed over no operation: nothing for a message to ack */
		liar_op(l, TF_SEND, 0, 5, 0, 8, good, 8);
		break;
	case KEY_NEVER_GIVEN:
		liar_op(l, TF_WRITE, 0, l->addr, l->key ^ 0x5a5a5a5a, 64, junk,
				64);
		/* and a good key after it: discarded, never applied */
		liar_op(l, TF_WRITE, 0, l->addr, l->key, 64, junk, 64);
		expect_nak(l, 1, IBV_WC_REM_ACCESS_ERR, what);
		expect_silence(l, what);
		liar_close(l);
		return;
	case OFFSET_PAST_END:
		liar_op(l, TF_WRITE, 0, l->addr + l->len + 64, l->key, 64, junk,
				64);
		expect_nak(l, 1, IBV_WC_REM_ACCESS_ERR, what);
		liar_close(l);
		return;
	case WRITE_ACROSS_END:
		liar_op(l, TF_WRITE, 0, l->addr + l->len - 32, l->key, 64, junk,
				64);
		expect_nak(l, 1, IBV_WC_REM_ACCESS_ERR, what);
		liar_close(l);
		return;
	case READ_4G:
		liar_op(l, TF_READ, 0, l->addr, l->key, UINT32_MAX, NULL, 0);
		expect_nak(l, 1, IBV_WC_REM_ACCESS_ERR, what);
		liar_close(l);
		return;
	case ATOMIC_MISALIGNED:
		liar_op(l, TF_ATOMIC, 0, l->addr + 4, l->key, 8, junk, 8);
		expect_nak(l, 1, IBV_WC_REM_INV_REQ_ERR, what);
		liar_close(l);
		return;
	case ATOMIC_BEYOND:
		liar_op(l, TF_ATOMIC, 0, (l->addr + l->len + 7) & ~7ull,
				l->key, 8, junk, 8);
		expect_nak(l, 1, IBV_WC_REM_ACCESS_ERR, what);
		liar_close(l);
		return;
	case FLUSH_PERSIST_NOT_ALLOWED:
		liar_op(l, TF_FLUSH, TF_F_PERSIST, l->addr, l->key, 64, NULL, 0);
		expect_nak(l, 1, IBV_WC_REM_ACCESS_ERR, what);
		liar_close(l);
		return;
	case FLUSH_BEYOND:
		liar_op(l, TF_FLUSH, 0, l->addr, l->key, (uint32_t)l->len + 1,
				NULL, 0);
		expect_nak(l, 1, IBV_WC_REM_ACCESS_ERR, what);
		liar_close(l);
		return;
	case SEND_TOO_LONG:
		ck_assert_msg(it_group_hear(l->g, TAG_RECV_POSTED, 1) == 0,
				"%s", it_report());
		liar_op(l, TF_SEND, 0, 0, 0, 2 * S_RECV_LEN, junk,
				2 * S_RECV_LEN);
		expect_nak(l, 1, IBV_WC_REM_INV_REQ_ERR, what);
		liar_close(l);
		return;
	case WRITE_INTO_TRUNCATED:
		/* the header alone first: the payload then comes by itself */
		liar_op(l, TF_WRITE, 0, l->faddr, l->fkey, 2 * PAGE, NULL, 0);
		it_sleep_ms(50);
		wire_send_all(l->p, junk, 2 * PAGE);
		/*
		 * the pages are gone from the owner's file: the write lands
		 * nowhere, as a NIC's into pinned pages nobody maps, and is
		 * acknowledged like any other
		 */
		struct tcp_frame ack;
		ck_assert_int_eq(wire_recv_frame(l->p, &ack, junk, sizeof(junk),
				FRAME_MS), 1);
		ck_assert_msg(ack.type == TF_ACK && ack.seq == 1, "%s: answer "
				"type %u of %llu, wanted ACK of 1", what,
				ack.type, (unsigned long long)ack.seq);
		liar_close(l);
		return;
	case READ_GOOD: {
		liar_op(l, TF_READ, 0, l->addr, l->key, 64, NULL, 0);
		struct tcp_frame f;
		ck_assert_int_eq(wire_recv_frame(l->p, &f, junk, sizeof(junk),
				FRAME_MS), 1);
		ck_assert_int_eq(f.type, TF_READ_RESP);
		ck_assert_uint_eq(f.seq, 1);
		ck_assert_uint_eq(f.length, 64);
		ck_assert_msg(memcmp(junk, good, 64) == 0, "read: wrong data");
		/* the goodbye is answered in kind */
		struct tcp_frame bye = { .type = TF_DISCONNECT };
		wire_send_frame(l->p, &bye, NULL, 0);
		ck_assert_int_eq(wire_recv_frame(l->s, &f, junk, sizeof(junk),
				FRAME_MS), 1);
		ck_assert_int_eq(f.type, TF_DISCONNECT);
		liar_close(l);
		return;
	}
	}
	expect_closed(l, what);
	liar_close(l);
}

/* ------------------------------------------------------- the floods */

/*
 * Sends `n` copies of a frame (and payload) without reading anything,
 * until done or until rpmad has taken nothing for a second. Returns how
 * many went out.
 */
static unsigned
flood(struct liar *l, uint8_t type, uint32_t length, const void *payload,
		unsigned n)
{
	size_t one = TCP_FRAME_SIZE + (type == TF_READ ? 0 : length);
	enum { BATCH = 512 };
	uint8_t *batch = malloc(one * BATCH);
	ck_assert_ptr_nonnull(batch);
	int flags = fcntl(l->p, F_GETFL);
	(void) fcntl(l->p, F_SETFL, flags | O_NONBLOCK);
	unsigned sent = 0;
	uint64_t last_progress = it_now_ms();
	while (sent < n && it_now_ms() - last_progress < 1000) {
		for (unsigned i = 0; i < BATCH; i++) {
			struct tcp_frame f = { .type = type, .length = length,
					.seq = l->seq + i, .raddr = l->addr,
					.rkey = l->key };
			tcp_frame_encode(&f, batch + i * one);
			if (type != TF_READ)
				memcpy(batch + i * one + TCP_FRAME_SIZE,
						payload, length);
		}
		size_t off = 0;
		while (off < one * BATCH && it_now_ms() - last_progress < 1000) {
			ssize_t w = send(l->p, batch + off, one * BATCH - off,
					MSG_NOSIGNAL);
			if (w > 0) {
				off += (size_t)w;
				last_progress = it_now_ms();
				continue;
			}
			if (w < 0 && errno != EAGAIN && errno != EINTR)
				break;
			struct pollfd pfd = { .fd = l->p, .events = POLLOUT };
			(void) poll(&pfd, 1, 50);
		}
		if (off < one * BATCH) {
			sent += (unsigned)(off / one);
			break;
		}
		l->seq += BATCH;
		sent += BATCH;
	}
	free(batch);
	return sent;
}

/*
 * 400000 reads of 64 bytes (12.8 MB of requests) would cost an rpmad that
 * reads on while its answers pile up some 150 MB.
 */
static void
flood_test(struct liar *l, pid_t daemon, uint8_t type, const char *what,
		unsigned count)
{
	liar_connect(l, NEXT_CONN);
	long before = it_proc_rss_kb(daemon);
	unsigned n = flood(l, type, 64, l->ref + S_REG_OFF, count);
	it_sleep_ms(200);
	long after = it_proc_rss_kb(daemon);
	(void) fprintf(stderr, "hostile_wire: flood of %s: %u frames went "
			"out; rpmad's RSS %ld -> %ld KiB\n", what, n, before,
			after);
	ck_assert_msg(after - before < FLOOD_RSS_KB, "a flood of %u %s made "
			"rpmad grow by %ld KiB", n, what, after - before);
	liar_close(l);
}

/* ------------------------------------------------------- pairing abuse */

enum pairing {
	SECONDARY_UNKNOWN_TOKEN,	/* wait, then closed */
	PRIMARY_ONLY,
	SILENT,
	SPARE_PRIMARY,			/* the second of two with one token */
	HALF_OPEN_MANY,			/* 100 primaries, never paired */
	PAIRING_SLOW = HALF_OPEN_MANY + 100,
	/* closed at once */
	SECONDARY_WITH_PDATA = PAIRING_SLOW,
	BAD_MAGIC,
	BAD_VERSION,
	HELLO_SHORT,
	HELLO_LONG,
	PDATA_LEN_LIES,
	OP_FIRST,
	HELLO_RESERVED,
	PAIRING_ALL
};

/* The first word of every kind of bad HELLO. */
static void
bad_hello(int fd, int kind)
{
	uint8_t token[TCP_TOKEN_SIZE];
	wire_token(token);
	struct tcp_hello h = { .magic = TCP_WIRE_MAGIC,
			.version = TCP_WIRE_VERSION, .role = HELLO_PRIMARY };
	memcpy(h.token, token, TCP_TOKEN_SIZE);
	uint8_t buf[512];
	memset(buf, 0, sizeof(buf));
	uint32_t len = TCP_HELLO_SIZE;
	switch (kind) {
	case SECONDARY_WITH_PDATA:
		h.role = HELLO_SECONDARY;
		h.pdata_len = 5;
		len += 5;
		break;
	case BAD_MAGIC:
		h.magic ^= 1;
		break;
	case BAD_VERSION:
		h.version = 99;
		break;
	case HELLO_SHORT:
		len = TCP_HELLO_SIZE - 1;
		break;
	case HELLO_LONG:
		len = 300;
		break;
	case PDATA_LEN_LIES:
		h.pdata_len = 10;
		len += 20;
		break;
	case OP_FIRST: {
		struct tcp_frame f = { .type = TF_WRITE, .seq = 1, .length = 8 };
		wire_send_frame(fd, &f, buf, 8);
		return;
	}
	default:
		break;
	}
	tcp_hello_encode(&h, buf);
	if (kind == HELLO_RESERVED)
		buf[38] = 1;
	struct tcp_frame f = { .type = TF_HELLO, .length = len };
	uint8_t head[TCP_FRAME_SIZE];
	tcp_frame_encode(&f, head);
	wire_send_all(fd, head, sizeof(head));
	wire_send_all(fd, buf, len);
}

/* ------------------------------------------------------------ the test */

START_TEST(test_liar_active)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 2), 0);
	struct test_daemon *a = &env.d[0], *b = &env.d[1];
	pid_t pid_a = a->pid, pid_b = b->pid;
	int fds_a = it_proc_fds(pid_a), fds_b = it_proc_fds(pid_b);
	srandom(8086);

	struct hu_pair pair = { .server = IT_THIRD, .client = IT_FOURTH,
			.steal_to = IT_PARENT };
	ck_assert_int_eq(it_free_port(pair.port, sizeof(pair.port)), 0);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_THIRD, &env, a,
			hu_innocent_server, &pair), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_FOURTH, &env, b,
			hu_innocent_client, &pair), 0);
	ck_assert_msg(it_group_hear(&g, HU_TAG_INNOCENT_UP, 1) == 0, "%s",
			it_report());
	ck_assert_int_eq(it_group_spawn(&g, IT_SERVER, &env, a, server, NULL),
			0);
	struct it_desc d[2];
	ck_assert_int_eq(it_hear(TAG_DESCS, d, sizeof(d), IT_WAIT_MS),
			(int)sizeof(d));
	struct liar *l = calloc(1, sizeof(*l));
	ck_assert_ptr_nonnull(l);
	l->g = &g;
	l->env = &env;
	l->addr = hu_desc_addr(d[0].mr);
	l->len = hu_desc_len(d[0].mr);
	l->key = hu_desc_key(d[0].mr);
	l->faddr = hu_desc_addr(d[1].mr);
	l->fkey = hu_desc_key(d[1].mr);
	it_fill(l->ref, 3 * PAGE, SEED_W);

	/* the pairing abuse first: its sockets wait for their timeout */
	uint64_t t0 = it_now_ms();
	int pairing[PAIRING_ALL];
	uint8_t token[TCP_TOKEN_SIZE];
	for (int i = 0; i < PAIRING_ALL; i++) {
		pairing[i] = wire_connect(env.port);
		if (i == SECONDARY_UNKNOWN_TOKEN) {
			wire_token(token);
			wire_hello(pairing[i], HELLO_SECONDARY, token, NULL, 0);
		} else if (i == PRIMARY_ONLY || i >= HALF_OPEN_MANY) {
			wire_token(token);
			if (i < PAIRING_SLOW)
				wire_hello(pairing[i], HELLO_PRIMARY, token, NULL, 3);
			else
				bad_hello(pairing[i], i);
		}
	}
	/* two primaries with one token, then the secondary: one pairs */
	wire_token(token);
	tell_s(l, NEXT_CONN);
	int twin = wire_connect(env.port);
	wire_hello(pairing[SPARE_PRIMARY], HELLO_PRIMARY, token, NULL, 0);
	wire_hello(twin, HELLO_PRIMARY, token, NULL, 0);
	int twin_s = wire_connect(env.port);
	wire_hello(twin_s, HELLO_SECONDARY, token, NULL, 0);
	/* the bad HELLOs are refused at once */
	for (int i = PAIRING_SLOW; i < PAIRING_ALL; i++)
		ck_assert_msg(wire_closed_within(pairing[i], FRAME_MS), "bad HELLO "
				"%d: rpmad kept the socket", i - PAIRING_SLOW);
	/*
	 * whichever primary got paired gets the ACCEPT; the spare, one of
	 * the first sockets, may instead have been pushed out by the flood
	 * of half-open ones (rpmad keeps the newest 64): an end of file
	 */
	struct pollfd pp[2] = { { .fd = twin, .events = POLLIN },
		{ .fd = pairing[SPARE_PRIMARY], .events = POLLIN } };
	int paired = -1;
	uint64_t accept_by = it_now_ms() + FRAME_MS;
	while (paired < 0 && it_now_ms() < accept_by) {
		ck_assert_int_ge(poll(pp, 2, FRAME_MS), 0);
		for (int k = 0; k < 2 && paired < 0; k++) {
			char peek;
			if (!pp[k].revents)
				continue;
			if (recv(pp[k].fd, &peek, 1, MSG_PEEK |
					MSG_DONTWAIT) == 1)
				paired = pp[k].fd;
			else
				pp[k].fd = -1;	/* closed: not this one */
		}
	}
	ck_assert_msg(paired >= 0, "no ACCEPT on either primary");
	if (paired != twin) {
		pairing[SPARE_PRIMARY] = twin;
		twin = paired;
	}
	struct tcp_frame f;
	uint8_t pd[TCP_PDATA_MAX];
	ck_assert_int_eq(wire_recv_frame(twin, &f, pd, sizeof(pd), FRAME_MS), 1);
	ck_assert_int_eq(f.type, TF_ACCEPT);
	struct tcp_frame ready = { .type = TF_READY };
	wire_send_frame(twin, &ready, NULL, 0);
	ck_assert_msg(it_group_hear(&g, TAG_ESTABLISHED, 1) == 0, "%s",
			it_report());
	(void) close(twin);
	(void) close(twin_s);

	/* every lie on a connection of its own */
	for (int lie = 0; lie < LIES; lie++)
		one_lie(l, lie);
	flood_test(l, pid_a, TF_READ, "reads", 400000);
	flood_test(l, pid_a, TF_WRITE, "writes", 100000);

	/* what never paired is closed by the pairing timeout */
	for (int i = 0; i < PAIRING_SLOW; i++) {
		uint64_t now = it_now_ms(), end = t0 + PAIRING_MS + 3000;
		int left = now >= end ? 0 : (int)(end - now);
		ck_assert_msg(wire_closed_within(pairing[i], left), "unpaired socket "
				"%d still open %llu ms after its HELLO", i,
				(unsigned long long)(it_now_ms() - t0));
	}
	for (int i = 0; i < PAIRING_ALL; i++)
		(void) close(pairing[i]);

	tell_s(l, NEXT_END);
	ck_assert_msg(it_group_hear(&g, TAG_S_DONE, 1) == 0, "%s",
			it_report());
	ck_assert_int_eq(it_tell(IT_FOURTH, HU_TAG_INNOCENT_STOP, NULL, 0), 0);
	ck_assert_msg(it_group_hear(&g, HU_TAG_INNOCENT_DONE, 1) == 0, "%s",
			it_report());
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	free(l);

	ck_assert_int_le(it_proc_wait_fds(pid_a, fds_a, IT_WAIT_MS), fds_a);
	ck_assert_int_le(it_proc_wait_fds(pid_b, fds_b, IT_WAIT_MS), fds_b);
	ck_assert_int_eq(it_daemon_serves(a, pid_a), 0);
	ck_assert_int_eq(it_daemon_serves(b, pid_b), 0);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

/* ================================================ the liar, passive */

enum answer_lie {
	RESP_WRONG_LENGTH,	/* READ_RESP longer than the read */
	ACK_NEVER_SENT,		/* ACK of a sequence number not used yet */
	ACK_OVER_READ,		/* ACK that covers a read: data never came */
	NAK_STRANGE_STATUS,	/* a status no target sends */
	NAK_NOT_OUTSTANDING,
	RESP_FOR_WRITE,		/* READ_RESP for the write */
	PASSIVE_OP_ON_PRIMARY,
	WRITE_NOT_OFFERED,	/* into C's memory, which has no remote usage */
	RESP_TRUNCATED,		/* 10 bytes of 64, then the end */
	ANSWER_LIES
};

static const char *const answer_names[ANSWER_LIES] = {
	"read response of the wrong length", "ack never sent",
	"ack over a read", "nak with a strange status",
	"nak not outstanding", "read response for a write",
	"passive operation on the primary", "write not offered",
	"truncated read response",
};

#define C_GUARD_SEED 601

/* C: a client that reads and writes, then sees what the liar did. */
static int
lied_to_client(const struct it_env *env, void *arg)
{
	const char *port = arg;
	struct rpma_peer *peer = it_peer(IT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	/* the middle page registered for reads into it; all guarded */
	uint8_t *buf = it_alloc(3 * PAGE), *ref = it_alloc(3 * PAGE);
	it_fill(buf, 3 * PAGE, C_GUARD_SEED);
	memcpy(ref, buf, 3 * PAGE);
	struct rpma_mr_local *mr = NULL;
	IT_OK(rpma_mr_reg(peer, buf + PAGE, PAGE, RPMA_MR_USAGE_READ_DST |
			RPMA_MR_USAGE_WRITE_SRC, &mr));
	uint8_t desc[32];
	IT_OK(rpma_mr_get_descriptor(mr, desc));
	/* a remote registration as the liar would have described it */
	uint8_t rdesc[21];
	memset(rdesc, 0, sizeof(rdesc));
	rdesc[0] = 0x10;	/* addr 0x1000 */
	rdesc[9] = 0x10;	/* length 0x1000 */
	rdesc[16] = 0x42;	/* key 0x42 */
	rdesc[20] = RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST;
	struct rpma_mr_remote *rmr = NULL;
	IT_OK(rpma_mr_remote_from_descriptor(rdesc, sizeof(rdesc), &rmr));

	for (;;) {
		int lie;
		IT_EQ(it_expect(TAG_C_NEXT, &lie, sizeof(lie)), sizeof(lie));
		if (lie < 0)
			break;
		struct rpma_conn *conn = it_connect_to(peer, port, NULL, NULL);
		struct rpma_cq *cq = NULL;
		IT_OK(rpma_conn_get_cq(conn, &cq));
		/* a read into [64, 128) of the page, then a write */
		IT_OK(rpma_read(conn, mr, 64, rmr, 0, 64,
				RPMA_F_COMPLETION_ALWAYS, (void *)1));
		IT_OK(rpma_write(conn, rmr, 0, mr, 0, 64,
				RPMA_F_COMPLETION_ALWAYS, (void *)2));
		IT_EQ(it_tell(IT_PARENT, TAG_C_READY, desc, sizeof(desc)), 0);
		/* both fail (or are flushed); nothing succeeds on a lie */
		for (int i = 0; i < 2; i++) {
			struct ibv_wc wc;
			it_wc(cq, &wc);
			IT_ASSERT_MSG(wc.status != IBV_WC_SUCCESS, "%s: work "
					"%llu succeeded", answer_names[lie],
					(unsigned long long)wc.wr_id);
		}
		/* only [64, 128) of the page may have changed */
		for (size_t k = 0; k < 3 * PAGE; k++) {
			if (k >= PAGE + 64 && k < PAGE + 128)
				continue;
			IT_ASSERT_MSG(buf[k] == ref[k], "%s: byte %zu of C's "
					"buffer changed", answer_names[lie], k);
		}
		memcpy(buf + PAGE + 64, ref + PAGE + 64, 64);
		if (rpma_conn_disconnect(conn) == 0)
			(void) it_next_event(conn, IT_WAIT_MS);
		IT_OK(rpma_conn_delete(&conn));
		IT_EQ(it_tell(IT_PARENT, TAG_C_DONE, NULL, 0), 0);
	}
	IT_OKS(rpma_mr_remote_delete(&rmr), rpma_mr_dereg(&mr),
			rpma_peer_delete(&peer));
	free(ref);
	free(buf);
	return 0;
}

/* Accepts a connection from C's rpmad: its primary and secondary. */
static void
passive_accept(int lfd, int *p, int *s)
{
	int fds[2];
	uint8_t role[2];
	for (int i = 0; i < 2; i++) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		ck_assert_int_eq(poll(&pfd, 1, FRAME_MS), 1);
		fds[i] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		ck_assert_int_ge(fds[i], 0);
		struct tcp_frame f;
		uint8_t buf[TCP_HELLO_SIZE + TCP_PDATA_MAX];
		ck_assert_int_eq(wire_recv_frame(fds[i], &f, buf, sizeof(buf),
				FRAME_MS), 1);
		ck_assert_int_eq(f.type, TF_HELLO);
		struct tcp_hello h;
		ck_assert_int_eq(tcp_hello_decode(buf, f.length, &h), 0);
		role[i] = h.role;
	}
	ck_assert_int_ne(role[0], role[1]);
	*p = role[0] == HELLO_PRIMARY ? fds[0] : fds[1];
	*s = role[0] == HELLO_PRIMARY ? fds[1] : fds[0];
	/* a liar's rpmad id, as good as any */
	uint8_t id[TCP_ACCEPT_ID_SIZE] = { 0x11, 0x22 };
	struct tcp_frame acc = { .type = TF_ACCEPT, .length = sizeof(id) };
	wire_send_frame(*p, &acc, id, sizeof(id));
	struct tcp_frame f;
	uint8_t junk[PAGE];
	ck_assert_int_eq(wire_recv_frame(*p, &f, junk, sizeof(junk), FRAME_MS), 1);
	ck_assert_int_eq(f.type, TF_READY);
}

static void
answer_lie(struct it_group *g, int lfd, int lie)
{
	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_C_NEXT, &lie, sizeof(lie)), 0);
	int p, s;
	passive_accept(lfd, &p, &s);
	uint8_t cdesc[32];
	ck_assert_int_eq(it_hear(TAG_C_READY, cdesc, sizeof(cdesc),
			IT_WAIT_MS), (int)sizeof(cdesc));
	/* C's read (seq 1) and write (seq 2) arrive on the primary */
	struct tcp_frame rd, wr;
	uint8_t junk[PAGE];
	memset(junk, 0xee, sizeof(junk));
	ck_assert_int_eq(wire_recv_frame(p, &rd, junk, sizeof(junk), FRAME_MS), 1);
	ck_assert_int_eq(rd.type, TF_READ);
	ck_assert_int_eq(wire_recv_frame(p, &wr, junk, sizeof(junk), FRAME_MS), 1);
	ck_assert_int_eq(wr.type, TF_WRITE);
	memset(junk, 0xee, sizeof(junk));

	struct tcp_frame f = { .seq = rd.seq };
	switch (lie) {
	case RESP_WRONG_LENGTH:
		f.type = TF_READ_RESP;
		f.length = 128;
		wire_send_frame(p, &f, junk, 128);
		break;
	case ACK_NEVER_SENT:
		f.type = TF_ACK;
		f.seq = 100;
		wire_send_frame(p, &f, NULL, 0);
		break;
	case ACK_OVER_READ:
		f.type = TF_ACK;
		f.seq = wr.seq;
		wire_send_frame(p, &f, NULL, 0);
		break;
	case NAK_STRANGE_STATUS:
		f.type = TF_NAK;
		f.imm = 9999;
		wire_send_frame(p, &f, NULL, 0);
		break;
	case NAK_NOT_OUTSTANDING:
		f.type = TF_NAK;
		f.seq = 50;
		f.imm = IBV_WC_REM_ACCESS_ERR;
		wire_send_frame(p, &f, NULL, 0);
		break;
	case RESP_FOR_WRITE:
		f.type = TF_READ_RESP;
		f.seq = wr.seq;
		f.length = 64;
		wire_send_frame(p, &f, junk, 64);
		break;
	case PASSIVE_OP_ON_PRIMARY:
		f.type = TF_WRITE;
		f.seq = 1;
		f.length = 64;
		f.raddr = hu_desc_addr(cdesc);
		f.rkey = hu_desc_key(cdesc);
		wire_send_frame(p, &f, junk, 64);
		break;
	case WRITE_NOT_OFFERED: {
		/* on the right socket, with C's own key: no remote usage */
		f.type = TF_WRITE;
		f.seq = 1;
		f.length = 64;
		f.raddr = hu_desc_addr(cdesc);
		f.rkey = hu_desc_key(cdesc);
		wire_send_frame(s, &f, junk, 64);
		struct tcp_frame ans;
		ck_assert_int_eq(wire_recv_frame(s, &ans, junk, sizeof(junk),
				FRAME_MS), 1);
		ck_assert_int_eq(ans.type, TF_NAK);
		ck_assert_int_eq(ans.imm, IBV_WC_REM_ACCESS_ERR);
		/* C's own work then fails too: refuse it */
		struct tcp_frame nak = { .type = TF_NAK, .seq = rd.seq,
				.imm = IBV_WC_REM_ACCESS_ERR };
		wire_send_frame(p, &nak, NULL, 0);
		break;
	}
	case RESP_TRUNCATED:
		f.type = TF_READ_RESP;
		f.length = 64;
		wire_send_frame(p, &f, junk, 10);
		/* and gone: the rest never comes */
		(void) close(p);
		(void) close(s);
		p = s = -1;
		break;
	}
	(void) g;
	ck_assert_msg(it_hear(TAG_C_DONE, NULL, 0, IT_ROLE_MS) == 0, "%s: %s",
			answer_names[lie], it_report());
	if (p >= 0) {
		(void) close(p);
		(void) close(s);
	}
}

START_TEST(test_liar_passive)
{
	struct it_env env;
	ck_assert_int_eq(it_env_start(&env, 2), 0);
	struct test_daemon *b = &env.d[1];
	pid_t pid_b = b->pid;
	int fds_b = it_proc_fds(pid_b);

	/* the liar listens; C's rpmad connects to it */
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(lfd, 0);
	int one = 1;
	(void) setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in sin = { .sin_family = AF_INET,
			.sin_port = htons((uint16_t)atoi(env.port)) };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 16), 0);

	struct hu_pair pair = { .server = IT_THIRD, .client = IT_FOURTH,
			.steal_to = IT_PARENT };
	ck_assert_int_eq(it_free_port(pair.port, sizeof(pair.port)), 0);
	struct it_group g;
	it_group_init(&g);
	ck_assert_int_eq(it_group_spawn(&g, IT_THIRD, &env, &env.d[0],
			hu_innocent_server, &pair), 0);
	ck_assert_int_eq(it_group_spawn(&g, IT_FOURTH, &env, b,
			hu_innocent_client, &pair), 0);
	ck_assert_msg(it_group_hear(&g, HU_TAG_INNOCENT_UP, 1) == 0, "%s",
			it_report());
	ck_assert_int_eq(it_group_spawn(&g, IT_CLIENT, &env, b,
			lied_to_client, env.port), 0);

	for (int lie = 0; lie < ANSWER_LIES; lie++)
		answer_lie(&g, lfd, lie);
	int end = -1;
	ck_assert_int_eq(it_tell(IT_CLIENT, TAG_C_NEXT, &end, sizeof(end)), 0);
	ck_assert_int_eq(it_tell(IT_FOURTH, HU_TAG_INNOCENT_STOP, NULL, 0), 0);
	ck_assert_msg(it_group_hear(&g, HU_TAG_INNOCENT_DONE, 1) == 0, "%s",
			it_report());
	ck_assert_msg(it_group_join(&g, IT_ROLE_MS) == 0, "%s", it_report());
	(void) close(lfd);
	ck_assert_int_le(it_proc_wait_fds(pid_b, fds_b, IT_WAIT_MS), fds_b);
	ck_assert_int_eq(it_daemon_serves(b, pid_b), 0);
	ck_assert_int_eq(it_env_stop(&env), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_wire[] = { test_liar_active, test_liar_passive,
		NULL };
	const struct th_tcase tcases[] = {
		{ "wire", .tests = tc_wire, .create = it_tcase_create },
	};
	return check_run_forked(th_suite("hostile_wire", tcases, TH_N(tcases)),
			CK_NORMAL);
}
