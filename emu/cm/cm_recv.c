/* SPDX-License-Identifier: MIT */
/* What the CM does with each message it receives, by state (IBTA 12.9), duplicates and strangers included. */
#include <string.h>

#include "cm_local.h"

/* The id whose local comm ID a message names as its remote one. */
static struct rocemu_cm_id *by_local(struct cm *cm, uint32_t local_id)
{
	for (struct rocemu_cm_id *id = cm->ids; id; id = id->next)
		if (id->local_id == local_id && !id->sidr &&
		    id->state != CM_LISTEN)
			return id;
	return NULL;
}

static void unmatched(struct cm *cm, const struct roce_cm_msg *m,
		      const char *why)
{
	dev_count(cm->d, ROCEMU_CNT_CM_RX_UNMATCHED);
	core_trace(cm->d->core, "%s cm drop %s: %s", cm->d->name,
		   roce_cm_attr_name(m->attr_id), why);
}

static void duplicate(struct cm *cm, const struct roce_cm_msg *m)
{
	dev_count(cm->d, ROCEMU_CNT_CM_RX_DUPLICATES);
	core_trace(cm->d->core, "%s cm duplicate %s", cm->d->name,
		   roce_cm_attr_name(m->attr_id));
}

/* A REJ for a REQ no id took (the reply goes where the REQ came from,
 * echoing its TID and naming its comm ID, as Linux's cm_issue_rej). */
static void reject_req(struct cm *cm, const struct gsi_mad *g,
		       const struct roce_cm_msg *m, uint16_t reason,
		       uint32_t local_id)
{
	struct roce_cm_msg r = { .attr_id = ROCE_CM_ATTR_REJ, .tid = m->tid };

	r.rej.local_comm_id = local_id;
	r.rej.remote_comm_id = m->req.local_comm_id;
	r.rej.msg_rejected = ROCE_CM_MSG_REQ;
	r.rej.reason = reason;
	cm_send_to(cm, g->src_gid, g->traffic_class, &r);
}

/* The listener that takes service sid, or NULL. */
static struct rocemu_cm_id *listener_of(struct cm *cm, uint64_t sid)
{
	for (struct rocemu_cm_id *id = cm->ids; id; id = id->next)
		if (id->state == CM_LISTEN &&
		    (sid & id->mask) == (id->service_id & id->mask))
			return id;
	return NULL;
}

/* A duplicate REQ, answered as the original was (IBTA 12.9.6, Linux's
 * cm_dup_req_handler): an MRA while the user decides, the REP again once
 * sent. */
static void dup_req(struct rocemu_cm_id *id, const struct roce_cm_msg *m)
{
	struct roce_cm_msg r = { .attr_id = ROCE_CM_ATTR_MRA };

	duplicate(id->cm, m);
	switch (id->state) {
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
		r.mra.local_comm_id = id->local_id;
		r.mra.remote_comm_id = id->remote_id;
		r.mra.msg_mraed = ROCE_CM_MSG_REQ;
		r.mra.service_timeout = CM_MRA_SERVICE_TIMEOUT;
		id->state = CM_MRA_REQ_SENT;
		cm_send(id, &r, false);
		break;
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
		cm_resend(id);
		break;
	default:
		break;
	}
}

static enum ibv_mtu clamp_mtu(const struct cm *cm, unsigned code)
{
	if (code < IBV_MTU_256 || code > IBV_MTU_4096)
		return IBV_MTU_256;
	return code < (unsigned)cm->d->mtu ? (enum ibv_mtu)code : cm->d->mtu;
}

/* Whether id holds (or still waits out) a connection with a remote QP:
 * from the REQ on for the passive side, from the REP on for the active,
 * until timewait ends, as Linux's table of remote QPNs. */
static bool holds_remote_qp(const struct rocemu_cm_id *id)
{
	if (id->sidr)
		return false;
	switch (id->state) {
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
		return id->passive;
	case CM_REP_RCVD:
		return !id->passive;
	case CM_ESTABLISHED:
	case CM_DREQ_SENT:
	case CM_DREQ_RCVD:
	case CM_TIMEWAIT:
		return true;
	default:
		return false;
	}
}

