// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_fairq.c -- the data path's arbiter (rpmad/core/fairq.c), linked
 * straight in: flows of made-up work, rounds run by hand
 */

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "loop/fairq.h"
#include "loop/loop.h"
#include "th_suite.h"

/* fairq_init's poller and kicks are not needed: the tests run rounds */
void
loop_poller_add(struct loop *loop, struct loop_poller *p)
{
	(void) loop;
	(void) p;
}

void
loop_kick(struct loop *loop)
{
	(void) loop;
}

/* a clock the tests move, and the one timer a capped tenant arms */
static uint64_t fake_now;
static struct loop_timer *armed;

uint64_t
loop_now_ns(void)
{
	return fake_now;
}

void
loop_timer_arm(struct loop *loop, struct loop_timer *t, uint64_t in_ns)
{
	(void) loop;
	t->deadline_ns = fake_now + in_ns;
	t->armed = true;
	armed = t;
}

void
loop_timer_cancel(struct loop *loop, struct loop_timer *t)
{
	(void) loop;
	t->armed = false;
	if (armed == t)
		armed = NULL;
}

/* What happened, in order: which flow had a turn, and when one finished. */
#define LOG_MAX 4096
static char events[LOG_MAX];
static size_t n_events;

/* A flow with `left` bytes of work, done at most a budget at a time. */
struct job {
	struct fairq_flow flow;
	char name;		/* in the events: lower case a turn, upper done */
	size_t left;		/* SIZE_MAX: endless */
	size_t moved;
	bool cancel_in_turn;	/* its object goes away in its next turn */
	struct job *wakes;	/* one it gives 8 bytes of work in its turns */
	uint64_t ns_per_kib;	/* the time its bytes take (on the fake clock) */
	uint64_t ns_per_turn;	/* and the time a turn takes besides */
	size_t most_per_turn;	/* 0: its budget */
	size_t budgets[64];	/* the budgets of its first turns */
	size_t last_budget;
	unsigned turns;
};

static size_t
job_turn(struct fairq_flow *f, size_t budget, bool *more)
{
	struct job *j = f->arg;
	struct fairq_tenant *t = f->tenant;
	size_t n = j->left < budget ? j->left : budget;
	if (j->most_per_turn && n > j->most_per_turn)
		n = j->most_per_turn;
	if (j->turns < sizeof(j->budgets) / sizeof(j->budgets[0]))
		j->budgets[j->turns] = budget;
	j->last_budget = budget;
	j->turns++;
	fake_now += n / 1024 * j->ns_per_kib + j->ns_per_turn;
	if (j->left != SIZE_MAX)
		j->left -= n;
	j->moved += n;
	ck_assert_uint_lt(n_events, LOG_MAX);
	events[n_events++] = j->name;
	*more = j->left > 0;
	unsigned ops = 0;
	if (j->left == 0) {
		events[n_events++] = (char)(j->name - 'a' + 'A');
		ops = 1;
	}
	if (j->wakes) {
		j->wakes->left += 8;
		fairq_wake(&j->wakes->flow);
	}
	if (j->cancel_in_turn) {
		/* as a connection that ended in its turn: never touched again */
		memset(j, 0xa5, sizeof(*j));
		*more = false;
	}
	return fairq_charge(t, n, ops);
}

static void
job_init(struct job *j, char name, size_t left, struct fairq_tenant *t)
{
	memset(j, 0, sizeof(*j));
	j->name = name;
	j->left = left;
	fairq_flow_init(&j->flow, job_turn, j, j, t);
}

static void
setup(void)
{
	n_events = 0;
	memset(events, 0, sizeof(events));
}

/* Rounds until nothing has work (bounded). */
static void
run_all(void)
{
	for (int i = 0; i < 100000 && fairq_busy(); i++)
		(void) fairq_round();
	ck_assert(!fairq_busy());
}

/*
 * Two connections queued, a big copy and a small write: the small one
 * finishes after one slice of the big one, which goes on after it.
 */
