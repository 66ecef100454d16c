// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_codec_wire.c -- rpmad/transport/tcp/tcp_wire.c: frame headers and
 * the HELLO payload, encoded and decoded; everything a peer must not send rejected
 */

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tcp/tcp_wire.h"
#include "th_suite.h"

static const uint8_t all_types[] = {
	TF_HELLO, TF_ACCEPT, TF_REJECT, TF_READY, TF_DISCONNECT, TF_HEARTBEAT,
	TF_WRITE, TF_READ, TF_ATOMIC, TF_FLUSH, TF_SEND,
	TF_ACK, TF_READ_RESP, TF_NAK,
};
#define N_TYPES (sizeof(all_types) / sizeof(all_types[0]))

static int
is_known(unsigned type)
{
	for (size_t i = 0; i < N_TYPES; i++) {
		if (all_types[i] == type)
			return 1;
	}
	return 0;
}

/* the flags each type may carry */
static uint8_t
flags_of(uint8_t type)
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

/* a length each type accepts */
static uint32_t
good_length(uint8_t type)
{
	switch (type) {
	case TF_HELLO:
		return TCP_HELLO_SIZE + 17;
	case TF_ACCEPT:
		return 200;
	case TF_ATOMIC:
		return 8;
	case TF_WRITE:
	case TF_READ:
	case TF_FLUSH:
	case TF_SEND:
	case TF_READ_RESP:
		return 0x12345678;
	default:
		return 0;
	}
}

