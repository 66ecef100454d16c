// SPDX-License-Identifier: BSD-3-Clause
/*
 * fairq.c -- deficit round robin of the data path between tenants, round
 * robin between a tenant's flows (fairq.h)
 */

#include <utlist.h>

#include "loop/fairq.h"
#include "loop/loop.h"

static struct loop *fq_loop;		/* fairq_init's */
/*
 * Tenants with work, next first: those that joined since their last turn
 * (had nothing queued, as a latency-bound tenant between its operations)
 * in the order they came, then the rest
 */
static struct fairq_tenant *active;
static struct fairq_tenant *last_joined;	/* of that first part, or NULL */
static unsigned n_active;	/* waiting for their caps included */
static unsigned n_waiting;
static uint64_t active_weight;
static uint64_t round_no = 1;	/* rounds begun, and one (0: never joined) */
static bool in_round;
static unsigned round_extra;	/* turns joiners added to the round running */
static struct fairq_tenant rpmad_tenant = { .weight = FAIRQ_WEIGHT_DEFAULT };
/*
 * The two tenants last seen with more work than their turn, and when: of
 * any tenant, at least one of them is another (fairq_contended)
 */
static struct recent {
	const void *who;
	uint64_t ns;
} backlog[2];
static unsigned n_held;		/* fairq_hold's not yet released */
/* The two owners (connections) whose flows last had a turn (alone()). */
static struct recent served[2];

/* who was seen now: in its entry, else an empty one, else the older */
static void
recent_note(struct recent r[2], const void *who, uint64_t now)
{
	unsigned i = 0;
	if (r[0].who == who)
		i = 0;
	else if (r[1].who == who || r[1].who == NULL)
		i = 1;
	else if (r[0].who != NULL && r[1].ns < r[0].ns)
		i = 1;
	r[i] = (struct recent){ who, now };
}

/*
 * Whether someone other than who was seen within window_ns: kept so, the
 * two entries hold another whenever anyone else was seen since who
 */
static bool
recent_other(const struct recent r[2], const void *who, uint64_t window_ns)
{
	uint64_t now = 0; /* read only when another was seen */
	for (unsigned i = 0; i < 2; i++) {
		if (r[i].who == NULL || r[i].who == who)
			continue;
		if (now == 0)
			now = loop_now_ns();
		if (now - r[i].ns < window_ns)
			return true;
	}
	return false;
}

static uint32_t
valid_weight(uint32_t weight)
{
	if (weight == 0)
		return FAIRQ_WEIGHT_DEFAULT;
	return weight > FAIRQ_WEIGHT_MAX ? FAIRQ_WEIGHT_MAX : weight;
}

static loop_timer_fn cap_timer_fired;

void
fairq_tenant_init(struct fairq_tenant *t, uint32_t weight)
{
	*t = (struct fairq_tenant){ .weight = valid_weight(weight) };
	t->cap.timer.fn = cap_timer_fired;
	t->cap.timer.arg = t;
}

void
fairq_tenant_set_weight(struct fairq_tenant *t, uint32_t weight)
{
	if (t->active)
		active_weight -= t->weight;
	t->weight = valid_weight(weight);
	if (t->active)
		active_weight += t->weight;
}

/*
 * A tenant that had no work goes before those that have had work all
 * along, as a sparse flow does in FQ-CoDel: its next operation waits for
 * the slice running, not for a slice of everyone. Once per round: one
 * that leaves and joins again in the same round (two tenants waking each
 * other, say) goes to the end, so a round still reaches everyone.
 */
static void
active_join(struct fairq_tenant *t)
{
	if (t->active)
		return;
	t->active = true;
	t->deficit = 0;
	n_active++;
	active_weight += t->weight;
	if (t->joined_round == round_no) {
		DL_APPEND(active, t);
		return;
	}
	t->joined_round = round_no;
	if (last_joined)
		DL_APPEND_ELEM(active, last_joined, t);
	else
		DL_PREPEND(active, t);
	last_joined = t;
	if (in_round)
		round_extra++;	/* served in this round, before the rest */
}