START_TEST(test_small_between_slices)
{
	struct fairq_tenant t1, t2;
	fairq_tenant_init(&t1, 0);
	fairq_tenant_init(&t2, 0);
	struct job big, small;
	job_init(&big, 'b', 1u << 20, &t1);
	job_init(&small, 's', 8, &t2);
	fairq_wake(&big.flow);
	fairq_wake(&small.flow);
	run_all();
	ck_assert_uint_eq(big.moved, 1u << 20);
	ck_assert_str_eq(events, "bsSbbbbbbbbbbbbbbbB");
	ck_assert_uint_eq(t1.use.bytes, 1u << 20);
	ck_assert_uint_eq(t1.use.ops, 1);
	ck_assert_uint_eq(t1.use.slices, 16);
	ck_assert_uint_eq(t2.use.bytes, 8);
	fairq_tenant_fini(&t1);
	fairq_tenant_fini(&t2);
}
END_TEST

/* Within one tenant its flows alternate slice by slice, too. */
START_TEST(test_flows_of_a_tenant_alternate)
{
	struct fairq_tenant t;
	fairq_tenant_init(&t, 0);
	struct job a, b, c;
	job_init(&a, 'a', 3 * FAIRQ_SLICE, &t);
	job_init(&b, 'b', 2 * FAIRQ_SLICE, &t);
	job_init(&c, 'c', 100, &t);
	fairq_wake(&a.flow);
	fairq_wake(&b.flow);
	fairq_wake(&c.flow);
	run_all();
	ck_assert_str_eq(events, "abcCabBaA");
	fairq_tenant_fini(&t);
}
END_TEST

/* Under contention the bytes follow the weights: 3:1, and 1:1:2. */
START_TEST(test_weights)
{
	struct fairq_tenant heavy, light;
	fairq_tenant_init(&heavy, 3);
	fairq_tenant_init(&light, 1);
	struct job h, l;
	job_init(&h, 'h', SIZE_MAX, &heavy);
	job_init(&l, 'l', SIZE_MAX, &light);
	fairq_wake(&h.flow);
	fairq_wake(&l.flow);
	ck_assert_uint_eq(fairq_active_weight(), 4);
	for (int i = 0; i < 100; i++)
		(void) fairq_round();
	ck_assert_uint_eq(h.moved, 300u * FAIRQ_SLICE);
	ck_assert_uint_eq(l.moved, 100u * FAIRQ_SLICE);
	/* a weight changes from the next round on */
	fairq_tenant_set_weight(&light, 2);
	ck_assert_uint_eq(fairq_active_weight(), 5);
	h.moved = l.moved = 0;
	for (int i = 0; i < 100; i++)
		(void) fairq_round();
	ck_assert_uint_eq(h.moved, 300u * FAIRQ_SLICE);
	ck_assert_uint_eq(l.moved, 200u * FAIRQ_SLICE);
	/* out of range: the default, and the most */
	fairq_tenant_set_weight(&light, 0);
	ck_assert_uint_eq(light.weight, FAIRQ_WEIGHT_DEFAULT);
	fairq_tenant_set_weight(&light, 100000);
	ck_assert_uint_eq(light.weight, FAIRQ_WEIGHT_MAX);
	fairq_cancel(&h.flow);
	fairq_cancel(&l.flow);
	ck_assert(!fairq_busy());
	ck_assert_uint_eq(fairq_active_weight(), 0);
	fairq_tenant_fini(&heavy);
	fairq_tenant_fini(&light);
}
END_TEST

/*
 * A tenant that had nothing to do saves up no credit: one that joins late
 * gets its share from then on, not a burst for the rounds it missed.
 */
START_TEST(test_no_credit_while_idle)
{
	struct fairq_tenant t1, t2;
	fairq_tenant_init(&t1, 0);
	fairq_tenant_init(&t2, 0);
	struct job a, b;
	job_init(&a, 'a', SIZE_MAX, &t1);
	job_init(&b, 'b', 4 * FAIRQ_SLICE, &t2);
	fairq_wake(&a.flow);
	for (int i = 0; i < 10; i++)
		(void) fairq_round();
	n_events = 0;
	memset(events, 0, sizeof(events));
	fairq_wake(&b.flow);
	for (int i = 0; i < 4; i++)
		(void) fairq_round();
	/* b had nothing: it goes first (test_joiner_first), then takes turns */
	ck_assert_str_eq(events, "babababBa");
	fairq_cancel(&a.flow);
	fairq_tenant_fini(&t1);
	fairq_tenant_fini(&t2);
}
END_TEST

/*
 * A tenant that joins (a small operation of one that had nothing queued)
 * goes before those with work all along: it waits for no slice of theirs
 * that has not begun. Tenants that join at once go in the order they came.
 */
