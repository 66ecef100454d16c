// SPDX-License-Identifier: BSD-3-Clause
/*
 * verbs_mr.c -- protection domains (one per client peer), registrations
 * of rpmad's mapping of a client's pages, and advice about them
 *
 * A registration's iova is the client's own address of the memory, so
 * that the (address, rkey) pair in an MR descriptor means the same to the
 * device as to a plain librpma peer; the key the client gets is the rkey.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "librpma.h"
#include "log/log.h"
#include "mr_usage.h"
#include "objects/device.h"
#include "objects/mr.h"
#include "objects/peer.h"
#include "verbs/verbs_dev.h"
#include "verbs/verbs_mr.h"

/* ibv_advise_mr takes 32-bit lengths: longer ranges go in pieces. */
#define ADVISE_CHUNK (1u << 30)

int
verbs_pd_alloc(struct peer *peer, char *err, size_t errlen)
{
	struct verbs_dev *vd = peer->dev->tp_dev;
	if (vd->dead) {
		(void) snprintf(err, errlen, "the RDMA device %s is gone",
				peer->dev->name);
		return -ENODEV;
	}
	struct ibv_pd *pd = ibv_alloc_pd(vd->ctx);
	if (pd == NULL) {
		/* the core adds the errno's text */
		int e = errno ? errno : ENOMEM;
		(void) snprintf(err, errlen, "ibv_alloc_pd on %s",
				peer->dev->name);
		return -e;
	}
	peer->tp_pd = pd;
	return 0;
}

void
verbs_pd_free(struct peer *peer)
{
	if (peer->tp_pd == NULL)
		return;
	/* libibverbs answers with a positive errno */
	int ret = -ibv_dealloc_pd(peer->tp_pd);
	if (ret)
		log_warning("verbs: ibv_dealloc_pd on %s: %s", peer->dev->name,
				strerror(-ret));
	peer->tp_pd = NULL;
}

/* librpma's usage-to-access mapping. */
static unsigned
usage_access(uint32_t usage, bool writable)
{
	unsigned access = 0;
	if (usage & RPMA_MR_USAGE_READ_SRC)
		access |= IBV_ACCESS_REMOTE_READ;
	if (mr_usage_local_write(usage))
		access |= IBV_ACCESS_LOCAL_WRITE;
	if (usage & RPMA_MR_USAGE_WRITE_DST)
		access |= IBV_ACCESS_REMOTE_WRITE;
	if (usage & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT))
		access |= IBV_ACCESS_REMOTE_READ;
	/* a source in a read-only file (only WRITE_SRC gets here) */
	if (!writable)
		access &= ~(unsigned)IBV_ACCESS_LOCAL_WRITE;
	return access;
}

/* One registration; on-demand paging where pinning is not possible. */
static struct ibv_mr *
reg_once(struct mr *mr, unsigned access)
{
	struct ibv_pd *pd = mr->peer->tp_pd;
	void *addr = mr->base + (mr->addr - mr->span_start);
	struct ibv_mr *hw = ibv_reg_mr_iova2(pd, addr, mr->length, mr->addr,
			access);
	/* e.g. fsdax pages cannot be pinned; librpma retries the same way */
	if (hw == NULL && errno == EOPNOTSUPP && mr->peer->dev->odp_capable) {
		hw = ibv_reg_mr_iova2(pd, addr, mr->length, mr->addr,
				access | IBV_ACCESS_ON_DEMAND);
		mr->on_demand = hw != NULL;
	}
	return hw;
}

/*
 * Whether the registration has DAX memory: the kernel pins a device
 * DAX's pages for a device, so a refusal to pin (EOPNOTSUPP) with DAX
 * among the segments is a file system's (fsdax), which the kernel does
 * not let a device keep (its blocks may move).
 */
static bool
has_dax(const struct mr *mr)
{
	for (unsigned i = 0; i < mr->nsegs; i++) {
		if (mr->segs[i].persist)
			return true;
	}
	return false;
}

/*
 * The device's rkey is the key peers use; it is unique on the device, and
 * rpmad looks registrations up by (device, rkey). A registration without
 * remote access may get rkey 0 (rxe does so), as with librpma. What
 * cannot be pinned is registered with on-demand paging where the device
 * has it (librpma does the same), and fails as with librpma (the client
 * gets RPMA_E_PROVIDER) where it does not, saying what would work.
 */
