/* SPDX-License-Identifier: MIT */
/* READ responses against their READ: the opcode sequence (FIRST, MIDDLE..., LAST, or ONLY), the PSNs it consumes, the bytes it returns. */
#include <stdarg.h>
#include <stdio.h>

#include "check_local.h"

/* The path MTU the READs of p's flow are judged by: seen, given, or the
 * one their PSN spans fitted; 0 while unknown. */
static uint32_t read_mtu(const struct chk_pkt *p)
{
	return p->fl->mtu ? p->fl->mtu : p->req->mtu_guess;
}

/* The last PSN of m's response, when the MTU is known. */
static bool read_last(const struct chk_pkt *p, const struct chk_msg *m,
		      uint32_t *last)
{
	uint32_t mtu = read_mtu(p);

	if (!mtu)
		return false;
	*last = roce_psn_add(m->first_psn, chk_read_psns(m->len, mtu) - 1);
	return true;
}

/* The READ a response packet belongs to; NULL when none is known. */
static struct chk_msg *read_of(struct chk_dir *d, uint32_t psn)
{
	struct chk_msg *m = chk_msg_find(d, psn);

	return m && m->kind == CHK_READ ? m : NULL;
}

/* The response in progress, NULL when its READ is no longer held. */
static struct chk_msg *read_now(struct chk_dir *d)
{
	struct chk_msg *m = chk_msg_get(d, d->read_seq);

	return m && m->kind == CHK_READ ? m : NULL;
}

void chk_read_again(const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;

	d->redo_psn[d->nredo++ % CHK_REDO] = p->psn;
}

/* A READ request was sent at psn again: a response may begin there. */
static bool read_redone(const struct chk_dir *d, uint32_t psn)
{
	for (unsigned i = 0; i < CHK_REDO && i < d->nredo; i++)
		if (d->redo_psn[i] == psn)
			return true;
	return false;
}

/* One sequence finding per response: what follows a broken opcode
 * sequence is broken by it, not again. */
