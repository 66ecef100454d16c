/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transports.h -- choosing and running the transports of the one table
 * (table.c): what main.c and the objects ask of them as a whole. A
 * transport itself sees transport.h alone.
 */

#ifndef RPMAD_TRANSPORTS_H
#define RPMAD_TRANSPORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "transport/transport.h"

struct config;
struct loop;

/* the table: every transport rpmad has, NULL-terminated (table.c) */
extern const struct transport_entry *const transport_table[];

/* `choice` is "auto" (every transport) or the name of one. */

/* transport_known -- whether `choice` is "auto" or a transport's name */
bool transport_known(const char *choice);

/*
 * transports_configure -- rpmad.conf's settings for every transport, at
 * start and at every reload; 0, or a negative errno with the reason in
 * err (the settings in force stay then)
 */
int transports_configure(const struct config *cfg, char *err, size_t errlen);

/*
 * transports_init -- set up the chosen transports and the fallback on
 * the loop, with the settings configured; 0, or the negative errno of
 * the first that cannot start
 */
int transports_init(struct loop *loop, const char *choice);

/* transports_env -- what they were given (tests start one by hand) */
const struct transport_env *transports_env(void);

/* transports_fini -- set down what transports_init set up */
void transports_fini(void);

/* transports_pending -- whether any transport still has work to send */
bool transports_pending(void);

/*
 * transports_device_for -- the device serving the address: the first
 * chosen transport that serves it, else the fallback when the choice
 * allows it; NULL when none does (*noun then names what was missing).
 */
struct device *transports_device_for(const char *choice,
		const struct sockaddr_storage *ss, socklen_t len, bool local,
		const char **noun);

#endif /* RPMAD_TRANSPORTS_H */
