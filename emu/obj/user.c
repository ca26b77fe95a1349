/* SPDX-License-Identifier: MIT */
/* Callers' pointers kept with device objects, and small accessors. */
#include "obj.h"

void rocemu_cq_set_user(struct rocemu_cq *cq, void *user)
{
	cq->user = user;
}

void *rocemu_cq_user(const struct rocemu_cq *cq)
{
	return cq->user;
}

void rocemu_qp_set_user(struct rocemu_qp *qp, void *user)
{
	qp->user = user;
}

void *rocemu_qp_user(const struct rocemu_qp *qp)
{
	return qp->user;
}

void rocemu_srq_set_user(struct rocemu_srq *srq, void *user)
{
	srq->user = user;
}

void *rocemu_srq_user(const struct rocemu_srq *srq)
{
	return srq->user;
}

const uint8_t *rocemu_dev_gid(const struct rocemu_dev *d)
{
	return d->gid;
}
