// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_qp_ring.c -- common/qp_ring.h, the ring steps both sides take: a
 * full ring, indices that wrap around 2^32, a tail or head that jumped
 * (corruption, nothing read), garbage and torn entries (only the private
 * copy counts), the wake-up flags, and one producer and one consumer
 * thread passing entries through a small ring
 */

#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qp_region.h"
#include "qp_ring.h"
#include "th_suite.h"

/* A region as rpmad makes it, and its SQ and CQ as both sides see them. */
struct fixture {
	void *region;
	struct qp_region_header *hdr;
	struct qp_layout layout;
	struct qp_ring sq, cq;
};

static void
fixture_open(struct fixture *f, uint32_t sq, uint32_t cq)
{
	struct qp_sizes sizes = { sq, 1, cq, 0 };
	ck_assert_int_eq(qp_layout_compute(&sizes, &f->layout), 0);
	f->region = aligned_alloc(4096, f->layout.size);
	ck_assert_ptr_nonnull(f->region);
	memset(f->region, 0, f->layout.size);
	f->hdr = f->region;
	qp_layout_init_header(f->hdr, &sizes, &f->layout, 1);
	qp_ring_init(&f->sq, f->region, f->layout.sq_offset,
			f->layout.sq_entries, &f->hdr->sq);
	qp_ring_init(&f->cq, f->region, f->layout.cq_offset,
			f->layout.cq_entries, &f->hdr->cq);
}

static void
fixture_close(struct fixture *f)
{
	free(f->region);
}

/* Both indices of a ring at `at`, as after that many entries passed. */
static void
ring_at(const struct qp_ring *r, uint32_t at)
{
	atomic_store(&r->idx->head, at);
	atomic_store(&r->idx->tail, at);
}

static struct qp_sqe
sqe_of(uint32_t i)
{
	return (struct qp_sqe){
		.opcode = (uint8_t)(i % QP_OP_MAX), .flags = (uint8_t)i,
		.imm = ~i, .wr_id = (uint64_t)i << 32 | i, .laddr = i * 3ull,
		.lkey = i ^ 0x5a5a5a5a, .length = i, .raddr = i * 7ull,
		.rkey = i + 1,
	};
}

static void
assert_sqe_of(const struct qp_sqe *e, uint32_t i)
{
	struct qp_sqe want = sqe_of(i);
	ck_assert_msg(memcmp(e, &want, sizeof(want)) == 0,
			"entry %u is not what was put there", i);
}

/* The slot of every index lies inside the ring's entry array. */
static void
assert_slot_inside(const struct fixture *f, const struct qp_ring *r,
		uint32_t i, size_t size)
{
	char *slot = qp_ring_slot(r, i, size);
	ck_assert(slot >= r->slots);
	ck_assert(slot + size <= r->slots + (size_t)r->entries * size);
	ck_assert(slot + size <= (char *)f->region + f->layout.size);
}

/* --------------------------------------------------------- one thread */

START_TEST(empty)
{
	struct fixture f;
	fixture_open(&f, 8, 8);
	uint32_t head = atomic_load(&f.hdr->sq.head), avail = 99;
	struct qp_sqe out;
	memset(&out, 0xab, sizeof(out));
	struct qp_sqe before = out;
	ck_assert_int_eq(qp_ring_avail(&f.sq, head, &avail), 0);
	ck_assert_uint_eq(avail, 0);
	ck_assert(!qp_ring_pending(&f.sq, head));
	ck_assert_int_eq(qp_ring_take(&f.sq, &head, &out, sizeof(out)), 0);
	ck_assert_uint_eq(head, 0);
	ck_assert_int_eq(memcmp(&out, &before, sizeof(out)), 0);
	fixture_close(&f);
}
END_TEST

/* fill to the last slot, find it full, empty it in order (loop: start) */
static const uint32_t starts[] = { 0, 5, UINT32_MAX - 3, UINT32_MAX };

