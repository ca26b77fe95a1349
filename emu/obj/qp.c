/* SPDX-License-Identifier: MIT */
/* Queue pairs: creation, posting work requests, errors and flushing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "obj.h"
#include "rocemu/grh.h"

/* One capability against the device's limit: the reason it is refused
 * (at most n bytes into buf), or false when it fits. */
static bool cap_over(char *buf, size_t n, const char *name, uint32_t v,
		     uint32_t lo, uint32_t hi, const char *limit)
{
	if (v >= lo && v <= hi)
		return false;
	if (v < lo)
		snprintf(buf, n, "cap.%s %u: at least %u", name, v, lo);
	else
		snprintf(buf, n, "cap.%s %u is more than the device's %s %u "
				 "(ibv_query_device)", name, v, limit, hi);
	return true;
}

/* Why attr cannot make a QP (at most n bytes into buf), or false when it
 * can. A QP on an SRQ has no receive queue of its own: max_recv_wr may
 * be 0. */
static bool create_refused(const struct ibv_qp_init_attr *attr, char *buf,
			   size_t n)
{
	const struct ibv_qp_cap *c = &attr->cap;
	bool srq = attr->srq != NULL;

	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD) {
		snprintf(buf, n, "qp_type %d: rocemu makes RC, UC and UD QPs",
			 (int)attr->qp_type);
		return true;
	}
	if (!attr->send_cq || !attr->recv_cq) {
		snprintf(buf, n, "no %s: a QP needs both CQs",
			 attr->send_cq ? "recv_cq" : "send_cq");
		return true;
	}
	return cap_over(buf, n, "max_send_wr", c->max_send_wr, 1, MAX_QP_WR,
			"max_qp_wr") ||
	       cap_over(buf, n, "max_recv_wr", c->max_recv_wr, srq ? 0 : 1,
			MAX_QP_WR, "max_qp_wr") ||
	       cap_over(buf, n, "max_send_sge", c->max_send_sge, 0, MAX_SGE,
			"max_sge") ||
	       cap_over(buf, n, "max_recv_sge", c->max_recv_sge, 0, MAX_SGE,
			"max_sge") ||
	       cap_over(buf, n, "max_inline_data", c->max_inline_data, 0,
			MAX_INLINE, "inline limit");
}

static bool qpn_in_use(void *dev, uint32_t qpn)
{
	return qp_find(dev, qpn) != NULL;
}

struct rocemu_qp *rocemu_qp_new(struct rocemu_pd *pd,
				struct ibv_qp_init_attr *attr)
{
	CORE_GUARD(pd->dev->core);
	struct rocemu_dev *d = pd->dev;

	bool known = attr->qp_type == IBV_QPT_RC ||
		     attr->qp_type == IBV_QPT_UC || attr->qp_type == IBV_QPT_UD;
	char why[160];

