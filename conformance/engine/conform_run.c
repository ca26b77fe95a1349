/* SPDX-License-Identifier: MIT */
/* Playing a scenario: the set-up, then each step in order; the wire steps are here. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conform_run.h"

enum { EXPECT_MS = 1000 };

enum { EVIDENCE_TAIL = CF_EVIDENCE - CF_EVIDENCE_HEAD };

/* The slot of the k-th line noted: the head's own, then the ring's. */
static unsigned evidence_slot(unsigned k)
{
	return k < CF_EVIDENCE_HEAD ? k : CF_EVIDENCE_HEAD + (k - CF_EVIDENCE_HEAD) % EVIDENCE_TAIL;
}

void cf_evidence(struct cf_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->evidence[evidence_slot(r->nevidence)], sizeof(r->evidence[0]),
		  fmt, ap);
	va_end(ap);
	r->nevidence++;
}

unsigned cf_evidence_count(const struct cf_result *r, unsigned *left_out)
{
	*left_out = r->nevidence > CF_EVIDENCE ? r->nevidence - CF_EVIDENCE : 0;
	return r->nevidence > CF_EVIDENCE ? CF_EVIDENCE : r->nevidence;
}

const char *cf_evidence_at(const struct cf_result *r, unsigned i)
{
	if (i < CF_EVIDENCE_HEAD || r->nevidence <= CF_EVIDENCE)
		return r->evidence[i];
	/* the tail: the last EVIDENCE_TAIL lines noted */
	return r->evidence[evidence_slot(r->nevidence - CF_EVIDENCE + i)];
}

int cf_verdict(struct cf_run *x, enum cf_verdict v, unsigned line,
	       const char *fmt, ...)
{
	va_list ap;

	if (x->r->why[0])
		return -1;	/* the first verdict stands */
	x->r->verdict = v;
	x->r->step_line = line;
	if (x->st && x->st->line == line)
		snprintf(x->r->step_rule, sizeof(x->r->step_rule), "%s", x->st->rule);
	va_start(ap, fmt);
	vsnprintf(x->r->why, sizeof(x->r->why), fmt, ap);
	va_end(ap);
	return -1;
}

static unsigned step_ms(const struct cf_step *st, const char *key, unsigned def)
{
	const char *v = cf_arg_get(st->args, st->nargs, key);
	return v ? (unsigned)strtoul(v, NULL, 0) : def;
}

static void note_packet(struct cf_run *x, const char *dir, const struct cf_packet *p)
{
	char d[200];

	cf_packet_describe(p, d, sizeof(d));
	cf_evidence(x->r, "%8.3f ms %s %s", (double)p->t_ns / 1e6, dir, d);
	if (x->s->verbose)
		printf("    %8.3f ms %s %s\n", (double)p->t_ns / 1e6, dir, d);
}

static int step_send(struct cf_run *x, const struct cf_step *st)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	char err[200];
	struct cf_packet *p = &x->pkt;	/* the evidence: the frame as built */
	const char *tid = cf_arg_get(st->args, st->nargs, "tid");
	uint64_t t = 0;

	if (st->kind == CF_CM_SEND && tid && cf_eval(&x->e, tid, &t, err, sizeof(err)))
		return cf_verdict(x, CF_FAIL, st->line, "send-cm: tid=%s: %s", tid, err);
	if (st->kind == CF_CM_SEND && !tid)
		t = x->s->next_tid++;
	int n = st->kind == CF_CM_SEND ?
		cf_cm_build(&x->e, &x->s->wire, st, t, frame, sizeof(frame), &p->f, err,
			    sizeof(err)) :
		cf_packet_build(&x->e, &x->s->wire, st, frame, sizeof(frame), &p->f, err,
				sizeof(err));
	if (st->kind == CF_CM_SEND && n >= 0)
		x->e.tid = t;

	if (n < 0)
		return cf_verdict(x, CF_FAIL, st->line, "send: %s", err);
	int rc = cf_wire_send(&x->s->wire, frame, (size_t)n);
	if (rc)
		return cf_verdict(x, CF_FAIL, st->line, "send: %s", strerror(-rc));
	p->parse_rc = 0;
	p->why = NULL;
	p->icrc_ok = p->f.ib.icrc == p->f.icrc_calc;
	p->t_ns = cf_wire_now_ns(&x->s->wire);
	p->len = (size_t)n;
	note_packet(x, "->", p);
	return 0;
}

