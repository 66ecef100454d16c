// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_batch.c -- a channel's batches of bytes for a client's own memory:
 * gathering, the one with the client's thread, slices of big payloads,
 * and reading on once they are back (tcp.h)
 */

#include <errno.h>
#include <stddef.h>

#include "tcp/tcp.h"

/* the i-th batch out, from the oldest */
static struct tcp_batch_out *
out_at(struct tcp_chan *ch, unsigned i)
{
	return &ch->rx_out[(ch->rx_out_first + i) % TCP_BATCHES_OUT];
}

bool
tcp_batch_pending(const struct tcp_chan *ch)
{
	return ch->rx_out_n > 0 ||
			(ch->rx_batch && as_batch_size(ch->rx_batch) > 0);
}

struct as_batch *
tcp_batch_busy(const struct tcp_chan *ch)
{
	return ch->rx_out_n ? ch->rx_out[ch->rx_out_first].b : NULL;
}

struct as_batch *
tcp_batch_gathering(const struct tcp_chan *ch)
{
	return ch->rx_batch && as_batch_size(ch->rx_batch) > 0 ?
		ch->rx_batch : NULL;
}

struct as_batch *
tcp_batch_for(struct tcp_chan *ch, struct mr *mr)
{
	if (ch->rx_batch)
		return ch->rx_batch;
	ch->rx_batch = as_batch_new(mr_addrspace(mr));
	if (ch->rx_batch == NULL)
		return NULL;
	if (ch->rx_stream == 0)
		ch->rx_stream = as_stream_new();
	as_batch_set_stream(ch->rx_batch, ch->rx_stream);
	return ch->rx_batch;
}

/* Room in the batch for the next slice of the current frame's payload. */
static int
slice(struct tcp_chan *ch)
{
	uint32_t n = ch->cur_payload - ch->got;
	if (n > TCP_BATCH_SLICE)
		n = TCP_BATCH_SLICE;
	struct as_batch *b = tcp_batch_for(ch, ch->dst_mr);
	uint8_t *p = b ? as_batch_write_space(b, ch->dst_addr + ch->got, n,
			ch->cur.seq) : NULL;
	if (p == NULL)
		return -ENOMEM;
	ch->batch_dst = p;
	ch->batch_start = ch->got;
	ch->batch_end = ch->got + n;
	return 0;
}

int
tcp_batch_sink(struct tcp_chan *ch, struct mr *mr, uint64_t addr)
{
	ch->dst_mr = mr;
	ch->dst_addr = addr;
	if (slice(ch))
		return -ENOMEM;
	ch->sink = SINK_BATCH;
	return 0;
}

static void done(struct as_batch *b, enum as_status status, void *arg);

/* Whether a payload is still filling its slice: the batch waits for it. */
static bool
filling(const struct tcp_chan *ch)
{
	return ch->in_frame && ch->sink == SINK_BATCH &&
		ch->got < ch->batch_end;
}

/*
 * Whether the gathered batch may go now: the first always; the next ones
 * only where they land after the ones before (as_batch_can_follow).
 */
static bool
may_go(struct tcp_chan *ch)
{
	if (ch->rx_out_n == 0)
		return true;
	return ch->rx_out_n < TCP_BATCHES_OUT &&
			as_batch_can_follow(ch->rx_batch,
					out_at(ch, ch->rx_out_n - 1)->b);
}

void
tcp_batch_flush(struct tcp_chan *ch)
{
	if (filling(ch) || ch->rx_batch == NULL ||
			as_batch_size(ch->rx_batch) == 0 || !may_go(ch))
		return;
	struct tcp_batch_out *o = out_at(ch, ch->rx_out_n++);
	*o = (struct tcp_batch_out){ .b = ch->rx_batch };
	ch->rx_batch = NULL;
	as_batch_submit(o->b, done, ch);
}

/* Reading stops until the batches are back (done() reads on). */
static void
stop_reading(struct tcp_chan *ch)
{
	ch->batch_paused = true;
	tcp_chan_pause(ch, true);
}