START_TEST(full_ring)
{
	struct fixture f;
	fixture_open(&f, 8, 8);
	uint32_t start = starts[_i];
	ring_at(&f.sq, start);
	uint32_t tail = start, head = start, used;

	for (uint32_t i = 0; i < f.sq.entries; i++) {
		ck_assert_int_eq(qp_ring_used(&f.sq, tail, &used), 0);
		ck_assert_uint_eq(used, i);
		struct qp_sqe e = sqe_of(start + i);
		qp_ring_put(&f.sq, &tail, &e, sizeof(e));
		ck_assert_uint_eq(atomic_load(&f.hdr->sq.tail), start + i + 1);
	}
	/* full: the producer sees every slot used, the consumer all of them */
	ck_assert_int_eq(qp_ring_used(&f.sq, tail, &used), 0);
	ck_assert_uint_eq(used, f.sq.entries);
	uint32_t avail;
	ck_assert_int_eq(qp_ring_avail(&f.sq, head, &avail), 0);
	ck_assert_uint_eq(avail, f.sq.entries);

	for (uint32_t i = 0; i < f.sq.entries; i++) {
		struct qp_sqe out;
		ck_assert_int_eq(qp_ring_take(&f.sq, &head, &out, sizeof(out)),
				1);
		assert_sqe_of(&out, start + i);
		ck_assert_uint_eq(atomic_load(&f.hdr->sq.head), start + i + 1);
		/* the freed slot shows at the producer */
		ck_assert_int_eq(qp_ring_used(&f.sq, tail, &used), 0);
		ck_assert_uint_eq(used, f.sq.entries - 1 - i);
	}
	struct qp_sqe out;
	ck_assert_int_eq(qp_ring_take(&f.sq, &head, &out, sizeof(out)), 0);
	ck_assert_uint_eq(head, tail);
	fixture_close(&f);
}
END_TEST

/*
 * Many times round a ring whose indices pass 2^32 on the way, in batches
 * of every size up to full: each entry comes out once, in order, from a
 * slot inside the array.
 */
START_TEST(wrap_around)
{
	struct fixture f;
	fixture_open(&f, 4, 4);
	uint32_t start = UINT32_MAX - 37;
	ring_at(&f.sq, start);
	uint32_t tail = start, head = start, next = start;
	for (uint32_t round = 0; round < 40; round++) {
		uint32_t batch = round % f.sq.entries + 1;
		for (uint32_t k = 0; k < batch; k++) {
			assert_slot_inside(&f, &f.sq, tail, sizeof(struct qp_sqe));
			struct qp_sqe e = sqe_of(tail);
			qp_ring_put(&f.sq, &tail, &e, sizeof(e));
		}
		uint32_t avail;
		ck_assert_int_eq(qp_ring_avail(&f.sq, head, &avail), 0);
		ck_assert_uint_eq(avail, batch);
		for (uint32_t k = 0; k < batch; k++) {
			struct qp_sqe out;
			ck_assert_int_eq(qp_ring_take(&f.sq, &head, &out,
					sizeof(out)), 1);
			assert_sqe_of(&out, next++);
		}
	}
	ck_assert_uint_eq(head, tail);
	/* the counters did wrap */
	ck_assert_uint_lt(head, start);
	fixture_close(&f);
}
END_TEST

/*
 * A tail the producer moved impossibly far (or behind the head): -1, and
 * the consumer neither reads nor moves. Exactly a full ring is legal.
 */