	if (create_refused(attr, why, sizeof(why))) {
		dev_why(d, ROCEMU_WHY_VERB, 0, NULL, 0, "IBTA 11.2.5.1",
			"create_qp: %s", why);
		errno = known ? EINVAL : EOPNOTSUPP;
		return NULL;
	}
	struct rocemu_qp *qp = calloc(1, sizeof(*qp));
	if (!qp || ring_init(&qp->sq, attr->cap.max_send_wr, sizeof(struct swqe)) ||
	    ring_init(&qp->rq, attr->cap.max_recv_wr ? attr->cap.max_recv_wr : 1,
		      sizeof(struct rwqe))) {
		if (qp)
			ring_fini(&qp->sq);
		free(qp);
		errno = ENOMEM;
		return NULL;
	}
	/* Report what was really given, as ibv_create_qp(3) does. */
	attr->cap.max_send_wr = ring_size(&qp->sq);
	attr->cap.max_recv_wr = ring_size(&qp->rq);
	qp->dev = d;
	qp->pd = pd;
	qp->init = *attr;
	qp->scq = (struct rocemu_cq *)(void *)attr->send_cq;
	qp->rcq = (struct rocemu_cq *)(void *)attr->recv_cq;
	qp->state = IBV_QPS_RESET;
	qp->ready.owner = qp->acks.owner = qp;
	for (int k = 0; k < 2; k++)
		qp->timer[k] = (struct sched_timer){ .owner = qp,
						     .kind = (uint8_t)k };
	if (idgen_take(&d->qpns, qpn_in_use, d, &qp->qpn)) {
		ring_fini(&qp->sq);
		ring_fini(&qp->rq);
		free(qp);
		errno = ENOMEM;
		return NULL;
	}
	HASH_ADD_BYHASHVALUE(hh, d->qps, qpn, sizeof(qp->qpn), qp->qpn, qp);
	if (attr->qp_type == IBV_QPT_UD) {
		/* A datagram QP keeps the port rxe gives it at creation. */
		roce_frame_init(&qp->tmpl, 4);
		memcpy(qp->tmpl.eth_src, d->mac, 6);
		memcpy(qp->tmpl.src_gid, d->gid, 16);
		qp->tmpl.sport = roce_udp_sport_of_qpn(qp->qpn);
	}
	pd->users++;
	qp->scq->users++;
	qp->rcq->users++;
	qp->srq = (struct rocemu_srq *)(void *)attr->srq;
	if (qp->srq)
		qp->srq->users++;
	return qp;
}

int rocemu_qp_free(struct rocemu_qp *qp)
{
	CORE_GUARD(qp->dev->core);
	qp_unschedule(qp);
	dev_forget_events(qp->dev, qp);
	mw_forget_qp(qp);
	HASH_DELETE(hh, qp->dev->qps, qp);
	qp->pd->users--;
	qp->scq->users--;
	qp->rcq->users--;
	if (qp->srq)
		qp->srq->users--;
	ring_fini(&qp->sq);
	ring_fini(&qp->rq);
	free(qp->resp.res);
	free(qp);
	return 0;
}

uint32_t rocemu_qp_num(const struct rocemu_qp *qp)
{
	return qp->qpn;
}

void qp_make_ready(struct rocemu_qp *qp)
{
	struct sched *s = &qp->dev->core->sched;

	/* Posting and state changes come from verbs calls: the progress
	 * thread may be asleep. */
	sched_kick(s);
	sched_add(&s->ready, &qp->ready);
}

void qp_owe_responses(struct rocemu_qp *qp)
{
	struct sched *s = &qp->dev->core->sched;

	/* Only a received packet makes a responder owe, inside a world pass
	 * that runs the responders before it ends (and kicks if some are left
	 * owed): waking the progress thread for each cost a UDP round trip a
	 * write and a context switch. */
	sched_add(&s->acks, &qp->acks);
}

void qp_unschedule(struct rocemu_qp *qp)
{
	struct sched *s = &qp->dev->core->sched;

	sched_remove(&s->ready, &qp->ready);
	sched_remove(&s->acks, &qp->acks);
	sched_timer_forget(s, &qp->timer[TIMER_RETRY]);
	sched_timer_forget(s, &qp->timer[TIMER_RNR]);
}

void timer_arm(struct rocemu_qp *qp, enum timer_kind kind, uint64_t ns)
{
	struct core *c = qp->dev->core;
	uint64_t from = c->now;

	/* On real time, c->now is the start of the pass: a packet read
	 * later in it (the thread preempted in between on a busy machine)
	 * would start its timer in the past, and an RNR or ACK timer would
	 * fire before the IBTA minimum. The timer runs from now. */
	if (c->real_time) {
		uint64_t t = clock_ns();
		if (t > from)
			from = t;
	}
	sched_timer_arm(&c->sched, &qp->timer[kind], from + ns);
}

void timer_cancel(struct rocemu_qp *qp, enum timer_kind kind)
{
	sched_timer_cancel(&qp->timer[kind]);
}

struct swqe *qp_oldest_unfinished(struct rocemu_qp *qp, uint32_t *idx)
{
	uint32_t i = ring_head(&qp->sq), tail = ring_tail(&qp->sq);
	struct swqe *wqe = NULL;

