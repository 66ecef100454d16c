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
#include "mr_usage.h"
#include "verbs/verbs.h"

/* ibv_advise_mr takes 32-bit lengths: longer ranges go in pieces. */
#define ADVISE_CHUNK (1u << 30)

int
verbs_pd_alloc(struct peer *peer, char *err, size_t errlen)
{
	struct verbs_dev *vd = device_tp(peer_device(peer));
	if (vd->dead) {
		(void) snprintf(err, errlen, "the RDMA device %s is gone",
				device_name(peer_device(peer)));
		return -ENODEV;
	}
	struct ibv_pd *pd = ibv_alloc_pd(vd->ctx);
	if (pd == NULL) {
		/* the core adds the errno's text */
		int e = errno ? errno : ENOMEM;
		(void) snprintf(err, errlen, "ibv_alloc_pd on %s",
				device_name(peer_device(peer)));
		return -e;
	}
	peer_set_tp(peer, pd);
	return 0;
}

void
verbs_pd_free(struct peer *peer)
{
	if (peer_tp(peer) == NULL)
		return;
	/* libibverbs answers with a positive errno */
	int ret = -ibv_dealloc_pd(peer_tp(peer));
	if (ret)
		log_warning("verbs: ibv_dealloc_pd on %s: %s",
				device_name(peer_device(peer)), strerror(-ret));
	peer_set_tp(peer, NULL);
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
	struct ibv_pd *pd = peer_tp(mr_peer(mr));
	void *addr = mr_map(mr);
	struct ibv_mr *hw = ibv_reg_mr_iova2(pd, addr, mr_length(mr),
			mr_addr(mr), access);
	/* e.g. fsdax pages cannot be pinned; librpma retries the same way */
	if (hw == NULL && errno == EOPNOTSUPP &&
			device_odp(peer_device(mr_peer(mr)))) {
		hw = ibv_reg_mr_iova2(pd, addr, mr_length(mr), mr_addr(mr),
				access | IBV_ACCESS_ON_DEMAND);
		mr_set_on_demand(mr, hw != NULL);
	}
	return hw;
}

/* Why EFAULT, when the registered file was opened read-only. */
static const char *
read_only_hint(const struct mr *mr, int err)
{
	if (err != EFAULT || mr_writable(mr))
		return "";
	return " (the file was opened read-only: kernels before 6.2 "
	       "cannot register read-only shared mappings)";
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
	if (peer_tp(mr_peer(mr)) == NULL) {
		(void) snprintf(err, errlen, "the RDMA device %s is gone",
				device_name(peer_device(mr_peer(mr))));
		return -ENODEV;
	}
	struct ibv_mr *hw = reg_once(mr,
			usage_access(mr_usage(mr), mr_writable(mr)));
	if (hw == NULL) {
		int e = errno ? errno : EIO;
		const char *dev = device_name(peer_device(mr_peer(mr)));
		if (e == EOPNOTSUPP && mr_dax(mr) &&
				!device_odp(peer_device(mr_peer(mr))))
			(void) snprintf(err, errlen,
					"cannot register %llu "
					"bytes of a file on a DAX file system "
					"(fsdax) with %s: the kernel lets no "
					"RDMA device pin such pages, and %s "
					"has no on-demand paging (ODP); use a "
					"device DAX (ndctl create-namespace -m "
					"devdax) instead, or an RDMA device "
					"with on-demand paging",
					(unsigned long long) mr_length(mr), dev,
					dev);
		else if (e == EOPNOTSUPP && mr_dax(mr))
			(void) snprintf(err, errlen,
					"cannot register %llu "
					"bytes of a file on a DAX file system "
					"(fsdax) with %s, with on-demand paging "
					"either; use a device DAX (ndctl "
					"create-namespace -m devdax) instead",
					(unsigned long long) mr_length(mr),
					dev);
		else
			(void) snprintf(err, errlen,
					"ibv_reg_mr_iova2 of %llu bytes "
					"on %s%s",
					(unsigned long long) mr_length(mr), dev,
					read_only_hint(mr, e));
		return -e;
	}
	mr_set_tp(mr, hw);
	mr_set_rkey(mr, hw->rkey);
	return 0;
}

void
verbs_mr_deregister(struct mr *mr)
{
	if (mr_tp(mr) == NULL)
		return;
	/* libibverbs answers with a positive errno */
	int ret = -ibv_dereg_mr(mr_tp(mr));
	if (ret)
		log_warning("verbs: ibv_dereg_mr (rkey %08x): %s", mr_rkey(mr),
				strerror(-ret));
	mr_set_tp(mr, NULL);
}

int
verbs_mr_advise(struct mr *mr, uint64_t offset, uint64_t len, int advice,
		uint32_t flags, char *err, size_t errlen)
{
	struct ibv_mr *hw = mr_tp(mr);
	uint64_t addr = mr_addr(mr) + offset;
	/*
	 * Pinned pages are resident and known to the NIC already: the advice
	 * has nothing left to do, on any device, and is done (as with the
	 * software transport). Programs written for FsDAX advise
	 * unconditionally; rxe, for one, refuses ibv_advise_mr.
	 */
	if (!mr_on_demand(mr))
		return 0;
	if (hw == NULL) {
		(void) snprintf(err, errlen, "the RDMA device %s is gone",
				device_name(peer_device(mr_peer(mr))));
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
		int ret = -ibv_advise_mr(peer_tp(mr_peer(mr)),
				(enum ibv_advise_mr_advice) advice, flags, &sge,
				1);
		if (ret) {
			(void) snprintf(err, errlen, "ibv_advise_mr on %s",
					device_name(peer_device(mr_peer(mr))));
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
	return ((const struct ibv_mr *) mr_tp(mr))->lkey;
}
