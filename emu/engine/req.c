/* SPDX-License-Identifier: MIT */
/* RC requester: send-queue WQEs into request packets, segmented by path MTU. */
#include <string.h>

#include "engine.h"

/* A READ or atomic: one of max_rd_atomic's credits, no payload sent. */
static bool is_rd_atomic(enum ibv_wr_opcode op)
{
	return wr_is(op, WR_RD_ATOMIC);
}

/* Packets a message of len bytes takes: a zero-length one still takes 1. */
static uint32_t npkts(uint32_t len, uint32_t mtu)
{
	return len ? (len + mtu - 1) / mtu : 1;
}

int req_opcode(const struct rocemu_qp *qp, const struct swqe *wqe,
	       bool first, bool last)
{
	/* Posting took only opcodes with a row (fill_swqe). */
	const struct wr_opcode_info *w = wr_opcode(wqe->opcode);
	uint8_t rc = first ? (last ? w->only : w->first)
			   : (last ? w->last : w->middle);

	/* The rows hold RC's opcodes: an RC QP (most packets) sends them as
	 * they are. */
	if (qp_is(qp, IBV_QPT_RC))
		return rc;
	return roce_opcode_for(qp_is(qp, IBV_QPT_UD) ? ROCE_TR_UD : ROCE_TR_UC,
			       rc);
}

/* May the WQE start now (fence, max_rd_atomic, SQ drain)? */
static bool can_start(const struct rocemu_qp *qp, const struct swqe *wqe)
{
	if (qp->state == IBV_QPS_SQD)
		return false;
	/* IBTA 10.8.3.3: a fenced WQE waits for earlier READs and atomics. */
	if ((wqe->flags & IBV_SEND_FENCE) && qp->req.rd_atomic)
		return false;
	if (is_rd_atomic(wqe->opcode)) {
		unsigned max = qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1;
		if (qp->req.rd_atomic >= max)
			return false;
	}
	return true;
}

static void start(struct rocemu_qp *qp, struct swqe *wqe)
{
	wqe->state = WQE_SENDING;
	wqe->first_psn = qp->req.psn;
	wqe->last_psn = roce_psn_add(wqe->first_psn,
				     npkts(wqe->length, qp_mtu(qp)) - 1);
	if (wr_is(wqe->opcode, WR_ATOMIC))
		wqe->last_psn = wqe->first_psn;
	wqe->sent = 0;
	if (is_rd_atomic(wqe->opcode))
		qp->req.rd_atomic++;
}

void fail_local(struct rocemu_qp *qp, struct swqe *wqe,
		enum ibv_wc_status status)
{
	wqe->status = status;
	qp_error(qp, IBV_EVENT_QP_FATAL);
}

/*
 * BIND_MW and LOCAL_INV (IBTA 10.6.7): done when the requester reaches
 * them, after the WQEs before them have started; nothing is sent, and
 * the WQE completes once those before it have. A failed one completes
 * with MW_BIND_ERR or LOC_QP_OP_ERR and the QP goes to ERROR, as on
 * rxe. false after such an error.
 */
static bool do_local(struct rocemu_qp *qp, struct swqe *wqe)
{
	bool bind = wqe->opcode == IBV_WR_BIND_MW;
	int rc = bind ? mw_bind(qp, wqe)
		      : mw_invalidate(qp, wqe->imm, false, false);

	if (rc) {
		why_wqe_error(qp, wqe, bind ? IBV_WC_MW_BIND_ERR
					    : IBV_WC_LOC_QP_OP_ERR,
			      "IBTA 10.6.7.2",
			      bind ? "the bind breaks a memory window rule "
				     "(window, MR, PD, rights or range)"
				   : "LOCAL_INV names no type 2 window bound "
				     "in this PD");
		fail_local(qp, wqe, bind ? IBV_WC_MW_BIND_ERR
					 : IBV_WC_LOC_QP_OP_ERR);
		return false;
	}
	/* it takes no PSN: its range ends just before it begins */
	wqe->first_psn = qp->req.psn;
	wqe->last_psn = roce_psn_add(qp->req.psn, ROCE_PSN_MASK);
	wqe->state = WQE_DONE;
	qp->req.idx++;
	qp_retire_done(qp);
	return true;
}

