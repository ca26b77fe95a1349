/* SPDX-License-Identifier: MIT */
/* RNR NAK rules: a request sent again after an RNR NAK waits the timer the NAK encodes; its retries stay within the QP's RNR retry count. */
#include "rocemu/aeth.h"

#include "check_local.h"

/*
 * Capture clocks: both packets are stamped by the same clock, but a host
 * stamps a frame when its driver sees it, not when the wire does, and a
 * capture taken at the responder sees the NAK leave before the requester
 * gets it. A retry up to an eighth of the timer plus 1 ms early is taken
 * as on time (docs/check.md, "RNR NAK timer").
 */
enum { RNR_SLACK_US = 1000 };

static uint64_t rnr_slack_us(uint32_t timer_us)
{
	return timer_us / 8 + RNR_SLACK_US;
}

void chk_rnr_nak(struct roce_check *c, const struct chk_pkt *p, unsigned code)
{
	struct chk_dir *d = p->req;

	d->rnr_wait = c->timed;
	d->rnr_wait_psn = p->psn;
	d->rnr_wait_us = roce_rnr_timer_usec(code);
	d->rnr_wait_ns = c->now;
	d->rnr_wait_no = p->no;
}

/* The retry after the NAK that started d's timer came too early. */
static void too_early(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;
	uint64_t waited_us = (c->now - d->rnr_wait_ns) / 1000;

	if (c->now < d->rnr_wait_ns)
		waited_us = 0;	/* a clock that went back: no wait at all */
	if (waited_us + rnr_slack_us(d->rnr_wait_us) >= d->rnr_wait_us)
		return;
	chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR, "RNR-TIMER",
		   "%s at PSN 0x%06x is sent again %llu us after the RNR NAK "
		   "at frame %llu, whose timer field asks for at least %u us "
		   "(tolerance %llu us): the requester waits the RNR NAK "
		   "timer before it retries (9.7.5.2.8)", p->ib->op->name,
		   p->psn, (unsigned long long)waited_us,
		   (unsigned long long)d->rnr_wait_no, d->rnr_wait_us,
		   (unsigned long long)rnr_slack_us(d->rnr_wait_us));
}

/* One more retry of p->psn after an RNR NAK: the count the QP allows. */
static void count_retry(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;

	if (d->rnr_tries_psn != p->psn || !d->rnr_tries) {
		d->rnr_tries_psn = p->psn;
		d->rnr_tries = 0;
		d->rnr_told = false;
	}
	d->rnr_tries++;
	if (d->rnr_told || !d->cm_known || d->cm_rnr_retry >= 7 ||
	    d->rnr_tries <= d->cm_rnr_retry)
		return;
	d->rnr_told = true;
	chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR, "RNR-RETRIES",
		   "%s at PSN 0x%06x is retry %u after RNR NAKs, but the CM "
		   "connection's RNR Retry Count is %u (7 alone means for "
		   "ever): after that many the requester completes the WR "
		   "with an RNR retry error and stops (9.7.5.2.8, 12.7)",
		   p->ib->op->name, p->psn, d->rnr_tries, d->cm_rnr_retry);
}

void chk_rnr_req(struct roce_check *c, const struct chk_pkt *p, bool fresh)
{
	struct chk_dir *d = p->req;

	if (fresh || p->psn != d->rnr_wait_psn || !d->rnr_wait_no)
		return;
	/* The first request back at the NAKed PSN is the retry. */
	if (d->rnr_wait && c->timed)
		too_early(c, p);
	d->rnr_wait = false;
	d->rnr_wait_no = 0;
	count_retry(c, p);
}

void chk_rnr_finish(struct roce_check *c, unsigned flow, unsigned dir)
{
	struct chk_dir *d = &c->flows[flow].dir[dir];

	if (d->rnr_tries <= 7 || d->cm_known)
		return;
	chk_report(c, d->last_req_no, flow, dir, ROCE_CHECK_REASON, "9.7.5.2.8",
		   "the requester sent PSN 0x%06x again %u times after RNR "
		   "NAKs: more than 7 retries means its QP's rnr_retry is 7, "
		   "retry for ever (9.7.5.2.8)", d->rnr_tries_psn,
		   d->rnr_tries);
}
