// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_api_mr_remote.c -- rpma_mr_remote_from_descriptor and the
 * rpma_mr_remote_* getters on hand-made 21-byte descriptors:
 * addr LE u64, length LE u64, rkey LE u32, usage u8
 */

#include <stdint.h>
#include <string.h>

#include "api_helpers.h"

#define DESC_SIZE 21
#define FLUSH_BITS (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | \
		RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)

static void
put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
make_desc(uint8_t desc[DESC_SIZE], uint64_t addr, uint64_t len,
		uint32_t rkey, uint8_t usage)
{
	put_le(desc, addr, 8);
	put_le(desc + 8, len, 8);
	put_le(desc + 16, rkey, 4);
	desc[20] = usage;
}

/* a sentinel that no call may overwrite on failure */
#define UNTOUCHED ((struct rpma_mr_remote *)(uintptr_t)0x5a5a5a5a)

START_TEST(usage_values_are_abi)
{
	ck_assert_int_eq(RPMA_MR_USAGE_READ_SRC, 1 << 0);
	ck_assert_int_eq(RPMA_MR_USAGE_READ_DST, 1 << 1);
	ck_assert_int_eq(RPMA_MR_USAGE_WRITE_SRC, 1 << 2);
	ck_assert_int_eq(RPMA_MR_USAGE_WRITE_DST, 1 << 3);
	ck_assert_int_eq(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, 1 << 4);
	ck_assert_int_eq(RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, 1 << 5);
	ck_assert_int_eq(RPMA_MR_USAGE_SEND, 1 << 6);
	ck_assert_int_eq(RPMA_MR_USAGE_RECV, 1 << 7);
}
END_TEST

START_TEST(from_descriptor_args)
{
	uint8_t desc[32];
	make_desc(desc, 0x1000, 0x100, 7, RPMA_MR_USAGE_READ_SRC);
	struct rpma_mr_remote *mr = UNTOUCHED;

	ck_assert_int_eq(rpma_mr_remote_from_descriptor(NULL, DESC_SIZE, &mr),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, DESC_SIZE, NULL),
			RPMA_E_INVAL);
	/* incompatible sizes, including the 24 bytes apps reserve */
	const size_t sizes[] = { 0, 1, 20, 22, 24, 32 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, sizes[i],
				&mr), RPMA_E_INVAL);
	ck_assert_ptr_eq(mr, UNTOUCHED);
}
END_TEST

START_TEST(from_descriptor_not_a_region)
{
	uint8_t desc[DESC_SIZE];
	struct rpma_mr_remote *mr = UNTOUCHED;

	/* usage 0: no usage, not a memory region */
	make_desc(desc, 0x1000, 0x100, 7, 0);
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, DESC_SIZE, &mr),
			RPMA_E_NOSUPP);
	/* a range that wraps around the address space */
	make_desc(desc, UINT64_MAX - 0xff, 0x200, 7, RPMA_MR_USAGE_READ_SRC);
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, DESC_SIZE, &mr),
			RPMA_E_NOSUPP);
	/* an empty region (rpma_mr_reg refuses size 0) */
	make_desc(desc, 0x1000, 0, 7, RPMA_MR_USAGE_READ_SRC);
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, DESC_SIZE, &mr),
			RPMA_E_NOSUPP);
	ck_assert_ptr_eq(mr, UNTOUCHED);
}
END_TEST

START_TEST(from_descriptor_layout)
{
	uint8_t desc[DESC_SIZE];
	make_desc(desc, 0x0011223344556677ull, 0x0000010203040506ull,
			0xdeadbeefu, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	struct rpma_mr_remote *mr = NULL;
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, DESC_SIZE, &mr),
			0);
	ck_assert_ptr_nonnull(mr);

	size_t size = 0;
	ck_assert_int_eq(rpma_mr_remote_get_size(mr, &size), 0);
	ck_assert_uint_eq(size, 0x0000010203040506ull);
	int flush_type = -1;
	ck_assert_int_eq(rpma_mr_remote_get_flush_type(mr, &flush_type), 0);
	ck_assert_int_eq(flush_type, RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);

	/* the descriptor was copied: changing it changes nothing */
	memset(desc, 0, sizeof(desc));
	ck_assert_int_eq(rpma_mr_remote_get_size(mr, &size), 0);
	ck_assert_uint_eq(size, 0x0000010203040506ull);

	ck_assert_int_eq(rpma_mr_remote_delete(&mr), 0);
	ck_assert_ptr_null(mr);
}
END_TEST