/* Sends the READ request for what is still missing of wqe. */
static void send_read(struct rocemu_qp *qp, struct swqe *wqe)
{
	struct roce_ib ib = { 0 };

	ib.bth.opcode = ROCE_OP_RC_RDMA_READ_REQUEST;
	ib.bth.psn = qp->req.psn;
	ib.bth.ackreq = true;
	ib.reth.va = wqe->remote_addr + wqe->sent;
	ib.reth.rkey = wqe->rkey;
	ib.reth.len = wqe->length - wqe->sent;
	qp_send_packet(qp, &ib);
	qp->req.psn = roce_psn_add(qp->req.psn, npkts(ib.reth.len, qp_mtu(qp)));
	wqe->sent = wqe->length;
}

static void send_atomic(struct rocemu_qp *qp, struct swqe *wqe)
{
	struct roce_ib ib = { 0 };

	ib.bth.opcode = wr_opcode(wqe->opcode)->only;
	ib.bth.psn = qp->req.psn;
	ib.bth.ackreq = true;
	ib.atmeth.va = wqe->remote_addr;
	ib.atmeth.rkey = wqe->rkey;
	ib.atmeth.swap_add = wqe->opcode == IBV_WR_ATOMIC_CMP_AND_SWP
				     ? wqe->swap : wqe->compare_add;
	ib.atmeth.compare = wqe->opcode == IBV_WR_ATOMIC_CMP_AND_SWP
				    ? wqe->compare_add : 0;
	qp_send_packet(qp, &ib);
	qp->req.psn = roce_psn_add(qp->req.psn, 1);
	wqe->sent = 8;
}

/* A FLUSH (IBTA 1.5): one packet, its FETH and RETH, no payload; like
 * rxe, AckReq set and SE clear. */
static void send_flush(struct rocemu_qp *qp, struct swqe *wqe)
{
	struct roce_ib ib = { 0 };

	ib.bth.opcode = ROCE_OP_RC_FLUSH;
	ib.bth.psn = qp->req.psn;
	ib.bth.ackreq = true;
	ib.feth = (uint32_t)wqe->swap;
	ib.reth.va = wqe->remote_addr;
	ib.reth.rkey = wqe->rkey;
	ib.reth.len = (uint32_t)wqe->compare_add;
	qp_send_packet(qp, &ib);
	qp->req.psn = roce_psn_add(qp->req.psn, 1);
}

const uint8_t *req_payload(struct rocemu_qp *qp, struct swqe *wqe,
			   uint32_t off, uint32_t n, uint8_t *bounce)
{
	const uint8_t *data = bounce;
	int rc = 0;

	/* Taken straight from the registered memory when one SGE holds the
	 * whole segment; gathered into the bounce buffer otherwise. */
	if (wqe->is_inline)
		return wqe->inline_data + off;
	if (n && (rc = sge_map(qp->pd, wqe->sg, wqe->num_sge, off, n,
			       &data)) == -EAGAIN)
		rc = sge_copy_from(qp->pd, wqe->sg, wqe->num_sge, off, bounce, n);
	if (rc) {
		why_wqe_error(qp, wqe, IBV_WC_LOC_PROT_ERR, "IBTA 10.6 (memory protection)",
			      "an SGE's lkey is no MR of the QP's PD, or its "
			      "range lies outside that MR");
		fail_local(qp, wqe, IBV_WC_LOC_PROT_ERR);
		return NULL;
	}
	return data;
}

