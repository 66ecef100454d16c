/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * range_set.h -- the address ranges of a process's registrations, as the
 * landing thread checks each access against them: whether an access lies
 * in one of them, in O(log n) however many there are (an application may
 * hold 100,000 registrations, issue 13) and however they overlap
 */

#ifndef RPMA_RANGE_SET_H
#define RPMA_RANGE_SET_H

#include <stdbool.h>
#include <stdint.h>

struct range_set;

/* An empty set, or NULL (out of memory). */
struct range_set *range_set_new(void);
void range_set_delete(struct range_set *s);

/* [start, end) once more (the same range may be in it twice): 0 or -1. */
int range_set_add(struct range_set *s, uint64_t start, uint64_t end);

/* One [start, end) fewer: false when there was none. */
bool range_set_remove(struct range_set *s, uint64_t start, uint64_t end);

/* Whether [addr, addr + len) lies in one range of the set. */
bool range_set_covers(const struct range_set *s, uint64_t addr, uint64_t len);

bool range_set_empty(const struct range_set *s);

#endif /* RPMA_RANGE_SET_H */
