// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_qp_layout.c -- common/qp_region.c: where the rings of a queue pair
 * region go for any sizes, which sizes are refused, and that the client's
 * header check notices any changed layout field
 */

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qp_region.h"
#include "th_suite.h"

static const uint32_t depths[] = {
	0, 1, 2, 3, 7, 10, 16, 17, 100, 1000, 4096, 4097, 32767, 32768,
};
#define N_DEPTHS (sizeof(depths) / sizeof(depths[0]))

static int
is_pow2(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* the smallest power of two at least max(depth, 1) */
static uint32_t
ring_for(uint32_t depth)
{
	uint32_t p = 1;
	while (p < depth)
		p <<= 1;
	return p;
}

struct span {
	uint64_t start, end;
};

static void
check_layout(const struct qp_sizes *sz)
{
	struct qp_layout l;
	memset(&l, 0xee, sizeof(l));
	ck_assert_int_eq(qp_layout_compute(sz, &l), 0);

	/* rings: powers of two, as small as the depth allows */
	ck_assert_uint_eq(l.sq_entries, ring_for(sz->sq));
	ck_assert_uint_eq(l.rq_entries, ring_for(sz->rq));
	ck_assert_uint_eq(l.cq_entries, ring_for(sz->cq));
	ck_assert(is_pow2(l.sq_entries) && is_pow2(l.rq_entries) &&
			is_pow2(l.cq_entries));
	if (sz->rcq == 0) {
		/* no receive CQ: nothing for it */
		ck_assert_uint_eq(l.rcq_entries, 0);
		ck_assert_uint_eq(l.rcq_offset, 0);
	} else {
		ck_assert_uint_eq(l.rcq_entries, ring_for(sz->rcq));
	}

	/* arrays: cache-line aligned, after the header, apart, inside */
	struct span s[5] = {
		{ 0, sizeof(struct qp_region_header) },
		{ l.sq_offset, l.sq_offset +
			(uint64_t)l.sq_entries * sizeof(struct qp_sqe) },
		{ l.rq_offset, l.rq_offset +
			(uint64_t)l.rq_entries * sizeof(struct qp_rqe) },
		{ l.cq_offset, l.cq_offset +
			(uint64_t)l.cq_entries * sizeof(struct qp_cqe) },
		{ l.rcq_offset, l.rcq_offset +
			(uint64_t)l.rcq_entries * sizeof(struct qp_cqe) },
	};
	int n = l.rcq_entries ? 5 : 4;
	for (int i = 1; i < n; i++) {
		ck_assert_uint_eq(s[i].start % QP_CACHELINE, 0);
		ck_assert_uint_le(s[i].end, l.size);
		for (int j = 0; j < i; j++)
			ck_assert_msg(s[i].start >= s[j].end ||
					s[j].start >= s[i].end,
					"arrays %d and %d overlap", i, j);
	}
	ck_assert_uint_eq(l.size % 4096, 0);
	ck_assert_uint_ge(l.size, s[n - 1].end);
	/* no more than a page of slack */
	ck_assert_uint_lt(l.size - s[n - 1].end, 4096 + QP_CACHELINE);

	/* the accessors stay inside their arrays for any index */
	char *region = malloc(l.size);
	ck_assert_ptr_nonnull(region);
	const uint32_t idx[] = { 0, 1, l.sq_entries, UINT32_MAX };
	for (size_t i = 0; i < sizeof(idx) / sizeof(idx[0]); i++) {
		uintptr_t sq = (uintptr_t)qp_sq_slot(region, &l, idx[i]);
		ck_assert_uint_ge(sq, (uintptr_t)region + s[1].start);
		ck_assert_uint_lt(sq, (uintptr_t)region + s[1].end);
		uintptr_t rq = (uintptr_t)qp_rq_slot(region, &l, idx[i]);
		ck_assert_uint_ge(rq, (uintptr_t)region + s[2].start);
		ck_assert_uint_lt(rq, (uintptr_t)region + s[2].end);
		uintptr_t cq = (uintptr_t)qp_cq_slot(region, l.cq_offset,
				l.cq_entries, idx[i]);
		ck_assert_uint_ge(cq, (uintptr_t)region + s[3].start);
		ck_assert_uint_lt(cq, (uintptr_t)region + s[3].end);
	}
	free(region);
}

START_TEST(entry_sizes)
{
	/* fixed sizes: both sides compile this header */
	ck_assert_uint_eq(sizeof(struct qp_sqe), 64);
	ck_assert_uint_eq(sizeof(struct qp_rqe), 32);
	ck_assert_uint_eq(sizeof(struct qp_cqe), 48);
	ck_assert_uint_eq(QP_MAX_QUEUE_SIZE, 32768);
}
END_TEST

/* every combination of the depths above for one queue at a time */
START_TEST(layouts)
{
	for (size_t a = 0; a < N_DEPTHS; a++) {
		for (size_t b = 0; b < N_DEPTHS; b++) {
			uint32_t cq = depths[b] ? depths[b] : 1;
			struct qp_sizes sz[] = {
				{ depths[a], depths[b], cq, 0 },
				{ depths[b], depths[a], cq, depths[a] },
				{ 10, 10, cq, depths[a] },
				{ depths[a], 10, cq, depths[b] },
			};
			for (size_t i = 0; i < sizeof(sz) / sizeof(sz[0]); i++)
				check_layout(&sz[i]);
		}
	}
}
END_TEST

START_TEST(refused_sizes)
{
	struct qp_layout l;
	struct qp_sizes cq0 = { 10, 10, 0, 0 };
	ck_assert_int_eq(qp_layout_compute(&cq0, &l), -1);
	cq0.rcq = 10;
	ck_assert_int_eq(qp_layout_compute(&cq0, &l), -1);

	const uint32_t big[] = { QP_MAX_QUEUE_SIZE + 1, 65536, UINT32_MAX };
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		struct qp_sizes s[] = {
			{ big[i], 10, 10, 0 }, { 10, big[i], 10, 0 },
			{ 10, 10, big[i], 0 }, { 10, 10, 10, big[i] },
		};
		for (size_t k = 0; k < 4; k++)
			ck_assert_int_eq(qp_layout_compute(&s[k], &l), -1);
	}
	struct qp_sizes max = { QP_MAX_QUEUE_SIZE, QP_MAX_QUEUE_SIZE,
		QP_MAX_QUEUE_SIZE, QP_MAX_QUEUE_SIZE };
	check_layout(&max);
}
END_TEST

