// SPDX-License-Identifier: BSD-3-Clause
/*
 * atfork.c -- the library's fork handlers (fork.h): each part of the
 * library that a child must not share with its parent is told of the fork
 * here, the top of the library, so that no part below knows of another
 */

#include <pthread.h>

#include "broker.h"
#include "fork.h"
#include "landing_thread.h"
#include "vamem.h"

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
	fork_epoch_next();
}

__attribute__((constructor)) static void
fork_init(void)
{
	(void) pthread_atfork(prepare, parent, child);
}
