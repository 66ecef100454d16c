// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_api_cfg.c -- rpma_conn_cfg_* and rpma_peer_cfg_*: defaults, every
 * setter and getter, their argument errors, the 1-byte peer descriptor
 */

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "api_helpers.h"

/* ------------------------------------------------------------ conn_cfg */

START_TEST(conn_cfg_new_and_defaults)
{
	ck_assert_int_eq(rpma_conn_cfg_new(NULL), RPMA_E_INVAL);

	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);
	ck_assert_ptr_nonnull(cfg);

	int timeout = -1;
	uint32_t v = 12345;
	ck_assert_int_eq(rpma_conn_cfg_get_timeout(cfg, &timeout), 0);
	ck_assert_int_eq(timeout, RPMA_DEFAULT_TIMEOUT_MS);
	ck_assert_int_eq(timeout, 1000);
	ck_assert_int_eq(rpma_conn_cfg_get_cq_size(cfg, &v), 0);
	ck_assert_uint_eq(v, 10);
	ck_assert_int_eq(rpma_conn_cfg_get_rcq_size(cfg, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(rpma_conn_cfg_get_sq_size(cfg, &v), 0);
	ck_assert_uint_eq(v, 10);
	ck_assert_int_eq(rpma_conn_cfg_get_rq_size(cfg, &v), 0);
	ck_assert_uint_eq(v, 10);

	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
	ck_assert_ptr_null(cfg);
}
END_TEST

START_TEST(conn_cfg_delete_args)
{
	ck_assert_int_eq(rpma_conn_cfg_delete(NULL), RPMA_E_INVAL);
	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
	ck_assert_ptr_null(cfg);
}
END_TEST

START_TEST(conn_cfg_timeout)
{
	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);

	ck_assert_int_eq(rpma_conn_cfg_set_timeout(NULL, 5), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_cfg_set_timeout(cfg, -1), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_conn_cfg_set_timeout(cfg, INT_MIN),
			RPMA_E_INVAL);

	int t = 77;
	ck_assert_int_eq(rpma_conn_cfg_get_timeout(NULL, &t), RPMA_E_INVAL);
	ck_assert_int_eq(t, 77);	/* untouched on failure */
	ck_assert_int_eq(rpma_conn_cfg_get_timeout(cfg, NULL), RPMA_E_INVAL);
	/* a refused value leaves the old one */
	ck_assert_int_eq(rpma_conn_cfg_get_timeout(cfg, &t), 0);
	ck_assert_int_eq(t, 1000);

	const int good[] = { 0, 1, 999, 1000, 60000, INT_MAX };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_int_eq(rpma_conn_cfg_set_timeout(cfg, good[i]), 0);
		ck_assert_int_eq(rpma_conn_cfg_get_timeout(cfg, &t), 0);
		ck_assert_int_eq(t, good[i]);
	}
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
}
END_TEST

typedef int set_fn(struct rpma_conn_cfg *, uint32_t);
typedef int get_fn(const struct rpma_conn_cfg *, uint32_t *);

static const struct {
	const char *name;
	set_fn *set;
	get_fn *get;
} queue_sizes[] = {
	{ "cq", rpma_conn_cfg_set_cq_size, rpma_conn_cfg_get_cq_size },
	{ "rcq", rpma_conn_cfg_set_rcq_size, rpma_conn_cfg_get_rcq_size },
	{ "sq", rpma_conn_cfg_set_sq_size, rpma_conn_cfg_get_sq_size },
	{ "rq", rpma_conn_cfg_set_rq_size, rpma_conn_cfg_get_rq_size },
};