START_TEST(test_joiner_first)
{
	struct fairq_tenant t1, t2, t3, t4;
	fairq_tenant_init(&t1, 0);
	fairq_tenant_init(&t2, 0);
	fairq_tenant_init(&t3, 0);
	fairq_tenant_init(&t4, 0);
	struct job a, b, c, d;
	job_init(&a, 'a', SIZE_MAX, &t1);
	job_init(&b, 'b', SIZE_MAX, &t2);
	fairq_wake(&a.flow);
	fairq_wake(&b.flow);
	for (int i = 0; i < 3; i++)
		(void) fairq_round();
	job_init(&c, 'c', 8, &t3);
	job_init(&d, 'd', 8, &t4);
	fairq_wake(&c.flow);
	fairq_wake(&d.flow);
	(void) fairq_round();
	job_init(&c, 'c', 8, &t3);
	fairq_wake(&c.flow);
	(void) fairq_round();
	ck_assert_str_eq(events, "abababcCdDabcCab");
	fairq_cancel(&a.flow);
	fairq_cancel(&b.flow);
	ck_assert(!fairq_busy());
	fairq_tenant_fini(&t1);
	fairq_tenant_fini(&t2);
	fairq_tenant_fini(&t3);
	fairq_tenant_fini(&t4);
}
END_TEST

/*
 * Going first is once a round: two tenants that wake each other's work in
 * their turns (a client and its server on one rpmad) cannot keep a third
 * from its turn in every round.
 */
START_TEST(test_joining_cannot_starve)
{
	struct fairq_tenant t1, t2, t3;
	fairq_tenant_init(&t1, 0);
	fairq_tenant_init(&t2, 0);
	fairq_tenant_init(&t3, 0);
	struct job x, y, z;
	job_init(&x, 'x', 8, &t1);
	job_init(&y, 'y', 0, &t2);
	job_init(&z, 'z', SIZE_MAX, &t3);
	x.wakes = &y;
	y.wakes = &x;
	fairq_wake(&z.flow);
	fairq_wake(&x.flow);
	for (int round = 0; round < 50; round++) {
		size_t z_before = z.moved, n_before = n_events;
		(void) fairq_round();
		ck_assert_uint_eq(z.moved - z_before, FAIRQ_SLICE);
		/* x and y: each at most twice first in a round, and once last */
		ck_assert_uint_le(n_events - n_before, 1 + 3 * 2);
	}
	/* the first rounds: z; x, y, x (first twice, then last) ... */
	ck_assert_int_eq(strncmp(events, "zxXyYxXzyYxXyYzx", 16), 0);
	fairq_cancel(&x.flow);
	fairq_cancel(&y.flow);
	fairq_cancel(&z.flow);
	ck_assert(!fairq_busy());
	fairq_tenant_fini(&t1);
	fairq_tenant_fini(&t2);
	fairq_tenant_fini(&t3);
}
END_TEST

/* The clock a millisecond on, and the armed timer fired if it is due. */
static void
advance_1ms(void)
{
	fake_now += 1000000u;
	if (armed && armed->deadline_ns <= fake_now) {
		struct loop_timer *t = armed;
		armed = NULL;
		t->armed = false;
		t->fn(t);
	}
}

/*
 * Work that takes long for its bytes (a copy that faults on every page)
 * goes in smaller slices, and its time is what it costs: another tenant's
 * operation waits for a bounded time, not for a slice however slow.
 */
