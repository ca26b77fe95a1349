/* SPDX-License-Identifier: MIT */
/* rocemu's answers beside the captured responder's, field by field, and why rocemu decided as it did. */
#include <inttypes.h>
#include <string.h>

#include "conform.h"
#include "replay.h"
#include "rocemu/aeth.h"
#include "rocemu/dissect.h"
#include "rocemu/psn.h"

/*
 * What a responder decides, and so what is compared: the transport
 * fields and the payload. Not compared, because they say where and when
 * rather than what: MAC and IP addresses' framing, IP ID, TTL, traffic
 * class, UDP source port and checksum, the ICRC (it follows from the
 * rest) and timestamps.
 */
struct diff {
	char text[RP_DIFF_LEN];
	size_t len;
};

static void note(struct diff *d, const char *field, uint64_t cap,
		 uint64_t emu)
{
	if (cap == emu || d->len >= sizeof(d->text) - 80)
		return;
	d->len += (size_t)snprintf(d->text + d->len, sizeof(d->text) - d->len,
				   "%s%s: captured 0x%" PRIx64
				   ", rocemu 0x%" PRIx64,
				   d->len ? "; " : "", field, cap, emu);
}

static void payload(struct diff *d, const struct roce_ib *a,
		    const struct roce_ib *b)
{
	note(d, "payload length", a->payload_len, b->payload_len);
	uint32_t n = a->payload_avail < b->payload_avail ? a->payload_avail
							  : b->payload_avail;
	for (uint32_t i = 0; i < n && a->payload_len == b->payload_len; i++)
		if (a->payload[i] != b->payload[i]) {
			char f[48];
			snprintf(f, sizeof(f), "payload byte %u", i);
			note(d, f, a->payload[i], b->payload[i]);
			return;
		}
}

/* Fills d with every field in which b (rocemu's) differs from a. */
static void compare(const struct roce_frame *a, const struct roce_frame *b,
		    struct diff *d)
{
	const struct roce_ib *x = &a->ib, *y = &b->ib;

	d->len = 0;
	d->text[0] = 0;
	note(d, "opcode", x->bth.opcode, y->bth.opcode);
	note(d, "psn", x->bth.psn, y->bth.psn);
	note(d, "dqpn", x->bth.dqpn, y->bth.dqpn);
	note(d, "se", x->bth.se, y->bth.se);
	note(d, "ackreq", x->bth.ackreq, y->bth.ackreq);
	note(d, "pkey", x->bth.pkey, y->bth.pkey);
	if (x->bth.opcode != y->bth.opcode)
		return;		/* different headers follow */
	if (x->exts & ROCE_EXT_AETH) {
		note(d, "aeth syndrome", x->aeth.syndrome, y->aeth.syndrome);
		note(d, "aeth msn", x->aeth.msn, y->aeth.msn);
	}
	if (x->exts & ROCE_EXT_ATMACK)
		note(d, "atomic ack original value", x->atmack, y->atmack);
	if (x->exts & ROCE_EXT_RETH) {
		note(d, "reth va", x->reth.va, y->reth.va);
		note(d, "reth rkey", x->reth.rkey, y->reth.rkey);
		note(d, "reth length", x->reth.len, y->reth.len);
	}
	if (x->exts & ROCE_EXT_ATMETH) {
		note(d, "atomiceth va", x->atmeth.va, y->atmeth.va);
		note(d, "atomiceth rkey", x->atmeth.rkey, y->atmeth.rkey);
		note(d, "atomiceth swap/add", x->atmeth.swap_add,
		     y->atmeth.swap_add);
		note(d, "atomiceth compare", x->atmeth.compare,
		     y->atmeth.compare);
	}
	if (x->exts & ROCE_EXT_IMMDT)
		note(d, "immediate", x->imm, y->imm);
	if (x->exts & ROCE_EXT_IETH)
		note(d, "ieth rkey", x->ieth, y->ieth);
	payload(d, x, y);
}

bool rp_frame_diff(const struct roce_frame *cap, const struct roce_frame *emu,
		   char text[RP_DIFF_LEN])
{
	struct diff d;

	compare(cap, emu, &d);
	memcpy(text, d.text, d.len + 1);
	return d.len != 0;
}

void rp_line(FILE *out, const char *who, const struct roce_frame *f,
		 uint64_t no, int64_t rel_ns)
{
	char text[1024];
	struct roce_sb sb;
	struct roce_dissect_in in = { .frame_no = no, .rel_ns = rel_ns,
				      .caplen = f->wire_len };

	roce_sb_init(&sb, text, sizeof(text));
	roce_fmt_line(&sb, &in, f);
	fprintf(out, "    %-9s %.*s", who, (int)sb.len, text);
}

