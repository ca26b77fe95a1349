/* SPDX-License-Identifier: MIT */
/* libibverbs.so.1: extended QPs (ibv_create_qp_ex) and the ibv_wr_*
 * work-request API. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_local.h"

/*
 * Between ibv_wr_start and ibv_wr_complete each ibv_wr_<opcode> call opens
 * one ibv_send_wr, the set_* calls after it fill its data or address, and
 * ibv_wr_complete posts the batch whole or not at all (rxe's provider
 * writes a batch into its queue and publishes it only at wr_complete;
 * an error in any call makes wr_complete return it with nothing posted).
 * The batch owns the SGE arrays and inline copies until then.
 */
struct pending {
	struct ibv_send_wr wr;
	struct ibv_sge one;   /* wr_set_sge, an inline copy, ATOMIC_WRITE */
	struct ibv_sge *list; /* wr_set_sge_list's copy, owned */
	uint8_t *inl;	      /* inline data copy, owned */
	uint8_t value[8];     /* ATOMIC_WRITE's operand */
};

struct rv_wr_batch {
	/* Held from wr_start to wr_complete or wr_abort: the QP's batch is
	 * built by one thread at a time, as with rdma-core's providers. */
	pthread_mutex_t lock;
	uint64_t send_ops; /* IBV_QP_EX_WITH_* the QP was made with */
	struct pending *w;
	unsigned n, cap;
	int err;   /* first error of this batch (positive errno) */
	bool open; /* between wr_start and complete/abort */
};

/* What rocemu's QPs take per type in send_ops_flags: as rxe's provider
 * (RXE_SUP_*_QP_SEND_OPS_FLAGS), ATOMIC_WRITE on RC included. MW binding
 * and invalidation are accepted here as rxe does; the device does them
 * (emu/obj/mw.c), the verbs MW and MR translated by wr_to_dev. */
#define OPS_UC                                                                 \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |      \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |                  \
	 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |                   \
	 IBV_QP_EX_WITH_SEND_WITH_INV)
#define OPS_RC                                                                 \
	(OPS_UC | IBV_QP_EX_WITH_RDMA_READ |                                   \
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |                                   \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_WRITE |  \
	 ROCEMU_QP_EX_WITH_FLUSH)

/* rv_qp's wr_flush stands where rdma-core 45's struct ibv_qp_ex has it:
 * right after wr_atomic_write, the last member of the headers built
 * with. Headers that already have wr_flush would break this: stop. */
_Static_assert(offsetof(struct ibv_qp_ex, wr_atomic_write) +
			   sizeof(void (*)(void)) ==
		       sizeof(struct ibv_qp_ex),
	       "struct ibv_qp_ex ends at wr_atomic_write");
_Static_assert(offsetof(struct rv_qp, wr_flush) == sizeof(struct ibv_qp_ex),
	       "wr_flush right after struct ibv_qp_ex");
#define OPS_UD (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)

static struct rv_qp *qp_of(struct ibv_qp_ex *qpx)
{
	return (struct rv_qp *)(void *)qpx;
}

static void fail(struct rv_wr_batch *b, int err)
{
	if (!b->err)
		b->err = err;
}

/* Opens the next WR of the batch for opcode, allowed by the QP's
 * send_ops_flags bit op_flag; NULL (the batch failing) otherwise. */
static struct pending *open_wr(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
			       uint64_t op_flag)
{
	struct rv_wr_batch *b = qp_of(qpx)->batch;

	if (!b->open || !(b->send_ops & op_flag)) {
		fail(b, EINVAL);
		return NULL;
	}
	if (b->err)
		return NULL;
	if (b->n == b->cap) {
		unsigned cap = b->cap ? 2 * b->cap : 8;
		struct pending *w = realloc(b->w, cap * sizeof(*w));
		if (!w) {
			fail(b, ENOMEM);
			return NULL;
		}
		b->w = w;
		b->cap = cap;
	}
	struct pending *p = &b->w[b->n++];
	memset(p, 0, sizeof(*p));
	p->wr.wr_id = qpx->wr_id;
	p->wr.send_flags = qpx->wr_flags;
	p->wr.opcode = op;
	return p;
}