	for (; i != tail; i++) {
		wqe = ring_slot(&qp->sq, i);
		if (wqe->state != WQE_DONE)
			break;
	}
	*idx = i;
	return i != tail && wqe->state != WQE_POSTED ? wqe : NULL;
}

void qp_retire_done(struct rocemu_qp *qp)
{
	struct swqe *wqe;

	while ((wqe = ring_cons_slot(&qp->sq)) && wqe->state == WQE_DONE) {
		/* Unsignaled WQEs complete silently unless they failed. */
		if ((wqe->flags & IBV_SEND_SIGNALED) || wqe->status) {
			struct ibv_wc wc = {
				.wr_id = wqe->wr_id, .status = wqe->status,
				.opcode = wr_wc_opcode(wqe->opcode),
				.qp_num = qp->qpn,
				.byte_len = wqe->length,
			};
			cq_push(qp->scq, &wc, false);
		}
		ring_consume(&qp->sq);
	}
	if (qp->state == IBV_QPS_SQD && qp->attr.en_sqd_async_notify &&
	    ring_head(&qp->sq) == qp->req.idx) {
		qp->attr.en_sqd_async_notify = 0; /* once per drain */
		dev_async_event(qp->dev, IBV_EVENT_SQ_DRAINED, qp);
	}
}

/* Explain mode: n send and m receive WQEs of qp just flushed, why. */
static void why_flush(struct rocemu_qp *qp, unsigned n, unsigned m)
{
	if (!n && !m)
		return;
	dev_why(qp->dev, ROCEMU_WHY_FLUSH, qp->qpn, NULL, 0,
		"IBTA 10.3.1, 11.4.2.1",
		"WR_FLUSH_ERR: qp 0x%x entered ERR (%s): %u send and %u "
		"receive WQEs flushed", qp->qpn,
		qp->err_cause ? qp->err_cause : "see the reason before", n, m);
}

/* Completes every WQE of the SQ not yet completed; returns how many with
 * WR_FLUSH_ERR. */
static unsigned flush_sq(struct rocemu_qp *qp)
{
	struct swqe *wqe;
	unsigned n = 0;

	while ((wqe = ring_cons_slot(&qp->sq))) {
		struct ibv_wc wc = {
			.wr_id = wqe->wr_id, .qp_num = qp->qpn,
			.status = wqe->status ? wqe->status
					      : IBV_WC_WR_FLUSH_ERR,
			.opcode = wr_wc_opcode(wqe->opcode),
		};
		n += wc.status == IBV_WC_WR_FLUSH_ERR;
		cq_push(qp->scq, &wc, false);
		ring_consume(&qp->sq);
	}
	qp->req.idx = ring_head(&qp->sq);
	return n;
}

/* The same for the receives; returns how many. */
static unsigned flush_rq(struct rocemu_qp *qp)
{
	struct rwqe *wqe;
	struct ibv_wc wc = { .qp_num = qp->qpn, .status = IBV_WC_WR_FLUSH_ERR,
			     .opcode = IBV_WC_RECV };
	unsigned n = 0;

	if (qp->resp.have_wqe) {
		wc.wr_id = qp->resp.wqe.wr_id;
		cq_push(qp->rcq, &wc, false);
		qp->resp.have_wqe = false;
		n++;
	}
	if (qp->srq)
		return n; /* the shared receives stay for the other QPs */
	while ((wqe = ring_cons_slot(&qp->rq))) {
		wc.wr_id = wqe->wr_id;
		cq_push(qp->rcq, &wc, false);
		ring_consume(&qp->rq);
		n++;
	}
	return n;
}

void qp_flush(struct rocemu_qp *qp)
{
	timer_cancel(qp, TIMER_RETRY);
	timer_cancel(qp, TIMER_RNR);
	unsigned n = flush_sq(qp);
	why_flush(qp, n, flush_rq(qp));
}