int64_t rp_rel(const struct rp_plan *p, size_t k)
{
	/* the capture's first packet, not the flow's */
	return (int64_t)(rp_pkt(p, k)->ts_ns - p->cap->pkts[0].ts_ns);
}

/* The counters that moved while rocemu handled the request fed last
 * before answer s, in words. */
static void why(FILE *out, const struct rp_plan *p,
		const struct rp_result *res, size_t fed)
{
	if (fed >= res->fed)
		return;
	size_t k = res->fed_at[fed];
	const uint64_t *d = &res->deltas[fed * ROCEMU_CNT_COUNTER_MAX];
	fprintf(out, "    rocemu, handling request #%" PRIu64 ":",
		rp_pkt(p, k)->no);
	unsigned moved = 0;
	for (int c = 0; c < ROCEMU_CNT_COUNTER_MAX; c++)
		if (d[c] && c != ROCEMU_CNT_RX_PACKETS &&
		    c != ROCEMU_CNT_TX_PACKETS) {
			fprintf(out, " %s +%" PRIu64, rocemu_counter_name(c),
				d[c]);
			moved++;
		}
	if (!moved)
		fprintf(out, " received %" PRIu64 ", sent %" PRIu64
			     ", no drop, NAK or duplicate counted",
			d[ROCEMU_CNT_RX_PACKETS], d[ROCEMU_CNT_TX_PACKETS]);
	fprintf(out, "\n    rocemu's QP at the end: %s\n", res->qp_state);
}

/* What rocemu counted over the whole run, for a UC or UD receiver that
 * took fewer messages than it had receives for: the reasons it dropped. */
static void drops(FILE *out, const struct rp_result *res)
{
	fprintf(out, "    rocemu's counters over the run:");
	for (int c = 0; c < ROCEMU_CNT_COUNTER_MAX; c++) {
		uint64_t sum = 0;
		for (size_t k = 0; k < res->fed; k++)
			sum += res->deltas[k * ROCEMU_CNT_COUNTER_MAX + c];
		if (sum && c != ROCEMU_CNT_RX_PACKETS &&
		    c != ROCEMU_CNT_TX_PACKETS)
			fprintf(out, " %s +%" PRIu64, rocemu_counter_name(c),
				sum);
	}
	fprintf(out, "\n");
}

void rp_head(FILE *out, const struct rp_plan *p)
{
	char a[96], b[96];

	fprintf(out, "flow %u %s %s > %s", p->fl->id,
		roce_flow_kind_name(p->fl->kind),
		roce_flow_end_text(&p->fl->end[p->req], a, sizeof(a)),
		roce_flow_end_text(&p->fl->end[1 - p->req], b, sizeof(b)));
}

/* The next captured answer at or after from, or p->n. */
static size_t next_answer(const struct rp_plan *p, size_t from)
{
	while (from < p->n && !rp_is_answer(p, from))
		from++;
	return from;
}

static bool plain_ack(const struct roce_frame *f)
{
	return f->ib.bth.opcode == ROCE_OP_RC_ACK &&
	       roce_aeth_type(f->ib.aeth.syndrome) == ROCE_AETH_ACK;
}

/*
 * A responder may acknowledge several requests with one ACK (the IBTA's
 * coalesced acknowledgements, chapter 9.7), and when it does depends on
 * timing, not on rules. Two positive ACKs that differ only there: -1 when rocemu's
 * acknowledges less (it answered earlier; skip rocemu's), 1 when it
 * acknowledges more (the captured responder answered earlier; skip the
 * captured one), 0 when this is not such a pair.
 */
static int coalesced(const struct roce_frame *cap, const struct roce_frame *emu)
{
	if (!plain_ack(cap) || !plain_ack(emu) ||
	    cap->ib.aeth.syndrome != emu->ib.aeth.syndrome ||
	    cap->ib.bth.dqpn != emu->ib.bth.dqpn)
		return 0;
	int32_t psn = roce_psn_cmp(emu->ib.bth.psn, cap->ib.bth.psn);
	int32_t msn = roce_psn_cmp(emu->ib.aeth.msn, cap->ib.aeth.msn);
	if (psn < 0 && msn <= 0)
		return -1;
	if (psn > 0 && msn >= 0)
		return 1;
	return 0;
}

/* The opcode of the request rocemu was handling when it sent answer ri,
 * or -1. */
static int request_of(const struct rp_plan *p, const struct rp_result *res,
		      size_t ri)
{
	if (ri >= res->nsent || res->sent[ri].after >= res->fed ||
	    res->fed_at[res->sent[ri].after] >= p->n)
		return -1;
	return rp_pkt(p, res->fed_at[res->sent[ri].after])->f.ib.bth.opcode;
}

