/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_wire.h -- the software transport's wire protocol (daemon to daemon)
 *
 * Every frame is a 32-byte header, little-endian, followed by `length`
 * bytes of payload. One rpma connection uses two TCP connections, both
 * opened by the active side:
 *   primary    set-up and tear-down frames; the active side's operations
 *              and the passive side's answers to them
 *   secondary  the passive side's operations and the active side's answers
 * so that a target that waits for a receive buffer (RNR) stops reading one
 * direction only. On each connection, operations carry consecutive
 * sequence numbers; the target executes them in order and answers in
 * order: ACK(n) completes everything up to n, READ_RESP(n) carries the
 * data of read n (and completes what came before it), NAK(n) fails n --
 * the target then discards every further operation, as a verbs responder
 * in the error state does. A SEND carries in raddr the last operation of
 * the other direction its sender had done (0: none): a message may answer
 * one, and must not be seen before that one completes, which the ACK on
 * the other socket cannot promise. (Older peers leave it 0 and ignore
 * it.)
 *
 * Versions: an rpmad speaks its own and the one before it, so that a
 * cluster upgraded one host at a time keeps its links. Version 1 has no
 * rpmad ids (a 32-byte HELLO, ACCEPT carries the private data alone) and
 * watches each connection alone: every socket hears a HEARTBEAT when it
 * was quiet for a quarter of the timeout, and a socket silent for seven
 * eighths of it is lost. The active side offers the newest version; an
 * rpmad of version 1 closes the sockets of a HELLO it cannot read, and
 * the active side connects again with version 1 (tcp_handshake.c).
 */

#ifndef RPMAD_TCP_WIRE_H
#define RPMAD_TCP_WIRE_H

#include <stdint.h>

#include "conn_pdata.h"

#define TCP_WIRE_MAGIC		0x414d5052u	/* "RPMA" */
#define TCP_WIRE_VERSION	2	/* 2: the rpmads' ids (liveness) */
#define TCP_WIRE_VERSION_MIN	1	/* the oldest still spoken */
#define TCP_FRAME_SIZE		32
#define TCP_TOKEN_SIZE		16
#define TCP_PDATA_MAX		CONN_PDATA_MAX	/* all of it */

enum tcp_frame_type {
	/* set-up and tear-down */
	TF_HELLO = 1,		/* active -> passive, first on each socket */
	TF_ACCEPT = 2,		/* passive -> active, payload: the passive
				 * rpmad's id (8 bytes), private data */
	TF_REJECT = 3,		/* passive -> active */
	TF_READY = 4,		/* active -> passive: established */
	TF_DISCONNECT = 5,	/* either way, answered in kind */
	TF_HEARTBEAT = 6,	/* either way on either socket: "still here" */
	/* operations, initiator -> target */
	TF_WRITE = 16,		/* payload: the data */
	TF_READ = 17,		/* length: bytes wanted */
	TF_ATOMIC = 18,		/* payload: 8 bytes */
	TF_FLUSH = 19,		/* length: bytes to flush */
	TF_SEND = 20,		/* payload: the message; raddr: done up to */
	/* answers, target -> initiator */
	TF_ACK = 32,
	TF_READ_RESP = 33,	/* payload: the data read */
	TF_NAK = 34,		/* imm: enum ibv_wc_status of the failure */
};

/* frame flags */
#define TF_F_IMM	(1u << 0)	/* write or send with immediate data */
#define TF_F_PERSIST	(1u << 1)	/* flush to persistence */

struct tcp_frame {
	uint8_t type;
	uint8_t flags;
	uint32_t length;
	uint64_t seq;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t imm;		/* network byte order, as the API has it */
};

/*
 * The payload of HELLO (then private data on the primary socket): the
 * newest version's, the largest; version 1's ends before the rpmad id.
 */
#define TCP_HELLO_SIZE 40
#define TCP_HELLO_SIZE_V1 32
/* what every version's HELLO starts with: magic and version */
#define TCP_HELLO_MIN 6
/* ACCEPT's payload before the private data: the passive rpmad's id (v2) */
#define TCP_ACCEPT_ID_SIZE 8
enum tcp_hello_role {
	HELLO_PRIMARY = 1,
	HELLO_SECONDARY = 2,
};

struct tcp_hello {
	uint32_t magic;
	uint16_t version;
	uint8_t role;
	uint8_t pdata_len;
	uint8_t token[TCP_TOKEN_SIZE];
	uint32_t qp_num;
	uint64_t daemon_id; /* the active rpmad's (tcp_liveness.c); v2 */
};

/* tcp_hello_size -- the HELLO payload of a version, before private data */
static inline uint32_t
tcp_hello_size(uint16_t version)
{
	return version == 1 ? TCP_HELLO_SIZE_V1 : TCP_HELLO_SIZE;
}

/* tcp_accept_id_size -- the bytes of ACCEPT before the private data */
static inline uint32_t
tcp_accept_id_size(uint16_t version)
{
	return version == 1 ? 0 : TCP_ACCEPT_ID_SIZE;
}

/* tcp_frame_encode -- the 32 bytes of a header */
void tcp_frame_encode(const struct tcp_frame *f, uint8_t out[TCP_FRAME_SIZE]);

/*
 * tcp_frame_decode -- parse and check a header received from a peer:
 * known type, flags that type allows, a length that type allows.
 * Returns 0 or -EPROTO (a protocol violation).
 */
int tcp_frame_decode(const uint8_t in[TCP_FRAME_SIZE], struct tcp_frame *f);

/* tcp_frame_payload_len -- bytes after the header (READ, FLUSH: none) */
static inline uint32_t
tcp_frame_payload_len(const struct tcp_frame *f)
{
	return (f->type == TF_READ || f->type == TF_FLUSH) ? 0 : f->length;
}

/*
 * tcp_hello_encode -- the HELLO payload of h->version (a version this
 * rpmad speaks); returns its size, tcp_hello_size(h->version)
 */
uint32_t tcp_hello_encode(const struct tcp_hello *h,
		uint8_t out[TCP_HELLO_SIZE]);

/*
 * tcp_hello_decode -- parse the HELLO payload of `len` bytes, of any
 * version this rpmad speaks (h->version says which; daemon_id is 0 in
 * version 1); 0 or -EPROTO (bad magic, a version not spoken, role, or a
 * private data length that does not match)
 */
int tcp_hello_decode(const uint8_t *in, uint32_t len, struct tcp_hello *h);

/*
 * tcp_hello_version -- the wire version a HELLO payload of `len` bytes
 * claims, so that an rpmad of another version is told apart from garbage;
 * 0, or -EPROTO when it is too short or not an rpmad's (bad magic)
 */
int tcp_hello_version(const uint8_t *in, uint32_t len, uint16_t *version);

#endif /* RPMAD_TCP_WIRE_H */
