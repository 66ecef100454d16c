/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * landing_thread.h -- the library's thread that lands remote peers' accesses to
 * the application's private registered memory (common/landing_area.h)
 *
 * rpmad reaches private memory (anything it cannot map) through the
 * process's address space; on the software transport every remote write
 * into it and read of it would cost rpmad a walk of this process's page
 * tables per page. Instead, while such memory is registered, one thread of
 * the library's in this process copies between it and a landing area
 * rpmad shares: the kernel copies with this process's own page tables
 * (pread/pwrite of the area's memfd), and the process pays for the copies
 * of its own traffic. The thread blocks every signal, sleeps when there is
 * nothing to do, and exits when the last such registration goes.
 *
 * A remote write into memory the application made read-only lands as a
 * NIC's would (through /proc/self/mem, which writes where the kernel lets
 * a debugger); one that reaches no page, or a page rpmad may not write,
 * fails as the old path did. A process that is stopped (SIGSTOP, a
 * debugger) takes nothing: rpmad's own thread does its batches then.
 *
 * RPMA_LANDING=0 in the environment keeps the thread from ever starting
 * (rpmad's thread does everything, as before), to compare the two.
 */

#ifndef RPMACLIENT_LANDING_THREAD_H
#define RPMACLIENT_LANDING_THREAD_H

#include <stddef.h>
#include <stdint.h>

/*
 * landing_add -- memory [ptr, ptr + size) was registered in the session
 * of `generation`, and rpmad would have it landed (MrRegReply.landing):
 * the thread starts if it is not running. Failing to start it is not the
 * registration's failure (rpmad's thread lands then): logged, no error.
 */
void landing_add(uint64_t generation, const void *ptr, size_t size);

/*
 * landing_remove -- that registration is gone: the thread stops after the
 * session's last one
 */
void landing_remove(uint64_t generation, const void *ptr, size_t size);

/* landing_atfork_child -- the fork handler: the child has no landing */
void landing_atfork_child(void);

#endif /* RPMACLIENT_LANDING_THREAD_H */
