/* SPDX-License-Identifier: MIT */
/* libibverbs.so.1: extended CQs (ibv_create_cq_ex) and their polling ops. */
#include <errno.h>

#include "verbs_local.h"

/*
 * The fields an extended CQ can give: the standard set Linux rxe's
 * provider offers, and the completion timestamps hardware gives (from the
 * device clock: 1 GHz, one cycle a nanosecond, as hca_core_clock says);
 * no CVLAN, flow tag or tag matching: other flags are refused with
 * EOPNOTSUPP.
 */
#define RV_CQ_EX_WC_FLAGS                                              \
	(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

static struct rv_cq *to_rv(struct ibv_cq_ex *cqx)
{
	return (struct rv_cq *)(void *)cqx;
}

/*
 * Each of start_poll and next_poll takes one completion off the device
 * ring into the CQ's own copy (cur), which the read ops read until the
 * next of them: nothing stays locked between the application's calls, so
 * a thread holding a poll sequence open never blocks the device, nor
 * posting from other threads (the lock order in emu/core/core.c has the
 * world lock before the CQ's). rdma-core's contract keeps start, next and
 * end of one CQ from running concurrently, which is what cur needs.
 */
static int take(struct rv_cq *cq)
{
	if (rocemu_cq_take_ts(cq->c, &cq->cur, &cq->cur_ts))
		return ENOENT;
	cq->cqx.wr_id = cq->cur.wr_id;
	cq->cqx.status = cq->cur.status;
	return 0;
}

static int cq_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct rv_cq *cq = to_rv(cqx);

	if (rv_stale(cqx->context))
		return EIO;
	if (attr->comp_mask)
		return EINVAL; /* no attribute is defined */
	/* Programs that spin here progress the device, as with ibv_poll_cq. */
	if (take(cq) && (!rocemu_world_poll(rv_world()) || take(cq)))
		return ENOENT;
	return 0;
}

static int cq_next_poll(struct ibv_cq_ex *cqx)
{
	return rv_stale(cqx->context) ? EIO : take(to_rv(cqx));
}

static void cq_end_poll(struct ibv_cq_ex *cqx)
{
	(void)cqx; /* the completions read were taken already */
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cqx)
{
	return to_rv(cqx)->cur.opcode;
}

static uint32_t read_vendor_err(struct ibv_cq_ex *cqx)
{
	return to_rv(cqx)->cur.vendor_err;
}

static uint32_t read_byte_len(struct ibv_cq_ex *cqx)
{
	return to_rv(cqx)->cur.byte_len;
}

/* Also the invalidated rkey: ibv_wc keeps both in one union, and the
 * header's ibv_wc_read_invalidated_rkey calls this op. */
static __be32 read_imm_data(struct ibv_cq_ex *cqx)
{
	return to_rv(cqx)->cur.imm_data;
}

static uint32_t read_qp_num(struct ibv_cq_ex *cqx)
{
	return to_rv(cqx)->cur.qp_num;
}

static uint32_t read_src_qp(struct ibv_cq_ex *cqx)
{
	return to_rv(cqx)->cur.src_qp;
}

static unsigned int read_wc_flags(struct ibv_cq_ex *cqx)
{
	return to_rv(cqx)->cur.wc_flags;
}

static uint32_t read_slid(struct ibv_cq_ex *cqx)
{
	return to_rv(cqx)->cur.slid;
}

static uint8_t read_sl(struct ibv_cq_ex *cqx)
{
	return to_rv(cqx)->cur.sl;
}

static uint8_t read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return to_rv(cqx)->cur.dlid_path_bits;
}

/* The device clock's time when the completion was made, in its cycles
 * (ns): the virtual clock on the deterministic wire, real time on UDP. */
static uint64_t read_completion_ts(struct ibv_cq_ex *cqx)
{
	return to_rv(cqx)->cur_ts;
}

/* The same time as ns since the Unix epoch. */
static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *cqx)
{
	return rocemu_world_wallclock(rv_world(), to_rv(cqx)->cur_ts);
}

/* The ops of every extended CQ: those always there (status, wr_id,
 * opcode, vendor_err, wc_flags) and those of the fields offered. */
static void fill_poll_ops(struct ibv_cq_ex *x)
{
	x->start_poll = cq_start_poll;
	x->next_poll = cq_next_poll;
	x->end_poll = cq_end_poll;
	x->read_opcode = read_opcode;
	x->read_vendor_err = read_vendor_err;
	x->read_wc_flags = read_wc_flags;
	x->read_byte_len = read_byte_len;
	x->read_imm_data = read_imm_data;
	x->read_qp_num = read_qp_num;
	x->read_src_qp = read_src_qp;
	x->read_slid = read_slid;
	x->read_sl = read_sl;
	x->read_dlid_path_bits = read_dlid_path_bits;
	x->read_completion_ts = read_completion_ts;
	x->read_completion_wallclock_ns = read_completion_wallclock_ns;
}

/* What rxe accepts: wc_flags within its set, no creation flags (its
 * kernel driver refuses them all) and no parent domain. */
static int check_attr(const struct ibv_cq_init_attr_ex *a)
{
	if (a->wc_flags & ~(uint64_t)RV_CQ_EX_WC_FLAGS)
		return EOPNOTSUPP;
	if (a->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS)
		return EOPNOTSUPP;
	if ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && a->flags)
		return EOPNOTSUPP;
	return 0;
}

static struct ibv_cq_ex *op_create_cq_ex(struct ibv_context *context,
					 struct ibv_cq_init_attr_ex *attr)
{
	struct rv_cq *cq;
	int rc = rv_stale(context) ? EIO : check_attr(attr);

	if (rc) {
		errno = rc;
		return NULL;
	}
	cq = rv_cq_create(context, (int)attr->cqe, attr->cq_context,
			  attr->channel, (int)attr->comp_vector);
	if (!cq)
		return NULL;
	fill_poll_ops(&cq->cqx);
	return &cq->cqx;
}

void rv_fill_cq_ex_ops(struct rv_context *ctx)
{
	ctx->vctx.create_cq_ex = op_create_cq_ex;
}
