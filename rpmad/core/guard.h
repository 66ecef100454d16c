/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * guard.h -- touching client-owned mappings without dying of SIGBUS
 *
 * Registered memory may be a file of the application's; if the application
 * truncates it, a store into the lost pages raises SIGBUS in rpmad. Every
 * access rpmad makes to registered memory with its own loads and stores
 * goes through these functions, which turn such a fault into an error
 * return. (Accesses by system calls, recv/send into or from a mapping, get
 * EFAULT from the kernel instead and need no guard.)
 */

#ifndef RPMAD_GUARD_H
#define RPMAD_GUARD_H

#include <stddef.h>
#include <stdint.h>

/* guard_init -- install the SIGBUS/SIGSEGV handler; 0 or a negative errno */
int guard_init(void);

/* guarded_memcpy -- 0, or -EFAULT when a page of dst or src was lost */
int guarded_memcpy(void *dst, const void *src, size_t len);

/* guarded_store64 -- one aligned 8-byte atomic store; 0 or -EFAULT */
int guarded_store64(uint64_t *dst, uint64_t value);

/*
 * guarded_probe -- read one byte of every page of [p, p + len): 0, or
 * -EFAULT when one is lost (before handing the range to a system call,
 * which would fail with EFAULT in the middle of a stream)
 */
int guarded_probe(const void *p, size_t len);

/* guarded_call -- run fn(arg); 0, or -EFAULT when it hit a lost page */
int guarded_call(void (*fn)(void *arg), void *arg);

#endif /* RPMAD_GUARD_H */
