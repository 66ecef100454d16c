/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_ops.h -- operations over the software transport's sockets: the
 * initiator's side and the target's, as the receive engine and the
 * operations table call them
 */

#ifndef RPMAD_TCP_OPS_H
#define RPMAD_TCP_OPS_H

#include <stdbool.h>

struct tcp_chan;
struct tcp_conn;
struct work;

int tcp_ops_post(struct tcp_conn *tc, struct work *w);
/*
 * the connection ends: let go of the registration a payload was landing
 * in (the core flushes the work and the receive in flight)
 */
void tcp_ops_forget(struct tcp_conn *tc);

/*
 * A frame header arrived on the target (or initiator) channel: 0 to take
 * its payload where ch->sink says, 1 to wait (for a receive buffer, or for
 * the client's thread to finish what frames before it need of the
 * client's memory: `resume` reads on after that), a negative errno when
 * the connection ended (-EPROTO: the peer broke the protocol). Its end,
 * once the payload is in.
 */
int tcp_target_begin(struct tcp_conn *tc, struct tcp_chan *ch,
		void (*resume)(struct tcp_chan *ch));
void tcp_target_end(struct tcp_conn *tc, struct tcp_chan *ch);

/*
 * The persistent flush the current frame asks for: its DAX part at most
 * *budget bytes at a time (taken off *budget), its page-cache part in the
 * thread of offload.h while the channel is paused (`resume` reads it on
 * once that is over). True once all is done (or refused), false while
 * more is left for the next turn or the thread.
 */
bool tcp_target_persist(struct tcp_conn *tc, struct tcp_chan *ch,
		size_t *budget, void (*resume)(struct tcp_chan *ch));
int tcp_initiator_begin(struct tcp_conn *tc, struct tcp_chan *ch,
		void (*resume)(struct tcp_chan *ch));
void tcp_initiator_end(struct tcp_conn *tc, struct tcp_chan *ch);
/*
 * a message of the peer's says it had done our operations up to `seq`:
 * complete them (a read waits for its data); 0, or -EPROTO for operations
 * we never handed over
 */
int tcp_initiator_done_by_peer(struct tcp_conn *tc, uint64_t seq);
/* after a batch of frames: send the ACK that is due */
void tcp_target_ack(struct tcp_conn *tc);
/*
 * the last of the peer's operations whose effects are all in memory: what
 * an ACK, or a message riding along, may acknowledge
 */
uint64_t tcp_target_done_upto(const struct tcp_conn *tc);
/*
 * the message waiting for a receive buffer waited too long: refuse it;
 * false when none waits
 */
bool tcp_target_rnr_expired(struct tcp_conn *tc);

#endif /* RPMAD_TCP_OPS_H */