/* The WR the set_* calls fill: the last one opened; NULL (the batch
 * failing) when there is none. */
static struct pending *last_wr(struct ibv_qp_ex *qpx)
{
	struct rv_wr_batch *b = qp_of(qpx)->batch;

	if (!b->open || !b->n) {
		fail(b, EINVAL);
		return NULL;
	}
	return b->err ? NULL : &b->w[b->n - 1];
}

/* Drops the data a WR held, before it is given new data or let go. */
static void clear_data(struct pending *p)
{
	free(p->list);
	free(p->inl);
	p->list = NULL;
	p->inl = NULL;
	p->wr.num_sge = 0;
	p->wr.send_flags &= ~(unsigned)IBV_SEND_INLINE;
}

/* ---- operations ------------------------------------------------------- */

static void wr_send(struct ibv_qp_ex *qpx)
{
	open_wr(qpx, IBV_WR_SEND, IBV_QP_EX_WITH_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct pending *p =
	    open_wr(qpx, IBV_WR_SEND_WITH_IMM, IBV_QP_EX_WITH_SEND_WITH_IMM);
	if (p)
		p->wr.imm_data = imm;
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct pending *p =
	    open_wr(qpx, IBV_WR_SEND_WITH_INV, IBV_QP_EX_WITH_SEND_WITH_INV);
	if (p)
		p->wr.invalidate_rkey = rkey;
}

static void rdma(struct pending *p, uint32_t rkey, uint64_t addr)
{
	if (!p)
		return;
	p->wr.wr.rdma.rkey = rkey;
	p->wr.wr.rdma.remote_addr = addr;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	rdma(open_wr(qpx, IBV_WR_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE), rkey,
	     addr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t addr, __be32 imm)
{
	struct pending *p = open_wr(qpx, IBV_WR_RDMA_WRITE_WITH_IMM,
				    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
	rdma(p, rkey, addr);
	if (p)
		p->wr.imm_data = imm;
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	rdma(open_wr(qpx, IBV_WR_RDMA_READ, IBV_QP_EX_WITH_RDMA_READ), rkey,
	     addr);
}

static void atomic(struct pending *p, uint32_t rkey, uint64_t addr,
		   uint64_t compare_add, uint64_t swap)
{
	if (!p)
		return;
	p->wr.wr.atomic.rkey = rkey;
	p->wr.wr.atomic.remote_addr = addr;
	p->wr.wr.atomic.compare_add = compare_add;
	p->wr.wr.atomic.swap = swap;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t addr, uint64_t compare, uint64_t swap)
{
	atomic(open_wr(qpx, IBV_WR_ATOMIC_CMP_AND_SWP,
		       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP),
	       rkey, addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t addr, uint64_t add)
{
	atomic(open_wr(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD,
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD),
	       rkey, addr, add, 0);
}

/* The 8 bytes are copied now, as rxe's provider does: the WR carries them
 * as its one SGE, which the device copies again at posting. */
static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
			    const void *value)
{
	struct pending *p =
	    open_wr(qpx, IBV_WR_ATOMIC_WRITE, IBV_QP_EX_WITH_ATOMIC_WRITE);

	rdma(p, rkey, addr);
	if (!p)
		return;
	memcpy(p->value, value, 8);
	p->wr.num_sge = 1;
}

/* FLUSH (IBTA 1.5): the device takes it as device.h's ROCEMU_WR_FLUSH
 * describes, the type and level in the FETH's layout; it checks them at
 * wr_complete. */
static void wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
		     size_t len, uint8_t type, uint8_t level)
{
	struct pending *p =
	    open_wr(qpx, ROCEMU_WR_FLUSH, ROCEMU_QP_EX_WITH_FLUSH);

	if (!p)
		return;
	p->wr.wr.atomic.remote_addr = addr;
	p->wr.wr.atomic.rkey = rkey;
	p->wr.wr.atomic.compare_add = len;
	p->wr.wr.atomic.swap = (uint64_t)type | (uint64_t)level << 4;
	/* a type or level too wide for the FETH is refused, not cut */
	if (type > 0xf || level > 3)
		p->wr.wr.atomic.swap = ~0ull;
}

static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct pending *p =
	    open_wr(qpx, IBV_WR_BIND_MW, IBV_QP_EX_WITH_BIND_MW);
	if (!p)
		return;
	p->wr.bind_mw.mw = mw;
	p->wr.bind_mw.rkey = rkey;
	p->wr.bind_mw.bind_info = *info;
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct pending *p =
	    open_wr(qpx, IBV_WR_LOCAL_INV, IBV_QP_EX_WITH_LOCAL_INV);
	if (p)
		p->wr.invalidate_rkey = rkey;
}

/* TSO is for raw packet QPs, XRC for XRC QPs: rocemu has neither. */
static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz,
			uint16_t mss)
{
	(void)hdr, (void)hdr_sz, (void)mss;
	open_wr(qpx, IBV_WR_TSO, IBV_QP_EX_WITH_TSO);
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t srqn)
{
	(void)srqn;
	if (last_wr(qpx))
		fail(qp_of(qpx)->batch, EINVAL);
}

