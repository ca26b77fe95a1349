/* SPDX-License-Identifier: MIT */
/* PSN rules: requests in order, go-back retransmission recognised, gaps settled as loss or error, answers only for PSNs sent. */
#include "check_local.h"

/* Remembers a gap settled as loss, for answers that come later. */
static void note_lost(struct chk_dir *d, uint32_t lo, uint32_t hi)
{
	d->had_loss = true;
	d->lost[d->nlost++ % 4] = (struct chk_gap){ 0, lo, hi };
}

bool chk_psn_lost(const struct chk_dir *d, uint32_t psn)
{
	for (unsigned i = 0; i < 4 && i < d->nlost; i++)
		if (roce_psn_cmp(psn, d->lost[i].lo) >= 0 &&
		    roce_psn_cmp(psn, d->lost[i].hi) <= 0)
			return true;
	return false;
}

/*
 * Capture loss is only claimed where the link could have carried the
 * missing packets in the capture time between the request before the gap
 * and the one after it: CHK_LINK_BITS_PER_NS (400 Gb/s), each packet at
 * least the direction's smallest request frame plus Ethernet's FCS,
 * preamble and gap (24 bytes), and the time widened by one microsecond
 * for capture clocks that stamp in microseconds. Returns true when the
 * gap is too large, after reporting it as the requester's skip.
 */
enum { CHK_LINK_BITS_PER_NS = 400, CHK_CLOCK_SLACK_NS = 1000 };

static bool impossible_loss(struct roce_check *c, const struct chk_gap *g,
			    unsigned flow, unsigned dir)
{
	if (!g->span_ns || !g->pkt_len)
		return false;	/* no time in the capture: cannot tell */
	uint64_t bits = ((uint64_t)g->pkt_len + 24) * 8;
	uint64_t fit = (g->span_ns + CHK_CLOCK_SLACK_NS) *
		       CHK_LINK_BITS_PER_NS / bits;
	uint64_t n = (uint64_t)roce_psn_diff(g->hi, g->lo) + 1;
	if (n <= fit)
		return false;
	chk_report_also(c, g->no, g->prev_no, flow, dir, ROCE_CHECK_ERROR,
		   "PSN-JUMP", "PSN 0x%06x follows a gap of %llu PSNs (0x%06x..0x%06x) "
		   "%llu ns after the request before it: at 400 Gb/s with "
		   "%u-byte frames at most %llu packets fit, so they were "
		   "never sent and not lost by the capture: the requester "
		   "must send PSNs in order (9.7.1)", roce_psn_add(g->hi, 1),
		   (unsigned long long)n, g->lo, g->hi,
		   (unsigned long long)g->span_ns, g->pkt_len,
		   (unsigned long long)fit);
	return true;
}

static void add_gap(struct roce_check *c, const struct chk_pkt *p,
		    uint32_t lo, uint32_t hi)
{
	struct chk_dir *d = p->req;
	struct chk_gap gap = {
		.no = p->no, .lo = lo, .hi = hi,
		.span_ns = c->timed && d->req_ts && c->now >= d->req_ts
				   ? c->now - d->req_ts + (c->now == d->req_ts)
				   : 0,
		.pkt_len = d->min_req_len,
		.prev_no = d->last_req_no,
	};

	if (p->fl->kind == ROCE_FLOW_UC) {
		/* UC has no answers: nothing tells a sender's skip from a
		 * loss, and the receiver drops the rest of the message
		 * either way (9.8.3). Unless no link could have carried
		 * that many: then the sender skipped them. */
		if (impossible_loss(c, &gap, p->flow, p->dir))
			return;
		d->had_loss = true;
		chk_report_loss(c, p->no, p->flow, p->dir, lo, hi, "9.8.3",
				"PSN 0x%06x follows 0x%06x: PSNs 0x%06x..0x%06x "
				"are not in the capture (UC: lost before the "
				"capture or on the wire; the receiver drops "
				"the rest of that message)", p->psn,
				roce_psn_add(lo, ROCE_PSN_MASK), lo, hi);
		return;
	}
	if (d->answered && roce_psn_cmp(d->acked_psn, lo) >= 0) {
		if (impossible_loss(c, &gap, p->flow, p->dir))
			return;
		note_lost(d, lo, hi);
		chk_report_loss(c, p->no, p->flow, p->dir, lo, hi, "9.7.1",
				"PSNs 0x%06x..0x%06x are not in the capture, "
				"but the responder already acknowledged them: "
				"lost by the capture", lo, hi);
		return;
	}
	if (d->ngaps == CHK_GAPS) {
		/* As many open as it keeps: the newest grows to cover this
		 * one too (and the PSNs seen between, a coarser report). */
		d->gaps[CHK_GAPS - 1].hi = hi;
		d->gaps[CHK_GAPS - 1].span_ns = 0;	/* now unknown */
		return;
	}
	d->gaps[d->ngaps++] = gap;
}

