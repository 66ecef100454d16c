// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_stream_halt.c -- common/stream_halt.h, the record both threads that
 * do batches keep of the streams that lost bytes: stream 0 is never
 * halted, a halted stream stays so while fewer than STREAM_HALT_MAX others
 * halt after it, and halting one twice takes one place
 */

#include <check.h>
#include <stdint.h>

#include "stream_halt.h"
#include "th_suite.h"

START_TEST(none_is_no_stream)
{
	struct stream_halt h = { 0 };
	ck_assert(!stream_halted(&h, 0));
	stream_halt(&h, 0);
	ck_assert(!stream_halted(&h, 0));
	ck_assert_uint_eq(h.next, 0);
}
END_TEST

START_TEST(halted_stays)
{
	struct stream_halt h = { 0 };
	stream_halt(&h, 7);
	ck_assert(stream_halted(&h, 7));
	ck_assert(!stream_halted(&h, 8));
	/* STREAM_HALT_MAX - 1 others after it: 7 is still halted */
	for (uint64_t id = 100; id < 100 + STREAM_HALT_MAX - 1; id++)
		stream_halt(&h, id);
	ck_assert(stream_halted(&h, 7));
	for (uint64_t id = 100; id < 100 + STREAM_HALT_MAX - 1; id++)
		ck_assert(stream_halted(&h, id));
	/* one more: the oldest, 7, gives its place */
	stream_halt(&h, 1000);
	ck_assert(!stream_halted(&h, 7));
	ck_assert(stream_halted(&h, 1000));
}
END_TEST

START_TEST(twice_is_once)
{
	struct stream_halt h = { 0 };
	stream_halt(&h, 5);
	stream_halt(&h, 5);
	ck_assert_uint_eq(h.next, 1);
	for (uint64_t id = 10; id < 10 + STREAM_HALT_MAX - 1; id++)
		stream_halt(&h, id);
	ck_assert(stream_halted(&h, 5));
}
END_TEST

int
main(void)
{
	const struct th_test tc_halt[] = { TH_TEST(none_is_no_stream),
		TH_TEST(halted_stays), TH_TEST(twice_is_once), TH_END };
	const struct th_tcase tcases[] = { { "halt", .steps = tc_halt } };
	return check_run(th_suite("stream_halt", tcases, TH_N(tcases)),
			CK_NORMAL);
}
