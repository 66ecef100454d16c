/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * errno_keep.h -- a call leaves errno as it found it
 *
 * librpmaclient(7) promises that a call that succeeds leaves errno alone,
 * as a library's guest should: what failed on the way and was got over (a
 * refused userfaultfd, a kernel without some ioctl, a madvise a mapping
 * does not take) is no error of the call's. ERRNO_KEEP() at the top of a
 * function restores errno whenever it returns (its failures are told by
 * their RPMA_E_* code and the log, never by errno).
 */

#ifndef RPMACLIENT_ERRNO_KEEP_H
#define RPMACLIENT_ERRNO_KEEP_H

#include <errno.h>

static inline void
errno_keep_end(const int *saved)
{
	errno = *saved;
}

#define ERRNO_KEEP() \
	int errno_kept_ __attribute__((cleanup(errno_keep_end))) = errno

#endif /* RPMACLIENT_ERRNO_KEEP_H */