/* 12.9.8.3.1: the id that holds a connection with the REQ's QP (its CA
 * GUID and QPN), or NULL: a REQ from it is stale. */
static struct rocemu_cm_id *stale_of(struct cm *cm, const struct roce_cm_req *q)
{
	for (struct rocemu_cm_id *id = cm->ids; id; id = id->next)
		if (holds_remote_qp(id) && id->remote_guid == q->local_ca_guid &&
		    id->remote_qpn == q->local_qpn)
			return id;
	return NULL;
}

static void on_req(struct cm *cm, const struct gsi_mad *g,
		   const struct roce_cm_msg *m, const struct cm_cause *c)
{
	const struct roce_cm_req *q = &m->req;
	struct rocemu_cm_id *id, *l;

	for (id = cm->ids; id; id = id->next) {
		if (!id->passive || id->sidr || id->state == CM_IDLE)
			continue;
		if (id->remote_id == q->local_comm_id &&
		    id->remote_guid == q->local_ca_guid) {
			dup_req(id, m);
			return;
		}
	}
	if ((id = stale_of(cm, q))) {
		reject_req(cm, g, m, ROCE_CM_REJ_STALE_CONN, 0);
		/* The old connection's peer is gone: end it (Linux's
		 * cm_match_req sends the DREQ too). */
		if (id->state == CM_ESTABLISHED)
			cm_send_dreq(id, NULL, 0);
		return;
	}
	if (!(l = listener_of(cm, q->service_id))) {
		reject_req(cm, g, m, ROCE_CM_REJ_INVALID_SERVICE_ID, 0);
		return;
	}
	/* The path names this device as its remote end (Linux refuses a
	 * REQ whose primary path it cannot route: REJ 12). */
	if (memcmp(q->primary.remote_gid, cm->d->gid, 16)) {
		reject_req(cm, g, m, ROCE_CM_REJ_INVALID_GID, 0);
		return;
	}
	if (q->transport_type != ROCE_CM_TRANSPORT_RC &&
	    q->transport_type != ROCE_CM_TRANSPORT_UC) {
		reject_req(cm, g, m, ROCE_CM_REJ_INVALID_TRANSPORT_TYPE, 0);
		return;
	}
	if (!(id = cm_id_alloc(cm, l->fn, l->user))) {
		reject_req(cm, g, m, ROCE_CM_REJ_NO_RESOURCES, 0);
		return;
	}
	id->passive = true;
	id->state = CM_REQ_RCVD;
	id->tid = m->tid;
	id->service_id = q->service_id;
	id->remote_id = q->local_comm_id;
	id->remote_guid = q->local_ca_guid;
	memcpy(id->peer_gid, g->src_gid, 16);
	id->tclass = q->primary.traffic_class;
	id->hop_limit = g->hop_limit;
	id->qp_type = q->transport_type == ROCE_CM_TRANSPORT_UC ? IBV_QPT_UC
								: IBV_QPT_RC;
	id->remote_qpn = q->local_qpn;
	/* the REQ's starting PSN is the one its sender receives with,
	 * hence the one this side sends with (Linux's cm_req_handler) */
	id->sq_psn = q->starting_psn;
	id->mtu = clamp_mtu(cm, q->path_mtu);
	id->retry_count = q->retry_count;
	id->rnr_retry = q->rnr_retry_count;
	/* The REQ's counts turned round, as Linux's cm_req_handler: a QP
	 * moved before the REP (rdma_accept moves it to RTR first) answers
	 * the READs the peer will send; the REP sets what was accepted.
	 * At most the device's, as Linux's cma puts the accepted count
	 * (the device's at most) on the QP: a peer asking 255 still gets
	 * its connection. */
	id->max_dest_rd_atomic = q->initiator_depth < MAX_RD_ATOMIC ?
		q->initiator_depth : MAX_RD_ATOMIC;
	id->max_rd_atomic = q->responder_resources < MAX_RD_ATOMIC ?
		q->responder_resources : MAX_RD_ATOMIC;
	id->packet_life_time = (uint8_t)(q->primary.local_ack_timeout
					 ? q->primary.local_ack_timeout - 1
					 : CM_DEF_PACKET_LIFE_TIME);
	id->local_cm_timeout = q->remote_cm_response_timeout;
	id->remote_cm_timeout = q->local_cm_response_timeout;
	id->max_cm_retries = q->max_cm_retries;
	/* The REP waits for an RTU as long as the REQ waited for the REP. */
	id->timeout_ns = 2 * cm_time_ns(id->packet_life_time) +
			 cm_time_ns(id->remote_cm_timeout);
	id->have_peer = true;
	cm_event(id, ROCEMU_CM_REQ_RCVD, 0, c, l);
}

