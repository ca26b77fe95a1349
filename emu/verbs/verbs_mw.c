/* SPDX-License-Identifier: MIT */
/* libibverbs.so.1: memory windows (ibv_alloc_mw, ibv_dealloc_mw, ibv_bind_mw) and the handles of BIND_MW WRs. */
#include <errno.h>
#include <stdlib.h>

#include "verbs_local.h"

#define WRAP(type, obj) ((struct type *)(void *)(obj))

static struct ibv_mw *op_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct rv_mw *mw;

	if (rv_stale(ibpd->context))
		return NULL;
	if (!(mw = calloc(1, sizeof(*mw)))) {
		errno = ENOMEM;
		return NULL;
	}
	mw->m = rocemu_mw_alloc(WRAP(rv_pd, ibpd)->p, type);
	if (!mw->m) {
		int e = errno;
		free(mw);
		errno = e;
		return NULL;
	}
	mw->mw = (struct ibv_mw){ .context = ibpd->context, .pd = ibpd,
				  .rkey = rocemu_mw_rkey(mw->m),
				  .type = type };
	return &mw->mw;
}

static int op_dealloc_mw(struct ibv_mw *ibmw)
{
	struct rv_mw *mw = WRAP(rv_mw, ibmw);
	int rc = rv_stale(ibmw->context) ? -EIO : rocemu_mw_dealloc(mw->m);

	if (!rc)
		free(mw);
	return rv_err(rc);
}

/*
 * Type 1 (ibv_bind_mw(3)): a BIND_MW WR on qp, as rdma-core's providers
 * post it, with the next key byte; the new rkey is the window's from
 * now on, though the bind itself completes (or fails with MW_BIND_ERR)
 * on the send CQ, in order with the QP's other WRs.
 */
static int op_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		      struct ibv_mw_bind *b)
{
	struct ibv_send_wr wr = {
		.wr_id = b->wr_id, .opcode = IBV_WR_BIND_MW,
		.send_flags = b->send_flags,
		.bind_mw = { .mw = mw, .rkey = ibv_inc_rkey(mw->rkey),
			     .bind_info = b->bind_info },
	}, *bad;
	int rc = ibv_post_send(qp, &wr, &bad);

	if (!rc)
		mw->rkey = wr.bind_mw.rkey;
	return rc;
}

bool rv_wr_to_dev(struct ibv_send_wr *wr)
{
	if (wr->opcode != IBV_WR_BIND_MW)
		return false;
	if (wr->bind_mw.mw)
		wr->bind_mw.mw =
			(struct ibv_mw *)(void *)WRAP(rv_mw, wr->bind_mw.mw)->m;
	if (wr->bind_mw.bind_info.mr)
		wr->bind_mw.bind_info.mr = (struct ibv_mr *)(void *)WRAP(
			rv_mr, wr->bind_mw.bind_info.mr)->m;
	return true;
}

void rv_fill_mw_ops(struct rv_context *ctx)
{
	struct ibv_context_ops *ops = &ctx->vctx.context.ops;

	ops->alloc_mw = op_alloc_mw;
	ops->dealloc_mw = op_dealloc_mw;
	ops->bind_mw = op_bind_mw;
}
