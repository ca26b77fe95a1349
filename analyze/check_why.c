/* SPDX-License-Identifier: MIT */
/* What the errors a capture shows mean: each NAK against the request it answers, RNR runs, requests never answered. */
#include <stdio.h>

#include "rocemu/aeth.h"
#include "rocemu/range.h"

#include "check_local.h"

/* "RDMA WRITE psn 0x001000 (frame 1; rkey 0x1f7, va 0x..., len 64)" for
 * the request psn belongs to, as far as the capture holds it. */
static void req_text(struct chk_dir *d, uint32_t psn, char *buf, size_t len)
{
	const struct chk_msg *m = chk_msg_find(d, psn);

	if (!m) {
		snprintf(buf, len, "the request psn 0x%06x, whose start the "
			 "capture does not hold", psn);
		return;
	}
	int n = snprintf(buf, len, "%s psn 0x%06x (frame %llu",
			 chk_kind_name(m->kind), psn,
			 (unsigned long long)m->no);
	if (n < 0 || (size_t)n >= len)
		return;
	if (m->reth)
		snprintf(buf + n, len - (size_t)n, "; rkey 0x%x, va 0x%llx, "
			 "len %u)", m->rkey, (unsigned long long)m->va,
			 m->dma_len);
	else
		snprintf(buf + n, len - (size_t)n, ")");
}

/* "qp 0x12", the responder's QP the requests name; the capture may hold
 * none of them. */
static const char *peer_qp(const struct chk_dir *d, char *buf, size_t len)
{
	if (!d->started)
		return "the responder's QP";
	snprintf(buf, len, "qp 0x%x", d->dqpn);
	return buf;
}

/* Remembers that the responder carried out the remote access of m. */
static void grant(struct chk_dir *d, const struct chk_msg *m)
{
	if (!m || !m->reth || m->kind == CHK_SEND)
		return;
	for (unsigned i = 0; i < CHK_GRANTS && i < d->ngrants; i++) {
		const struct chk_grant *g = &d->grants[i];
		if (g->rkey == m->rkey && g->va == m->va &&
		    g->len == m->dma_len && g->kind == m->kind)
			return;
	}
	d->grants[d->ngrants++ % CHK_GRANTS] = (struct chk_grant){
		.no = m->no, .va = m->va, .rkey = m->rkey, .len = m->dma_len,
		.kind = m->kind,
	};
}

void chk_why_req(const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;

	d->dqpn = p->ib->bth.dqpn;
	d->last_req_psn = p->psn;
	d->last_req_no = p->no;
	if (!d->wait_set) {
		d->wait_set = true;
		d->wait_psn = p->psn;
		d->wait_sent = 0;
	}
	if (p->psn == d->wait_psn && d->wait_sent++ == 0)
		d->wait_no = p->no;
}

/* An answer came for psn: the oldest request waiting is the next one
 * (or psn itself, which a NAK refused and the requester may resend). */
static void answered(struct chk_dir *d, uint32_t next)
{
	d->wait_set = true;
	d->wait_psn = next;
	d->wait_sent = 0;
}

/* Says what the run of RNR NAKs for d->rnr_psn meant; then says how it
 * ended (then_no: the frame that answered it otherwise, 0: none). */
static void rnr_settle(struct roce_check *c, unsigned flow, unsigned rdir,
		       struct chk_dir *d, uint64_t then_no)
{
	char req[160], end[200], qp[24];

	if (!d->rnr_on)
		return;
	d->rnr_on = false;
	req_text(d, d->rnr_psn, req, sizeof(req));
	if (then_no)
		snprintf(end, sizeof(end), "refused %u time(s), then answered "
			 "at frame %llu once a receive was posted", d->rnr_count,
			 (unsigned long long)then_no);
	else
		snprintf(end, sizeof(end), "refused %u time(s) and never "
			 "accepted in the capture: after rnr_retry retries (7: "
			 "for ever) the requester completes the WR with an RNR "
			 "retry error", d->rnr_count);
	chk_report(c, d->rnr_no, flow, rdir, ROCE_CHECK_REASON, "9.7.5.2.8",
		   "RNR NAK: no receive WQE was posted at %s (or its SRQ) "
		   "when %s arrived; %s (9.7.5.2.8)",
		   peer_qp(d, qp, sizeof(qp)), req, end);
}

void chk_why_answer(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;
	const struct chk_msg *m = (p->flags & ROCE_OPF_READ)
					  ? chk_msg_find(d, p->psn)
					  : chk_msg_ended_by(d, p->psn);

	if (d->rnr_on && roce_psn_cmp(p->psn, d->rnr_psn) >= 0)
		rnr_settle(c, p->flow, p->dir, d, p->no);
	grant(d, m);
	answered(d, roce_psn_add(p->psn, 1));
}

/* What a remote access NAK for m means; proven narrower by an earlier
 * access with the same R_Key the responder carried out. */
