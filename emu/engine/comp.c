/* SPDX-License-Identifier: MIT */
/* RC completer: ACKs, NAKs, READ responses and atomic ACKs into completions; retries. */
#include <string.h>

#include "engine.h"

/* A SEND or WRITE: an ACK completes it; a READ or atomic waits for its
 * response, and holds an rd_atomic credit until then. */
static bool is_send_write(const struct swqe *wqe)
{
	return !wr_is(wqe->opcode, WR_RD_ATOMIC);
}

/* Something sent is not yet acknowledged. */
static bool outstanding(struct rocemu_qp *qp)
{
	return roce_psn_diff(qp->req.max_psn, qp->comp.psn) != 0;
}

static void restart_timer(struct rocemu_qp *qp)
{
	timer_cancel(qp, TIMER_RETRY);
	if (outstanding(qp) && qp->attr.timeout)
		timer_arm(qp, TIMER_RETRY, 4096ull << qp->attr.timeout);
}

/*
 * ACKs for packets sent before a go-back may overtake the requester: the
 * slot it sends from was retired, or its PSN is below the oldest one not
 * yet acknowledged. It catches up before it sends again.
 */
static bool acks_passed_requester(struct rocemu_qp *qp)
{
	return (int32_t)(qp->req.idx - ring_head(&qp->sq)) < 0 ||
	       roce_psn_cmp(qp->req.psn, qp->comp.psn) < 0;
}

/* Retires what has finished; the requester's position follows on its
 * next run, which comes in this same step. */
static void retire(struct rocemu_qp *qp)
{
	qp_retire_done(qp);
	if (acks_passed_requester(qp)) {
		qp->req.need_follow = true;
		qp_make_ready(qp);
	}
}

/*
 * Go back N (IBTA 9.7.5.2.8): the requester sends again from comp.psn,
 * the oldest PSN not acknowledged. As in rxe the completer only asks for
 * it (need_retry) and schedules the requester, which goes back first
 * thing on its next run, in this same step. The retransmission counts
 * now; what came back since is measured from here (went_back).
 */
static void retry(struct rocemu_qp *qp)
{
	uint32_t idx;

	if (!qp_oldest_unfinished(qp, &idx))
		return; /* nothing started is left to send again */
	dev_count(qp->dev, ROCEMU_CNT_RETRANSMITS);
	qp->comp.went_back = true;
	qp->comp.back_psn = qp->comp.back_seen = qp->comp.psn;
	qp->req.need_retry = true;
	qp_make_ready(qp);
}

/* The not-yet-done WQE holding psn, scanning the sent ones in order. */
static struct swqe *wqe_at(struct rocemu_qp *qp, uint32_t psn)
{
	for (uint32_t i = ring_head(&qp->sq); i != ring_tail(&qp->sq); i++) {
		struct swqe *wqe = ring_slot(&qp->sq, i);
		if (wqe->state == WQE_POSTED)
			return NULL;
		if (wqe->state == WQE_DONE)
			continue;
		if (roce_psn_cmp(psn, wqe->first_psn) >= 0 &&
		    roce_psn_cmp(psn, wqe->last_psn) <= 0)
			return wqe;
		return NULL; /* only the oldest may be answered */
	}
	return NULL;
}

/*
 * A response beyond comp.psn shows that what came before it was lost: go
 * back now rather than at the timer (qib and hfi1 retry a READ so; rxe
 * waits for the timer). Once per loss, though: the rest of what was on
 * the wire shows the same loss. The retry timer is left running: only a
 * response that moves comp.psn restarts it, so a READ whose responses
 * keep being lost still ends in RETRY_EXC_ERR after retry_cnt timeouts.
 */
static void go_back_once(struct rocemu_qp *qp)
{
	if (qp->comp.went_back && qp->comp.back_psn == qp->comp.psn)
		return;
	retry(qp);
}

/*
 * A READ response at psn, beyond comp.psn. The rest of the burst that
 * was on the wire before the go-back comes with rising PSNs; a PSN at or
 * below the highest seen since means the response started again and
 * lost comp.psn once more: go back again, not at the timer.
 */
static void read_gap(struct rocemu_qp *qp, uint32_t psn)
{
	if (qp->comp.went_back && qp->comp.back_psn == qp->comp.psn &&
	    roce_psn_cmp(psn, qp->comp.back_seen) > 0) {
		qp->comp.back_seen = psn;
		return;
	}
	qp->comp.went_back = false; /* a loss not yet asked for again */
	go_back_once(qp);
	qp->comp.back_seen = psn;
}