/* ------------------------------------------------------------ header */

static const struct qp_sizes hdr_sizes = { 10, 20, 30, 40 };

static struct qp_region_header *
fresh_header(uint64_t *size)
{
	struct qp_layout l;
	ck_assert_int_eq(qp_layout_compute(&hdr_sizes, &l), 0);
	struct qp_region_header *h = aligned_alloc(QP_CACHELINE,
			sizeof(*h));
	ck_assert_ptr_nonnull(h);
	memset(h, 0xee, sizeof(*h));
	qp_layout_init_header(h, &hdr_sizes, &l, 0x123456);
	*size = l.size;
	return h;
}

START_TEST(header_init)
{
	uint64_t size;
	struct qp_region_header *h = fresh_header(&size);
	struct qp_layout l;
	ck_assert_int_eq(qp_layout_compute(&hdr_sizes, &l), 0);

	ck_assert_uint_eq(h->magic, QP_REGION_MAGIC);
	ck_assert_uint_eq(h->version, QP_REGION_VERSION);
	ck_assert_uint_eq(h->qp_num, 0x123456);
	ck_assert_uint_eq(h->region_size, l.size);
	ck_assert_uint_eq(h->sq_entries, l.sq_entries);
	ck_assert_uint_eq(h->rcq_entries, l.rcq_entries);
	ck_assert_uint_eq(h->sq_depth, 10);
	ck_assert_uint_eq(h->rcq_depth, 40);
	ck_assert_uint_eq(h->cq_offset, l.cq_offset);
	ck_assert_uint_eq(atomic_load(&h->state), QP_STATE_INIT);
	ck_assert_uint_eq(atomic_load(&h->need_wakeup), 0);
	ck_assert_uint_eq(atomic_load(&h->cq_space_wanted), 0);
	/* armed from the start, as librpma arms its CQs */
	ck_assert_uint_eq(atomic_load(&h->cq_armed), 1);
	ck_assert_uint_eq(atomic_load(&h->rcq_armed), 1);

	ck_assert_int_eq(qp_layout_check_header(h, &hdr_sizes, size), 0);
	free(h);
}
END_TEST

