// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_chan.c -- one TCP socket of the software transport: its options,
 * its queue of frames to send (gathered into writev), its staging buffer,
 * and the list of sockets with frames queued since the last flush
 */

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tcp/tcp.h"

#define IOV_BATCH 64
/* payload bytes read out of a client's memory per writev */
#define TX_STAGE_SIZE FAIRQ_SLICE

int
tcp_chan_setup_socket(int fd)
{
	int one = 1;
	(void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	/*
	 * A peer that vanishes without a FIN (cut network, dead host) is
	 * found by keepalives within tcp_timeout_ms; unacknowledged data
	 * times out after the same time.
	 */
	unsigned timeout_ms = tcp_env->set.tcp_timeout_ms;
	int idle = (int)(timeout_ms / 3000);
	if (idle < 1)
		idle = 1;
	int intvl = 1;
	int cnt = (int)((timeout_ms / 1000 - (unsigned)idle) / (unsigned)intvl);
	if (cnt < 1)
		cnt = 1;
	(void) setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	(void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	(void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl,
			sizeof(intvl));
	(void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	(void) setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout_ms,
			sizeof(timeout_ms));
	return 0;
}

void
tcp_chan_init(struct tcp_chan *ch, struct tcp_conn *tc, int fd,
		loop_fd_fn *fn, fairq_run_fn *tx_turn, fairq_run_fn *rx_turn)
{
	ch->fd = fd;
	ch->tc = tc;
	ch->watch.fd = fd;
	ch->watch.fn = fn;
	ch->watch.arg = ch;
	ch->events = 0;
	ch->heard = NULL;
	ch->tls = NULL;
	ch->rx_queued = false;
	fairq_flow_init(&ch->tx_flow, tx_turn, ch, tc, NULL);
	fairq_flow_init(&ch->rx_flow, rx_turn, ch, tc, NULL);
}

void
tcp_chan_move(struct tcp_chan *dst, struct tcp_conn *tc, struct tcp_chan *src)
{
	/* the socket keeps its handler; only its owner changes */
	loop_del(tcp_env->loop, &src->watch);
	fairq_cancel(&src->tx_flow);
	fairq_cancel(&src->rx_flow);
	tcp_chan_init(dst, tc, src->fd, src->watch.fn, src->tx_flow.run,
			src->rx_flow.run);
	dst->rbuf = src->rbuf;
	dst->rpos = src->rpos;
	dst->rlen = src->rlen;
	dst->tls = src->tls;
	tcp_tls_move(dst);
	src->rbuf = NULL;
	src->tls = NULL;
	src->fd = -1;
}

static void
set_events(struct tcp_chan *ch, uint32_t events)
{
	if (ch->fd < 0 || ch->events == events)
		return;
	if (!ch->watch.added)
		(void) loop_add(tcp_env->loop, &ch->watch, events);
	else
		(void) loop_mod(tcp_env->loop, &ch->watch, events);
	ch->events = events;
}

static uint32_t
wanted_events(const struct tcp_chan *ch)
{
	/*
	 * Readable stays watched while a reading turn is queued (the events
	 * are ignored then): two epoll_ctl per wake-up cost more than that.
	 * Writable is watched only once a turn found the socket full.
	 */
	uint32_t ev = EPOLLRDHUP;
	if (!ch->paused)
		ev |= EPOLLIN;
	if (ch->tx_head && !ch->tx_flow.queued)
		ev |= EPOLLOUT;
	return ev;
}

void
tcp_chan_set_events(struct tcp_chan *ch, uint32_t events)
{
	set_events(ch, events);
}

int
tcp_chan_local_addr(const struct tcp_chan *ch, struct sockaddr_storage *ss,
		socklen_t *len)
{
	return getsockname(tcp_tls_net_fd(ch), (struct sockaddr *)ss, len) ?
		-errno : 0;
}

int
tcp_chan_peer_addr(const struct tcp_chan *ch, struct sockaddr_storage *ss,
		socklen_t *len)
{
	return getpeername(tcp_tls_net_fd(ch), (struct sockaddr *)ss, len) ?
		-errno : 0;
}

void
tcp_chan_pause(struct tcp_chan *ch, bool paused)
{
	ch->paused = paused;
	set_events(ch, wanted_events(ch));
}

static struct tx_item *
item_get(struct tcp_chan *ch)
{
	struct tx_item *it = *ch->spare;
	if (it) {
		*ch->spare = it->next;
	} else {
		it = malloc(sizeof(*it));
		if (it == NULL)
			return NULL;
	}
	it->next = NULL;
	it->head_len = 0;
	it->mr = NULL;
	it->addr = 0;
	it->buf = NULL;
	it->fetch = NULL;
	it->fetched = NULL;
	it->fetch_off = it->fetch_len = 0;
	it->fetch_busy = it->fetch_lost = false;
	it->payload_len = 0;
	it->staged_only = false;
	it->sent = 0;
	return it;
}

static void
item_put(struct tcp_chan *ch, struct tx_item *it)
{
	if (it->mr)
		mr_put(it->mr);
	it->mr = NULL;
	free(it->buf);
	it->buf = NULL;
	if (it->fetch_busy)
		as_batch_cancel(it->fetch);	/* freed when it is back */
	else
		as_batch_free(it->fetch);
	it->fetch = NULL;
	it->fetch_busy = false;
	if (ch->stage_item == it)
		ch->stage_item = NULL;
	it->next = *ch->spare;
	*ch->spare = it;
}

int
tcp_chan_send(struct tcp_chan *ch, const struct tcp_frame *f,
		const void *inline_data, size_t inline_len, struct mr *mr,
		uint64_t addr)
{
	if (ch->fd < 0)
		return -ENOTCONN;
	struct tx_item *it = item_get(ch);
	if (it == NULL)
		return -ENOMEM;
	tcp_frame_encode(f, it->head);
	it->head_len = TCP_FRAME_SIZE;
	it->type = f->type;
	it->seq = f->seq;
	if (inline_len) {
		memcpy(it->head + TCP_FRAME_SIZE, inline_data, inline_len);
		it->head_len += inline_len;
	}
	if (mr && f->length > inline_len) {
		it->mr = mr;
		mr_get(mr);
		it->addr = addr;
		it->payload_len = f->length - inline_len;
	}
	if (ch->tx_tail)
		ch->tx_tail->next = it;
	else
		ch->tx_head = it;
	ch->tx_tail = it;
	ch->tx_count++;
	return 0;
}

int
tcp_chan_send_copy(struct tcp_chan *ch, const struct tcp_frame *f,
		const void *data, size_t len)
{
	if (ch->fd < 0)
		return -ENOTCONN;
	struct tx_item *it = item_get(ch);
	if (it == NULL)
		return -ENOMEM;
	it->buf = len ? malloc(len) : NULL;
	if (len && it->buf == NULL) {
		item_put(ch, it);
		return -ENOMEM;
	}
	memcpy(it->buf, data, len);
	tcp_frame_encode(f, it->head);
	it->head_len = TCP_FRAME_SIZE;
	it->type = f->type;
	it->seq = f->seq;
	it->payload_len = len;
	if (ch->tx_tail)
		ch->tx_tail->next = it;
	else
		ch->tx_head = it;
	ch->tx_tail = it;
	ch->tx_count++;
	return 0;
}

bool
tcp_chan_pending(const struct tcp_chan *ch)
{
	return ch->fd >= 0 && ch->tx_head != NULL;
}

/* what one read of the client's thread fetches of a payload at most */
#define FETCH_SLICE (1u << 20)

/* Whether the payload of `it` is (partly) in the client's own memory. */
static bool
needs_fetch(const struct tx_item *it)
{
	return it->mr && !it->buf &&
		mr_io_in_process(it->mr, it->addr, it->payload_len);
}

static void fetch_done(struct as_batch *b, enum as_status status, void *arg);

/*
 * The client's thread reads the payload's bytes from `off` on (a slice):
 * 0, or -ENOMEM. The channel sends on when they are in (fetch_done).
 */
static int
fetch_start(struct tcp_chan *ch, struct tx_item *it, size_t off)
{
	as_batch_free(it->fetch);
	it->fetch = as_batch_new(mr_addrspace(it->mr));
	size_t n = it->payload_len - off;
	if (n > FETCH_SLICE)
		n = FETCH_SLICE;
	it->fetched = it->fetch ? as_batch_read(it->fetch, it->addr + off, n,
			it->seq) : NULL;
	if (it->fetched == NULL)
		return -ENOMEM;
	it->fetch_off = off;
	it->fetch_len = n;
	it->fetch_busy = true;
	/* the item's owner is this channel: fetch_done finds it by the item */
	as_batch_submit(it->fetch, fetch_done, ch);
	return 0;
}

static void
fetch_done(struct as_batch *b, enum as_status status, void *arg)
{
	struct tcp_chan *ch = arg;
	struct tx_item *it = ch->tx_head;
	while (it && it->fetch != b)
		it = it->next;
	if (it == NULL)
		return;	/* never: a dropped item cancels its fetch */
	it->fetch_busy = false;
	if (status != AS_OK) {
		bool unsent = it->sent == 0;
		it->fetch_lost = true;
		/* what went missing goes as zeros, if the frame goes at all */
		if (status != AS_LOST)
			memset((uint8_t *)it->fetched, 0, it->fetch_len);
		if (ch->fetch_role)
			ch->fetch_role->lost(ch, it, unsent);
	} else if (it->fetch_off + it->fetch_len == it->payload_len &&
			ch->fetch_role && ch->fetch_role->fetched) {
		ch->fetch_role->fetched(ch, it);
	}
	tcp_chan_mark_dirty(ch);
}

/*
 * The payload of `it` from payload offset `off` on, for writev: rpmad's
 * own mapping of it where there is one; bytes of the client's own memory
 * as its thread read them; else (a mapping with a lost page) up to
 * TX_STAGE_SIZE bytes read into the channel's staging buffer (*staged:
 * which then ends the batch). Returns the length, 0 while the client's
 * thread reads them, -ENOMEM when no buffer can be had.
 */
static ssize_t
payload_iov(struct tcp_chan *ch, struct tx_item *it, size_t off,
		struct iovec *iov, bool *staged)
{
	size_t want = it->payload_len - off;
	*staged = false;
	if (it->buf) {
		iov->iov_base = it->buf + off;
		iov->iov_len = want;
		return (ssize_t)want;
	}
	void *p = it->staged_only ? NULL :
		mr_io_direct(it->mr, it->addr + off, want);
	if (p) {
		iov->iov_base = p;
		iov->iov_len = want;
		return (ssize_t)want;
	}
	if (needs_fetch(it)) {
		if (it->fetch_busy)
			return 0;
		if (it->fetch == NULL || off < it->fetch_off ||
				off >= it->fetch_off + it->fetch_len)
			return fetch_start(ch, it, off) ? -ENOMEM : 0;
		iov->iov_base = (uint8_t *)it->fetched + (off - it->fetch_off);
		iov->iov_len = it->fetch_len - (off - it->fetch_off);
		return (ssize_t)iov->iov_len;
	}
	*staged = true;
	if (ch->stage == NULL && (ch->stage = malloc(TX_STAGE_SIZE)) == NULL)
		return -ENOMEM;
	if (ch->stage_item != it || off < ch->stage_off ||
			off >= ch->stage_off + ch->stage_len) {
		size_t n = want < TX_STAGE_SIZE ? want : TX_STAGE_SIZE;
		mr_io_read(it->mr, it->addr + off, ch->stage, n);
		ch->stage_item = it;
		ch->stage_off = off;
		ch->stage_len = n;
	}
	iov->iov_base = ch->stage + (off - ch->stage_off);
	iov->iov_len = ch->stage_len - (off - ch->stage_off);
	return (ssize_t)iov->iov_len;
}

/*
 * Gathers the queued frames into iov: how many entries (0: nothing can go
 * now, the client's thread reading a payload), or -ENOMEM when a payload
 * cannot be staged. *direct: some payload is read straight from a mapping.
 * A frame whose payload is in the client's own memory does not begin to
 * go before its first slice is read (a frame whose bytes cannot be read
 * is then not sent at all).
 */
static int
gather(struct tcp_chan *ch, struct iovec iov[IOV_BATCH], size_t budget,
		bool *direct)
{
	int n = 0;
	size_t total = 0;
	*direct = false;
	for (struct tx_item *it = ch->tx_head; it && n < IOV_BATCH - 1 &&
			total < budget; it = it->next) {
		size_t off = it->sent;
		if (off == 0 && needs_fetch(it) && (it->fetch == NULL ||
				it->fetch_busy || it->fetch_off != 0)) {
			if (it->fetch == NULL && fetch_start(ch, it, 0))
				return -ENOMEM;
			break;	/* it goes once its first slice is in */
		}
		if (off < it->head_len) {
			iov[n].iov_base = it->head + off;
			iov[n].iov_len = it->head_len - off;
			total += iov[n].iov_len;
			n++;
			off = it->head_len;
		}
		if (off == it->head_len + it->payload_len || total >= budget)
			continue;
		bool staged;
		ssize_t got = payload_iov(ch, it, off - it->head_len, &iov[n],
				&staged);
		if (got < 0)
			return -ENOMEM;
		if (got == 0)
			break;	/* the client's thread is reading it */
		/* a slice of a big payload, not all of it at once */
		if (iov[n].iov_len > budget - total)
			iov[n].iov_len = budget - total;
		total += iov[n].iov_len;
		bool whole = off + iov[n].iov_len == it->head_len +
			it->payload_len;
		n++;
		if (staged)
			break;	/* the staging buffer serves one frame */
		*direct = true;
		if (!whole)
			break;	/* the next frame goes after all of this one */
	}
	return n;
}

void
tcp_chan_drop(struct tcp_chan *ch, struct tx_item *it, bool later)
{
	struct tx_item **p = &ch->tx_head, *prev = NULL;
	while (*p && *p != it) {
		prev = *p;
		p = &(*p)->next;
	}
	while (*p) {
		struct tx_item *x = *p;
		/* set-up and tear-down frames, and what has begun, still go */
		if ((x != it && !later) || x->sent > 0 || x->type < TF_WRITE) {
			prev = x;
			p = &x->next;
			continue;
		}
		*p = x->next;
		ch->tx_count--;
		item_put(ch, x);
	}
	ch->tx_tail = prev;
}

int
tcp_chan_flush(struct tcp_chan *ch)
{
	size_t sent;
	unsigned frames;
	int ret;
	while ((ret = tcp_chan_send_some(ch, SIZE_MAX, &sent, &frames)) > 0)
		;
	return ret;
}

int
tcp_chan_send_some(struct tcp_chan *ch, size_t budget, size_t *sent,
		unsigned *frames)
{
	*sent = 0;
	*frames = 0;
	while (ch->fd >= 0 && ch->tx_head) {
		if (*sent >= budget)
			return 1;
		struct iovec iov[IOV_BATCH];
		bool direct;
		int n = gather(ch, iov, budget - *sent, &direct);
		if (n < 0) {
			log_err("tcp: out of memory staging a payload");
			return -ENOMEM;
		}
		if (n == 0)
			break;	/* the client's thread reads a payload */
		ssize_t w = writev(ch->fd, iov, n);
		if (w < 0) {
			int e = errno;
			if (e == EINTR)
				continue;
			if (e == EAGAIN || e == EWOULDBLOCK)
				break;
			if (e == EFAULT && direct) {
				/*
				 * a page of a mapped file is gone: these
				 * frames go through mr_io_read (zeros for it)
				 */
				for (struct tx_item *it = ch->tx_head; it;
						it = it->next)
					it->staged_only = true;
				continue;
			}
			/* the connection's end says it (remote: rate-limited) */
			tcp_conn_log(ch->tc, LOG_DEBUG, "tcp: send: %s",
					strerror(e));
			set_events(ch, wanted_events(ch));
			return -e;
		}
		size_t left = (size_t)w;
		*sent += left;
		while (left > 0 && ch->tx_head) {
			struct tx_item *it = ch->tx_head;
			size_t total = it->head_len + it->payload_len;
			size_t take = total - it->sent;
			if (take > left)
				take = left;
			it->sent += take;
			left -= take;
			if (it->sent == total) {
				ch->tx_head = it->next;
				if (ch->tx_head == NULL)
					ch->tx_tail = NULL;
				ch->tx_count--;
				(*frames)++;
				item_put(ch, it);
			}
		}
	}
	if (ch->tx_head == NULL) {
		/* nothing staged waits to be sent: no buffer kept idle */
		free(ch->stage);
		ch->stage = NULL;
	}
	set_events(ch, wanted_events(ch));
	return 0;
}

long
tcp_chan_fill(struct tcp_chan *ch)
{
	if (ch->rbuf == NULL) {
		ch->rbuf = malloc(TCP_RBUF_SIZE);
		if (ch->rbuf == NULL)
			return -ENOMEM;
	}
	if (ch->rpos > 0) {
		memmove(ch->rbuf, ch->rbuf + ch->rpos, ch->rlen - ch->rpos);
		ch->rlen -= ch->rpos;
		ch->rpos = 0;
	}
	if (ch->rlen == TCP_RBUF_SIZE)
		return -ENOBUFS;
	ssize_t n;
	do {
		n = recv(ch->fd, ch->rbuf + ch->rlen, TCP_RBUF_SIZE - ch->rlen,
				0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	ch->rlen += (size_t)n;
	if (n > 0)
		tcp_chan_heard(ch);
	{
		int one = 1;
		(void) setsockopt(ch->fd, IPPROTO_TCP, TCP_QUICKACK, &one,
				sizeof(one));
	}
	return n;
}

void
tcp_chan_close(struct tcp_chan *ch, bool abort)
{
	tcp_tls_chan_close(ch, abort);
	if (ch->fd >= 0) {
		loop_del(tcp_env->loop, &ch->watch);
		if (abort) {
			/* a reset tells the peer at once that we are gone */
			struct linger lg = { .l_onoff = 1, .l_linger = 0 };
			(void) setsockopt(ch->fd, SOL_SOCKET, SO_LINGER, &lg,
					sizeof(lg));
		}
		(void) close(ch->fd);
		ch->fd = -1;
	}
	fairq_cancel(&ch->tx_flow);
	fairq_cancel(&ch->rx_flow);
	ch->rx_queued = false;
	while (ch->tx_head) {
		struct tx_item *it = ch->tx_head;
		ch->tx_head = it->next;
		item_put(ch, it);
	}
	ch->tx_tail = NULL;
	ch->tx_count = 0;
	free(ch->stage);
	ch->stage = NULL;
	free(ch->rbuf);
	ch->rbuf = NULL;
	ch->rpos = ch->rlen = 0;
}

void
tcp_chan_mark_dirty(struct tcp_chan *ch)
{
	if (ch->fd < 0)
		return;
	fairq_wake(&ch->tx_flow);
	set_events(ch, wanted_events(ch));
}

void
tcp_chan_forget_dirty(struct tcp_chan *ch)
{
	fairq_cancel(&ch->tx_flow);
}

void
tcp_chan_tx_due(struct tcp_chan *ch)
{
	tcp_chan_mark_dirty(ch);
}

void
tcp_chan_rx_due(struct tcp_chan *ch)
{
	if (ch->fd < 0)
		return;
	ch->rx_queued = true;
	fairq_wake(&ch->rx_flow);
}

void
tcp_chan_rx_done(struct tcp_chan *ch, bool more)
{
	/* more: the arbiter keeps the turn queued */
	ch->rx_queued = more && ch->fd >= 0 && !ch->paused;
}