START_TEST(test_slow_turns)
{
	struct fairq_tenant ts, tf;
	fairq_tenant_init(&ts, 0);
	fairq_tenant_init(&tf, 0);
	struct job slow, fast;
	job_init(&slow, 's', SIZE_MAX, &ts);
	job_init(&fast, 'f', SIZE_MAX, &tf);
	/* 64 KiB in 4 slices' time, then in 2 slices' time at 32 KiB */
	slow.ns_per_kib = 4 * FAIRQ_SLICE_NS / (FAIRQ_SLICE / 1024);
	fairq_wake(&slow.flow);
	fairq_wake(&fast.flow);
	for (int i = 0; i < 100; i++)
		(void) fairq_round();
	ck_assert_uint_eq(slow.budgets[0], FAIRQ_SLICE);
	/* longer than FAIRQ_SLICE_LONG_NS: halved, then not again */
	ck_assert_uint_eq(slow.budgets[1], FAIRQ_SLICE / 2);
	ck_assert_uint_eq(slow.budgets[2], FAIRQ_SLICE / 2);
	ck_assert_uint_eq(slow.last_budget, FAIRQ_SLICE / 2);
	/*
	 * its turns cost their time: 4 slices, then 2 a turn (it sits out
	 * rounds meanwhile), while the other tenant has one slice each round
	 */
	ck_assert_uint_eq(fast.turns, 100);
	ck_assert_uint_eq(slow.turns, 1 + (100 - 4) / 2);
	ck_assert_uint_eq(fast.moved, 100u * FAIRQ_SLICE);
	ck_assert_uint_eq(ts.use.bytes, slow.moved);	/* bytes stay bytes */

	/* alone, it sits out nothing: every call of a round runs a turn */
	fairq_cancel(&fast.flow);
	unsigned alone_from = slow.turns;
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(fairq_round(), 1);
	ck_assert_uint_eq(slow.turns - alone_from, 10);
	fairq_wake(&fast.flow);

	/* fast again: twice the bytes after each short turn, up to a slice */
	slow.ns_per_kib = 0;
	unsigned from = slow.turns;
	for (int i = 0; i < 10; i++)
		(void) fairq_round();
	ck_assert_uint_eq(slow.budgets[from + 1], FAIRQ_SLICE);
	ck_assert_uint_eq(slow.budgets[from + 2], FAIRQ_SLICE);

	/*
	 * one very long turn (rpmad's thread preempted) costs at most 4:
	 * the other tenant has its turn in each round meanwhile
	 */
	fast.ns_per_kib = 1000u * 1000 * 1000;
	unsigned fast_from = fast.turns;
	from = slow.turns;
	for (int i = 0; i < 5; i++)
		(void) fairq_round();
	ck_assert_uint_eq(fast.turns - fast_from, 2);
	ck_assert_uint_eq(slow.turns - from, 5);
	fairq_cancel(&slow.flow);
	/*
	 * and the slices halve down to FAIRQ_SLICE_MIN, not below (alone by
	 * then, on this clock: its turns take that many)
	 */
	for (int i = 0; i < 200; i++)
		(void) fairq_round();
	ck_assert_uint_eq(fast.flow.slice, FAIRQ_SLICE_MIN);
	ck_assert_uint_eq(fast.last_budget,
			FAIRQ_SOLO_FACTOR * FAIRQ_SLICE_MIN);
	fairq_cancel(&fast.flow);

	/* long turns of few bytes (a wait, say): fewer would not help */
	struct job waits;
	job_init(&waits, 'w', SIZE_MAX, &ts);
	waits.most_per_turn = 1024;
	waits.ns_per_turn = 2 * FAIRQ_SLICE_LONG_NS;
	fairq_wake(&waits.flow);
	/* and they cost their bytes: a slice's credit is 64 of them */
	(void) fairq_round();
	ck_assert_uint_eq(waits.turns, FAIRQ_SLICE / 1024);
	ck_assert_uint_eq(waits.last_budget, FAIRQ_SLICE);
	fairq_cancel(&waits.flow);
	fairq_tenant_fini(&ts);
	fairq_tenant_fini(&tf);
}
END_TEST

/*
 * A tenant capped at 20 slices a second moves that much in a second of
 * rounds (plus its first burst), whatever is idle; it sits out between,
 * and the uncapped one has its turn in every round. A timer that fires
 * when its work went meanwhile lets it leave; a fini while it waits
 * cancels the timer; a cap of 0 lifts the cap.
 */
