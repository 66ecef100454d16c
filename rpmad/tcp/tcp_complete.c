// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_complete.c -- how our operations in flight complete (tcp.h): in
 * order, as the peer says it did them, or failed here when their local
 * bytes could not be read or written
 *
 * The peer says so in an answer on our operations' socket (an ACK, a
 * read's data: tcp_ops.c) and in a message of its own on the other one,
 * which acknowledges our operations as it goes (tcp_target.c): both
 * sides' files stand on this one.
 */

#include <errno.h>

#include "tcp/tcp.h"

/*
 * A work whose local bytes could not be read or written: it completes
 * with IBV_WC_LOC_PROT_ERR in its turn, and the queue pair fails.
 */
static void
fail_oldest(struct tcp_conn *tc, struct work *w)
{
	tc->ini_failed_seq = 0;
	tc->ini_failed_unsent = false;
	conn_work_done(tc->conn, w, IBV_WC_LOC_PROT_ERR);
	conn_work_flush(tc->conn);
	conn_qp_error(tc->conn);
}

/* The status work w completes with when its target did it. */
static enum ibv_wc_status
done_status(struct tcp_conn *tc, const struct work *w)
{
	if (w->tp_seq == tc->ini_failed_seq)
		return IBV_WC_LOC_PROT_ERR;
	return IBV_WC_SUCCESS;
}

void
tcp_complete(struct tcp_conn *tc, struct work *w)
{
	if (done_status(tc, w) != IBV_WC_SUCCESS) {
		fail_oldest(tc, w);
		return;
	}
	conn_work_done(tc->conn, w, IBV_WC_SUCCESS);
}

void
tcp_complete_unsent(struct tcp_conn *tc)
{
	struct work *w = conn_work_oldest(tc->conn);
	if (w && tc->ini_failed_unsent && w->tp_seq == tc->ini_failed_seq)
		fail_oldest(tc, w);
}

int
tcp_complete_before(struct tcp_conn *tc, uint64_t seq)
{
	struct work *w;
	while ((w = conn_work_oldest(tc->conn)) != NULL && w->tp_seq < seq) {
		if (w->opcode == QP_OP_READ)
			return -EPROTO;
		tcp_complete(tc, w);
	}
	tcp_complete_unsent(tc);
	return 0;
}

int
tcp_initiator_done_by_peer(struct tcp_conn *tc, uint64_t seq)
{
	if (seq > conn_work_last_seq(tc->conn))
		return -EPROTO;
	struct work *w;
	while ((w = conn_work_oldest(tc->conn)) != NULL && w->tp_seq <= seq &&
			w->opcode != QP_OP_READ)
		tcp_complete(tc, w);
	tcp_complete_unsent(tc);
	return 0;
}
