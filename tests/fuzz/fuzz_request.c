// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_request.c -- rpmad's control requests, fuzzed: bytes go to
 * request_handle() (through session_dispatch(), as a packet read from the
 * socket does) of a client session of rpmad's real core (decoding,
 * the checks before dispatch, and every handler with its own checks:
 * devices, peers, registrations with the descriptors that came along,
 * endpoints, connection requests, connections, admin queries), in this
 * process and without a running event loop.
 *
 * Nothing leaves the process: the session's socket is one end of a
 * socketpair (the answers are read back and checked to be decodable), and
 * the device the requests reach is served by a fake transport that
 * "listens" by queueing one incoming request at the endpoint, "connects"
 * and "accepts" by establishing the connection at once, and completes
 * posted work at once. Between packets the loop runs once without waiting
 * (the queue-pair poller sees every connection).
 *
 * An input is a sequence of packets, each a record
 *   spec (1 byte) | length (2 bytes, little-endian) | that many bytes
 * spec bits 0-1: how many descriptors travel with the packet (0-3);
 * bits 2-7: their kinds, two bits each: a sealed memfd, a memfd that can
 * shrink, /dev/null, a pipe's read end (all 64 KiB where they have a size).
 * Object ids below 16 in a decodable request name the n-th object this
 * input's session got back (ids start at a random base every run), so
 * that sequences reach real objects; other ids go as they are.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utlist.h>

#include "control/request.h"
#include "control/session.h"
#include "core/daemon.h"
#include "core/guard.h"
#include "core/registry.h"
#include "ctl_socket.h"
#include "fuzz_target.h"
#include "log/log.h"
#include "objects/conn.h"
#include "objects/device.h"
#include "objects/ep.h"
#include "transport/transports.h"

/* rpmad's process-wide state; main.c has it in the daemon */
struct daemon_state rpmad;

/* ----------------------------------------------------- the fake transport */

static int fake_marker;

static int
fake_listen(struct ep *ep, const struct sockaddr_storage *ss, socklen_t len,
		char *err, size_t errlen)
{
	/* a request waits at every new endpoint */
	struct incoming *inc = calloc(1, sizeof(*inc));
	if (inc == NULL) {
		(void) snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(inc->pdata, "fuzz", 4);
	inc->pdata_len = 4;
	memcpy(&inc->local, ss, len);
	memcpy(&inc->remote, ss, len);
	inc->remote_len = len;
	ep_set_tp(ep, &fake_marker);
	if (ep_incoming(ep, inc))
		free(inc);
	return 0;
}

static void
fake_unlisten(struct ep *ep)
{
	ep_set_tp(ep, NULL);
}

static void
fake_incoming_drop(struct incoming *inc, bool reject)
{
	(void) reject;
	free(inc);
}

static int
fake_adopt(struct conn *conn, struct incoming *inc, char *err, size_t errlen)
{
	(void) inc;
	(void) err;
	(void) errlen;
	conn_set_tp(conn, &fake_marker);
	return 0;
}

static int
fake_connect(struct conn *conn, const void *pdata, uint8_t len, char *err,
		size_t errlen)
{
	(void) err;
	(void) errlen;
	conn_set_tp(conn, &fake_marker);
	/* the other side answers at once with what was sent */
	conn_established(conn, pdata, len, true);
	return 0;
}

static int
fake_accept(struct conn *conn, const void *pdata, uint8_t len, char *err,
		size_t errlen)
{
	(void) pdata;
	(void) len;
	(void) err;
	(void) errlen;
	conn_established(conn, NULL, 0, false);
	return 0;
}

static void
fake_reject(struct conn *conn)
{
	(void) conn;
}

static void
fake_disconnect(struct conn *conn)
{
	conn_ended(conn, RPMA_CONN_CLOSED);
}

static void
fake_release(struct conn *conn, bool abort)
{
	(void) abort;
	conn_set_tp(conn, NULL);
}

static int
fake_post(struct conn *conn, struct work *w)
{
	conn_work_done(conn, w, IBV_WC_SUCCESS);
	return 0;
}

static void
fake_recv_posted(struct conn *conn)
{
	(void) conn;
}

static const struct transport_ops fake_transport = {
	.name = "fuzz",
	.listen = fake_listen,
	.unlisten = fake_unlisten,
	.incoming_drop = fake_incoming_drop,
	.adopt = fake_adopt,
	.connect = fake_connect,
	.accept = fake_accept,
	.reject = fake_reject,
	.disconnect = fake_disconnect,
	.release = fake_release,
	.post = fake_post,
	.recv_posted = fake_recv_posted,
};

/* the fake device serves every address, in the place of the software one */
static struct device *fake_device;

static int
fake_init(const struct transport_env *env)
{
	(void) env;
	fake_device = device_add("fuzz0", &fake_transport, false, NULL);
	return fake_device ? 0 : -1;
}

static void
fake_fini(void)
{
}

static struct device *
fake_device_for(const struct sockaddr_storage *ss, socklen_t len, bool local)
{
	(void) ss;
	(void) len;
	(void) local;
	return fake_device;
}

static const struct transport_entry fake_entry = {
	.name = "tcp",
	.ops = &fake_transport,
	.fallback = true,
	.device_noun = "fake device",
	.init = fake_init,
	.fini = fake_fini,
	.device_for = fake_device_for,
};

/* rpmad's transport table, here the fake transport alone */
const struct transport_entry *const transport_table[] = { &fake_entry, NULL };

/* ------------------------------------------------------------ set-up */

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	memset(&rpmad, 0, sizeof(rpmad));
	config_defaults(&rpmad.cfg);
	strcpy(rpmad.cfg.transport, "tcp");
	/* FUZZ_LOG=1 shows what rpmad says about each input */
	log_max_level = getenv("FUZZ_LOG") ? LOG_DEBUG : -1;
	(void) signal(SIGPIPE, SIG_IGN);
	if (guard_init())
		abort();
	rpmad.loop = loop_new();
	if (rpmad.loop == NULL)
		abort();
	rpmad.start_ns = loop_now_ns();
	registry_init();
	conn_init();
	char why[512];
	if (transports_configure(&rpmad.cfg, why, sizeof(why)) ||
			transports_init(rpmad.loop, "tcp"))
		abort();
	session_set_handler(request_handle);
	return 0;
}