static void finish(struct rocemu_qp *qp, struct swqe *wqe,
		   enum ibv_wc_status status)
{
	wqe->state = WQE_DONE;
	wqe->status = status;
	if (!is_send_write(wqe))
		qp->req.rd_atomic--;
}

/*
 * Every request up to and including psn is acknowledged (a coalesced ACK,
 * IBTA 9.7.5.1.2). SENDs and WRITEs it covers complete. A READ or atomic
 * it reaches without its response means that response was lost: go back
 * to it (an implied NAK, 9.7.5.2.8). Returns false if it went back.
 */
static bool ack_upto(struct rocemu_qp *qp, uint32_t psn)
{
	for (uint32_t i = ring_head(&qp->sq); i != ring_tail(&qp->sq); i++) {
		struct swqe *wqe = ring_slot(&qp->sq, i);
		if (wqe->state == WQE_POSTED)
			break;
		if (wqe->state == WQE_DONE)
			continue;
		if (roce_psn_cmp(psn, wqe->first_psn) < 0)
			break;
		if (!is_send_write(wqe)) {
			go_back_once(qp);
			return false;
		}
		if (roce_psn_cmp(psn, wqe->last_psn) < 0) {
			qp->comp.psn = roce_psn_add(psn, 1);
			return true; /* part of a message */
		}
		finish(qp, wqe, IBV_WC_SUCCESS);
		qp->comp.psn = roce_psn_add(wqe->last_psn, 1);
	}
	return true;
}

/* A valid response shows the path works: the retry counts start over. */
static void counters_reset(struct rocemu_qp *qp)
{
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
}

static void progress(struct rocemu_qp *qp)
{
	counters_reset(qp);
	retire(qp);
	restart_timer(qp);
	qp_make_ready(qp);
}

static enum ibv_wc_status nak_status(unsigned code)
{
	switch (code) {
	case ROCE_NAK_INV_REQ: return IBV_WC_REM_INV_REQ_ERR;
	case ROCE_NAK_REM_ACCESS: return IBV_WC_REM_ACCESS_ERR;
	case ROCE_NAK_INV_RD_REQ: return IBV_WC_REM_INV_RD_REQ_ERR;
	default: return IBV_WC_REM_OP_ERR; /* REM_OP and reserved codes */
	}
}

/* A NAK code in a reason's words, and where its meaning is written. */
static const char *nak_name(unsigned code)
{
	switch (code) {
	case ROCE_NAK_INV_REQ: return "invalid request";
	case ROCE_NAK_REM_ACCESS: return "remote access error";
	case ROCE_NAK_INV_RD_REQ: return "invalid RD request";
	default: return "remote operational error";
	}
}

static const char *nak_rule(unsigned code)
{
	return code == ROCE_NAK_REM_ACCESS ? "IBTA 9.7.5.1, 11.6.3.1"
					   : "IBTA 9.7.5.1";
}

/* Fails the WQE holding psn and moves the QP to ERROR. */
static void fail(struct rocemu_qp *qp, struct swqe *wqe,
		 enum ibv_wc_status status)
{
	if (wqe)
		finish(qp, wqe, status);
	retire(qp);
	qp->err_cause = "after a send WQE completed in error, the reason "
			"before";
	qp_error(qp, IBV_EVENT_QP_FATAL);
}

