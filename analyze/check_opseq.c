/* SPDX-License-Identifier: MIT */
/* Opcode sequence of a requester's messages: FIRST, MIDDLE..., LAST or ONLY, one message at a time. */
#include "check_local.h"

const char *chk_kind_name(unsigned k)
{
	static const char *const names[] = { "SEND", "RDMA WRITE", "RDMA READ",
					     "atomic", "FLUSH/ATOMIC WRITE" };
	return k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

static void start(struct chk_dir *d, const struct chk_pkt *p, unsigned kind)
{
	d->msg_kind = (uint8_t)kind;
	d->msg_counted = true;
	d->msg_no = p->no;
	d->msg_first_psn = p->psn;
	d->msg_bytes = 0;
	d->msg_has_reth = p->ib->exts & ROCE_EXT_RETH;
	d->msg_reth_len = p->ib->reth.len;
	d->msg_va = p->ib->reth.va;
	d->msg_rkey = p->ib->reth.rkey;
	if (p->ib->exts & ROCE_EXT_ATMETH) {
		d->msg_has_reth = true;
		d->msg_va = p->ib->atmeth.va;
		d->msg_rkey = p->ib->atmeth.rkey;
		d->msg_reth_len = 8;
	}
}

/* A message ended: remember it for the answers, when it is new. */
static void end(struct chk_dir *d, const struct chk_pkt *p, bool fresh)
{
	if (!fresh)
		return;
	uint32_t first = d->msg_counted ? d->msg_first_psn : p->psn;
	struct chk_msg *m = chk_msg_add(d, d->msg_counted ? d->msg_no : p->no,
					first, (enum chk_kind)d->msg_kind);
	if (!m)
		return;
	m->last_psn = p->psn;
	m->needs_recv = d->msg_kind == CHK_SEND ||
			(d->msg_kind == CHK_WRITE &&
			 (p->ib->exts & ROCE_EXT_IMMDT));
	m->inval = p->ib->exts & ROCE_EXT_IETH;
	m->reth = d->msg_has_reth;
	m->va = d->msg_va;
	m->rkey = d->msg_rkey;
	m->dma_len = d->msg_reth_len;
	if (d->msg_kind == CHK_READ) {
		/* the MTU seen, else the one READ spans showed, else 4096 */
		uint32_t mtu = p->fl->mtu ? p->fl->mtu : d->mtu_guess;
		m->len = p->ib->reth.len;
		m->last_psn = roce_psn_add(first,
					   chk_read_psns(m->len, mtu) - 1);
	}
}

void chk_opseq(struct roce_check *c, const struct chk_pkt *p, bool fresh)
{
	struct chk_dir *d = p->req;
	unsigned kind = chk_kind_of(p->flags);
	const char *name = p->ib->op->name;

	if (p->flags & (ROCE_OPF_FIRST | ROCE_OPF_ONLY)) {
		if (d->pos == POS_IN)
			chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
				   "MSG-OPCODES", "%s (PSN 0x%06x) starts a new message "
				   "inside the %s message begun at frame %llu: "
				   "a message ends with a LAST before the next "
				   "one begins (9.4)", name, p->psn,
				   chk_kind_name(d->msg_kind),
				   (unsigned long long)d->msg_no);
		start(d, p, kind);
	} else if (d->pos == POS_OUT) {
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR, "MSG-OPCODES",
			   "%s (PSN 0x%06x) with no FIRST before it: a message "
			   "of several packets begins with a FIRST (9.4)", name,
			   p->psn);
		start(d, p, kind);
		d->msg_counted = false;
	} else if (d->pos == POS_IN && d->msg_kind != kind) {
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR, "MSG-OPCODES",
			   "%s (PSN 0x%06x) continues the %s message begun at "
			   "frame %llu: MIDDLE and LAST carry the operation of "
			   "their FIRST (9.4)", name, p->psn,
			   chk_kind_name(d->msg_kind),
			   (unsigned long long)d->msg_no);
		d->msg_kind = (uint8_t)kind;
		d->msg_counted = false;
	} else if (d->pos == POS_UNKNOWN) {
		start(d, p, kind);
		d->msg_counted = false;	/* its start is not in view */
	}
	if (p->flags & (ROCE_OPF_LAST | ROCE_OPF_ONLY)) {
		end(d, p, fresh);
		d->pos = POS_OUT;
	} else {
		d->pos = POS_IN;
	}
}