/* a descriptor needs no alignment: it travels inside other messages */
START_TEST(from_descriptor_unaligned)
{
	uint8_t buf[DESC_SIZE + 3];
	make_desc(buf + 3, 0x4000, 12345, 1, RPMA_MR_USAGE_READ_SRC);
	struct rpma_mr_remote *mr = NULL;
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(buf + 3, DESC_SIZE,
			&mr), 0);
	size_t size = 0;
	ck_assert_int_eq(rpma_mr_remote_get_size(mr, &size), 0);
	ck_assert_uint_eq(size, 12345);
	ck_assert_int_eq(rpma_mr_remote_delete(&mr), 0);
}
END_TEST

/* every usage byte but 0 is a region; its flush type is the flush bits */
START_TEST(from_descriptor_every_usage)
{
	for (unsigned usage = 1; usage < 256; usage++) {
		uint8_t desc[DESC_SIZE];
		make_desc(desc, 0x10000, 4096, usage * 3, (uint8_t)usage);
		struct rpma_mr_remote *mr = NULL;
		ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc,
				DESC_SIZE, &mr), 0);
		int flush_type = -1;
		ck_assert_int_eq(rpma_mr_remote_get_flush_type(mr,
				&flush_type), 0);
		ck_assert_int_eq(flush_type, (int)(usage & FLUSH_BITS));
		ck_assert_int_eq(rpma_mr_remote_delete(&mr), 0);
	}
}
END_TEST

START_TEST(from_descriptor_extremes)
{
	uint8_t desc[DESC_SIZE];
	struct rpma_mr_remote *mr = NULL;
	size_t size = 0;

	/* the last byte of the address space, and the whole of it but one */
	make_desc(desc, UINT64_MAX - 1, 1, 0, RPMA_MR_USAGE_READ_SRC);
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, DESC_SIZE, &mr),
			0);
	ck_assert_int_eq(rpma_mr_remote_delete(&mr), 0);
	make_desc(desc, 0, UINT64_MAX, UINT32_MAX, RPMA_MR_USAGE_READ_SRC);
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, DESC_SIZE, &mr),
			0);
	ck_assert_int_eq(rpma_mr_remote_get_size(mr, &size), 0);
	ck_assert_uint_eq(size, (size_t)UINT64_MAX);
	ck_assert_int_eq(rpma_mr_remote_delete(&mr), 0);
}
END_TEST

START_TEST(getters_args)
{
	uint8_t desc[DESC_SIZE];
	make_desc(desc, 0x1000, 0x100, 7, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct rpma_mr_remote *mr = NULL;
	ck_assert_int_eq(rpma_mr_remote_from_descriptor(desc, DESC_SIZE, &mr),
			0);

	size_t size = 77;
	ck_assert_int_eq(rpma_mr_remote_get_size(NULL, &size), RPMA_E_INVAL);
	ck_assert_uint_eq(size, 77);
	ck_assert_int_eq(rpma_mr_remote_get_size(mr, NULL), RPMA_E_INVAL);

	int flush_type = 77;
	ck_assert_int_eq(rpma_mr_remote_get_flush_type(NULL, &flush_type),
			RPMA_E_INVAL);
	ck_assert_int_eq(flush_type, 77);
	ck_assert_int_eq(rpma_mr_remote_get_flush_type(mr, NULL),
			RPMA_E_INVAL);
	ck_assert_int_eq(rpma_mr_remote_get_flush_type(mr, &flush_type), 0);
	ck_assert_int_eq(flush_type, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);

	ck_assert_int_eq(rpma_mr_remote_delete(&mr), 0);
}
END_TEST

START_TEST(delete_args)
{
	ck_assert_int_eq(rpma_mr_remote_delete(NULL), RPMA_E_INVAL);
	struct rpma_mr_remote *mr = NULL;
	ck_assert_int_eq(rpma_mr_remote_delete(&mr), 0);
	ck_assert_ptr_null(mr);
}
END_TEST

int
main(void)
{
	const TTest *const tc_descriptor[] = { usage_values_are_abi,
		from_descriptor_args, from_descriptor_not_a_region,
		from_descriptor_layout, from_descriptor_unaligned,
		from_descriptor_every_usage, from_descriptor_extremes, NULL };
	const TTest *const tc_getters[] = { getters_args, delete_args, NULL };
	const struct th_tcase tcases[] = {
		{ "descriptor", .tests = tc_descriptor },
		{ "getters", .tests = tc_getters },
	};
	return api_run(th_suite("api_mr_remote", tcases, TH_N(tcases)));
}
