/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr_holes.h -- rpmad's mappings of a client's shared memory that never
 * allocate a page
 *
 * A page of shared memory of no storage (tmpfs, hugetlbfs: memfds, POSIX
 * and SysV shm) that rpmad touches through its own mapping and the file
 * lacks would be allocated then, and charged to rpmad's memory cgroup,
 * not the client's: a client could punch its registered memory again and
 * again and have remote writes fill it in on rpmad's account. The library
 * faults every page in before it registers (charged to the client); a
 * page missing later is one the client gave back. rpmad's mapping of such
 * a file is registered with a userfaultfd whose missing faults are
 * signals (UFFD_FEATURE_SIGBUS): a store or load of rpmad's into a hole
 * raises SIGBUS (core/guard.c catches it), a system call reaching one
 * fails with EFAULT, and nothing is allocated. mr_io.h then treats the
 * page as memory the client no longer has, as for a file cut short. The
 * user-mode-only kind suffices (kernel accesses fail too) and needs no
 * privilege.
 */

#ifndef RPMAD_MR_HOLES_H
#define RPMAD_MR_HOLES_H

#include <stdbool.h>
#include <stdint.h>

/*
 * mr_holes_available -- whether rpmad can guard its mappings (made the
 * first time it is asked; the answer does not change)
 */
bool mr_holes_available(void);

/*
 * mr_holes_guard -- guard rpmad's mapping [addr, addr + len) of a shmem
 * or hugetlbfs file (aligned to its pages). 0, or a negative errno.
 * Unmapping the range ends the guard.
 */
int mr_holes_guard(void *addr, uint64_t len);

#endif /* RPMAD_MR_HOLES_H */
