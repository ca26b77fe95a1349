/* SPDX-License-Identifier: MIT */
/* Atomic rules: the AtomicETH address 8-byte aligned, an atomic ACK answering an atomic. */
#include "check_local.h"

void chk_atomic_req(struct roce_check *c, const struct chk_pkt *p)
{
	if (!(p->ib->exts & ROCE_EXT_ATMETH) || !(p->ib->atmeth.va & 7))
		return;
	chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR, "9.4",
		   "%s at VA 0x%llx: an atomic operation's address must be "
		   "8-byte aligned (9.4, atomic operations); the responder "
		   "answers with a NAK", p->ib->op->name,
		   (unsigned long long)p->ib->atmeth.va);
}

void chk_atomic_ack(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;

	if (!d->started || roce_psn_cmp(p->psn, d->first_psn) < 0 ||
	    roce_psn_cmp(p->psn, d->high_psn) >= 0 || d->ngaps ||
	    chk_psn_lost(d, p->psn) || chk_msg_forgotten(d, p->psn))
		return;	/* before the capture, never sent, or lost */
	struct chk_msg *m = chk_msg_find(d, p->psn);
	if (m && m->kind == CHK_ATOMIC)
		return;
	chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR, "9.7.5.2",
		   "ATOMIC_ACKNOWLEDGE for PSN 0x%06x answers %s: only a "
		   "CMP_SWAP or FETCH_ADD is answered by an atomic ACK "
		   "(9.7.5.2)", p->psn,
		   m ? "a request that is no atomic" : "no request");
}