START_TEST(test_bandwidth_cap)
{
	static char fake_loop;	/* only passed through */
	fairq_init((struct loop *)&fake_loop);
	fake_now = 1000000000u;
	struct fairq_tenant capped, free_t;
	fairq_tenant_init(&capped, 0);
	fairq_tenant_init(&free_t, 0);
	const uint64_t rate = 20u * FAIRQ_SLICE;
	fairq_tenant_set_rate(&capped, rate);
	struct job c, f;
	job_init(&c, 'c', SIZE_MAX, &capped);
	job_init(&f, 'f', SIZE_MAX, &free_t);
	fairq_wake(&c.flow);
	fairq_wake(&f.flow);
	for (int ms = 0; ms < 1000; ms++) {
		size_t f_before = f.moved;
		(void) fairq_round();
		ck_assert_uint_eq(f.moved - f_before, FAIRQ_SLICE);
		advance_1ms();
	}
	/* a second's rate and the first burst (a slice here), no more */
	ck_assert_uint_ge(c.moved, rate - FAIRQ_SLICE);
	ck_assert_uint_le(c.moved, rate + 2 * FAIRQ_SLICE);
	ck_assert_uint_ge(capped.use.throttled, 5);
	/* alone, it is held to its cap all the same */
	fairq_cancel(&f.flow);
	c.moved = 0;
	for (int ms = 0; ms < 1000; ms++) {
		(void) fairq_round();
		advance_1ms();
	}
	ck_assert_uint_ge(c.moved, rate - 2 * FAIRQ_SLICE);
	ck_assert_uint_le(c.moved, rate + 2 * FAIRQ_SLICE);
	/* waiting with its work gone, the timer lets it leave */
	while (armed == NULL)
		(void) fairq_round();
	fairq_cancel(&c.flow);
	ck_assert(!fairq_busy());
	struct loop_timer *t = armed;
	armed = NULL;
	t->fn(t);
	ck_assert(!capped.active);
	ck_assert_uint_eq(fairq_active_weight(), 0);
	/* waiting when it goes: its timer is cancelled */
	fairq_wake(&c.flow);
	while (armed == NULL)
		(void) fairq_round();
	fairq_cancel(&c.flow);
	fairq_tenant_fini(&capped);
	ck_assert_ptr_null(armed);
	ck_assert_uint_eq(fairq_active_weight(), 0);
	/* a cap lifted while it waits: back at once */
	fairq_tenant_init(&capped, 0);
	fairq_tenant_set_rate(&capped, rate);
	job_init(&c, 'c', SIZE_MAX, &capped);
	fairq_wake(&c.flow);
	while (armed == NULL)
		(void) fairq_round();
	ck_assert(!fairq_busy());
	fairq_tenant_set_rate(&capped, 0);
	ck_assert_ptr_null(armed);
	ck_assert(fairq_busy());
	fairq_cancel(&c.flow);
	fairq_tenant_fini(&capped);
	/* no cap: no sitting out */
	fairq_tenant_init(&capped, 0);
	fairq_tenant_set_rate(&capped, rate);
	fairq_tenant_set_rate(&capped, 0);
	job_init(&c, 'c', 100u * FAIRQ_SLICE, &capped);
	fairq_wake(&c.flow);
	for (int i = 0; i < 100; i++)
		(void) fairq_round();
	ck_assert_uint_eq(c.moved, 100u * FAIRQ_SLICE);
	ck_assert_ptr_null(armed);
	fairq_tenant_fini(&capped);
	fairq_tenant_fini(&free_t);
}
END_TEST

/*
 * A flow whose object goes away in its turn is never touched again; one
 * cancelled or moved to another tenant while queued leaves its queue.
 */
START_TEST(test_gone_cancelled_moved)
{
	struct fairq_tenant t1, t2;
	fairq_tenant_init(&t1, 0);
	fairq_tenant_init(&t2, 0);
	struct job *gone = malloc(sizeof(*gone));
	ck_assert_ptr_nonnull(gone);
	job_init(gone, 'g', SIZE_MAX, &t1);
	gone->cancel_in_turn = true;
	struct job c, m;
	job_init(&c, 'c', SIZE_MAX, &t1);
	job_init(&m, 'm', 2 * FAIRQ_SLICE, NULL);
	ck_assert_ptr_eq(m.flow.tenant, fairq_rpmad());
	fairq_wake(&gone->flow);
	fairq_wake(&c.flow);
	fairq_wake(&m.flow);
	fairq_wake(&m.flow);	/* twice: once queued */
	(void) fairq_round();
	free(gone);
	fairq_cancel(&c.flow);
	fairq_flow_set_tenant(&m.flow, &t2);
	ck_assert_ptr_eq(m.flow.tenant, &t2);
	run_all();
	ck_assert_str_eq(events, "gmmM");
	ck_assert_uint_eq(t2.use.bytes, FAIRQ_SLICE);
	/* a tenant that goes with flows queued takes them off */
	job_init(&c, 'c', SIZE_MAX, &t1);
	fairq_wake(&c.flow);
	fairq_tenant_fini(&t1);
	ck_assert(!c.flow.queued);
	ck_assert(!fairq_busy());
	fairq_tenant_fini(&t2);
}
END_TEST