/*
 * A retransmission fills a gap the responder never acknowledged: the
 * packet was lost on the wire and the requester recovered (a NAK or its
 * timer, 9.7.5.2.8). Nothing to report.
 */
static void fill_gap(const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;

	for (unsigned i = 0; i < d->ngaps; i++) {
		struct chk_gap *g = &d->gaps[i];
		if (roce_psn_cmp(p->psn, g->lo) < 0 ||
		    roce_psn_cmp(p->psn, g->hi) > 0)
			continue;
		note_lost(d, g->lo, g->hi);
		d->ngaps--;
		for (unsigned j = i; j < d->ngaps; j++)
			d->gaps[j] = d->gaps[j + 1];
		return;
	}
}

/*
 * After a READ sent while the MTU was unknown, the next request may come
 * at any PSN some path MTU makes the READ consume (9.4.3): the READ's
 * responses use those PSNs.
 */
static bool after_open_read(struct chk_dir *d, uint32_t psn)
{
	uint32_t fit = 0, nfit = 0;

	if (!d->read_open)
		return false;
	for (uint32_t mtu = 256; mtu <= 4096; mtu *= 2)
		if (psn == roce_psn_add(d->read_req_psn,
					chk_read_psns(d->read_req_len, mtu)) &&
		    (!d->mtu_guess || d->mtu_guess == mtu)) {
			fit = mtu;
			nfit++;
		}
	if (nfit == 1 && d->mtu_guess != fit) {
		d->mtu_guess = fit;	/* later READs must agree */
		chk_read_spans(d, fit);	/* and their answers follow it */
	}
	return nfit > 0;
}

/* True when psn may be one of an open READ's response PSNs. */
static bool in_open_read(const struct chk_dir *d, uint32_t psn)
{
	return d->read_open && roce_psn_cmp(psn, d->read_req_psn) >= 0 &&
	       roce_psn_cmp(psn, roce_psn_add(d->read_req_psn,
				chk_read_psns(d->read_req_len, 256))) < 0;
}

/* A READ takes as many PSNs as it has response packets (9.4.3). */
static void note_read(const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;

	d->read_open = false;
	if (!(p->flags & ROCE_OPF_READ))
		return;
	if (p->fl->mtu) {
		d->next_psn = d->high_psn = roce_psn_add(
			p->psn, chk_read_psns(p->ib->reth.len, p->fl->mtu));
		return;
	}
	d->read_open = true;
	d->read_req_psn = p->psn;
	d->read_req_len = p->ib->reth.len;
}

/* The request after the newest one sent: in order, or a gap. */
static void advance(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;

	/* A packet behind the newest came last (reordered on the way, or a
	 * resend that stopped short): this one does not continue its
	 * message, whose bytes are then not all in view. */
	if (d->next_psn != d->high_psn)
		d->pos = POS_UNKNOWN;
	if (p->psn != d->high_psn && !after_open_read(d, p->psn)) {
		uint32_t end = roce_psn_add(d->read_req_psn,
			chk_read_psns(d->read_req_len, d->mtu_guess));
		if (d->read_open && d->mtu_guess &&
		    roce_psn_cmp(end, p->psn) <= 0)
			d->high_psn = end;	/* the gap begins after it */
		if (d->beyond_no && roce_psn_cmp(d->beyond_psn, p->psn) < 0) {
			/* An earlier answer covered PSNs of this gap: they
			 * were sent and the capture missed them. */
			d->acked_psn = d->beyond_psn;
			d->answered = true;
			d->beyond_no = 0;
		}
		add_gap(c, p, d->high_psn, roce_psn_add(p->psn, ROCE_PSN_MASK));
		d->pos = POS_UNKNOWN;
	}
	if (d->beyond_no && roce_psn_cmp(p->psn, d->beyond_psn) >= 0) {
		chk_report(c, d->beyond_no, p->flow, 1 - p->dir,
			   ROCE_CHECK_ERROR, "ANSWER-SENT-PSN",
			   "answers PSN 0x%06x before the requester sent it "
			   "(frame %llu): a responder answers only requests it "
			   "received (9.7.5.2)", d->beyond_psn,
			   (unsigned long long)p->no);
		d->beyond_no = 0;
	}
	d->next_psn = d->high_psn = roce_psn_add(p->psn, 1);
}

