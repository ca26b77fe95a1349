/* SPDX-License-Identifier: MIT */
/*
 * librdmacm.so.1: the glue to the device's CM (<rocemu/ibcm.h>), the only
 * caller of rocemu_cm_*. Built with ROCEMU_RDMACM_CM=1 (the Makefile's
 * RDMACM_CM, on when emu/cm is in the tree); without it every connection
 * call fails with ENOSYS and the library still loads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "rdmacm_local.h"
#include "rocemu/cm.h"
#include "rocemu/dropin.h"
#include "rocemu/frame.h"

#if ROCEMU_RDMACM_CM

bool rc_cm_available(void)
{
	return true;
}

static uint32_t random_psn(void)
{
	uint32_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint32_t)random();
	return v & 0xffffff;
}

/* The address an Annex A11 header names, with port (host order). */
static void hdr_addr(const struct roce_cm_ip_hdr *h, bool src, uint16_t port,
		     struct sockaddr_storage *ss)
{
	uint8_t gid[16];

	if (h->ip_version == 4)
		roce_gid_from_ipv4(gid, src ? h->src.v4 : h->dst.v4);
	else
		memcpy(gid, src ? h->src.v6 : h->dst.v6, 16);
	roce_gid_to_sockaddr(gid, port, ss);
}

static void handler(void *user, const struct rocemu_cm_event *ev);

/* The handler of a CM id no rdma_cm id stands for (a REQ being refused). */
static void ignore(void *user, const struct rocemu_cm_event *ev)
{
	(void)user, (void)ev;
}

/* A REQ on a listener: a new id whose addresses the REQ's Annex A11
 * header gives, and a CONNECT_REQUEST counted on the listener. */
