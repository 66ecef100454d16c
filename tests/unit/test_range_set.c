// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_range_set.c -- librpmaclient/range_set.c, the landing thread's
 * record of a process's registrations: an access lies in one range, not
 * across two that touch or overlap; a range added twice is there until
 * removed twice; and, against a plain list, thousands of random adds,
 * removes and questions over ranges that overlap a lot give the same
 * answers (the tree's furthest ends kept right through every rotation)
 */

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "range_set.h"
#include "th_suite.h"

START_TEST(one_range_not_two)
{
	struct range_set *s = range_set_new();
	ck_assert_ptr_nonnull(s);
	ck_assert(range_set_empty(s));
	ck_assert(!range_set_covers(s, 0, 0));
	ck_assert_int_eq(range_set_add(s, 100, 200), 0);
	ck_assert_int_eq(range_set_add(s, 200, 300), 0);
	ck_assert(!range_set_empty(s));
	ck_assert(range_set_covers(s, 100, 100));
	ck_assert(range_set_covers(s, 150, 50));
	ck_assert(range_set_covers(s, 200, 100));
	ck_assert(range_set_covers(s, 300, 0));
	ck_assert(!range_set_covers(s, 99, 2));
	ck_assert(!range_set_covers(s, 150, 100)); /* across both */
	ck_assert(!range_set_covers(s, 299, 2));
	ck_assert(!range_set_covers(s, 250, UINT64_MAX)); /* wraps */
	/* a wide one under both: now the access lies in one */
	ck_assert_int_eq(range_set_add(s, 50, 400), 0);
	ck_assert(range_set_covers(s, 150, 100));
	ck_assert(range_set_remove(s, 50, 400));
	ck_assert(!range_set_covers(s, 150, 100));
	ck_assert(!range_set_remove(s, 50, 400));
	ck_assert(!range_set_remove(s, 100, 300));
	range_set_delete(s);
}
END_TEST

START_TEST(twice_until_removed_twice)
{
	struct range_set *s = range_set_new();
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(range_set_add(s, 4096, 8192), 0);
	ck_assert_int_eq(range_set_add(s, 4096, 8192), 0);
	ck_assert(range_set_remove(s, 4096, 8192));
	ck_assert(range_set_covers(s, 4096, 4096));
	ck_assert(range_set_remove(s, 4096, 8192));
	ck_assert(!range_set_covers(s, 4096, 1));
	ck_assert(range_set_empty(s));
	range_set_delete(s);
}
END_TEST

#define SPACE 2000u /* small: the ranges overlap a lot */
#define OPS 40000
#define LIVE_MAX 600

struct plain {
	uint64_t start, end;
};

static bool
plain_covers(const struct plain *p, int n, uint64_t addr, uint64_t len)
{
	for (int i = 0; i < n; i++)
		if (p[i].start <= addr && addr + len <= p[i].end)
			return true;
	return false;
}

/* A few random questions, to the set and to the list. */
static void
ask(const struct range_set *s, const struct plain *live, int n, int op)
{
	for (int q = 0; q < 8; q++) {
		uint64_t a = (uint64_t) random() % (SPACE + 50);
		uint64_t len = (uint64_t) random() % 60;
		bool want = plain_covers(live, n, a, len);
		ck_assert_msg(range_set_covers(s, a, len) == want,
				"op %d: [%llu, +%llu) with %d ranges", op,
				(unsigned long long) a,
				(unsigned long long) len, n);
	}
}

START_TEST(as_a_plain_list)
{
	srandom(32);
	struct range_set *s = range_set_new();
	ck_assert_ptr_nonnull(s);
	static struct plain live[LIVE_MAX];
	int n = 0;
	for (int op = 0; op < OPS; op++) {
		long r = random() % 10;
		if ((r < 4 && n < LIVE_MAX) || n == 0) {
			uint64_t a = (uint64_t) random() % SPACE;
			uint64_t len = (uint64_t) random() %
					(r == 0 ? SPACE : 40);
			live[n++] = (struct plain){ a, a + len };
			ck_assert_int_eq(range_set_add(s, a, a + len), 0);
		} else if (r < 7) {
			int k = (int) (random() % n);
			ck_assert(range_set_remove(s, live[k].start,
					live[k].end));
			live[k] = live[--n];
		} else {
			ask(s, live, n, op);
		}
	}
	while (n > 0) {
		ck_assert(range_set_remove(s, live[n - 1].start,
				live[n - 1].end));
		n--;
		if (n % 50 == 0)
			for (uint64_t a = 0; a < SPACE; a += 7)
				ck_assert(range_set_covers(s, a, 5) ==
						plain_covers(live, n, a, 5));
	}
	ck_assert(range_set_empty(s));
	range_set_delete(s);
}
END_TEST

int
main(void)
{
	const struct th_test tc_set[] = { TH_TEST(one_range_not_two),
		TH_TEST(twice_until_removed_twice), TH_TEST(as_a_plain_list),
		TH_END };
	const struct th_tcase tcases[] = { { "set", .steps = tc_set } };
	return check_run(th_suite("range_set", tcases, TH_N(tcases)),
			CK_NORMAL);
}
