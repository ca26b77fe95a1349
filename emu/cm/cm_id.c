/* SPDX-License-Identifier: MIT */
/* The public CM calls (<rocemu/ibcm.h>): ids, listening, the messages a user sends, QP attributes. */
#include <errno.h>
#include <string.h>

#include "cm_local.h"
#include "wire/wire.h"

#define ID_GUARD(id) CORE_GUARD((id)->cm->d->core)

static uint8_t or_default(uint8_t v, uint8_t def)
{
	return v ? v : def;
}

/* Copies the caller's private data into m (len checked against the
 * message's area): 0 or -EINVAL. */
static int put_priv(struct roce_cm_msg *m, const void *priv, unsigned len)
{
	if (len > roce_cm_priv_len(m->attr_id) || (len && !priv))
		return -EINVAL;
	if (len)
		memcpy(m->priv, priv, len);
	m->priv_len = (uint16_t)len;
	return 0;
}

struct rocemu_cm_id *rocemu_cm_id_new(struct rocemu_dev *d,
				      rocemu_cm_handler fn, void *user)
{
	if (!d || !fn) {
		errno = EINVAL;
		return NULL;
	}
	CORE_GUARD(d->core);
	if (!d->gsi_user) {
		errno = ENOMEM; /* the device got no CM */
		return NULL;
	}
	struct rocemu_cm_id *id = cm_id_alloc(d->gsi_user, fn, user);
	if (!id)
		errno = ENOMEM;
	return id;
}

void rocemu_cm_id_set_handler(struct rocemu_cm_id *id, rocemu_cm_handler fn,
			      void *user)
{
	ID_GUARD(id);
	id->fn = fn;
	id->user = user;
}

/* A REJ from id with reason (and what goes with it), no retries. */
static int send_rej(struct rocemu_cm_id *id, uint16_t reason,
		    const void *ari, uint8_t ari_len, const void *priv,
		    uint8_t len)
{
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_REJ };

	if (ari_len > ROCE_CM_INFO_MAX || (ari_len && !ari) ||
	    put_priv(&m, priv, len))
		return -EINVAL;
	m.rej.local_comm_id = id->local_id;
	m.rej.remote_comm_id = id->remote_id;
	m.rej.msg_rejected = id->passive ? ROCE_CM_MSG_REQ : ROCE_CM_MSG_REP;
	m.rej.reason = reason;
	m.rej.ari_len = ari_len;
	if (ari_len)
		memcpy(m.rej.ari, ari, ari_len);
	cm_disarm(id);
	id->have_out = false;
	int rc = cm_send(id, &m, false);
	id->state = CM_IDLE;
	return rc;
}

/*
 * Sends a DREQ on an established id (its lock held) and moves it to
 * DREQ_SENT, the resend timer armed. -EINVAL when the private data is too
 * long, or cm_send's error (the state unchanged then).
 */
int cm_send_dreq(struct rocemu_cm_id *id, const void *priv, uint8_t len)
{
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_DREQ };

	if (put_priv(&m, priv, len))
		return -EINVAL;
	m.dreq.local_comm_id = id->local_id;
	m.dreq.remote_comm_id = id->remote_id;
	m.dreq.remote_qpn = id->remote_qpn;
	id->tid = cm_new_tid(id->cm);
	cm_disarm(id);
	int rc = cm_send(id, &m, true);
	if (rc)
		return rc;
	id->state = CM_DREQ_SENT;
	return 0;
}

static int send_drep_locked(struct rocemu_cm_id *id, const void *priv,
			    uint8_t len)
{
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_DREP };

	if (put_priv(&m, priv, len))
		return -EINVAL;
	m.drep.local_comm_id = id->local_id;
	m.drep.remote_comm_id = id->remote_id;
	int rc = cm_send(id, &m, false);
	cm_enter_timewait(id);
	return rc;
}

int rocemu_cm_id_free(struct rocemu_cm_id *id)
{
	if (!id)
		return -EINVAL;
	ID_GUARD(id);
	id->freed = true;
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		send_rej(id, ROCE_CM_REJ_TIMEOUT, NULL, 0, NULL, 0);
		break;
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
	case CM_REP_RCVD:
		send_rej(id, ROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		break;
	case CM_ESTABLISHED:
		if (cm_send_dreq(id, NULL, 0) == 0)
			return 0; /* kept until its timewait ends */
		break;
	case CM_DREQ_SENT:
	case CM_TIMEWAIT:
		return 0;
	case CM_DREQ_RCVD:
		send_drep_locked(id, NULL, 0);
		return 0;
	case CM_SIDR_REQ_RCVD: {
		struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_SIDR_REP };

		m.sidr_rep.request_id = id->remote_id;
		m.sidr_rep.status = ROCE_CM_SIDR_REJECT;
		m.sidr_rep.service_id = id->service_id;
		cm_send(id, &m, false);
		break;
	}
	default:
		break;
	}
	cm_id_destroy(id);
	return 0;
}

