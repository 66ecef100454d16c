/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fork.h -- the library in a child of fork()
 *
 * The library's fork handlers (atfork.c: pthread_atfork, registered when
 * it loads) give the child no part of the parent's session with rpmad:
 * objects made before the fork belong to the parent, so that calls on them
 * in the child fail without touching them (RPMA_E_PROVIDER) -- they could
 * only corrupt the parent's connections -- and deleting them frees the
 * child's copy of the library's memory and nothing else (their descriptors
 * and mappings are the child's to keep or close). Registered pages the
 * library moved into its memfd become private copies in the child
 * (vamem.h), as a kernel copies the pinned pages of a registration.
 *
 * A process made without the fork handlers (a raw clone() without
 * CLONE_VM) is not told apart.
 */

#ifndef RPMACLIENT_FORK_H
#define RPMACLIENT_FORK_H

#include <stdbool.h>

/* fork_epoch -- how many forks made this process; objects remember it */
unsigned fork_epoch(void);

/*
 * fork_inherited -- whether an object of `epoch` came from a parent
 * process; if so, logged once per process with `what` the call refused
 */
bool fork_inherited(unsigned epoch, const char *what);

/*
 * fork_epoch_next -- the child's handler, after every other part let go of
 * the parent's: one fork more, and the refusal is logged once again
 */
void fork_epoch_next(void);

#endif /* RPMACLIENT_FORK_H */
