/* SPDX-License-Identifier: MIT */
/* Atomic and READ resource rules: the AtomicETH address 8-byte aligned, an atomic ACK answering an atomic, a duplicate answered from the saved result, READs and atomics in flight. */
#include "rocemu/aeth.h"

#include "check_local.h"

void chk_atomic_req(struct roce_check *c, const struct chk_pkt *p)
{
	if (!(p->ib->exts & ROCE_EXT_ATMETH) || !(p->ib->atmeth.va & 7))
		return;
	chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR, "ATOMIC-ALIGN",
		   "%s at VA 0x%llx: an atomic operation's address must be "
		   "8-byte aligned (9.4, atomic operations); the responder "
		   "answers with a NAK", p->ib->op->name,
		   (unsigned long long)p->ib->atmeth.va);
}

/*
 * A second atomic ACK for the same PSN answers a duplicate atomic: the
 * responder does not execute it again but returns the original value it
 * saved the first time (9.7.5.1.1). A handful of the latest are kept.
 */
static void saved_result(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;
	uint64_t orig = p->ib->atmack;

	for (unsigned i = 0; i < 4 && i < d->natm; i++) {
		if (d->atm_saved[i].psn != p->psn)
			continue;
		if (d->atm_saved[i].orig != orig)
			chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
				   "ATOMIC-DUPLICATE", "ATOMIC_ACKNOWLEDGE for PSN "
				   "0x%06x carries original value 0x%llx, but "
				   "frame %llu answered that atomic with 0x%llx: "
				   "a duplicate atomic is answered from the saved "
				   "result, not executed again (9.7.5.1.1)",
				   p->psn, (unsigned long long)orig,
				   (unsigned long long)d->atm_saved[i].no,
				   (unsigned long long)d->atm_saved[i].orig);
		return;
	}
	d->atm_saved[d->natm++ % 4].psn = p->psn;
	d->atm_saved[(d->natm - 1) % 4].orig = orig;
	d->atm_saved[(d->natm - 1) % 4].no = p->no;
}

void chk_atomic_ack(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;

	if (!d->started || roce_psn_cmp(p->psn, d->first_psn) < 0 ||
	    roce_psn_cmp(p->psn, d->high_psn) >= 0 || d->ngaps ||
	    chk_psn_lost(d, p->psn) || chk_msg_forgotten(d, p->psn))
		return;	/* before the capture, never sent, or lost */
	struct chk_msg *m = chk_msg_find(d, p->psn);
	if (m && m->kind == CHK_ATOMIC) {
		chk_rd_order(c, p, m);
		saved_result(c, p);
		return;
	}
	chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR, "ATOMIC-ACK-FOR-ATOMIC",
		   "ATOMIC_ACKNOWLEDGE for PSN 0x%06x answers %s: only a "
		   "CMP_SWAP or FETCH_ADD is answered by an atomic ACK "
		   "(9.7.5.2)", p->psn,
		   m ? "a request that is no atomic" : "no request");
}

void chk_rd_req(struct roce_check *c, const struct chk_pkt *p, bool fresh)
{
	struct chk_dir *d = p->req;

	if (!fresh || !(p->flags & (ROCE_OPF_LAST | ROCE_OPF_ONLY)) ||
	    !d->msgs_done)
		return;
	struct chk_msg *m = chk_msg_get(d, d->msgs_done - 1);
	enum chk_kind k = chk_kind_of(p->flags);
	if (k == CHK_READ || k == CHK_ATOMIC)
		d->rd_sent++;
	if (m)
		m->rd_upto = d->rd_sent;
	if (k != CHK_READ && k != CHK_ATOMIC)
		return;
	uint32_t n = d->rd_sent - d->rd_done;
	if (n > d->rd_max) {
		d->rd_max = n;
		d->rd_max_no = p->no;
	}
	/* Only a bound the capture announced can be broken; a response the
	 * capture lost would make the count too high. */
	if (!d->cm_known || !d->cm_depth || n <= d->cm_depth || d->had_loss ||
	    d->rd_told)
		return;
	d->rd_told = true;
	chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR, "RD-ATOMIC-DEPTH",
		   "%s at PSN 0x%06x makes %u READs and atomics outstanding, "
		   "but the CM connection announced Initiator Depth %u for "
		   "this requester: it sends no more than max_rd_atomic before "
		   "the oldest is answered (9.7.5.2, 12.7)", p->ib->op->name,
		   p->psn, n, d->cm_depth);
}

/* The newest message p answers whole: a READ response's or atomic ACK's
 * READ or atomic, an ACK's last message, a NAK's message before it. */