/* what the check compares: every field that places something */
#define FIELD(f) { #f, offsetof(struct qp_region_header, f), \
	sizeof(((struct qp_region_header *)0)->f) }
static const struct {
	const char *name;
	size_t offset, size;
} layout_fields[] = {
	FIELD(magic), FIELD(version), FIELD(region_size),
	FIELD(sq_entries), FIELD(rq_entries), FIELD(cq_entries),
	FIELD(rcq_entries),
	FIELD(sq_offset), FIELD(rq_offset), FIELD(cq_offset),
	FIELD(rcq_offset),
};
#define N_FIELDS (sizeof(layout_fields) / sizeof(layout_fields[0]))

/* any change of any bit of a layout field is noticed (loop: the field) */
START_TEST(header_check_field)
{
	uint64_t size;
	struct qp_region_header *h = fresh_header(&size);
	uint8_t *p = (uint8_t *)h + layout_fields[_i].offset;
	for (size_t byte = 0; byte < layout_fields[_i].size; byte++) {
		for (int bit = 0; bit < 8; bit++) {
			p[byte] ^= (uint8_t)(1u << bit);
			ck_assert_msg(qp_layout_check_header(h, &hdr_sizes,
					size) == -1, "%s byte %zu bit %d",
					layout_fields[_i].name, byte, bit);
			p[byte] ^= (uint8_t)(1u << bit);
		}
	}
	ck_assert_int_eq(qp_layout_check_header(h, &hdr_sizes, size), 0);
	free(h);
}
END_TEST

START_TEST(header_check_sizes)
{
	uint64_t size;
	struct qp_region_header *h = fresh_header(&size);

	/* another region size */
	ck_assert_int_eq(qp_layout_check_header(h, &hdr_sizes, size + 4096),
			-1);
	ck_assert_int_eq(qp_layout_check_header(h, &hdr_sizes, size - 4096),
			-1);
	ck_assert_int_eq(qp_layout_check_header(h, &hdr_sizes, 0), -1);
	/* sizes that need other rings */
	struct qp_sizes other[] = {
		{ 17, 20, 30, 40 }, { 10, 33, 30, 40 }, { 10, 20, 33, 40 },
		{ 10, 20, 30, 0 }, { 10, 20, 30, 65 },
	};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		ck_assert_int_eq(qp_layout_check_header(h, &other[i], size),
				-1);
	/* sizes the layout refuses */
	struct qp_sizes bad = { 10, 20, 0, 40 };
	ck_assert_int_eq(qp_layout_check_header(h, &bad, size), -1);
	/* the same rings from other depths are the same layout */
	struct qp_sizes same = { 9, 17, 31, 33 };
	ck_assert_int_eq(qp_layout_check_header(h, &same, size), 0);
	free(h);
}
END_TEST

int
main(void)
{
	const TTest *const tc_layout[] = { entry_sizes, layouts, refused_sizes,
		NULL };
	const struct th_test tc_header[] = { TH_TEST(header_init),
		TH_LOOP(header_check_field, 0, N_FIELDS),
		TH_TEST(header_check_sizes), TH_END };
	const struct th_tcase tcases[] = {
		/* every combination, each region malloc'ed: slow under ASan */
		{ "layout", .tests = tc_layout, .timeout = 120 },
		{ "header", .steps = tc_header },
	};
	return check_run(th_suite("qp_layout", tcases, TH_N(tcases)),
			CK_NORMAL);
}