static void on_rep(struct cm *cm, const struct roce_cm_msg *m,
		   const struct cm_cause *c)
{
	struct rocemu_cm_id *id = by_local(cm, m->rep.remote_comm_id);

	if (!id || id->passive) {
		unmatched(cm, m, "no id");
		return;
	}
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		break;
	case CM_ESTABLISHED: /* our RTU was lost: send it again */
		duplicate(cm, m);
		if (m->rep.local_comm_id == id->remote_id)
			cm_resend(id);
		return;
	case CM_REP_RCVD:
		duplicate(cm, m);
		return;
	default:
		unmatched(cm, m, "state");
		return;
	}
	cm_disarm(id);
	id->have_out = false;
	id->state = CM_REP_RCVD;
	id->tid = m->tid;
	id->remote_id = m->rep.local_comm_id;
	id->remote_guid = m->rep.local_ca_guid;
	id->remote_qpn = m->rep.local_qpn;
	id->sq_psn = m->rep.starting_psn;	/* as for the REQ's */
	id->rnr_retry = m->rep.rnr_retry_count;
	id->have_peer = true;
	cm_event(id, ROCEMU_CM_REP_RCVD, 0, c, NULL);
}

bool cm_user_established(struct rocemu_cm_id *id)
{
	if (id->state != CM_REP_SENT && id->state != CM_MRA_REP_RCVD)
		return false;
	cm_disarm(id);
	id->have_out = false;
	id->state = CM_ESTABLISHED;
	return true;
}

static void on_rtu(struct cm *cm, const struct roce_cm_msg *m,
		   const struct cm_cause *c)
{
	struct rocemu_cm_id *id = by_local(cm, m->rtu.remote_comm_id);

	if (!id || !id->passive || m->rtu.local_comm_id != id->remote_id) {
		unmatched(cm, m, "no id");
		return;
	}
	if (id->state == CM_ESTABLISHED) {
		duplicate(cm, m); /* after data established it, or a repeat */
		return;
	}
	if (!cm_user_established(id)) {
		unmatched(cm, m, "state");
		return;
	}
	cm_event(id, ROCEMU_CM_RTU_RCVD, 0, c, NULL);
}

static void on_rej(struct cm *cm, const struct roce_cm_msg *m,
		   const struct cm_cause *c)
{
	struct rocemu_cm_id *id = by_local(cm, m->rej.remote_comm_id);

	/* An active side that gives up before it heard our REP does not
	 * know our comm ID: its REJ names its own (Linux matches so too). */
	for (struct rocemu_cm_id *p = cm->ids; !id && p; p = p->next)
		if (p->passive && !p->sidr && p->state != CM_IDLE &&
		    p->remote_id == m->rej.local_comm_id &&
		    !m->rej.remote_comm_id)
			id = p;
	if (!id) {
		unmatched(cm, m, "no id");
		return;
	}
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
	case CM_REQ_RCVD:	/* the active side gave up */
	case CM_MRA_REQ_SENT:
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
	case CM_REP_RCVD:
		break;
	case CM_ESTABLISHED:
		/* A REJ of our REP after data: the peer gave up first. */
		if (id->passive)
			break;
		/* fallthrough */
	default:
		unmatched(cm, m, "state");
		return;
	}
	/* Once the peer knows our comm ID its REJ must name its own too. */
	if (id->state != CM_REQ_SENT && id->state != CM_MRA_REQ_RCVD &&
	    m->rej.local_comm_id != id->remote_id) {
		unmatched(cm, m, "comm ID");
		return;
	}
	cm_disarm(id);
	id->have_out = false;
	id->state = CM_IDLE;
	cm_event(id, ROCEMU_CM_REJ_RCVD, m->rej.reason, c, NULL);
}

