/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vamem.h -- private pages made shareable for RDMA devices: one memfd per
 * process whose offsets are the pages' virtual addresses
 *
 * An RDMA device reaches memory through rpmad's mappings, so private pages
 * (heap, anonymous mmap, a program's data) registered for one must become
 * pages of a file rpmad can map. Only the pages a registration covers are
 * moved, each to the offset equal to its address in one sparse memfd: the
 * kernel merges neighbouring moved pages into one mapping by itself, and
 * no page ever serves two addresses. A move copies the pages into the
 * memfd and replaces them with a mapping of it, with every attribute the
 * original mapping had (mapattr.h); meanwhile other threads' stores into
 * them wait, write-protected through a userfaultfd where the kernel lets
 * the process make one, and the moving thread's signals wait. The piece
 * of the original mapping is kept aside, empty, to take the pages back.
 * Moved pages are counted per registration; when the last one holding
 * them goes, they are moved back into private memory with the attributes
 * their mapping has then, and the memfd lets go of them (and is closed
 * when it holds nothing). A child of fork() gets private copies, made
 * before the fork (fork.h).
 *
 * Every function but the fork handlers expects vamem_lock() held.
 */

#ifndef RPMACLIENT_VAMEM_H
#define RPMACLIENT_VAMEM_H

#include <stdbool.h>
#include <stdint.h>

#include "proc_maps.h"

void vamem_lock(void);
void vamem_unlock(void);

/*
 * vamem_fd -- the memfd (made on first use), or an RPMA_E_* code as a
 * negative number (logged)
 */
int vamem_fd(void);

/* vamem_holds -- whether the mapping e is the memfd at its own addresses */
bool vamem_holds(const struct maps_entry *e);

/*
 * vamem_share -- move the private pages [start, end) (page-aligned, all of
 * one mapping) into the memfd, with one reference for a registration.
 * 0, or an RPMA_E_* code (logged; the pages are then as they were).
 */
int vamem_share(uintptr_t start, uintptr_t end);

/*
 * vamem_ref -- one more reference on [start, end), pages in the memfd at
 * their own addresses (vamem_holds). 0 or RPMA_E_NOMEM.
 */
int vamem_ref(uintptr_t start, uintptr_t end);

/*
 * vamem_unref -- drop a registration's reference on [start, end) (taken
 * by vamem_share or vamem_ref); pages no registration holds any more are
 * moved back into private memory.
 */
void vamem_unref(uintptr_t start, uintptr_t end);

/* the fork handlers (fork.c) */
void vamem_atfork_prepare(void);
void vamem_atfork_parent(void);
void vamem_atfork_child(void);

#endif /* RPMACLIENT_VAMEM_H */
