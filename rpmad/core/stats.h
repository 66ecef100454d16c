/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.h -- counters per operation kind and a flush latency histogram
 */

#ifndef RPMAD_STATS_H
#define RPMAD_STATS_H

#include <stdint.h>

#define STATS_LATENCY_BUCKETS 24	/* bucket i: < 2^i microseconds */

struct op_counters {
	uint64_t reads, writes, atomic_writes, flushes, sends, recvs;
	uint64_t bytes_read, bytes_written, bytes_sent, bytes_received;
	uint64_t errors;
	/* the peer's operations on this side's memory */
	uint64_t served_reads, served_writes, served_atomic_writes;
	uint64_t served_flushes, served_bytes_read, served_bytes_written;
};

/* requests refused because of a setting of rpmad.conf, by setting */
struct refusals {
	uint64_t max_connections, max_endpoints, max_registered_bytes;
	uint64_t allow_lists;	/* allow_users/allow_groups: hello refused */
	uint64_t admin_groups;	/* admin requests of non-admins */
	uint64_t max_descriptors;
	uint64_t no_descriptors;	/* rpmad at its own limit: not admins */
};

struct stats {
	struct op_counters ops;
	uint64_t flush_latency[STATS_LATENCY_BUCKETS];
	uint64_t flush_latency_sum_ns;
	uint64_t requests, request_errors, sessions_total;
	uint64_t sessions_silent;	/* ended without a hello in time */
	struct refusals refused;
};

/* stats_flush_latency -- account one flush that took `ns` */
void stats_flush_latency(struct stats *s, uint64_t ns);

#endif /* RPMAD_STATS_H */