void qp_error(struct rocemu_qp *qp, enum ibv_event_type ev)
{
	if (qp->state == IBV_QPS_ERR)
		return;
	qp->state = qp->attr.qp_state = IBV_QPS_ERR;
	if (!qp->err_cause)
		qp->err_cause = ev == IBV_EVENT_QP_ACCESS_ERR
				? "after it NAKed a remote access error"
			: ev == IBV_EVENT_QP_REQ_ERR
				? "after it NAKed an invalid request"
				: "after a fatal error, the reason before";
	dev_async_event(qp->dev, ev, qp);
	qp_flush(qp);
	/* IBTA 11.6.3.4: an SRQ's QP in error consumes no more receives. */
	if (qp->srq)
		dev_async_event(qp->dev, IBV_EVENT_QP_LAST_WQE_REACHED, qp);
}

/* ---- posting ---------------------------------------------------- */

/* Explain mode: why a post on qp refuses a send WR (wr; NULL for a
 * receive of wr_id); returns rc, the caller's error. */
static int post_refused(struct rocemu_qp *qp, int rc,
			const struct ibv_send_wr *wr, uint64_t wr_id,
			const char *rule, const char *why)
{
	const char *op = wr ? wr_opcode_name(wr->opcode) : "RECV";

	dev_why(qp->dev, ROCEMU_WHY_VERB, qp->qpn, op, wr ? wr->wr_id : wr_id,
		rule, "%s: qp 0x%x %s wr_id %llu: %s",
		wr ? "post_send" : "post_recv", qp->qpn, op,
		(unsigned long long)(wr ? wr->wr_id : wr_id), why);
	return rc;
}

/* The same for a post in a state that cannot take it. */
static int post_state_refused(struct rocemu_qp *qp, bool send)
{
	dev_why(qp->dev, ROCEMU_WHY_VERB, qp->qpn, NULL, 0, "IBTA 10.3.1",
		"%s: qp 0x%x is in %s; %s", send ? "post_send" : "post_recv",
		qp->qpn, qp_state_name(qp->state),
		send ? "sending needs RTS"
		     : "receives are taken from INIT on");
	return -EINVAL;
}

/* The fields every WQE starts from (the slot held an older one). */
static void clear_swqe(struct rocemu_qp *qp, const struct ibv_send_wr *wr,
		       struct swqe *wqe)
{
	memset(wqe, 0, offsetof(struct swqe, inline_data));
	wqe->state = WQE_POSTED;
	wqe->status = IBV_WC_SUCCESS;
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->flags = wr->send_flags;
	if (qp->init.sq_sig_all)
		wqe->flags |= IBV_SEND_SIGNALED;
}

/*
 * BIND_MW and LOCAL_INV carry no data. A bind names its window and MR
 * by key: the requester finds them again when it reaches the WQE, so
 * one freed meanwhile fails the bind (MW_BIND_ERR) and is not touched.
 */
static int fill_local(struct rocemu_qp *qp, const struct ibv_send_wr *wr,
		      struct swqe *wqe)
{
	const struct rocemu_mw *mw = (const void *)wr->bind_mw.mw;
	const struct rocemu_mr *mr = (const void *)wr->bind_mw.bind_info.mr;
	const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;

	if (wr->opcode == IBV_WR_BIND_MW &&
	    (!mw || mw->pd->dev != qp->dev || (b->length && !mr)))
		return post_refused(qp, -EINVAL, wr, 0,
				    "IBTA 10.6.7.2",
				    "the bind names no window of this device, "
				    "or no MR");
	clear_swqe(qp, wr, wqe);
	if (wr->opcode == IBV_WR_LOCAL_INV) {
		wqe->imm = wr->invalidate_rkey;
		return 0;
	}
	wqe->bind.mw_index = mw->index;
	wqe->bind.mr_key = mr ? mr->key : 0;
	wqe->bind.new_rkey = wr->bind_mw.rkey;
	wqe->bind.access = (int)b->mw_access_flags;
	wqe->bind.addr = b->addr;
	wqe->bind.len = b->length;
	return 0;
}

/*
 * FLUSH (IBTA 1.5, device.h's ROCEMU_WR_FLUSH): no data of its own; the
 * range, key, placement type and selectivity level go into the WQE as
 * the FETH and RETH will carry them (length in compare_add, the FETH
 * word in swap). A length above 2^31, a type with a reserved bit, or a
 * level other than range or MR, is refused as rxe's provider does.
 */