/* t leaves the list: the first part loses its end if t was it */
static void
list_delete(struct fairq_tenant *t)
{
	if (t == last_joined)
		last_joined = t == active ? NULL : t->prev;
	DL_DELETE(active, t);
	t->prev = t->next = NULL;
}

/* It has no work: it counts no more, and saves up no credit. */
static void
active_off(struct fairq_tenant *t)
{
	t->active = false;
	t->deficit = 0;
	n_active--;
	active_weight -= t->weight;
}

/* Off the arbiter's list (or its cap's wait). */
static void
active_leave(struct fairq_tenant *t)
{
	if (!t->active)
		return;
	if (t->cap.waiting) {
		/* not on the list: its timer was to put it back */
		t->cap.waiting = false;
		n_waiting--;
		if (fq_loop)
			loop_timer_cancel(fq_loop, &t->cap.timer);
	} else {
		list_delete(t);
	}
	active_off(t);
}

static uint64_t
cap_burst(const struct fairq_cap *c)
{
	uint64_t burst = c->rate / (1000 / FAIRQ_BURST_MS);
	return burst > FAIRQ_SLICE ? burst : FAIRQ_SLICE;
}

/* tokens for the time since they were last added, up to a burst */
static void
cap_fill(struct fairq_cap *c, uint64_t now)
{
	uint64_t dt = now - c->filled_ns;
	c->filled_ns = now;
	uint64_t burst = cap_burst(c);
	/* dt * rate in 128 bits: a day of a terabyte a second still fits */
	unsigned __int128 add = (unsigned __int128)dt * c->rate / 1000000000u;
	if (add >= burst || c->tokens + (int64_t)add > (int64_t)burst)
		c->tokens = (int64_t)burst;
	else
		c->tokens += (int64_t)add;
}

void
fairq_tenant_set_rate(struct fairq_tenant *t, uint64_t rate)
{
	struct fairq_cap *c = &t->cap;
	/* at most what one tenant could ever be charged in a second */
	if (rate > (uint64_t)INT64_MAX / 1024)
		rate = (uint64_t)INT64_MAX / 1024;
	if (rate == c->rate)
		return;
	if (c->rate == 0) {
		/* a new cap starts with a full bucket */
		c->rate = rate;
		c->tokens = (int64_t)cap_burst(c);
		c->filled_ns = loop_now_ns();
		return;
	}
	cap_fill(c, loop_now_ns());
	c->rate = rate;
	if (rate == 0 && c->waiting) {
		/* uncapped: no reason to wait for the timer */
		if (fq_loop)
			loop_timer_cancel(fq_loop, &c->timer);
		cap_timer_fired(&c->timer);
	}
}

/*
 * Whether t may have its turn now; if not it sits out, off the list,
 * until its bucket holds a slice again (its timer puts it back).
 */
static bool
cap_allows(struct fairq_tenant *t)
{
	struct fairq_cap *c = &t->cap;
	if (c->rate == 0)
		return true;
	cap_fill(c, loop_now_ns());
	if (c->tokens > 0)
		return true;
	uint64_t short_by = (uint64_t)(-c->tokens) + FAIRQ_SLICE;
	uint64_t in_ns = (uint64_t)((unsigned __int128)short_by *
			1000000000u / c->rate);
	c->waiting = true;
	n_waiting++;
	t->use.throttled++;
	if (fq_loop)
		loop_timer_arm(fq_loop, &c->timer, in_ns ? in_ns : 1);
	return false;
}

static void
cap_timer_fired(struct loop_timer *timer)
{
	struct fairq_tenant *t = timer->arg;
	t->cap.waiting = false;
	n_waiting--;
	if (t->flows == NULL) {
		/* its work went meanwhile: it leaves as any idle tenant */
		active_off(t);
		return;
	}
	/* after the others: it had its share of this moment */
	DL_APPEND(active, t);
	if (fq_loop)
		loop_kick(fq_loop);
}

void
fairq_tenant_fini(struct fairq_tenant *t)
{
	while (t->flows)
		fairq_cancel(t->flows);
	active_leave(t);
	for (unsigned i = 0; i < 2; i++)
		if (backlog[i].who == t)
			backlog[i] = (struct recent){ 0 };
}

