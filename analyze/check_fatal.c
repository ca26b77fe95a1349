/* SPDX-License-Identifier: MIT */
/* Fatal NAKs end a QP's work: no new request after one, no answer from the responder that sent it. */
#include "rocemu/aeth.h"

#include "check_local.h"

/* The section that makes each fatal NAK code (as the reasons name it). */
static const char *fatal_rule(unsigned code)
{
	switch (code) {
	case ROCE_NAK_INV_REQ:
		return "9.7.5.2.3";
	case ROCE_NAK_REM_ACCESS:
		return "9.7.5.2.4";
	default:
		return "9.7.5.2";
	}
}

static const char *fatal_name(unsigned code)
{
	switch (code) {
	case ROCE_NAK_INV_REQ:
		return "invalid request";
	case ROCE_NAK_REM_ACCESS:
		return "remote access error";
	default:
		return "remote operational error";
	}
}

bool chk_after_grace(const struct roce_check *c, uint64_t since_ts)
{
	return c->timed && c->now > since_ts &&
	       c->now - since_ts > CHK_GRACE_NS;
}

void chk_fatal_nak(struct roce_check *c, const struct chk_pkt *p,
		   unsigned code)
{
	struct chk_dir *d = p->req;

	if (code != ROCE_NAK_INV_REQ && code != ROCE_NAK_REM_ACCESS &&
	    code != ROCE_NAK_REM_OP)
		return;
	if (d->fatal_no)
		return;	/* chk_fatal_answer judged it */
	d->fatal_no = p->no;
	d->fatal_ts = c->now;
	d->fatal_psn = p->psn;
	d->fatal_high = d->started ? d->high_psn : roce_psn_add(p->psn, 1);
	d->fatal_syn = p->ib->aeth.syndrome;
}

/*
 * A responder that sent a fatal NAK put its QP in the error state: it
 * answers nothing more (the same NAK again is tolerated: it may answer a
 * request that crossed it).
 */
void chk_fatal_answer(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;
	bool again = (p->ib->exts & ROCE_EXT_AETH) &&
		     p->ib->aeth.syndrome == d->fatal_syn &&
		     p->psn == d->fatal_psn;

	if (!d->fatal_no || d->fatal_resp_said || again)
		return;
	d->fatal_resp_said = true;
	unsigned code = roce_aeth_value(d->fatal_syn);
	chk_report_also(c, p->no, d->fatal_no, p->flow, p->dir,
		   ROCE_CHECK_ERROR, "FATAL-NAK-SILENT", "%s psn 0x%06x after this responder's "
		   "NAK %s for psn 0x%06x (frame %llu): a fatal NAK puts the "
		   "responder's QP in the error state, which answers nothing "
		   "more (%s)", p->ib->op->name, p->psn, fatal_name(code),
		   d->fatal_psn, (unsigned long long)d->fatal_no,
		   fatal_rule(code));
}

/*
 * The requester's QP goes to the error state when the fatal NAK reaches
 * it: new requests (PSNs it had not sent when the NAK was sent) more than
 * CHK_GRACE_NS after the NAK are its fault; earlier ones may have crossed
 * the NAK on the wire. Retransmissions are not judged here.
 */
void chk_fatal_req(struct roce_check *c, const struct chk_pkt *p, bool fresh)
{
	struct chk_dir *d = p->req;

	if (!d->fatal_no || d->fatal_req_said || !fresh ||
	    roce_psn_cmp(p->psn, d->fatal_high) < 0 ||
	    !chk_after_grace(c, d->fatal_ts))
		return;
	d->fatal_req_said = true;
	unsigned code = roce_aeth_value(d->fatal_syn);
	chk_report_also(c, p->no, d->fatal_no, p->flow, p->dir,
		   ROCE_CHECK_ERROR, "FATAL-NAK-STOPS", "new request %s psn 0x%06x %llu us after "
		   "the responder's NAK %s for psn 0x%06x (frame %llu): a fatal "
		   "NAK ends the requester's work on the QP, which goes to the "
		   "error state and sends nothing more (%s)", p->ib->op->name,
		   p->psn, (unsigned long long)((c->now - d->fatal_ts) / 1000),
		   fatal_name(code), d->fatal_psn,
		   (unsigned long long)d->fatal_no, fatal_rule(code));
}
