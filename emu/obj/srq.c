/* SPDX-License-Identifier: MIT */
/* Shared receive queues: one receive ring for several QPs, with a limit event. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "obj.h"

struct rocemu_srq *rocemu_srq_new(struct rocemu_pd *pd,
				  struct ibv_srq_init_attr *attr)
{
	CORE_GUARD(pd->dev->core);
	struct ibv_srq_attr *a = &attr->attr;

	if (a->max_wr < 1 || a->max_wr > MAX_QP_WR || a->max_sge > MAX_SGE ||
	    a->srq_limit > a->max_wr) {
		errno = EINVAL;
		return NULL;
	}
	struct rocemu_srq *srq = calloc(1, sizeof(*srq));
	if (!srq || ring_init(&srq->rq, a->max_wr, sizeof(struct rwqe))) {
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	a->max_wr = ring_size(&srq->rq);
	srq->dev = pd->dev;
	srq->pd = pd;
	srq->max_sge = a->max_sge;
	srq->limit = a->srq_limit;
	pd->users++;
	return srq;
}

int rocemu_srq_free(struct rocemu_srq *srq)
{
	CORE_GUARD(srq->dev->core);
	if (srq->users)
		return -EBUSY;
	dev_forget_events(srq->dev, srq);
	srq->pd->users--;
	ring_fini(&srq->rq);
	free(srq);
	return 0;
}

int rocemu_srq_modify(struct rocemu_srq *srq, struct ibv_srq_attr *attr,
		      int mask)
{
	CORE_GUARD(srq->dev->core);
	if (mask & IBV_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & ~IBV_SRQ_LIMIT)
		return -EINVAL;
	if (attr->srq_limit > ring_size(&srq->rq))
		return -EINVAL;
	srq->limit = attr->srq_limit;
	return 0;
}

int rocemu_srq_query(struct rocemu_srq *srq, struct ibv_srq_attr *attr)
{
	CORE_GUARD(srq->dev->core);
	attr->max_wr = ring_size(&srq->rq);
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	return 0;
}

int rocemu_post_srq_recv(struct rocemu_srq *srq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad)
{
	CORE_GUARD(srq->dev->core);
	int rc = 0;

	for (; wr && !rc; wr = wr->next)
		rc = rwqe_post(&srq->rq, srq->max_sge, wr);
	if (rc && bad)
		*bad = wr;
	return rc;
}

/*
 * The receive WQE a QP takes next. An armed SRQ that drops below its
 * limit raises IBV_EVENT_SRQ_LIMIT_REACHED once and disarms (IBTA
 * 10.2.9.5).
 */
bool qp_take_recv(struct rocemu_qp *qp, struct rwqe *out)
{
	struct ring *rq = qp->srq ? &qp->srq->rq : &qp->rq;
	struct rwqe *wqe = ring_cons_slot(rq);

	if (!wqe)
		return false;
	*out = *wqe;
	ring_consume(rq);
	if (qp->srq && qp->srq->limit && ring_used(rq) < qp->srq->limit) {
		qp->srq->limit = 0;
		dev_async_event(qp->dev, IBV_EVENT_SRQ_LIMIT_REACHED,
				qp->srq);
	}
	return true;
}
