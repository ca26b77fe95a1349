/* SPDX-License-Identifier: MIT */
/* Ladder layout: a chart per flow, a row per packet, WQE and CQE events placed between them. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/aeth.h"
#include "rocemu/dissect.h"
#include "ladder_local.h"

/* Appends a formatted piece to buf (len bytes), keeping it terminated. */
static void append(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* " ACK msn 2", " NAK REM_ACCESS_ERR msn 0", " RNR_NAK 640us msn 0". */
static enum roce_ladder_style aeth_label(const struct roce_aeth *a, char *buf,
					 size_t len)
{
	unsigned type = roce_aeth_type(a->syndrome);
	unsigned val = roce_aeth_value(a->syndrome);

	append(buf, len, " %s", roce_aeth_type_name(type));
	if (type == ROCE_AETH_NAK)
		append(buf, len, " %s", roce_nak_code_name(val));
	else if (type == ROCE_AETH_RNR_NAK)
		append(buf, len, " %" PRIu32 "us", roce_rnr_timer_usec(val));
	append(buf, len, " msn %" PRIu32, a->msn);
	return type == ROCE_AETH_ACK ? ROCE_LADDER_NORMAL : ROCE_LADDER_ERROR;
}

enum roce_ladder_style roce_ladder_packet_label(const struct roce_cap_pkt *p,
						char *buf, size_t len)
{
	const struct roce_ib *ib = &p->f.ib;
	enum roce_ladder_style style = ROCE_LADDER_NORMAL;
	struct roce_sb sb;

	if (!len)
		return style;
	roce_sb_init(&sb, buf, len);
	struct roce_mad_view mv;
	if (!p->parse_rc && roce_frame_mad(&p->f, &mv) == 0) {
		/* A MAD on QP1 is labelled by what it says, not by its UD
		 * header: "CM REQ qpn 0x11 psn 0xa0a00", "CM REJ 8". */
		roce_fmt_mad_summary(&sb, &mv, true);
		buf[sb.len < len ? sb.len : len - 1] = '\0';
		bool bad = mv.kind == ROCE_MAD_CM_BAD ||
			   (mv.kind == ROCE_MAD_CM &&
			    mv.cm.attr_id == ROCE_CM_ATTR_REJ);
		return bad ? ROCE_LADDER_ERROR : ROCE_LADDER_NORMAL;
	}
	roce_fmt_opname(&sb, ib->bth.opcode);
	buf[sb.len < len ? sb.len : len - 1] = '\0';
	append(buf, len, " psn 0x%06" PRIx32, ib->bth.psn);
	if (!ib->op || (ib->op->flags & ROCE_OPF_PAYLOAD))
		append(buf, len, " len %" PRIu32, ib->payload_len);
	if (ib->bth.ackreq)
		append(buf, len, " A");
	if ((ib->exts & ROCE_EXT_RETH) && ib->op &&
	    (ib->op->flags & ROCE_OPF_READ))
		append(buf, len, " read %" PRIu32, ib->reth.len);
	if (ib->exts & ROCE_EXT_AETH)
		style = aeth_label(&ib->aeth, buf, len);
	if (p->parse_rc) {
		append(buf, len, " MALFORMED");
		style = ROCE_LADDER_ERROR;
	}
	return style;
}

static int push_row(struct roce_ladder_chart *ch, size_t *cap,
		    const struct roce_ladder_row *r)
{
	if (ch->n == *cap) {
		size_t c = *cap ? *cap * 2 : 32;
		struct roce_ladder_row *p = realloc(ch->rows, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ch->rows = p;
		*cap = c;
	}
	ch->rows[ch->n++] = *r;
	return 0;
}

/* A name from an event, NUL or not within its ROCEMU_EV_NAME bytes, with
 * every byte outside printable ASCII written as \xNN: a trace is input,
 * and its names reach a terminal and an XML document. */
static const char *printable(const char *s, char *buf)
{
	size_t n = strnlen(s, ROCEMU_EV_NAME), at = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)s[i];
		if (b >= 0x20 && b < 0x7f)
			buf[at++] = (char)b;
		else
			at += (size_t)sprintf(buf + at, "\\x%02x", b);
	}
	buf[at] = '\0';
	return buf;
}


