// SPDX-License-Identifier: BSD-3-Clause
/*
 * range_set.c -- the ranges in a red-black tree ordered by start, each
 * node knowing the furthest end in its subtree: an access [a, b) lies in
 * one range exactly when the furthest end among the ranges that start at
 * or before a reaches b, which one walk from the root finds
 */

#include <stdlib.h>

#include "range_set.h"

struct range_node;
static void augment(struct range_node *n);
/* every change to the tree's shape recomputes what it changed */
#define RB_AUGMENT(x) augment(x)
#include <bsd/sys/tree.h>

struct range_node {
	RB_ENTRY(range_node) link;
	uint64_t start, end;
	uint64_t max_end; /* of this node's subtree */
	uint64_t seq; /* one range twice: two nodes */
};

static int
node_cmp(struct range_node *a, struct range_node *b)
{
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

RB_HEAD(range_tree, range_node);

struct range_set {
	struct range_tree tree;
	uint64_t next_seq;
};

static uint64_t
subtree_end(const struct range_node *n)
{
	return n ? n->max_end : 0;
}

static void
augment(struct range_node *n)
{
	uint64_t m = n->end;
	uint64_t l = subtree_end(RB_LEFT(n, link));
	uint64_t r = subtree_end(RB_RIGHT(n, link));
	n->max_end = m > l ? (m > r ? m : r) : (l > r ? l : r);
}

/* static, and quiet about the operations this file does not use */
RB_GENERATE_INTERNAL(range_tree, range_node, link, node_cmp,
		__attribute__((unused)) static)

/* From n up: the rebalancing recomputes what it turns, not all above it. */
static void
augment_up(struct range_node *n)
{
	for (; n; n = RB_PARENT(n, link))
		augment(n);
}

struct range_set *
range_set_new(void)
{
	struct range_set *s = calloc(1, sizeof(*s));
	if (s)
		RB_INIT(&s->tree);
	return s;
}

void
range_set_delete(struct range_set *s)
{
	if (s == NULL)
		return;
	struct range_node *n, *next;
	for (n = RB_MIN(range_tree, &s->tree); n; n = next) {
		next = RB_NEXT(range_tree, &s->tree, n);
		RB_REMOVE(range_tree, &s->tree, n);
		free(n);
	}
	free(s);
}

int
range_set_add(struct range_set *s, uint64_t start, uint64_t end)
{
	struct range_node *n = calloc(1, sizeof(*n));
	if (n == NULL)
		return -1;
	n->start = start;
	n->end = end;
	n->max_end = end;
	n->seq = s->next_seq++;
	(void) RB_INSERT(range_tree, &s->tree, n);
	augment_up(n);
	return 0;
}

bool
range_set_remove(struct range_set *s, uint64_t start, uint64_t end)
{
	struct range_node key = { .start = start, .end = end, .seq = 0 };
	struct range_node *n = RB_NFIND(range_tree, &s->tree, &key);
	if (n == NULL || n->start != start || n->end != end)
		return false;
	/* where the tree loses a node: n's parent, or its successor's */
	struct range_node *from = RB_PARENT(n, link);
	if (RB_LEFT(n, link) && RB_RIGHT(n, link)) {
		struct range_node *succ = RB_NEXT(range_tree, &s->tree, n);
		from = RB_PARENT(succ, link);
		if (from == n)
			from = succ;
	}
	RB_REMOVE(range_tree, &s->tree, n);
	augment_up(from);
	free(n);
	return true;
}

bool
range_set_covers(const struct range_set *s, uint64_t addr, uint64_t len)
{
	if (len > UINT64_MAX - addr)
		return false;
	bool any = false;
	uint64_t reach = 0; /* of the ranges starting at or before addr */
	const struct range_node *n = RB_ROOT(&s->tree);
	while (n) {
		if (n->start > addr) {
			n = RB_LEFT(n, link);
			continue;
		}
		uint64_t l = subtree_end(RB_LEFT(n, link));
		uint64_t m = n->end > l ? n->end : l;
		reach = m > reach ? m : reach;
		any = true;
		n = RB_RIGHT(n, link);
	}
	return any && addr + len <= reach;
}

bool
range_set_empty(const struct range_set *s)
{
	return RB_EMPTY(&s->tree);
}