static void on_req(struct rc_id *l, const struct rocemu_cm_event *ev)
{
	const struct roce_cm_req *q = &ev->msg.req;
	bool sidr = ev->type == ROCEMU_CM_SIDR_REQ_RCVD;
	struct roce_cm_ip_hdr h;

	/* A REQ lying about its Annex A11 header (or of another family
	 * than the listener's) is refused as Linux's cma refuses it: the
	 * handler may not call the CM, so the listener's reader does
	 * (RC_FIX_REFUSE), and the application sees nothing of it. */
	if (roce_cm_ip_hdr_parse(ev->msg.priv, ev->msg.priv_len, &h)) {
		struct rc_event *x = rc_event_new(l, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
		rocemu_cm_id_set_handler(ev->id, ignore, NULL);
		if (x) {
			x->fix = RC_FIX_REFUSE;
			x->refuse = ev->id;
			rc_post(l, x);
		}
		return;
	}
	struct rc_id *r = rc_id_new(l->sync ? NULL : l->chan, l->id.context,
				    l->id.ps, l->id.qp_type);
	struct rc_event *e = r ? rc_event_new(l, RDMA_CM_EVENT_CONNECT_REQUEST, 0) :
				 NULL;
	if (!e) {
		free(r); /* the CM id stays unanswered, as above */
		return;
	}
	r->cm = ev->id;
	r->listen = l;
	r->id.verbs = l->id.verbs;
	r->id.pd = l->id.pd;
	r->id.port_num = 1;
	r->port = l->port;
	memcpy(r->peer_gid, ev->peer_gid, 16);
	hdr_addr(&h, false, l->port, &r->id.route.addr.src_storage);
	hdr_addr(&h, true, h.src_port, &r->id.route.addr.dst_storage);
	struct ibv_sa_path_rec *p = sidr ? NULL : calloc(1, sizeof(*p));
	if (p) {
		memcpy(p->sgid.raw, q->primary.remote_gid, 16);
		memcpy(p->dgid.raw, q->primary.local_gid, 16);
		p->pkey = htons(q->pkey);
		p->hop_limit = ev->hop_limit;
		p->traffic_class = q->primary.traffic_class;
		p->reversible = 1;
		p->numb_path = 1;
		p->mtu_selector = 2;
		p->mtu = q->path_mtu;
		p->rate_selector = 2;
		p->rate = 2;
		p->packet_life_time_selector = 2;
		p->packet_life_time = q->primary.local_ack_timeout > 0 ?
			q->primary.local_ack_timeout - 1 : 0;
		r->id.route.path_rec = p;
		r->id.route.num_paths = 1;
	}
	rocemu_cm_id_set_handler(ev->id, handler, r);
	e->ev.id = &r->id;
	e->ev.listen_id = &l->id;
	if (sidr) {
		/* Linux's cma_req_handler: the area after the header */
		e->ev.param.ud.private_data_len = ROCE_CM_IP_SIDR_USER_LEN;
		memcpy(e->priv, ev->msg.priv + ROCE_CM_IP_HDR_LEN,
		       ROCE_CM_IP_SIDR_USER_LEN);
		rc_post(l, e);
		return;
	}
	struct rdma_conn_param *c = &e->ev.param.conn;
	/* what the peer sends out, this side takes in, and back */
	c->responder_resources = q->initiator_depth;
	c->initiator_depth = q->responder_resources;
	c->flow_control = q->end_to_end_flow_control;
	c->retry_count = q->retry_count;
	c->rnr_retry_count = q->rnr_retry_count;
	c->srq = q->srq;
	c->qp_num = q->local_qpn;
	/* Linux's cma_set_req_event_data: the area after the header, all of it */
	c->private_data_len = ROCE_CM_IP_REQ_USER_LEN;
	memcpy(e->priv, ev->msg.priv + ROCE_CM_IP_HDR_LEN, ROCE_CM_IP_REQ_USER_LEN);
	r->conn = *c;
	/* this side's starting PSN (the one it receives from, which its
	 * REP announces) is chosen now, not at the REP: a QP the
	 * application moves to RTR itself before rdma_accept (rping -q)
	 * takes it from rdma_init_qp_attr, as from Linux's cma */
	r->psn = random_psn();
	rc_post(l, e);
}

/* An event's private data: the message's whole area (len bytes). */
static void set_priv(struct rc_event *e, const struct rocemu_cm_event *ev,
		     unsigned len)
{
	if (len > sizeof(e->priv))
		len = sizeof(e->priv);
	memcpy(e->priv, ev->msg.priv, len);
	e->ev.param.conn.private_data_len = (uint8_t)len;
}

/* A SIDR_REP: ESTABLISHED with the peer's QP, Q_Key and an address
 * (Linux's cma_sidr_rep_handler), or UNREACHABLE with its status. */
static void on_sidr_rep(struct rc_id *r, const struct rocemu_cm_event *ev)
{
	const struct roce_cm_sidr_rep *p = &ev->msg.sidr_rep;
	bool ok = p->status == ROCE_CM_SIDR_SUCCESS && p->qkey == RC_UDP_QKEY;
	struct rc_event *e = rc_event_new(r, ok ? RDMA_CM_EVENT_ESTABLISHED :
					  RDMA_CM_EVENT_UNREACHABLE,
					  p->status != ROCE_CM_SIDR_SUCCESS ?
					  p->status : ok ? 0 : -EINVAL);
	if (!e)
		return;
	struct rdma_ud_param *u = &e->ev.param.ud;
	if (ok) {
		u->qp_num = p->qpn;
		u->qkey = p->qkey;
		u->ah_attr.is_global = 1;
		memcpy(u->ah_attr.grh.dgid.raw, ev->peer_gid, 16);
		u->ah_attr.grh.sgid_index = 1;
		u->ah_attr.grh.hop_limit = 64;
		u->ah_attr.grh.traffic_class = r->tos;
		u->ah_attr.port_num = 1;
	}
	set_priv(e, ev, ROCE_CM_SIDR_REP_PRIV_LEN);
	rc_post(r, e);
}

/* Called by the world's thread (its lock held): only queues. */
static void handler(void *user, const struct rocemu_cm_event *ev)
{
	struct rc_id *r = user;
	enum rdma_cm_event_type t;
	int status = 0, fix = RC_FIX_NONE;

	switch (ev->type) {
	case ROCEMU_CM_REQ_RCVD:
	case ROCEMU_CM_SIDR_REQ_RCVD:
		on_req(r, ev);
		return;
	case ROCEMU_CM_SIDR_REP_RCVD:
		on_sidr_rep(r, ev);
		return;
	case ROCEMU_CM_SIDR_REQ_ERROR:
		t = RDMA_CM_EVENT_UNREACHABLE;
		status = -ETIMEDOUT;
		break;
	case ROCEMU_CM_REP_RCVD:
		t = RDMA_CM_EVENT_CONNECT_RESPONSE;
		fix = RC_FIX_REP;
		break;
	case ROCEMU_CM_REQ_ERROR:
		t = RDMA_CM_EVENT_UNREACHABLE;
		status = -ETIMEDOUT;
		fix = RC_FIX_QP_ERR;
		break;
	case ROCEMU_CM_REJ_RCVD:
		__atomic_store_n(&r->connected, false, __ATOMIC_RELEASE);
		t = RDMA_CM_EVENT_REJECTED;
		status = ev->status;
		fix = RC_FIX_QP_ERR;
		break;
	case ROCEMU_CM_REP_ERROR:
		__atomic_store_n(&r->connected, false, __ATOMIC_RELEASE);
		t = RDMA_CM_EVENT_CONNECT_ERROR;
		status = -ETIMEDOUT;
		fix = RC_FIX_QP_ERR;
		break;
	case ROCEMU_CM_RTU_RCVD:
	case ROCEMU_CM_USER_ESTABLISHED:
		t = RDMA_CM_EVENT_ESTABLISHED;
		break;
	case ROCEMU_CM_DREQ_RCVD:
	case ROCEMU_CM_DREQ_ERROR:
	case ROCEMU_CM_DREP_RCVD:
		/* the DREQ's receiver answers in rdma_disconnect; one
		 * DISCONNECTED per connection */
		if (!__atomic_exchange_n(&r->connected, false, __ATOMIC_ACQ_REL))
			return;
		t = RDMA_CM_EVENT_DISCONNECTED;
		break;
	case ROCEMU_CM_TIMEWAIT_EXIT:
		t = RDMA_CM_EVENT_TIMEWAIT_EXIT;
		break;
	default:
		return;
	}
	struct rc_event *e = rc_event_new(r, t, status);
	if (!e)
		return;
	e->fix = fix;
	if (ev->type == ROCEMU_CM_REP_RCVD) {
		const struct roce_cm_rep *p = &ev->msg.rep;
		struct rdma_conn_param *c = &e->ev.param.conn;
		c->responder_resources = p->initiator_depth;
		c->initiator_depth = p->responder_resources;
		c->flow_control = p->end_to_end_flow_control;
		c->rnr_retry_count = p->rnr_retry_count;
		c->srq = p->srq;
		c->qp_num = p->local_qpn;
		set_priv(e, ev, ROCE_CM_REP_PRIV_LEN);
	} else if (ev->type == ROCEMU_CM_REJ_RCVD) {
		set_priv(e, ev, ROCE_CM_REJ_PRIV_LEN);
	}
	if (t == RDMA_CM_EVENT_ESTABLISHED)
		__atomic_store_n(&r->connected, true, __ATOMIC_RELEASE);
	rc_post(r, e);
}

bool rc_cm_fixup(struct rc_event *e)
{
	struct rc_id *r = rc_of(e->ev.id);
	int fix = e->fix;

	e->fix = RC_FIX_NONE;
	if (fix == RC_FIX_REFUSE) {
		/* the REJ fails only when the peer has gone; free it anyway */
		rocemu_cm_send_rej(e->refuse, ROCE_CM_REJ_CONSUMER_DEFINED,
				   NULL, 0, NULL, 0);
		rocemu_cm_id_free(e->refuse);
		return false;
	}
	if (fix == RC_FIX_QP_ERR) {
		rc_qp_to_err(r);
		return true;
	}
	if (fix != RC_FIX_REP || !r->id.qp)
		return true;
	/* librdmacm's ucma_process_conn_resp */
	int rc = rc_qp_to_rts(r);
	if (!rc)
		rc = rocemu_cm_send_rtu(r->cm, NULL, 0);
	if (rc) {
		rc_qp_to_err(r);
		rocemu_cm_send_rej(r->cm, ROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0,
				   NULL, 0);
		e->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
		e->ev.status = rc;
		return true;
	}
	__atomic_store_n(&r->connected, true, __ATOMIC_RELEASE);
	/* the REP's parameters and private data stay, as librdmacm's
	 * ESTABLISHED carries them (libfabric's ofi_rxm reads its peer's
	 * connection id there) */
	e->ev.event = RDMA_CM_EVENT_ESTABLISHED;
	return true;
}

void rc_discard(struct rc_event *e)
{
	if (e->fix == RC_FIX_REFUSE) {
		rc_cm_fixup(e);
	} else if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST &&
		   e->ev.id != &e->owner->id) {
		/* a listener's request nobody took: its new id goes (a REJ) */
		rdma_destroy_id(e->ev.id);
	}
	free(e);
}

