/* SPDX-License-Identifier: MIT */
/* librdmacm.so.1: QPs and SRQs on ids, their CQs, their INIT state, rdma_init_qp_attr. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_local.h"

/* The INIT attributes of an id's QP before the CM has any (Linux's
 * cma_ib_init_qp_attr): P_Key index 0, port 1, access 0, the Q_Key for UD. */
static int init_attr(struct rc_id *r, struct ibv_qp_attr *a, int *mask)
{
	a->qp_state = IBV_QPS_INIT;
	a->pkey_index = 0;
	a->port_num = 1;
	*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (r->id.qp_type == IBV_QPT_UD) {
		a->qkey = RC_UDP_QKEY;
		*mask |= IBV_QP_QKEY;
	} else {
		a->qp_access_flags = 0;
		*mask |= IBV_QP_ACCESS_FLAGS;
	}
	return 0;
}

int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr,
		      int *qp_attr_mask)
{
	struct rc_id *r = rc_of(id);

	if (!r || !qp_attr || !qp_attr_mask || !r->id.verbs)
		return rc_err(-EINVAL);
	if (qp_attr->qp_state == IBV_QPS_INIT && !r->cm)
		return init_attr(r, qp_attr, qp_attr_mask);
	if (qp_attr->qp_state == IBV_QPS_INIT ||
	    qp_attr->qp_state == IBV_QPS_RTR ||
	    qp_attr->qp_state == IBV_QPS_RTS) {
		int rc = rc_cm_init_qp_attr(r, qp_attr, qp_attr_mask);
		return rc ? rc_err(rc) : 0;
	}
	return rc_err(-EINVAL);
}

static void destroy_cqs(struct rdma_cm_id *id)
{
	if (id->recv_cq)
		ibv_destroy_cq(id->recv_cq);
	if (id->recv_cq_channel)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	if (id->send_cq)
		ibv_destroy_cq(id->send_cq);
	if (id->send_cq_channel)
		ibv_destroy_comp_channel(id->send_cq_channel);
	id->recv_cq = id->send_cq = NULL;
	id->recv_cq_channel = id->send_cq_channel = NULL;
}

/* librdmacm's ucma_create_cqs: a completion channel and a CQ each for
 * receives and sends, sized by the QP's capacities. */
static int create_cqs(struct rc_id *r, uint32_t send_size, uint32_t recv_size)
{
	struct rdma_cm_id *id = &r->id;

	if (recv_size) {
		id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->recv_cq_channel)
			goto err;
		id->recv_cq = ibv_create_cq(id->verbs, (int)recv_size, id,
					    id->recv_cq_channel, 0);
		if (!id->recv_cq)
			goto err;
	}
	if (send_size) {
		id->send_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->send_cq_channel)
			goto err;
		id->send_cq = ibv_create_cq(id->verbs, (int)send_size, id,
					    id->send_cq_channel, 0);
		if (!id->send_cq)
			goto err;
	}
	return 0;
err:
	int e = errno ? errno : ENOMEM;
	destroy_cqs(id);
	return -e;
}

/* librdmacm's ucma_init_ud_qp: a UD QP needs no peer, so it goes on to
 * RTR and RTS (send PSN 0) at creation. 0 or an ibv_modify_qp error. */
static int ud_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);

	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return rc ? rc : ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct rc_id *r = rc_of(id);
	struct ibv_qp_attr qa = { 0 };
	int mask, rc;

	if (!r || !attr || id->qp || !id->verbs)
		return rc_err(-EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = id->pd;
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (attr->pd->context != id->verbs)
		return rc_err(-EINVAL);
	if (!attr->srq && id->srq)
		attr->srq = id->srq;
	bool made_cqs = false;
	if (!attr->send_cq || !attr->recv_cq) {
		rc = create_cqs(r, attr->send_cq ? 0 : attr->cap.max_send_wr,
				attr->recv_cq || attr->srq ? 0 :
				attr->cap.max_recv_wr);
		if (rc)
			return rc_err(rc);
		made_cqs = true;
		if (!attr->send_cq)
			attr->send_cq = id->send_cq;
		if (!attr->recv_cq)
			attr->recv_cq = id->recv_cq ? id->recv_cq : id->send_cq;
	}
	struct ibv_qp *qp = ibv_create_qp_ex(id->verbs, attr);
	if (!qp) {
		rc = -(errno ? errno : ENOMEM);
		goto err;
	}
	init_attr(r, &qa, &mask);
	rc = ibv_modify_qp(qp, &qa, mask);
	if (!rc && qp->qp_type == IBV_QPT_UD)
		rc = ud_to_rts(qp);
	if (rc) {
		rc = -(errno ? errno : EINVAL);
		ibv_destroy_qp(qp);
		goto err;
	}
	id->qp = qp;
	return 0;
err:
	if (made_cqs)
		destroy_cqs(id);
	return rc_err(rc);
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ax;

	if (!id || !qp_init_attr)
		return rc_err(-EINVAL);
	memset(&ax, 0, sizeof(ax));
	memcpy(&ax, qp_init_attr, sizeof(*qp_init_attr));
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	ax.pd = pd ? pd : id->pd;
	if (rdma_create_qp_ex(id, &ax))
		return -1;
	qp_init_attr->send_cq = ax.send_cq;
	qp_init_attr->recv_cq = ax.recv_cq;
	qp_init_attr->srq = ax.srq;
	qp_init_attr->cap = ax.cap;
	return 0;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (!id || !id->qp)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	destroy_cqs(id);
}

int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	if (!id || !attr || id->srq || !id->verbs)
		return rc_err(-EINVAL);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = id->pd;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	if (attr->comp_mask & ~(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE) ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	     attr->srq_type != IBV_SRQT_BASIC))
		return rc_err(-EOPNOTSUPP);
	struct ibv_srq_init_attr a = { .srq_context = attr->srq_context,
				       .attr = attr->attr };
	id->srq = ibv_create_srq(attr->pd, &a);
	if (!id->srq)
		return -1;
	attr->attr = a.attr;
	return 0;
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
		    struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ax;

	if (!attr)
		return rc_err(-EINVAL);
	memset(&ax, 0, sizeof(ax));
	ax.srq_context = attr->srq_context;
	ax.attr = attr->attr;
	ax.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE;
	ax.srq_type = IBV_SRQT_BASIC;
	ax.pd = pd;
	if (rdma_create_srq_ex(id, &ax))
		return -1;
	attr->attr = ax.attr;
	return 0;
}

void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (!id || !id->srq)
		return;
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
}

void rc_qp_to_err(struct rc_id *r)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (r->id.qp)
		ibv_modify_qp(r->id.qp, &a, IBV_QP_STATE);
}

int rc_qp_move(struct rc_id *r, enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state };
	int mask, rc;

	if (!r->id.qp)
		return 0;
	rc = rc_cm_init_qp_attr(r, &a, &mask);
	if (rc)
		return rc;
	if (r->ack_timeout && state == IBV_QPS_RTS)
		a.timeout = r->ack_timeout;
	if (ibv_modify_qp(r->id.qp, &a, mask))
		return -(errno ? errno : EINVAL);
	return 0;
}

int rc_qp_to_rts(struct rc_id *r)
{
	/* INIT again first, as the kernel's cma_modify_qp_rtr: the access
	 * flags the connection allows (READ and atomics when it has
	 * responder resources) replace the 0 the QP was made with. */
	int rc = rc_qp_move(r, IBV_QPS_INIT);

	if (!rc)
		rc = rc_qp_move(r, IBV_QPS_RTR);
	return rc ? rc : rc_qp_move(r, IBV_QPS_RTS);
}
