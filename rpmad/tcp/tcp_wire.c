// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_wire.c -- encoding and checking frames of the software transport
 */

#include <errno.h>
#include <string.h>

#include "le_bytes.h"
#include "tcp/tcp_wire.h"

/*
 * Layout: type(1) flags(1) reserved(2) length(4) seq(8) raddr(8)
 * rkey(4) imm(4). imm travels as the application gave it.
 */
void
tcp_frame_encode(const struct tcp_frame *f, uint8_t out[TCP_FRAME_SIZE])
{
	memset(out, 0, TCP_FRAME_SIZE);
	out[0] = f->type;
	out[1] = f->flags;
	le_put32(out + 4, f->length);
	le_put64(out + 8, f->seq);
	le_put64(out + 16, f->raddr);
	le_put32(out + 24, f->rkey);
	memcpy(out + 28, &f->imm, sizeof(f->imm));
}

/* Flags each type may carry. */
static uint8_t
allowed_flags(uint8_t type)
{
	switch (type) {
	case TF_WRITE:
	case TF_SEND:
		return TF_F_IMM;
	case TF_FLUSH:
		return TF_F_PERSIST;
	default:
		return 0;
	}
}

int
tcp_frame_decode(const uint8_t in[TCP_FRAME_SIZE], struct tcp_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->type = in[0];
	f->flags = in[1];
	if (le_get16(in + 2) != 0)
		return -EPROTO;
	f->length = le_get32(in + 4);
	f->seq = le_get64(in + 8);
	f->raddr = le_get64(in + 16);
	f->rkey = le_get32(in + 24);
	memcpy(&f->imm, in + 28, sizeof(f->imm));

	if (f->flags & ~allowed_flags(f->type))
		return -EPROTO;

	switch (f->type) {
	case TF_HELLO:
		/* as short as any version's, to name the version in a refusal */
		return f->length >= TCP_HELLO_MIN &&
			f->length <= TCP_HELLO_SIZE + TCP_PDATA_MAX ? 0 :
			-EPROTO;
	case TF_ACCEPT:
		/* the id version 2 puts first is checked by the handshake */
		return f->length <= TCP_ACCEPT_ID_SIZE + TCP_PDATA_MAX ? 0 :
			-EPROTO;
	case TF_REJECT:
	case TF_READY:
	case TF_DISCONNECT:
	case TF_HEARTBEAT:
	case TF_ACK:
	case TF_NAK:
		return f->length == 0 ? 0 : -EPROTO;
	case TF_ATOMIC:
		return f->length == 8 ? 0 : -EPROTO;
	case TF_WRITE:
	case TF_READ:
	case TF_FLUSH:
	case TF_SEND:
	case TF_READ_RESP:
		return 0;
	default:
		return -EPROTO;
	}
}

uint32_t
tcp_hello_encode(const struct tcp_hello *h, uint8_t out[TCP_HELLO_SIZE])
{
	uint32_t size = tcp_hello_size(h->version);
	memset(out, 0, size);
	le_put32(out, h->magic);
	le_put16(out + 4, h->version);
	out[6] = h->role;
	out[7] = h->pdata_len;
	memcpy(out + 8, h->token, TCP_TOKEN_SIZE);
	le_put32(out + 24, h->qp_num);
	/* version 1: reserved, zero, where version 2 put the id */
	if (h->version != 1)
		le_put64(out + 28, h->daemon_id);
	return size;
}

int
tcp_hello_decode(const uint8_t *in, uint32_t len, struct tcp_hello *h)
{
	if (len < TCP_HELLO_MIN)
		return -EPROTO;
	h->magic = le_get32(in);
	h->version = le_get16(in + 4);
	if (h->magic != TCP_WIRE_MAGIC || h->version < TCP_WIRE_VERSION_MIN ||
			h->version > TCP_WIRE_VERSION)
		return -EPROTO;
	uint32_t size = tcp_hello_size(h->version);
	if (len < size)
		return -EPROTO;
	h->role = in[6];
	h->pdata_len = in[7];
	memcpy(h->token, in + 8, TCP_TOKEN_SIZE);
	h->qp_num = le_get32(in + 24);
	h->daemon_id = h->version == 1 ? 0 : le_get64(in + 28);
	/* reserved, as in the frame header: zero until a version uses them */
	if (le_get32(in + size - 4) != 0)
		return -EPROTO;
	if (h->role == HELLO_PRIMARY)
		return len == size + (uint32_t)h->pdata_len ? 0 : -EPROTO;
	if (h->role == HELLO_SECONDARY)
		return len == size && h->pdata_len == 0 ? 0 : -EPROTO;
	return -EPROTO;
}

int
tcp_hello_version(const uint8_t *in, uint32_t len, uint16_t *version)
{
	if (len < TCP_HELLO_MIN || le_get32(in) != TCP_WIRE_MAGIC)
		return -EPROTO;
	*version = le_get16(in + 4);
	return 0;
}