static void on_mra(struct cm *cm, const struct roce_cm_msg *m)
{
	struct rocemu_cm_id *id = by_local(cm, m->mra.remote_comm_id);

	if (!id) {
		unmatched(cm, m, "no id");
		return;
	}
	if (m->mra.msg_mraed == ROCE_CM_MSG_REQ &&
	    (id->state == CM_REQ_SENT || id->state == CM_MRA_REQ_RCVD))
		id->state = CM_MRA_REQ_RCVD;
	else if (m->mra.msg_mraed == ROCE_CM_MSG_REP &&
		 (id->state == CM_REP_SENT || id->state == CM_MRA_REP_RCVD))
		id->state = CM_MRA_REP_RCVD;
	else {
		unmatched(cm, m, "state");
		return;
	}
	/* 12.6.6: the peer needs its service timeout: wait that long (and
	 * the packet's way) before sending again. */
	cm_arm(id, cm_time_ns(m->mra.service_timeout) +
			   cm_time_ns(id->packet_life_time));
}

static void on_dreq(struct cm *cm, const struct gsi_mad *g,
		    const struct roce_cm_msg *m, const struct cm_cause *c)
{
	struct rocemu_cm_id *id = by_local(cm, m->dreq.remote_comm_id);

	if (!id || m->dreq.local_comm_id != id->remote_id ||
	    id->state == CM_IDLE) {
		/* Linux's cm_dreq_handler: a DREQ for a connection no longer
		 * here (its timewait over before the peer's retry, our DREP
		 * lost) is answered DREP, so the peer need not time out. */
		struct roce_cm_msg r = { .attr_id = ROCE_CM_ATTR_DREP,
					 .tid = m->tid };

		unmatched(cm, m, "no id");
		r.drep.local_comm_id = m->dreq.remote_comm_id;
		r.drep.remote_comm_id = m->dreq.local_comm_id;
		cm_send_to(cm, g->src_gid, g->traffic_class, &r);
		return;
	}
	/* Linux's cm_dreq_handler: a DREQ for another QP is not ours. */
	if (m->dreq.remote_qpn != id->local_qpn) {
		unmatched(cm, m, "QPN");
		return;
	}
	switch (id->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT:	/* the RTU is lost and the peer is done */
	case CM_MRA_REP_RCVD:
	case CM_DREQ_SENT:	/* both ends at once */
		break;
	case CM_TIMEWAIT: { /* our DREP was lost: answer again */
		struct roce_cm_msg r = { .attr_id = ROCE_CM_ATTR_DREP,
					 .tid = m->tid };

		duplicate(cm, m);
		r.drep.local_comm_id = id->local_id;
		r.drep.remote_comm_id = id->remote_id;
		cm_send_to(cm, g->src_gid, id->tclass, &r);
		return;
	}
	case CM_DREQ_RCVD:
		duplicate(cm, m);
		return;
	default:
		unmatched(cm, m, "state");
		return;
	}
	cm_disarm(id);
	id->have_out = false;
	id->state = CM_DREQ_RCVD;
	id->tid = m->tid;
	cm_event(id, ROCEMU_CM_DREQ_RCVD, 0, c, NULL);
}

static void on_drep(struct cm *cm, const struct roce_cm_msg *m,
		    const struct cm_cause *c)
{
	struct rocemu_cm_id *id = by_local(cm, m->drep.remote_comm_id);

	if (!id || m->drep.local_comm_id != id->remote_id) {
		unmatched(cm, m, "no id");
		return;
	}
	if (id->state != CM_DREQ_SENT) {
		duplicate(cm, m);
		return;
	}
	cm_disarm(id);
	cm_enter_timewait(id);
	cm_event(id, ROCEMU_CM_DREP_RCVD, 0, c, NULL);
}