/* One test per queue (loop index): setter, getter, argument errors. */
START_TEST(conn_cfg_queue_size)
{
	set_fn *set = queue_sizes[_i].set;
	get_fn *get = queue_sizes[_i].get;
	struct rpma_conn_cfg *cfg = NULL;
	ck_assert_int_eq(rpma_conn_cfg_new(&cfg), 0);

	ck_assert_int_eq(set(NULL, 5), RPMA_E_INVAL);
	uint32_t v = 4242;
	ck_assert_int_eq(get(NULL, &v), RPMA_E_INVAL);
	ck_assert_uint_eq(v, 4242);
	ck_assert_int_eq(get(cfg, NULL), RPMA_E_INVAL);

	/* the setters keep any value; rpmad judges it at connection time */
	const uint32_t values[] = { 0, 1, 10, 32768, 32769, UINT32_MAX };
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		ck_assert_int_eq(set(cfg, values[i]), 0);
		ck_assert_int_eq(get(cfg, &v), 0);
		ck_assert_msg(v == values[i], "%s: set %u, got %u",
				queue_sizes[_i].name, values[i], v);
	}

	/* the queues are independent of each other */
	ck_assert_int_eq(set(cfg, 7), 0);
	for (size_t q = 0; q < sizeof(queue_sizes) / sizeof(queue_sizes[0]);
			q++) {
		if ((int)q == _i)
			continue;
		ck_assert_int_eq(queue_sizes[q].get(cfg, &v), 0);
		ck_assert_uint_ne(v, 7);
	}
	ck_assert_int_eq(rpma_conn_cfg_delete(&cfg), 0);
}
END_TEST

/* ------------------------------------------------------------ peer_cfg */

START_TEST(peer_cfg_new_delete)
{
	ck_assert_int_eq(rpma_peer_cfg_new(NULL), RPMA_E_INVAL);
	ck_assert_int_eq(rpma_peer_cfg_delete(NULL), RPMA_E_INVAL);

	struct rpma_peer_cfg *pcfg = NULL;
	ck_assert_int_eq(rpma_peer_cfg_delete(&pcfg), 0);
	ck_assert_int_eq(rpma_peer_cfg_new(&pcfg), 0);
	ck_assert_ptr_nonnull(pcfg);

	/* direct write to pmem is off until declared */
	bool supported = true;
	ck_assert_int_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg,
			&supported), 0);
	ck_assert(!supported);

	ck_assert_int_eq(rpma_peer_cfg_delete(&pcfg), 0);
	ck_assert_ptr_null(pcfg);
}
END_TEST

START_TEST(peer_cfg_direct_write)
{
	struct rpma_peer_cfg *pcfg = NULL;
	ck_assert_int_eq(rpma_peer_cfg_new(&pcfg), 0);

	ck_assert_int_eq(rpma_peer_cfg_set_direct_write_to_pmem(NULL, true),
			RPMA_E_INVAL);
	bool supported = true;
	ck_assert_int_eq(rpma_peer_cfg_get_direct_write_to_pmem(NULL,
			&supported), RPMA_E_INVAL);
	ck_assert(supported);	/* untouched */
	ck_assert_int_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, NULL),
			RPMA_E_INVAL);

	ck_assert_int_eq(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true),
			0);
	ck_assert_int_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg,
			&supported), 0);
	ck_assert(supported);
	ck_assert_int_eq(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, false),
			0);
	ck_assert_int_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg,
			&supported), 0);
	ck_assert(!supported);
	ck_assert_int_eq(rpma_peer_cfg_delete(&pcfg), 0);
}
END_TEST