static int fill_flush(struct rocemu_qp *qp, const struct ibv_send_wr *wr,
		      struct swqe *wqe)
{
	uint64_t feth = wr->wr.atomic.swap;

	if (wr->num_sge || wr->wr.atomic.compare_add > MAX_MR_SIZE ||
	    (feth & ~0x3full) || (feth & 0xc) ||
	    ((feth >> 4) & 3) > ROCEMU_FLUSH_MR)
		return post_refused(qp, -EINVAL, wr, 0, "IBTA 1.5 FLUSH",
				    "a FLUSH takes no SGE, a length up to "
				    "2^31, placement type bits 0-1 and "
				    "level range (0) or MR (1)");
	clear_swqe(qp, wr, wqe);
	wqe->remote_addr = wr->wr.atomic.remote_addr;
	wqe->rkey = wr->wr.atomic.rkey;
	wqe->compare_add = wr->wr.atomic.compare_add;
	wqe->swap = feth;
	wqe->length = 0;
	wqe->num_sge = 0;
	return 0;
}

static int fill_swqe(struct rocemu_qp *qp, const struct ibv_send_wr *wr,
		     struct swqe *wqe)
{
	uint64_t len = 0;
	bool atomic = wr_is(wr->opcode, WR_ATOMIC);
	/* ATOMIC WRITE's 8 bytes are always copied now, as inline data
	 * (rxe's provider copies them into the WQE too): the value is the
	 * one at post time, whatever max_inline_data is. */
	bool awrite = wr_is(wr->opcode, WR_ATOMIC_WRITE);