/* Whether p is addressed to the QP of an earlier scenario, or is a CM
 * MAD of an earlier scenario's connection: a late retry or answer of
 * its, to be passed over. */
static bool stale(const struct cf_run *x, const struct cf_packet *p)
{
	uint32_t q = p->f.ib.bth.dqpn;

	/* the scenario's QPs are numbered from its first one's up */
	return (p->parse_rc == 0 && q >= x->s->first_qpn && q < x->e.qps[0].my_qpn) ||
	       cf_cm_foreign(&x->e, p);
}

/* The next packet for this scenario within timeout_ms: 1, 0 on timeout,
 * -errno. A packet a maybe left comes first; stale packets are noted and
 * passed over. */
static int next_packet(struct cf_run *x, int timeout_ms)
{
	uint64_t end = cf_wire_now_ns(&x->s->wire) + (uint64_t)timeout_ms * 1000000u;

	x->replayed = x->held;
	if (x->held) {
		x->held = false;
		return 1;
	}
	for (;;) {
		uint64_t now = cf_wire_now_ns(&x->s->wire);
		int left = now >= end ? 0 : (int)((end - now + 999999) / 1000000u);
		int rc = cf_wire_recv(&x->s->wire, &x->pkt, left);
		if (rc <= 0 || !stale(x, &x->pkt))
			return rc;
		note_packet(x, "<- (stale: an earlier scenario's)", &x->pkt);
	}
}

/* Milliseconds left until ms after the step before ended. */
static int left_ms(const struct cf_run *x, unsigned ms)
{
	uint64_t end = x->last_ns + (uint64_t)ms * 1000000u;
	uint64_t now = cf_wire_now_ns(&x->s->wire);

	return now >= end ? 0 : (int)((end - now + 999999) / 1000000u);
}

/* The step's QP's timeout= (the set-up's default 12). */
static unsigned qp_timeout(const struct cf_run *x)
{
	const struct cf_qpdecl *d = &x->sc->qps[x->cur];
	const char *t = cf_arg_get(d->args, d->nargs, "timeout");
	return t ? (unsigned)strtoul(t, NULL, 0) : 12;
}

/* An alternative's timer=: 1 with its bounds in microseconds and what
 * it is, 0 when it has none. */
static int step_timer(const struct cf_run *x, const struct cf_step *a, uint64_t *lo,
		      uint64_t *hi, char *what, size_t whatlen)
{
	const char *v = cf_arg_get(a->args, a->nargs, "timer");
	uint64_t us;

	if (!v || cf_timer_parse(v, qp_timeout(x), &us, what, whatlen))
		return 0;
	cf_timer_bounds(us, lo, hi);
	size_t l = strlen(what);
	snprintf(what + l, whatlen - l, " = %.3f ms, accepted from %.3f to %.3f ms",
		 (double)us / 1000, (double)*lo / 1000, (double)*hi / 1000);
	return 1;
}

/* The longest within= of a group of alternatives; a timer='s upper
 * bound when an alternative has no within=. */
static unsigned group_within(const struct cf_run *x, const struct cf_step *st, unsigned n)
{
	unsigned w = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t lo, hi;
		char what[200];
		unsigned v = step_ms(&st[i], "within", EXPECT_MS);
		if (!cf_arg_get(st[i].args, st[i].nargs, "within") &&
		    step_timer(x, &st[i], &lo, &hi, what, sizeof(what)))
			v = (unsigned)(hi / 1000) + 1;
		w = v > w ? v : w;
	}
	return w;
}

/* p against alternative a: 1 when it matches (after= included), 0 with
 * why, -1 after a verdict (the step itself is wrong). */
static int match_one(struct cf_run *x, const struct cf_step *a,
		     const struct cf_packet *p, char *why, size_t whylen)
{
	unsigned after = step_ms(a, "after", 0);
	int m = a->kind == CF_CM_EXPECT ? cf_cm_match(&x->e, a, p, why, whylen)
					: cf_packet_match(&x->e, a, p, why, whylen);

	if (m < 0)
		return cf_verdict(x, CF_FAIL, a->line, "%s: %s", x->sc->path, why);
	uint64_t gap_ns = p->t_ns > x->last_ns ? p->t_ns - x->last_ns : 0;
	uint64_t gap_ms = gap_ns / 1000000u, lo, hi;
	char what[200];
	if (m == 1 && after && gap_ms < after) {
		snprintf(why, whylen, "%s came %llu ms after the step before ended, sooner "
			 "than %u ms", a->word, (unsigned long long)gap_ms, after);
		return 0;
	}
	if (m == 1 && step_timer(x, a, &lo, &hi, what, sizeof(what)) &&
	    (gap_ns < lo * 1000 || gap_ns > hi * 1000)) {
		snprintf(why, whylen, "%s came %.3f ms after the step before ended, %s than "
			 "%s", a->word, (double)gap_ns / 1e6, gap_ns < lo * 1000 ? "sooner" :
			 "later", what);
		return 0;
	}
	return m;
}