static void access_text(struct chk_dir *d, uint32_t psn, char *buf,
			size_t len)
{
	const struct chk_msg *m = chk_msg_find(d, psn);
	const struct chk_grant *g = NULL;

	for (unsigned i = 0; m && m->reth && i < CHK_GRANTS && i < d->ngrants;
	     i++)
		if (d->grants[i].rkey == m->rkey &&
		    (!g || d->grants[i].kind == m->kind))
			g = &d->grants[i];
	if (!g) {
		snprintf(buf, len, "the responder found no MR or memory "
			 "window for that rkey in its QP's PD, or the range "
			 "lies outside the region it names, or the region "
			 "lacks the remote %s right",
			 m && m->kind == CHK_READ ? "read" :
			 m && m->kind == CHK_ATOMIC ? "atomic" : "write");
		return;
	}
	uint64_t ghi;
	bool inside = roce_range_end(g->va, g->len, &ghi) &&
		      roce_range_inside(m->va, m->dma_len, g->va, ghi);
	if (g->kind == m->kind && !inside)
		snprintf(buf, len, "the same rkey 0x%x was accepted at frame "
			 "%llu for va 0x%llx, len %u, so the key and its right "
			 "are good: this range reaches outside the region the "
			 "key names", g->rkey, (unsigned long long)g->no,
			 (unsigned long long)g->va, g->len);
	else if (g->kind == m->kind)
		snprintf(buf, len, "the same rkey 0x%x was accepted at frame "
			 "%llu for this very range: the MR or window was "
			 "deregistered or invalidated since", g->rkey,
			 (unsigned long long)g->no);
	else
		snprintf(buf, len, "rkey 0x%x was accepted at frame %llu for "
			 "an %s, so it names a region: this %s lies outside it "
			 "or the region lacks the right it needs", g->rkey,
			 (unsigned long long)g->no, chk_kind_name(g->kind),
			 chk_kind_name(m->kind));
}

static void seq_text(const struct chk_dir *d, uint32_t psn, char *buf,
		     size_t len)
{
	uint32_t before = roce_psn_add(psn, ROCE_PSN_MASK);

	if (d->started && roce_psn_cmp(d->last_req_psn, psn) > 0)
		snprintf(buf, len, "the responder expected psn 0x%06x (the "
			 "request after psn 0x%06x) and got psn 0x%06x (frame "
			 "%llu): psn 0x%06x..0x%06x never reached it; the "
			 "requester goes back to 0x%06x", psn, before,
			 d->last_req_psn, (unsigned long long)d->last_req_no,
			 psn, roce_psn_add(d->last_req_psn, ROCE_PSN_MASK),
			 psn);
	else
		snprintf(buf, len, "the responder expected psn 0x%06x (the "
			 "request after psn 0x%06x) and got a later one the "
			 "capture does not hold; the requester goes back to "
			 "0x%06x", psn, before, psn);
}

void chk_why_nak(struct roce_check *c, const struct chk_pkt *p,
		 unsigned type, unsigned code)
{
	struct chk_dir *d = p->req;
	char req[160], why[300], qp[24];

	answered(d, p->psn);
	if (type == ROCE_AETH_RNR_NAK) {
		if (d->rnr_on && d->rnr_psn == p->psn) {
			d->rnr_count++;
			return;
		}
		rnr_settle(c, p->flow, p->dir, d, 0);
		d->rnr_on = true;
		d->rnr_psn = p->psn;
		d->rnr_count = 1;
		d->rnr_no = p->no;
		return;
	}
	if (d->rnr_on && roce_psn_cmp(p->psn, d->rnr_psn) >= 0)
		rnr_settle(c, p->flow, p->dir, d, p->no);
	req_text(d, p->psn, req, sizeof(req));
	switch (code) {
	case ROCE_NAK_PSN_SEQ:
		/* Naming the newest PSN sent or a later one, no gap shows:
		 * a rule finding (SEQNAK-GAP, SEQNAK-SENT) says so. */
		if (d->started &&
		    roce_psn_cmp(roce_psn_add(p->psn, 1), d->high_psn) >= 0)
			return;
		seq_text(d, p->psn, why, sizeof(why));
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_REASON,
			   "9.7.5.2.1", "NAK PSN sequence error: %s (9.7.5.2.1)",
			   why);
		return;
	case ROCE_NAK_REM_ACCESS:
		access_text(d, p->psn, why, sizeof(why));
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_REASON,
			   "9.7.5.2.4", "NAK remote access error answers %s "
			   "sent from qp 0x%x: %s (9.7.5.2.4)", req,
			   p->ib->bth.dqpn, why);
		return;
	case ROCE_NAK_INV_REQ:
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_REASON,
			   "9.7.5.2.3", "NAK invalid request answers %s sent "
			   "from qp 0x%x: %s does not take that operation "
			   "(its access flags lack the remote right, or its "
			   "type has no such opcode), or the message is longer "
			   "than it accepts, e.g. a SEND longer than the receive "
			   "buffer (9.7.5.2.3)", req, p->ib->bth.dqpn,
			   peer_qp(d, qp, sizeof(qp)));
		return;
	case ROCE_NAK_REM_OP:
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_REASON,
			   "9.7.5.2", "NAK remote operational error answers %s "
			   "sent from qp 0x%x: the responder failed carrying it "
			   "out (a local error at %s, e.g. writing into its "
			   "memory) (9.7.5.2)", req, p->ib->bth.dqpn,
			   peer_qp(d, qp, sizeof(qp)));
		return;
	default:
		return;	/* reserved codes: a rule finding says it */
	}
}

void chk_why_finish(struct roce_check *c, unsigned flow, unsigned dir)
{
	struct chk_dir *d = &c->flows[flow].dir[dir];
	char req[160];

	rnr_settle(c, flow, 1 - dir, d, 0);
	if (!d->wait_set || d->wait_sent < 2 ||
	    roce_psn_cmp(d->wait_psn, d->high_psn) >= 0)
		return;
	req_text(d, d->wait_psn, req, sizeof(req));
	chk_report(c, d->wait_no, flow, dir, ROCE_CHECK_REASON, "9.7.6",
		   "%s sent %u times and never answered: the responder "
		   "dropped it without a word (qp 0x%x not in RTR or RTS, no "
		   "such QP, a bad ICRC, a wrong destination) or its answers "
		   "were lost; after retry_cnt retries the requester completes "
		   "the WR with a retry exceeded error (9.7.6)", req,
		   d->wait_sent, d->dqpn);
}