	/* An opcode the QP's transport lacks, or one without a row in the
	 * table, is refused (IBTA 9.8.3, 9.8.4). */
	if (!wr_opcode_allowed(wr->opcode, qp->init.qp_type))
		return post_refused(qp, -EINVAL, wr, 0,
				    "IBTA 9.8.3, 9.8.4",
				    "the opcode is not one this QP's "
				    "transport has");
	if (wr->num_sge < 0 ||
	    (unsigned)wr->num_sge > qp->init.cap.max_send_sge)
		return post_refused(qp, -EINVAL, wr, 0,
				    "ibv_post_send(3)",
				    "num_sge is above the QP's max_send_sge");
	if (qp_is(qp, IBV_QPT_UD) && !wr->wr.ud.ah)
		return post_refused(qp, -EINVAL, wr, 0,
				    "ibv_post_send(3)",
				    "a UD send needs wr.ud.ah");
	if (wr_is(wr->opcode, WR_LOCAL))
		return fill_local(qp, wr, wqe);
	if (wr_is(wr->opcode, WR_FLUSH))
		return fill_flush(qp, wr, wqe);
	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	/* A READ or atomic sends no payload: nothing to take inline. */
	bool inl = (wr->send_flags & IBV_SEND_INLINE) &&
		   !wr_is(wr->opcode, WR_RD_ATOMIC);
	if (len > MAX_MR_SIZE ||
	    (inl && !awrite && len > qp->init.cap.max_inline_data))
		return post_refused(qp, -EINVAL, wr, 0,
				    "ibv_post_send(3)",
				    len > MAX_MR_SIZE
					    ? "the SGEs add up to more than 2^31"
					    : "IBV_SEND_INLINE with more bytes "
					      "than the QP's max_inline_data");
	/* An atomic's operand is one 8-byte, 8-byte aligned value; so is an
	 * ATOMIC WRITE's (IBTA 1.5, as rxe checks). wr.rdma and wr.atomic
	 * both begin with remote_addr. */
	if ((atomic || awrite) && (wr->num_sge != 1 || len != 8 ||
				   (wr->wr.rdma.remote_addr & 7)))
		return post_refused(qp, -EINVAL, wr, 0,
				    "IBTA 9.4.5",
				    "an atomic takes one SGE of 8 bytes and "
				    "an 8-byte aligned remote_addr");
	inl = inl || awrite;
	/* The slot held an older WQE: clear all but the inline buffer. */
	clear_swqe(qp, wr, wqe);
	wqe->imm = wr_is(wr->opcode, WR_INV) ? wr->invalidate_rkey
					     : be32toh(wr->imm_data);
	if (qp_is(qp, IBV_QPT_UD)) {
		wqe->av = ((struct rocemu_ah *)(void *)wr->wr.ud.ah)->attr;
		wqe->remote_qpn = wr->wr.ud.remote_qpn & ROCE_PSN_MASK;
		wqe->remote_qkey = wr->wr.ud.remote_qkey;
	} else if (atomic) {
		wqe->remote_addr = wr->wr.atomic.remote_addr;
		wqe->rkey = wr->wr.atomic.rkey;
		wqe->compare_add = wr->wr.atomic.compare_add;
		wqe->swap = wr->wr.atomic.swap;
	} else {
		wqe->remote_addr = wr->wr.rdma.remote_addr;
		wqe->rkey = wr->wr.rdma.rkey;
	}
	wqe->length = (uint32_t)len;
	wqe->is_inline = inl;
	if (inl) {
		/* Inline data is copied now: the buffer may be reused. */
		uint32_t off = 0;
		for (int i = 0; i < wr->num_sge; i++) {
			/* an empty SGE may have no address (UCX posts them) */
			if (wr->sg_list[i].length)
				memcpy(wqe->inline_data + off,
				       (void *)(uintptr_t)wr->sg_list[i].addr,
				       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
	} else {
		/* a WR without SGEs may come with sg_list NULL */
		wqe->num_sge = (uint32_t)wr->num_sge;
		if (wqe->num_sge)
			memcpy(wqe->sg, wr->sg_list,
			       sizeof(*wqe->sg) * wqe->num_sge);
	}
	return 0;
}

/* The WQE about to be published at the SQ's tail, as a trace line and as
 * an event. */
static void trace_wqe(struct rocemu_qp *qp, const struct swqe *wqe)
{
	struct core *c = qp->dev->core;
	uint32_t slot = ring_tail(&qp->sq) & qp->sq.mask;

	core_trace(c, "%s WQE [%u] %s wr_id %llu len %u", qp->dev->name, slot,
		   wr_opcode_name(wqe->opcode),
		   (unsigned long long)wqe->wr_id, wqe->length);
	if (!core_eventing(c))
		return;
	struct rocemu_event ev = { .kind = ROCEMU_EV_WQE, .qpn = qp->qpn,
				   .slot = slot, .wr_id = wqe->wr_id,
				   .len = wqe->length };
	snprintf(ev.op, sizeof(ev.op), "%s", wr_opcode_name(wqe->opcode));
	dev_event(qp->dev, &ev);
}

int rocemu_post_send(struct rocemu_qp *qp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad)
{
	CORE_GUARD(qp->dev->core);
	int rc = 0;

	if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT ||
	    qp->state == IBV_QPS_RTR)
		rc = post_state_refused(qp, true);
	for (; wr && !rc; wr = wr->next) {
		struct swqe *wqe = ring_prod_slot(&qp->sq);
		if (!wqe) {
			rc = post_refused(qp, -ENOMEM, wr, 0,
					  "ibv_post_send(3)",
					  "the SQ is full (ENOMEM)");
			break;
		}
		if ((rc = fill_swqe(qp, wr, wqe)))
			break;
		trace_wqe(qp, wqe);
		ring_produce(&qp->sq);
	}
	if (rc && bad)
		*bad = wr;
	if (qp->state == IBV_QPS_ERR)
		why_flush(qp, flush_sq(qp), 0);
	else
		qp_make_ready(qp);
	return rc;
}

int rocemu_post_send_all(struct rocemu_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad)
{
	CORE_GUARD(qp->dev->core);
	uint32_t n = 0, tail = ring_tail(&qp->sq);
	struct ibv_send_wr *w;
	int rc = 0;

	for (w = wr; w; w = w->next)
		n++;
	if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT ||
	    qp->state == IBV_QPS_RTR)
		rc = post_state_refused(qp, true);
	else if (n > ring_size(&qp->sq) - ring_used(&qp->sq))
		rc = -ENOMEM;
	/* Filled beyond the tail, where the engines do not look, and
	 * published only once every one was taken. */
	for (w = wr; w && !rc; w = w->next, tail++)
		rc = fill_swqe(qp, w, ring_slot(&qp->sq, tail));
	if (rc) {
		if (bad)
			*bad = w ? w : wr;
		return rc;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct swqe *wqe = ring_prod_slot(&qp->sq);
		trace_wqe(qp, wqe);
		ring_produce(&qp->sq);
	}
	if (qp->state == IBV_QPS_ERR)
		why_flush(qp, flush_sq(qp), 0);
	else
		qp_make_ready(qp);
	return 0;
}