/* expect, maybe and expect-cm: the next packet is one of the group's
 * alternatives (st and the nalt - 1 steps after it); a maybe passes
 * when nothing comes, and leaves a packet it does not match to the next
 * step. */
static int step_expect(struct cf_run *x, const struct cf_step *st)
{
	unsigned n = st->nalt ? st->nalt : 1, within = group_within(x, st, n);
	struct cf_packet *p = &x->pkt;
	char why[300], all[CF_TEXT * 2] = "";
	int rc;

	for (;;) {
		rc = next_packet(x, left_ms(x, within));
		if (rc <= 0 || st->kind != CF_CM_EXPECT || !cf_cm_skipped(st, p))
			break;
		note_packet(x, "<- (skipped)", p);
	}
	if (rc < 0)
		return cf_verdict(x, CF_FAIL, st->line, "receive: %s", strerror(-rc));
	if (rc == 0 && st->optional) {
		cf_evidence(x->r, "           (the optional %s did not come within %u ms)",
			    st->word, within);
		return 0;
	}
	uint64_t lo, hi;
	char what[200];
	if (rc == 0 && !cf_arg_get(st->args, st->nargs, "within") &&
	    step_timer(x, st, &lo, &hi, what, sizeof(what)))
		return cf_verdict(x, CF_FAIL, st->line, "expected %s: nothing came within %u ms, "
				  "later than %s", st->word, within, what);
	if (rc == 0)
		return cf_verdict(x, CF_FAIL, st->line, "expected %s%s within %u ms: nothing came",
				  st->word, n > 1 ? " (or an alternative)" : "", within);
	if (!x->replayed)
		note_packet(x, "<-", p);
	for (unsigned i = 0; i < n; i++) {
		int m = match_one(x, &st[i], p, why, sizeof(why));
		if (m < 0)
			return -1;
		if (m == 1) {
			x->step_end = p->t_ns > x->last_ns ? p->t_ns : x->last_ns;
			return 0;
		}
		size_t l = strlen(all);
		snprintf(all + l, sizeof(all) - l, "%s%s: %s", i ? "; " : "", st[i].word, why);
	}
	if (st->optional) {	/* not the optional packet: the next step's */
		x->held = true;
		cf_evidence(x->r, "           (not the optional %s: left for the next step)",
			    st->word);
		return 0;
	}
	if (n == 1)
		return cf_verdict(x, CF_FAIL, st->line, "expected %s", all);
	return cf_verdict(x, CF_FAIL, st->line, "expected one of %u alternatives, none "
			  "matched: %s", n, all);
}

/* silence and drain: what arrives within ms fails, or is taken. */
static int step_quiet(struct cf_run *x, const struct cf_step *st, bool fail)
{
	unsigned ms = (unsigned)strtoul(st->word, NULL, 10);
	uint64_t end = cf_wire_now_ns(&x->s->wire) + (uint64_t)ms * 1000000u;

	for (;;) {
		uint64_t now = cf_wire_now_ns(&x->s->wire);
		if (now >= end)
			return 0;
		int left = (int)((end - now + 999999) / 1000000u);
		int rc = next_packet(x, left);
		if (rc < 0)
			return cf_verdict(x, CF_FAIL, st->line, "receive: %s", strerror(-rc));
		if (rc == 0)
			return 0;
		if (!x->replayed)
			note_packet(x, fail ? "<-" : "<- (drained)", &x->pkt);
		if (fail) {
			char d[200];
			cf_packet_describe(&x->pkt, d, sizeof(d));
			return cf_verdict(x, CF_FAIL, st->line,
					  "expected no packet for %u ms, got %s", ms, d);
		}
	}
}

