/* SPDX-License-Identifier: MIT */
/* The rule checker's driver: per-flow state by flow id, each packet handed to the rule files in turn. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/aeth.h"
#include "rocemu/rules.h"

#include "check_local.h"

struct roce_check *roce_check_new(uint32_t mtu, roce_check_cb cb, void *arg)
{
	if (mtu && !roce_is_path_mtu(mtu))
		return NULL;
	struct roce_check *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->mtu = mtu;
	c->cb = cb;
	c->arg = arg;
	return c;
}

void roce_check_free(struct roce_check *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->nflows; i++)
		for (unsigned d = 0; d < 2; d++)
			chk_msgs_free(&c->flows[i].dir[d]);
	chk_cm_free(c);
	free(c->flows);
	free(c);
}

/* An error names its rule by ID; the finding cites the book's section
 * unless the caller chose one. An ID the book lacks is cited as given. */
static void name_rule(struct roce_violation *v, const char *rule)
{
	if (v->cls != ROCE_CHECK_ERROR) {
		v->rule = rule;
		return;
	}
	const struct roce_rule *r = roce_rule_find(rule);
	v->id = rule;
	if (!v->rule)
		v->rule = r ? r->section : rule;
}

static void report(struct roce_check *c, struct roce_violation *v,
		   const char *fmt, va_list ap)
{
	vsnprintf(v->text, sizeof(v->text), fmt, ap);
	bool loss = v->cls == ROCE_CHECK_LOSS;
	if (v->cls == ROCE_CHECK_REASON) {
		c->reasons++;	/* no rule broken: not an error */
		if (c->cb)
			c->cb(v, c->arg);
		return;
	}
	if (loss)
		c->losses += v->packets;
	else
		c->errors++;
	if (v->flow < c->nflows) {
		if (loss)
			c->flows[v->flow].losses += v->packets;
		else
			c->flows[v->flow].errors++;
	}
	if (c->cb)
		c->cb(v, c->arg);
}

void chk_report(struct roce_check *c, uint64_t no, unsigned flow,
		unsigned dir, enum roce_check_class cls, const char *rule,
		const char *fmt, ...)
{
	struct roce_violation v = { .no = no, .flow = flow, .dir = dir,
				    .cls = cls, .packets = 1 };
	va_list ap;

	name_rule(&v, rule);
	va_start(ap, fmt);
	report(c, &v, fmt, ap);
	va_end(ap);
}

void chk_report_also(struct roce_check *c, uint64_t no, uint64_t also,
		     unsigned flow, unsigned dir, enum roce_check_class cls,
		     const char *rule, const char *fmt, ...)
{
	struct roce_violation v = { .no = no, .flow = flow, .dir = dir,
				    .cls = cls, .packets = 1, .also = also };
	va_list ap;

	name_rule(&v, rule);
	va_start(ap, fmt);
	report(c, &v, fmt, ap);
	va_end(ap);
}

void chk_report_loss(struct roce_check *c, uint64_t no, unsigned flow,
		     unsigned dir, uint32_t lo, uint32_t hi, const char *rule,
		     const char *fmt, ...)
{
	struct roce_violation v = { .no = no, .flow = flow, .dir = dir,
				    .cls = ROCE_CHECK_LOSS,
				    .packets = roce_psn_diff(hi, lo) + 1 };
	va_list ap;

	name_rule(&v, rule);
	va_start(ap, fmt);
	report(c, &v, fmt, ap);
	va_end(ap);
}

enum chk_kind chk_kind_of(unsigned flags)
{
	if (flags & ROCE_OPF_SEND)
		return CHK_SEND;
	if (flags & ROCE_OPF_WRITE)
		return CHK_WRITE;
	if (flags & ROCE_OPF_READ)
		return CHK_READ;
	if ((flags & ROCE_OPF_ATOMIC) && !(flags & ROCE_OPF_PAYLOAD))
		return CHK_ATOMIC;
	return CHK_OTHER;
}

/* Grows the table (doubling: no allocation per packet) to hold id. */
static struct chk_flow *flow_slot(struct roce_check *c, unsigned id)
{
	if (id >= c->nflows) {
		unsigned n = c->nflows ? c->nflows : 16;
		while (n <= id)
			n *= 2;
		struct chk_flow *fl = realloc(c->flows, n * sizeof(*fl));
		if (!fl)
			return NULL;
		memset(fl + c->nflows, 0, (n - c->nflows) * sizeof(*fl));
		c->flows = fl;
		c->nflows = n;
	}
	return &c->flows[id];
}

static void judge_request(struct roce_check *c, const struct chk_pkt *p)
{
	if (p->fl->kind == ROCE_FLOW_UD)
		return;	/* UD: the opcode table admits only SEND_ONLY(_IMM) */
	bool fresh = chk_req_psn(c, p);
	if (!fresh)
		p->fl->retransmitted++;
	chk_why_req(p);
	chk_fatal_req(c, p, fresh);
	chk_seqnak_req(p, fresh);
	if (!fresh && chk_kind_of(p->flags) == CHK_READ)
		chk_read_again(p);
	chk_opseq(c, p, fresh);
	chk_rnr_req(c, p, fresh);
	chk_rd_req(c, p, fresh);
	if (p->ib->exts == p->ib->op->exts) {
		chk_len_req(c, p);
		chk_atomic_req(c, p);
	} else {
		/* The capture cut into its extension headers: its place in
		 * the message counts, its lengths and addresses are lost. */
		p->req->msg_counted = false;
	}
	chk_ackreq(c, p, fresh);
	struct chk_dir *d = p->req;
	d->req_ts = c->now;
	if (!d->min_req_len || p->f->wire_len < d->min_req_len)
		d->min_req_len = p->f->wire_len;
}

