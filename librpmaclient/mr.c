// SPDX-License-Identifier: BSD-3-Clause
/*
 * mr.c -- local memory registrations: rpma_mr_reg / rpma_mr_dereg, the
 * descriptor and the getters, rpma_mr_advise (how rpmad reaches the
 * memory is memshare.h's)
 */

#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "errno_keep.h"
#include "fork.h"
#include "landing_thread.h"
#include "le_bytes.h"
#include "log_internal.h"
#include "memshare.h"
#include "mr.h"
#include "peer.h"

/*
 * What the registration grants, which its descriptor tells remote peers:
 * rpmad grants a persistent flush only into memory it can make persistent
 * (librpmaclient(7)), and says why when it does not.
 */
static int
granted_usage(int asked, const Rpmad__MrRegReply *r)
{
	if (r->usage == 0 || (r->usage & ~(uint32_t)MR_USAGE_ALL))
		return asked;
	if (r->usage != (uint32_t)asked && r->usage_note && *r->usage_note)
		RLOG_WARNING("%s", r->usage_note);
	return (int)r->usage;
}

int
rpma_mr_reg(struct rpma_peer *peer, void *ptr, size_t size, int usage,
		struct rpma_mr_local **mr_ptr)
{
	ERRNO_KEEP();
	if (peer == NULL || ptr == NULL || mr_ptr == NULL || size == 0)
		return RPMA_E_INVAL;
	if (usage == 0 || (usage & ~MR_USAGE_ALL)) {
		RLOG_ERROR("usage 0x%x is not a set of RPMA_MR_USAGE_* bits",
				usage);
		return RPMA_E_INVAL;
	}
	if (fork_inherited(peer->epoch, "rpma_mr_reg"))
		return RPMA_E_PROVIDER;

	struct rpma_mr_local *mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return RPMA_E_NOMEM;

	struct memshare_plan plan;
	struct memshare_reach reach = {
		.rdma = peer->rdma,
		.addrspace = broker_addrspace(peer->generation),
		.shared_by_fd = broker_maps_shared(peer->generation),
	};
	int ret = memshare_prepare(ptr, size, usage, &reach, &plan);
	if (ret)
		goto err_free;
	if (plan.nheld) {
		mr->held = malloc(plan.nheld * sizeof(*mr->held));
		if (mr->held == NULL) {
			memshare_done(&plan, false);
			ret = RPMA_E_NOMEM;
			goto err_free;
		}
		memcpy(mr->held, plan.held, plan.nheld * sizeof(*mr->held));
		mr->nheld = plan.nheld;
	}

	Rpmad__Segment segs[MR_MAX_SEGMENTS];
	Rpmad__Segment *seg_ptrs[MR_MAX_SEGMENTS];
	for (unsigned i = 0; i < plan.nsegs; i++) {
		rpmad__segment__init(&segs[i]);
		segs[i].in_process = plan.segs[i].kind == MEMSHARE_PROCESS;
		segs[i].file_backed = plan.segs[i].kind == MEMSHARE_FILE;
		segs[i].fd_index = plan.segs[i].fd_index;
		segs[i].offset = plan.segs[i].offset;
		segs[i].length = plan.segs[i].length;
		seg_ptrs[i] = &segs[i];
	}

	Rpmad__MrReg msg = RPMAD__MR_REG__INIT;
	msg.peer_id = peer->peer_id;
	msg.addr = (uint64_t)(uintptr_t)ptr;
	msg.length = size;
	msg.usage = (uint32_t)usage;
	msg.n_segments = plan.nsegs;
	msg.segments = seg_ptrs;
	msg.fd_count = plan.nfds;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_MR_REG;
	req.mr_reg = &msg;

	struct broker_reply reply;
	ret = broker_call(peer->generation, &req, plan.fds, plan.nfds,
			RPMAD__RESPONSE__BODY_MR, &reply);
	memshare_done(&plan, ret == 0);
	if (ret)
		goto err_free;

	mr->peer = peer;
	mr->generation = reply.generation;
	mr->epoch = peer->epoch;
	mr->mr_id = reply.resp->mr->mr_id;
	mr->lkey = reply.resp->mr->lkey;
	mr->rkey = reply.resp->mr->key;
	mr->ptr = ptr;
	mr->size = size;
	mr->private_only = plan.private_only;
	mr->usage = granted_usage(usage, reply.resp->mr);
	/* remote peers reach it (or send into it) through rpmad's copies */
	mr->landed = reply.resp->mr->landing &&
		(usage & (RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_RECV));
	broker_reply_fini(&reply);
	if (mr->landed)
		landing_add(mr->generation, ptr, size);