START_TEST(peer_cfg_descriptor_args)
{
	struct rpma_peer_cfg *pcfg = NULL;
	ck_assert_int_eq(rpma_peer_cfg_new(&pcfg), 0);

	size_t size = 99;
	ck_assert_int_eq(rpma_peer_cfg_get_descriptor_size(NULL, &size),
			RPMA_E_INVAL);
	ck_assert_uint_eq(size, 99);
	ck_assert_int_eq(rpma_peer_cfg_get_descriptor_size(pcfg, NULL),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_peer_cfg_get_descriptor_size(pcfg, &size), 0);
	ck_assert_uint_eq(size, 1);

	uint8_t desc = 0xaa;
	ck_assert_int_eq(rpma_peer_cfg_get_descriptor(NULL, &desc),
			RPMA_E_INVAL);
	ck_assert_uint_eq(desc, 0xaa);
	ck_assert_int_eq(rpma_peer_cfg_get_descriptor(pcfg, NULL),
			RPMA_E_INVAL);

	struct rpma_peer_cfg *out = (struct rpma_peer_cfg *)&desc;
	ck_assert_int_eq(rpma_peer_cfg_from_descriptor(NULL, 1, &out),
			RPMA_E_INVAL);
	/* untouched on failure */
	ck_assert_ptr_eq(out, (struct rpma_peer_cfg *)&desc);
	ck_assert_int_eq(rpma_peer_cfg_from_descriptor(&desc, 1, NULL),
			RPMA_E_INVAL);
	/* our decision: only the 1-byte descriptor is a peer descriptor */
	ck_assert_int_eq(rpma_peer_cfg_from_descriptor(&desc, 0, &out),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_peer_cfg_from_descriptor(&desc, 2, &out),
			RPMA_E_INVAL);
	ck_assert_ptr_eq(out, (struct rpma_peer_cfg *)&desc);

	ck_assert_int_eq(rpma_peer_cfg_delete(&pcfg), 0);
}
END_TEST

/* get_descriptor -> bytes -> from_descriptor, both values (loop index) */
START_TEST(peer_cfg_descriptor_round_trip)
{
	bool value = _i != 0;
	struct rpma_peer_cfg *pcfg = NULL;
	ck_assert_int_eq(rpma_peer_cfg_new(&pcfg), 0);
	ck_assert_int_eq(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, value),
			0);

	uint8_t desc[4] = { 0xee, 0xee, 0xee, 0xee };
	ck_assert_int_eq(rpma_peer_cfg_get_descriptor(pcfg, desc), 0);
	ck_assert_uint_eq(desc[0], value ? 1 : 0);
	/* exactly one byte is written */
	ck_assert_uint_eq(desc[1], 0xee);

	struct rpma_peer_cfg *copy = NULL;
	ck_assert_int_eq(rpma_peer_cfg_from_descriptor(desc, 1, &copy), 0);
	ck_assert_ptr_nonnull(copy);
	bool supported = !value;
	ck_assert_int_eq(rpma_peer_cfg_get_direct_write_to_pmem(copy,
			&supported), 0);
	ck_assert(supported == value);

	ck_assert_int_eq(rpma_peer_cfg_delete(&copy), 0);
	ck_assert_int_eq(rpma_peer_cfg_delete(&pcfg), 0);
}
END_TEST

/* any byte other than 0 reads as "supported", as a bool would */
START_TEST(peer_cfg_descriptor_any_byte)
{
	for (unsigned b = 0; b < 256; b++) {
		uint8_t desc = (uint8_t)b;
		struct rpma_peer_cfg *pcfg = NULL;
		ck_assert_int_eq(rpma_peer_cfg_from_descriptor(&desc, 1,
				&pcfg), 0);
		bool supported = b == 0;
		ck_assert_int_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg,
				&supported), 0);
		ck_assert(supported == (b != 0));
		ck_assert_int_eq(rpma_peer_cfg_delete(&pcfg), 0);
	}
}
END_TEST

int
main(void)
{
	const struct th_test tc_conn_cfg[] = {
		TH_TEST(conn_cfg_new_and_defaults),
		TH_TEST(conn_cfg_delete_args), TH_TEST(conn_cfg_timeout),
		TH_LOOP(conn_cfg_queue_size, 0,
				sizeof(queue_sizes) / sizeof(queue_sizes[0])),
		TH_END
	};
	const struct th_test tc_peer_cfg[] = { TH_TEST(peer_cfg_new_delete),
		TH_TEST(peer_cfg_direct_write),
		TH_TEST(peer_cfg_descriptor_args),
		TH_LOOP(peer_cfg_descriptor_round_trip, 0, 2),
		TH_TEST(peer_cfg_descriptor_any_byte), TH_END };
	const struct th_tcase tcases[] = {
		{ "conn_cfg", .steps = tc_conn_cfg },
		{ "peer_cfg", .steps = tc_peer_cfg },
	};
	return api_run(th_suite("api_cfg", tcases, TH_N(tcases)));
}
