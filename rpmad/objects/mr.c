// SPDX-License-Identifier: BSD-3-Clause
/*
 * mr.c -- registering client memory (its segments are mr_segments.c's),
 * looking registrations up by key, persisting ranges, deregistering
 */

#include <errno.h>
#include <libpmem2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clients/addrspace.h"
#include "clients/client.h"
#include "clients/tenant.h"
#include "core/daemon.h"
#include "core/guard.h"
#include "core/random.h"
#include "librpma.h"
#include "log/log.h"
#include "mr_usage.h"
#include "objects/device.h"
#include "objects/mr.h"
#include "objects/mr_io.h"
#include "objects/mr_segments.h"
#include "objects/mr_view.h"
#include "objects/peer.h"
#include "qp_region.h"
#include "transport/transport.h"

static struct mr *mrs_by_lkey;
static struct mr *mrs_by_rkey;

struct mr *
mr_by_lkey(uint32_t lkey)
{
	struct mr *mr = NULL;
	HASH_FIND(hh_lkey, mrs_by_lkey, &lkey, sizeof(lkey), mr);
	return mr;
}

struct mr *
mr_by_rkey(uint32_t dev_id, uint32_t rkey)
{
	struct mr_rkey_id id = { .dev_id = dev_id, .rkey = rkey };
	struct mr *mr = NULL;
	HASH_FIND(hh_rkey, mrs_by_rkey, &id, sizeof(id), mr);
	return mr;
}

bool
mr_allows(const struct mr *mr, enum mr_access access)
{
	uint32_t u = mr->usage;
	switch (access) {
	case MR_LOCAL_READ:
		return true;
	case MR_LOCAL_WRITE:
		return mr->writable && mr_usage_local_write(u);
	case MR_REMOTE_READ:
		return u & (RPMA_MR_USAGE_READ_SRC |
				RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
				RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	case MR_REMOTE_WRITE:
		return u & RPMA_MR_USAGE_WRITE_DST;
	case MR_REMOTE_PERSIST:
		return u & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	}
	return false;
}

bool
mr_contains(const struct mr *mr, uint64_t addr, uint64_t len)
{
	return addr >= mr->addr && addr - mr->addr <= mr->length &&
		len <= mr->length - (addr - mr->addr);
}

struct persist_args {
	void (*fn)(const void *ptr, size_t size);
	const void *ptr;
	size_t len;
};

static void
do_persist(void *arg)
{
	struct persist_args *a = arg;
	a->fn(a->ptr, a->len);
}

/*
 * Persisting a page-cache file: msync of the pages, as libpmem2 does for
 * PMEM2_GRANULARITY_PAGE (whose own persist function loops forever on a
 * pmem2_map_from_existing map in libpmem2 1.12). 0 or a negative errno;
 * the kernel reports a lost page (a truncated file) as an error, not a
 * signal. Logs nothing: the thread of offload.h runs it.
 */
static int
persist_msync(const void *ptr, size_t len)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)ptr & ~(page - 1);
	uintptr_t end = ((uintptr_t)ptr + len + page - 1) & ~(page - 1);
	return msync((void *)start, end - start, MS_SYNC) ? -errno : 0;
}

/*
 * Calls fn for each part of [addr, addr + len) in a file segment that
 * persists (page_cache: those msync persists, else the DAX ones), with
 * rpmad's address of it; stops at the first non-zero result.
 */
static int
for_each_persisting(const struct mr *mr, uint64_t addr, uint64_t len,
		bool page_cache, int (*fn)(const struct mr_segment *seg,
		uint8_t *p, size_t n))
{
	if (len == 0)
		return 0;
	uint64_t from = addr - mr->span_start;
	uint64_t to = from + len;
	for (unsigned i = 0; i < mr->nsegs; i++) {
		const struct mr_segment *seg = &mr->segs[i];
		uint64_t s = seg->span_offset, e = s + seg->length;
		if (seg->kind != MR_SEG_FILE || e <= from || s >= to ||
				seg->page_cache != page_cache ||
				(!page_cache && !seg->persist))
			continue;
		uint64_t a = from > s ? from : s;
		uint64_t b = to < e ? to : e;
		int ret = fn(seg, mr->base + a, (size_t)(b - a));
		if (ret)
			return ret;
	}
	return 0;
}

