// SPDX-License-Identifier: BSD-3-Clause
/*
 * make_corpus.c -- the seed corpora of the fuzz targets, from real
 * traffic: a client and a server application (librpmaclient, used as
 * applications use librpma) connect through two real rpmads while this
 * program sits in the middle of everything they say:
 *   - a proxy on each rpmad's control socket records every request packet
 *     (and how many descriptors came with it) -> corpus/request
 *   - a TCP proxy between the client's rpmad and the server's endpoint
 *     records the four byte streams of the connection -> corpus/wire_frame
 *     (each frame) and corpus/wire_rx (the streams as the receive engine
 *     gets them)
 * plus wire_rx seeds written with rpmad's own encoder for the connection
 * the harness sets up (tests/fuzz/fuzz_wire_rx.h), which real traffic
 * cannot know, and an admin session's queries.
 *
 * usage: RPMAD_BIN=rpmad/rpmad tests/fuzz/make_corpus OUTDIR
 * (see tests/fuzz/README.md). Existing files in OUTDIR/<target> stay.
 */

#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <librpma.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "ctl_socket.h"
#include "fuzz_wire_rx.h"
#include "rpmad.pb-c.h"
#include "tcp/tcp_wire.h"
#include "test_daemon.h"
#include "th_ctl.h"

#define ADDR "127.0.0.1"
#define PAGE 4096
#define FILE_LEN (64 * 1024)
/* the workload takes milliseconds; this bounds a hang */
#define ROLE_SECONDS 20

static const char *outdir;
static char tmpdir[256];

static void
die(const char *what)
{
	(void) fprintf(stderr, "make_corpus: %s: %s\n", what, strerror(errno));
	exit(1);
}

#define CHECK(call) do { \
	int r_ = (call); \
	if (r_) { \
		(void) fprintf(stderr, "make_corpus: %s: %d\n", #call, r_); \
		exit(1); \
	} \
} while (0)

/* ------------------------------------------------------------ output */