static void flag(struct roce_check *c, const struct chk_pkt *p,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void flag(struct roce_check *c, const struct chk_pkt *p,
		 const char *fmt, ...)
{
	char text[sizeof(((struct roce_violation *)0)->text)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	p->req->read_flagged = true;
	chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR, "READ-RESPONSE", "%s",
		   text);
}

static void read_done(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;
	struct chk_msg *m = read_now(d);
	uint32_t last;

	d->in_read = false;
	if (!m || d->read_flagged)
		return;
	if (d->read_whole && d->read_bytes != m->len) {
		flag(c, p, "the READ response ending here carries %llu bytes, "
			   "but the RDMA READ at frame %llu asked for %u: a "
			   "READ response returns exactly the RETH length "
			   "(9.4.3)", (unsigned long long)d->read_bytes,
		     (unsigned long long)m->no, m->len);
		return;
	}
	/* Whole, at an unknown MTU, it was one ONLY: no MTU is above 4096. */
	bool known = read_last(p, m, &last);
	if (!known && d->read_whole) {
		known = true;
		last = m->last_psn;
	}
	if (known && p->psn != last)
		flag(c, p, "the READ response ends at PSN 0x%06x; the RDMA "
			   "READ at frame %llu (%u bytes, MTU %u) consumes PSNs "
			   "0x%06x..0x%06x (9.4.3)", p->psn,
		     (unsigned long long)m->no, m->len, read_mtu(p),
		     m->first_psn, last);
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
	struct chk_msg *m = read_now(d);

	if (!m || roce_psn_cmp(p->psn, d->read_next_psn) < 0)
		return false;
	/* Past it: the next READ's, its start not captured, or one the
	 * capture lost whole: its PSNs in a request gap, or past all sent
	 * so far (a later request shows the gap, else the answer is
	 * reported at the end as for a PSN never sent). */
	if (roce_psn_cmp(p->psn, m->last_psn) > 0 &&
	    (read_of(d, p->psn) || d->ngaps || chk_psn_lost(d, p->psn) ||
	     roce_psn_cmp(p->psn, d->high_psn) >= 0))
		return false;
	if (roce_psn_cmp(p->psn, m->last_psn) > 0 && !d->read_flagged)
		flag(c, p, "%s at PSN 0x%06x lies past the PSNs "
			   "0x%06x..0x%06x the RDMA READ at frame %llu (%u "
			   "bytes, MTU %u) consumes (9.4.3)", p->ib->op->name,
		     p->psn, m->first_psn, m->last_psn,
		     (unsigned long long)m->no, m->len, p->fl->mtu);
	d->read_whole = false;
	return true;
}

/* A MIDDLE at or past the READ's last PSN: a LAST goes there. */
static void middle_fits(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;
	struct chk_msg *m = read_now(d);
	uint32_t last;

	if (!m || d->read_flagged || !(p->flags & ROCE_OPF_MIDDLE) ||
	    !read_last(p, m, &last) || roce_psn_cmp(p->psn, last) < 0)
		return;
	flag(c, p, "%s at PSN 0x%06x: the RDMA READ at frame %llu (%u bytes, "
		   "MTU %u) takes PSNs 0x%06x..0x%06x, the last a LAST "
		   "(9.4.3)", p->ib->op->name, p->psn,
	     (unsigned long long)m->no, m->len, read_mtu(p), m->first_psn,
	     last);
}

/*
 * The packet that opens a response to m (9.4.3): FIRST or, for a READ of
 * one packet, ONLY; at the PSN of the READ, or of a READ the requester
 * sent again (a duplicate is executed again, a READ re-issued for what
 * is missing answered from its own PSN, 9.7.5.1.1). A MIDDLE or LAST
 * opening it at a capture's start or after a capture gap is judged only
 * where a request began.
 */
static void opening_fits(struct roce_check *c, const struct chk_pkt *p,
			 const struct chk_msg *m)
{
	const char *name = p->ib->op->name;
	uint32_t mtu = read_mtu(p);

	if (!(p->flags & (ROCE_OPF_FIRST | ROCE_OPF_ONLY))) {
		if (p->psn == m->first_psn)
			flag(c, p, "%s at PSN 0x%06x begins the response to "
				   "the RDMA READ at frame %llu: a READ "
				   "response begins with a FIRST, or is one "
				   "ONLY (9.4.3)", name, p->psn,
			     (unsigned long long)m->no);
		return;
	}
	if (p->psn != m->first_psn) {
		if (!read_redone(p->req, p->psn))
			flag(c, p, "%s at PSN 0x%06x restarts the response to "
				   "the RDMA READ at frame %llu with no READ "
				   "sent at that PSN: a response begins at a "
				   "READ's PSN (9.4.3, 9.7.5.1.1)", name,
			     p->psn, (unsigned long long)m->no);
		return;	/* a re-issued READ: its length is not kept */
	}
	/* No path MTU is above 4096: more is several packets at any. */
	uint32_t n = mtu ? chk_read_psns(m->len, mtu) : m->len > 4096 ? 2 : 0;
	if ((p->flags & ROCE_OPF_ONLY) && n > 1 && mtu)
		flag(c, p, "%s answers the RDMA READ at frame %llu of %u bytes, "
			   "%u packets at the path MTU %u: FIRST, MIDDLE..., "
			   "LAST answer it (9.4.3)", name,
		     (unsigned long long)m->no, m->len, n, mtu);
	else if ((p->flags & ROCE_OPF_ONLY) && n > 1)
		flag(c, p, "%s answers the RDMA READ at frame %llu of %u bytes, "
			   "more than one packet at any path MTU: FIRST, "
			   "MIDDLE..., LAST answer it (9.4.3)", name,
		     (unsigned long long)m->no, m->len);
	else if ((p->flags & ROCE_OPF_FIRST) && n == 1)
		flag(c, p, "%s answers the RDMA READ at frame %llu of %u bytes, "
			   "one packet at the path MTU %u: an ONLY answers it "
			   "(9.4.3)", name, (unsigned long long)m->no, m->len,
		     mtu);
}

/* A response packet that does not continue the one in progress: the
 * READ it answers, or the no-READ finding. False when none is known. */
static bool begin(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;
	struct chk_msg *m = read_of(d, p->psn);

	if (!m) {
		if (roce_psn_cmp(p->psn, d->high_psn) < 0 && !d->ngaps &&
		    !chk_psn_lost(d, p->psn) && !chk_msg_forgotten(d, p->psn))
			chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
				   "READ-RESPONSE-FOR-READ", "%s for PSN 0x%06x answers no "
				   "RDMA READ: the requester sent none there "
				   "(9.7.5.2)", p->ib->op->name, p->psn);
		d->in_read = false;
		return false;
	}
	d->in_read = true;
	d->read_seq = m->seq;
	d->read_whole = (p->flags & (ROCE_OPF_FIRST | ROCE_OPF_ONLY)) &&
			p->psn == m->first_psn;
	d->read_flagged = false;
	d->read_bytes = 0;
	opening_fits(c, p, m);
	if (d->read_whole)
		chk_rd_order(c, p, m);
	return true;
}

void chk_read_resp(struct roce_check *c, const struct chk_pkt *p)
{
	struct chk_dir *d = p->req;
	bool starts = p->flags & (ROCE_OPF_FIRST | ROCE_OPF_ONLY);

	chk_answer_psn(c, p, p->psn);
	if (!d->started || roce_psn_cmp(p->psn, d->first_psn) < 0)
		return;	/* its READ is before the capture began */
	/* IBTA 1.5: a FLUSH or ATOMIC WRITE is answered by a READ RESPONSE
	 * ONLY without payload at its PSN (rxe since Linux 6.2): no READ's */
	const struct chk_msg *pm = chk_msg_find(d, p->psn);
	if (pm && pm->kind == CHK_OTHER && pm->first_psn == p->psn &&
	    (p->flags & ROCE_OPF_ONLY) && !p->ib->payload_len) {
		d->in_read = false;
		return;
	}
	bool skipped = d->in_read && p->psn != d->read_next_psn;

	if (!starts && d->in_read && !skipped) {
		/* in order: the response goes on */
	} else if (!starts && skipped && continues_read(c, p)) {
		/* judged: the READ goes on, its byte count no longer whole */
	} else if (!begin(c, p)) {
		return;
	}
	middle_fits(c, p);
	d->read_bytes += p->ib->payload_len;
	d->read_next_psn = roce_psn_add(p->psn, 1);
	if (p->flags & (ROCE_OPF_LAST | ROCE_OPF_ONLY))
		read_done(c, p);
}
