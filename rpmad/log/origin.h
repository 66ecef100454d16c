/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * origin.h -- who caused something rpmad does: a local user (a uid) or a
 * remote host (its address). What one origin causes is charged to it --
 * log lines, places in an endpoint's queue -- so that a forger's doing
 * is never another's share.
 *
 * A remote host is its IPv4 address, or its IPv6 /64: one machine usually
 * has a whole /64 to pick addresses from. An IPv4 address written as IPv6
 * (::ffff:a.b.c.d) is the IPv4 host.
 */

#ifndef RPMAD_ORIGIN_H
#define RPMAD_ORIGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

enum origin_kind {
	ORIGIN_NONE,
	ORIGIN_USER,	/* a client of this rpmad: its uid */
	ORIGIN_HOST,	/* a remote address */
};

/* Compared and hashed as bytes: always made by the functions below. */
struct origin {
	uint32_t kind;		/* enum origin_kind */
	uint32_t uid;		/* ORIGIN_USER */
	uint8_t addr[16];	/* ORIGIN_HOST: v4-mapped, or the v6 /64 */
};

#define ORIGIN_NAME_MAX 64

/* origin_of_user -- the local user uid */
void origin_of_user(uid_t uid, struct origin *o);

/* origin_of_addr -- the host of a socket address (other families: NONE) */
void origin_of_addr(const struct sockaddr_storage *ss, struct origin *o);

/* origin_eq -- the same origin */
bool origin_eq(const struct origin *a, const struct origin *b);

/* origin_name -- "uid 1000", "192.0.2.7", "2001:db8:1:2::/64" */
void origin_name(const struct origin *o, char *buf, size_t len);

#endif /* RPMAD_ORIGIN_H */