static void
write_file(const char *target, const char *name, const void *a, size_t alen,
		const void *b, size_t blen)
{
	char path[1024];
	(void) snprintf(path, sizeof(path), "%s/%s", outdir, target);
	(void) mkdir(path, 0755);
	(void) snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		die(path);
	if ((alen && fwrite(a, 1, alen, f) != alen) ||
			(blen && fwrite(b, 1, blen, f) != blen))
		die(path);
	if (fclose(f))
		die(path);
}

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void
buf_add(struct buf *b, const void *data, size_t len)
{
	if (b->len + len > b->cap) {
		b->cap = (b->len + len) * 2 + 4096;
		b->p = realloc(b->p, b->cap);
		if (b->p == NULL)
			die("realloc");
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

/* The address of a Unix socket at path (which must fit). */
static struct sockaddr_un
unix_addr(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	if (len >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		die(path);
	}
	memcpy(sun.sun_path, path, len + 1);
	return sun;
}

/* ------------------------------------------------------- the workload */

static int
wait_fd(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	return poll(&pfd, 1, ROLE_SECONDS * 1000) == 1 ? 0 : -1;
}

static void
expect_event(struct rpma_conn *conn, enum rpma_conn_event want)
{
	enum rpma_conn_event ev;
	CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != want) {
		(void) fprintf(stderr, "make_corpus: event %d, wanted %d\n",
				ev, want);
		exit(1);
	}
}

static void
completions(struct rpma_cq *cq, int n)
{
	while (n > 0) {
		struct ibv_wc wc;
		int ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		if (ret == RPMA_E_NO_COMPLETION) {
			CHECK(rpma_cq_wait(cq));
			continue;
		}
		CHECK(ret);
		if (wc.status != IBV_WC_SUCCESS) {
			(void) fprintf(stderr, "make_corpus: wr %llu: %s\n",
					(unsigned long long)wc.wr_id,
					ibv_wc_status_str(wc.status));
			exit(1);
		}
		n--;
	}
}

struct descs {
	uint8_t mr[24], fmr[24], pcfg[8];
	size_t mr_len, pcfg_len;
};

static struct rpma_peer *
peer_for(enum rpma_util_ibv_context_type type)
{
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	CHECK(rpma_utils_get_ibv_context(ADDR, type, &dev));
	CHECK(rpma_peer_new(dev, &peer));
	return peer;
}

static int
server(const char *port, int to_client)
{
	struct rpma_peer *peer = peer_for(RPMA_UTIL_IBV_CONTEXT_LOCAL);
	void *buf = NULL;
	if (posix_memalign(&buf, PAGE, 2 * PAGE))
		die("memalign");
	memset(buf, 0x11, 2 * PAGE);
	struct rpma_mr_local *mr = NULL;
	CHECK(rpma_mr_reg(peer, buf, PAGE, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr));
	struct rpma_mr_local *msg = NULL;
	CHECK(rpma_mr_reg(peer, (char *)buf + PAGE, PAGE,
			RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND, &msg));
	/* a file mapping: a file-backed segment, persistent flushes */
	char path[300];
	(void) snprintf(path, sizeof(path), "%s/corpus.pmem", tmpdir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, FILE_LEN))
		die(path);
	void *pm = mmap(NULL, FILE_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, 0);
	if (pm == MAP_FAILED)
		die("mmap");
	struct rpma_mr_local *fmr = NULL;
	CHECK(rpma_mr_reg(peer, pm, FILE_LEN, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &fmr));
	CHECK(rpma_mr_advise(fmr, 0, PAGE, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			IBV_ADVISE_MR_FLAG_FLUSH));
	struct rpma_peer_cfg *pcfg = NULL;
	CHECK(rpma_peer_cfg_new(&pcfg));
	CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));

	struct rpma_ep *ep = NULL;
	CHECK(rpma_ep_listen(peer, ADDR, port, &ep));
	char go = 'l';
	if (write(to_client, &go, 1) != 1)
		die("write");
	struct rpma_conn_req *req = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	CHECK(rpma_conn_cfg_new(&cfg));
	CHECK(rpma_conn_cfg_set_rq_size(cfg, 4));
	int epfd;
	CHECK(rpma_ep_get_fd(ep, &epfd));
	if (wait_fd(epfd))
		die("no connection request");
	CHECK(rpma_ep_next_conn_req(ep, cfg, &req));
	/* two receives: the client's write with imm and its send */
	CHECK(rpma_conn_req_recv(req, msg, 0, 64, (void *)1));
	CHECK(rpma_conn_req_recv(req, msg, 64, 64, (void *)2));
	struct rpma_conn_private_data pd = { "corpus-server", 14 };
	struct rpma_conn *conn = NULL;
	CHECK(rpma_conn_req_connect(&req, &pd, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);

	struct descs d;
	memset(&d, 0, sizeof(d));
	CHECK(rpma_mr_get_descriptor_size(mr, &d.mr_len));
	CHECK(rpma_mr_get_descriptor(mr, d.mr));
	CHECK(rpma_mr_get_descriptor(fmr, d.fmr));
	CHECK(rpma_peer_cfg_get_descriptor_size(pcfg, &d.pcfg_len));
	CHECK(rpma_peer_cfg_get_descriptor(pcfg, d.pcfg));
	if (write(to_client, &d, sizeof(d)) != sizeof(d))
		die("write");

	struct rpma_cq *cq = NULL;
	CHECK(rpma_conn_get_cq(conn, &cq));
	completions(cq, 2);	/* the write with imm, the send */
	CHECK(rpma_send(conn, msg, 128, 32, RPMA_F_COMPLETION_ALWAYS, NULL));
	completions(cq, 1);

	expect_event(conn, RPMA_CONN_CLOSED);
	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_conn_cfg_delete(&cfg));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	CHECK(rpma_ep_shutdown(&ep));
	CHECK(rpma_mr_dereg(&fmr));
	CHECK(rpma_mr_dereg(&msg));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_peer_delete(&peer));
	(void) munmap(pm, FILE_LEN);
	(void) close(fd);
	free(buf);
	return 0;
}