START_TEST(tail_jumped)
{
	struct fixture f;
	fixture_open(&f, 8, 8);
	const uint32_t n = f.sq.entries;
	const uint32_t head0 = 1000;
	const uint32_t bad[] = {
		head0 + n + 1, head0 + 1000000, head0 - 1, head0 + UINT32_MAX / 2,
		head0 + UINT32_MAX,
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ring_at(&f.sq, head0);
		atomic_store(&f.hdr->sq.tail, bad[i]);
		uint32_t head = head0, avail = 77;
		struct qp_sqe out;
		memset(&out, 0xcd, sizeof(out));
		struct qp_sqe before = out;
		ck_assert_int_eq(qp_ring_avail(&f.sq, head, &avail), -1);
		ck_assert_uint_eq(avail, 77);
		ck_assert_int_eq(qp_ring_take(&f.sq, &head, &out, sizeof(out)),
				-1);
		ck_assert_uint_eq(head, head0);
		ck_assert_uint_eq(atomic_load(&f.hdr->sq.head), head0);
		ck_assert_int_eq(memcmp(&out, &before, sizeof(out)), 0);
		/* once more: the same answer, nothing consumed meanwhile */
		ck_assert_int_eq(qp_ring_take(&f.sq, &head, &out, sizeof(out)),
				-1);
	}
	/* a full ring is not a jump */
	ring_at(&f.sq, head0);
	atomic_store(&f.hdr->sq.tail, head0 + n);
	uint32_t avail;
	ck_assert_int_eq(qp_ring_avail(&f.sq, head0, &avail), 0);
	ck_assert_uint_eq(avail, n);
	fixture_close(&f);
}
END_TEST

/*
 * rpmad fills the CQ against a head the client writes: a head beyond the
 * tail, or so far behind that more than the ring would be in use, is -1.
 */
START_TEST(head_jumped)
{
	struct fixture f;
	fixture_open(&f, 8, 8);
	const uint32_t n = f.cq.entries;
	const uint32_t tail = 50;
	const uint32_t bad[] = {
		tail + 1, tail + 5000, tail - n - 1, tail + UINT32_MAX / 2,
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		atomic_store(&f.hdr->cq.head, bad[i]);
		uint32_t used = 55;
		ck_assert_int_eq(qp_ring_used(&f.cq, tail, &used), -1);
		ck_assert_uint_eq(used, 55);
	}
	uint32_t used;
	atomic_store(&f.hdr->cq.head, tail - n);
	ck_assert_int_eq(qp_ring_used(&f.cq, tail, &used), 0);
	ck_assert_uint_eq(used, n);
	atomic_store(&f.hdr->cq.head, tail);
	ck_assert_int_eq(qp_ring_used(&f.cq, tail, &used), 0);
	ck_assert_uint_eq(used, 0);
	fixture_close(&f);
}
END_TEST

/*
 * A legal tail over garbage: the consumer copies exactly the bytes that
 * were published (validating them is its caller's job), and what the
 * producer writes into the slot afterwards no longer reaches that copy.
 */
START_TEST(garbage_entry)
{
	struct fixture f;
	fixture_open(&f, 8, 8);
	srandom(7);
	uint32_t tail = 0, head = 0;
	for (int k = 0; k < 64; k++) {
		uint8_t junk[sizeof(struct qp_sqe)];
		for (size_t b = 0; b < sizeof(junk); b++)
			junk[b] = (uint8_t)random();
		qp_ring_put(&f.sq, &tail, junk, sizeof(junk));

		struct qp_sqe out;
		uint32_t at = head;
		ck_assert_int_eq(qp_ring_take(&f.sq, &head, &out, sizeof(out)),
				1);
		ck_assert_int_eq(memcmp(&out, junk, sizeof(out)), 0);

		/* the hostile side rewrites the slot it gave away */
		memset(qp_ring_slot(&f.sq, at, sizeof(out)), 0xff, sizeof(out));
		ck_assert_int_eq(memcmp(&out, junk, sizeof(out)), 0);
	}
	fixture_close(&f);
}
END_TEST

