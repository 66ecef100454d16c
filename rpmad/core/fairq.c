// SPDX-License-Identifier: BSD-3-Clause
/*
 * fairq.c -- deficit round robin of the data path between tenants, round
 * robin between a tenant's flows (fairq.h)
 */

#include <utlist.h>

#include "fairq.h"
#include "loop.h"

static struct loop *fq_loop;		/* fairq_init's */
/*
 * Tenants with work, next first: those that joined since their last turn
 * (had nothing queued, as a latency-bound tenant between its operations)
 * in the order they came, then the rest
 */
static struct fairq_tenant *active;
static struct fairq_tenant *last_joined;	/* of that first part, or NULL */
static unsigned n_active;
static uint64_t active_weight;
static uint64_t round_no = 1;	/* rounds begun, and one (0: never joined) */
static bool in_round;
static unsigned round_extra;	/* turns joiners added to the round running */
static struct fairq_tenant rpmad_tenant = { .weight = FAIRQ_WEIGHT_DEFAULT };

static uint32_t
valid_weight(uint32_t weight)
{
	if (weight == 0)
		return FAIRQ_WEIGHT_DEFAULT;
	return weight > FAIRQ_WEIGHT_MAX ? FAIRQ_WEIGHT_MAX : weight;
}

void
fairq_tenant_init(struct fairq_tenant *t, uint32_t weight)
{
	*t = (struct fairq_tenant){ .weight = valid_weight(weight) };
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
tenant_join(struct fairq_tenant *t)
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

/* Off the arbiter's list: credit is not saved up while idle. */
static void
tenant_leave(struct fairq_tenant *t)
{
	if (!t->active)
		return;
	t->active = false;
	t->deficit = 0;
	list_delete(t);
	n_active--;
	active_weight -= t->weight;
}

void
fairq_tenant_fini(struct fairq_tenant *t)
{
	while (t->flows)
		fairq_cancel(t->flows);
	tenant_leave(t);
}

struct fairq_tenant *
fairq_rpmad(void)
{
	return &rpmad_tenant;
}

void
fairq_flow_init(struct fairq_flow *f, fairq_run_fn *run, void *arg,
		struct fairq_tenant *t)
{
	*f = (struct fairq_flow){ .run = run, .arg = arg,
			.tenant = t ? t : &rpmad_tenant };
}

void
fairq_wake(struct fairq_flow *f)
{
	if (f->queued)
		return;
	f->queued = true;
	DL_APPEND(f->tenant->flows, f);
	tenant_join(f->tenant);
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
		tenant_leave(t);
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

size_t
fairq_charge(struct fairq_tenant *t, size_t bytes, unsigned ops)
{
	t->use.bytes += bytes;
	t->use.ops += ops;
	return bytes + (size_t)ops * FAIRQ_OP_COST;
}

/* The turns of one tenant within its credit. */
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
		size_t cost = f->run(f, FAIRQ_SLICE, &more);
		/* f may be gone unless it has more: only then touched again */
		t->deficit -= cost ? (int64_t)cost : 1;
		t->use.slices++;
		turns++;
		if (more && !f->queued) {
			f->queued = true;
			DL_APPEND(t->flows, f);
		}
	}
	return turns;
}

int
fairq_round(void)
{
	int turns = 0;
	round_no++;
	in_round = true;
	/*
	 * those on the list now; of those that join meanwhile, the first
	 * time in this round ones too, the others in the next round
	 */
	unsigned n = n_active;
	while (n > 0 && active) {
		n--;
		struct fairq_tenant *t = active;
		/* off the list while served: its flows' wakes keep it on */
		list_delete(t);
		turns += serve(t);
		n += round_extra;
		round_extra = 0;
		if (t->flows == NULL) {
			t->active = false;
			t->deficit = 0;
			n_active--;
			active_weight -= t->weight;
			continue;
		}
		if (t->deficit <= 0)
			t->use.waits++;
		DL_APPEND(active, t);
	}
	in_round = false;
	round_extra = 0;
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