static int
client(const char *port, int from_server)
{
	struct rpma_peer *peer = peer_for(RPMA_UTIL_IBV_CONTEXT_REMOTE);
	void *buf = NULL;
	if (posix_memalign(&buf, PAGE, 2 * PAGE))
		die("memalign");
	memset(buf, 0x22, 2 * PAGE);
	struct rpma_mr_local *mr = NULL;
	CHECK(rpma_mr_reg(peer, buf, 2 * PAGE, RPMA_MR_USAGE_WRITE_SRC |
			RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND |
			RPMA_MR_USAGE_RECV, &mr));
	char go;
	if (read(from_server, &go, 1) != 1)
		die("read");
	struct rpma_conn_cfg *cfg = NULL;
	CHECK(rpma_conn_cfg_new(&cfg));
	CHECK(rpma_conn_cfg_set_sq_size(cfg, 16));
	CHECK(rpma_conn_cfg_set_cq_size(cfg, 16));
	CHECK(rpma_conn_cfg_set_rq_size(cfg, 2));
	CHECK(rpma_conn_cfg_set_rcq_size(cfg, 2));
	CHECK(rpma_conn_cfg_set_timeout(cfg, 2000));
	struct rpma_conn_req *req = NULL;
	CHECK(rpma_conn_req_new(peer, ADDR, port, cfg, &req));
	CHECK(rpma_conn_req_recv(req, mr, PAGE, 64, (void *)9));
	struct rpma_conn_private_data pd = { "corpus-client", 14 };
	struct rpma_conn *conn = NULL;
	CHECK(rpma_conn_req_connect(&req, &pd, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);
	struct rpma_conn_private_data got;
	CHECK(rpma_conn_get_private_data(conn, &got));

	struct descs d;
	if (read(from_server, &d, sizeof(d)) != sizeof(d))
		die("read");
	struct rpma_mr_remote *rmr = NULL, *rfmr = NULL;
	CHECK(rpma_mr_remote_from_descriptor(d.mr, d.mr_len, &rmr));
	CHECK(rpma_mr_remote_from_descriptor(d.fmr, d.mr_len, &rfmr));
	struct rpma_peer_cfg *pcfg = NULL;
	CHECK(rpma_peer_cfg_from_descriptor(d.pcfg, d.pcfg_len, &pcfg));
	CHECK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	CHECK(rpma_peer_cfg_delete(&pcfg));

	struct rpma_cq *cq = NULL, *rcq = NULL;
	CHECK(rpma_conn_get_cq(conn, &cq));
	CHECK(rpma_conn_get_rcq(conn, &rcq));
	const int f = RPMA_F_COMPLETION_ALWAYS;
	CHECK(rpma_write(conn, rmr, 0, mr, 0, 1024, f, NULL));
	CHECK(rpma_read(conn, mr, 1024, rmr, 0, 1024, f, NULL));
	CHECK(rpma_write_atomic(conn, rmr, 64, mr, 0, f, NULL));
	CHECK(rpma_flush(conn, rmr, 0, 1024, RPMA_FLUSH_TYPE_VISIBILITY, f,
			NULL));
	CHECK(rpma_write(conn, rfmr, 0, mr, 0, 2048, f, NULL));
	CHECK(rpma_flush(conn, rfmr, 0, 2048, RPMA_FLUSH_TYPE_PERSISTENT, f,
			NULL));
	CHECK(rpma_write_with_imm(conn, rmr, 512, mr, 0, 16, f, 0x1234,
			NULL));
	CHECK(rpma_send_with_imm(conn, mr, 0, 48, f, 0x5678, NULL));
	completions(cq, 8);
	completions(rcq, 1);	/* the server's message */

	CHECK(rpma_conn_disconnect(conn));
	expect_event(conn, RPMA_CONN_CLOSED);
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_conn_cfg_delete(&cfg));
	CHECK(rpma_mr_remote_delete(&rfmr));
	CHECK(rpma_mr_remote_delete(&rmr));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}

/* An admin's questions, spoken directly (rpmactl asks the same). */
static int
admin(const char *socket_path)
{
	struct th_ctl s;
	if (th_ctl_open(&s, socket_path, "rpmactl"))
		die("admin hello");
	for (int i = 0; i <= RPMAD__ADMIN_QUERY__KIND__STATS + 1; i++) {
		struct th_req q;
		Rpmad__Request *req = th_req_id(&q,
				RPMAD__REQUEST__BODY_ADMIN_EVICT, 1);
		if (i <= RPMAD__ADMIN_QUERY__KIND__STATS) {
			req = th_req_admin(&q, (Rpmad__AdminQuery__Kind) i);
			q.u.admin_query.limit =
					i == RPMAD__ADMIN_QUERY__KIND__CLIENTS;
		}
		Rpmad__Response *r;
		if (th_ctl_call(&s, req, NULL, 0, &r))
			die("admin request");
		rpmad__response__free_unpacked(r, NULL);
	}
	th_ctl_close(&s);
	return 0;
}

