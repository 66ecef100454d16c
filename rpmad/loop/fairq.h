/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fairq.h -- the data path's arbiter: deficit round robin between tenants,
 * round robin between the flows of a tenant, one bounded slice at a time
 *
 * rpmad serves every connection from one thread. A flow is one kind of
 * work of one connection that can be long (a socket's frames to send, a
 * socket's bytes to take in, copies memory to memory, a persist): instead
 * of doing it to the end, its owner wakes the flow and the arbiter runs
 * it a slice (at most FAIRQ_SLICE bytes) at a time, interleaved with
 * everyone else's, as an RDMA NIC interleaves queue pairs packet by
 * packet. Each round a tenant with work earns weight * FAIRQ_SLICE bytes
 * of credit; an operation of one tenant so waits for at most weight
 * slices of each other tenant's work, and under contention tenants' bytes
 * follow their weights. A tenant that had no work goes first in the next
 * round (once a round): a latency-bound tenant's operation waits for the
 * slice running, not for a slice of everyone.
 */

#ifndef RPMAD_FAIRQ_H
#define RPMAD_FAIRQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loop/loop.h"

/* the most a flow does at a time */
#define FAIRQ_SLICE (64u << 10)
/*
 * What a slice takes when all goes well, about (a copy or send of 64 KiB
 * here takes 25-35 us). Some work takes far longer for its bytes: a copy
 * into a file's pages that a persist just wrote back faults on each page,
 * and 64 KiB of it took 50-300 us. A flow whose turn took longer than
 * FAIRQ_SLICE_LONG_NS for at least half its bytes gets half the bytes
 * next turn (down to FAIRQ_SLICE_MIN), and twice again (up to
 * FAIRQ_SLICE) after one shorter than FAIRQ_SLICE_NS; and such a turn
 * (one that moved at least half its slice) costs its tenant the bytes of
 * the time it took, at FAIRQ_SLICE a FAIRQ_SLICE_NS, when that is more
 * than its bytes (up to
 * FAIRQ_TIME_COST_MAX, so that one preemption of rpmad's thread does not
 * bar a tenant for long): what another tenant's operation waits for is a
 * bounded time, not a bounded count of bytes.
 */
#define FAIRQ_SLICE_NS (50u * 1000)
#define FAIRQ_SLICE_LONG_NS (2u * FAIRQ_SLICE_NS)
#define FAIRQ_SLICE_MIN (4u << 10)
#define FAIRQ_TIME_COST_MAX (4u * FAIRQ_SLICE)
/*
 * A flow alone on the data path takes FAIRQ_SOLO_FACTOR times its slice
 * a turn: its tenant is the only one with work, no flow of another owner
 * (connection) of it is queued, none had a turn within FAIRQ_ALONE_NS,
 * no cap paces it and rpmad's thread holds nothing. Nobody waits behind
 * such a turn, and a 1 MiB message then goes in one system call instead
 * of sixteen, which on a 2-core host was half the 1 MiB ping-pong's
 * rate. A newcomer's first operation waits for at most one such turn;
 * from then on everyone has plain slices for FAIRQ_ALONE_NS.
 */
#define FAIRQ_SOLO_FACTOR 16u
#define FAIRQ_ALONE_NS (100u * 1000 * 1000)
/* what an operation costs besides its bytes (a frame, a completion) */
#define FAIRQ_OP_COST 1024u
#define FAIRQ_WEIGHT_DEFAULT 1u
#define FAIRQ_WEIGHT_MAX 100u

/* A tenant's data-path use since it was made (rpmactl tenants). */
struct fairq_use {
	uint64_t bytes;		/* charged: bytes moved, FAIRQ_OP_COST per op */
	uint64_t ops;		/* operations finished */
	uint64_t slices;	/* turns its flows had */
	uint64_t waits;		/* rounds it had work and no credit left */
	uint64_t throttled;	/* times it waited for its bandwidth cap */
};

/*
 * A bandwidth cap: a token bucket of bytes (charged as the arbiter charges
 * them), filled at `rate` bytes a second up to FAIRQ_BURST_MS of it (at
 * least a slice). A tenant whose bucket is empty sits out, off the list,
 * until a timer says it has a slice's worth again.
 */
#define FAIRQ_BURST_MS 20u
struct fairq_cap {
	uint64_t rate;			/* bytes a second; 0: none */
	int64_t tokens;			/* bytes it may move now */
	uint64_t filled_ns;		/* when tokens were last added */
	bool waiting;			/* off the list until the timer */
	struct loop_timer timer;
};

struct fairq_flow;

struct fairq_tenant {
	uint32_t weight;		/* 1..FAIRQ_WEIGHT_MAX */
	int64_t deficit;		/* credit left this round */
	struct fairq_flow *flows;	/* those with work, next to run first */
	bool active;			/* on the arbiter's list */
	uint64_t joined_round;		/* when it last went first (fairq.c) */
	struct fairq_tenant *prev, *next;
	struct fairq_use use;
	struct fairq_cap cap;
};

/*
 * A flow's turn: do at most `budget` bytes of work (a started operation
 * may finish on fewer), return what it cost (fairq_cost()), and set *more
 * when work is left that can go on now. A flow whose object went away in
 * its turn returns with *more false and is never touched again (charge
 * its tenant, read before, with fairq_charge()).
 */
typedef size_t fairq_run_fn(struct fairq_flow *f, size_t budget, bool *more);

struct fairq_flow {
	fairq_run_fn *run;
	void *arg;
	const void *owner; /* its connection: flows of one are one */
	struct fairq_tenant *tenant;
	bool queued;
	size_t slice;			/* its next turn's bytes (fairq.h) */
	struct fairq_flow *prev, *next;
};

/* fairq_tenant_init -- a tenant of `weight` (0: the default) */
void fairq_tenant_init(struct fairq_tenant *t, uint32_t weight);
/* fairq_tenant_set_weight -- from the next round on (0: the default) */
void fairq_tenant_set_weight(struct fairq_tenant *t, uint32_t weight);
/*
 * fairq_tenant_set_rate -- its bandwidth cap in bytes a second (0: none),
 * from now on
 */
void fairq_tenant_set_rate(struct fairq_tenant *t, uint64_t rate);
/* fairq_tenant_fini -- it goes: none of its flows may be queued */
void fairq_tenant_fini(struct fairq_tenant *t);
/* fairq_rpmad -- the tenant of work no client owns yet (set-up frames) */
struct fairq_tenant *fairq_rpmad(void);

/* fairq_flow_init -- owner: what its turns are alone with (a connection) */
void fairq_flow_init(struct fairq_flow *f, fairq_run_fn *run, void *arg,
		const void *owner, struct fairq_tenant *t);
/* fairq_flow_set_tenant -- whose work the flow is now (NULL: rpmad's) */
void fairq_flow_set_tenant(struct fairq_flow *f, struct fairq_tenant *t);
/*
 * fairq_flow_capped -- whether the flow's tenant has a bandwidth cap (its
 * work then goes a turn's bytes at a time, so that the cap paces it)
 */
bool fairq_flow_capped(const struct fairq_flow *f);
/* fairq_wake -- the flow has work: it gets turns until it says it has none */
void fairq_wake(struct fairq_flow *f);
/* fairq_cancel -- it has no more work (or goes away): no more turns */
void fairq_cancel(struct fairq_flow *f);

/*
 * fairq_charge -- what a turn of t's moving `bytes` and finishing `ops`
 * operations (frames) cost: the bytes and FAIRQ_OP_COST per operation;
 * counted in its use
 */
size_t fairq_charge(struct fairq_tenant *t, size_t bytes, unsigned ops);

/*
 * fairq_round -- one round: every tenant with work gets its credit and its
 * flows their turns; returns how many turns ran. When none could run (all
 * sit out what their last turns cost), as many rounds as it takes for one
 * to: the arbiter wastes no pass of the loop while there is work.
 */
int fairq_round(void);
/*
 * fairq_contended -- whether a tenant other than t had more work than its
 * turn within the last FAIRQ_CONTENDED_NS: t's next operation then likely
 * waits for slices of others
 */
#define FAIRQ_CONTENDED_NS 1000000u
bool fairq_contended(const struct fairq_tenant *t);
/*
 * fairq_hold, fairq_release -- rpmad's own thread does long work off the
 * loop (a persist's msync): everyone is contended while it runs and
 * FAIRQ_CONTENDED_NS after, as behind a backlog of rpmad's own tenant
 */
void fairq_hold(void);
void fairq_release(void);
/* fairq_busy -- whether some flow has work */
bool fairq_busy(void);
/* fairq_active_weight -- the weights of the tenants with work now */
uint64_t fairq_active_weight(void);

struct loop;
/* fairq_init -- a round on every pass of the loop, which stays awake meanwhile */
void fairq_init(struct loop *loop);

#endif /* RPMAD_FAIRQ_H */
