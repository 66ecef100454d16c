// SPDX-License-Identifier: BSD-3-Clause
/*
 * stats.c -- the flush latency histogram (and the sum a Prometheus
 * histogram carries)
 */

#include "core/stats.h"

void
stats_flush_latency(struct stats *s, uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned bucket = 0;
	while (bucket < STATS_LATENCY_BUCKETS - 1 && (1ull << bucket) <= us)
		bucket++;
	s->flush_latency[bucket]++;
	s->flush_latency_sum_ns += ns;
}
