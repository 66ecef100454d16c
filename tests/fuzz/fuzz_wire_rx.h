/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_wire_rx.h -- the input of the receive-engine fuzz target
 * (fuzz_wire_rx.c) and what its seeds (make_corpus.c) must know about
 * the connection it sets up
 */

#ifndef FUZZ_WIRE_RX_H
#define FUZZ_WIRE_RX_H

/* input: flags (1 byte), n (2 bytes LE), n bytes of operations, answers */
#define FUZZ_F_ACTIVE	(1u << 0)	/* rpmad is the active side */
#define FUZZ_F_SETUP	(1u << 1)	/* waiting for READY / ACCEPT */
#define FUZZ_F_CLOSE	(1u << 2)	/* the peer closes after its bytes */
#define FUZZ_WORK_SHIFT	4		/* rpmad's own work, bits 4-7: */
#define FUZZ_W_READ	(1u << 0)	/*   a read of FUZZ_OP_LEN bytes */
#define FUZZ_W_WRITE	(1u << 1)	/*   a write of FUZZ_OP_LEN bytes */
#define FUZZ_W_SEND	(1u << 2)	/*   a send of FUZZ_OP_LEN bytes */
#define FUZZ_W_FLUSH	(1u << 3)	/*   a flush, then an atomic write */

/* every byte rpmad draws at random is this one in the harness */
#define FUZZ_RANDOM_BYTE 0x5a
/* so the registration's key is */
#define FUZZ_KEY 0x5a5a5a5au
/* the registration: its address in the client's space, its size */
#define FUZZ_ADDR 0x10000000ull
#define FUZZ_LEN 8192u
/* rpmad's own work reaches the peer's memory with these */
#define FUZZ_REMOTE_ADDR 0x20000000ull
#define FUZZ_REMOTE_KEY 0x42u
#define FUZZ_OP_LEN 64u
/* two receives of this size wait in the registration's second half */
#define FUZZ_RECV_LEN 256u

#endif /* FUZZ_WIRE_RX_H */