/* Sends the next SEND or WRITE packet of wqe; false after a local error. */
static bool send_segment(struct rocemu_qp *qp, struct swqe *wqe)
{
	uint32_t mtu = qp_mtu(qp), n = wqe->length - wqe->sent;
	struct roce_ib ib = { 0 };

	if (n > mtu)
		n = mtu;
	bool first = wqe->sent == 0, last = wqe->sent + n == wqe->length;
	int opcode = req_opcode(qp, wqe, first, last);
	if (opcode < 0) {
		fail_local(qp, wqe, IBV_WC_LOC_QP_OP_ERR);
		return false;
	}
	const uint8_t *data = req_payload(qp, wqe, wqe->sent, n,
					  qp->dev->core->bounce);
	if (!data)
		return false;
	ib.bth.opcode = (uint8_t)opcode;
	ib.bth.psn = qp->req.psn;
	/* AckReq on every last packet, and inside long messages every
	 * ACKREQ_EVERY packets so the window keeps moving (as rxe). UC has
	 * no acknowledgements (rxe since 6.11 agrees). */
	ib.bth.ackreq = qp_is(qp, IBV_QPT_RC) &&
			(last || ++qp->req.noack > ACKREQ_EVERY);
	if (ib.bth.ackreq)
		qp->req.noack = 0;
	ib.bth.se = last && (wqe->flags & IBV_SEND_SOLICITED);
	ib.reth.va = wqe->remote_addr;
	ib.reth.rkey = wqe->rkey;
	ib.reth.len = wqe->length;
	ib.imm = wqe->imm;
	ib.ieth = wqe->imm;
	ib.payload = data;
	ib.payload_len = n;
	qp_send_packet(qp, &ib);
	qp->req.psn = roce_psn_add(qp->req.psn, 1);
	wqe->sent += n;
	return true;
}

static bool window_full(const struct rocemu_qp *qp)
{
	return roce_psn_cmp(qp->req.psn, qp->comp.psn) > 0 &&
	       roce_psn_diff(qp->req.psn, qp->comp.psn) >= WINDOW_PKTS;
}

/* Sends the next packet of wqe; false after a local error. */
static bool send_next(struct rocemu_qp *qp, struct swqe *wqe)
{
	if (qp_is(qp, IBV_QPT_UD))
		ud_send(qp, wqe);
	else if (wr_is(wqe->opcode, WR_READ))
		send_read(qp, wqe);
	else if (wr_is(wqe->opcode, WR_ATOMIC))
		send_atomic(qp, wqe);
	else if (wr_is(wqe->opcode, WR_FLUSH))
		send_flush(qp, wqe);
	else if (!send_segment(qp, wqe))
		return false;
	if (roce_psn_cmp(qp->req.psn, qp->req.max_psn) > 0)
		qp->req.max_psn = qp->req.psn;
	return true;
}

/*
 * Go back N (IBTA 9.7.5.2.8), as the completer asked (comp.c: retry):
 * send again from comp.psn, the oldest PSN not acknowledged. The WQE
 * holding it resumes mid-message (a READ asks for what is still
 * missing); the started WQEs after it are sent again whole. A WQE's PSNs
 * are fixed when it first starts, so a late ACK for a packet sent before
 * the retry still completes the right WQE.
 */
static void go_back(struct rocemu_qp *qp)
{
	uint32_t idx, tail = ring_tail(&qp->sq);
	struct swqe *wqe = qp_oldest_unfinished(qp, &idx);

	if (!wqe)
		return; /* acknowledged since it was asked for */
	qp->req.idx = idx;
	for (uint32_t i = idx + 1; i != tail; i++) {
		struct swqe *later = ring_slot(&qp->sq, i);
		if (later->state == WQE_POSTED)
			break; /* nothing after it has started either */
		if (later->state == WQE_DONE)
			continue;
		later->state = WQE_SENDING;
		later->sent = 0;
	}
	wqe->state = WQE_SENDING;
	wqe->sent = 0;
	if (!wr_is(wqe->opcode, WR_ATOMIC)) {
		uint64_t off = (uint64_t)roce_psn_diff(qp->comp.psn,
						       wqe->first_psn) *
			       qp_mtu(qp);
		wqe->sent = off < wqe->length ? (uint32_t)off : 0;
	}
	qp->req.psn = qp->comp.psn;
	qp->req.noack = 0;
}