	*mr_ptr = mr;
	return 0;

err_free:
	free(mr->held);
	free(mr);
	return ret;
}

int
rpma_mr_dereg(struct rpma_mr_local **mr_ptr)
{
	ERRNO_KEEP();
	if (mr_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_mr_local *mr = *mr_ptr;
	if (mr == NULL)
		return 0;

	/* a parent's registration: the child's copy of the object only */
	bool ours = mr->epoch == fork_epoch();
	if (ours && broker_session_alive(mr->generation)) {
		Rpmad__MrDereg msg = RPMAD__MR_DEREG__INIT;
		msg.mr_id = mr->mr_id;
		Rpmad__Request req = RPMAD__REQUEST__INIT;
		req.body_case = RPMAD__REQUEST__BODY_MR_DEREG;
		req.mr_dereg = &msg;
		/* a session that ended just now took the object with it */
		if (broker_call_simple(mr->generation, &req) &&
				broker_session_alive(mr->generation))
			return RPMA_E_PROVIDER;
	}
	/* rpmad let go of the pages: they may become private again */
	if (ours)
		memshare_release(mr->held, mr->nheld);
	if (ours && mr->landed)
		landing_remove(mr->generation, mr->ptr, mr->size);

	free(mr->held);
	free(mr);
	*mr_ptr = NULL;
	return 0;
}

int
rpma_mr_get_descriptor(const struct rpma_mr_local *mr, void *desc)
{
	if (mr == NULL || desc == NULL)
		return RPMA_E_INVAL;

	uint8_t *p = desc;
	le_put64(p, (uint64_t)(uintptr_t)mr->ptr);
	le_put64(p + 8, (uint64_t)mr->size);
	le_put32(p + 16, mr->rkey);
	p[20] = (uint8_t)mr->usage;
	return 0;
}

int
rpma_mr_get_descriptor_size(const struct rpma_mr_local *mr, size_t *desc_size)
{
	if (mr == NULL || desc_size == NULL)
		return RPMA_E_INVAL;

	*desc_size = MR_DESCRIPTOR_SIZE;
	return 0;
}

int
rpma_mr_get_ptr(const struct rpma_mr_local *mr, void **ptr)
{
	if (mr == NULL || ptr == NULL)
		return RPMA_E_INVAL;

	*ptr = mr->ptr;
	return 0;
}

int
rpma_mr_get_size(const struct rpma_mr_local *mr, size_t *size)
{
	if (mr == NULL || size == NULL)
		return RPMA_E_INVAL;

	*size = mr->size;
	return 0;
}

int
rpma_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len,
		int advice, uint32_t flags)
{
	if (mr == NULL)
		return RPMA_E_INVAL;
	if (offset > mr->size || len > mr->size - offset) {
		RLOG_ERROR("range [%zu, +%zu) is out of the registration's %zu "
				"bytes", offset, len, mr->size);
		return RPMA_E_INVAL;
	}
	switch (advice) {
	case IBV_ADVISE_MR_ADVICE_PREFETCH:
	case IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT:
		break;
	case IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE:
		if (!mr_usage_local_write((unsigned)mr->usage)) {
			RLOG_ERROR("PREFETCH_WRITE needs a usage that allows "
					"writing into the registration");
			return RPMA_E_INVAL;
		}
		break;
	default:
		RLOG_ERROR("unknown advice %d", advice);
		return RPMA_E_INVAL;
	}
	if (flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) {
		RLOG_ERROR("unknown advice flags 0x%x", flags);
		return RPMA_E_INVAL;
	}

	Rpmad__MrAdvise msg = RPMAD__MR_ADVISE__INIT;
	msg.mr_id = mr->mr_id;
	msg.offset = offset;
	msg.length = len;
	msg.advice = advice;
	msg.flags = flags;
	Rpmad__Request req = RPMAD__REQUEST__INIT;
	req.body_case = RPMAD__REQUEST__BODY_MR_ADVISE;
	req.mr_advise = &msg;
	return broker_call_simple(mr->generation, &req);
}
