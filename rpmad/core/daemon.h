/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * daemon.h -- rpmad's process-wide state
 */

#ifndef RPMAD_DAEMON_H
#define RPMAD_DAEMON_H

#include <stdint.h>

#include "core/config.h"
#include "core/stats.h"
#include "loop/loop.h"

struct daemon_state {
	struct config cfg;
	const char *config_path;
	bool config_absent;	/* no file there: built-in defaults */
	struct loop *loop;
	uint64_t start_ns;
	struct stats stats;
};

extern struct daemon_state rpmad;

#endif /* RPMAD_DAEMON_H */