/* The ID of the entry of the list that describes rocemu answering ri
 * otherwise than the capture's k, or NULL. */
static const char *known_divergence(const struct rp_plan *p,
				    const struct rp_result *res,
				    const struct cf_diffs *known, size_t k,
				    size_t ri)
{
	int op = request_of(p, res, ri);

	if (!known || op < 0 || k >= p->n)
		return NULL;
	return cf_diffs_replay_match(known, (uint8_t)op, &rp_pkt(p, k)->f,
				     &res->sent[ri].f);
}

/* Prints "known difference ID", and " (IBTA SECTIONS)" when the list's
 * entry names the rule that decides it. */
static void known_label(FILE *out, const struct cf_diffs *known,
			const char *id)
{
	const char *ibta = cf_diffs_ibta(known, id);

	fprintf(out, "known difference %s", id);
	if (ibta)
		fprintf(out, " (IBTA %s)", ibta);
}

static void divergence(FILE *out, const struct rp_plan *p,
		       const struct rp_result *res, size_t ci, size_t k,
		       size_t ri, const char *what, const struct cf_diffs *known,
		       const char *id)
{
	rp_head(out, p);
	if (id) {
		fprintf(out, ": answer %zu diverges as ", ci + 1);
		known_label(out, known, id);
		fprintf(out, ": %s\n", what);
	}
	else
		fprintf(out, ": answer %zu diverges: %s\n", ci + 1, what);
	if (k < p->n)
		rp_line(out, "captured", &rp_pkt(p, k)->f, rp_pkt(p, k)->no,
		     rp_rel(p, k));
	else
		fprintf(out, "    captured  (nothing more)\n");
	if (ri < res->nsent)
		rp_line(out, "rocemu", &res->sent[ri].f, 0, 0);
	else
		fprintf(out, "    rocemu    (nothing)\n");
	why(out, p, res,
	    ri < res->nsent ? res->sent[ri].after
			    : (res->fed ? res->fed - 1 : 0));
}

int rp_compare(const struct rp_plan *p, const struct rp_result *res,
	       const struct cf_diffs *known, bool verbose, FILE *out,
	       const char **known_id)
{
	size_t k = next_answer(p, 0), ci = 0, ri = 0, same = 0, merged = 0;
	const char *id = NULL;
	struct diff d;

	*known_id = NULL;
	while (k < p->n || ri < res->nsent) {
		if (k >= p->n || ri >= res->nsent) {
			divergence(out, p, res, ci, k, ri,
				   k >= p->n ? "rocemu sent more"
						  : "rocemu sent no such answer",
				   known, NULL);
			goto diverged;
		}
		const struct roce_frame *cf = &rp_pkt(p, k)->f;
		const struct roce_frame *rf = &res->sent[ri].f;
		compare(cf, rf, &d);
		int co = d.len ? coalesced(cf, rf) : 0;
		if (d.len && !co) {
			id = known_divergence(p, res, known, k, ri);
			divergence(out, p, res, ci, k, ri, d.text, known, id);
			goto diverged;
		}
		if (co)
			merged++;
		else if (verbose)
			rp_line(out, "same", cf, rp_pkt(p, k)->no, rp_rel(p, k));
		same += !co;
		if (co <= 0)
			ri++;
		if (co >= 0) {
			k = next_answer(p, k + 1);
			ci++;
		}
	}
	rp_head(out, p);
	fprintf(out, ": %zu requests fed, ", res->fed - res->cut);
	if (p->fl->kind == ROCE_FLOW_RC)
		fprintf(out, "%zu answers the same", same);
	else
		fprintf(out, "nothing answered (%s defines no answer)",
			roce_flow_kind_name(p->fl->kind));
	const char *cid = known ? cf_diffs_coalesced(known) : NULL;
	if (merged)
		fprintf(out, ", %zu ACKs coalesced otherwise", merged);
	if (merged && cid) {
		fprintf(out, " (");
		known_label(out, known, cid);
		fprintf(out, ")");
	}
	if (res->receives)
		fprintf(out, ", %zu of %zu receives completed", res->received,
			res->receives);
	fprintf(out, ", no divergence\n");
	if (p->fl->kind != ROCE_FLOW_RC && res->received < res->receives)
		drops(out, res);
	return 0;
diverged:
	rp_head(out, p);
	fprintf(out, ": %zu requests fed, diverges at answer %zu of %zu",
		res->fed - res->cut, ci + 1, p->nresp);
	if (id) {
		fprintf(out, " as ");
		known_label(out, known, id);
	}
	fprintf(out, "\n");
	*known_id = id;
	return 1;
}