/*
 * What rpmad tells a client about to wait (common/qp_region.h's
 * contended): another tenant's turn ended with work left within the last
 * FAIRQ_CONTENDED_NS. A tenant's own backlog, or work that fits a turn,
 * does not count.
 */
START_TEST(test_contended)
{
	struct fairq_tenant t1, t2, t3;
	fairq_tenant_init(&t1, 0);
	fairq_tenant_init(&t2, 0);
	fairq_tenant_init(&t3, 0);
	fake_now = 5000;
	ck_assert(!fairq_contended(&t1));
	ck_assert(!fairq_contended(NULL));

	/* small work, done within its turns: nobody waits behind it */
	struct job small, big;
	job_init(&small, 's', 8, &t2);
	fairq_wake(&small.flow);
	run_all();
	ck_assert(!fairq_contended(&t1));

	/* a bulk turn with more to do: others wait, the tenant itself not */
	job_init(&big, 'b', 4 * FAIRQ_SLICE, &t1);
	fairq_wake(&big.flow);
	(void) fairq_round();
	ck_assert(fairq_contended(&t2));
	ck_assert(fairq_contended(NULL));
	ck_assert(!fairq_contended(&t1));
	fake_now += FAIRQ_CONTENDED_NS - 1;
	ck_assert(fairq_contended(&t2));
	fake_now += 1;
	ck_assert(!fairq_contended(&t2));

	/* it is seen again while its rounds go on, and forgotten after */
	(void) fairq_round();
	ck_assert(fairq_contended(&t2));
	run_all();
	fake_now += FAIRQ_CONTENDED_NS;
	ck_assert(!fairq_contended(&t2));

	/* three with backlogs: each sees another, whichever two are kept */
	struct job j1, j2, j3;
	job_init(&j1, 'x', SIZE_MAX, &t1);
	job_init(&j2, 'y', SIZE_MAX, &t2);
	job_init(&j3, 'z', SIZE_MAX, &t3);
	fairq_wake(&j1.flow);
	fairq_wake(&j2.flow);
	fairq_wake(&j3.flow);
	(void) fairq_round();
	ck_assert(fairq_contended(&t1));
	ck_assert(fairq_contended(&t2));
	ck_assert(fairq_contended(&t3));

	/* a tenant that goes is forgotten at once */
	fairq_tenant_fini(&t1);
	fairq_tenant_fini(&t3);
	ck_assert(!fairq_contended(&t2));
	fairq_tenant_fini(&t2);
	ck_assert(!fairq_contended(&t2));
	ck_assert(!fairq_busy());

	/* rpmad's thread at a persist: everyone, while it runs and after */
	fairq_hold();
	fairq_hold();
	fake_now += 10 * FAIRQ_CONTENDED_NS;
	ck_assert(fairq_contended(&t1));
	ck_assert(fairq_contended(fairq_rpmad()));
	fairq_release();
	ck_assert(fairq_contended(&t2));
	fairq_release();
	fairq_release();	/* one too many changes nothing */
	fake_now += FAIRQ_CONTENDED_NS - 1;
	ck_assert(fairq_contended(&t2));
	fake_now += 1;
	ck_assert(!fairq_contended(&t2));
}
END_TEST

/*
 * A flow alone on the data path takes FAIRQ_SOLO_FACTOR slices a turn;
 * any other owner's work, queued or within FAIRQ_ALONE_NS, another
 * tenant's, a cap or a hold puts it back to plain slices.
 */