static struct chk_msg *answered_msg(const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;

	if (p->flags & (ROCE_OPF_READ | ROCE_OPF_ATOMIC))
		return chk_msg_find(d, p->psn);
	if (!(p->ib->exts & ROCE_EXT_AETH))
		return NULL;
	if (roce_aeth_type(p->ib->aeth.syndrome) == ROCE_AETH_ACK)
		return chk_msg_ended_by(d, p->psn);
	return chk_msg_ended_by(d, roce_psn_add(p->psn, ROCE_PSN_MASK));
}

static bool positive_ack(const struct chk_pkt *p)
{
	return !(p->flags & (ROCE_OPF_READ | ROCE_OPF_ATOMIC)) &&
	       (p->ib->exts & ROCE_EXT_AETH) &&
	       roce_aeth_type(p->ib->aeth.syndrome) == ROCE_AETH_ACK;
}

void chk_rd_answer(const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;
	struct chk_msg *m = answered_msg(p);

	if (!m)
		return;
	if ((int32_t)(m->rd_upto - d->rd_done) > 0) {
		d->rd_done = m->rd_upto;
		d->rd_done_no = p->no;
	}
	if (!positive_ack(p)) {
		if ((int32_t)(m->rd_upto - d->rd_resp) > 0)
			d->rd_resp = m->rd_upto;
	} else if ((int32_t)(m->rd_upto - d->rd_resp) > 0 &&
		   (int32_t)(m->rd_upto - d->rd_acked) > 0) {
		d->rd_acked = m->rd_upto;	/* READs it covers unanswered */
		d->rd_acked_no = p->no;
	}
}

/* A READ's or atomic's answer opening after an ACK that covered it: an
 * ACK acknowledges every request up to its PSN (9.7.5.1.2), and answers
 * leave in order (9.5), so the response had to come first. True when
 * reported. */
static bool after_covering_ack(struct roce_check *c, const struct chk_pkt *p,
			       const struct chk_msg *m)
{
	struct chk_dir *d = p->req;

	if (!d->rd_acked_no || (int32_t)(m->rd_upto - d->rd_resp) <= 0 ||
	    (int32_t)(m->rd_upto - d->rd_acked) > 0)
		return false;
	chk_report_also(c, p->no, d->rd_acked_no, p->flow, p->dir,
			ROCE_CHECK_ERROR, "ACK-IMPLIES-RESPONSES",
			"%s answers the %s at frame %llu (PSN 0x%06x) after "
			"the ACK at frame %llu covered it: an ACK acknowledges "
			"every request up to its PSN, so the responder sends "
			"the answers of the READs and atomics before it (9.5, "
			"9.7.5.1.2)", p->ib->op->name, chk_kind_name(m->kind),
			(unsigned long long)m->no, m->first_psn,
			(unsigned long long)d->rd_acked_no);
	d->rd_acked_no = 0;
	return true;
}

void chk_rd_finish(struct roce_check *c, unsigned flow, unsigned dir)
{
	struct chk_dir *d = &c->flows[flow].dir[dir];

	if (d->rd_max < 2 || d->rd_told)
		return;	/* one at a time says nothing; a violation said it */
	chk_report(c, d->rd_max_no, flow, dir, ROCE_CHECK_REASON, "9.7.5.2",
		   "up to %u READs and atomics were outstanding at once (frame "
		   "%llu): the requester's max_rd_atomic and the responder's "
		   "max_dest_rd_atomic are at least %u (9.7.5.2)", d->rd_max,
		   (unsigned long long)d->rd_max_no, d->rd_max);
}

void chk_rd_order(struct roce_check *c, const struct chk_pkt *p,
		  const struct chk_msg *m)
{
	struct chk_dir *d = p->req;

	/* A retransmitted request is answered again, after later ones (a
	 * duplicate, 9.7.5.1.1): only a flow with none is judged. */
	if (p->fl->retransmitted || !m->rd_upto ||
	    after_covering_ack(c, p, m) ||
	    (int32_t)(d->rd_done - m->rd_upto) <= 0)
		return;
	chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR, "RESPONSE-ORDER",
		   "%s answers the %s at frame %llu (PSN 0x%06x) after frame "
		   "%llu answered a later READ or atomic: a responder answers "
		   "READs and atomics in the order it received them (9.5, "
		   "transaction ordering)", p->ib->op->name,
		   chk_kind_name(m->kind), (unsigned long long)m->no,
		   m->first_psn, (unsigned long long)d->rd_done_no);
}
