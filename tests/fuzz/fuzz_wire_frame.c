// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_wire_frame.c -- the software transport's frame header and HELLO
 * decoders (rpmad/transport/tcp/tcp_wire.c), fuzzed.
 *
 * An input is a frame header (32 bytes) and, for a HELLO, its payload.
 * Beyond not crashing: whatever decodes must encode to the very bytes it
 * came from (no field may be dropped or altered by the decoder, so a
 * check of a decoded field is a check of what the peer sent), and the
 * payload length must be what the type allows.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "tcp/tcp_wire.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < TCP_FRAME_SIZE)
		return 0;
	struct tcp_frame f;
	if (tcp_frame_decode(data, &f) == 0) {
		uint8_t again[TCP_FRAME_SIZE];
		tcp_frame_encode(&f, again);
		if (memcmp(again, data, TCP_FRAME_SIZE) != 0)
			abort();
		uint32_t payload = tcp_frame_payload_len(&f);
		if (f.type == TF_READ || f.type == TF_FLUSH) {
			if (payload != 0)
				abort();
		} else if (payload != f.length) {
			abort();
		}
		if (f.type == TF_ATOMIC && f.length != 8)
			abort();
	}

	const uint8_t *hello = data + TCP_FRAME_SIZE;
	uint32_t len = (uint32_t)(size - TCP_FRAME_SIZE);
	struct tcp_hello h;
	if (tcp_hello_decode(hello, len, &h) == 0) {
		uint8_t again[TCP_HELLO_SIZE];
		uint32_t hsize = tcp_hello_encode(&h, again);
		if (hsize != tcp_hello_size(h.version) ||
				memcmp(again, hello, hsize) != 0)
			abort();
		if (len != hsize + (uint32_t)h.pdata_len)
			abort();
		if (h.role != HELLO_PRIMARY && (h.role != HELLO_SECONDARY ||
				h.pdata_len != 0))
			abort();
	}
	return 0;
}
