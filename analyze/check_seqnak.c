/* SPDX-License-Identifier: MIT */
/* PSN sequence error NAKs: one per gap the responder saw, and the requester goes back to the PSN named. */
#include <stdio.h>

#include "check_local.h"

/*
 * The NAK names the PSN the responder expected (9.7.5.2.1). If an earlier
 * answer already covered that PSN, the responder had it: nothing was
 * missing. While an earlier sequence NAK for the same PSN is unanswered
 * by the requester (no request went back since), the responder saw no
 * new gap: one NAK per gap. And a gap shows only when a PSN beyond it
 * arrives: the NAK names a PSN older than the newest sent.
 */
void chk_seqnak(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;

	if (!d->started)
		return;
	if (d->answered && d->acked_no &&
	    roce_psn_cmp(d->acked_psn, p->psn) >= 0) {
		chk_report_also(c, p->no, d->acked_no, p->flow, p->dir,
			   ROCE_CHECK_ERROR, "SEQNAK-COVERED",
			   "PSN sequence error NAK names psn "
			   "0x%06x, but frame %llu already acknowledged up to "
			   "0x%06x: the responder had that PSN, nothing was "
			   "missing (9.7.5.2.1)", p->psn,
			   (unsigned long long)d->acked_no, d->acked_psn);
		return;
	}
	if (d->seqnak_no && d->seqnak_psn == p->psn) {
		chk_report_also(c, p->no, d->seqnak_no, p->flow, p->dir,
			   ROCE_CHECK_ERROR, "SEQNAK-ONCE", "a second PSN sequence error NAK for "
			   "psn 0x%06x (the first: frame %llu) and the "
			   "requester sent nothing again in between: the "
			   "responder NAKs a gap once, then drops what follows "
			   "until the missing PSN comes (9.7.5.2.1)", p->psn,
			   (unsigned long long)d->seqnak_no);
		return;
	}
	if (roce_psn_add(p->psn, 1) == d->high_psn) {
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "SEQNAK-GAP", "PSN sequence error NAK names psn "
			   "0x%06x, the newest request sent: a responder sees "
			   "a gap only when a later PSN arrives, and none was "
			   "sent (or the capture lost it) (9.7.5.2.1)",
			   p->psn);
		return;
	}
	d->seqnak_no = p->no;
	d->seqnak_ts = c->now;
	d->seqnak_newest = roce_psn_add(d->high_psn, ROCE_PSN_MASK);
	d->seqnak_psn = p->psn;
}

/* A request sent again (any PSN the requester had sent) is the go-back
 * the NAK asked for; the resend may start earlier than the PSN named. */
void chk_seqnak_req(const struct chk_pkt *p, bool fresh)
{
	struct chk_dir *d = p->req;

	if (d->seqnak_no && !fresh)
		d->seqnak_no = 0;
}

static void not_back(struct roce_check *c, unsigned flow, unsigned dir,
		     struct chk_dir *d, uint64_t also, const char *since)
{
	chk_report_also(c, d->seqnak_no, also, flow, 1 - dir, ROCE_CHECK_ERROR,
		   "SEQNAK-GO-BACK", "PSN sequence error NAK for psn 0x%06x, and "
		   "the requester never went back to it (%s): after that NAK "
		   "the requester resends from the PSN named, and the "
		   "responder takes nothing beyond it before (9.7.5.2.1)",
		   d->seqnak_psn, since);
	d->seqnak_no = 0;
}

/* An answer covering the PSN named: it may have come late (reordered on
 * the way), and PSNs sent after it, still in flight when the NAK left,
 * may have followed it in order. But the later PSN that showed the gap
 * was dropped while the responder waited, and it was at most the newest
 * request sent before the NAK: an answer covering that one with nothing
 * sent again took a packet the responder had dropped. */
void chk_seqnak_covered(struct roce_check *c, const struct chk_pkt *p,
			uint32_t psn)
{
	struct chk_dir *d = p->req;
	char since[160];

	if (!d->seqnak_no || roce_psn_cmp(psn, d->seqnak_newest) < 0)
		return;
	snprintf(since, sizeof(since), "frame %llu acknowledges up to 0x%06x, "
		 "beyond 0x%06x, the newest request before the NAK",
		 (unsigned long long)p->no, psn, d->seqnak_newest);
	not_back(c, p->flow, 1 - p->dir, d, p->no, since);
}

/* At the end: a NAK the requester never followed although it sent new
 * requests for longer than the grace after it. */
void chk_seqnak_finish(struct roce_check *c, unsigned flow, unsigned dir)
{
	struct chk_dir *d = &c->flows[flow].dir[dir];

	if (!d->seqnak_no || !c->timed ||
	    roce_psn_cmp(d->last_req_psn, d->seqnak_psn) < 0 ||
	    d->req_ts <= d->seqnak_ts ||
	    d->req_ts - d->seqnak_ts <= CHK_GRACE_NS)
		return;
	not_back(c, flow, dir, d, d->last_req_no, "it sent new requests until the end");
}
