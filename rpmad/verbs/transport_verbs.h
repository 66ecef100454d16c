/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transport_verbs.h -- the rdma-core transport as its table entry and the
 * tests see it
 */

#ifndef RPMAD_TRANSPORT_VERBS_H
#define RPMAD_TRANSPORT_VERBS_H

#include "transport/transport.h"

extern const struct transport_ops transport_verbs;
extern const struct transport_entry transport_verbs_entry;

/* what rpmad gave the transport at init (transport.h) */
extern const struct transport_env *verbs_env;

/*
 * transport_verbs_init -- find the RDMA devices there are (none is not an
 * error: every address then goes to the software transport)
 */
void transport_verbs_init(const struct transport_env *env);

/* transport_verbs_fini -- release rpmad's CM channel and devices */
void transport_verbs_fini(void);

/*
 * transport_verbs_device_for -- the RDMA device serving the address (as
 * the local address of a listener when `local`, else as a destination), or
 * NULL when no RDMA device does (or verbs support is unavailable).
 */
struct device *transport_verbs_device_for(const struct sockaddr_storage *ss,
		socklen_t len, bool local);

#endif /* RPMAD_TRANSPORT_VERBS_H */