static void on_nak(struct rocemu_qp *qp, const struct roce_ib *ib)
{
	uint32_t psn = ib->bth.psn;
	unsigned type = roce_aeth_type(ib->aeth.syndrome);
	unsigned val = roce_aeth_value(ib->aeth.syndrome);

	if (roce_psn_cmp(psn, qp->comp.psn) < 0 ||
	    roce_psn_cmp(psn, qp->req.max_psn) >= 0) {
		dev_count(qp->dev, ROCEMU_CNT_RX_DROP_SEQ);
		return; /* stale: about something already settled */
	}
	/* A NAK acknowledges everything before its PSN (C9-116). */
	if (roce_psn_cmp(psn, qp->comp.psn) > 0 &&
	    !ack_upto(qp, roce_psn_add(psn, ROCE_PSN_MASK)))
		return;
	retire(qp);
	if (type == ROCE_AETH_RNR_NAK) {
		dev_count(qp->dev, ROCEMU_CNT_NAK_RCVD_RNR);
		/* rnr_retry 7 means retry for ever (IBTA 9.7.5.2.8). */
		if (qp->attr.rnr_retry != 7 && qp->comp.rnr_left-- == 0) {
			why_wqe_error(qp, wqe_at(qp, psn),
				      IBV_WC_RNR_RETRY_EXC_ERR,
				      "IBTA 9.7.6.1.4",
				      "RNR NAK for psn 0x%x after %u RNR "
				      "retries (rnr_retry %u): the peer posted "
				      "no receive in time", psn,
				      qp->attr.rnr_retry, qp->attr.rnr_retry);
			fail(qp, wqe_at(qp, psn), IBV_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		qp->req.rnr_wait = true;
		timer_cancel(qp, TIMER_RETRY);
		timer_arm(qp, TIMER_RNR, 1000ull * roce_rnr_timer_usec(val));
		return;
	}
	if (val == ROCE_NAK_PSN_SEQ) {
		dev_count(qp->dev, ROCEMU_CNT_NAK_RCVD_SEQ);
		qp->comp.retry_left = qp->attr.retry_cnt;
		retry(qp);
		restart_timer(qp);
		return;
	}
	dev_count(qp->dev, ROCEMU_CNT_NAK_RCVD_ERROR);
	struct swqe *wqe = wqe_at(qp, psn);
	if (wqe) {
		why_wqe_error(qp, wqe, nak_status(val), nak_rule(val),
			      "the responder NAKed psn 0x%x with %s", psn,
			      nak_name(val));
		fail(qp, wqe, nak_status(val));
	}
}

/*
 * FLUSH and ATOMIC WRITE are answered by a zero-length READ response
 * (IBTA 1.5; rxe since 6.2): it completes the WQE at its PSN. true when
 * the response was one (taken or dropped).
 */
static bool on_placement_response(struct rocemu_qp *qp, struct swqe *wqe,
				  const struct roce_ib *ib)
{
	if (!wqe || !wr_is(wqe->opcode, WR_FLUSH | WR_ATOMIC_WRITE))
		return false;
	if (ib->bth.opcode != ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY ||
	    ib->payload_len || ib->bth.psn != qp->comp.psn) {
		dev_count(qp->dev, ROCEMU_CNT_RX_DROP_SEQ);
		return true;
	}
	qp->comp.psn = roce_psn_add(ib->bth.psn, 1);
	finish(qp, wqe, IBV_WC_SUCCESS);
	progress(qp);
	return true;
}

static void on_read_response(struct rocemu_qp *qp, const struct roce_ib *ib)
{
	uint32_t psn = ib->bth.psn, mtu = qp_mtu(qp);
	struct swqe *wqe = wqe_at(qp, psn);

	if (on_placement_response(qp, wqe, ib))
		return;

	/* Only the next expected response is taken; others wait for the
	 * retry (an early one means something before it was lost). */
	if (!wqe || !wr_is(wqe->opcode, WR_READ) || psn != qp->comp.psn) {
		dev_count(qp->dev, ROCEMU_CNT_RX_DROP_SEQ);
		return;
	}
	uint64_t off = (uint64_t)roce_psn_diff(psn, wqe->first_psn) * mtu;
	unsigned fl = ib->op->flags;
	bool ends = fl & (ROCE_OPF_LAST | ROCE_OPF_ONLY);
	uint64_t want = wqe->length - off;
	if (want > mtu)
		want = mtu;
	if (ib->payload_len != want || ends != (off + want == wqe->length)) {
		dev_count(qp->dev, ROCEMU_CNT_RX_DROP_SEQ);
		return;
	}
	if (sge_copy_to(qp->pd, wqe->sg, wqe->num_sge, off, ib->payload,
			ib->payload_len, IBV_ACCESS_LOCAL_WRITE)) {
		fail(qp, wqe, IBV_WC_LOC_PROT_ERR);
		return;
	}
	qp->comp.psn = roce_psn_add(psn, 1);
	if (ends)
		finish(qp, wqe, IBV_WC_SUCCESS);
	progress(qp);
}

static void on_atomic_ack(struct rocemu_qp *qp, const struct roce_ib *ib)
{
	uint32_t psn = ib->bth.psn;
	struct swqe *wqe = wqe_at(qp, psn);

	if (!wqe || !wr_is(wqe->opcode, WR_ATOMIC) || psn != qp->comp.psn) {
		dev_count(qp->dev, ROCEMU_CNT_RX_DROP_SEQ);
		return;
	}
	/* The original value lands in host byte order, as verbs expects. */
	uint64_t orig = ib->atmack;
	if (sge_copy_to(qp->pd, wqe->sg, 1, 0, &orig, 8,
			IBV_ACCESS_LOCAL_WRITE)) {
		fail(qp, wqe, IBV_WC_LOC_PROT_ERR);
		return;
	}
	qp->comp.psn = roce_psn_add(psn, 1);
	finish(qp, wqe, IBV_WC_SUCCESS);
	progress(qp);
}

/*
 * A READ response or atomic ACK at a PSN beyond comp.psn acknowledges the
 * requests before it, but only if it starts its message; a later packet
 * of a READ means an earlier response was lost: it is dropped, and what
 * is missing asked for again.
 */
static bool catch_up(struct rocemu_qp *qp, const struct roce_ib *ib)
{
	uint32_t psn = ib->bth.psn;

	if (psn == qp->comp.psn)
		return true;
	if (!(ib->op->flags & (ROCE_OPF_FIRST | ROCE_OPF_ONLY))) {
		read_gap(qp, psn);
		return false;
	}
	bool ok = ack_upto(qp, roce_psn_add(psn, ROCE_PSN_MASK));
	retire(qp);
	return ok && psn == qp->comp.psn;
}

void comp_receive(struct rocemu_qp *qp, const struct roce_frame *f)
{
	const struct roce_ib *ib = &f->ib;
	uint32_t psn = ib->bth.psn;

	if (ib->exts & ROCE_EXT_AETH &&
	    roce_aeth_type(ib->aeth.syndrome) != ROCE_AETH_ACK) {
		on_nak(qp, ib);
		return;
	}
	/* Only PSNs between the oldest unacknowledged and the newest sent. */
	if (roce_psn_cmp(psn, qp->comp.psn) < 0 ||
	    roce_psn_cmp(psn, qp->req.max_psn) >= 0) {
		dev_count(qp->dev, ROCEMU_CNT_RX_DROP_SEQ);
		if (qp->comp.psn == qp->req.max_psn)
			dev_why(qp->dev, ROCEMU_WHY_DROP, qp->qpn, NULL, 0,
				"IBTA 9.7.6.1.1",
				"drop: %s psn 0x%x answers nothing outstanding "
				"(qp 0x%x has no request unanswered): ignored",
				ib->op->name, psn, qp->qpn);
		else
			dev_why(qp->dev, ROCEMU_WHY_DROP, qp->qpn, NULL, 0,
				"IBTA 9.7.6.1.1",
				"drop: %s psn 0x%x answers nothing outstanding "
				"(qp 0x%x waits for psn 0x%x to 0x%x): ignored",
				ib->op->name, psn, qp->qpn, qp->comp.psn,
				roce_psn_add(qp->req.max_psn, ROCE_PSN_MASK));
		return;
	}
	bool read = ib->op->flags & ROCE_OPF_READ;
	if (read || ib->bth.opcode == ROCE_OP_RC_ATOMIC_ACK) {
		if (!catch_up(qp, ib)) {
			dev_count(qp->dev, ROCEMU_CNT_RX_DROP_SEQ);
			return;
		}
		if (read)
			on_read_response(qp, ib);
		else
			on_atomic_ack(qp, ib);
		return;
	}
	if (ack_upto(qp, psn))
		progress(qp);
	else
		retire(qp);
}

void comp_timer(struct rocemu_qp *qp, enum timer_kind kind)
{
	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD)
		return;
	if (kind == TIMER_RNR) {
		qp->req.rnr_wait = false;
		retry(qp);
		restart_timer(qp);
		return;
	}
	if (!outstanding(qp))
		return;
	dev_count(qp->dev, ROCEMU_CNT_TIMEOUTS);
	/* IBTA 9.7.6.1.3: retry_cnt is a count; unlike rxe, 7 is not
	 * "for ever" (that holds only for rnr_retry). */
	if (qp->comp.retry_left-- == 0) {
		why_wqe_error(qp, wqe_at(qp, qp->comp.psn),
			      IBV_WC_RETRY_EXC_ERR, "IBTA 9.7.6.1.3",
			      "%u retries of psn 0x%x unanswered (retry_cnt "
			      "%u): no ACK for it came before the timer, timeout %u",
			      qp->attr.retry_cnt, qp->comp.psn,
			      qp->attr.retry_cnt, qp->attr.timeout);
		fail(qp, wqe_at(qp, qp->comp.psn), IBV_WC_RETRY_EXC_ERR);
		return;
	}
	retry(qp);
	restart_timer(qp);
}
