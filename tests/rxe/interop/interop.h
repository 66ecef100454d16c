/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interop.h -- what the interop server and client share. Both programs
 * build against librpma 0.12 (librpmaclient, brokered by rpmad) and
 * against librpma 1.2 (Debian's native, in-process library) unchanged but
 * for one call: 0.12's rpma_write_atomic takes its 8 bytes from a local
 * registration, 1.x's rpma_atomic_write from a plain 8-byte array
 * (NATIVE_RPMA_1 picks it; interop_client.c).
 */

#ifndef INTEROP_H
#define INTEROP_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <librpma.h>

#include "../rpma_fail.h"

/* The target's memory: what lives where. */
#define MEM_SIZE 8192
#define OFF_WRITE 0		/* the initiator writes here */
#define OFF_ATOMIC 64		/* ... and the atomic 8 bytes here */
#define OFF_READ 128		/* the target's data, for reading */
#define OFF_RECV 4096		/* messages land here */
#define MSG_LEN 64

#define WRITTEN "written by the initiator"
#define READ_ME "offered by the target"
#define ATOMIC_VALUE 0x0123456789abcdefULL
#define CLIENT_PDATA "hello from the initiator"

/* Every step is bounded: a hang is a failure. */
#define STEP_SECONDS 60

/* the next completion of the connection's CQ, which must be `opcode` */
static inline void
wait_wc(struct rpma_conn *conn, enum ibv_wc_opcode opcode, const char *what)
{
	struct rpma_cq *cq;
	CHECK(rpma_conn_get_cq(conn, &cq));
	struct ibv_wc wc;
	int got = 0;
	alarm(STEP_SECONDS);
	for (;;) {
		int ret = rpma_cq_get_wc(cq, 1, &wc, &got);
		if (ret == 0)
			break;
		if (ret != RPMA_E_NO_COMPLETION)
			FAIL("%s: rpma_cq_get_wc: %s", what, rpma_err_2str(ret));
		ret = rpma_cq_wait(cq);
		if (ret)
			FAIL("%s: rpma_cq_wait: %s", what, rpma_err_2str(ret));
	}
	alarm(0);
	if (wc.status != IBV_WC_SUCCESS)
		FAIL("%s: %s", what, ibv_wc_status_str(wc.status));
	if (wc.opcode != opcode)
		FAIL("%s: opcode %d, wanted %d", what, wc.opcode, opcode);
}

/* a send and a receive, completed in either order */
static inline void
wait_wc_either(struct rpma_conn *conn, const char *what)
{
	struct rpma_cq *cq;
	CHECK(rpma_conn_get_cq(conn, &cq));
	int seen_send = 0, seen_recv = 0;
	alarm(STEP_SECONDS);
	while (!seen_send || !seen_recv) {
		struct ibv_wc wc;
		int got = 0;
		int ret = rpma_cq_get_wc(cq, 1, &wc, &got);
		if (ret == RPMA_E_NO_COMPLETION) {
			ret = rpma_cq_wait(cq);
			if (ret)
				FAIL("%s: rpma_cq_wait: %s", what,
						rpma_err_2str(ret));
			continue;
		}
		if (ret)
			FAIL("%s: rpma_cq_get_wc: %s", what, rpma_err_2str(ret));
		if (wc.status != IBV_WC_SUCCESS)
			FAIL("%s: %s", what, ibv_wc_status_str(wc.status));
		if (wc.opcode == IBV_WC_SEND)
			seen_send = 1;
		else if (wc.opcode == IBV_WC_RECV)
			seen_recv = 1;
		else
			FAIL("%s: opcode %d", what, wc.opcode);
	}
	alarm(0);
}

static inline void
expect_event(struct rpma_conn *conn, enum rpma_conn_event want)
{
	enum rpma_conn_event ev;
	alarm(STEP_SECONDS);
	CHECK(rpma_conn_next_event(conn, &ev));
	alarm(0);
	if (ev != want)
		FAIL("connection event %s, wanted %s", rpma_utils_conn_event_2str(ev),
				rpma_utils_conn_event_2str(want));
}

#endif /* INTEROP_H */
