/* SPDX-License-Identifier: MIT */
/* ACK and NAK rules: syndromes that fit the request they answer, the MSN counting messages, AckReq on requests. */
#include "rocemu/aeth.h"

#include "check_local.h"

/* The kind of message psn belongs to, from the ring or the message in
 * progress; CHK_OTHER + 1 when unknown, or for a SEND with Invalidate,
 * which consumes a receive and names an R_Key too, so that any NAK fits
 * it. *recv: it consumes a receive. */
static unsigned kind_at(struct chk_dir *d, uint32_t psn, bool *recv)
{
	struct chk_msg *m = chk_msg_find(d, psn);

	if (m && m->inval)
		return CHK_OTHER + 1;	/* its R_Key may be refused */
	if (m) {
		*recv = m->needs_recv;
		return m->kind;
	}
	if (d->pos == POS_IN && d->msg_counted &&
	    roce_psn_cmp(psn, d->msg_first_psn) >= 0 &&
	    roce_psn_cmp(psn, d->high_psn) < 0) {
		*recv = d->msg_kind == CHK_SEND;
		return d->msg_kind;
	}
	return CHK_OTHER + 1;
}

static void nak_fits(struct roce_check *c, const struct chk_pkt *p,
		     unsigned type, unsigned code)
{
	struct chk_dir *d = p->req;
	bool recv = false;
	unsigned kind = kind_at(d, p->psn, &recv);

	if (type == ROCE_AETH_RNR_NAK) {
		if (kind <= CHK_OTHER && !recv)
			chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
				   "RNR-NAK-FITS", "RNR NAK for PSN 0x%06x, which "
				   "is no SEND or WRITE with immediate: only a "
				   "request that consumes a receive WQE can be "
				   "refused for want of one (9.7.5.2.8)", p->psn);
		return;
	}
	if (code > ROCE_NAK_INV_RD_REQ) {
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "AETH-RESERVED", "NAK code %u is reserved (9.7.5.2, the "
			   "AETH syndrome table)", code);
		return;
	}
	if (code == ROCE_NAK_REM_ACCESS && kind == CHK_SEND)
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "ACCESS-NAK-FITS", "remote access error NAK for PSN 0x%06x, "
			   "a SEND: that NAK answers an RDMA READ, WRITE or "
			   "atomic whose R_Key or range is refused (9.7.5.2)",
			   p->psn);
	if (code == ROCE_NAK_PSN_SEQ && d->started &&
	    roce_psn_cmp(p->psn, d->high_psn) >= 0)
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "SEQNAK-SENT", "PSN sequence error NAK names PSN 0x%06x, "
			   "but the newest request was 0x%06x: the NAK carries "
			   "the PSN the responder expected, before the one it "
			   "received out of order (9.7.5.1.1)", p->psn,
			   roce_psn_add(d->high_psn, ROCE_PSN_MASK));
}

/* Messages the requester ended up to the one psn answers; -1 unknown. */
static int64_t msgs_upto(struct chk_dir *d, const struct chk_pkt *p,
			 uint32_t covered)
{
	struct chk_msg *m = (p->flags & (ROCE_OPF_READ | ROCE_OPF_ATOMIC))
				    ? chk_msg_find(d, p->psn)
				    : chk_msg_ended_by(d, covered);
	if (m)
		return (int64_t)m->seq + 1;
	return d->msgs_done <= d->cap && !(p->flags & ROCE_OPF_READ) ? 0 : -1;
}

/*
 * The MSN counts the messages the responder completed (C9-148: a READ
 * when it executes). So, with off the difference between its count and
 * ours, an answer's MSN is at least off plus the messages it covers and
 * at most off plus the messages the requester had ended by then. Every
 * answer narrows the range off can lie in; an empty range is the error.
 * Coalesced ACKs, and ACKs whose MSN already counts a later atomic or
 * READ the responder executed, all fit.
 */
