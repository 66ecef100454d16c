// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_staging.c -- librpmaclient/staging.c, a queue pair's staging ring:
 * a receive's bytes copied out ahead of its completion (as far as rpmad
 * said it filled them) are not copied again, the completion copies only
 * the rest, nothing goes past the receive's own length, and a slot taken
 * again starts from nothing
 */

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "staging.h"
#include "th_suite.h"

#define SIZE (1u << 20)
#define ENTRIES 8u
#define LEN 100000u

static uint8_t *base, *app;
static struct stage_ring ring;

static void
setup(void)
{
	base = calloc(1, SIZE);
	app = malloc(SIZE);
	ck_assert_ptr_nonnull(base);
	ck_assert_ptr_nonnull(app);
	memset(app, 0xee, SIZE);
	ck_assert_int_eq(staging_init(&ring, base, 0x1000, SIZE, 7, ENTRIES),
			0);
}

static void
teardown(void)
{
	staging_fini(&ring);
	free(app);
	free(base);
}

/* Takes room for a receive of `len` into app + `at`; its staging bytes. */
static uint8_t *
take_recv(uint32_t index, uint32_t retired, size_t at, size_t len)
{
	struct stage_req req = { .dst = app + at, .len = len };
	uint32_t lkey = 0;
	uint64_t laddr = 0;
	ck_assert(staging_take(&ring, index, retired, &req, &lkey, &laddr));
	ck_assert_uint_eq(lkey, 7);
	ck_assert_uint_ge(laddr, 0x1000);
	return base + (laddr - 0x1000);
}

static bool
all(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

START_TEST(ahead_then_the_rest)
{
	uint8_t *st = take_recv(0, 0, 0, LEN);
	memset(st, 0xa1, LEN); /* what rpmad put in */
	staging_deliver(&ring, 0, 30000);
	ck_assert(all(app, 30000, 0xa1));
	ck_assert(all(app + 30000, LEN - 30000, 0xee));
	/* an older, smaller count moves nothing back or again */
	memset(st, 0xb2, 30000);
	staging_deliver(&ring, 0, 20000);
	ck_assert(all(app, 30000, 0xa1));
	/* the completion copies only what was not copied yet */
	staging_deliver(&ring, 0, LEN);
	ck_assert(all(app, 30000, 0xa1));
	ck_assert(all(app + 30000, LEN - 30000, 0xa1));
	ck_assert(all(app + LEN, SIZE - LEN, 0xee));
}
END_TEST

START_TEST(never_past_the_receive)
{
	uint8_t *st = take_recv(0, 0, 64, 5000);
	memset(st, 0xc3, 8192); /* more than the receive is */
	staging_deliver(&ring, 0, UINT32_MAX);
	ck_assert(all(app, 64, 0xee));
	ck_assert(all(app + 64, 5000, 0xc3));
	ck_assert(all(app + 64 + 5000, 4096, 0xee));
	/* a shorter message than was copied ahead: nothing more */
	staging_deliver(&ring, 0, 100);
	ck_assert(all(app + 64 + 5000, 4096, 0xee));
}
END_TEST

START_TEST(a_slot_taken_again_starts_anew)
{
	for (uint32_t i = 0; i < ENTRIES; i++) {
		uint8_t *st = take_recv(i, i, 0, LEN);
		memset(st, (int) (0x10 + i), LEN);
		staging_deliver(&ring, i, LEN / 2); /* ahead */
		staging_deliver(&ring, i, LEN);
		ck_assert(all(app, LEN, (uint8_t) (0x10 + i)));
	}
	/* slot 0 again, for a new receive: nothing of it is copied yet */
	uint8_t *st = take_recv(ENTRIES, ENTRIES, 0, LEN);
	memset(st, 0x77, LEN);
	staging_deliver(&ring, ENTRIES, 4096);
	ck_assert(all(app, 4096, 0x77));
	ck_assert(all(app + 4096, LEN - 4096, 0x10 + ENTRIES - 1));
	staging_deliver(&ring, ENTRIES, LEN);
	ck_assert(all(app, LEN, 0x77));
}
END_TEST

START_TEST(nothing_for_what_staged_nothing)
{
	/* a send's source: staged in, nothing to copy out */
	uint8_t src[256];
	memset(src, 0x55, sizeof(src));
	struct stage_req req = { .src = src, .len = sizeof(src) };
	uint32_t lkey;
	uint64_t laddr;
	ck_assert(staging_take(&ring, 0, 0, &req, &lkey, &laddr));
	ck_assert(all(base + (laddr - 0x1000), sizeof(src), 0x55));
	staging_deliver(&ring, 0, sizeof(src));
	/* a receive too big for the ring names the application's memory */
	struct stage_req big = { .dst = app, .len = SIZE };
	ck_assert(!staging_take(&ring, 1, 1, &big, &lkey, &laddr));
	staging_deliver(&ring, 1, SIZE);
	ck_assert(all(app, SIZE, 0xee));
}
END_TEST

int
main(void)
{
	const struct th_test tc_ring[] = { TH_TEST(ahead_then_the_rest),
		TH_TEST(never_past_the_receive),
		TH_TEST(a_slot_taken_again_starts_anew),
		TH_TEST(nothing_for_what_staged_nothing), TH_END };
	const struct th_tcase tcases[] = { { "ring", .steps = tc_ring,
			.setup = setup, .teardown = teardown } };
	return check_run(th_suite("staging", tcases, TH_N(tcases)), CK_NORMAL);
}