/* ---- data and address of the last WR ---------------------------------- */

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct pending *p = last_wr(qpx);

	if (!p)
		return;
	clear_data(p);
	p->one = (struct ibv_sge){.addr = addr, .length = length, .lkey = lkey};
	p->wr.num_sge = 1;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n,
			    const struct ibv_sge *sg)
{
	struct pending *p = last_wr(qpx);

	if (!p)
		return;
	clear_data(p);
	if (n > (size_t)INT32_MAX) {
		fail(qp_of(qpx)->batch, EINVAL);
		return;
	}
	if (n && !(p->list = malloc(n * sizeof(*sg)))) {
		fail(qp_of(qpx)->batch, ENOMEM);
		return;
	}
	if (n)
		memcpy(p->list, sg, n * sizeof(*sg));
	p->wr.num_sge = (int)n;
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
				    const struct ibv_data_buf *buf)
{
	struct pending *p = last_wr(qpx);
	size_t len = 0, off = 0;

	if (!p)
		return;
	clear_data(p);
	for (size_t i = 0; i < n; i++)
		len += buf[i].length;
	/* The device checks the QP's max_inline_data at wr_complete. */
	if (len > UINT32_MAX) {
		fail(qp_of(qpx)->batch, EINVAL);
		return;
	}
	if (len && !(p->inl = malloc(len))) {
		fail(qp_of(qpx)->batch, ENOMEM);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		memcpy(p->inl + off, buf[i].addr, buf[i].length);
		off += buf[i].length;
	}
	p->one = (struct ibv_sge){.addr = (uintptr_t)p->inl,
				  .length = (uint32_t)len};
	p->wr.num_sge = 1;
	p->wr.send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf one = {.addr = addr, .length = length};

	wr_set_inline_data_list(qpx, 1, &one);
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct pending *p = last_wr(qpx);

	if (!p)
		return;
	p->wr.wr.ud.ah = ah;
	p->wr.wr.ud.remote_qpn = remote_qpn;
	p->wr.wr.ud.remote_qkey = remote_qkey;
}

/* ---- the batch -------------------------------------------------------- */

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct rv_wr_batch *b = qp_of(qpx)->batch;

	pthread_mutex_lock(&b->lock);
	b->open = true;
	b->err = 0;
	b->n = 0;
}

/* Lets the batch go: its copies freed, the QP free for the next. */
static void end_batch(struct rv_wr_batch *b)
{
	for (unsigned i = 0; i < b->n; i++)
		clear_data(&b->w[i]);
	b->n = 0;
	b->err = 0;
	b->open = false;
	pthread_mutex_unlock(&b->lock);
}

/* Chains the WRs, each pointing at its own SGEs (the array may have moved
 * since they were set). */
