// SPDX-License-Identifier: BSD-3-Clause
/*
 * table.c -- the transports rpmad has: one line each. Set up in this
 * order (the fallback first: its software device is device 1).
 */

#include <stddef.h>

#include "transport/transports.h"

extern const struct transport_entry transport_tcp_entry;
extern const struct transport_entry transport_verbs_entry;

const struct transport_entry *const transport_table[] = {
	&transport_tcp_entry,
	&transport_verbs_entry,
	NULL,
};
