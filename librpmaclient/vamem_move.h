/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vamem_move.h -- moving pages between private memory and the memfd of
 * vamem.h, `fd` (vamem_move.c, for vamem.c alone). Every function
 * expects vamem_lock() held.
 */

#ifndef RPMACLIENT_VAMEM_MOVE_H
#define RPMACLIENT_VAMEM_MOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapattr.h"

/* Where a move put the original mapping's piece. */
struct moved {
	uintptr_t aside; /* of the range's start; 0: none */
	uintptr_t aside_end; /* the range's pages below are aside */
	bool asked_huge;
};

/*
 * vamem_move_in -- moves the private pages [start, end) of one mapping
 * with attributes `a` into the memfd. 0, or an RPMA_E_* code (logged)
 * with the pages as they were.
 */
int vamem_move_in(int fd, uintptr_t start, uintptr_t end,
		const struct mapattr *a, struct moved *m);

/*
 * vamem_move_out -- moves [start, end) of the memfd, mapped at those
 * addresses, back into private memory with the attributes `to`: into the
 * original mapping's piece kept at `aside` (attributes `orig` at the
 * move), or into a new mapping where there is none. 0, or an errno with
 * what was not moved still shared (logged).
 */
int vamem_move_out(int fd, uintptr_t start, uintptr_t end, uintptr_t aside,
		const struct mapattr *orig, const struct mapattr *to);

/*
 * vamem_copy_file -- copies len bytes between memory at `mem` and the
 * memfd at `off` (into the file, or out of it), by the kernel: 0 or a
 * negative errno
 */
int vamem_copy_file(int fd, bool into_file, uintptr_t mem, uint64_t off,
		size_t len);

/* vamem_punch -- the memfd lets go of [start, start + len) */
void vamem_punch(int fd, uintptr_t start, size_t len);

/* vamem_err -- the RPMA_E_* code for an errno of the memfd or a move */
int vamem_err(int err);

#endif /* RPMACLIENT_VAMEM_MOVE_H */