static int
cpu_flush(const struct mr_segment *seg, uint8_t *p, size_t n)
{
	struct persist_args args = { seg->persist, p, n };
	/* a lost page (the file cut short) holds nothing to persist */
	(void) guarded_call(do_persist, &args);
	return 0;
}

static int
page_cache_sync(const struct mr_segment *seg, uint8_t *p, size_t n)
{
	(void) seg;
	return persist_msync(p, n);
}

static int
has_any(const struct mr_segment *seg, uint8_t *p, size_t n)
{
	(void) seg;
	(void) p;
	return n > 0;
}

void
mr_persist_cpu(struct mr *mr, uint64_t addr, uint64_t len)
{
	(void) for_each_persisting(mr, addr, len, false, cpu_flush);
}

bool
mr_persist_needs_msync(const struct mr *mr, uint64_t addr, uint64_t len)
{
	return for_each_persisting(mr, addr, len, true, has_any) != 0;
}

int
mr_persist_msync(const struct mr *mr, uint64_t addr, uint64_t len)
{
	return for_each_persisting(mr, addr, len, true, page_cache_sync);
}

/* Unmaps and closes everything; the registration is not findable then. */
static void
mr_unmap(struct mr *mr)
{
	for (unsigned i = 0; i < mr->nsegs; i++) {
		if (mr->segs[i].map)
			(void) pmem2_map_delete(&mr->segs[i].map);
		if (mr->segs[i].fd >= 0)
			(void) close(mr->segs[i].fd);
		if (mr->segs[i].write_fd >= 0)
			(void) close(mr->segs[i].write_fd);
	}
	/* libpmem2 only describes the file mappings: unmap them here */
	if (mr->view)
		mr_view_put(mr->view);
	else if (mr->resv)
		(void) munmap(mr->resv, mr->resv_len);
	addrspace_put(mr->as);
	mr->as = NULL;
	mr->view = NULL;
	mr->resv = NULL;
	free(mr->segs);
	mr->segs = NULL;
	mr->nsegs = 0;
	mr->base = NULL;
}

void
mr_get(struct mr *mr)
{
	mr->refs++;
}

void
mr_put(struct mr *mr)
{
	if (--mr->refs > 0)
		return;
	mr_unmap(mr);
	free(mr);
}

/* ------------------------------------------- what a transport reads */

struct peer *
mr_peer(const struct mr *mr)
{
	return mr->peer;
}

void *
mr_tp(const struct mr *mr)
{
	return mr->tp_mr;
}

void
mr_set_tp(struct mr *mr, void *tp_mr)
{
	mr->tp_mr = tp_mr;
}

uint64_t
mr_addr(const struct mr *mr)
{
	return mr->addr;
}

uint64_t
mr_length(const struct mr *mr)
{
	return mr->length;
}

uint32_t
mr_usage(const struct mr *mr)
{
	return mr->usage;
}

bool
mr_writable(const struct mr *mr)
{
	return mr->writable;
}

void *
mr_map(const struct mr *mr)
{
	return mr->base + (mr->addr - mr->span_start);
}

bool
mr_dax(const struct mr *mr)
{
	for (unsigned i = 0; i < mr->nsegs; i++) {
		if (mr->segs[i].persist)
			return true;
	}
	return false;
}

uint32_t
mr_rkey(const struct mr *mr)
{
	return mr->rkey_id.rkey;
}

void
mr_set_rkey(struct mr *mr, uint32_t rkey)
{
	mr->rkey_id.rkey = rkey;
}

bool
mr_on_demand(const struct mr *mr)
{
	return mr->on_demand;
}

void
mr_set_on_demand(struct mr *mr, bool on_demand)
{
	mr->on_demand = on_demand;
}

struct addrspace *
mr_addrspace(const struct mr *mr)
{
	return mr->as;
}

