// SPDX-License-Identifier: BSD-3-Clause
/*
 * fork.c -- the count of forks that tells a child's objects from its
 * parent's (fork.h); the handlers that advance it are atfork.c's, above
 * every part they tell of the fork
 */

#include <stdatomic.h>

#include "fork.h"
#include "log_internal.h"

static _Atomic unsigned epoch;
static _Atomic bool told;	/* the refusal is logged once per process */

unsigned
fork_epoch(void)
{
	return atomic_load_explicit(&epoch, memory_order_relaxed);
}

bool
fork_inherited(unsigned e, const char *what)
{
	if (e == fork_epoch())
		return false;
	if (!atomic_exchange(&told, true))
		RLOG_ERROR("%s: the object belongs to the parent process (this "
				"process is a child of fork()); make new "
				"objects here", what);
	return true;
}

void
fork_epoch_next(void)
{
	atomic_fetch_add(&epoch, 1);
	atomic_store(&told, false);
}
