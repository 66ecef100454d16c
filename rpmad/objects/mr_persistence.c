// SPDX-License-Identifier: BSD-3-Clause
/*
 * mr_persistence.c -- what a persistent flush into a registration is
 * worth: how the memory is made persistent on the registration's
 * transport, and so whether the registration grants
 * RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT at all (librpmaclient(7), PERSISTENT
 * MEMORY)
 */

#include "librpma.h"
#include "objects/mr.h"
#include "transport/transport.h"

const char *
mr_persistence_name(enum mr_persistence p)
{
	switch (p) {
	case MR_PERSIST_CPU_FLUSH:
		return "cache flush";
	case MR_PERSIST_MSYNC:
		return "msync";
	case MR_PERSIST_DEVICE:
		return "device";
	case MR_PERSIST_NONE:
		break;
	}
	return "none";
}

/*
 * How the registration can be made persistent on the transport `tp`:
 * each segment by its own means, the whole only where every segment can
 * (a peer flushes ranges, not segments).
 */
static enum mr_persistence
persistence_of(const struct mr *mr, const struct transport_ops *tp)
{
	enum mr_persistence how = MR_PERSIST_NONE;
	for (unsigned i = 0; i < mr->nsegs; i++) {
		const struct mr_segment *seg = &mr->segs[i];
		enum mr_persistence p = MR_PERSIST_NONE;
		if (seg->persist)
			p = tp->device_flushes ? MR_PERSIST_DEVICE :
				MR_PERSIST_CPU_FLUSH;
		else if (seg->page_cache && !tp->device_flushes)
			p = MR_PERSIST_MSYNC;
		if (p == MR_PERSIST_NONE)
			return MR_PERSIST_NONE;
		/* DAX beside a page cache: the page cache names the whole */
		if (how == MR_PERSIST_NONE || p == MR_PERSIST_MSYNC)
			how = p;
	}
	return how;
}

/*
 * A visibility flush stands in for a persistent one where nothing
 * persists, so that the descriptor tells remote peers the truth: their
 * rpma_flush of RPMA_FLUSH_TYPE_PERSISTENT is RPMA_E_NOSUPP, as librpma's
 * is for any registration without the bit.
 */
const char *
mr_grant_persistence(struct mr *mr, const struct transport_ops *tp)
{
	mr->persistence = persistence_of(mr, tp);
	if (!(mr->usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT) ||
			mr->persistence != MR_PERSIST_NONE)
		return NULL;
	mr->usage = (mr->usage & ~(uint32_t)RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)
		| RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
	for (unsigned i = 0; i < mr->nsegs; i++) {
		const struct mr_segment *seg = &mr->segs[i];
		if (seg->persist || (seg->page_cache && !tp->device_flushes))
			continue;
		if (seg->page_cache)
			return "RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT granted as "
				"RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY: the file "
				"lives in the page cache, which only msync "
				"writes back, and an RDMA device's flush (a "
				"read after the writes) never reaches rpmad "
				"(use a DAX device, or a file on a file system "
				"mounted with -o dax)";
		break;
	}
	return "RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT granted as "
		"RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY: the memory is not kept "
		"by any medium over a power cut (anonymous memory, or a file "
		"of tmpfs, hugetlbfs or ramfs): map a file of a DAX device or "
		"file system to have it persistent";
}