int rwqe_post(struct ring *rq, uint32_t max_sge, const struct ibv_recv_wr *wr)
{
	struct rwqe *wqe = ring_prod_slot(rq);
	uint64_t len = 0;

	if (!wqe)
		return -ENOMEM;
	if (wr->num_sge < 0 || (unsigned)wr->num_sge > max_sge)
		return -EINVAL;
	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = (uint32_t)wr->num_sge;
	wqe->length = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	memcpy(wqe->sg, wr->sg_list, sizeof(*wqe->sg) * wqe->num_sge);
	ring_produce(rq);
	return 0;
}

/* The receive WQE just published in the RQ's slot, as an event. */
static void trace_recv_wqe(struct rocemu_qp *qp, uint32_t slot)
{
	struct core *c = qp->dev->core;

	if (!core_eventing(c))
		return;
	const struct rwqe *wqe = ring_slot(&qp->rq, slot);
	struct rocemu_event ev = { .kind = ROCEMU_EV_RECV_WQE, .qpn = qp->qpn,
				   .slot = slot, .wr_id = wqe->wr_id,
				   .len = wqe->length };
	snprintf(ev.op, sizeof(ev.op), "RECV");
	dev_event(qp->dev, &ev);
}

int rocemu_post_recv(struct rocemu_qp *qp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad)
{
	CORE_GUARD(qp->dev->core);
	/* A QP with an SRQ takes its receives from there (ibv_post_recv(3)). */
	int rc = qp->state == IBV_QPS_RESET ? post_state_refused(qp, false)
		 : qp->srq ? post_refused(qp, -EINVAL, NULL,
					  wr ? wr->wr_id : 0,
					  "ibv_post_recv(3)",
					  "the QP takes its receives from its "
					  "SRQ (ibv_post_srq_recv)")
			   : 0;

	for (; wr && !rc; wr = wr->next) {
		uint32_t slot = ring_tail(&qp->rq) & qp->rq.mask;
		rc = rwqe_post(&qp->rq, qp->init.cap.max_recv_sge, wr);
		if (!rc)
			trace_recv_wqe(qp, slot);
	}
	if (rc && bad)
		*bad = wr;
	if (qp->state == IBV_QPS_ERR)
		why_flush(qp, 0, flush_rq(qp));
	return rc;
}

void rocemu_qp_describe(const struct rocemu_qp *qp, char *buf, size_t len)
{
	CORE_GUARD(qp->dev->core);
	struct ring *sq = (struct ring *)&qp->sq;

	snprintf(buf, len,
		 "qp 0x%06x state %d sq head %u tail %u next %u | req psn "
		 "0x%06x max 0x%06x rd_atomic %u rnr_wait %d | comp psn "
		 "0x%06x retries left %u rnr %u timer %d | resp psn 0x%06x "
		 "msn %u nak_sent %d in_msg %d",
		 qp->qpn, qp->state, ring_head(sq), ring_tail(sq), qp->req.idx,
		 qp->req.psn, qp->req.max_psn, qp->req.rd_atomic,
		 qp->req.rnr_wait, qp->comp.psn, qp->comp.retry_left,
		 qp->comp.rnr_left, timer_armed(qp, TIMER_RETRY), qp->resp.psn,
		 qp->resp.msn, qp->resp.nak_sent, qp->resp.in_msg);
}