int rocemu_cm_listen(struct rocemu_cm_id *id, uint64_t service_id,
		     uint64_t mask)
{
	if (!id)
		return -EINVAL;
	ID_GUARD(id);
	if (id->state != CM_IDLE)
		return -EINVAL;
	for (struct rocemu_cm_id *o = id->cm->ids; o; o = o->next) {
		uint64_t both = o->mask & mask;

		if (o->state == CM_LISTEN &&
		    (o->service_id & both) == (service_id & both))
			return -EADDRINUSE;
	}
	/* Among the processes on this address, as Linux's one port
	 * space: another's listener on the service is EADDRINUSE; its
	 * REQs come to this one (docs/sharing.md). A masked listen claims
	 * nothing (and takes what arrives here). */
	if (mask == ~0ull) {
		int rc = wire_claim(id->cm->d->port, service_id);
		if (rc)
			return rc;
	}
	id->state = CM_LISTEN;
	id->service_id = service_id;
	id->mask = mask;
	return 0;
}

static bool req_param_ok(const struct rocemu_cm_req_param *p)
{
	return (p->qp_type == IBV_QPT_RC || p->qp_type == IBV_QPT_UC) &&
	       p->qpn && p->qpn <= ROCE_PSN_MASK &&
	       p->starting_psn <= ROCE_PSN_MASK && p->retry_count <= 7 &&
	       p->rnr_retry_count <= 7 && p->packet_life_time < 32 &&
	       p->cm_response_timeout < 32 && p->max_cm_retries < 16 &&
	       (!p->mtu || (p->mtu >= IBV_MTU_256 && p->mtu <= IBV_MTU_4096)) &&
	       p->private_data_len <= ROCE_CM_REQ_PRIV_LEN &&
	       (!p->private_data_len || p->private_data);
}

int rocemu_cm_send_req(struct rocemu_cm_id *id,
		       const struct rocemu_cm_req_param *p)
{
	if (!id || !p || !req_param_ok(p))
		return -EINVAL;
	ID_GUARD(id);
	struct cm *cm = id->cm;
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_REQ };
	struct roce_cm_req *q = &m.req;

	if (id->state != CM_IDLE)
		return -EINVAL;
	put_priv(&m, p->private_data, p->private_data_len);
	memcpy(id->peer_gid, p->dgid, 16);
	id->passive = id->sidr = false;
	id->service_id = p->service_id;
	id->qp_type = p->qp_type;
	id->local_qpn = p->qpn;
	/* the PSN this side receives with: Linux's ib_send_cm_req */
	id->rq_psn = p->starting_psn;
	id->max_dest_rd_atomic = p->responder_resources;
	id->max_rd_atomic = p->initiator_depth;
	id->retry_count = p->retry_count;
	id->rnr_retry = p->rnr_retry_count;
	id->srq = p->srq;
	/* The path MTU: what was asked, at most the device's (docs/cm.md). */
	id->mtu = p->mtu && p->mtu < cm->d->mtu ? p->mtu : cm->d->mtu;
	id->tclass = p->traffic_class;
	id->hop_limit = or_default(p->hop_limit, CM_DEF_HOP_LIMIT);
	id->packet_life_time = or_default(p->packet_life_time,
					  CM_DEF_PACKET_LIFE_TIME);
	id->local_cm_timeout = or_default(p->cm_response_timeout,
					  CM_DEF_RESPONSE_TIMEOUT);
	id->remote_cm_timeout = id->local_cm_timeout;
	id->max_cm_retries = or_default(p->max_cm_retries, CM_DEF_MAX_RETRIES);
	/* 12.7.27: the REP may take the peer's response time plus the
	 * packet's round trip (Linux: the same sum). */
	id->timeout_ns = 2 * cm_time_ns(id->packet_life_time) +
			 cm_time_ns(id->remote_cm_timeout);
	id->have_peer = false;

	q->local_comm_id = id->local_id;
	q->service_id = p->service_id;
	q->local_ca_guid = cm->guid;
	q->local_qpn = p->qpn;
	q->responder_resources = p->responder_resources;
	q->initiator_depth = p->initiator_depth;
	q->remote_cm_response_timeout = id->remote_cm_timeout;
	q->transport_type = p->qp_type == IBV_QPT_UC ? ROCE_CM_TRANSPORT_UC
						     : ROCE_CM_TRANSPORT_RC;
	q->starting_psn = p->starting_psn;
	q->local_cm_response_timeout = id->local_cm_timeout;
	q->retry_count = p->retry_count;
	q->pkey = 0xffff;
	q->path_mtu = (uint8_t)id->mtu;
	q->rnr_retry_count = p->rnr_retry_count;
	q->max_cm_retries = id->max_cm_retries;
	q->srq = p->srq;
	memcpy(q->primary.local_gid, cm->d->gid, 16);
	memcpy(q->primary.remote_gid, p->dgid, 16);
	q->primary.local_lid = q->primary.remote_lid = 0xffff; /* RoCE: permissive */
	q->primary.traffic_class = p->traffic_class;
	q->primary.hop_limit = id->hop_limit;
	q->primary.local_ack_timeout = (uint8_t)(id->packet_life_time + 1);
	id->tid = cm_new_tid(cm);
	int rc = cm_send(id, &m, true);
	if (rc)
		return rc;
	id->state = CM_REQ_SENT;
	return 0;
}

