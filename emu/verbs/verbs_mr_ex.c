/* SPDX-License-Identifier: MIT */
/* libibverbs.so.1: ibv_rereg_mr and ibv_advise_mr. */
#include <errno.h>

#include "verbs_local.h"

#define WRAP(type, obj) ((struct type *)(void *)(obj))

/* The input checks libibverbs itself makes before asking the provider
 * (rdma-core's ibv_rereg_mr): true when the call is well formed. */
static bool rereg_input_ok(int flags, void *addr, size_t length, int access)
{
	if (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED)
		return false;
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!addr || !length))
		return false;
	return !access || (flags & IBV_REREG_MR_CHANGE_ACCESS);
}

/*
 * ibv_rereg_mr(3): 0, or an IBV_REREG_MR_ERR_* code with errno set:
 * _INPUT (EINVAL) when libibverbs' own checks refuse the call, the old MR
 * still valid; _CMD (errno from the device) when the device refuses it.
 * The device leaves the MR as it was on a refusal, so the old MR stays
 * usable here even after _CMD (the man page only promises less). rocemu
 * pins nothing, so there is no fork protection to move and the _FORK
 * codes never occur. The keys stay; ibv_mr is updated as libibverbs does.
 */
int ibv_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *pd, void *addr,
		 size_t length, int access)
{
	struct rv_mr *mr = WRAP(rv_mr, ibmr);
	int rc;

	if (rv_stale(ibmr->context))
		return IBV_REREG_MR_ERR_CMD;
	if (!rereg_input_ok(flags, addr, length, access)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	/* pd means something only with CHANGE_PD: otherwise it may be
	 * anything (pyverbs passes an uninitialised value) and is not read. */
	struct rocemu_pd *p = (flags & IBV_REREG_MR_CHANGE_PD) && pd
				      ? WRAP(rv_pd, pd)->p : NULL;
	rc = rocemu_mr_rereg(mr->m, flags, p, addr, length,
			     access & ~IBV_ACCESS_OPTIONAL_RANGE);
	if (rc) {
		errno = -rc;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		ibmr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		ibmr->addr = addr;
		ibmr->length = length;
	}
	ibmr->lkey = rocemu_mr_lkey(mr->m);
	ibmr->rkey = rocemu_mr_rkey(mr->m);
	return 0;
}

/* ibv_advise_mr(3) through the header's inline: errno values, 0 on
 * success. */
static int op_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			uint32_t flags, struct ibv_sge *sg_list,
			uint32_t num_sge)
{
	if (!pd)
		return EINVAL;
	if (rv_stale(pd->context))
		return EIO;
	return rv_err(rocemu_mr_advise(WRAP(rv_pd, pd)->p, (int)advice, flags,
				       sg_list, num_sge));
}

void rv_fill_mr_ex_ops(struct rv_context *ctx)
{
	ctx->vctx.advise_mr = op_advise_mr;
}
