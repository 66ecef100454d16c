// SPDX-License-Identifier: BSD-3-Clause
/*
 * origin.c -- local users and remote hosts as the origins of what rpmad
 * does
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "log/origin.h"

void
origin_of_user(uid_t uid, struct origin *o)
{
	memset(o, 0, sizeof(*o));
	o->kind = ORIGIN_USER;
	o->uid = (uint32_t)uid;
}

void
origin_of_addr(const struct sockaddr_storage *ss, struct origin *o)
{
	memset(o, 0, sizeof(*o));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;
		o->kind = ORIGIN_HOST;
		o->addr[10] = o->addr[11] = 0xff;
		memcpy(o->addr + 12, &in->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;
		o->kind = ORIGIN_HOST;
		memcpy(o->addr, &in6->sin6_addr, 16);
		/* a v4-mapped address is its IPv4 host; others their /64 */
		if (!IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
			memset(o->addr + 8, 0, 8);
	}
}

bool
origin_eq(const struct origin *a, const struct origin *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

void
origin_name(const struct origin *o, char *buf, size_t len)
{
	char text[INET6_ADDRSTRLEN] = "?";
	switch (o->kind) {
	case ORIGIN_USER:
		(void) snprintf(buf, len, "uid %u", (unsigned)o->uid);
		return;
	case ORIGIN_HOST:
		if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)o->addr)) {
			(void) inet_ntop(AF_INET, o->addr + 12, text,
					sizeof(text));
			(void) snprintf(buf, len, "%s", text);
		} else {
			(void) inet_ntop(AF_INET6, o->addr, text,
					sizeof(text));
			(void) snprintf(buf, len, "%s/64", text);
		}
		return;
	default:
		(void) snprintf(buf, len, "an unknown origin");
		return;
	}
}