/*
 * A new lkey: random, so that a client cannot guess another's, and unique
 * in rpmad. It is the rkey on the software device too, whose remote keys
 * live in the same 32-bit space, so it is kept clear of those as well.
 */
static uint32_t
new_lkey(uint32_t dev_id)
{
	uint32_t key;
	do {
		key = random32();
	} while (key == 0 || mr_by_lkey(key) != NULL ||
			mr_by_rkey(dev_id, key) != NULL);
	return key;
}

static void mr_release(struct obj *o, enum obj_release how);

/* what the registry does with a registration whose client goes */
static const struct obj_type mr_type = { OBJ_MR, mr_release };

struct mr *
mr_reg(struct call *call, struct peer *peer, const struct mr_reg_args *m,
		const char **note)
{
	struct mr *mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		call_fail(call, RPMA_E_NOMEM, ENOMEM, "registration");
		return NULL;
	}
	mr->refs = 1;
	if (mr_take_segments(call, m, mr))
		goto err;
	if (mr->as && peer->dev->tp->mr_register) {
		call_fail(call, RPMA_E_PROVIDER, 0,
				"%s is an RDMA device: the "
				"memory it registers must be passed by "
				"descriptor",
				peer->dev->name);
		goto err;
	}

	if (tenant_admit_mr(call, mr->span_len))
		goto err;

	char err[256];
	int ret = mr_map_segments(mr, peer->dev->tp->mr_register == NULL, err,
			sizeof(err));
	if (ret) {
		call_fail(call, ret == -ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER,
				0, "%s", err);
		goto err;
	}
	*note = mr_grant_persistence(mr, peer->dev->tp);
	mr_open_write_fds(mr, call->client, peer->dev->tp);
	mr->peer = peer;
	mr->lkey = new_lkey(peer->dev->id);
	mr->rkey_id.dev_id = peer->dev->id;
	mr->rkey_id.rkey = mr->lkey;
	if (peer->dev->tp->mr_register &&
			(ret = peer->dev->tp->mr_register(mr, err,
					sizeof(err)))) {
		call_fail(call, ret == -ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER,
				-ret, "%s", err);
		goto err;
	}
	/* a device names its own rkey, unique on that device: trust, check */
	if (mr_rkey(mr) && mr_by_rkey(peer->dev->id, mr_rkey(mr)) != NULL) {
		call_fail(call, RPMA_E_PROVIDER, 0,
				"the device %s gave the key "
				"%08x, which is in use already",
				peer->dev->name, mr_rkey(mr));
		if (peer->dev->tp->mr_deregister)
			peer->dev->tp->mr_deregister(mr);
		goto err;
	}
	mr_describe_backing(mr);
	/* the mappings hold the files: spend no descriptor on each (but
	 * the write_fds open_write_fds took) */
	for (unsigned i = 0; i < mr->nsegs; i++) {
		(void) close(mr->segs[i].fd);
		mr->segs[i].fd = -1;
	}

	registry_add(&mr->obj, &mr_type, &call->client->owner);
	HASH_ADD(hh_lkey, mrs_by_lkey, lkey, sizeof(mr->lkey), mr);
	if (mr_rkey(mr))
		HASH_ADD(hh_rkey, mrs_by_rkey, rkey_id, sizeof(mr->rkey_id),
				mr);
	peer->users++;
	client_add_pinned(call->client, (int64_t) mr->span_len);
	client_add_mr_fds(call->client, (int) mr->write_fds);
	peer->dev->mrs++;
	peer->dev->pinned_bytes += mr->span_len;
	log_debug("session %s: registered %llu bytes at 0x%llx (%s) on %s, "
		  "lkey %08x, rkey %08x, persistence %s",
			call->client->name, (unsigned long long) mr->length,
			(unsigned long long) mr->addr, mr->backing,
			peer->dev->name, mr->lkey, mr_rkey(mr),
			mr_persistence_name(mr->persistence));

	return mr;

err:
	mr_put(mr);
	return NULL;
}