static struct session *
session_open(int fd)
{
	/* an admin, so that every request is reached; its hello is input */
	struct session *s = session_new_own(fd, "fuzz", true, false);
	if (s == NULL)
		abort();
	return s;
}

/* ------------------------------------------------------ descriptors */

#define FD_SIZE (64 * 1024)

static int
make_fd(unsigned kind)
{
	int fd = -1, p[2];
	switch (kind & 3) {
	case 0:
	case 1:
		fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (fd < 0 || ftruncate(fd, FD_SIZE))
			abort();
		if (kind == 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK |
				F_SEAL_GROW))
			abort();
		return fd;
	case 2:
		return open("/dev/null", O_RDWR | O_CLOEXEC);
	default:
		if (pipe2(p, O_CLOEXEC))
			abort();
		(void) close(p[1]);
		return p[0];
	}
}

/* ----------------------------------------------- ids of this input */

#define MAX_IDS 16

struct ids {
	uint64_t id[MAX_IDS];
	unsigned n;
};

static int
ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && strcmp(s + a - b, tail) == 0;
}

/* Replaces small object ids with the ids this input got back. */
static void
translate(ProtobufCMessage *m, const struct ids *ids)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	char *base = (char *)m;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			uint32_t which = *(uint32_t *)(base +
					f->quantifier_offset);
			if (which != f->id)
				continue;
		}
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			if (f->type != PROTOBUF_C_TYPE_MESSAGE)
				continue;
			size_t n = *(size_t *)(base + f->quantifier_offset);
			ProtobufCMessage **arr = *(ProtobufCMessage ***)(base +
					f->offset);
			for (size_t k = 0; k < n; k++)
				translate(arr[k], ids);
			continue;
		}
		if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
			ProtobufCMessage *sub = *(ProtobufCMessage **)(base +
					f->offset);
			if (sub)
				translate(sub, ids);
		} else if (f->type == PROTOBUF_C_TYPE_UINT64 &&
				ends_with(f->name, "_id")) {
			uint64_t *v = (uint64_t *)(base + f->offset);
			if (*v < MAX_IDS && *v < ids->n)
				*v = ids->id[*v];
		}
	}
}

static void
learn(struct ids *ids, uint64_t id)
{
	if (ids->n < MAX_IDS)
		ids->id[ids->n++] = id;
}

/* Reads every answer waiting; each must decode. Learns new ids. */
static void
read_answers(int fd, struct ids *ids)
{
	static uint8_t buf[CTL_MAX_MSG];
	for (;;) {
		int fds[CTL_MAX_FDS];
		unsigned nfds = 0;
		long n = ctl_recv(fd, buf, sizeof(buf), fds, CTL_MAX_FDS,
				&nfds);
		ctl_close_fds(fds, nfds);
		if (n <= 0)
			return;
		Rpmad__Response *r = rpmad__response__unpack(NULL, (size_t)n,
				buf);
		if (r == NULL)
			abort();	/* rpmad answered with garbage */
		switch (r->body_case) {
		case RPMAD__RESPONSE__BODY_PEER:
			learn(ids, r->peer->peer_id);
			break;
		case RPMAD__RESPONSE__BODY_MR:
			learn(ids, r->mr->mr_id);
			break;
		case RPMAD__RESPONSE__BODY_EP:
			learn(ids, r->ep->ep_id);
			break;
		case RPMAD__RESPONSE__BODY_QP:
			learn(ids, r->qp->conn_id);
			break;
		default:
			break;
		}
		rpmad__response__free_unpacked(r, NULL);
	}
}

/* ------------------------------------------------------------ one input */

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		abort();
	(void) fcntl(sv[1], F_SETFL, O_NONBLOCK);
	struct session *s = session_open(sv[0]);
	struct ids ids = { .n = 0 };

	size_t pos = 0;
	bool open = true;
	while (size - pos >= 3 && open) {
		unsigned spec = data[pos];
		size_t len = (size_t)data[pos + 1] | (size_t)data[pos + 2] << 8;
		pos += 3;
		if (len > size - pos)
			len = size - pos;
		const uint8_t *pkt = data + pos;
		pos += len;

		/* ids translated where the packet decodes */
		uint8_t *packed = NULL;
		Rpmad__Request *req = rpmad__request__unpack(NULL, len, pkt);
		if (req) {
			translate(&req->base, &ids);
			size_t n = rpmad__request__get_packed_size(req);
			packed = malloc(n ? n : 1);
			if (packed == NULL)
				abort();
			len = rpmad__request__pack(req, packed);
			pkt = packed;
			rpmad__request__free_unpacked(req, NULL);
		}

		int fds[3];
		unsigned nfds = spec & 3;
		for (unsigned i = 0; i < nfds; i++)
			fds[i] = make_fd(spec >> (2 + 2 * i));
		/* as session.c: the handlers may end the session meanwhile */
		open = session_dispatch(s, pkt, len, fds, nfds);
		free(packed);
		read_answers(sv[1], &ids);
		(void) loop_run_once(rpmad.loop, 0);
	}
	session_destroy(s);
	(void) loop_run_once(rpmad.loop, 0);
	(void) close(sv[1]);
	return 0;
}
