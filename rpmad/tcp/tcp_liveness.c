// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_liveness.c -- the remote rpmads we have connections with, each
 * with its members, the time it was last heard from and one timer
 *
 * Every eighth of tcp_timeout_ms a remote's timer checks it: silent for
 * seven eighths (three heartbeats missed) and it is gone, with all its
 * connections -- so a silence is known within the timeout; otherwise it
 * gets a heartbeat every quarter, through the first member that can send
 * one. The other end does the same, so either side hears at least that.
 *
 * Silence, a cut network or a frozen host, is a fact about the remote,
 * not about one connection, so the cost of finding it grows with the
 * remote rpmads, not with the connections: 1000 idle connections to one
 * peer cost one heartbeat. What only one socket suffers (its flow dropped
 * by a middlebox) the kernel finds with keepalives and TCP_USER_TIMEOUT
 * (tcp_chan_setup_socket).
 */

#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "tcp/tcp.h"

#define REMOTE_BUCKETS 256

struct tcp_remote {
	struct sockaddr_storage addr;	/* port zeroed: the host */
	uint64_t id;
	uint64_t last_rx_ns;		/* stamped by the members' sockets */
	uint64_t last_beat_ns;
	struct loop_timer tick;
	const struct tcp_liveness_ops *ops;	/* the members' owner */
	struct tcp_member *members;
	unsigned n_members;
	bool ending;			/* members leave while it ends them */
	bool alone;			/* one member's own: never found */
	struct tcp_remote *bucket_next;
};

static const struct transport_env *env; /* the loop, tcp_timeout_ms */
static uint64_t self_id;
static bool self_id_made;

void
tcp_liveness_init(const struct transport_env *e)
{
	env = e;
}
static struct tcp_remote *buckets[REMOTE_BUCKETS];
static unsigned n_remotes;

uint64_t
tcp_liveness_self_id(void)
{
	if (self_id_made)
		return self_id;
	if (getrandom(&self_id, sizeof(self_id), 0) != sizeof(self_id)) {
		struct timespec ts;
		(void) clock_gettime(CLOCK_REALTIME, &ts);
		self_id = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^
			(uint64_t)getpid();
	}
	self_id_made = true;
	return self_id;
}

unsigned
tcp_remotes_count(void)
{
	return n_remotes;
}

/* ------------------------------------------------------------ the table */

/* the host's address alone, so that two sockets of one host compare equal */
static void
host_of(const struct sockaddr_storage *in, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	out->ss_family = in->ss_family;
	if (in->ss_family == AF_INET) {
		((struct sockaddr_in *)out)->sin_addr =
			((const struct sockaddr_in *)in)->sin_addr;
	} else if (in->ss_family == AF_INET6) {
		((struct sockaddr_in6 *)out)->sin6_addr =
			((const struct sockaddr_in6 *)in)->sin6_addr;
		((struct sockaddr_in6 *)out)->sin6_scope_id =
			((const struct sockaddr_in6 *)in)->sin6_scope_id;
	}
}

static unsigned
bucket_of(const struct sockaddr_storage *host, uint64_t id)
{
	const uint8_t *b = (const uint8_t *)host;
	uint64_t h = id * 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < sizeof(*host); i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return (unsigned)(h >> 32) % REMOTE_BUCKETS;
}

static struct tcp_remote **
slot_of(const struct tcp_remote *r)
{
	struct tcp_remote **pp = &buckets[bucket_of(&r->addr, r->id)];
	while (*pp != r)
		pp = &(*pp)->bucket_next;
	return pp;
}

static void
remote_free(struct tcp_remote *r)
{
	loop_timer_cancel(env->loop, &r->tick);
	struct tcp_remote **pp = slot_of(r);
	*pp = r->bucket_next;
	n_remotes--;
	free(r);
}

static void
host_name(const struct tcp_remote *r, char *buf, size_t len)
{
	socklen_t alen = r->addr.ss_family == AF_INET6 ?
		sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	if (getnameinfo((const struct sockaddr *)&r->addr, alen, buf,
			(socklen_t)len, NULL, 0, NI_NUMERICHOST))
		(void) snprintf(buf, len, "?");
}

/* ------------------------------------------------------------ the check */

static uint64_t
timeout_ns(void)
{
	return (uint64_t) env->set.tcp_timeout_ms * 1000000;
}

static void
list_remove(struct tcp_remote *r, struct tcp_member *m)
{
	if (m->prev)
		m->prev->next = m->next;
	else
		r->members = m->next;
	if (m->next)
		m->next->prev = m->prev;
	m->prev = m->next = NULL;
	m->remote = NULL;
	r->n_members--;
}

static void
remote_lost(struct tcp_remote *r)
{
	char host[64];
	host_name(r, host, sizeof(host));
	remote_log(&r->addr, LOG_INFO,
			"tcp: the rpmad at %s was silent for "
			"%u ms: its %u connection(s) are lost",
			host, env->set.tcp_timeout_ms, r->n_members);
	r->ending = true;
	struct tcp_member *m;
	while ((m = r->members) != NULL) {
		list_remove(r, m);
		r->ops->lost(m);
	}
	r->ending = false;
	remote_free(r);
}

static void
remote_tick(struct loop_timer *t)
{
	struct tcp_remote *r = t->arg;
	uint64_t timeout = timeout_ns();
	uint64_t now = loop_now_ns();

	if (now - r->last_rx_ns >= timeout / 8 * 7) {
		remote_lost(r);
		return;
	}
	if (now - r->last_beat_ns >= timeout / 4) {
		r->last_beat_ns = now;
		for (struct tcp_member *m = r->members; m; m = m->next)
			if (r->ops->beat(m) == 0)
				break;
	}
	loop_timer_arm(env->loop, &r->tick, timeout / 8);
}

/* ------------------------------------------------------------ members */

uint64_t *
tcp_remote_join(struct tcp_member *m, const struct sockaddr_storage *addr,
		uint64_t id, bool alone, const struct tcp_liveness_ops *ops)
{
	struct sockaddr_storage host;
	host_of(addr, &host);
	unsigned b = bucket_of(&host, id);
	struct tcp_remote *r = alone ? NULL : buckets[b];
	while (r && (r->alone || r->id != id ||
			memcmp(&r->addr, &host, sizeof(host))))
		r = r->bucket_next;
	uint64_t now = loop_now_ns();
	if (r == NULL) {
		r = calloc(1, sizeof(*r));
		if (r == NULL)
			return NULL;
		r->addr = host;
		r->id = id;
		r->alone = alone;
		r->ops = ops;
		r->last_beat_ns = now;
		r->tick.fn = remote_tick;
		r->tick.arg = r;
		r->bucket_next = buckets[b];
		buckets[b] = r;
		n_remotes++;
		loop_timer_arm(env->loop, &r->tick, timeout_ns() / 8);
	}
	/* a handshake was just heard: a new member proves the remote alive */
	r->last_rx_ns = now;
	m->remote = r;
	m->prev = NULL;
	m->next = r->members;
	if (r->members)
		r->members->prev = m;
	r->members = m;
	r->n_members++;
	return &r->last_rx_ns;
}

void
tcp_remote_leave(struct tcp_member *m)
{
	struct tcp_remote *r = m->remote;
	if (r == NULL)
		return;
	list_remove(r, m);
	if (r->n_members == 0 && !r->ending)
		remote_free(r);
}
