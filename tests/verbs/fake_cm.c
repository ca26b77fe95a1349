/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for the device's CM (include/rocemu/ibcm.h), for testing the
 * librdmacm.so.1 drop-in's connection glue before the CM exists: it knows
 * one process only, hands each message straight to the peer id's handler
 * (no wire, no timers, no retries), and gives rocemu_cm_init_qp_attr the
 * values the two ends exchanged. tests/verbs/rdmacm_fakecm.sh links it
 * into a variant of the drop-in; nothing else uses it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/ibcm.h"

struct rocemu_cm_id {
	rocemu_cm_handler fn;
	void *user;
	const char *state;
	bool listening, active;
	uint64_t sid, mask;
	struct rocemu_cm_id *peer, *next;
	struct rocemu_cm_req_param req;	/* the REQ of the connection */
	struct rocemu_cm_rep_param rep;	/* and its REP */
	uint8_t sidr_dgid[16];		/* where a SIDR_REQ went */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rocemu_cm_id *listeners;

struct rocemu_cm_id *rocemu_cm_id_new(struct rocemu_dev *d,
				      rocemu_cm_handler fn, void *user)
{
	struct rocemu_cm_id *id;

	(void)d;
	if (!fn) {
		errno = EINVAL;
		return NULL;
	}
	id = calloc(1, sizeof(*id));
	if (!id) {
		errno = ENOMEM;
		return NULL;
	}
	id->fn = fn;
	id->user = user;
	id->state = "idle";
	return id;
}

int rocemu_cm_id_free(struct rocemu_cm_id *id)
{
	if (!id)
		return -EINVAL;
	pthread_mutex_lock(&lock);
	for (struct rocemu_cm_id **p = &listeners; *p; p = &(*p)->next)
		if (*p == id) {
			*p = id->next;
			break;
		}
	if (id->peer)
		id->peer->peer = NULL;
	pthread_mutex_unlock(&lock);
	free(id);
	return 0;
}

void rocemu_cm_id_set_handler(struct rocemu_cm_id *id, rocemu_cm_handler fn,
			      void *user)
{
	id->fn = fn;
	id->user = user;
}

const char *rocemu_cm_id_state(const struct rocemu_cm_id *id)
{
	return id->state;
}

int rocemu_cm_listen(struct rocemu_cm_id *id, uint64_t service_id,
		     uint64_t mask)
{
	pthread_mutex_lock(&lock);
	for (struct rocemu_cm_id *l = listeners; l; l = l->next)
		if ((l->sid & mask) == (service_id & l->mask)) {
			pthread_mutex_unlock(&lock);
			return -EADDRINUSE;
		}
	id->listening = true;
	id->sid = service_id;
	id->mask = mask;
	id->state = "listen";
	id->next = listeners;
	listeners = id;
	pthread_mutex_unlock(&lock);
	return 0;
}

static void deliver(struct rocemu_cm_id *to, enum rocemu_cm_event_type t,
		    int status, struct roce_cm_msg *m)
{
	struct rocemu_cm_event ev = { .type = t, .id = to, .status = status };

	if (m)
		ev.msg = *m;
	ev.hop_limit = 64;
	if (to)
		to->fn(to->user, &ev);
}

static void set_priv(struct roce_cm_msg *m, const void *p, unsigned len,
		     unsigned area)
{
	memset(m->priv, 0, sizeof(m->priv));
	if (len)
		memcpy(m->priv, p, len);
	m->priv_len = (uint16_t)area;
}

int rocemu_cm_send_req(struct rocemu_cm_id *id,
		       const struct rocemu_cm_req_param *p)
{
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_REQ };
	struct rocemu_cm_id *l;

	if (strcmp(id->state, "idle") || p->private_data_len > ROCE_CM_REQ_PRIV_LEN)
		return -EINVAL;
	id->req = *p;
	id->active = true;
	id->state = "req_sent";
	pthread_mutex_lock(&lock);
	for (l = listeners; l; l = l->next)
		if ((p->service_id & l->mask) == (l->sid & l->mask))
			break;
	pthread_mutex_unlock(&lock);
	if (!l) {
		m.attr_id = ROCE_CM_ATTR_REJ;
		m.rej.reason = ROCE_CM_REJ_INVALID_SERVICE_ID;
		set_priv(&m, NULL, 0, ROCE_CM_REJ_PRIV_LEN);
		id->state = "idle";
		deliver(id, ROCEMU_CM_REJ_RCVD, ROCE_CM_REJ_INVALID_SERVICE_ID, &m);
		return 0;
	}
	struct rocemu_cm_id *n = rocemu_cm_id_new(NULL, l->fn, l->user);
	if (!n)
		return -ENOMEM;
	n->req = *p;
	n->state = "req_rcvd";
	n->peer = id;
	id->peer = n;
	struct roce_cm_req *q = &m.req;
	q->service_id = p->service_id;
	q->local_qpn = p->qpn;
	q->starting_psn = p->starting_psn;
	q->responder_resources = p->responder_resources;
	q->initiator_depth = p->initiator_depth;
	q->retry_count = p->retry_count;
	q->rnr_retry_count = p->rnr_retry_count;
	q->srq = p->srq;
	q->path_mtu = (uint8_t)p->mtu;
	q->pkey = 0xffff;
	q->primary.local_ack_timeout = 17;
	memcpy(q->primary.local_gid, p->dgid, 16); /* one process, one device */
	memcpy(q->primary.remote_gid, p->dgid, 16);
	set_priv(&m, p->private_data, p->private_data_len, ROCE_CM_REQ_PRIV_LEN);
	/* a lying peer: its Annex A11 header's version is not 0 */
	if (getenv("FAKE_CM_CORRUPT_REQ")) /* set by rdmacm_connect.c */
		m.priv[0] = 0x7f;
	struct rocemu_cm_event ev = { .type = ROCEMU_CM_REQ_RCVD, .id = n,
				      .listen_id = l, .msg = m, .hop_limit = 64 };
	memcpy(ev.peer_gid, p->dgid, 16);
	l->fn(l->user, &ev);
	return 0;
}