START_TEST(wakeup_flags)
{
	struct fixture f;
	fixture_open(&f, 8, 8);
	_Atomic uint32_t *need = &f.hdr->need_wakeup;
	_Atomic uint32_t *armed = &f.hdr->cq_armed;

	/* need_wakeup: the client looks, it stays up until rpmad lowers it */
	ck_assert(!qp_wakeup_wanted(need));
	qp_wakeup_request(need);
	ck_assert(qp_wakeup_wanted(need));
	ck_assert(qp_wakeup_wanted(need));

	/* cq_armed: armed from the start; one claim per arming */
	ck_assert(qp_wakeup_claim(armed));
	ck_assert(!qp_wakeup_claim(armed));
	qp_wakeup_request(armed);
	ck_assert(qp_wakeup_claim(armed));
	ck_assert(!qp_wakeup_wanted(armed));

	/* withdrawn before rpmad claimed it: rpmad sends nothing */
	qp_wakeup_request(armed);
	ck_assert(qp_wakeup_withdraw(armed));
	ck_assert(!qp_wakeup_claim(armed));
	/* claimed first: the withdrawal says so (a byte is on its way) */
	qp_wakeup_request(armed);
	ck_assert(qp_wakeup_claim(armed));
	ck_assert(!qp_wakeup_withdraw(armed));
	fixture_close(&f);
}
END_TEST

/* ------------------------------------------------------- two threads */

#define PASSES 200000u

/* every word of entry i says i: a torn copy shows as mixed words */
static struct qp_cqe
cqe_of(uint32_t i)
{
	return (struct qp_cqe){
		.wr_id = (uint64_t)i << 32 | i, .status = i, .opcode = i,
		.byte_len = i, .imm_data = i, .wc_flags = i, .vendor_err = i,
		.sq_index = i, .source = i, .reserved = (uint64_t)i << 32 | i,
	};
}

static void *
producer(void *arg)
{
	const struct qp_ring *r = arg;
	uint32_t tail = atomic_load(&r->idx->tail);
	for (uint32_t i = 0; i < PASSES; i++) {
		uint32_t used;
		for (;;) {
			ck_assert_int_eq(qp_ring_used(r, tail, &used), 0);
			if (used < r->entries)
				break;
			(void) sched_yield();
		}
		struct qp_cqe e = cqe_of(i);
		qp_ring_put(r, &tail, &e, sizeof(e));
	}
	return NULL;
}

/*
 * One producer thread, one consumer (this one, in batches as the library
 * takes completions): everything arrives once, in order, never torn.
 */
START_TEST(two_threads)
{
	struct fixture f;
	fixture_open(&f, 8, 8);
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, producer, &f.cq), 0);
	uint32_t head = 0, next = 0;
	while (next < PASSES) {
		uint32_t avail;
		ck_assert_int_eq(qp_ring_avail(&f.cq, head, &avail), 0);
		if (avail == 0) {
			(void) sched_yield();
			continue;
		}
		for (; avail > 0; avail--) {
			struct qp_cqe c;
			qp_ring_read(&f.cq, head++, &c, sizeof(c));
			struct qp_cqe want = cqe_of(next);
			ck_assert_msg(memcmp(&c, &want, sizeof(c)) == 0,
					"entry %u torn or out of order", next);
			next++;
		}
		qp_ring_release(&f.cq, head);
	}
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_eq(atomic_load(&f.hdr->cq.tail), PASSES);
	fixture_close(&f);
}
END_TEST

int
main(void)
{
	const struct th_test tc_steps[] = { TH_TEST(empty),
		TH_LOOP(full_ring, 0,
				(int) (sizeof(starts) / sizeof(starts[0]))),
		TH_TEST(wrap_around), TH_TEST(wakeup_flags), TH_END };
	const TTest *const tc_hostile[] = { tail_jumped, head_jumped,
		garbage_entry, NULL };
	const TTest *const tc_threads[] = { two_threads, NULL };
	const struct th_tcase tcases[] = {
		{ "steps", .steps = tc_steps },
		{ "hostile", .tests = tc_hostile },
		{ "threads", .tests = tc_threads, .timeout = 60 },
	};
	return check_run(th_suite("qp_ring", tcases, TH_N(tcases)), CK_NORMAL);
}