/* Deregisters; the mapping goes with the last reference. */
static void
mr_destroy(struct mr *mr)
{
	if (mr->peer->dev->tp->mr_deregister)
		mr->peer->dev->tp->mr_deregister(mr);
	registry_remove(&mr->obj);
	HASH_DELETE(hh_lkey, mrs_by_lkey, mr);
	if (mr_rkey(mr))
		HASH_DELETE(hh_rkey, mrs_by_rkey, mr);
	mr->peer->users--;
	client_add_pinned(obj_client(&mr->obj), -(int64_t)mr->span_len);
	client_add_mr_fds(obj_client(&mr->obj), -(int)mr->write_fds);
	mr->peer->dev->mrs--;
	mr->peer->dev->pinned_bytes -= mr->span_len;
	mr->deregistered = true;
	mr_put(mr);
}

static void
mr_release(struct obj *o, enum obj_release how)
{
	(void) how;
	mr_destroy((struct mr *)o);
}

struct mr *
mr_find(struct call *call, uint64_t id)
{
	return (struct mr *) call_find(call, id, OBJ_MR);
}

void
mr_dereg(struct mr *mr)
{
	mr_destroy(mr);
}

struct mr *
mr_staging_new(struct peer *peer, struct obj_owner *owner, void *map,
		uint64_t len)
{
	struct mr *mr = calloc(1, sizeof(*mr));
	struct mr_segment *seg = calloc(1, sizeof(*seg));
	if (mr == NULL || seg == NULL) {
		free(mr);
		free(seg);
		(void) munmap(map, len);
		return NULL;
	}
	seg->kind = MR_SEG_MEMFD;
	seg->fd = seg->write_fd = -1;
	seg->length = len;
	mr->refs = 1;
	mr->obj.owner = owner;	/* whose work may name it; not registered */
	mr->peer = peer;
	mr->addr = mr->span_start = QP_STAGING_ADDR;
	mr->length = mr->span_len = len;
	mr->base = mr->resv = map;
	mr->resv_len = len;
	mr->segs = seg;
	mr->nsegs = 1;
	mr->writable = true;
	mr->usage = RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST |
		RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV;
	mr->persistence = MR_PERSIST_NONE;
	/* no remote key: a peer can never name another client's staging */
	mr->lkey = new_lkey(peer->dev->id);
	mr->rkey_id.dev_id = peer->dev->id;
	(void) snprintf(mr->backing, sizeof(mr->backing), "staging");
	HASH_ADD(hh_lkey, mrs_by_lkey, lkey, sizeof(mr->lkey), mr);
	return mr;
}

void
mr_staging_end(struct mr *mr)
{
	if (mr == NULL)
		return;
	HASH_DELETE(hh_lkey, mrs_by_lkey, mr);
	mr->deregistered = true;
	mr_put(mr);
}

int
mr_advise(struct call *call, struct mr *mr, uint64_t offset, uint64_t length,
		int advice, uint32_t flags)
{
	if (offset > mr->length || length > mr->length - offset) {
		call_fail(call, RPMA_E_INVAL, 0,
				"range out of the registration");
		return -EINVAL;
	}
	if (advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
			!mr_allows(mr, MR_LOCAL_WRITE)) {
		call_fail(call, RPMA_E_INVAL, 0,
				"the usage does not allow writes");
		return -EINVAL;
	}
	if (mr->peer->dev->tp->mr_advise) {
		char err[256];
		int ret = mr->peer->dev->tp->mr_advise(mr, offset, length,
				advice, flags, err, sizeof(err));
		if (ret) {
			call_fail(call,
					ret == -EOPNOTSUPP ? RPMA_E_NOSUPP :
							ret == -EINVAL ?
							     RPMA_E_INVAL :
							     RPMA_E_PROVIDER,
					-ret, "%s", err);
			return ret;
		}
		return 0;
	}

	/*
	 * nothing to pin or fault in for a NIC: read mapped pages in early
	 * (the client's own memory is the client's to fault in)
	 */
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = (mr->addr + offset) & ~(page - 1);
	uint64_t end = mr->addr + offset + length;
	uint8_t *p = end > start ? mr_io_direct(mr, start, end - start) : NULL;
	if (p)
		(void) madvise(p, end - start, MADV_WILLNEED);
	return 0;
}