/* ------------------------------------------------ the control proxy */

#define MAX_RELAYS 16

/* One client session relayed to its rpmad, and what it said. */
struct ctl_relay {
	int client, daemon;
	struct buf record;	/* the fuzz input: every request */
	/* real ids in the order the session got them: index = harness id */
	uint64_t ids[16];
	unsigned nids;
	unsigned npackets;
};

static int
ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && strcmp(s + a - b, tail) == 0;
}

/* Real ids -> the small numbers the harness translates back. */
static void
ids_to_index(ProtobufCMessage *m, const struct ctl_relay *r)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	char *base = (char *)m;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
				*(uint32_t *)(base + f->quantifier_offset) !=
				f->id)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED)
			continue;
		if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
			ProtobufCMessage *sub = *(ProtobufCMessage **)(base +
					f->offset);
			if (sub)
				ids_to_index(sub, r);
		} else if (f->type == PROTOBUF_C_TYPE_UINT64 &&
				ends_with(f->name, "_id")) {
			uint64_t *v = (uint64_t *)(base + f->offset);
			for (unsigned k = 0; k < r->nids; k++) {
				if (*v == r->ids[k]) {
					*v = k;
					break;
				}
			}
		}
	}
}

static unsigned nrequests;

static void
record_request(struct ctl_relay *r, const uint8_t *pkt, size_t len,
		unsigned nfds)
{
	uint8_t packed[CTL_MAX_MSG];
	Rpmad__Request *req = rpmad__request__unpack(NULL, len, pkt);
	if (req == NULL)
		return;
	ids_to_index(&req->base, r);
	size_t n = rpmad__request__pack(req, packed);
	rpmad__request__free_unpacked(req, NULL);
	/* the harness's record: spec (descriptors: sealed memfds), length */
	uint8_t head[3] = { (uint8_t)(nfds > 3 ? 3 : nfds), (uint8_t)n,
		(uint8_t)(n >> 8) };
	buf_add(&r->record, head, 3);
	buf_add(&r->record, packed, n);
	r->npackets++;
	/* every request alone too: small seeds mutate well */
	char name[64];
	(void) snprintf(name, sizeof(name), "req-%03u", nrequests++);
	write_file("request", name, head, 3, packed, n);
}

static void
learn_ids(struct ctl_relay *r, const uint8_t *pkt, size_t len)
{
	Rpmad__Response *resp = rpmad__response__unpack(NULL, len, pkt);
	if (resp == NULL)
		return;
	uint64_t id = 0;
	switch (resp->body_case) {
	case RPMAD__RESPONSE__BODY_PEER:
		id = resp->peer->peer_id;
		break;
	case RPMAD__RESPONSE__BODY_MR:
		id = resp->mr->mr_id;
		break;
	case RPMAD__RESPONSE__BODY_EP:
		id = resp->ep->ep_id;
		break;
	case RPMAD__RESPONSE__BODY_QP:
		id = resp->qp->conn_id;
		break;
	default:
		break;
	}
	if (id && r->nids < 16)
		r->ids[r->nids++] = id;
	rpmad__response__free_unpacked(resp, NULL);
}

/* One packet from `from` to `to`; -1 at the end of either. */
static int
relay_packet(struct ctl_relay *r, bool from_client)
{
	static uint8_t pkt[CTL_MAX_MSG];
	int fds[CTL_MAX_FDS];
	unsigned nfds = 0;
	long n = ctl_recv(from_client ? r->client : r->daemon, pkt, sizeof(pkt),
			fds, CTL_MAX_FDS, &nfds);
	if (n <= 0)
		return -1;
	if (from_client)
		record_request(r, pkt, (size_t)n, nfds);
	else
		learn_ids(r, pkt, (size_t)n);
	int ret = ctl_send(from_client ? r->daemon : r->client, pkt, (size_t)n,
			fds, nfds);
	ctl_close_fds(fds, nfds);
	return ret ? -1 : 0;
}

static int
unix_listen(const char *path)
{
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un sun = unix_addr(path);
	if (s < 0 || bind(s, (struct sockaddr *)&sun, sizeof(sun)) ||
			listen(s, 16))
		die(path);
	return s;
}

static int
unix_connect(const char *path)
{
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un sun = unix_addr(path);
	if (s < 0 || connect(s, (struct sockaddr *)&sun, sizeof(sun)))
		die(path);
	return s;
}