static int play_step(struct cf_run *x, const struct cf_step *st)
{
	switch (st->kind) {
	case CF_SEND:
	case CF_CM_SEND:
		return step_send(x, st);
	case CF_EXPECT:
	case CF_CM_EXPECT:
		return step_expect(x, st);
	case CF_SILENCE:
		return step_quiet(x, st, true);
	case CF_DRAIN:
		return step_quiet(x, st, false);
	case CF_WAIT: {
		struct timespec ts = { 0, 0 };
		unsigned ms = (unsigned)strtoul(st->word, NULL, 10);
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (long)(ms % 1000) * 1000000L;
		nanosleep(&ts, NULL);
		return 0;
	}
	default:
		return cf_agent_step(x, st);
	}
}

/* Plays one step; the step's end is when the next one's after= and
 * within= count from: when an expect's packet came, else when the step
 * returned (a send's packet went, the agent answered, the time passed). */
static int play(struct cf_run *x, const struct cf_step *st)
{
	if (st->alt)
		return 0;	/* played with the first of its group */
	x->st = st;
	x->step_end = 0;
	if (x->sc->role != CF_CM)	/* there the CM's REP names the QP */
		cf_use_qp(x, (unsigned)cf_qp_index(x->sc, st->qp));
	int rc = play_step(x, st);
	x->last_ns = x->step_end ? x->step_end : cf_wire_now_ns(&x->s->wire);
	return rc;
}

/* Datagrams left from an earlier scenario (late retries) are dropped. */
static void flush_wire(struct cf_session *s)
{
	while (cf_wire_recv(&s->wire, &(struct cf_packet){ .len = 0 }, 0) > 0)
		;
}

/* The first comm ID of the next scenario: the session's first drawn from
 * the clock and the process, so that a second run inside the device's
 * timewait is not taken for the first (IBTA 12.9.8.3), then a span each. */
static uint32_t next_comm(struct cf_session *s)
{
	if (!s->next_comm) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint32_t r = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u ^
			     (uint32_t)getpid() << 16;
		s->next_comm = (r | 0x10000000u) & ~(uint32_t)(CF_COMM_SPAN - 1) & 0x7fffffffu;
		s->next_tid = (uint64_t)r << 32;
	}
	uint32_t c = s->next_comm;
	s->next_comm += CF_COMM_SPAN;
	if (s->next_comm & 0x80000000u)	/* kept positive and never 0 */
		s->next_comm = 0x10000000u;
	return c;
}

static void find_known(struct cf_session *s, const struct cf_scenario *sc,
		       struct cf_result *r)
{
	for (unsigned i = 0; i < s->nknown; i++)
		if (!strcmp(s->known[i].impl, s->impl) &&
		    !strcmp(s->known[i].scenario, sc->id))
			r->known = &s->known[i];
}

void cf_run(struct cf_session *s, const struct cf_scenario *sc,
	    struct cf_result *r)
{
	static struct cf_run x;
	char err[300];
	uint64_t t0 = cf_wire_now_ns(&s->wire);

	memset(r, 0, sizeof(*r));
	memset(&x, 0, sizeof(x));
	x.s = s;
	x.sc = sc;
	x.r = r;
	x.e.nmr = sc->nmr;
	memcpy(x.e.mrs, sc->mrs, sizeof(sc->mrs));
	/* conform plays one QP per agent QP, numbered up from the first */
	x.e.nqps = sc->nqps;
	for (unsigned i = 0; i < sc->nqps; i++) {
		strcpy(x.e.qps[i].name, sc->qps[i].name);
		x.e.qps[i].my_qpn = ++s->my_qpn & 0xffffff;
	}
	x.e.my_qpn = x.e.qps[0].my_qpn;
	x.e.cm = sc->role == CF_CM;
	x.e.comm = next_comm(s);
	flush_wire(s);
	if (cf_agent_open(&s->agent, s->agent_host, s->agent_port, &s->dev, err,
			  sizeof(err))) {
		cf_verdict(&x, CF_FAIL, 0, "%s", err);
	} else if (cf_setup(&x) == 0) {
		x.last_ns = cf_wire_now_ns(&s->wire);
		for (unsigned i = 0; i < sc->nsteps; i++)
			if (play(&x, &sc->steps[i]))
				break;
	}
	cf_agent_close(&s->agent);
	if (r->verdict == CF_FAIL)
		find_known(s, sc, r);
	r->ms = (cf_wire_now_ns(&s->wire) - t0) / 1000000u;
	r->family = s->family;
}
