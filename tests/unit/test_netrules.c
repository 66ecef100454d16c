// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_netrules.c -- allow_connect/allow_listen rules (rpmad/core/netrules.c)
 * and the per-user log limiter (rpmad/ratelimit.c), linked straight in
 */

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "core/netrules.h"
#include "log/ratelimit.h"
#include "th_suite.h"

static struct sockaddr_storage ss;

static const struct sockaddr *
v4(const char *a, unsigned port)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	memset(&ss, 0, sizeof(ss));
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)port);
	ck_assert_int_eq(inet_pton(AF_INET, a, &in->sin_addr), 1);
	return (const struct sockaddr *)&ss;
}

static const struct sockaddr *
v6(const char *a, unsigned port)
{
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	memset(&ss, 0, sizeof(ss));
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons((uint16_t)port);
	ck_assert_int_eq(inet_pton(AF_INET6, a, &in6->sin6_addr), 1);
	return (const struct sockaddr *)&ss;
}

static struct net_rules
parse(const char *text)
{
	struct net_rules r;
	char err[256];
	ck_assert_msg(net_rules_parse(text, &r, err, sizeof(err)) == 0,
			"%s: %s", text, err);
	return r;
}

START_TEST(test_unset_allows_all)
{
	struct net_rules r = { .set = false };
	ck_assert(net_rules_allow(&r, v4("192.0.2.1", 1)));
	ck_assert(net_rules_allow(&r, v6("2001:db8::1", 65535)));
}
END_TEST

START_TEST(test_none_and_any)
{
	struct net_rules r = parse("none");
	ck_assert(r.set);
	ck_assert(!net_rules_allow(&r, v4("127.0.0.1", 7204)));
	r = parse("any");
	ck_assert(net_rules_allow(&r, v4("127.0.0.1", 7204)));
	ck_assert(net_rules_allow(&r, v6("::1", 1)));
}
END_TEST

START_TEST(test_prefixes_and_ports)
{
	struct net_rules r = parse("10.0.0.0/8, 192.168.1.7:7204, "
			"*:7000-7010, [fd00::]/8:7204, [2001:db8::5]");
	ck_assert(net_rules_allow(&r, v4("10.200.3.4", 1)));
	ck_assert(!net_rules_allow(&r, v4("11.0.0.1", 1)));
	ck_assert(net_rules_allow(&r, v4("192.168.1.7", 7204)));
	ck_assert(!net_rules_allow(&r, v4("192.168.1.7", 7205)));
	ck_assert(!net_rules_allow(&r, v4("192.168.1.8", 7204)));
	ck_assert(net_rules_allow(&r, v4("8.8.8.8", 7005)));
	ck_assert(net_rules_allow(&r, v6("2001:db8::1", 7010)));
	ck_assert(!net_rules_allow(&r, v6("2001:db8::1", 7011)));
	ck_assert(net_rules_allow(&r, v6("fd12::1", 7204)));
	ck_assert(!net_rules_allow(&r, v6("fd12::1", 7203)));
	ck_assert(!net_rules_allow(&r, v6("fe80::1", 7204)));
	ck_assert(net_rules_allow(&r, v6("2001:db8::5", 9)));
	/* v4 in v6 clothes is v4 */
	ck_assert(net_rules_allow(&r, v6("::ffff:10.1.1.1", 1)));
	ck_assert(!net_rules_allow(&r, v6("::ffff:11.1.1.1", 1)));
}
END_TEST

START_TEST(test_odd_prefix)
{
	struct net_rules r = parse("172.16.0.0/12");
	ck_assert(net_rules_allow(&r, v4("172.31.255.255", 1)));
	ck_assert(!net_rules_allow(&r, v4("172.32.0.0", 1)));
	ck_assert(!net_rules_allow(&r, v4("172.15.255.255", 1)));
	r = parse("0.0.0.0/0");
	ck_assert(net_rules_allow(&r, v4("203.0.113.9", 80)));
	ck_assert(!net_rules_allow(&r, v6("::1", 80)));
}
END_TEST

START_TEST(test_bad_rules)
{
	static const char *const bad[] = {
		"10.0.0.0/33", "300.1.1.1", "10.0.0.1:70000", "10.0.0.1:9-8",
		"[fd00::/129]", "[fd00::", "fd00::1", "*/8", "host.example",
		"10.0.0.1:", "10.0.0.1:x", "[::1]x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct net_rules r = { .set = false };
		char err[256];
		ck_assert_msg(net_rules_parse(bad[i], &r, err, sizeof(err)) ==
				-EINVAL, "%s was taken", bad[i]);
		ck_assert(!r.set);
	}
	struct net_rules many;
	char err[256];
	ck_assert_int_eq(net_rules_parse("1.1.1.1,2.2.2.2,3.3.3.3,4.4.4.4,"
			"5.5.5.5,6.6.6.6,7.7.7.7,8.8.8.8,9.9.9.9,1.1.1.2,"
			"1.1.1.3,1.1.1.4,1.1.1.5,1.1.1.6,1.1.1.7,1.1.1.8,"
			"1.1.1.9", &many, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "more than 16"));
}
END_TEST

START_TEST(test_equal)
{
	struct net_rules a = parse("10.0.0.0/8:1-2"), b = parse("10.0.0.0/8:1-2");
	ck_assert(net_rules_equal(&a, &b));
	b = parse("10.0.0.0/8:1-3");
	ck_assert(!net_rules_equal(&a, &b));
}
END_TEST

START_TEST(test_ratelimit)
{
	struct ratelimit rl = { 0 };
	uint64_t report, t = 1000;
	for (int i = 0; i < RATELIMIT_BURST; i++) {
		ck_assert(ratelimit_take(&rl, t + (uint64_t)i, &report));
		ck_assert_uint_eq(report, 0);
	}
	for (int i = 0; i < 123; i++)
		ck_assert(!ratelimit_take(&rl, t + 100, &report));
	/* the next window: the count of the last comes first */
	ck_assert(ratelimit_take(&rl, t + RATELIMIT_WINDOW_NS, &report));
	ck_assert_uint_eq(report, 123);
	ck_assert(ratelimit_take(&rl, t + RATELIMIT_WINDOW_NS + 1, &report));
	ck_assert_uint_eq(report, 0);
	/* drained by a timer instead */
	for (int i = 0; i < RATELIMIT_BURST + 5; i++)
		(void) ratelimit_take(&rl, t + RATELIMIT_WINDOW_NS + 2, &report);
	ck_assert_uint_eq(ratelimit_drain(&rl), 7);
	ck_assert_uint_eq(ratelimit_drain(&rl), 0);
}
END_TEST

int
main(void)
{
	const TTest *const tc_rules[] = { test_unset_allows_all,
		test_none_and_any, test_prefixes_and_ports, test_odd_prefix,
		test_bad_rules, test_equal, test_ratelimit, NULL };
	const struct th_tcase tcases[] = {
		{ "rules", .tests = tc_rules },
	};
	return check_run(th_suite("netrules", tcases, TH_N(tcases)), CK_NORMAL);
}