/* ------------------------------------------------------ the TCP proxy */

/* One TCP connection relayed, both directions recorded. */
struct tcp_relay {
	int active, passive;	/* the client's rpmad, the server's */
	bool active_eof, passive_eof;
	struct buf to_passive, to_active;
};

static int
tcp_socket_to(const char *port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET,
			.sin_port = htons((uint16_t)atoi(port)) };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || connect(s, (struct sockaddr *)&sin, sizeof(sin)))
		die("connect to the server's endpoint");
	return s;
}

static int
tcp_listen_any(char *port, size_t len)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t sl = sizeof(sin);
	if (s < 0 || bind(s, (struct sockaddr *)&sin, sizeof(sin)) ||
			listen(s, 16) ||
			getsockname(s, (struct sockaddr *)&sin, &sl))
		die("tcp listen");
	(void) snprintf(port, len, "%u", ntohs(sin.sin_port));
	return s;
}

static int
relay_bytes(int from, int to, struct buf *rec)
{
	uint8_t data[65536];
	ssize_t n = recv(from, data, sizeof(data), 0);
	if (n <= 0)
		return -1;
	buf_add(rec, data, (size_t)n);
	for (ssize_t off = 0; off < n;) {
		ssize_t w = send(to, data + off, (size_t)(n - off),
				MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
		off += w;
	}
	return 0;
}

/* ---------------------------------------------- wire seeds from streams */

/* The stream without its first frame (the HELLO the harness is past). */
static void
skip_first_frame(const struct buf *b, const uint8_t **p, size_t *len)
{
	struct tcp_frame f;
	*p = b->p;
	*len = b->len;
	if (b->len >= TCP_FRAME_SIZE && tcp_frame_decode(b->p, &f) == 0 &&
			f.type == TF_HELLO &&
			b->len >= TCP_FRAME_SIZE + f.length) {
		*p += TCP_FRAME_SIZE + f.length;
		*len -= TCP_FRAME_SIZE + f.length;
	}
}

static void
rx_seed(const char *name, unsigned flags, const uint8_t *ops, size_t nops,
		const uint8_t *answers, size_t nanswers)
{
	if (nops > 0xffff)
		nops = 0xffff;
	struct buf b = { 0 };
	uint8_t head[3] = { (uint8_t)flags, (uint8_t)nops,
		(uint8_t)(nops >> 8) };
	buf_add(&b, head, 3);
	buf_add(&b, ops, nops);
	buf_add(&b, answers, nanswers);
	write_file("wire_rx", name, b.p, b.len, NULL, 0);
	free(b.p);
}

static unsigned nframes;

/* Every frame of a stream, alone, for the decoder's corpus. */
static void
frame_seeds(const struct buf *b)
{
	size_t pos = 0;
	while (b->len - pos >= TCP_FRAME_SIZE) {
		struct tcp_frame f;
		if (tcp_frame_decode(b->p + pos, &f))
			return;
		uint32_t payload = tcp_frame_payload_len(&f);
		if (payload > b->len - pos - TCP_FRAME_SIZE)
			return;
		/* the HELLO's payload belongs to its decoder; others not */
		size_t keep = f.type == TF_HELLO ? payload : 0;
		char name[64];
		(void) snprintf(name, sizeof(name), "frame-%03u-type%u",
				nframes++, f.type);
		write_file("wire_frame", name, b->p + pos, TCP_FRAME_SIZE,
				b->p + pos + TCP_FRAME_SIZE, keep);
		pos += TCP_FRAME_SIZE + payload;
	}
}

static void
frame_add(struct buf *b, uint8_t type, uint8_t flags, uint64_t seq,
		uint64_t raddr, uint32_t rkey, uint32_t imm, const void *payload,
		uint32_t length)
{
	struct tcp_frame f = { .type = type, .flags = flags, .length = length,
			.seq = seq, .raddr = raddr, .rkey = rkey, .imm = imm };
	uint8_t head[TCP_FRAME_SIZE];
	tcp_frame_encode(&f, head);
	buf_add(b, head, sizeof(head));
	if (payload)
		buf_add(b, payload, tcp_frame_payload_len(&f));
}

/*
 * Seeds for the harness's connection (fuzz_wire_rx.h), which real
 * traffic cannot know: a peer's operations on FUZZ_KEY, every kind, and
 * correct answers to rpmad's own work.
 */
static void
synthesized_seeds(void)
{
	uint8_t data[FUZZ_RECV_LEN];
	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	const unsigned all = (FUZZ_W_READ | FUZZ_W_WRITE | FUZZ_W_SEND |
			FUZZ_W_FLUSH) << FUZZ_WORK_SHIFT;

	/* the peer's operations, each kind, then goodbye */
	struct buf ops = { 0 };
	uint64_t seq = 1;
	frame_add(&ops, TF_WRITE, 0, seq++, FUZZ_ADDR, FUZZ_KEY, 0, data,
			FUZZ_OP_LEN);
	frame_add(&ops, TF_READ, 0, seq++, FUZZ_ADDR, FUZZ_KEY, 0, NULL,
			FUZZ_OP_LEN);
	frame_add(&ops, TF_ATOMIC, 0, seq++, FUZZ_ADDR + 8, FUZZ_KEY, 0, data,
			8);
	frame_add(&ops, TF_FLUSH, 0, seq++, FUZZ_ADDR, FUZZ_KEY, 0, NULL,
			FUZZ_OP_LEN);
	frame_add(&ops, TF_FLUSH, TF_F_PERSIST, seq++, FUZZ_ADDR, FUZZ_KEY, 0,
			NULL, FUZZ_OP_LEN);
	frame_add(&ops, TF_WRITE, TF_F_IMM, seq++, FUZZ_ADDR + 128, FUZZ_KEY,
			htonl(7), data, 16);
	frame_add(&ops, TF_SEND, TF_F_IMM, seq++, 0, 0, htonl(9), data,
			FUZZ_RECV_LEN);
	frame_add(&ops, TF_WRITE, 0, seq++, FUZZ_ADDR + FUZZ_LEN - 8, FUZZ_KEY,
			0, data, 16);	/* across the end: refused */
	struct buf bye = { 0 };
	frame_add(&bye, TF_DISCONNECT, 0, 0, 0, 0, 0, NULL, 0);

	/* correct answers to rpmad's read, write, send, flush, atomic */
	struct buf answers = { 0 };
	frame_add(&answers, TF_READ_RESP, 0, 1, 0, 0, 0, data, FUZZ_OP_LEN);
	frame_add(&answers, TF_ACK, 0, 5, 0, 0, 0, NULL, 0);
	struct buf nak = { 0 };
	frame_add(&nak, TF_NAK, 0, 1, 0, 0, IBV_WC_REM_ACCESS_ERR, NULL, 0);

	struct buf ready = { 0 };
	frame_add(&ready, TF_READY, 0, 0, 0, 0, 0, NULL, 0);
	struct buf accept = { 0 };
	/* the passive rpmad's id (8 bytes), then private data */
	frame_add(&accept, TF_ACCEPT, 0, 0, 0, 0, 0, "rpmad-idpdata", 13);

	/* established, passive: ops on the primary, answers on secondary */
	struct buf a = { 0 };
	buf_add(&a, ops.p, ops.len);
	buf_add(&a, bye.p, bye.len);
	rx_seed("synth-passive-ops", FUZZ_F_CLOSE, a.p, a.len, NULL, 0);
	rx_seed("synth-passive-answers", all, NULL, 0, answers.p,
			answers.len);
	rx_seed("synth-passive-both", all | FUZZ_F_CLOSE, a.p, a.len,
			answers.p, answers.len);
	rx_seed("synth-active-both", all | FUZZ_F_ACTIVE, a.p, a.len,
			answers.p, answers.len);
	rx_seed("synth-nak", all, NULL, 0, nak.p, nak.len);
	/*
	 * setting up: READY first (passive), ACCEPT first (active); on the
	 * other socket nothing may come before (a real peer waits for the
	 * connection to be up), so nothing comes there
	 */
	struct buf r = { 0 };
	buf_add(&r, ready.p, ready.len);
	buf_add(&r, ops.p, ops.len);
	rx_seed("synth-passive-setup", FUZZ_F_SETUP | all, r.p, r.len, NULL,
			0);
	rx_seed("synth-active-setup", FUZZ_F_SETUP | FUZZ_F_ACTIVE | all,
			NULL, 0, accept.p, accept.len);
	/* the decoder's corpus gets these frames too */
	frame_seeds(&ops);
	frame_seeds(&answers);
	frame_seeds(&nak);
	free(ops.p);
	free(bye.p);
	free(answers.p);
	free(nak.p);
	free(ready.p);
	free(accept.p);
	free(a.p);
	free(r.p);
}

/* ------------------------------------------------------------ main */

static pid_t
spawn(int (*fn)(void *), void *arg, const char *socket_path)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		(void) setenv("RPMAD_SOCKET", socket_path, 1);
		(void) alarm(ROLE_SECONDS);
		_exit(fn(arg));
	}
	return pid;
}

