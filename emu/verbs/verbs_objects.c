/* SPDX-License-Identifier: MIT */
/* libibverbs.so.1: PDs, MRs, CQs, channels, QPs, SRQs, AHs, and the data-path ops. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_local.h"

#undef ibv_reg_mr

#define WRAP(type, field, obj) ((struct type *)(void *)(obj))

static struct rocemu_dev *ctx_dev(struct ibv_context *ctx)
{
	(void)ctx;
	return rv_dev();
}

/* Returns p, or sets errno from a negative rc and returns NULL. */
static void *or_errno(void *p, int err)
{
	if (!p)
		errno = err ? err : ENOMEM;
	return p;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct rv_pd *pd;

	if (rv_stale(context))
		return NULL;
	pd = calloc(1, sizeof(*pd));
	if (!pd || !(pd->p = rocemu_pd_alloc(ctx_dev(context)))) {
		free(pd);
		return or_errno(NULL, ENOMEM);
	}
	pd->pd.context = context;
	/* what explain mode's reasons call it (ibv_pd.handle is the
	 * kernel's number of the PD on a NIC) */
	pd->pd.handle = rocemu_pd_handle(pd->p);
	return &pd->pd;
}

int ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct rv_pd *pd = WRAP(rv_pd, pd, ibpd);
	int rc = rv_stale(ibpd->context) ? -EIO : rocemu_pd_free(pd->p);

	if (!rc)
		free(pd);
	return rv_err(rc);
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			  int access)
{
	struct rv_mr *mr;

	if (rv_stale(ibpd->context))
		return NULL;
	if (!(mr = calloc(1, sizeof(*mr))))
		return or_errno(NULL, ENOMEM);
	mr->m = rocemu_mr_reg(WRAP(rv_pd, pd, ibpd)->p, addr, length,
			      access & ~IBV_ACCESS_OPTIONAL_RANGE);
	if (!mr->m) {
		int e = errno;
		free(mr);
		return or_errno(NULL, e);
	}
	mr->mr = (struct ibv_mr){ .context = ibpd->context, .pd = ibpd,
				  .addr = addr, .length = length,
				  .lkey = rocemu_mr_lkey(mr->m),
				  .rkey = rocemu_mr_rkey(mr->m) };
	return &mr->mr;
}

/* rocemu's MRs are addressed by virtual address: iova must be addr. */
struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t iova, unsigned int access);
struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t iova, unsigned int access)
{
	if (iova != (uint64_t)(uintptr_t)addr)
		return or_errno(NULL, EOPNOTSUPP);
	return ibv_reg_mr(pd, addr, length, (int)access);
}

int ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct rv_mr *mr = WRAP(rv_mr, mr, ibmr);
	int rc = rv_stale(ibmr->context) ? -EIO : rocemu_mr_dereg(mr->m);

	if (!rc && mr->dm)
		rv_dm_mr_gone(mr->dm);
	if (!rc)
		free(mr);
	return rv_err(rc);
}

struct rv_cq *rv_cq_create(struct ibv_context *context, int cqe,
			   void *cq_context, struct ibv_comp_channel *channel,
			   int comp_vector)
{
	struct rv_cq *cq;

	if (rv_stale(context))
		return NULL;
	/* One completion vector, as ibv_open_device reports. */
	if (comp_vector < 0 || comp_vector >= context->num_comp_vectors)
		return or_errno(NULL, EINVAL);
	if (!(cq = calloc(1, sizeof(*cq))))
		return or_errno(NULL, ENOMEM);
	cq->c = rocemu_cq_new(ctx_dev(context), cqe,
			      channel ? WRAP(rv_channel, ch, channel)->c : NULL);
	if (!cq->c) {
		int e = errno;
		free(cq);
		return or_errno(NULL, e);
	}
	rocemu_cq_set_user(cq->c, cq);
	cq->cq.context = context;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = cqe;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	return cq;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
			     void *cq_context, struct ibv_comp_channel *channel,
			     int comp_vector)
{
	struct rv_cq *cq = rv_cq_create(context, cqe, cq_context, channel,
					comp_vector);

	return cq ? &cq->cq : NULL;
}