/*
 * ACKs for packets sent before a go-back may overtake the send position:
 * retire the WQE it stands on, or acknowledge part of it. The position,
 * slot, offset and PSN together, then moves to the oldest PSN still owed,
 * so nothing acknowledged is sent again and no PSN is skipped.
 */
static void follow_acks(struct rocemu_qp *qp)
{
	uint32_t head = ring_head(&qp->sq), idx;

	if ((int32_t)(qp->req.idx - head) >= 0 &&
	    roce_psn_cmp(qp->req.psn, qp->comp.psn) >= 0)
		return;
	struct swqe *wqe = qp_oldest_unfinished(qp, &idx);
	qp->req.idx = idx;
	if (!wqe) {
		qp->req.psn = qp->req.max_psn;
		return;
	}
	uint32_t at = roce_psn_cmp(qp->comp.psn, wqe->first_psn) > 0
			      ? qp->comp.psn : wqe->first_psn;
	uint64_t off = (uint64_t)roce_psn_diff(at, wqe->first_psn) * qp_mtu(qp);
	wqe->state = WQE_SENDING;
	wqe->sent = wr_is(wqe->opcode, WR_ATOMIC)
			    ? 0 : (uint32_t)(off < wqe->length ? off : wqe->length);
	qp->req.psn = at;
}

/*
 * What the completer asked for since the last run, before anything is
 * sent: go back, then catch up with ACKs that passed the send position
 * (after a go-back there is nothing to catch up with). The head may then
 * have reached the new position: SQ_DRAINED may be due.
 */
static void take_requests(struct rocemu_qp *qp)
{
	if (qp->req.need_retry) {
		qp->req.need_retry = false;
		go_back(qp);
	}
	if (qp->req.need_follow) {
		qp->req.need_follow = false;
		follow_acks(qp);
		qp_retire_done(qp);
	}
}

unsigned req_run(struct rocemu_qp *qp)
{
	unsigned sent = 0;

	take_requests(qp);
	while (!qp->req.rnr_wait && (qp->state == IBV_QPS_RTS ||
				     qp->state == IBV_QPS_SQD)) {
		if (qp->req.idx == ring_tail(&qp->sq) || window_full(qp))
			break;
		if (wire_busy(qp->dev->port)) {
			/* the socket takes no more for now: go on once it
			 * has sent what waits */
			qp_make_ready(qp);
			break;
		}
		struct swqe *wqe = ring_slot(&qp->sq, qp->req.idx);
		if (wqe->state == WQE_DONE || wqe->state == WQE_SENT) {
			/* acknowledged while being sent again: skip it */
			uint32_t next = roce_psn_add(wqe->last_psn, 1);
			if (roce_psn_cmp(qp->req.psn, next) < 0)
				qp->req.psn = next;
			qp->req.idx++;
			continue;
		}
		if (wqe->state == WQE_POSTED) {
			if (!can_start(qp, wqe))
				break;
			if (wr_is(wqe->opcode, WR_LOCAL)) {
				if (!do_local(qp, wqe))
					return sent;
				continue;
			}
			start(qp, wqe);
		}
		if (!send_next(qp, wqe))
			return sent;
		sent++;
		if (wqe->sent == wqe->length || is_rd_atomic(wqe->opcode)) {
			/* Without acknowledgements a WQE is done once sent. */
			wqe->state = qp_is(qp, IBV_QPT_RC) ? WQE_SENT : WQE_DONE;
			qp->req.idx++;
		}
		if (!qp_is(qp, IBV_QPT_RC))
			qp->comp.psn = qp->req.psn;
	}
	if (!qp_is(qp, IBV_QPT_RC))
		qp_retire_done(qp);
	else if (sent && !timer_armed(qp, TIMER_RETRY) && qp->attr.timeout)
		timer_arm(qp, TIMER_RETRY, 4096ull << qp->attr.timeout);
	return sent;
}