int rocemu_cm_send_rep(struct rocemu_cm_id *id,
		       const struct rocemu_cm_rep_param *p)
{
	if (!id || !p || !p->qpn || p->qpn > ROCE_PSN_MASK ||
	    p->starting_psn > ROCE_PSN_MASK || p->rnr_retry_count > 7)
		return -EINVAL;
	ID_GUARD(id);
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_REP };

	if ((id->state != CM_REQ_RCVD && id->state != CM_MRA_REQ_SENT) ||
	    put_priv(&m, p->private_data, p->private_data_len))
		return -EINVAL;
	id->local_qpn = p->qpn;
	/* the PSN this side receives with: Linux's ib_send_cm_rep */
	id->rq_psn = p->starting_psn;
	id->max_dest_rd_atomic = p->responder_resources;
	id->max_rd_atomic = p->initiator_depth;
	id->srq = p->srq;
	m.rep.local_comm_id = id->local_id;
	m.rep.remote_comm_id = id->remote_id;
	m.rep.local_qpn = p->qpn;
	m.rep.starting_psn = p->starting_psn;
	m.rep.responder_resources = p->responder_resources;
	m.rep.initiator_depth = p->initiator_depth;
	m.rep.rnr_retry_count = p->rnr_retry_count;
	m.rep.srq = p->srq;
	m.rep.local_ca_guid = id->cm->guid;
	int rc = cm_send(id, &m, true);
	if (rc)
		return rc;
	id->state = CM_REP_SENT;
	return 0;
}

int rocemu_cm_send_rtu(struct rocemu_cm_id *id, const void *priv,
		       uint8_t len)
{
	if (!id)
		return -EINVAL;
	ID_GUARD(id);
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_RTU };

	if (id->state != CM_REP_RCVD || put_priv(&m, priv, len))
		return -EINVAL;
	m.rtu.local_comm_id = id->local_id;
	m.rtu.remote_comm_id = id->remote_id;
	id->tid = cm_new_tid(id->cm);
	int rc = cm_send(id, &m, false);
	if (rc)
		return rc;
	/* Kept, unretried, for a duplicate REP (our RTU was lost). */
	uint8_t mad[ROCE_MAD_LEN];
	if (roce_cm_encode(&m, mad) == ROCE_MAD_LEN) {
		memcpy(id->out, mad, ROCE_MAD_LEN);
		id->have_out = true;
	}
	id->state = CM_ESTABLISHED;
	return 0;
}

int rocemu_cm_send_rej(struct rocemu_cm_id *id, uint16_t reason,
		       const void *ari, uint8_t ari_len, const void *priv,
		       uint8_t len)
{
	if (!id)
		return -EINVAL;
	ID_GUARD(id);
	if (id->state != CM_REQ_RCVD && id->state != CM_MRA_REQ_SENT &&
	    id->state != CM_REP_RCVD)
		return -EINVAL;
	return send_rej(id, reason, ari, ari_len, priv, len);
}

int rocemu_cm_send_dreq(struct rocemu_cm_id *id, const void *priv,
			uint8_t len)
{
	if (!id)
		return -EINVAL;
	ID_GUARD(id);
	if (id->state != CM_ESTABLISHED)
		return -EINVAL;
	return cm_send_dreq(id, priv, len);
}

int rocemu_cm_send_drep(struct rocemu_cm_id *id, const void *priv,
			uint8_t len)
{
	if (!id)
		return -EINVAL;
	ID_GUARD(id);
	if (id->state != CM_DREQ_RCVD || len > ROCE_CM_DREP_PRIV_LEN)
		return -EINVAL;
	return send_drep_locked(id, priv, len);
}

int rocemu_cm_notify(struct rocemu_cm_id *id, enum ibv_event_type ev)
{
	if (!id || ev != IBV_EVENT_COMM_EST)
		return -EINVAL;
	ID_GUARD(id);
	if (id->passive && !id->sidr && cm_user_established(id))
		cm_event(id, ROCEMU_CM_USER_ESTABLISHED, 0, NULL, NULL);
	return 0;
}

