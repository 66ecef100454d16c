// SPDX-License-Identifier: BSD-3-Clause
/*
 * fork.c -- the library's fork handlers and the count of forks that
 * tells a child's objects from its parent's (fork.h)
 */

#include <pthread.h>
#include <stdatomic.h>

#include "broker.h"
#include "fork.h"
#include "landing_thread.h"
#include "log_internal.h"
#include "vamem.h"

static _Atomic unsigned epoch;
static _Atomic bool told;	/* the refusal is logged once per process */

static void
prepare(void)
{
	vamem_atfork_prepare();
}

static void
parent(void)
{
	vamem_atfork_parent();
}

static void
child(void)
{
	/* the registered pages first: nothing may allocate before */
	vamem_atfork_child();
	broker_atfork_child();
	landing_atfork_child();
	atomic_fetch_add(&epoch, 1);
	atomic_store(&told, false);
}

__attribute__((constructor)) static void
fork_init(void)
{
	(void) pthread_atfork(prepare, parent, child);
}

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