int rocemu_cm_send_rep(struct rocemu_cm_id *id,
		       const struct rocemu_cm_rep_param *p)
{
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_REP };

	if (strcmp(id->state, "req_rcvd") || !id->peer)
		return -EINVAL;
	id->rep = *p;
	id->peer->rep = *p;
	id->state = "rep_sent";
	id->peer->state = "rep_rcvd";
	m.rep.local_qpn = p->qpn;
	m.rep.starting_psn = p->starting_psn;
	m.rep.responder_resources = p->responder_resources;
	m.rep.initiator_depth = p->initiator_depth;
	m.rep.rnr_retry_count = p->rnr_retry_count;
	m.rep.srq = p->srq;
	set_priv(&m, p->private_data, p->private_data_len, ROCE_CM_REP_PRIV_LEN);
	deliver(id->peer, ROCEMU_CM_REP_RCVD, 0, &m);
	return 0;
}

int rocemu_cm_send_rtu(struct rocemu_cm_id *id, const void *priv, uint8_t len)
{
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_RTU };

	if (strcmp(id->state, "rep_rcvd") || !id->peer)
		return -EINVAL;
	id->state = "established";
	id->peer->state = "established";
	set_priv(&m, priv, len, ROCE_CM_RTU_PRIV_LEN);
	deliver(id->peer, ROCEMU_CM_RTU_RCVD, 0, &m);
	return 0;
}

int rocemu_cm_send_rej(struct rocemu_cm_id *id, uint16_t reason,
		       const void *ari, uint8_t ari_len, const void *priv,
		       uint8_t len)
{
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_REJ };

	(void)ari, (void)ari_len;
	if (strcmp(id->state, "req_rcvd") && strcmp(id->state, "rep_rcvd"))
		return -EINVAL;
	id->state = "idle";
	m.rej.reason = reason;
	set_priv(&m, priv, len, ROCE_CM_REJ_PRIV_LEN);
	if (id->peer)
		id->peer->state = "idle";
	deliver(id->peer, ROCEMU_CM_REJ_RCVD, reason, &m);
	return 0;
}

int rocemu_cm_send_dreq(struct rocemu_cm_id *id, const void *priv, uint8_t len)
{
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_DREQ };

	if (strcmp(id->state, "established"))
		return -EINVAL;
	id->state = "dreq_sent";
	set_priv(&m, priv, len, ROCE_CM_DREQ_PRIV_LEN);
	if (id->peer)
		id->peer->state = "dreq_rcvd";
	deliver(id->peer, ROCEMU_CM_DREQ_RCVD, 0, &m);
	return 0;
}

int rocemu_cm_send_drep(struct rocemu_cm_id *id, const void *priv, uint8_t len)
{
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_DREP };

	if (strcmp(id->state, "dreq_rcvd"))
		return -EINVAL;
	id->state = "timewait";
	set_priv(&m, priv, len, ROCE_CM_DREP_PRIV_LEN);
	struct rocemu_cm_id *peer = id->peer;
	if (peer)
		peer->state = "timewait";
	deliver(peer, ROCEMU_CM_DREP_RCVD, 0, &m);
	deliver(peer, ROCEMU_CM_TIMEWAIT_EXIT, 0, NULL);
	deliver(id, ROCEMU_CM_TIMEWAIT_EXIT, 0, NULL);
	return 0;
}

int rocemu_cm_notify(struct rocemu_cm_id *id, enum ibv_event_type ev)
{
	(void)id;
	return ev == IBV_EVENT_COMM_EST ? 0 : -EINVAL;
}

