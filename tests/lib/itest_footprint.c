// SPDX-License-Identifier: BSD-3-Clause
/*
 * itest_footprint.c -- a daemon's resources, descriptors and mappings, compared
 * with a baseline (see footprint.h)
 */

#include <stdio.h>
#include <string.h>

#include "footprint.h"

void
footprint_now(struct it_admin *adm, pid_t daemon, struct footprint *f)
{
	memset(f, 0, sizeof(*f));
	ck_assert_int_eq(it_admin_status(adm, &f->counts), 0);
	f->fds = it_proc_fds(daemon);
	f->shared_maps = it_proc_maps(daemon, IT_MAPS_SHARED);
	f->maps = IT_ASAN ? 0 : it_proc_maps(daemon, IT_MAPS_ALL);
	ck_assert(f->fds > 0 && f->shared_maps >= 0 && f->maps >= 0);
}

static int
same(const struct footprint *a, const struct footprint *b)
{
	return memcmp(&a->counts, &b->counts, sizeof(a->counts)) == 0 &&
		a->fds == b->fds && a->shared_maps == b->shared_maps &&
		a->maps == b->maps;
}

static const char *
describe(const struct footprint *f, char *buf, size_t len)
{
	const struct it_counts *c = &f->counts;
	(void) snprintf(buf, len, "clients %u peers %u mrs %u endpoints %u "
			"requests %u connections %u pinned %llu fds %d shared "
			"maps %d maps %d", c->sessions, c->peers, c->mrs,
			c->endpoints, c->conn_reqs, c->connections,
			(unsigned long long)c->pinned_bytes, f->fds,
			f->shared_maps, f->maps);
	return buf;
}

long
footprint_expect(struct it_admin *adm, pid_t daemon,
		const struct footprint *want, int bound_ms, const char *when)
{
	uint64_t start = it_now_ms();
	uint64_t end = start + (uint64_t)bound_ms;
	struct footprint now;
	for (;;) {
		footprint_now(adm, daemon, &now);
		if (same(&now, want) || it_now_ms() >= end)
			break;
		it_sleep_ms(5);
	}
	char a[256], b[256];
	ck_assert_msg(same(&now, want), "%s: rpmad holds {%s} after %d ms, "
			"wanted {%s}", when, describe(&now, a, sizeof(a)),
			bound_ms, describe(want, b, sizeof(b)));
	return (long)(it_now_ms() - start);
}

long
footprint_expect_no_conns(struct it_admin *adm, int bound_ms,
		const char *when)
{
	uint64_t start = it_now_ms();
	uint64_t end = start + (uint64_t)bound_ms;
	struct it_counts c;
	for (;;) {
		ck_assert_int_eq(it_admin_status(adm, &c), 0);
		if ((c.connections == 0 && c.conn_reqs == 0) ||
				it_now_ms() >= end)
			break;
		it_sleep_ms(5);
	}
	ck_assert_msg(c.connections == 0 && c.conn_reqs == 0, "%s: rpmad "
			"still holds %u connections and %u requests after %d "
			"ms", when, c.connections, c.conn_reqs, bound_ms);
	return (long)(it_now_ms() - start);
}
