// SPDX-License-Identifier: BSD-3-Clause
/*
 * netrules.c -- parsing and matching allow_connect / allow_listen rules
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/netrules.h"

/* parse_port, parse_ports, parse_rule: 0 or -EINVAL */
static int
parse_port(const char *s, uint16_t *out)
{
	char *end;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end != '\0' || v > 65535)
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

/* PORT, PORT-PORT or *; "" (no port given) is every port too */
static int
parse_ports(char *s, struct net_rule *r)
{
	r->port_lo = 0;
	r->port_hi = 65535;
	if (*s == '\0' || strcmp(s, "*") == 0)
		return 0;
	char *dash = strchr(s, '-');
	if (dash)
		*dash = '\0';
	if (parse_port(s, &r->port_lo))
		return -EINVAL;
	r->port_hi = r->port_lo;
	if (dash && parse_port(dash + 1, &r->port_hi))
		return -EINVAL;
	return r->port_lo <= r->port_hi ? 0 : -EINVAL;
}

static int
parse_rule(char *tok, struct net_rule *r)
{
	memset(r, 0, sizeof(*r));
	char *addr = tok, *ports = NULL;
	if (*tok == '[') {
		/* [v6]/prefix:ports or [v6/prefix]:ports */
		char *close = strchr(tok, ']');
		if (close == NULL)
			return -EINVAL;
		*close = '\0';
		addr = tok + 1;
		char *rest = close + 1;
		char *slash = NULL;
		if (*rest == '/') {
			slash = rest + 1;
			char *colon = strchr(slash, ':');
			if (colon) {
				*colon = '\0';
				ports = colon + 1;
			}
		} else if (*rest == ':') {
			ports = rest + 1;
		} else if (*rest != '\0') {
			return -EINVAL;
		}
		char *inner = strchr(addr, '/');
		if (inner) {
			if (slash)
				return -EINVAL;
			*inner = '\0';
			slash = inner + 1;
		}
		if (inet_pton(AF_INET6, addr, r->addr) != 1)
			return -EINVAL;
		r->family = AF_INET6;
		r->prefix = 128;
		if (slash) {
			char *end;
			unsigned long p = strtoul(slash, &end, 10);
			if (!isdigit((unsigned char)*slash) || *end || p > 128)
				return -EINVAL;
			r->prefix = (unsigned)p;
		}
	} else {
		char *colon = strchr(tok, ':');
		if (colon) {
			*colon = '\0';
			ports = colon + 1;
		}
		char *slash = strchr(addr, '/');
		if (slash)
			*slash++ = '\0';
		if (strcmp(addr, "*") == 0) {
			if (slash)
				return -EINVAL;
			r->family = AF_UNSPEC;
		} else {
			if (inet_pton(AF_INET, addr, r->addr) != 1)
				return -EINVAL;
			r->family = AF_INET;
			r->prefix = 32;
			if (slash) {
				char *end;
				unsigned long p = strtoul(slash, &end, 10);
				if (!isdigit((unsigned char)*slash) || *end ||
						p > 32)
					return -EINVAL;
				r->prefix = (unsigned)p;
			}
		}
	}
	if (ports && *ports == '\0')
		return -EINVAL;	/* "addr:" with no port: a typo, not "any" */
	return parse_ports(ports ? ports : (char *)"", r);
}

int
net_rules_parse(const char *value, struct net_rules *out, char *err,
		size_t errlen)
{
	char copy[1024];
	if (strlen(value) >= sizeof(copy)) {
		(void) snprintf(err, errlen, "too long");
		return -EINVAL;
	}
	(void) snprintf(copy, sizeof(copy), "%s", value);
	struct net_rules next = { .set = true };
	char *save = NULL;
	for (char *tok = strtok_r(copy, ", \t", &save); tok;
			tok = strtok_r(NULL, ", \t", &save)) {
		if (strcmp(tok, "none") == 0)
			continue;
		if (next.n == NET_RULES_MAX) {
			(void) snprintf(err, errlen, "more than %d rules",
					NET_RULES_MAX);
			return -EINVAL;
		}
		if (strcmp(tok, "any") == 0) {
			next.rule[next.n++] = (struct net_rule){
				.family = AF_UNSPEC, .port_hi = 65535 };
			continue;
		}
		char one[128];
		(void) snprintf(one, sizeof(one), "%s", tok);
		if (parse_rule(one, &next.rule[next.n])) {
			(void) snprintf(err, errlen, "bad rule '%s' (expected "
					"ADDRESS[/PREFIX][:PORT[-PORT]], "
					"[IPV6][/PREFIX][:PORT[-PORT]], *:PORT, "
					"any or none)", tok);
			return -EINVAL;
		}
		next.n++;
	}
	*out = next;
	return 0;
}

static bool
prefix_match(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned bytes = bits / 8, rest = bits % 8;
	if (memcmp(a, b, bytes) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[bytes] & mask) == (b[bytes] & mask);
}

bool
net_rules_allow(const struct net_rules *rules, const struct sockaddr *sa)
{
	if (!rules->set)
		return true;
	int family;
	uint8_t addr[16];
	uint16_t port;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;
		family = AF_INET;
		memcpy(addr, &in->sin_addr, 4);
		port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		port = ntohs(in6->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			/* a v4 address in v6 clothes is judged as v4 */
			family = AF_INET;
			memcpy(addr, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			family = AF_INET6;
			memcpy(addr, &in6->sin6_addr, 16);
		}
	} else {
		return false;
	}
	for (unsigned i = 0; i < rules->n; i++) {
		const struct net_rule *r = &rules->rule[i];
		if (port < r->port_lo || port > r->port_hi)
			continue;
		if (r->family == AF_UNSPEC)
			return true;
		if (r->family == family &&
				prefix_match(addr, r->addr, r->prefix))
			return true;
	}
	return false;
}

bool
net_rules_equal(const struct net_rules *a, const struct net_rules *b)
{
	if (a->set != b->set || a->n != b->n)
		return false;
	for (unsigned i = 0; i < a->n; i++) {
		const struct net_rule *x = &a->rule[i], *y = &b->rule[i];
		if (x->family != y->family || x->prefix != y->prefix ||
				x->port_lo != y->port_lo ||
				x->port_hi != y->port_hi ||
				memcmp(x->addr, y->addr, sizeof(x->addr)))
			return false;
	}
	return true;
}