static uint64_t
le(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

START_TEST(frame_layout)
{
	struct tcp_frame f = {
		.type = TF_WRITE, .flags = TF_F_IMM, .length = 0x01020304,
		.seq = 0x1112131415161718ull, .raddr = 0x2122232425262728ull,
		.rkey = 0x31323334, .imm = 0,
	};
	const uint8_t imm_bytes[4] = { 0xa1, 0xa2, 0xa3, 0xa4 };
	memcpy(&f.imm, imm_bytes, 4);

	uint8_t out[TCP_FRAME_SIZE];
	memset(out, 0xee, sizeof(out));
	tcp_frame_encode(&f, out);
	ck_assert_uint_eq(TCP_FRAME_SIZE, 32);
	ck_assert_uint_eq(out[0], TF_WRITE);
	ck_assert_uint_eq(out[1], TF_F_IMM);
	ck_assert_uint_eq(out[2], 0);	/* reserved */
	ck_assert_uint_eq(out[3], 0);
	ck_assert_uint_eq(le(out + 4, 4), 0x01020304);
	ck_assert_uint_eq(le(out + 8, 8), 0x1112131415161718ull);
	ck_assert_uint_eq(le(out + 16, 8), 0x2122232425262728ull);
	ck_assert_uint_eq(le(out + 24, 4), 0x31323334);
	/* imm travels as the application's bytes */
	ck_assert_mem_eq(out + 28, imm_bytes, 4);
}
END_TEST

/* encode -> decode gives back every field, for every type */
START_TEST(frame_round_trip)
{
	uint8_t type = all_types[_i];
	uint8_t flag_sets[2] = { 0, flags_of(type) };
	for (int k = 0; k < 2; k++) {
		struct tcp_frame f = {
			.type = type, .flags = flag_sets[k],
			.length = good_length(type),
			.seq = UINT64_MAX - (uint64_t)_i,
			.raddr = 0xfedcba9876543210ull,
			.rkey = 0xcafebabe, .imm = 0x0badf00d,
		};
		uint8_t out[TCP_FRAME_SIZE];
		tcp_frame_encode(&f, out);
		struct tcp_frame g;
		memset(&g, 0x55, sizeof(g));
		ck_assert_int_eq(tcp_frame_decode(out, &g), 0);
		ck_assert_uint_eq(g.type, f.type);
		ck_assert_uint_eq(g.flags, f.flags);
		ck_assert_uint_eq(g.length, f.length);
		ck_assert_uint_eq(g.seq, f.seq);
		ck_assert_uint_eq(g.raddr, f.raddr);
		ck_assert_uint_eq(g.rkey, f.rkey);
		ck_assert_uint_eq(g.imm, f.imm);
	}
}
END_TEST

START_TEST(frame_payload_len)
{
	for (size_t i = 0; i < N_TYPES; i++) {
		struct tcp_frame f = { .type = all_types[i], .length = 1000 };
		uint32_t want = (f.type == TF_READ || f.type == TF_FLUSH) ?
				0 : 1000;
		ck_assert_uint_eq(tcp_frame_payload_len(&f), want);
	}
}
END_TEST

START_TEST(frame_unknown_types)
{
	for (unsigned t = 0; t < 256; t++) {
		if (is_known(t))
			continue;
		uint8_t in[TCP_FRAME_SIZE] = { 0 };
		in[0] = (uint8_t)t;
		struct tcp_frame f;
		ck_assert_msg(tcp_frame_decode(in, &f) == -EPROTO, "type %u",
				t);
	}
}
END_TEST

START_TEST(frame_bad_flags)
{
	for (size_t i = 0; i < N_TYPES; i++) {
		uint8_t type = all_types[i];
		for (unsigned bit = 0; bit < 8; bit++) {
			uint8_t flag = (uint8_t)(1u << bit);
			if (flags_of(type) & flag)
				continue;
			struct tcp_frame f = { .type = type, .flags = flag,
					.length = good_length(type) };
			uint8_t out[TCP_FRAME_SIZE];
			tcp_frame_encode(&f, out);
			struct tcp_frame g;
			ck_assert_msg(tcp_frame_decode(out, &g) == -EPROTO,
					"type %u flag 0x%x", type, flag);
		}
	}
}
END_TEST

START_TEST(frame_reserved_bytes)
{
	for (int pos = 2; pos <= 3; pos++) {
		for (unsigned v = 1; v < 256; v <<= 1) {
			struct tcp_frame f = { .type = TF_ACK, .seq = 5 };
			uint8_t out[TCP_FRAME_SIZE];
			tcp_frame_encode(&f, out);
			out[pos] = (uint8_t)v;
			struct tcp_frame g;
			ck_assert_int_eq(tcp_frame_decode(out, &g), -EPROTO);
		}
	}
}
END_TEST

static int
decode_len(uint8_t type, uint32_t length)
{
	struct tcp_frame f = { .type = type, .length = length };
	uint8_t out[TCP_FRAME_SIZE];
	tcp_frame_encode(&f, out);
	struct tcp_frame g;
	return tcp_frame_decode(out, &g);
}

START_TEST(frame_lengths)
{
	/*
	 * HELLO: the 40-byte payload plus at most 255 bytes of private data;
	 * the frame takes one as short as magic and version, so that another
	 * version's is told apart (tcp_hello_decode refuses it)
	 */
	ck_assert_int_eq(decode_len(TF_HELLO, 0), -EPROTO);
	ck_assert_int_eq(decode_len(TF_HELLO, TCP_HELLO_MIN - 1), -EPROTO);
	ck_assert_int_eq(decode_len(TF_HELLO, TCP_HELLO_MIN), 0);
	ck_assert_int_eq(decode_len(TF_HELLO, TCP_HELLO_SIZE), 0);
	ck_assert_int_eq(decode_len(TF_HELLO, TCP_HELLO_SIZE + 255), 0);
	ck_assert_int_eq(decode_len(TF_HELLO, TCP_HELLO_SIZE + 256), -EPROTO);
	ck_assert_int_eq(decode_len(TF_HELLO, UINT32_MAX), -EPROTO);
	/*
	 * ACCEPT: the passive rpmad's id, then private data (version 1:
	 * private data alone; the handshake checks the id's length)
	 */
	ck_assert_int_eq(decode_len(TF_ACCEPT, 0), 0);
	ck_assert_int_eq(decode_len(TF_ACCEPT, TCP_ACCEPT_ID_SIZE - 1), 0);
	ck_assert_int_eq(decode_len(TF_ACCEPT, TCP_ACCEPT_ID_SIZE), 0);
	ck_assert_int_eq(decode_len(TF_ACCEPT, TCP_ACCEPT_ID_SIZE + 255), 0);
	ck_assert_int_eq(decode_len(TF_ACCEPT, TCP_ACCEPT_ID_SIZE + 256),
			-EPROTO);
	ck_assert_int_eq(decode_len(TF_ACCEPT, UINT32_MAX), -EPROTO);
	/* no payload at all */
	const uint8_t empty[] = { TF_REJECT, TF_READY, TF_DISCONNECT,
		TF_HEARTBEAT, TF_ACK, TF_NAK };
	for (size_t i = 0; i < sizeof(empty); i++) {
		ck_assert_int_eq(decode_len(empty[i], 0), 0);
		ck_assert_int_eq(decode_len(empty[i], 1), -EPROTO);
		ck_assert_int_eq(decode_len(empty[i], 8), -EPROTO);
		ck_assert_int_eq(decode_len(empty[i], UINT32_MAX), -EPROTO);
	}
	/* an atomic write is 8 bytes exactly */
	ck_assert_int_eq(decode_len(TF_ATOMIC, 8), 0);
	ck_assert_int_eq(decode_len(TF_ATOMIC, 0), -EPROTO);
	ck_assert_int_eq(decode_len(TF_ATOMIC, 7), -EPROTO);
	ck_assert_int_eq(decode_len(TF_ATOMIC, 9), -EPROTO);
	ck_assert_int_eq(decode_len(TF_ATOMIC, 16), -EPROTO);
	/* data-carrying operations take any 32-bit length */
	const uint8_t any[] = { TF_WRITE, TF_READ, TF_FLUSH, TF_SEND,
		TF_READ_RESP };
	for (size_t i = 0; i < sizeof(any); i++) {
		ck_assert_int_eq(decode_len(any[i], 0), 0);
		ck_assert_int_eq(decode_len(any[i], UINT32_MAX), 0);
	}
}
END_TEST

/* every header of random bytes decodes to 0 or -EPROTO, consistently */
START_TEST(frame_random_headers)
{
	srand(12345);
	for (int n = 0; n < 200000; n++) {
		uint8_t in[TCP_FRAME_SIZE];
		for (int i = 0; i < TCP_FRAME_SIZE; i++)
			in[i] = (uint8_t)rand();
		if (n % 3 == 0)
			in[0] = all_types[(unsigned)rand() % N_TYPES];
		if (n % 2 == 0)
			in[2] = in[3] = 0;
		struct tcp_frame f;
		int ret = tcp_frame_decode(in, &f);
		ck_assert(ret == 0 || ret == -EPROTO);
		if (ret == 0) {
			ck_assert(is_known(f.type));
			ck_assert_uint_eq(f.flags & ~flags_of(f.type), 0);
			/* what was accepted encodes to the same bytes */
			uint8_t out[TCP_FRAME_SIZE];
			tcp_frame_encode(&f, out);
			ck_assert_mem_eq(out, in, TCP_FRAME_SIZE);
		}
	}
}
END_TEST

/* ---------------------------------------------------------- HELLO */

static void
hello_bytes(uint8_t out[TCP_HELLO_SIZE], uint8_t role, uint8_t pdata_len)
{
	struct tcp_hello h = {
		.magic = TCP_WIRE_MAGIC, .version = TCP_WIRE_VERSION,
		.role = role, .pdata_len = pdata_len, .qp_num = 0x00abcdef,
		.daemon_id = 0x0102030405060708ull,
	};
	for (int i = 0; i < TCP_TOKEN_SIZE; i++)
		h.token[i] = (uint8_t)(0xf0 + i);
	tcp_hello_encode(&h, out);
}

START_TEST(hello_layout_and_round_trip)
{
	uint8_t out[TCP_HELLO_SIZE];
	memset(out, 0xee, sizeof(out));
	hello_bytes(out, HELLO_PRIMARY, 9);
	ck_assert_uint_eq(le(out, 4), TCP_WIRE_MAGIC);
	ck_assert_uint_eq(le(out + 4, 2), TCP_WIRE_VERSION);
	ck_assert_uint_eq(out[6], HELLO_PRIMARY);
	ck_assert_uint_eq(out[7], 9);
	ck_assert_uint_eq(out[8], 0xf0);
	ck_assert_uint_eq(out[23], 0xff);
	ck_assert_uint_eq(le(out + 24, 4), 0x00abcdef);
	ck_assert_uint_eq(le(out + 28, 8), 0x0102030405060708ull);
	ck_assert_uint_eq(le(out + 36, 4), 0);	/* reserved */

	struct tcp_hello h;
	ck_assert_int_eq(tcp_hello_decode(out, TCP_HELLO_SIZE + 9, &h), 0);
	ck_assert_uint_eq(h.magic, TCP_WIRE_MAGIC);
	ck_assert_uint_eq(h.version, TCP_WIRE_VERSION);
	ck_assert_uint_eq(h.role, HELLO_PRIMARY);
	ck_assert_uint_eq(h.pdata_len, 9);
	ck_assert_uint_eq(h.qp_num, 0x00abcdef);
	ck_assert_uint_eq(h.daemon_id, 0x0102030405060708ull);
	for (int i = 0; i < TCP_TOKEN_SIZE; i++)
		ck_assert_uint_eq(h.token[i], 0xf0 + i);
}
END_TEST

/* the primary HELLO carries exactly pdata_len bytes after its 40 */
START_TEST(hello_pdata_lengths)
{
	for (unsigned n = 0; n <= TCP_PDATA_MAX; n++) {
		uint8_t out[TCP_HELLO_SIZE];
		hello_bytes(out, HELLO_PRIMARY, (uint8_t)n);
		struct tcp_hello h;
		ck_assert_int_eq(tcp_hello_decode(out, TCP_HELLO_SIZE + n, &h),
				0);
		ck_assert_uint_eq(h.pdata_len, n);
		ck_assert_int_eq(tcp_hello_decode(out, TCP_HELLO_SIZE + n + 1,
				&h), -EPROTO);
		if (n > 0)
			ck_assert_int_eq(tcp_hello_decode(out,
					TCP_HELLO_SIZE + n - 1, &h), -EPROTO);
	}
	/* the secondary carries none */
	uint8_t out[TCP_HELLO_SIZE];
	struct tcp_hello h;
	hello_bytes(out, HELLO_SECONDARY, 0);
	ck_assert_int_eq(tcp_hello_decode(out, TCP_HELLO_SIZE, &h), 0);
	ck_assert_uint_eq(h.role, HELLO_SECONDARY);
	ck_assert_int_eq(tcp_hello_decode(out, TCP_HELLO_SIZE + 1, &h),
			-EPROTO);
	hello_bytes(out, HELLO_SECONDARY, 4);
	ck_assert_int_eq(tcp_hello_decode(out, TCP_HELLO_SIZE, &h), -EPROTO);
	ck_assert_int_eq(tcp_hello_decode(out, TCP_HELLO_SIZE + 4, &h),
			-EPROTO);
}
END_TEST

/*
 * An rpmad of wire version 1 sends 32 bytes, without an rpmad id: this
 * rpmad speaks it too (a cluster upgraded one host at a time).
 */
START_TEST(hello_of_version_1)
{
	ck_assert_uint_eq(tcp_hello_size(1), 32);
	ck_assert_uint_eq(tcp_accept_id_size(1), 0);
	ck_assert_uint_eq(tcp_accept_id_size(2), TCP_ACCEPT_ID_SIZE);
	struct tcp_hello h1 = {
		.magic = TCP_WIRE_MAGIC, .version = 1, .role = HELLO_PRIMARY,
		.pdata_len = 5, .qp_num = 77, .daemon_id = 0xdeadbeef,
	};
	uint8_t out[TCP_HELLO_SIZE];
	memset(out, 0xee, sizeof(out));
	ck_assert_uint_eq(tcp_hello_encode(&h1, out), 32);
	ck_assert_uint_eq(le(out + 4, 2), 1);
	ck_assert_uint_eq(le(out + 24, 4), 77);
	ck_assert_uint_eq(le(out + 28, 4), 0);	/* reserved: no id */
	ck_assert_uint_eq(out[32], 0xee);	/* nothing past its end */
	struct tcp_hello h;
	ck_assert_int_eq(tcp_hello_decode(out, 32 + 5, &h), 0);
	ck_assert_uint_eq(h.version, 1);
	ck_assert_uint_eq(h.pdata_len, 5);
	ck_assert_uint_eq(h.qp_num, 77);
	ck_assert_uint_eq(h.daemon_id, 0);
	/* its own length, exactly; and its reserved bytes zero */
	ck_assert_int_eq(tcp_hello_decode(out, 32 + 4, &h), -EPROTO);
	ck_assert_int_eq(tcp_hello_decode(out, 32 + 6, &h), -EPROTO);
	h1.role = HELLO_SECONDARY;
	h1.pdata_len = 0;
	(void) tcp_hello_encode(&h1, out);
	ck_assert_int_eq(tcp_hello_decode(out, 32, &h), 0);
	ck_assert_int_eq(tcp_hello_decode(out, 31, &h), -EPROTO);
	ck_assert_int_eq(tcp_hello_decode(out, 40, &h), -EPROTO);
	for (int pos = 28; pos < 32; pos++) {
		(void) tcp_hello_encode(&h1, out);
		out[pos] = 1;
		ck_assert_int_eq(tcp_hello_decode(out, 32, &h), -EPROTO);
	}
}
END_TEST

/*
 * A version this rpmad does not speak does not decode, but its version is
 * read, so that the refusal can name it.
 */
START_TEST(hello_of_another_version)
{
	uint8_t out[TCP_HELLO_SIZE];
	hello_bytes(out, HELLO_PRIMARY, 0);
	out[4] = TCP_WIRE_VERSION + 1;
	out[5] = 0;
	struct tcp_hello h;
	ck_assert_int_eq(tcp_hello_decode(out, TCP_HELLO_SIZE, &h), -EPROTO);
	uint16_t version = 0;
	ck_assert_int_eq(tcp_hello_version(out, 32, &version), 0);
	ck_assert_uint_eq(version, TCP_WIRE_VERSION + 1);
	ck_assert_int_eq(tcp_hello_version(out, TCP_HELLO_MIN, &version), 0);
	/* too short to say, or not an rpmad's */
	ck_assert_int_eq(tcp_hello_version(out, TCP_HELLO_MIN - 1, &version),
			-EPROTO);
	out[0] ^= 1;
	ck_assert_int_eq(tcp_hello_version(out, 32, &version), -EPROTO);
}
END_TEST

START_TEST(hello_rejected)
{
	uint8_t out[TCP_HELLO_SIZE];
	struct tcp_hello h;

	/* too short */
	hello_bytes(out, HELLO_SECONDARY, 0);
	for (uint32_t len = 0; len < TCP_HELLO_SIZE; len++)
		ck_assert_int_eq(tcp_hello_decode(out, len, &h), -EPROTO);

	/* any bit of the magic wrong */
	for (int bit = 0; bit < 32; bit++) {
		hello_bytes(out, HELLO_SECONDARY, 0);
		out[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert_int_eq(tcp_hello_decode(out, TCP_HELLO_SIZE, &h),
				-EPROTO);
	}
	/* another version */
	const uint16_t versions[] = { 0, TCP_WIRE_VERSION + 1, 0xffff };
	for (size_t i = 0; i < 3; i++) {
		hello_bytes(out, HELLO_SECONDARY, 0);
		out[4] = (uint8_t)versions[i];
		out[5] = (uint8_t)(versions[i] >> 8);
		ck_assert_int_eq(tcp_hello_decode(out, TCP_HELLO_SIZE, &h),
				-EPROTO);
	}
	/* reserved bytes that are not zero */
	for (int pos = 36; pos < TCP_HELLO_SIZE; pos++) {
		hello_bytes(out, HELLO_SECONDARY, 0);
		out[pos] = 1;
		ck_assert_int_eq(tcp_hello_decode(out, TCP_HELLO_SIZE, &h),
				-EPROTO);
	}
	/* no such role */
	const uint8_t roles[] = { 0, 3, 0x81, 0xff };
	for (size_t i = 0; i < sizeof(roles); i++) {
		hello_bytes(out, roles[i], 0);
		ck_assert_int_eq(tcp_hello_decode(out, TCP_HELLO_SIZE, &h),
				-EPROTO);
	}
}
END_TEST

int
main(void)
{
	const struct th_test tc_frame[] = { TH_TEST(frame_layout),
		TH_LOOP(frame_round_trip, 0, N_TYPES),
		TH_TEST(frame_payload_len), TH_TEST(frame_unknown_types),
		TH_TEST(frame_bad_flags), TH_TEST(frame_reserved_bytes),
		TH_TEST(frame_lengths), TH_TEST(frame_random_headers), TH_END };
	const TTest *const tc_hello[] = { hello_layout_and_round_trip,
		hello_pdata_lengths, hello_rejected, hello_of_version_1,
		hello_of_another_version, NULL };
	const struct th_tcase tcases[] = {
		/* 200,000 random headers: seconds under ASan, a loaded host */
		{ "frame", .steps = tc_frame, .timeout = 120 },
		{ "hello", .tests = tc_hello },
	};
	return check_run(th_suite("codec_wire", tcases, TH_N(tcases)),
			CK_NORMAL);
}