static int ensure_cm(struct rc_id *r)
{
	if (r->cm)
		return 0;
	struct rocemu_dev *d = rocemu_dropin_dev(r->id.verbs);
	if (!d)
		return -errno;
	r->cm = rocemu_cm_id_new(d, handler, r);
	return r->cm ? 0 : -errno;
}

int rc_cm_listen(struct rc_id *r)
{
	int rc = ensure_cm(r);
	if (!rc)
		rc = rocemu_cm_listen(r->cm, roce_cm_service_id(r->id.ps, r->port),
				      ~0ull);
	return rc;
}

static int priv_ok(const struct rdma_conn_param *p, unsigned max)
{
	return !p || !p->private_data_len ||
	       (p->private_data && p->private_data_len <= max);
}

int rc_cm_connect(struct rc_id *r, struct rdma_conn_param *p)
{
	struct rocemu_cm_req_param q = { 0 };
	uint8_t priv[ROCE_CM_SIDR_REQ_PRIV_LEN] = { 0 };
	struct roce_cm_ip_hdr h = { 0 };
	struct sockaddr_storage src = { 0 };

	bool sidr = r->id.qp_type == IBV_QPT_UD;
	if (!r->id.route.path_rec ||
	    !priv_ok(p, sidr ? ROCE_CM_IP_SIDR_USER_LEN : ROCE_CM_IP_REQ_USER_LEN) ||
	    (!sidr && !r->id.qp && !p))
		return -EINVAL;
	int rc = ensure_cm(r);
	if (rc)
		return rc;
	memcpy(&src, &r->id.route.addr.src_addr,
	       r->id.route.addr.src_addr.sa_family == AF_INET ?
	       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	h.ip_version = src.ss_family == AF_INET ? 4 : 6;
	h.src_port = r->port;
	if (h.ip_version == 4) {
		memcpy(h.src.v4, &r->id.route.addr.src_sin.sin_addr, 4);
		memcpy(h.dst.v4, &r->id.route.addr.dst_sin.sin_addr, 4);
	} else {
		memcpy(h.src.v6, &r->id.route.addr.src_sin6.sin6_addr, 16);
		memcpy(h.dst.v6, &r->id.route.addr.dst_sin6.sin6_addr, 16);
	}
	if (roce_cm_ip_hdr_build(&h, priv, sizeof(priv)) < 0)
		return -EINVAL;
	if (p && p->private_data_len)
		memcpy(priv + ROCE_CM_IP_HDR_LEN, p->private_data,
		       p->private_data_len);
	if (sidr) {
		struct rocemu_cm_sidr_req_param sq = {
			.service_id = roce_cm_service_id(r->id.ps,
				ntohs(r->id.route.addr.dst_sin.sin_port)),
			.private_data = priv,
			.private_data_len = (uint8_t)(ROCE_CM_IP_HDR_LEN +
				(p ? p->private_data_len : 0)),
		};
		memcpy(sq.dgid, r->id.route.path_rec->dgid.raw, 16);
		return rocemu_cm_send_sidr_req(r->cm, &sq);
	}
	memcpy(q.dgid, r->id.route.path_rec->dgid.raw, 16);
	q.service_id = roce_cm_service_id(r->id.ps, ntohs(r->id.route.addr.dst_sin.sin_port));
	q.qp_type = IBV_QPT_RC;
	q.qpn = r->id.qp ? r->id.qp->qp_num : (p->qp_num & 0xffffff);
	q.starting_psn = random_psn();
	if (p) {
		q.responder_resources = p->responder_resources;
		q.initiator_depth = p->initiator_depth;
		q.retry_count = p->retry_count & 7;
		q.rnr_retry_count = p->rnr_retry_count & 7;
		q.srq = r->id.qp ? r->id.qp->srq != NULL : p->srq;
		r->conn = *p;
	} else {
		q.retry_count = 7;
		q.rnr_retry_count = 7;
	}
	q.mtu = (enum ibv_mtu)r->id.route.path_rec->mtu;
	q.traffic_class = r->tos;
	q.hop_limit = r->id.route.path_rec->hop_limit;
	q.private_data = priv;
	q.private_data_len = (uint8_t)(ROCE_CM_IP_HDR_LEN +
				       (p ? p->private_data_len : 0));
	r->qpn = q.qpn;
	r->psn = q.starting_psn;
	return rocemu_cm_send_req(r->cm, &q);
}

/* librdmacm's rdma_accept: with a QP on the id, RTR before the REP goes
 * (the peer may send as soon as it has it), RTS after. */
int rc_cm_accept(struct rc_id *r, struct rdma_conn_param *p)
{
	struct rocemu_cm_rep_param q = { 0 };

	if (r->cm && r->listen && r->id.qp_type == IBV_QPT_UD) {
		/* SIDR: the QP's number and Q_Key; the id is done */
		if (!priv_ok(p, ROCE_CM_SIDR_REP_PRIV_LEN) || (!r->id.qp && !p))
			return -EINVAL;
		return rocemu_cm_send_sidr_rep(r->cm, ROCE_CM_SIDR_SUCCESS,
			r->id.qp ? r->id.qp->qp_num : (p->qp_num & 0xffffff),
			RC_UDP_QKEY, p ? p->private_data : NULL,
			p ? p->private_data_len : 0);
	}
	if (!r->cm || !r->listen || !priv_ok(p, ROCE_CM_REP_PRIV_LEN) ||
	    (!r->id.qp && !p))
		return -EINVAL;
	/* INIT again (the connection's access flags), then RTR, before the
	 * REP goes: as the kernel's cma_accept_ib. RTR receives from the
	 * REP's starting PSN, chosen when the REQ came (on_req). */
	int rc = rc_qp_move(r, IBV_QPS_INIT);
	if (!rc)
		rc = rc_qp_move(r, IBV_QPS_RTR);
	if (rc)
		return rc;
	q.qpn = r->id.qp ? r->id.qp->qp_num : (p->qp_num & 0xffffff);
	q.starting_psn = r->psn;
	if (p) {
		/* at most what the peer asked for, as the kernel's ucma */
		q.responder_resources = p->responder_resources < r->conn.responder_resources ?
			p->responder_resources : r->conn.responder_resources;
		q.initiator_depth = p->initiator_depth < r->conn.initiator_depth ?
			p->initiator_depth : r->conn.initiator_depth;
		q.rnr_retry_count = p->rnr_retry_count & 7;
		q.srq = r->id.qp ? r->id.qp->srq != NULL : p->srq;
		q.private_data = p->private_data;
		q.private_data_len = p->private_data_len;
	} else {
		q.responder_resources = r->conn.responder_resources;
		q.initiator_depth = r->conn.initiator_depth;
		q.rnr_retry_count = 7;
	}
	rc = rocemu_cm_send_rep(r->cm, &q);
	if (rc)
		return rc;
	/* From the REP on, a DREQ ends the connection even before its RTU
	 * (the RTU lost, the peer done): DISCONNECTED, for the user to
	 * answer, as Linux's cma gives it to an id in RDMA_CM_CONNECT. */
	__atomic_store_n(&r->connected, true, __ATOMIC_RELEASE);
	return rc_qp_move(r, IBV_QPS_RTS);
}

int rc_cm_reject(struct rc_id *r, const void *priv, uint8_t len)
{
	if (r->cm && r->id.qp_type == IBV_QPT_UD) {
		if (len > ROCE_CM_SIDR_REP_PRIV_LEN || (len && !priv))
			return -EINVAL;
		return rocemu_cm_send_sidr_rep(r->cm, ROCE_CM_SIDR_REJECT, 0, 0,
					       priv, len);
	}
	if (!r->cm || len > ROCE_CM_REJ_PRIV_LEN || (len && !priv))
		return -EINVAL;
	return rocemu_cm_send_rej(r->cm, ROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0,
				  priv, len);
}

int rc_cm_establish(struct rc_id *r)
{
	if (!r->cm)
		return -EINVAL;
	int rc = rocemu_cm_send_rtu(r->cm, NULL, 0);
	if (!rc)
		__atomic_store_n(&r->connected, true, __ATOMIC_RELEASE);
	return rc;
}

/* A DREQ for an established connection, the DREP for a received DREQ
 * (rocemu_cm_id_state says which). */
int rc_cm_disconnect(struct rc_id *r)
{
	if (!r->cm)
		return -EINVAL;
	rc_qp_to_err(r);
	if (!strcmp(rocemu_cm_id_state(r->cm), "dreq_rcvd"))
		return rocemu_cm_send_drep(r->cm, NULL, 0);
	return rocemu_cm_send_dreq(r->cm, NULL, 0);
}

int rc_cm_notify(struct rc_id *r, enum ibv_event_type ev)
{
	return r->cm ? rocemu_cm_notify(r->cm, ev) : -EINVAL;
}

/* The attributes for a move of r's QP, as rdma_init_qp_attr gives them:
 * the CM's, RTR receiving from this side's own starting PSN. Returns 0,
 * or -errno (a, mask partly written). */
int rc_cm_init_qp_attr(struct rc_id *r, struct ibv_qp_attr *a, int *mask)
{
	enum ibv_qp_state st = a->qp_state;
	int rc = r->cm ? rocemu_cm_init_qp_attr(r->cm, a, mask) : -EINVAL;

	/* its REQ's or REP's; a passive id's was chosen at the REQ
	 * (on_req), so it is known before the REP goes: as the kernel's
	 * rdma_init_qp_attr, which sets rq_psn from the id's seq_num. */
	if (!rc && st == IBV_QPS_RTR)
		a->rq_psn = r->psn;
	return rc;
}

void rc_cm_free(struct rc_id *r)
{
	if (r->cm)
		rocemu_cm_id_free(r->cm);
	r->cm = NULL;
}

#else /* the CM is not built: the connection calls say so */

bool rc_cm_available(void)
{
	return false;
}

int rc_cm_listen(struct rc_id *r)
{
	static bool told;

	(void)r;
	if (!__atomic_exchange_n(&told, true, __ATOMIC_RELAXED))
		fprintf(stderr, "rocemu: this librdmacm.so.1 is built without "
				"the connection manager: rdma_listen takes no "
				"connection requests, rdma_connect fails with "
				"ENOSYS\n");
	return 0;
}

int rc_cm_connect(struct rc_id *r, struct rdma_conn_param *p)
{
	(void)r, (void)p;
	return -ENOSYS;
}

int rc_cm_accept(struct rc_id *r, struct rdma_conn_param *p)
{
	(void)r, (void)p;
	return -ENOSYS;
}

int rc_cm_reject(struct rc_id *r, const void *priv, uint8_t len)
{
	(void)r, (void)priv, (void)len;
	return -ENOSYS;
}

int rc_cm_establish(struct rc_id *r)
{
	(void)r;
	return -ENOSYS;
}

int rc_cm_disconnect(struct rc_id *r)
{
	(void)r;
	return -ENOSYS;
}

int rc_cm_notify(struct rc_id *r, enum ibv_event_type ev)
{
	(void)r, (void)ev;
	return -ENOSYS;
}

int rc_cm_init_qp_attr(struct rc_id *r, struct ibv_qp_attr *a, int *mask)
{
	(void)r, (void)a, (void)mask;
	return -ENOSYS;
}

void rc_cm_free(struct rc_id *r)
{
	(void)r;
}

bool rc_cm_fixup(struct rc_event *e)
{
	(void)e;
	return true;
}

void rc_discard(struct rc_event *e)
{
	free(e);
}

#endif
