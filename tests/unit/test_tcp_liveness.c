// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_tcp_liveness.c -- the remote rpmads of the software transport and
 * their liveness (rpmad/tcp/tcp_liveness.c), linked straight in
 * with rpmad's real loop: connections to one (host, id) share one remote
 * and one heartbeat however many they are, a silent remote ends all its
 * connections and no other's, and hearing from a remote keeps it.
 */

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "loop/loop.h"
#include "tcp/tcp.h"
#include "th_suite.h"
#include "transport/transport.h"

/* a connection, as far as liveness knows one */
struct fake {
	struct tcp_member m;	/* first: a member is its fake */
	int beats;
	int lost;
	uint64_t lost_ns;
	uint64_t *stamp;
};

static int
fake_beat(struct tcp_member *m)
{
	((struct fake *)m)->beats++;
	return 0;
}

static void
fake_lost(struct tcp_member *m)
{
	struct fake *f = (struct fake *)m;
	ck_assert_ptr_null(m->remote);	/* it left first */
	f->lost++;
	f->lost_ns = loop_now_ns();
	f->stamp = NULL;
}

static const struct tcp_liveness_ops ops = {
	.beat = fake_beat,
	.lost = fake_lost,
};

static struct sockaddr_storage
v4(const char *a, unsigned port)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)port);
	ck_assert_int_eq(inet_pton(AF_INET, a, &in->sin_addr), 1);
	return ss;
}

/* what the transport gives the file: the loop, tcp_timeout_ms */
static struct transport_env env;

static void
setup(void)
{
	env.loop = loop_new();
	ck_assert_ptr_nonnull(env.loop);
	env.set.tcp_timeout_ms = 5000;
	tcp_liveness_init(&env);
}

static void
teardown(void)
{
	loop_delete(env.loop);
	env.loop = NULL;
}

static void
join_as(struct fake *f, const char *host, unsigned port, uint64_t id,
		bool alone)
{
	struct sockaddr_storage ss = v4(host, port);
	memset(f, 0, sizeof(*f));
	f->stamp = tcp_remote_join(&f->m, &ss, id, alone, &ops);
	ck_assert_ptr_nonnull(f->stamp);
}

static void
join(struct fake *f, const char *host, unsigned port, uint64_t id)
{
	join_as(f, host, port, id, false);
}

static void
leave_all(struct fake *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tcp_remote_leave(&f[i].m);
}

#define MANY 1000

START_TEST(one_remote_per_host_and_id)
{
	static struct fake same[MANY];
	for (int i = 0; i < MANY; i++) {
		/* the port does not count: each connection has its own */
		join(&same[i], "10.0.0.1", 40000 + (unsigned)i, 7);
		ck_assert_ptr_eq(same[i].stamp, same[0].stamp);
	}
	ck_assert_uint_eq(tcp_remotes_count(), 1);

	struct fake other_id, other_host;
	join(&other_id, "10.0.0.1", 40000, 8);
	join(&other_host, "10.0.0.2", 40000, 7);
	ck_assert_ptr_ne(other_id.stamp, same[0].stamp);
	ck_assert_ptr_ne(other_host.stamp, same[0].stamp);
	ck_assert_uint_eq(tcp_remotes_count(), 3);

	/* leaving twice is nothing; the last one out frees the remote */
	tcp_remote_leave(&other_id.m);
	tcp_remote_leave(&other_id.m);
	ck_assert_uint_eq(tcp_remotes_count(), 2);
	leave_all(same, MANY - 1);
	ck_assert_uint_eq(tcp_remotes_count(), 2);
	tcp_remote_leave(&same[MANY - 1].m);
	tcp_remote_leave(&other_host.m);
	ck_assert_uint_eq(tcp_remotes_count(), 0);
}
END_TEST

/*
 * A peer of wire version 1 has no id: each of its connections is a remote
 * of its own, found by no other, and leaves no trace in the shared ones.
 */
START_TEST(alone_is_never_shared)
{
	struct fake shared, a, b;
	join(&shared, "10.0.0.1", 40000, 0);
	join_as(&a, "10.0.0.1", 40001, 0, true);
	join_as(&b, "10.0.0.1", 40002, 0, true);
	ck_assert_ptr_ne(a.stamp, shared.stamp);
	ck_assert_ptr_ne(b.stamp, shared.stamp);
	ck_assert_ptr_ne(a.stamp, b.stamp);
	ck_assert_uint_eq(tcp_remotes_count(), 3);
	/* a later shared member still finds the shared one */
	struct fake again;
	join(&again, "10.0.0.1", 40003, 0);
	ck_assert_ptr_eq(again.stamp, shared.stamp);
	tcp_remote_leave(&a.m);
	tcp_remote_leave(&shared.m);
	tcp_remote_leave(&again.m);
	ck_assert_uint_eq(tcp_remotes_count(), 1);
	tcp_remote_leave(&b.m);
	ck_assert_uint_eq(tcp_remotes_count(), 0);
}
END_TEST

