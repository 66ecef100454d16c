/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transport_tcp.h -- the software transport as its table entry and the
 * tests see it
 */

#ifndef RPMAD_TRANSPORT_TCP_H
#define RPMAD_TRANSPORT_TCP_H

#include "transport/transport.h"

extern const struct transport_ops transport_tcp;
extern const struct transport_entry transport_tcp_entry;

/* what rpmad gave the transport at init (transport.h) */
extern const struct transport_env *tcp_env;

/* transport_tcp_init -- make the software device and start; 0 or -ENOMEM */
int transport_tcp_init(const struct transport_env *env);
void transport_tcp_fini(void);

/* transport_tcp_pending -- whether frames still wait to be sent */
bool transport_tcp_pending(void);

#endif /* RPMAD_TRANSPORT_TCP_H */