int rocemu_cm_send_sidr_req(struct rocemu_cm_id *id,
			    const struct rocemu_cm_sidr_req_param *p)
{
	if (!id || !p || p->cm_response_timeout > 31 || p->max_cm_retries > 15)
		return -EINVAL;
	ID_GUARD(id);
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_SIDR_REQ };

	if (id->state != CM_IDLE ||
	    put_priv(&m, p->private_data, p->private_data_len))
		return -EINVAL;
	memcpy(id->peer_gid, p->dgid, 16);
	id->passive = false;
	id->sidr = true;
	id->service_id = p->service_id;
	id->packet_life_time = CM_DEF_PACKET_LIFE_TIME;
	id->max_cm_retries = or_default(p->max_cm_retries, CM_DEF_MAX_RETRIES);
	id->timeout_ns = 2 * cm_time_ns(id->packet_life_time) +
			 cm_time_ns(or_default(p->cm_response_timeout,
					       CM_DEF_RESPONSE_TIMEOUT));
	m.sidr_req.request_id = id->local_id;
	m.sidr_req.pkey = 0xffff;
	m.sidr_req.service_id = p->service_id;
	id->tid = cm_new_tid(id->cm);
	int rc = cm_send(id, &m, true);
	if (rc)
		return rc;
	id->state = CM_SIDR_REQ_SENT;
	return 0;
}

int rocemu_cm_send_sidr_rep(struct rocemu_cm_id *id, uint8_t status,
			    uint32_t qpn, uint32_t qkey, const void *priv,
			    uint8_t len)
{
	if (!id || qpn > ROCE_PSN_MASK)
		return -EINVAL;
	ID_GUARD(id);
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_SIDR_REP };

	if (id->state != CM_SIDR_REQ_RCVD || put_priv(&m, priv, len))
		return -EINVAL;
	m.sidr_rep.request_id = id->remote_id;
	m.sidr_rep.status = status;
	m.sidr_rep.qpn = qpn;
	m.sidr_rep.qkey = qkey;
	m.sidr_rep.service_id = id->service_id;
	int rc = cm_send(id, &m, false);
	id->state = CM_IDLE;
	return rc;
}

/* Which states have got as far as each QP state needs. */
static bool reached(const struct rocemu_cm_id *id, enum ibv_qp_state s)
{
	switch (id->state) {
	case CM_IDLE:
	case CM_LISTEN:
	case CM_SIDR_REQ_SENT:
	case CM_SIDR_REQ_RCVD:
	case CM_TIMEWAIT:
		return false;
	default:
		return s == IBV_QPS_INIT || id->have_peer;
	}
}

int rocemu_cm_init_qp_attr(struct rocemu_cm_id *id, struct ibv_qp_attr *attr,
			   int *mask)
{
	if (!id || !attr || !mask)
		return -EINVAL;
	ID_GUARD(id);
	enum ibv_qp_state s = attr->qp_state;
	bool rc_qp = id->qp_type == IBV_QPT_RC;

	if ((s != IBV_QPS_INIT && s != IBV_QPS_RTR && s != IBV_QPS_RTS) ||
	    !reached(id, s) || id->sidr)
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = s;
	*mask = IBV_QP_STATE;
	if (s == IBV_QPS_INIT) {
		attr->port_num = 1;
		attr->pkey_index = 0;
		attr->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (id->max_dest_rd_atomic && rc_qp)
			attr->qp_access_flags |= IBV_ACCESS_REMOTE_READ |
						 IBV_ACCESS_REMOTE_ATOMIC;
		*mask |= IBV_QP_PORT | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS;
	} else if (s == IBV_QPS_RTR) {
		attr->ah_attr.is_global = 1;
		attr->ah_attr.port_num = 1;
		memcpy(attr->ah_attr.grh.dgid.raw, id->peer_gid, 16);
		attr->ah_attr.grh.sgid_index = 1;
		attr->ah_attr.grh.hop_limit = id->hop_limit;
		attr->ah_attr.grh.traffic_class = id->tclass;
		attr->path_mtu = id->mtu;
		attr->dest_qp_num = id->remote_qpn;
		attr->rq_psn = id->rq_psn;
		*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			 IBV_QP_RQ_PSN;
		if (rc_qp) {
			attr->max_dest_rd_atomic = id->max_dest_rd_atomic;
			attr->min_rnr_timer = CM_MIN_RNR_TIMER;
			*mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	} else {
		attr->sq_psn = id->sq_psn;
		*mask |= IBV_QP_SQ_PSN;
		if (rc_qp) {
			attr->timeout = (uint8_t)(id->packet_life_time + 1);
			attr->retry_cnt = id->retry_count;
			attr->rnr_retry = id->rnr_retry;
			attr->max_rd_atomic = id->max_rd_atomic;
			*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		}
	}
	return 0;
}