/* runs the loop for ms, `talker` (if any) stamping its remote throughout */
static void
run_for(unsigned ms, struct fake *talker)
{
	uint64_t end = loop_now_ns() + (uint64_t)ms * 1000000;
	while (loop_now_ns() < end) {
		if (talker && talker->stamp)
			*talker->stamp = loop_now_ns();
		ck_assert_int_eq(loop_run_once(env.loop, 2), 0);
	}
}

/*
 * Two remotes of MANY connections each; one keeps talking, the other
 * falls silent: every connection of the silent one ends once, after 7/8
 * of the timeout and not before, none of the other's does, and the
 * heartbeats go one per remote and quarter timeout, not one per
 * connection.
 */
START_TEST(silent_remote_ends_its_own)
{
	const unsigned timeout_ms = 200;
	env.set.tcp_timeout_ms = timeout_ms;
	static struct fake quiet[MANY], talking[MANY];
	uint64_t t0 = loop_now_ns();
	for (int i = 0; i < MANY; i++) {
		join(&quiet[i], "10.0.0.1", 1, 1);
		join(&talking[i], "10.0.0.2", 1, 2);
	}
	const unsigned runs = 4;	/* timeouts */
	run_for(runs * timeout_ms, &talking[0]);

	int quiet_beats = 0, talking_beats = 0;
	for (int i = 0; i < MANY; i++) {
		ck_assert_int_eq(quiet[i].lost, 1);
		ck_assert_ptr_null(quiet[i].m.remote);
		ck_assert_uint_ge(quiet[i].lost_ns - t0,
				(uint64_t)timeout_ms * 1000000 / 8 * 7);
		ck_assert_int_eq(talking[i].lost, 0);
		ck_assert_ptr_nonnull(talking[i].m.remote);
		quiet_beats += quiet[i].beats;
		talking_beats += talking[i].beats;
	}
	/*
	 * a beat every quarter: 3 before the end, a timeout 4; a loaded host
	 * that runs the loop late may let one or two more through before
	 * the end is seen, never one per connection (MANY)
	 */
	ck_assert_int_le(quiet_beats, 5);
	ck_assert_int_ge(talking_beats, 1);
	ck_assert_int_le(talking_beats, (int)(4 * runs + 1));
	ck_assert_uint_eq(tcp_remotes_count(), 1);
	leave_all(talking, MANY);
	ck_assert_uint_eq(tcp_remotes_count(), 0);
}
END_TEST

/* A connection that joins proves its remote alive: the clock restarts. */
START_TEST(join_restarts_the_clock)
{
	/* alone, first would end at 7/8 of it: before the check below */
	const unsigned timeout_ms = 400;
	env.set.tcp_timeout_ms = timeout_ms;
	struct fake first, second;
	join(&first, "10.0.0.3", 1, 3);
	run_for(timeout_ms / 2, NULL);
	join(&second, "10.0.0.3", 2, 3);
	run_for(timeout_ms / 2, NULL);
	ck_assert_int_eq(first.lost, 0);
	ck_assert_int_eq(second.lost, 0);
	run_for(2 * timeout_ms, NULL);
	ck_assert_int_eq(first.lost, 1);
	ck_assert_int_eq(second.lost, 1);
	ck_assert_uint_eq(tcp_remotes_count(), 0);
}
END_TEST

START_TEST(self_id_is_stable)
{
	uint64_t id = tcp_liveness_self_id();
	ck_assert_uint_eq(tcp_liveness_self_id(), id);
}
END_TEST

int
main(void)
{
	const TTest *const tc_remotes[] = { one_remote_per_host_and_id,
		alone_is_never_shared, silent_remote_ends_its_own,
		join_restarts_the_clock, self_id_is_stable, NULL };
	const struct th_tcase tcases[] = {
		{ "remotes", .tests = tc_remotes, .timeout = 60, .setup = setup,
				.teardown = teardown },
	};
	return check_run(th_suite("tcp liveness", tcases, TH_N(tcases)),
			CK_ENV);
}