static void link_batch(struct rv_wr_batch *b)
{
	for (unsigned i = 0; i < b->n; i++) {
		struct pending *p = &b->w[i];
		if (p->wr.opcode == IBV_WR_ATOMIC_WRITE && !p->inl && !p->list)
			p->one = (struct ibv_sge){.addr = (uintptr_t)p->value,
						  .length = 8};
		p->wr.sg_list = p->list ? p->list : &p->one;
		p->wr.next = i + 1 < b->n ? &b->w[i + 1].wr : NULL;
	}
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct rv_qp *qp = qp_of(qpx);
	struct rv_wr_batch *b = qp->batch;
	struct ibv_send_wr *bad;
	int rc;

	if (!b->open)
		return EINVAL; /* no wr_start: nothing held, nothing to post */
	rc = b->err;
	if (!rc && b->n) {
		link_batch(b);
		rc = rv_err(rv_post_send(qp, &b->w[0].wr, &bad, true));
	}
	end_batch(b);
	return rc;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct rv_wr_batch *b = qp_of(qpx)->batch;

	if (b->open)
		end_batch(b);
}

/* ---- creation --------------------------------------------------------- */

int rv_qp_ex_init(struct rv_qp *qp, uint64_t send_ops)
{
	struct ibv_qp_ex *x = &qp->qpx;
	struct rv_wr_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	pthread_mutex_init(&b->lock, NULL);
	b->send_ops = send_ops;
	qp->batch = b;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_send_tso = wr_send_tso;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_atomic_write = wr_atomic_write;
	qp->wr_flush = wr_flush;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	return 0;
}

void rv_qp_ex_fini(struct rv_qp *qp)
{
	struct rv_wr_batch *b = qp->batch;

	if (!b)
		return;
	for (unsigned i = 0; i < b->n; i++)
		clear_data(&b->w[i]);
	free(b->w);
	pthread_mutex_destroy(&b->lock);
	free(b);
	qp->batch = NULL;
}

/* What ibv_create_qp_ex may ask of rocemu, as rxe's provider takes it
 * (RXE_QP_COMP_MASK_SUP, no create flags): 0, or EOPNOTSUPP for what
 * rocemu does not have, EINVAL for a request without a PD. */
static int check_init_attr(const struct ibv_qp_init_attr_ex *a)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	uint64_t ops;

	if (a->comp_mask & ~known)
		return EOPNOTSUPP; /* XRCD, TSO, RSS, ind. tables, ... */
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd)
		return EINVAL;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags)
		return EOPNOTSUPP;
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return 0;
	ops = a->qp_type == IBV_QPT_RC	 ? OPS_RC
	      : a->qp_type == IBV_QPT_UC ? OPS_UC
	      : a->qp_type == IBV_QPT_UD ? OPS_UD
					 : 0;
	return a->send_ops_flags & ~ops ? EOPNOTSUPP : 0;
}

static struct ibv_qp *op_create_qp_ex(struct ibv_context *ctx,
				      struct ibv_qp_init_attr_ex *a)
{
	struct ibv_qp_init_attr base = {
	    .qp_context = a->qp_context,
	    .send_cq = a->send_cq,
	    .recv_cq = a->recv_cq,
	    .srq = a->srq,
	    .cap = a->cap,
	    .qp_type = a->qp_type,
	    .sq_sig_all = a->sq_sig_all,
	};
	struct rv_qp *qp;
	int err = rv_stale(ctx) ? EIO : check_init_attr(a);

	if (err) {
		errno = err;
		return NULL;
	}
	if (!(qp = rv_qp_create(a->pd, &base)))
		return NULL;
	a->cap = base.cap;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    rv_qp_ex_init(qp, a->send_ops_flags)) {
		ibv_destroy_qp(&qp->qp);
		errno = ENOMEM;
		return NULL;
	}
	return &qp->qp;
}

void rv_fill_qp_ex_ops(struct rv_context *ctx)
{
	ctx->vctx.create_qp_ex = op_create_qp_ex;
}