START_TEST(test_alone)
{
	const size_t solo = FAIRQ_SOLO_FACTOR * FAIRQ_SLICE;
	struct fairq_tenant t1, t2;
	fairq_tenant_init(&t1, 0);
	fairq_tenant_init(&t2, 0);
	fake_now += 2 * (uint64_t) FAIRQ_ALONE_NS;

	/* alone: the whole message a turn, charged as one slice of it */
	struct job a, a2;
	job_init(&a, 'a', 2 * solo, &t1);
	fairq_wake(&a.flow);
	ck_assert_int_eq(fairq_round(), 1);
	ck_assert_uint_eq(a.budgets[0], solo);
	ck_assert_uint_eq(a.moved, solo);
	ck_assert_uint_eq(t1.use.bytes, solo);
	/* a flow of the same owner (its connection's other way) too */
	job_init(&a2, 'c', solo, &t1);
	a2.flow.owner = &a;
	fairq_wake(&a2.flow);
	run_all();
	ck_assert_uint_eq(a.turns, 2);
	ck_assert_uint_eq(a2.budgets[0], solo);

	/* another owner's flow queued: plain slices for both */
	struct job b, d;
	job_init(&b, 'b', 2 * FAIRQ_SLICE, &t1);
	job_init(&d, 'd', 2 * FAIRQ_SLICE, &t1);
	fairq_wake(&b.flow);
	fairq_wake(&d.flow);
	run_all();
	ck_assert_uint_eq(b.budgets[0], FAIRQ_SLICE);
	ck_assert_uint_eq(d.budgets[0], FAIRQ_SLICE);
	/* b had its turns within FAIRQ_ALONE_NS: d still plain */
	d.left = 2 * FAIRQ_SLICE;
	fake_now += FAIRQ_ALONE_NS - 1;
	fairq_wake(&d.flow);
	(void) fairq_round();
	ck_assert_uint_eq(d.last_budget, FAIRQ_SLICE);
	run_all();
	/* and alone once it is longer ago */
	fake_now += FAIRQ_ALONE_NS;
	d.left = solo;
	fairq_wake(&d.flow);
	(void) fairq_round();
	ck_assert_uint_eq(d.last_budget, solo);
	ck_assert(!fairq_busy());

	/* another tenant with work: plain */
	fake_now += FAIRQ_ALONE_NS;
	struct job e;
	job_init(&e, 'e', SIZE_MAX, &t2);
	d.left = SIZE_MAX;
	fairq_wake(&e.flow);
	fairq_wake(&d.flow);
	(void) fairq_round();
	ck_assert_uint_eq(d.last_budget, FAIRQ_SLICE);
	ck_assert_uint_eq(e.last_budget, FAIRQ_SLICE);
	fairq_cancel(&e.flow);
	fairq_cancel(&d.flow);

	/* a hold of rpmad's thread, or a cap: plain */
	fake_now += FAIRQ_ALONE_NS;
	fairq_hold();
	fairq_wake(&d.flow);
	(void) fairq_round();
	ck_assert_uint_eq(d.last_budget, FAIRQ_SLICE);
	fairq_release();
	fake_now += FAIRQ_CONTENDED_NS;
	(void) fairq_round();
	ck_assert_uint_eq(d.last_budget, solo);
	fairq_tenant_set_rate(&t1, 1000u * FAIRQ_SLICE);
	(void) fairq_round();
	ck_assert_uint_eq(d.last_budget, FAIRQ_SLICE);
	fairq_tenant_set_rate(&t1, 0);

	/*
	 * slow for its bytes (a turn alone longer than FAIRQ_SOLO_FACTOR
	 * long slices): its slice halves, and so does its turn alone
	 */
	d.ns_per_kib = 4 * FAIRQ_SLICE_NS / (FAIRQ_SLICE / 1024);
	(void) fairq_round();
	ck_assert_uint_eq(d.last_budget, solo);
	(void) fairq_round();
	ck_assert_uint_eq(d.last_budget, solo / 2);
	fairq_cancel(&d.flow);

	/* a turn alone ends its round: small turns go one a round */
	struct job w;
	job_init(&w, 'w', SIZE_MAX, &t1);
	w.most_per_turn = 1024;
	fake_now += FAIRQ_ALONE_NS;
	fairq_wake(&w.flow);
	ck_assert_int_eq(fairq_round(), 1);
	ck_assert_int_eq(fairq_round(), 1);
	ck_assert_uint_eq(w.turns, 2);
	ck_assert_uint_eq(w.last_budget, solo);
	fairq_cancel(&w.flow);
	fairq_tenant_fini(&t1);
	fairq_tenant_fini(&t2);
}
END_TEST

int
main(void)
{
	const TTest *const tc_arbiter[] = { test_small_between_slices,
		test_flows_of_a_tenant_alternate, test_weights,
		test_no_credit_while_idle, test_joiner_first,
		test_joining_cannot_starve, test_slow_turns, test_bandwidth_cap,
		test_gone_cancelled_moved, test_contended, test_alone, NULL };
	const struct th_tcase tcases[] = {
		{ "arbiter", .tests = tc_arbiter, .setup = setup },
	};
	return check_run(th_suite("fairq", tcases, TH_N(tcases)), CK_ENV);
}