int
tcp_batch_room(struct tcp_chan *ch)
{
	/* the slice filled goes to the thread, or once one is back */
	tcp_batch_flush(ch);
	if (tcp_batch_gathering(ch)) {
		stop_reading(ch);
		return 1;
	}
	if (slice(ch) == 0)
		return 0;
	/* rpmad cannot hold the bytes: the role refuses the frame at its end */
	ch->sink = SINK_DISCARD;
	ch->rx_nomem = true;
	return 0;
}

int
tcp_batch_wait(struct tcp_chan *ch)
{
	tcp_batch_flush(ch);
	stop_reading(ch);
	return 1;
}

void
tcp_batch_end_waits(struct tcp_chan *ch)
{
	ch->rx_end_pending = true;
	stop_reading(ch);
	tcp_batch_flush(ch);
}

/*
 * Lets go of the batches out: those the client's thread has not taken
 * never run (their frames are refused: no byte of them may land), and it
 * frees what it is still in.
 */
static void
forget_out(struct tcp_chan *ch)
{
	for (unsigned i = ch->rx_out_n; i-- > 0;) {
		struct tcp_batch_out *o = out_at(ch, i);
		if (o->back)
			as_batch_free(o->b);
		else
			as_batch_withdraw(o->b);
		o->b = NULL;
	}
	ch->rx_out_first = ch->rx_out_n = 0;
}

void
tcp_batch_discard(struct tcp_chan *ch)
{
	as_batch_free(ch->rx_batch);
	ch->rx_batch = NULL;
	forget_out(ch);
	ch->rx_stream = 0; /* what comes after the failure is not halted */
	if (ch->in_frame && ch->sink == SINK_BATCH)
		ch->sink = SINK_DISCARD;
}

/*
 * A batch is back. In the order they went: the role hears how each went
 * (a failure forgets those after it); the next goes; a frame whose end
 * waited ends once all its bytes are in; answers that waited go; and
 * reading goes on.
 */
static void
done(struct as_batch *b, enum as_status status, void *arg)
{
	struct tcp_chan *ch = arg;
	unsigned i = 0;
	while (i < ch->rx_out_n && out_at(ch, i)->b != b)
		i++;
	if (i == ch->rx_out_n)
		return; /* forgotten: cancelled batches never come */
	out_at(ch, i)->back = true;
	out_at(ch, i)->status = status;
	if (i > 0)
		return; /* it waits for the ones before it */
	while (ch->rx_out_n && out_at(ch, 0)->back) {
		struct tcp_batch_out o = *out_at(ch, 0);
		out_at(ch, 0)->b = NULL;
		ch->rx_out_first = (ch->rx_out_first + 1) % TCP_BATCHES_OUT;
		ch->rx_out_n--;
		ch->rx_role->back(ch, o.b, o.status);
		as_batch_free(o.b);
	}
	tcp_batch_flush(ch);
	if (ch->rx_end_pending && ch->rx_out_n == 0) {
		ch->rx_end_pending = false;
		ch->rx_role->end(ch);
	}
	ch->rx_role->after(ch);
	if (ch->fd >= 0 && ch->batch_paused && !ch->rx_end_pending &&
			!ch->throttled) {
		ch->batch_paused = false;
		tcp_chan_pause(ch, false);
		ch->rx_resume(ch);
	}
}

void
tcp_batch_start(struct tcp_chan *ch, const struct tcp_batch_role *role,
		void (*resume)(struct tcp_chan *ch))
{
	ch->rx_role = role;
	ch->rx_resume = resume;
}

void
tcp_batch_forget(struct tcp_chan *ch)
{
	forget_out(ch);
	as_batch_free(ch->rx_batch);
	ch->rx_batch = NULL;
	ch->rx_stream = 0;
	ch->rx_end_pending = ch->rx_deferred = ch->rx_nomem = false;
	ch->batch_paused = false;
}
