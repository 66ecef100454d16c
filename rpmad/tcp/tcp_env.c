// SPDX-License-Identifier: BSD-3-Clause
/*
 * tcp_env.c -- what rpmad gave the software transport at init (tcp.h):
 * below every other file of the transport, which all read it;
 * transport_tcp_init sets it
 */

#include "tcp/tcp.h"

const struct transport_env *tcp_env;