static void on_sidr_req(struct cm *cm, const struct gsi_mad *g,
			const struct roce_cm_msg *m, const struct cm_cause *c)
{
	struct roce_cm_msg r = { .attr_id = ROCE_CM_ATTR_SIDR_REP,
				 .tid = m->tid };
	struct rocemu_cm_id *id, *l;

	for (id = cm->ids; id; id = id->next)
		if (id->sidr && id->state == CM_SIDR_REQ_RCVD &&
		    id->remote_id == m->sidr_req.request_id &&
		    !memcmp(id->peer_gid, g->src_gid, 16)) {
			duplicate(cm, m); /* the user answers it once */
			return;
		}
	r.sidr_rep.request_id = m->sidr_req.request_id;
	r.sidr_rep.service_id = m->sidr_req.service_id;
	if (!(l = listener_of(cm, m->sidr_req.service_id))) {
		r.sidr_rep.status = ROCE_CM_SIDR_UNSUPPORTED;
		cm_send_to(cm, g->src_gid, g->traffic_class, &r);
		return;
	}
	if (!(id = cm_id_alloc(cm, l->fn, l->user))) {
		r.sidr_rep.status = ROCE_CM_SIDR_REJECT;
		cm_send_to(cm, g->src_gid, g->traffic_class, &r);
		return;
	}
	id->passive = id->sidr = true;
	id->state = CM_SIDR_REQ_RCVD;
	id->tid = m->tid;
	id->service_id = m->sidr_req.service_id;
	id->remote_id = m->sidr_req.request_id;
	memcpy(id->peer_gid, g->src_gid, 16);
	id->tclass = g->traffic_class;
	id->hop_limit = g->hop_limit;
	cm_event(id, ROCEMU_CM_SIDR_REQ_RCVD, 0, c, l);
}

static void on_sidr_rep(struct cm *cm, const struct roce_cm_msg *m,
			const struct cm_cause *c)
{
	for (struct rocemu_cm_id *id = cm->ids; id; id = id->next)
		if (id->sidr && id->state == CM_SIDR_REQ_SENT &&
		    id->local_id == m->sidr_rep.request_id) {
			cm_disarm(id);
			id->have_out = false;
			id->state = CM_IDLE;
			cm_event(id, ROCEMU_CM_SIDR_REP_RCVD,
				 m->sidr_rep.status, c, NULL);
			return;
		}
	unmatched(cm, m, "no id");
}

void cm_receive(void *arg, const struct gsi_mad *g)
{
	struct cm *cm = arg;
	struct roce_cm_msg m;
	struct cm_cause c = { .msg = &m, .from = g };
	int rc = roce_cm_decode(g->mad, ROCE_MAD_LEN, &m);

	if (rc) {
		/* Not a CM Send this CM speaks (ib_core's validate_mad and
		 * agent dispatch drop these too), or a length that lies. */
		dev_count(cm->d, ROCEMU_CNT_RX_DROP_MAD);
		core_trace(cm->d->core, "%s cm drop MAD: %d", cm->d->name, rc);
		return;
	}
	dev_count(cm->d, ROCEMU_CNT_CM_RX_MSGS);
	core_trace(cm->d->core, "%s cm < %s", cm->d->name,
		   roce_cm_attr_name(m.attr_id));
	switch (m.attr_id) {
	case ROCE_CM_ATTR_REQ: on_req(cm, g, &m, &c); break;
	case ROCE_CM_ATTR_MRA: on_mra(cm, &m); break;
	case ROCE_CM_ATTR_REJ: on_rej(cm, &m, &c); break;
	case ROCE_CM_ATTR_REP: on_rep(cm, &m, &c); break;
	case ROCE_CM_ATTR_RTU: on_rtu(cm, &m, &c); break;
	case ROCE_CM_ATTR_DREQ: on_dreq(cm, g, &m, &c); break;
	case ROCE_CM_ATTR_DREP: on_drep(cm, &m, &c); break;
	case ROCE_CM_ATTR_SIDR_REQ: on_sidr_req(cm, g, &m, &c); break;
	case ROCE_CM_ATTR_SIDR_REP: on_sidr_rep(cm, &m, &c); break;
	default: unmatched(cm, &m, "not supported"); break; /* LAP, APR */
	}
}

void cm_comm_est(void *arg, struct rocemu_qp *qp)
{
	struct cm *cm = arg;

	for (struct rocemu_cm_id *id = cm->ids; id; id = id->next)
		if (id->passive && !id->sidr && id->local_qpn == qp->qpn &&
		    cm_user_established(id)) {
			cm_event(id, ROCEMU_CM_USER_ESTABLISHED, 0, NULL, NULL);
			return;
		}
}