/* Keeps the completions held; cqe shows the size asked for, as rxe. The
 * work posted before is done first (as a kernel driver's would be by
 * now), so that the completions it makes count against the new size. */
int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	int rc;

	if (rv_stale(ibcq->context))
		return EIO;
	rocemu_world_poll(rv_world());
	rc = rocemu_cq_resize(WRAP(rv_cq, cq, ibcq)->c, cqe);

	if (!rc)
		ibcq->cqe = cqe;
	return rv_err(rc);
}

int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct rv_cq *cq = WRAP(rv_cq, cq, ibcq);
	int rc = rv_stale(ibcq->context) ? -EIO : rv_cq_destroy(cq);

	if (rc)
		return rv_err(rc);
	pthread_mutex_destroy(&cq->cq.mutex);
	pthread_cond_destroy(&cq->cq.cond);
	free(cq);
	return 0;
}

struct rv_qp *rv_qp_create(struct ibv_pd *ibpd, struct ibv_qp_init_attr *attr)
{
	struct rv_qp *qp;
	struct ibv_qp_init_attr a = *attr;

	if (rv_stale(ibpd->context))
		return NULL;
	/* Every QP type has both CQs (ibv_create_qp(3)). */
	if (!attr->send_cq || !attr->recv_cq)
		return or_errno(NULL, EINVAL);
	if (!(qp = calloc(1, sizeof(*qp))))
		return or_errno(NULL, ENOMEM);
	a.send_cq = (struct ibv_cq *)(void *)WRAP(rv_cq, cq, attr->send_cq)->c;
	a.recv_cq = (struct ibv_cq *)(void *)WRAP(rv_cq, cq, attr->recv_cq)->c;
	a.srq = attr->srq ? (struct ibv_srq *)(void *)WRAP(rv_srq, srq, attr->srq)->s
			  : NULL;
	qp->q = rocemu_qp_new(WRAP(rv_pd, pd, ibpd)->p, &a);
	if (!qp->q) {
		int e = errno;
		free(qp);
		return or_errno(NULL, e);
	}
	attr->cap = a.cap; /* what was really given */
	rocemu_qp_set_user(qp->q, qp);
	qp->qp = (struct ibv_qp){ .context = ibpd->context,
				  .qp_context = attr->qp_context, .pd = ibpd,
				  .send_cq = attr->send_cq,
				  .recv_cq = attr->recv_cq, .srq = attr->srq,
				  .qp_num = rocemu_qp_num(qp->q),
				  .state = IBV_QPS_RESET,
				  .qp_type = attr->qp_type };
	pthread_mutex_init(&qp->qp.mutex, NULL);
	pthread_cond_init(&qp->qp.cond, NULL);
	return qp;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr *attr)
{
	struct rv_qp *qp = rv_qp_create(ibpd, attr);

	return qp ? &qp->qp : NULL;
}

int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct rv_qp *qp = WRAP(rv_qp, qp, ibqp);
	int rc = rv_stale(ibqp->context) ? -EIO
					 : rocemu_qp_modify(qp->q, attr, mask);

	if (!rc && (mask & IBV_QP_STATE))
		ibqp->state = attr->qp_state;
	return rv_err(rc);
}

int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init)
{
	struct ibv_qp_init_attr dev_init;
	int rc = rv_stale(ibqp->context)
			 ? -EIO
			 : rocemu_qp_query(WRAP(rv_qp, qp, ibqp)->q, attr,
					   &dev_init);

	(void)mask;
	if (!rc && init) {
		*init = dev_init;
		init->send_cq = ibqp->send_cq;
		init->recv_cq = ibqp->recv_cq;
		init->srq = ibqp->srq;
		init->qp_context = ibqp->qp_context;
	}
	return rv_err(rc);
}

int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct rv_qp *qp = WRAP(rv_qp, qp, ibqp);
	int rc = rv_stale(ibqp->context) ? -EIO : rv_qp_destroy(qp);

	if (rc)
		return rv_err(rc);
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	rv_qp_ex_fini(qp);
	free(qp);
	return 0;
}

/* As libibverbs: the ibv_qp_ex of a QP made with send_ops_flags
 * (ibv_create_qp_ex), NULL for any other. */
struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *ibqp)
{
	struct rv_qp *qp = WRAP(rv_qp, qp, ibqp);

	return qp->batch ? &qp->qpx : or_errno(NULL, EOPNOTSUPP);
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *ibpd,
			       struct ibv_srq_init_attr *attr)
{
	struct rv_srq *srq;

	if (rv_stale(ibpd->context))
		return NULL;
	if (!(srq = calloc(1, sizeof(*srq))))
		return or_errno(NULL, ENOMEM);
	srq->s = rocemu_srq_new(WRAP(rv_pd, pd, ibpd)->p, attr);
	if (!srq->s) {
		int e = errno;
		free(srq);
		return or_errno(NULL, e);
	}
	rocemu_srq_set_user(srq->s, srq);
	srq->srq = (struct ibv_srq){ .context = ibpd->context,
				     .srq_context = attr->srq_context,
				     .pd = ibpd };
	pthread_mutex_init(&srq->srq.mutex, NULL);
	pthread_cond_init(&srq->srq.cond, NULL);
	return &srq->srq;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	if (rv_stale(srq->context))
		return EIO;
	return rv_err(rocemu_srq_modify(WRAP(rv_srq, srq, srq)->s, attr, mask));
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	if (rv_stale(srq->context))
		return EIO;
	return rv_err(rocemu_srq_query(WRAP(rv_srq, srq, srq)->s, attr));
}

int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct rv_srq *srq = WRAP(rv_srq, srq, ibsrq);
	int rc = rv_stale(ibsrq->context) ? -EIO : rv_srq_destroy(srq);

	if (rc)
		return rv_err(rc);
	pthread_mutex_destroy(&ibsrq->mutex);
	pthread_cond_destroy(&ibsrq->cond);
	free(srq);
	return 0;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct rv_ah *ah;

	if (rv_stale(ibpd->context))
		return NULL;
	if (!(ah = calloc(1, sizeof(*ah))))
		return or_errno(NULL, ENOMEM);
	ah->a = rocemu_ah_new(WRAP(rv_pd, pd, ibpd)->p, attr);
	if (!ah->a) {
		int e = errno;
		free(ah);
		return or_errno(NULL, e);
	}
	ah->ah = (struct ibv_ah){ .context = ibpd->context, .pd = ibpd };
	return &ah->ah;
}

int ibv_destroy_ah(struct ibv_ah *ibah)
{
	struct rv_ah *ah = WRAP(rv_ah, ah, ibah);
	int rc = rv_stale(ibah->context) ? -EIO : rocemu_ah_free(ah->a);

	if (!rc)
		free(ah);
	return rv_err(rc);
}

/* ---- the ops the header's inline functions call ----------------------- */

/* One WR as the device takes it: the verbs AH of a UD WR, the verbs MW and
 * MR of a BIND_MW WR, replaced by the device's. */
static void wr_to_dev(const struct rv_qp *qp, const struct ibv_send_wr *in,
		      struct ibv_send_wr *out)
{
	*out = *in;
	out->next = NULL;
	if (qp->qp.qp_type == IBV_QPT_UD && in->wr.ud.ah)
		out->wr.ud.ah =
			(struct ibv_ah *)(void *)WRAP(rv_ah, ah, in->wr.ud.ah)->a;
	rv_wr_to_dev(out);
}

int rv_post_send(struct rv_qp *qp, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad, bool all)
{
	struct ibv_send_wr few[16], *dev = few, *dbad = NULL, *w;
	size_t n = 0, i;
	int rc;

	if (rv_stale(qp->qp.context)) {
		*bad = wr;
		return -EIO;
	}
	for (w = wr; w; w = w->next)
		n++;
	if (n > 16 && !(dev = calloc(n, sizeof(*dev)))) {
		*bad = wr;
		return -ENOMEM;
	}
	for (w = wr, i = 0; w; w = w->next, i++) {
		wr_to_dev(qp, w, &dev[i]);
		if (i)
			dev[i - 1].next = &dev[i];
	}
	rc = all ? rocemu_post_send_all(qp->q, n ? dev : NULL, &dbad)
		 : rocemu_post_send(qp->q, n ? dev : NULL, &dbad);
	if (rc) {
		/* name the caller's WR at the place of the device's copy */
		size_t at = dbad && n ? (size_t)(dbad - dev) : 0;
		for (*bad = wr; *bad && at--;)
			*bad = (*bad)->next;
	}
	if (dev != few)
		free(dev);
	return rc;
}