static void msn_fits(struct roce_check *c, const struct chk_pkt *p,
		     uint32_t covered)
{
	struct chk_dir *d = p->req;
	int64_t n = msgs_upto(d, p, covered);
	uint32_t raw = p->ib->aeth.msn;

	if (n < 0 || d->had_loss || d->ngaps || !d->started ||
	    d->beyond_no || roce_psn_cmp(covered, d->first_psn) < 0 ||
	    roce_psn_cmp(covered, d->high_psn) >= 0)
		return;	/* a request the capture may have lost counts */
	if (!d->msn_known) {
		d->msn_known = true;
		d->msn = 0;
		d->off_lo = INT64_MIN;
		d->off_hi = INT64_MAX;
	} else {
		d->msn += roce_psn_cmp(raw, d->msn_raw) >> 8;
	}
	d->msn_raw = raw;
	int64_t lo = d->msn - (int64_t)d->msgs_done, hi = d->msn - n;
	if (hi < d->off_lo)
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "MSN-COUNTS", "MSN 0x%06x is %lld short of the messages "
			   "this answer covers (PSNs to 0x%06x): the MSN counts "
			   "the messages the responder completed (9.7.5.2, "
			   "C9-148)", raw, (long long)(d->off_lo - hi), covered);
	else if (lo > d->off_hi)
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "MSN-COUNTS", "MSN 0x%06x counts %lld messages more than "
			   "the requester has sent: the MSN counts the messages "
			   "the responder completed (9.7.5.2, C9-148)", raw,
			   (long long)(lo - d->off_hi));
	else {
		d->off_lo = lo > d->off_lo ? lo : d->off_lo;
		d->off_hi = hi < d->off_hi ? hi : d->off_hi;
		return;
	}
	d->off_lo = lo;	/* start afresh from this answer */
	d->off_hi = hi;
}

/*
 * The MSN of an ACKNOWLEDGE never goes back: it counts the messages the
 * responder completed (9.7.5.2, C9-148), and an ACK or NAK carries the
 * count as it is when sent. Atomic ACKs and READ responses are left out:
 * a duplicate is answered from the saved result, with its MSN then.
 */
static void msn_order(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;
	uint32_t raw = p->ib->aeth.msn;

	if (!(p->flags & ROCE_OPF_ACK) || (p->flags & ROCE_OPF_ATOMIC))
		return;
	if (d->ack_msn_set && roce_psn_cmp(raw, d->ack_msn) < 0)
		chk_report_also(c, p->no, d->ack_msn_no, p->flow, p->dir,
			   ROCE_CHECK_ERROR, "MSN-FORWARD", "MSN 0x%06x goes back from 0x%06x (frame "
			   "%llu): the MSN counts the messages the responder "
			   "completed and never decreases (9.7.5.2, C9-148)",
			   raw, d->ack_msn, (unsigned long long)d->ack_msn_no);
	d->ack_msn_set = true;
	d->ack_msn = raw;
	d->ack_msn_no = p->no;
}

void chk_aeth(struct roce_check *c, const struct chk_pkt *p)
{
	uint8_t syn = p->ib->aeth.syndrome;
	unsigned type = roce_aeth_type(syn), val = roce_aeth_value(syn);
	uint32_t covered = type == ROCE_AETH_ACK
				   ? p->psn
				   : roce_psn_add(p->psn, ROCE_PSN_MASK);

	/* A NAK acknowledges what came before its PSN (C9-116). */
	if (!(p->flags & ROCE_OPF_READ))
		chk_answer_psn(c, p, covered);
	if (type == ROCE_AETH_RESERVED || (syn & 0x80)) {
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "AETH-RESERVED", "AETH syndrome 0x%02x uses a reserved "
			   "encoding (9.7.5.2)", syn);
		return;
	}
	if (type != ROCE_AETH_ACK) {
		if (!(p->flags & ROCE_OPF_ACK) || (p->flags & ROCE_OPF_ATOMIC))
			chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
				   "NAK-IN-ACKNOWLEDGE", "%s carries a NAK syndrome 0x%02x: "
				   "a NAK travels in an ACKNOWLEDGE packet "
				   "(9.7.5.2)", p->ib->op->name, syn);
		else {
			msn_order(c, p);
			nak_fits(c, p, type, val);
			chk_why_nak(c, p, type, val);
			if (type == ROCE_AETH_NAK && val == ROCE_NAK_PSN_SEQ)
				chk_seqnak(c, p);
			else if (type == ROCE_AETH_NAK)
				chk_fatal_nak(c, p, val);
		}
		return;
	}
	msn_order(c, p);
	chk_why_answer(c, p);
	msn_fits(c, p, covered);
}

void chk_ackreq(struct roce_check *c, const struct chk_pkt *p, bool fresh)
{
	struct chk_dir *d = p->req;
	unsigned kind = chk_kind_of(p->flags);

	(void)c;
	if (p->fl->kind != ROCE_FLOW_RC || !fresh)
		return;
	/* READ and atomic requests are always answered. */
	if (p->ib->bth.ackreq || (kind != CHK_SEND && kind != CHK_WRITE)) {
		d->noack_no = 0;
		return;
	}
	if (p->flags & (ROCE_OPF_LAST | ROCE_OPF_ONLY)) {
		d->noack_no = p->no;
		d->noack_psn = p->psn;
	}
}