struct fairq_tenant *
fairq_rpmad(void)
{
	return &rpmad_tenant;
}

void
fairq_flow_init(struct fairq_flow *f, fairq_run_fn *run, void *arg,
		const void *owner, struct fairq_tenant *t)
{
	*f = (struct fairq_flow){ .run = run,
		.arg = arg,
		.owner = owner,
		.tenant = t ? t : &rpmad_tenant,
		.slice = FAIRQ_SLICE };
}

void
fairq_wake(struct fairq_flow *f)
{
	if (f->queued)
		return;
	f->queued = true;
	DL_APPEND(f->tenant->flows, f);
	active_join(f->tenant);
	/* a socket's event, say: its turn comes in the loop's next pass */
	if (fq_loop)
		loop_kick(fq_loop);
}

void
fairq_cancel(struct fairq_flow *f)
{
	if (!f->queued)
		return;
	f->queued = false;
	struct fairq_tenant *t = f->tenant;
	DL_DELETE(t->flows, f);
	f->prev = f->next = NULL;
	/* a tenant being served stays on until its turn ends (fairq_round) */
	if (t->flows == NULL && t->prev != NULL)
		active_leave(t);
}

void
fairq_flow_set_tenant(struct fairq_flow *f, struct fairq_tenant *t)
{
	if (t == NULL)
		t = &rpmad_tenant;
	if (f->tenant == t)
		return;
	bool queued = f->queued;
	fairq_cancel(f);
	f->tenant = t;
	if (queued)
		fairq_wake(f);
}

bool
fairq_flow_capped(const struct fairq_flow *f)
{
	return f->tenant && f->tenant->cap.rate;
}

size_t
fairq_charge(struct fairq_tenant *t, size_t bytes, unsigned ops)
{
	t->use.bytes += bytes;
	t->use.ops += ops;
	return bytes + (size_t)ops * FAIRQ_OP_COST;
}

/*
 * What a turn costs its tenant's credit: its bytes, or its time when it
 * moved at least half its slice (fairq.h). A turn of a few small frames
 * or operations is charged their bytes: its time is the system calls
 * around them, and charging it cut a tenant's set-up frames to a few a
 * round, while the loop went on accepting its connections.
 */
static size_t
turn_charge(size_t cost, size_t slice, uint64_t took_ns)
{
	if (cost < slice / 2)
		return cost;
	uint64_t by_time = took_ns * FAIRQ_SLICE / FAIRQ_SLICE_NS;
	if (by_time > FAIRQ_TIME_COST_MAX)
		by_time = FAIRQ_TIME_COST_MAX;
	return by_time > cost ? (size_t)by_time : cost;
}

/*
 * A flow whose turns take long for their bytes gets fewer bytes a turn
 * (fairq.h); not one whose turn was long with few bytes (a wait, or rpmad
 * preempted), which fewer bytes would not make shorter.
 */
static void
resize_slice(struct fairq_flow *f, size_t cost, uint64_t took_ns)
{
	if (took_ns > FAIRQ_SLICE_LONG_NS && cost >= f->slice / 2 &&
			f->slice > FAIRQ_SLICE_MIN)
		f->slice /= 2;
	else if (took_ns < FAIRQ_SLICE_NS && f->slice < FAIRQ_SLICE)
		f->slice *= 2;
}

/* Whether f's turn keeps nobody waiting (FAIRQ_SOLO_FACTOR), f dequeued. */
static bool
alone(const struct fairq_flow *f)
{
	const struct fairq_tenant *t = f->tenant;
	if (n_active != 1 || n_held > 0 || t->cap.rate)
		return false;
	for (const struct fairq_flow *g = t->flows; g; g = g->next)
		if (g->owner != f->owner)
			return false;
	return !recent_other(served, f->owner, FAIRQ_ALONE_NS);
}

/*
 * The turns of one tenant within its credit. A turn alone does the work
 * of FAIRQ_SOLO_FACTOR slices, is charged and resized as the average
 * slice of it, and ends its tenant's round: the loop's pass between two
 * such turns is where another owner's work is first seen.
 */