/* A why or state event's text: printable, cut where the label is full. */
static void text_note(const struct rocemu_event *ev, struct roce_ladder_row *r)
{
	char text[ROCEMU_EV_TEXT + 1], rule[4 * ROCEMU_EV_NAME + 1];
	size_t n = strnlen(ev->text, ROCEMU_EV_TEXT);

	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)ev->text[i];
		text[i] = b >= 0x20 && b < 0x7f ? (char)b : '?';
	}
	text[n] = '\0';
	if (ev->kind == ROCEMU_EV_WHY) {
		r->kind = ROCE_LADDER_WHY;
		r->style = ROCE_LADDER_ERROR;
		printable(ev->rule, rule);
		append(r->rule, sizeof(r->rule), "%.*s",
		       (int)sizeof(r->rule) - 1, rule);
		append(r->label, sizeof(r->label), "why: %s", text);
	} else {
		r->kind = ROCE_LADDER_STATE;
		append(r->label, sizeof(r->label), "state: %s", text);
	}
}

static void note_row(const struct rocemu_event *ev, int64_t t0,
		     struct roce_ladder_row *r)
{
	bool wqe = ev->kind == ROCEMU_EV_WQE || ev->kind == ROCEMU_EV_RECV_WQE;
	char op[4 * ROCEMU_EV_NAME + 1], status[4 * ROCEMU_EV_NAME + 1];

	memset(r, 0, sizeof(*r));
	r->rel_ns = (int64_t)ev->time_ns - t0;
	if (ev->kind == ROCEMU_EV_WHY || ev->kind == ROCEMU_EV_STATE) {
		text_note(ev, r);
		return;
	}
	r->kind = wqe ? ROCE_LADDER_WQE : ROCE_LADDER_CQE;
	/* escaped names may not fit: the label is cut where it is full */
	printable(ev->op, op);
	if (wqe) {
		append(r->label, sizeof(r->label),
		       "WQE %s[%" PRIu32 "] %s wr_id %" PRIu64 " len %" PRIu32,
		       ev->kind == ROCEMU_EV_WQE ? "SQ" : "RQ", ev->slot, op,
		       ev->wr_id, ev->len);
		return;
	}
	append(r->label, sizeof(r->label),
	       "CQE CQ[%" PRIu32 "] %s %s wr_id %" PRIu64 " len %" PRIu32,
	       ev->slot, op, printable(ev->status, status), ev->wr_id, ev->len);
	if (strncmp(ev->status, "SUCCESS", ROCEMU_EV_NAME))
		r->style = ROCE_LADDER_ERROR;
}

/* An event of any trace: where it goes (after that many packets of the
 * merged sequence), its chart and column. */
struct placed {
	const struct rocemu_event *ev;
	size_t after;
	size_t chart; /* l->n: none */
	unsigned col;
	size_t seq;   /* its place among all traces' events */
};

/* By chart, then place, then time (two processes' events after the same
 * packet), then input order. */
static int placed_cmp(const void *pa, const void *pb)
{
	const struct placed *a = pa, *b = pb;

	if (a->chart != b->chart)
		return a->chart < b->chart ? -1 : 1;
	if (a->after != b->after)
		return a->after < b->after ? -1 : 1;
	if (a->ev->time_ns != b->ev->time_ns)
		return a->ev->time_ns < b->ev->time_ns ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Per chart: its events (a slice of the sorted placed array), the next
 * to draw, and the rows allocated. */
struct placing {
	struct roce_ladder *l; /* owns the why and state notes' texts */
	const struct placed *ev;
	size_t *cursor, *end, *cap;
	int64_t t0;
};

/* A why or state note's whole text, printable, kept by l for r to point
 * to (r->text; the label holds only its start). 0, or -ENOMEM. */
static int keep_text(struct roce_ladder *l, const struct rocemu_event *ev,
		     struct roce_ladder_row *r)
{
	if (r->kind != ROCE_LADDER_WHY && r->kind != ROCE_LADDER_STATE)
		return 0;
	size_t n = strnlen(ev->text, ROCEMU_EV_TEXT);
	char *t = malloc(n + 1);
	char **grown = reallocarray(l->texts, l->ntexts + 1, sizeof(*grown));
	if (!t || !grown) {
		free(t);
		if (grown)
			l->texts = grown;
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)ev->text[i];
		t[i] = b >= 0x20 && b < 0x7f ? (char)b : '?';
	}
	t[n] = '\0';
	l->texts = grown;
	l->texts[l->ntexts++] = t;
	r->text = t;
	return 0;
}

