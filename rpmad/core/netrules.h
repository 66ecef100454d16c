/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netrules.h -- the networks and ports a user may connect to or listen on
 * (allow_connect, allow_listen in rpmad.conf)
 *
 * A rule is ADDRESS[/PREFIX][:PORT[-PORT]]: an IPv4 address, an IPv6
 * address in brackets ([fd00::]/8:7204), or * for every address; no port
 * means every port. "any" allows everything, "none" nothing.
 */

#ifndef RPMAD_NETRULES_H
#define RPMAD_NETRULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define NET_RULES_MAX 16

struct net_rule {
	int family;		/* AF_INET, AF_INET6, or AF_UNSPEC: any */
	unsigned prefix;	/* leading bits that must match */
	uint8_t addr[16];
	uint16_t port_lo, port_hi;
};

struct net_rules {
	bool set;		/* false: not configured, everything allowed */
	unsigned n;
	struct net_rule rule[NET_RULES_MAX];
};

/*
 * net_rules_parse -- a comma-separated list of rules into `out` (set).
 * 0, or -EINVAL with the reason in err.
 */
int net_rules_parse(const char *value, struct net_rules *out, char *err,
		size_t errlen);

/* net_rules_allow -- whether an address (with its port) may be used */
bool net_rules_allow(const struct net_rules *rules, const struct sockaddr *sa);

/* net_rules_equal -- whether two lists say the same */
bool net_rules_equal(const struct net_rules *a, const struct net_rules *b);

#endif /* RPMAD_NETRULES_H */