int
verbs_mr_register(struct mr *mr, char *err, size_t errlen)
{
	if (mr->peer->tp_pd == NULL) {
		(void) snprintf(err, errlen, "the RDMA device %s is gone",
				mr->peer->dev->name);
		return -ENODEV;
	}
	struct ibv_mr *hw = reg_once(mr, usage_access(mr->usage,
			mr->writable));
	if (hw == NULL) {
		int e = errno ? errno : EIO;
		const char *dev = mr->peer->dev->name;
		if (e == EOPNOTSUPP && has_dax(mr) && !mr->peer->dev->odp_capable)
			(void) snprintf(err, errlen, "cannot register %llu "
					"bytes of a file on a DAX file system "
					"(fsdax) with %s: the kernel lets no "
					"RDMA device pin such pages, and %s "
					"has no on-demand paging (ODP); use a "
					"device DAX (ndctl create-namespace -m "
					"devdax) instead, or an RDMA device "
					"with on-demand paging",
					(unsigned long long)mr->length, dev,
					dev);
		else if (e == EOPNOTSUPP && has_dax(mr))
			(void) snprintf(err, errlen, "cannot register %llu "
					"bytes of a file on a DAX file system "
					"(fsdax) with %s, with on-demand paging "
					"either; use a device DAX (ndctl "
					"create-namespace -m devdax) instead",
					(unsigned long long)mr->length, dev);
		else
			(void) snprintf(err, errlen, "ibv_reg_mr_iova2 of %llu "
					"bytes on %s%s",
					(unsigned long long)mr->length, dev,
					e == EFAULT && !mr->writable ?
					" (the file was opened read-only: "
					"kernels before 6.2 cannot register "
					"read-only shared mappings)" : "");
		return -e;
	}
	mr->tp_mr = hw;
	mr->rkey_id.rkey = hw->rkey;
	return 0;
}

void
verbs_mr_deregister(struct mr *mr)
{
	if (mr->tp_mr == NULL)
		return;
	/* libibverbs answers with a positive errno */
	int ret = -ibv_dereg_mr(mr->tp_mr);
	if (ret)
		log_warning("verbs: ibv_dereg_mr (rkey %08x): %s", mr_rkey(mr),
				strerror(-ret));
	mr->tp_mr = NULL;
}

int
verbs_mr_advise(struct mr *mr, uint64_t offset, uint64_t len, int advice,
		uint32_t flags, char *err, size_t errlen)
{
	struct ibv_mr *hw = mr->tp_mr;
	uint64_t addr = mr->addr + offset;
	/*
	 * Pinned pages are resident and known to the NIC already: the advice
	 * has nothing left to do, on any device, and is done (as with the
	 * software transport). Programs written for FsDAX advise
	 * unconditionally; rxe, for one, refuses ibv_advise_mr.
	 */
	if (!mr->on_demand)
		return 0;
	if (hw == NULL) {
		(void) snprintf(err, errlen, "the RDMA device %s is gone",
				mr->peer->dev->name);
		return -ENODEV;
	}
	do {
		uint32_t piece = len > ADVISE_CHUNK ? ADVISE_CHUNK :
			(uint32_t)len;
		struct ibv_sge sge = {
			.addr = addr,
			.length = piece,
			.lkey = hw->lkey,
		};
		/* libibverbs answers with a positive errno */
		int ret = -ibv_advise_mr(mr->peer->tp_pd,
				(enum ibv_advise_mr_advice)advice, flags,
				&sge, 1);
		if (ret) {
			(void) snprintf(err, errlen, "ibv_advise_mr on %s",
					mr->peer->dev->name);
			/* a range the device cannot take: a bad argument */
			return ret == -EFAULT ? -EINVAL : ret;
		}
		addr += piece;
		len -= piece;
	} while (len > 0);
	return 0;
}

uint32_t
verbs_mr_lkey(const struct mr *mr)
{
	return ((const struct ibv_mr *)mr->tp_mr)->lkey;
}