/* Places chart k's events that go before packet i of the sequence;
 * SIZE_MAX places all that are left. */
static int place_events(struct placing *pl, size_t k, size_t i,
			struct roce_ladder_chart *ch)
{
	struct roce_ladder_row r;

	for (; pl->cursor[k] < pl->end[k]; pl->cursor[k]++) {
		const struct placed *p = &pl->ev[pl->cursor[k]];
		if (i != SIZE_MAX && p->after > i)
			break;
		note_row(p->ev, pl->t0, &r);
		r.col = p->col;
		if (keep_text(pl->l, p->ev, &r) || push_row(ch, &pl->cap[k], &r))
			return -ENOMEM;
	}
	return 0;
}

static void chart_head(const struct roce_flow *f, struct roce_ladder_chart *ch)
{
	ch->flow = f->id;
	for (int d = 0; d < 2; d++)
		roce_flow_end_text(&f->end[d], ch->end[d], sizeof(ch->end[d]));
	snprintf(ch->title, sizeof(ch->title),
		 "flow %u: %s, %" PRIu64 " packets (%" PRIu64 " and %" PRIu64
		 ")",
		 f->id, roce_flow_kind_name(f->kind),
		 f->packets[0] + f->packets[1], f->packets[0], f->packets[1]);
}

static int packet_row(const struct ladder_seq *s, size_t i,
		      struct placing *pl, size_t k,
		      struct roce_ladder_chart *ch)
{
	const struct roce_cap_pkt *p = &s->pkts[i];
	struct roce_ladder_row r;

	if (place_events(pl, k, i, ch))
		return -ENOMEM;
	memset(&r, 0, sizeof(r));
	r.kind = ROCE_LADDER_PACKET;
	r.col = p->dir;
	r.frame_no = p->no;
	r.cap = s->cap[i];
	r.rel_ns = (int64_t)(p->ts_ns - (uint64_t)pl->t0);
	r.style = roce_ladder_packet_label(p, r.label, sizeof(r.label));
	ch->packets++;
	return push_row(ch, &pl->cap[k], &r);
}

/*
 * Allocates each chart's rows for exactly its packets and its events, so
 * that the layout's memory is what the captures and the traces hold:
 * rows reserved ahead (32 a chart) made 10^6 two-packet flows take 4 GB,
 * and the time went into clearing the pages. push_row grows nothing after.
 */
static int size_rows(const struct ladder_seq *s, struct placing *pl,
		     struct roce_ladder *l)
{
	unsigned first = l->charts[0].flow;
	size_t *rows = pl->cap; /* counted here, then allocated */

	for (size_t i = 0; i < s->n; i++) {
		unsigned flow = s->pkts[i].flow;
		if (flow >= first && flow - first < l->n)
			rows[flow - first]++;
	}
	for (size_t k = 0; k < l->n; k++) {
		rows[k] += pl->end[k] - pl->cursor[k];
		if (!rows[k])
			continue;
		/* reallocarray: the product checked, nothing cleared */
		l->charts[k].rows =
		    reallocarray(NULL, rows[k], sizeof(struct roce_ladder_row));
		if (!l->charts[k].rows)
			return -ENOMEM;
	}
	return 0;
}

/* Rows of every chart, in one pass over the packets. */
static int fill_charts(const struct ladder_seq *s, struct placing *pl,
		       struct roce_ladder *l)
{
	unsigned first = l->charts[0].flow;

	if (size_rows(s, pl, l))
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		const struct roce_cap_pkt *p = &s->pkts[i];
		if (p->flow < first || p->flow - first >= l->n)
			continue;
		size_t k = p->flow - first;
		if (packet_row(s, i, pl, k, &l->charts[k]))
			return -ENOMEM;
	}
	for (size_t k = 0; k < l->n; k++)
		if (place_events(pl, k, SIZE_MAX, &l->charts[k]))
			return -ENOMEM;
	return 0;
}

