// SPDX-License-Identifier: BSD-3-Clause
/*
 * qp_region.c -- computing and checking the layout of a queue pair region
 */

#include <stddef.h>
#include <string.h>

#include "qp_region.h"

/* a field added to the header later must not move those after it */
_Static_assert(offsetof(struct qp_region_header, rq_filled) +
						sizeof(uint64_t) <=
				offsetof(struct qp_region_header, cq_armed),
		"rq_filled shares the daemon's cache line");

#define PAGE_ALIGN(x) (((x) + 4095u) & ~(uint64_t)4095u)
#define LINE_ALIGN(x) (((x) + QP_CACHELINE - 1) & ~(uint64_t)(QP_CACHELINE - 1))

static uint32_t
pow2_at_least(uint32_t n)
{
	uint32_t p = 1;
	while (p < n)
		p <<= 1;
	return p;
}

int
qp_layout_compute(const struct qp_sizes *sizes, struct qp_layout *layout)
{
	if (sizes->cq == 0)
		return -1;
	if (sizes->sq > QP_MAX_QUEUE_SIZE || sizes->rq > QP_MAX_QUEUE_SIZE ||
			sizes->cq > QP_MAX_QUEUE_SIZE ||
			sizes->rcq > QP_MAX_QUEUE_SIZE)
		return -1;

	struct qp_layout l;
	memset(&l, 0, sizeof(l));
	/* a depth of 0 is legal (no such work at all); keep one slot anyway */
	l.sq_entries = pow2_at_least(sizes->sq ? sizes->sq : 1);
	l.rq_entries = pow2_at_least(sizes->rq ? sizes->rq : 1);
	l.cq_entries = pow2_at_least(sizes->cq);
	l.rcq_entries = sizes->rcq ? pow2_at_least(sizes->rcq) : 0;

	uint64_t off = LINE_ALIGN(sizeof(struct qp_region_header));
	l.sq_offset = off;
	off = LINE_ALIGN(off + (uint64_t)l.sq_entries * sizeof(struct qp_sqe));
	l.rq_offset = off;
	off = LINE_ALIGN(off + (uint64_t)l.rq_entries * sizeof(struct qp_rqe));
	l.cq_offset = off;
	off = LINE_ALIGN(off + (uint64_t)l.cq_entries * sizeof(struct qp_cqe));
	l.rcq_offset = l.rcq_entries ? off : 0;
	off = LINE_ALIGN(off + (uint64_t)l.rcq_entries * sizeof(struct qp_cqe));
	l.size = PAGE_ALIGN(off);

	*layout = l;
	return 0;
}

void
qp_layout_init_header(struct qp_region_header *hdr,
		const struct qp_sizes *sizes, const struct qp_layout *layout,
		uint32_t qp_num)
{
	hdr->magic = QP_REGION_MAGIC;
	hdr->version = QP_REGION_VERSION;
	hdr->qp_num = qp_num;
	hdr->region_size = layout->size;
	hdr->sq_entries = layout->sq_entries;
	hdr->rq_entries = layout->rq_entries;
	hdr->cq_entries = layout->cq_entries;
	hdr->rcq_entries = layout->rcq_entries;
	hdr->sq_depth = sizes->sq;
	hdr->rq_depth = sizes->rq;
	hdr->cq_depth = sizes->cq;
	hdr->rcq_depth = sizes->rcq;
	hdr->sq_offset = layout->sq_offset;
	hdr->rq_offset = layout->rq_offset;
	hdr->cq_offset = layout->cq_offset;
	hdr->rcq_offset = layout->rcq_offset;
	atomic_init(&hdr->need_wakeup, 0);
	atomic_init(&hdr->state, QP_STATE_INIT);
	atomic_init(&hdr->cq_space_wanted, 0);
	/* armed from the start, as a verbs CQ that librpma arms on creation */
	atomic_init(&hdr->cq_armed, 1);
	atomic_init(&hdr->rcq_armed, 1);
}

int
qp_layout_check_header(const struct qp_region_header *hdr,
		const struct qp_sizes *sizes, uint64_t region_size)
{
	struct qp_layout l;
	if (qp_layout_compute(sizes, &l))
		return -1;
	if (hdr->magic != QP_REGION_MAGIC || hdr->version != QP_REGION_VERSION)
		return -1;
	if (l.size != region_size || hdr->region_size != region_size)
		return -1;
	if (hdr->sq_entries != l.sq_entries || hdr->rq_entries != l.rq_entries ||
			hdr->cq_entries != l.cq_entries ||
			hdr->rcq_entries != l.rcq_entries)
		return -1;
	if (hdr->sq_offset != l.sq_offset || hdr->rq_offset != l.rq_offset ||
			hdr->cq_offset != l.cq_offset ||
			hdr->rcq_offset != l.rcq_offset)
		return -1;
	return 0;
}
