/* SPDX-License-Identifier: MIT */
/* Length rules: the path MTU, the RETH length of a WRITE, READ responses against their READ. */
#include "check_local.h"

uint32_t chk_read_psns(uint32_t len, uint32_t mtu)
{
	if (!mtu)
		mtu = 4096;
	return len ? (uint32_t)(((uint64_t)len + mtu - 1) / mtu) : 1;
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
		for (unsigned i = 0; i < dd->cap; i++) {
			struct chk_msg *m = &dd->ring[i];
			if (m->kind == CHK_READ)
				m->last_psn = roce_psn_add(
					m->first_psn,
					chk_read_psns(m->len, mtu) - 1);
		}
	}
}

void chk_mtu(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_flow *fl = p->fl;
	uint32_t n = p->ib->payload_len;

	if (p->flags & (ROCE_OPF_FIRST | ROCE_OPF_MIDDLE)) {
		if (!roce_is_path_mtu(n)) {	/* no path MTU at all: not learnt */
			chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
				   "9.7.5.1", "%s carries %u bytes, which is no "
				   "path MTU (256, 512, 1024, 2048, 4096): FIRST "
				   "and MIDDLE packets carry exactly the path MTU "
				   "(9.7.5.1)", p->ib->op->name, n);
			return;
		}
		if (!fl->mtu)
			set_mtu(fl, n);
		else if (n != fl->mtu)
			chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
				   "9.7.5.1", "%s carries %u bytes where this "
				   "flow's path MTU is %u: FIRST and MIDDLE "
				   "packets carry exactly the path MTU "
				   "(9.7.5.1)", p->ib->op->name, n, fl->mtu);
		return;
	}
	if ((p->flags & ROCE_OPF_LAST) && n == 0)
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "9.7.5.1", "%s carries no payload: a LAST packet "
			   "carries 1 byte up to the path MTU (9.7.5.1)",
			   p->ib->op->name);
	uint32_t limit = fl->mtu ? fl->mtu : 4096;
	if ((p->flags & (ROCE_OPF_LAST | ROCE_OPF_ONLY)) && n > limit)
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "9.7.5.1", "%s carries %u bytes, more than the path "
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
			   "9.4.2", "the RDMA WRITE begun at frame %llu "
			   "carries %llu bytes but its RETH says %u: the DMA "
			   "length is the length of the data the message "
			   "carries (9.4.2)", (unsigned long long)d->msg_no,
			   (unsigned long long)d->msg_bytes, d->msg_reth_len);
}

/* The READ a response packet belongs to; NULL when none is known. */
static struct chk_msg *read_of(struct chk_dir *d, uint32_t psn)
{
	struct chk_msg *m = chk_msg_find(d, psn);

	return m && m->kind == CHK_READ ? m : NULL;
}

static void read_done(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;
	struct chk_msg *m = chk_msg_get(d, d->read_seq);

	d->in_read = false;
	if (!d->read_whole || !m || m->kind != CHK_READ)
		return;
	if (d->read_bytes != m->len)
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "9.4.3", "the READ response ending here carries "
			   "%llu bytes, but the RDMA READ at frame %llu asked "
			   "for %u: a READ response returns exactly the RETH "
			   "length (9.4.3)", (unsigned long long)d->read_bytes,
			   (unsigned long long)m->no, m->len);
	else if (p->psn != m->last_psn)
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "9.4.3", "the READ response ends at PSN 0x%06x; "
			   "the RDMA READ at frame %llu (%u bytes, MTU %u) "
			   "consumes PSNs 0x%06x..0x%06x (9.4.3)", p->psn,
			   (unsigned long long)m->no, m->len, p->fl->mtu,
			   m->first_psn, m->last_psn);
}

/*
 * A MIDDLE or LAST that does not follow the previous response packet
 * while a READ is being answered: past the READ's last PSN it breaks the
 * count (an error); inside it, packets went missing from the capture and
 * the byte count is no longer whole. True when it belongs to the READ.
 */
static bool continues_read(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;
	struct chk_msg *m = chk_msg_get(d, d->read_seq);

	if (!m || m->kind != CHK_READ ||
	    roce_psn_cmp(p->psn, d->read_next_psn) < 0)
		return false;
	if (roce_psn_cmp(p->psn, m->last_psn) > 0 && read_of(d, p->psn))
		return false;	/* the next READ's, its start not captured */
	if (roce_psn_cmp(p->psn, m->last_psn) > 0)
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
			   "9.4.3", "%s at PSN 0x%06x lies past the PSNs "
			   "0x%06x..0x%06x the RDMA READ at frame %llu (%u "
			   "bytes, MTU %u) consumes (9.4.3)", p->ib->op->name,
			   p->psn, m->first_psn, m->last_psn,
			   (unsigned long long)m->no, m->len, p->fl->mtu);
	d->read_whole = false;
	return true;
}

void chk_read_resp(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;
	bool starts = p->flags & (ROCE_OPF_FIRST | ROCE_OPF_ONLY);

	chk_answer_psn(c, p, p->psn);
	if (!d->started || roce_psn_cmp(p->psn, d->first_psn) < 0)
		return;	/* its READ is before the capture began */
	bool skipped = d->in_read && p->psn != d->read_next_psn;

	if (!starts && skipped && continues_read(c, p)) {
		/* judged: the READ goes on, its byte count no longer whole */
	} else if (starts || !d->in_read || skipped) {
		struct chk_msg *m = read_of(d, p->psn);
		if (!m) {
			if (roce_psn_cmp(p->psn, d->high_psn) < 0 &&
			    !d->ngaps && !chk_psn_lost(d, p->psn) &&
			    !chk_msg_forgotten(d, p->psn))
				chk_report(c, p->no, p->flow, p->dir,
					   ROCE_CHECK_ERROR, "9.7.5.2",
					   "%s for PSN 0x%06x answers no RDMA "
					   "READ: the requester sent none "
					   "there (9.7.5.2)", p->ib->op->name,
					   p->psn);
			d->in_read = false;
			return;
		}
		d->in_read = true;
		d->read_seq = m->seq;
		d->read_whole = starts && p->psn == m->first_psn;
		d->read_bytes = 0;
	}
	d->read_bytes += p->ib->payload_len;
	d->read_next_psn = roce_psn_add(p->psn, 1);
	if (p->flags & (ROCE_OPF_LAST | ROCE_OPF_ONLY))
		read_done(c, p);
}