struct roles {
	char port[16];		/* the server's endpoint */
	char proxy_port[16];	/* where the client connects */
	int to_client[2];
	char admin_socket[300];
};

static int
run_server(void *arg)
{
	struct roles *r = arg;
	return server(r->port, r->to_client[1]);
}

static int
run_client(void *arg)
{
	struct roles *r = arg;
	return client(r->proxy_port, r->to_client[0]);
}

static int
run_admin(void *arg)
{
	struct roles *r = arg;
	return admin(r->admin_socket);
}

int
main(int argc, char *argv[])
{
	if (argc != 2) {
		(void) fprintf(stderr, "usage: RPMAD_BIN=rpmad make_corpus "
				"OUTDIR\n");
		return 2;
	}
	outdir = argv[1];
	(void) signal(SIGPIPE, SIG_IGN);
	(void) snprintf(tmpdir, sizeof(tmpdir), "/tmp/make-corpus.XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		die("mkdtemp");

	struct test_daemon da, db;
	if (test_daemon_start(&da, NULL) || test_daemon_start(&db, NULL))
		die("starting rpmad ($RPMAD_BIN)");

	/* the control proxies: A serves the server, B the client */
	char pa[300], pb[300];
	(void) snprintf(pa, sizeof(pa), "%s/a.sock", tmpdir);
	(void) snprintf(pb, sizeof(pb), "%s/b.sock", tmpdir);
	int la = unix_listen(pa), lb = unix_listen(pb);

	struct roles roles;
	memset(&roles, 0, sizeof(roles));
	int probe = tcp_listen_any(roles.port, sizeof(roles.port));
	(void) close(probe);	/* a free port for the server's endpoint */
	int lt = tcp_listen_any(roles.proxy_port, sizeof(roles.proxy_port));
	if (pipe(roles.to_client))
		die("pipe");
	(void) snprintf(roles.admin_socket, sizeof(roles.admin_socket), "%s",
			pa);

	pid_t pids[3];
	pids[0] = spawn(run_server, &roles, pa);
	pids[1] = spawn(run_client, &roles, pb);
	int alive = 2;
	bool admin_started = false;

	struct ctl_relay ctl[MAX_RELAYS];
	int nctl = 0;
	struct tcp_relay tcp[4];
	int ntcp = 0;
	while (alive > 0) {
		struct pollfd pfd[3 + 2 * MAX_RELAYS + 8];
		int n = 0;
		pfd[n++] = (struct pollfd){ .fd = la, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = lb, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = lt, .events = POLLIN };
		for (int i = 0; i < nctl; i++) {
			pfd[n++] = (struct pollfd){ .fd = ctl[i].client,
					.events = POLLIN };
			pfd[n++] = (struct pollfd){ .fd = ctl[i].daemon,
					.events = POLLIN };
		}
		for (int i = 0; i < ntcp; i++) {
			pfd[n++] = (struct pollfd){ .fd = tcp[i].active_eof ?
					-1 : tcp[i].active, .events = POLLIN };
			pfd[n++] = (struct pollfd){ .fd = tcp[i].passive_eof ?
					-1 : tcp[i].passive, .events = POLLIN };
		}
		(void) poll(pfd, (nfds_t)n, 50);

		for (int l = 0; l < 2; l++) {
			if (!(pfd[l].revents & POLLIN) || nctl == MAX_RELAYS)
				continue;
			struct ctl_relay *r = &ctl[nctl++];
			memset(r, 0, sizeof(*r));
			r->client = accept4(l ? lb : la, NULL, NULL,
					SOCK_CLOEXEC);
			r->daemon = unix_connect(l ? db.socket : da.socket);
		}
		if ((pfd[2].revents & POLLIN) && ntcp < 4) {
			struct tcp_relay *t = &tcp[ntcp++];
			memset(t, 0, sizeof(*t));
			t->active = accept4(lt, NULL, NULL, SOCK_CLOEXEC);
			t->passive = tcp_socket_to(roles.port);
		}
		int k = 3;
		for (int i = 0; i < nctl; i++, k += 2) {
			struct ctl_relay *r = &ctl[i];
			bool end = (pfd[k].revents && r->client >= 0 &&
					relay_packet(r, true)) ||
				(pfd[k + 1].revents && r->daemon >= 0 &&
					relay_packet(r, false));
			if (end) {
				/* either side gone: the session is over */
				(void) close(r->client);
				(void) close(r->daemon);
				r->client = r->daemon = -1;
			}
		}
		for (int i = 0; i < ntcp; i++, k += 2) {
			struct tcp_relay *t = &tcp[i];
			if (pfd[k].revents && !t->active_eof &&
					relay_bytes(t->active, t->passive,
					&t->to_passive)) {
				(void) shutdown(t->passive, SHUT_WR);
				t->active_eof = true;
			}
			if (pfd[k + 1].revents && !t->passive_eof &&
					relay_bytes(t->passive, t->active,
					&t->to_active)) {
				(void) shutdown(t->active, SHUT_WR);
				t->passive_eof = true;
			}
		}
		for (int i = 0; i < (admin_started ? 3 : 2); i++) {
			int status;
			if (pids[i] > 0 && waitpid(pids[i], &status,
					WNOHANG) == pids[i]) {
				if (!WIFEXITED(status) || WEXITSTATUS(status))
					(void) fprintf(stderr, "make_corpus: "
							"role %d failed\n", i);
				pids[i] = 0;
				alive--;
			}
		}
		if (alive == 0 && !admin_started) {
			admin_started = true;
			pids[2] = spawn(run_admin, &roles, pa);
			alive = 1;
		}
	}

	/* the control corpus: each session's requests in order */
	for (int i = 0; i < nctl; i++) {
		if (ctl[i].npackets == 0)
			continue;
		char name[64];
		(void) snprintf(name, sizeof(name), "session-%d", i);
		write_file("request", name, ctl[i].record.p, ctl[i].record.len,
				NULL, 0);
	}
	/* the wire: each TCP connection's role from its HELLO */
	const uint8_t *ap = NULL, *as = NULL, *pp = NULL, *ps = NULL;
	size_t apl = 0, asl = 0, ppl = 0, psl = 0;
	for (int i = 0; i < ntcp; i++) {
		struct tcp_relay *t = &tcp[i];
		frame_seeds(&t->to_passive);
		frame_seeds(&t->to_active);
		struct tcp_hello h;
		struct tcp_frame f;
		if (t->to_passive.len < TCP_FRAME_SIZE + TCP_HELLO_SIZE ||
				tcp_frame_decode(t->to_passive.p, &f) ||
				tcp_hello_decode(t->to_passive.p +
				TCP_FRAME_SIZE, f.length, &h))
			continue;
		if (h.role == HELLO_PRIMARY) {
			skip_first_frame(&t->to_passive, &ap, &apl);
			pp = t->to_active.p;
			ppl = t->to_active.len;
		} else {
			skip_first_frame(&t->to_passive, &as, &asl);
			ps = t->to_active.p;
			psl = t->to_active.len;
		}
	}
	/*
	 * As the passive side: the active side's primary stream brings its
	 * operations, its secondary the answers to the passive side's. As
	 * the active side: the passive side's secondary stream brings its
	 * operations, its primary the ACCEPT and the answers.
	 */
	const unsigned all = (FUZZ_W_READ | FUZZ_W_WRITE | FUZZ_W_SEND |
			FUZZ_W_FLUSH) << FUZZ_WORK_SHIFT;
	if (ap && as)
		rx_seed("real-passive", FUZZ_F_SETUP | FUZZ_F_CLOSE, ap, apl,
				as, asl);
	if (pp && ps)
		rx_seed("real-active", FUZZ_F_SETUP | FUZZ_F_ACTIVE | all, ps,
				psl, pp, ppl);
	synthesized_seeds();

	(void) printf("make_corpus: %u requests in %d sessions, %u frames, "
			"%d TCP connections recorded into %s\n", nrequests,
			nctl, nframes, ntcp, outdir);
	(void) test_daemon_stop(&da);
	(void) test_daemon_stop(&db);
	char cmd[600];
	(void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : 1;
}