/* A known end of a charted flow, for finding an event's chart. */
struct end_key {
	uint8_t gid[16];
	uint32_t qpn;
	unsigned col;
	size_t chart;
};

/* By address and QP, then chart and column: the first of equals is the
 * chart an event joins. */
static int key_cmp(const void *pa, const void *pb)
{
	const struct end_key *a = pa, *b = pb;
	int d = memcmp(a->gid, b->gid, 16);

	if (d)
		return d;
	if (a->qpn != b->qpn)
		return a->qpn < b->qpn ? -1 : 1;
	if (a->chart != b->chart)
		return a->chart < b->chart ? -1 : 1;
	return (int)a->col - (int)b->col;
}

/* The ends of l's charts whose QP is known, sorted; *n of them. */
static struct end_key *end_keys(const struct roce_flows *flows,
				const struct roce_ladder *l, size_t *n)
{
	struct end_key *keys = calloc(2 * l->n + 1, sizeof(*keys));

	*n = 0;
	for (size_t k = 0; keys && k < l->n; k++) {
		const struct roce_flow *f =
		    roce_flows_get(flows, l->charts[k].flow);
		for (unsigned d = 0; d < 2; d++) {
			if (!f->end[d].qpn_known)
				continue;
			struct end_key *e = &keys[(*n)++];
			memcpy(e->gid, f->end[d].gid, 16);
			e->qpn = f->end[d].qpn;
			e->col = d;
			e->chart = k;
		}
	}
	if (keys)
		qsort(keys, *n, sizeof(*keys), key_cmp);
	return keys;
}

/* The chart (index) and column an event joins: the first chart with an
 * end of its address and QP; l->n when none has. */