static void judge_response(struct roce_check *c, const struct chk_pkt *p)
{
	if (p->fl->kind != ROCE_FLOW_RC || p->ib->exts != p->ib->op->exts)
		return;	/* UC has no answers; a cut header says nothing */
	chk_fatal_answer(c, p);
	if (p->flags & ROCE_OPF_READ) {
		chk_mtu(c, p);
		chk_read_resp(c, p);
	}
	if (p->ib->exts & ROCE_EXT_AETH) {
		uint8_t syn = p->ib->aeth.syndrome;
		chk_aeth(c, p);
		if (roce_aeth_type(syn) == ROCE_AETH_RNR_NAK &&
		    (p->flags & ROCE_OPF_ACK) && !(p->flags & ROCE_OPF_ATOMIC))
			chk_rnr_nak(c, p, roce_aeth_value(syn));
	}
	if (p->flags & ROCE_OPF_ATOMIC)
		chk_atomic_ack(c, p);
	chk_rd_answer(p);
}

int roce_check_packet(struct roce_check *c, uint64_t no,
		      const struct roce_frame *f, int rc, const char *why,
		      unsigned flow, unsigned dir, enum roce_flow_kind kind)
{
	if (c->finished)
		return 0;
	struct chk_flow *fl = NULL;
	if (flow != ROCE_CHECK_NO_FLOW) {
		fl = flow_slot(c, flow);
		if (!fl)
			return -ENOMEM;
		if (!fl->used) {
			fl->used = true;
			fl->kind = (uint8_t)kind;
			fl->mtu = c->mtu;
		}
	}
	chk_frame(c, no, f, rc, why, flow, dir);
	if (fl)
		fl->dir[dir & 1].packets++;
	if (!fl || !f->ib.op || kind == ROCE_FLOW_OTHER || dir > 1)
		return 0;
	struct chk_pkt p = {
		.no = no, .f = f, .ib = &f->ib, .flags = f->ib.op->flags,
		.psn = f->ib.bth.psn, .flow = flow, .dir = dir, .fl = fl,
	};
	if (rc) {
		/* Malformed, reported: a request still takes its PSN, so
		 * that it is not counted again as a gap. */
		if ((p.flags & ROCE_OPF_REQ) && kind != ROCE_FLOW_UD) {
			p.req = &fl->dir[dir];
			chk_req_psn(c, &p);
			p.req->pos = POS_UNKNOWN;
		}
		return 0;
	}
	if (kind == ROCE_FLOW_UD) {
		chk_cm_mad(c, no, f, flow, dir);
	} else if (kind == ROCE_FLOW_RC && (p.flags & ROCE_OPF_REQ)) {
		p.req = &fl->dir[dir];	/* the CM tells it its bounds */
		chk_cm_data(c, &p);
	}
	if (p.flags & ROCE_OPF_REQ) {
		p.req = &fl->dir[dir];
		judge_request(c, &p);
	} else if (p.flags & ROCE_OPF_RESP) {
		p.req = &fl->dir[1 - dir];
		judge_response(c, &p);
	}
	return 0;
}

void roce_check_time(struct roce_check *c, uint64_t ts_ns)
{
	c->now = ts_ns;
	c->timed = true;
}

void roce_check_finish(struct roce_check *c)
{
	if (c->finished)
		return;
	for (unsigned i = 0; i < c->nflows; i++) {
		if (!c->flows[i].used || c->flows[i].kind != ROCE_FLOW_RC)
			continue;
		for (unsigned d = 0; d < 2; d++) {
			chk_seqnak_finish(c, i, d);
			chk_psn_finish(c, i, d);
			chk_why_finish(c, i, d);
			chk_rnr_finish(c, i, d);
			chk_rd_finish(c, i, d);
		}
	}
	c->finished = true;
}

bool roce_check_flow_stats(const struct roce_check *c, unsigned flow,
			   struct roce_check_flow_stats *s)
{
	if (flow >= c->nflows || !c->flows[flow].used)
		return false;
	const struct chk_flow *fl = &c->flows[flow];
	*s = (struct roce_check_flow_stats){
		.packets = fl->dir[0].packets + fl->dir[1].packets,
		.errors = fl->errors, .losses = fl->losses,
		.retransmitted = fl->retransmitted, .mtu = fl->mtu,
	};
	return true;
}

uint64_t roce_check_errors(const struct roce_check *c)
{
	return c->errors;
}

uint64_t roce_check_losses(const struct roce_check *c)
{
	return c->losses;
}

uint64_t roce_check_reasons(const struct roce_check *c)
{
	return c->reasons;
}
