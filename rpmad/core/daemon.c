// SPDX-License-Identifier: BSD-3-Clause
/*
 * daemon.c -- rpmad's process-wide state (daemon.h)
 */

#include "core/daemon.h"

struct daemon_state rpmad;