static int
serve(struct fairq_tenant *t)
{
	int turns = 0;
	t->deficit += (int64_t)t->weight * FAIRQ_SLICE;
	while (t->deficit > 0 && t->flows) {
		struct fairq_flow *f = t->flows;
		DL_DELETE(t->flows, f);
		f->queued = false;
		bool more = false;
		uint64_t start = loop_now_ns();
		const void *owner = f->owner;
		size_t scale = alone(f) ? FAIRQ_SOLO_FACTOR : 1;
		size_t slice = f->slice;
		size_t cost = f->run(f, slice * scale, &more);
		uint64_t now = loop_now_ns(), took = now - start;
		/* f may be gone unless it has more: only then touched again */
		recent_note(served, owner, now);
		size_t charge = turn_charge(cost / scale, slice, took / scale);
		t->deficit -= charge ? (int64_t)charge : 1;
		/* after a turn alone the loop looks around */
		if (scale > 1 && t->deficit > 0)
			t->deficit = 0;
		if (t->cap.rate)
			t->cap.tokens -= (int64_t)cost;
		t->use.slices++;
		turns++;
		if (more) {
			resize_slice(f, cost / scale, took / scale);
			if (!f->queued) {
				f->queued = true;
				DL_APPEND(t->flows, f);
			}
		}
	}
	return turns;
}

/* t's turn ended with work left */
static void
note_backlog(const struct fairq_tenant *t)
{
	recent_note(backlog, t, loop_now_ns());
}

void
fairq_hold(void)
{
	n_held++;
}

void
fairq_release(void)
{
	if (n_held == 0)
		return;
	n_held--;
	note_backlog(&rpmad_tenant);
}

bool
fairq_contended(const struct fairq_tenant *t)
{
	return n_held > 0 || recent_other(backlog, t, FAIRQ_CONTENDED_NS);
}

/* One round: each tenant on the list its credit and its turns. */
static int
round_once(void)
{
	int turns = 0;
	round_no++;
	in_round = true;
	/*
	 * those on the list now; of those that join meanwhile, the first
	 * time in this round ones too, the others in the next round
	 */
	unsigned n = n_active - n_waiting;
	while (n > 0 && active) {
		n--;
		struct fairq_tenant *t = active;
		/* off the list while served: its flows' wakes keep it on */
		list_delete(t);
		if (!cap_allows(t))
			continue;	/* its timer puts it back */
		turns += serve(t);
		n += round_extra;
		round_extra = 0;
		if (t->flows == NULL) {
			active_off(t);
			continue;
		}
		if (t->deficit <= 0)
			t->use.waits++;
		note_backlog(t);
		DL_APPEND(active, t);
	}
	in_round = false;
	round_extra = 0;
	return turns;
}

int
fairq_round(void)
{
	/*
	 * A turn may cost up to FAIRQ_TIME_COST_MAX: when every tenant with
	 * work sits out for it, the next rounds run now, not in the loop's
	 * next passes (after a pass without work the loop yields the CPU,
	 * which on a busy host took milliseconds a pass)
	 */
	int turns = 0;
	for (unsigned i = 0; turns == 0 && active != NULL &&
			i <= FAIRQ_TIME_COST_MAX / FAIRQ_SLICE; i++)
		turns = round_once();
	return turns;
}

bool
fairq_busy(void)
{
	return active != NULL;
}

uint64_t
fairq_active_weight(void)
{
	return active_weight;
}

static int
poll_round(void *arg)
{
	(void) arg;
	return fairq_round();
}

/* the loop does not sleep while a flow has work */
static int
prepare_sleep(void *arg)
{
	(void) arg;
	return fairq_busy();
}

static void
wake(void *arg)
{
	(void) arg;
}

static struct loop_poller poller = {
	.poll = poll_round,
	.prepare_sleep = prepare_sleep,
	.wake = wake,
};

void
fairq_init(struct loop *loop)
{
	fq_loop = loop;
	loop_poller_add(loop, &poller);
}