static int op_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad)
{
	return rv_err(rv_post_send(WRAP(rv_qp, qp, ibqp), wr, bad, false));
}

static int op_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad)
{
	if (rv_stale(qp->context)) {
		*bad = wr;
		return EIO;
	}
	return rv_err(rocemu_post_recv(WRAP(rv_qp, qp, qp)->q, wr, bad));
}

static int op_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad)
{
	if (rv_stale(srq->context)) {
		*bad = wr;
		return EIO;
	}
	return rv_err(rocemu_post_srq_recv(WRAP(rv_srq, srq, srq)->s, wr, bad));
}

/* Programs that spin on ibv_poll_cq get their completions from their own
 * thread's work, as a polling-mode driver would give them. */
static int op_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct rocemu_cq *c = WRAP(rv_cq, cq, cq)->c;
	int got;

	if (rv_stale(cq->context))
		return -EIO;
	got = rocemu_cq_poll(c, n, wc);
	if (got == 0 && n > 0 && rocemu_world_poll(rv_world()))
		got = rocemu_cq_poll(c, n, wc);
	return got;
}

static int op_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	if (rv_stale(cq->context))
		return EIO;
	return rv_err(rocemu_cq_req_notify(WRAP(rv_cq, cq, cq)->c,
					   solicited_only != 0));
}

static int op_query_port(struct ibv_context *context, uint8_t port,
			 struct ibv_port_attr *attr, size_t len);

void rv_fill_ops(struct rv_context *ctx)
{
	struct ibv_context_ops *ops = &ctx->vctx.context.ops;

	ops->post_send = op_post_send;
	ops->post_recv = op_post_recv;
	ops->post_srq_recv = op_post_srq_recv;
	ops->poll_cq = op_poll_cq;
	ops->req_notify_cq = op_req_notify_cq;
	ctx->vctx.query_port = op_query_port;
	rv_fill_device_ex_ops(ctx);
	rv_fill_mw_ops(ctx);
	rv_fill_cq_ex_ops(ctx);
	rv_fill_dm_ops(ctx);
	rv_fill_qp_ex_ops(ctx);
	rv_fill_mr_ex_ops(ctx);
}

static int op_query_port(struct ibv_context *context, uint8_t port,
			 struct ibv_port_attr *attr, size_t len)
{
	return rv_query_port(context, port, attr, len);
}

/* The address of whoever sent a UD message: the GRH area of the receive
 * buffer holds it (ibv_init_ah_from_wc(3)); for RoCEv2 over IPv4 that area
 * ends with the IPv4 header. Its traffic class (the IPv4 TOS) and, over
 * IPv6, its flow label go into the answer, as rdma-core takes them. */
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
			struct ibv_wc *wc, struct ibv_grh *grh,
			struct ibv_ah_attr *attr)
{
	const uint8_t *g = (const uint8_t *)grh;

	(void)context;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return EINVAL;
	*attr = (struct ibv_ah_attr){ .is_global = 1, .port_num = port_num,
				      .sl = wc->sl };
	if ((g[20] >> 4) == 4) {
		attr->grh.dgid.raw[10] = attr->grh.dgid.raw[11] = 0xff;
		memcpy(attr->grh.dgid.raw + 12, g + 20 + 12, 4);
		attr->grh.traffic_class = g[20 + 1];
	} else {
		uint32_t vtcfl = be32toh(grh->version_tclass_flow);

		memcpy(attr->grh.dgid.raw, grh->sgid.raw, 16);
		attr->grh.traffic_class = (uint8_t)(vtcfl >> 20);
		attr->grh.flow_label = vtcfl & 0xfffff;
	}
	attr->grh.hop_limit = 64;
	return 0;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
				     struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;
	int rc = ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr);

	return rc ? or_errno(NULL, rc) : ibv_create_ah(pd, &attr);
}

/* Multicast is not there (no RoCE multicast on the UDP wire yet). */
int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp, (void)gid, (void)lid;
	return EOPNOTSUPP;
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp, (void)gid, (void)lid;
	return EOPNOTSUPP;
}