bool chk_req_psn(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;

	if (!d->started) {
		d->started = true;
		d->first_psn = p->psn;
		d->next_psn = d->high_psn = roce_psn_add(p->psn, 1);
		d->pos = POS_UNKNOWN;
		note_read(p);
		return true;
	}
	if (roce_psn_cmp(p->psn, d->high_psn) >= 0) {
		advance(c, p);
		note_read(p);
		return true;
	}
	if (p->fl->kind == ROCE_FLOW_UC) {
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR, "UC-PSN-FORWARD",
			   "PSN 0x%06x goes back from 0x%06x: a UC requester "
			   "never retransmits, its PSNs only go forward (9.8.3)",
			   p->psn, roce_psn_add(d->next_psn, ROCE_PSN_MASK));
		d->next_psn = roce_psn_add(p->psn, 1);
		d->pos = POS_UNKNOWN;
		return false;
	}
	/* Behind the newest: a retransmission. Going back is legal (after
	 * a NAK or a timeout, 9.7.5.2.8); it resumes anywhere, mid-message
	 * included, so the message position is unknown until it ends. */
	if (p->psn != d->next_psn)
		d->pos = POS_UNKNOWN;
	d->next_psn = roce_psn_add(p->psn, 1);
	fill_gap(p);
	return false;
}

void chk_answer_psn(struct roce_check *c, const struct chk_pkt *p,
		    uint32_t psn)
{
	struct chk_dir *d = p->req;

	if (!d->started)
		return;
	if (roce_psn_cmp(psn, d->high_psn) >= 0 && !in_open_read(d, psn)) {
		if (!d->beyond_no) {
			d->beyond_no = p->no;
			d->beyond_psn = psn;
		}
		return;
	}
	if (!d->answered || roce_psn_cmp(psn, d->acked_psn) > 0) {
		d->acked_psn = psn;
		d->acked_no = p->no;
	}
	d->answered = true;
	chk_seqnak_covered(c, p, psn);
	while (d->ngaps && roce_psn_cmp(psn, d->gaps[0].lo) >= 0) {
		struct chk_gap *g = &d->gaps[0];
		if (impossible_loss(c, g, p->flow, 1 - p->dir))
			goto next;
		note_lost(d, g->lo, g->hi);
		chk_report_loss(c, g->no, p->flow, 1 - p->dir, g->lo, g->hi,
				"9.7.1", "PSNs 0x%06x..0x%06x are not in the "
				"capture, but frame %llu acknowledges them: "
				"lost by the capture", g->lo, g->hi,
				(unsigned long long)p->no);
next:
		d->ngaps--;
		for (unsigned j = 0; j < d->ngaps; j++)
			d->gaps[j] = d->gaps[j + 1];
	}
	if (d->noack_no && roce_psn_cmp(psn, d->noack_psn) >= 0)
		d->noack_no = 0;
}

void chk_psn_finish(struct roce_check *c, unsigned flow, unsigned dir)
{
	struct chk_dir *d = &c->flows[flow].dir[dir];

	for (unsigned i = 0; i < d->ngaps; i++)
		chk_report(c, d->gaps[i].no, flow, dir, ROCE_CHECK_ERROR,
			   "PSN-ORDER", "PSN 0x%06x skips 0x%06x..0x%06x and "
			   "nothing shows they were sent: the requester must "
			   "send PSNs in order (9.7.1)",
			   roce_psn_add(d->gaps[i].hi, 1), d->gaps[i].lo,
			   d->gaps[i].hi);
	d->ngaps = 0;
	if (d->beyond_no)
		chk_report(c, d->beyond_no, flow, 1 - dir, ROCE_CHECK_ERROR,
			   "ANSWER-SENT-PSN", "answers PSN 0x%06x, which the requester "
			   "never sent (the newest it sent is 0x%06x): a "
			   "responder answers only requests it received "
			   "(9.7.5.2)", d->beyond_psn,
			   roce_psn_add(d->high_psn, ROCE_PSN_MASK));
	d->beyond_no = 0;
	if (d->noack_no)
		chk_report(c, d->noack_no, flow, dir, ROCE_CHECK_ERROR, "ACKREQ-LAST",
			   "PSN 0x%06x ends the last SEND/WRITE message and "
			   "nothing after it asks for an acknowledgement "
			   "(AckReq 0): the requester can then complete it "
			   "only by timing out (9.2, BTH AckReq)",
			   d->noack_psn);
	d->noack_no = 0;
}
