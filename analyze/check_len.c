/* SPDX-License-Identifier: MIT */
/* Length rules: the path MTU, the RETH length of a WRITE (READ responses: check_read.c). */
#include "check_local.h"

uint32_t chk_read_psns(uint32_t len, uint32_t mtu)
{
	if (!mtu)
		mtu = 4096;
	return len ? (uint32_t)(((uint64_t)len + mtu - 1) / mtu) : 1;
}

void chk_read_spans(struct chk_dir *d, uint32_t mtu)
{
	for (unsigned i = 0; i < d->cap; i++) {
		struct chk_msg *m = &d->ring[i];
		if (m->kind == CHK_READ)
			m->last_psn = roce_psn_add(
				m->first_psn, chk_read_psns(m->len, mtu) - 1);
	}
}

/* The MTU became known: READs already sent consume PSNs by it. */
static void set_mtu(struct chk_flow *fl, uint32_t mtu)
{
	fl->mtu = mtu;
	for (unsigned d = 0; d < 2; d++) {
		struct chk_dir *dd = &fl->dir[d];
		if (dd->read_open) {
			/* the newest request, a READ: now its span is known */
			dd->read_open = false;
			uint32_t end = roce_psn_add(dd->read_req_psn,
				chk_read_psns(dd->read_req_len, mtu));
			if (roce_psn_cmp(end, dd->high_psn) > 0)
				dd->next_psn = dd->high_psn = end;
		}
		chk_read_spans(dd, mtu);
	}
}

void chk_mtu(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_flow *fl = p->fl;
	uint32_t n = p->ib->payload_len;

	if (p->flags & (ROCE_OPF_FIRST | ROCE_OPF_MIDDLE)) {
		if (!roce_is_path_mtu(n)) {	/* no path MTU at all: not learnt */
			chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
				   "PAYLOAD-MTU", "%s carries %u bytes, which is no "
				   "path MTU (256, 512, 1024, 2048, 4096): FIRST "
				   "and MIDDLE packets carry exactly the path MTU "
				   "(9.7.5.1)", p->ib->op->name, n);
			return;
		}
		if (!fl->mtu)
			set_mtu(fl, n);
		else if (n != fl->mtu)
			chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
				   "PAYLOAD-MTU", "%s carries %u bytes where this "
				   "flow's path MTU is %u: FIRST and MIDDLE "
				   "packets carry exactly the path MTU "
				   "(9.7.5.1)", p->ib->op->name, n, fl->mtu);
		return;
	}
	if ((p->flags & ROCE_OPF_LAST) && n == 0)
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "PAYLOAD-MTU", "%s carries no payload: a LAST packet "
			   "carries 1 byte up to the path MTU (9.7.5.1)",
			   p->ib->op->name);
	uint32_t limit = fl->mtu ? fl->mtu : 4096;
	if ((p->flags & (ROCE_OPF_LAST | ROCE_OPF_ONLY)) && n > limit)
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "PAYLOAD-MTU", "%s carries %u bytes, more than the path "
			   "MTU %u: LAST and ONLY packets carry at most the "
			   "path MTU (9.7.5.1)", p->ib->op->name, n, limit);
}

void chk_len_req(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;

	chk_mtu(c, p);
	d->msg_bytes += p->ib->payload_len;
	if (!(p->flags & (ROCE_OPF_LAST | ROCE_OPF_ONLY)) ||
	    d->msg_kind != CHK_WRITE || !d->msg_counted || !d->msg_has_reth)
		return;
	if (d->msg_bytes != d->msg_reth_len)
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "WRITE-LENGTH", "the RDMA WRITE begun at frame %llu "
			   "carries %llu bytes but its RETH says %u: the DMA "
			   "length is the length of the data the message "
			   "carries (9.4.2)", (unsigned long long)d->msg_no,
			   (unsigned long long)d->msg_bytes, d->msg_reth_len);
}