static size_t event_chart(const struct end_key *keys, size_t nkeys,
			  const struct roce_ladder *l,
			  const struct rocemu_event *ev, unsigned *col)
{
	size_t lo = 0, hi = nkeys;
	struct end_key want = {.qpn = ev->qpn};

	memcpy(want.gid, ev->gid, 16);
	while (lo < hi) { /* the first key not below (gid, qpn, chart 0) */
		size_t mid = lo + (hi - lo) / 2;
		if (key_cmp(&keys[mid], &want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == nkeys || memcmp(keys[lo].gid, want.gid, 16) ||
	    keys[lo].qpn != want.qpn)
		return l->n;
	*col = keys[lo].col;
	return keys[lo].chart;
}

/* Every trace's events placed in the sequence: *out (nev of them) sorted
 * by chart and place; l->by_time per trace and l->events_unplaced
 * counted. */
static int place_all(const struct roce_ladder_input *in,
		     const struct ladder_seq *s, struct roce_ladder *l,
		     struct placed **out, size_t *nev)
{
	size_t total = 0, at = 0, nkeys, *after = NULL;
	struct end_key *keys = end_keys(s->flows, l, &nkeys);
	struct placed *p;

	for (size_t t = 0; t < in->ntraces; t++)
		total += in->traces[t].n;
	p = calloc(total + 1, sizeof(*p));
	after = calloc(total + 1, sizeof(size_t));
	if (!keys || !p || !after)
		goto nomem;
	for (size_t t = 0; t < in->ntraces; t++) {
		const struct roce_ladder_trace *tr = &in->traces[t];
		bool old = roce_ladder_trace_is_old(tr->evs, tr->n);
		if (ladder_place(s, tr, old, after, &l->by_time[t]))
			goto nomem;
		for (size_t e = 0; e < tr->n; e++, at++) {
			p[at].ev = &tr->evs[e];
			p[at].after = after[e];
			p[at].seq = at;
			p[at].chart = event_chart(keys, nkeys, l, p[at].ev,
						  &p[at].col);
			/* a reason of no QP (a refused create_qp, a
			 * reg_mr) belongs to no flow: not a miss */
			l->events_unplaced += p[at].chart == l->n &&
					      !(p[at].ev->qpn == 0 &&
						(p[at].ev->kind == ROCEMU_EV_WHY ||
						 p[at].ev->kind == ROCEMU_EV_STATE));
		}
	}
	qsort(p, total, sizeof(*p), placed_cmp);
	free(keys);
	free(after);
	*out = p;
	*nev = total;
	return 0;
nomem:
	free(keys);
	free(after);
	free(p);
	return -ENOMEM;
}

static int build_charts(const struct roce_ladder_input *in,
			const struct ladder_seq *s, struct roce_ladder *l)
{
	struct placing pl = {.l = l, .t0 = s->t0};
	struct placed *p = NULL;
	size_t nev = 0;
	int rc = place_all(in, s, l, &p, &nev);

	pl.ev = p;
	pl.cursor = calloc(l->n + 1, sizeof(size_t));
	pl.end = calloc(l->n + 1, sizeof(size_t));
	pl.cap = calloc(l->n + 1, sizeof(size_t));
	if (!rc && (!pl.cursor || !pl.end || !pl.cap))
		rc = -ENOMEM;
	if (!rc) {
		for (size_t e = 0; e < nev; e++) { /* sorted: slices by chart */
			if (p[e].chart == l->n)
				continue;
			if (pl.end[p[e].chart] == 0)
				pl.cursor[p[e].chart] = e;
			pl.end[p[e].chart] = e + 1;
		}
		rc = l->n ? fill_charts(s, &pl, l) : 0;
	}
	if (!rc)
		rc = ladder_marks(l, in->marks, in->nmarks);
	for (size_t k = 0; !rc && in->collapse && k < l->n; k++)
		l->collapsed += ladder_collapse(&l->charts[k]);
	free(p);
	free(pl.cursor);
	free(pl.end);
	free(pl.cap);
	return rc;
}

static int charts_of(const struct ladder_seq *s, int only_flow,
		     struct roce_ladder *l)
{
	unsigned flows = s->flows ? roce_flows_count(s->flows) : 0;
	unsigned first = only_flow >= 0 ? (unsigned)only_flow : 0;
	unsigned count = only_flow >= 0 ? 1 : flows;

	if (only_flow >= 0 && (unsigned)only_flow >= flows)
		return -ENOENT;
	l->charts = calloc(count ? count : 1, sizeof(*l->charts));
	if (!l->charts)
		return -ENOMEM;
	l->n = count;
	for (unsigned k = 0; k < count; k++)
		chart_head(roce_flows_get(s->flows, first + k), &l->charts[k]);
	return 0;
}

int roce_ladder_build_many(const struct roce_ladder_input *in,
			   struct roce_ladder *l)
{
	struct ladder_seq s;
	int rc;

	memset(l, 0, sizeof(*l));
	if (!in->ncaps || in->ncaps > ROCE_LADDER_MAX_CAPTURES)
		return -EINVAL;
	for (size_t t = 0; t < in->ntraces; t++)
		if (in->ncaps > 1 && roce_ladder_trace_is_old(in->traces[t].evs,
							      in->traces[t].n))
			return -EDOM;
	if (ladder_merge(in->caps, in->ncaps, &s))
		return -ENOMEM;
	l->captures = in->ncaps;
	l->shared = s.shared;
	l->out_of_order = s.out_of_order;
	l->by_time = calloc(in->ntraces + 1, sizeof(size_t));
	rc = l->by_time ? charts_of(&s, in->only_flow, l) : -ENOMEM;
	if (!rc)
		rc = build_charts(in, &s, l);
	ladder_seq_free(&s);
	if (rc)
		roce_ladder_free(l);
	return rc;
}

int roce_ladder_build(const struct roce_capture *c,
		      const struct rocemu_event *evs, size_t n, int only_flow,
		      struct roce_ladder *l)
{
	struct roce_ladder_trace t = {.evs = evs, .n = evs ? n : 0};
	struct roce_ladder_input in = {.caps = c,
				       .ncaps = 1,
				       .traces = &t,
				       .ntraces = 1,
				       .only_flow = only_flow};

	return roce_ladder_build_many(&in, l);
}

void roce_ladder_free(struct roce_ladder *l)
{
	for (size_t k = 0; k < l->n; k++)
		free(l->charts[k].rows);
	for (size_t k = 0; k < l->ntexts; k++)
		free(l->texts[k]);
	free(l->texts);
	free(l->charts);
	free(l->by_time);
	memset(l, 0, sizeof(*l));
}
