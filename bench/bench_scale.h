/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_scale.h -- registrations and connections at scale (bench_scale.c)
 */

#ifndef RPMA_BENCH_SCALE_H
#define RPMA_BENCH_SCALE_H

/*
 * bench_scale -- start an rpmad of its own (socket in `dir`), measure
 * registrations at up to `max_regs` existing ones, connection set-up at
 * up to `max_conns` existing ones (TCP port `port`), and a registration
 * with its deregistration beside 10 and `idle_sessions` idle sessions of
 * another user (0: not measured); print the table. 0, or -1 when a run
 * failed.
 */
int bench_scale(const char *rpmad, const char *dir, int port,
		unsigned max_regs, unsigned max_conns, unsigned idle_sessions);

#endif /* RPMA_BENCH_SCALE_H */
