/* SPDX-License-Identifier: MIT */
/* librdmacm.so.1: listening, connecting, accepting, disconnecting; synchronous endpoints. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_local.h"

/* As the kernel: an id not yet bound listens on the wildcard, a port
 * of its port space's ephemeral range. */
int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct rc_id *r = rc_of(id);
	int rc = 0;

	(void)backlog;
	if (!r || r->listening)
		return rc_err(-EINVAL);
	if (!r->bound) {
		struct sockaddr_in6 any = { .sin6_family = AF_INET6 };
		rc = rc_port_bind(r, (struct sockaddr *)&any);
	}
	if (!rc && !r->id.verbs)
		rc = rc_attach_device(r);
	if (!rc)
		rc = rc_cm_listen(r);
	if (rc)
		return rc_err(rc);
	r->listening = true;
	return 0;
}

/*
 * librdmacm's ucma_valid_param and ucma_copy_conn_param_to_kern: READ and
 * atomic counts past the device's are EINVAL; RDMA_MAX_RESP_RES and
 * RDMA_MAX_INIT_DEPTH mean the device's most. out is in, so adjusted;
 * NULL when in is. 0 or -EINVAL.
 */
static int checked_param(struct rc_id *r, const struct rdma_conn_param *in,
			 struct rdma_conn_param *out, struct rdma_conn_param **use)
{
	struct ibv_device_attr a;

	*use = NULL;
	if (!in)
		return 0;
	if (!r->id.verbs || ibv_query_device(r->id.verbs, &a))
		return -EINVAL;
	*out = *in;
	if (r->id.qp_type != IBV_QPT_UD) {
		uint8_t resp = a.max_qp_rd_atom > 255 ? 255 : (uint8_t)a.max_qp_rd_atom;
		uint8_t init = a.max_qp_init_rd_atom > 255 ? 255 :
			       (uint8_t)a.max_qp_init_rd_atom;
		if (in->responder_resources == RDMA_MAX_RESP_RES)
			out->responder_resources = resp;
		else if (in->responder_resources > resp)
			return -EINVAL;
		if (in->initiator_depth == RDMA_MAX_INIT_DEPTH)
			out->initiator_depth = init;
		else if (in->initiator_depth > init)
			return -EINVAL;
	}
	*use = out;
	return 0;
}

/* rdma_connect and rdma_accept: the parameters checked as librdmacm's,
 * then the CM step, then (a synchronous id) its event waited for. */
static int conn_step(struct rdma_cm_id *id, struct rdma_conn_param *conn_param,
		     int (*step)(struct rc_id *, struct rdma_conn_param *))
{
	struct rc_id *r = rc_of(id);
	struct rdma_conn_param cp, *use;

	if (!r)
		return rc_err(-EINVAL);
	int rc = checked_param(r, conn_param, &cp, &use);
	if (rc)
		return rc_err(rc);
	rc_drop_event(r);
	rc = step(r, use);
	if (rc)
		return rc_err(rc);
	return rc_complete(r);
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	return conn_step(id, conn_param, rc_cm_connect);
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	return conn_step(id, conn_param, rc_cm_accept);
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data,
		uint8_t private_data_len)
{
	struct rc_id *r = rc_of(id);

	if (!r)
		return rc_err(-EINVAL);
	rc_drop_event(r);
	int rc = rc_cm_reject(r, private_data, private_data_len);
	return rc ? rc_err(rc) : 0;
}

int rdma_establish(struct rdma_cm_id *id)
{
	struct rc_id *r = rc_of(id);

	if (!r)
		return rc_err(-EINVAL);
	int rc = rc_cm_establish(r);
	return rc ? rc_err(rc) : 0;
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	struct rc_id *r = rc_of(id);

	if (!r)
		return rc_err(-EINVAL);
	int rc = rc_cm_disconnect(r);
	return rc ? rc_err(rc) : 0;
}

int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	struct rc_id *r = rc_of(id);

	if (!r)
		return rc_err(-EINVAL);
	int rc = rc_cm_notify(r, event);
	return rc ? rc_err(rc) : 0;
}

/*
 * librdmacm: the next CONNECT_REQUEST of a synchronous listener; the new
 * id keeps the event (acknowledged by its next call) and, when the
 * listener was made by rdma_create_ep with QP attributes, gets its QP.
 */
int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rc_id *l = rc_of(listen);
	struct rdma_cm_event *ev;

	if (!l || !id || !l->sync || !l->listening)
		return rc_err(-EINVAL);
	rc_drop_event(l);
	if (rdma_get_cm_event(&l->chan->ch, &ev))
		return -1;
	if (ev->status || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		int e = ev->status ? -ev->status : EINVAL;
		rdma_ack_cm_event(ev);
		return rc_err(e < 0 ? e : -e);
	}
	struct rdma_cm_id *nid = ev->id;
	nid->event = ev;
	if (l->ep_qp) {
		struct ibv_qp_init_attr a = *l->ep_qp;
		if (rdma_create_qp(nid, l->ep_pd, &a)) {
			int e = errno;
			rdma_reject(nid, NULL, 0);
			rdma_destroy_id(nid);
			return rc_err(-e);
		}
	}
	*id = nid;
	return 0;
}

int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
		   struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;

	if (!id || !res)
		return rc_err(-EINVAL);
	struct rc_id *r = rc_id_new(NULL, NULL,
				    (enum rdma_port_space)res->ai_port_space,
				    (enum ibv_qp_type)res->ai_qp_type);
	if (!r)
		return -1;
	cid = &r->id;
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cid, res->ai_src_addr))
			goto err;
		if (qp_init_attr) {
			r->ep_qp = malloc(sizeof(*r->ep_qp));
			if (!r->ep_qp) {
				errno = ENOMEM;
				goto err;
			}
			*r->ep_qp = *qp_init_attr;
			/* the QP type is the lookup's, as librdmacm's
			 * (rdma_server's attributes leave it 0) */
			r->ep_qp->qp_type = (enum ibv_qp_type)res->ai_qp_type;
			r->ep_pd = pd;
		}
	} else {
		if (rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr,
				      2000) ||
		    rdma_resolve_route(cid, 2000))
			goto err;
		if (qp_init_attr) {
			/* as librdmacm: rdma_client leaves it 0 */
			qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
			if (rdma_create_qp(cid, pd, qp_init_attr))
				goto err;
		}
	}
	*id = cid;
	return 0;
err:
	int e = errno;
	rdma_destroy_id(cid);
	errno = e;
	return -1;
}

void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (!id)
		return;
	rdma_destroy_qp(id);
	rdma_destroy_srq(id);
	rdma_destroy_id(id);
}