int rocemu_cm_send_sidr_req(struct rocemu_cm_id *id,
			    const struct rocemu_cm_sidr_req_param *p)
{
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_SIDR_REQ };
	struct rocemu_cm_id *l;

	if (strcmp(id->state, "idle") ||
	    p->private_data_len > ROCE_CM_SIDR_REQ_PRIV_LEN)
		return -EINVAL;
	id->state = "sidr_req_sent";
	memcpy(id->sidr_dgid, p->dgid, 16);
	pthread_mutex_lock(&lock);
	for (l = listeners; l; l = l->next)
		if ((p->service_id & l->mask) == (l->sid & l->mask))
			break;
	pthread_mutex_unlock(&lock);
	if (!l) {
		m.attr_id = ROCE_CM_ATTR_SIDR_REP;
		m.sidr_rep.status = ROCE_CM_SIDR_UNSUPPORTED;
		set_priv(&m, NULL, 0, ROCE_CM_SIDR_REP_PRIV_LEN);
		id->state = "idle";
		deliver(id, ROCEMU_CM_SIDR_REP_RCVD, 0, &m);
		return 0;
	}
	struct rocemu_cm_id *n = rocemu_cm_id_new(NULL, l->fn, l->user);
	if (!n)
		return -ENOMEM;
	n->state = "sidr_req_rcvd";
	n->peer = id;
	id->peer = n;
	m.sidr_req.service_id = p->service_id;
	m.sidr_req.pkey = 0xffff;
	set_priv(&m, p->private_data, p->private_data_len,
		 ROCE_CM_SIDR_REQ_PRIV_LEN);
	struct rocemu_cm_event ev = { .type = ROCEMU_CM_SIDR_REQ_RCVD, .id = n,
				      .listen_id = l, .msg = m, .hop_limit = 64 };
	memcpy(ev.peer_gid, p->dgid, 16);
	l->fn(l->user, &ev);
	return 0;
}

int rocemu_cm_send_sidr_rep(struct rocemu_cm_id *id, uint8_t status,
			    uint32_t qpn, uint32_t qkey, const void *priv,
			    uint8_t len)
{
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_SIDR_REP };

	if (strcmp(id->state, "sidr_req_rcvd") || !id->peer)
		return -EINVAL;
	id->state = "idle";
	id->peer->state = "idle";
	m.sidr_rep.status = status;
	m.sidr_rep.qpn = qpn;
	m.sidr_rep.qkey = qkey;
	set_priv(&m, priv, len, ROCE_CM_SIDR_REP_PRIV_LEN);
	struct rocemu_cm_event ev = { .type = ROCEMU_CM_SIDR_REP_RCVD,
				      .id = id->peer, .msg = m, .hop_limit = 64 };
	/* the peer is this process's device: its address is the REQ's */
	memcpy(ev.peer_gid, id->peer->sidr_dgid, 16);
	id->peer->fn(id->peer->user, &ev);
	return 0;
}

/* From the REQ and REP the two ends exchanged, as ib_cm_init_qp_attr. */
int rocemu_cm_init_qp_attr(struct rocemu_cm_id *id, struct ibv_qp_attr *a,
			   int *mask)
{
	const struct rocemu_cm_req_param *q = &id->req;
	const struct rocemu_cm_rep_param *r = &id->rep;
	bool got_rep = !strcmp(id->state, "rep_rcvd") ||
		       !strcmp(id->state, "rep_sent") ||
		       !strcmp(id->state, "established");

	switch (a->qp_state) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ |
				     IBV_ACCESS_REMOTE_ATOMIC;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			IBV_QP_ACCESS_FLAGS;
		return 0;
	case IBV_QPS_RTR:
		if (!strcmp(id->state, "idle") || !strcmp(id->state, "req_sent"))
			return -EINVAL;
		memset(&a->ah_attr, 0, sizeof(a->ah_attr));
		a->ah_attr.is_global = 1;
		memcpy(a->ah_attr.grh.dgid.raw, q->dgid, 16);
		a->ah_attr.grh.sgid_index = 1;
		a->ah_attr.grh.hop_limit = 64;
		a->ah_attr.port_num = 1;
		a->path_mtu = q->mtu ? q->mtu : IBV_MTU_1024;
		a->dest_qp_num = id->active ? r->qpn : q->qpn;
		/* a REQ's or REP's starting PSN is what its sender
		 * receives with (Linux's ib_cm); the passive side's own is
		 * not known before its REP, the drop-in fills it in */
		a->rq_psn = id->active ? q->starting_psn : r->starting_psn;
		a->max_dest_rd_atomic = id->active ? q->responder_resources :
					q->initiator_depth;
		a->min_rnr_timer = 12;
		*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		return 0;
	case IBV_QPS_RTS:
		if (!got_rep)
			return -EINVAL;
		a->sq_psn = id->active ? r->starting_psn : q->starting_psn;
		a->timeout = 17;
		a->retry_cnt = q->retry_count;
		a->rnr_retry = id->active ? q->rnr_retry_count : r->rnr_retry_count;
		a->max_rd_atomic = id->active ? q->initiator_depth :
				   q->responder_resources;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
		return 0;
	default:
		return -EINVAL;
	}
}
