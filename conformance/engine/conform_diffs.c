/* SPDX-License-Identifier: MIT */
/* The list of differences (conformance/differences.md): entries, their fields, replay matchers. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/aeth.h"
#include "rocemu/opcode.h"
#include "conform.h"

static const char *const field_names[] = {
	"impl", "ibta", "conform", "known", "compare", "replay",
};
enum { F_IMPL, F_IBTA, F_CONFORM, F_KNOWN, F_COMPARE, F_REPLAY, F_N };

/* The entry being read: from its heading to the next heading. */
struct entry {
	char id[CF_DIFF_ID];
	unsigned line;		/* its heading's; 0: in prose, no entry */
	bool in_fields;		/* the lines right after the heading */
	bool any_field;
	unsigned given;		/* a bit per field read */
	char impl[32];
	char known[CF_TEXT];
	char conform[CF_DIFF_LINE];
	unsigned conform_line;
	char ibta[CF_DIFF_IBTA];	/* "" for none ("-") */
	unsigned replay_from;	/* its replay: rule, from this index */
};

/* An ID read, for "listed twice". */
struct seen {
	char id[CF_DIFF_ID];
	unsigned line;
};

struct reader {
	const char *path;
	unsigned lineno;
	char *err;
	size_t errlen;
	struct cf_diffs *out;
	struct seen *ids;
	unsigned nids;
	struct entry e;
};

/* Says what is wrong at line no; returns -1. */
__attribute__((format(printf, 3, 4)))
static int fail(struct reader *r, unsigned no, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, r->errlen, "%s:%u: ", r->path, no);

	if (n < 0 || (size_t)n >= r->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Grows *arr (of *n items of size sz) by one zeroed item; it, or NULL. */
static void *push(void *arr, unsigned *n, size_t sz)
{
	void **a = arr;
	char *p = realloc(*a, (*n + 1) * sz);

	if (!p)
		return NULL;
	*a = p;
	memset(p + *n * sz, 0, sz);
	return p + (*n)++ * sz;
}

/* Copies src into dst[cap]: 0, or -1 when it does not fit. */
static int copy(char *dst, size_t cap, const char *src, size_t len)
{
	if (len >= cap)
		return -1;
	memcpy(dst, src, len);
	dst[len] = 0;
	return 0;
}

static int parse_answer(const char *v, struct cf_answer *a)
{
	char *end;

	if (!strcmp(v, "ack")) {
		*a = (struct cf_answer){ .ack = true };
		return 0;
	}
	if (strncmp(v, "nak:", 4) || !v[4])
		return -1;
	errno = 0;
	unsigned long syn = strtoul(v + 4, &end, 0);
	if (errno || *end || syn > UINT8_MAX)
		return -1;
	*a = (struct cf_answer){ .syndrome = (uint8_t)syn };
	return 0;
}

static int parse_request(const char *v, uint8_t *op)
{
	for (unsigned i = 0; i < 256; i++) {
		const struct roce_opcode_info *o = roce_opcode((uint8_t)i);
		if (o && o->name && !strcmp(o->name, v)) {
			*op = (uint8_t)i;
			return 0;
		}
	}
	return -1;
}

/* A replay: value: "coalesced", or request= captured= rocemu= words. */
static int parse_replay(struct reader *r, const char *v)
{
	struct cf_replay_rule rule = { 0 };
	unsigned have = 0;

	snprintf(rule.id, sizeof(rule.id), "%s", r->e.id);
	if (!strcmp(v, "coalesced")) {
		rule.coalesced = true;
		have = 7;
	}
	while (!rule.coalesced && *v) {
		size_t n = strcspn(v, " \t");
		char w[CF_WORD];
		if (copy(w, sizeof(w), v, n))
			return fail(r, r->lineno, "replay: a word longer than %d bytes",
				    CF_WORD - 1);
		int bad = -1;
		if (!strncmp(w, "request=", 8)) {
			bad = parse_request(w + 8, &rule.request);
			have |= 1;
		} else if (!strncmp(w, "captured=", 9)) {
			bad = parse_answer(w + 9, &rule.captured);
			have |= 2;
		} else if (!strncmp(w, "rocemu=", 7)) {
			bad = parse_answer(w + 7, &rule.rocemu);
			have |= 4;
		}
		if (bad)
			return fail(r, r->lineno, "replay: '%s' is not request=OPCODE, "
				    "captured=ANSWER or rocemu=ANSWER (ANSWER: ack or "
				    "nak:0xNN)", w);
		v += n;
		v += strspn(v, " \t");
	}
	if (have != 7)
		return fail(r, r->lineno, "replay: needs request=, captured= and "
			    "rocemu=, or is coalesced");
	struct cf_replay_rule *slot = push(&r->out->replay, &r->out->nreplay,
					   sizeof(*slot));
	if (!slot)
		return fail(r, r->lineno, "out of memory");
	*slot = rule;
	return 0;
}

/* One "- key: value" line of the entry's fields. */
static int field(struct reader *r, const char *key, size_t klen,
		 const char *v)
{
	struct entry *e = &r->e;
	int f = 0;

	while (f < F_N && (strlen(field_names[f]) != klen ||
			   strncmp(field_names[f], key, klen)))
		f++;
	if (f == F_N)
		return fail(r, r->lineno, "unknown field '%.*s' (impl, ibta, "
			    "conform, known, compare, replay)", (int)klen, key);
	if (e->given & 1u << f)
		return fail(r, r->lineno, "%s: given twice in %s", field_names[f],
			    e->id);
	e->given |= 1u << f;
	if (!*v)
		return fail(r, r->lineno, "%s: needs a value", field_names[f]);
	size_t n = strlen(v);
	switch (f) {
	case F_IMPL:
		if (strcspn(v, " \t") != n || copy(e->impl, sizeof(e->impl), v, n))
			return fail(r, r->lineno, "impl: one word of at most %zu bytes",
				    sizeof(e->impl) - 1);
		return 0;
	case F_KNOWN:
		if (copy(e->known, sizeof(e->known), v, n))
			return fail(r, r->lineno, "known: longer than %zu bytes",
				    sizeof(e->known) - 1);
		return 0;
	case F_CONFORM:
		e->conform_line = r->lineno;
		if (copy(e->conform, sizeof(e->conform), v, n))
			return fail(r, r->lineno, "conform: too long");
		return 0;
	case F_COMPARE:
		return strcmp(v, "yes") ?
		       fail(r, r->lineno, "compare: takes yes, not '%s'", v) : 0;
	case F_REPLAY:
		return parse_replay(r, v);
	case F_IBTA:
		if (!strcmp(v, "-"))	/* concerns no section */
			return 0;
		if (copy(e->ibta, sizeof(e->ibta), v, n))
			return fail(r, r->lineno, "ibta: longer than %zu bytes",
				    sizeof(e->ibta) - 1);
		return 0;
	}
	return 0;
}

/* The entry read is complete: checks it, and adds its conform: scenarios. */
static int finish(struct reader *r)
{
	struct entry *e = &r->e;

	if (!e->line)
		return 0;
	if (!(e->given & 1u << F_IMPL))
		return fail(r, e->line, "%s has no impl: field", e->id);
	if ((e->given & 1u << F_CONFORM) && !(e->given & 1u << F_KNOWN))
		return fail(r, e->conform_line, "conform: needs a known: line");
	if (!(e->given & 1u << F_CONFORM) && (e->given & 1u << F_KNOWN))
		return fail(r, e->line, "%s: known: without conform:", e->id);
	for (const char *v = e->conform; *v;) {
		size_t n = strcspn(v, " \t");
		struct cf_known *k = push(&r->out->known, &r->out->nknown,
					  sizeof(*k));
		if (!k)
			return fail(r, e->conform_line, "out of memory");
		if (copy(k->scenario, sizeof(k->scenario), v, n))
			return fail(r, e->conform_line, "conform: a scenario name "
				    "longer than %zu bytes", sizeof(k->scenario) - 1);
		snprintf(k->impl, sizeof(k->impl), "%s", e->impl);
		snprintf(k->text, sizeof(k->text), "%s", e->known);
		snprintf(k->id, sizeof(k->id), "%s", e->id);
		snprintf(k->ibta, sizeof(k->ibta), "%s", e->ibta);
		v += n;
		v += strspn(v, " \t");
	}
	/* its replay: rule came before or after its ibta: */
	for (unsigned i = e->replay_from; i < r->out->nreplay; i++)
		snprintf(r->out->replay[i].ibta, sizeof(r->out->replay[i].ibta),
			 "%s", e->ibta);
	r->out->entries++;
	e->line = 0;
	return 0;
}

/* A "## " line: a new entry ("## ID: title") or a prose heading. */
static int heading(struct reader *r, const char *h)
{
	size_t n = strspn(h, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-");

	if (finish(r))
		return -1;
	if (!n || h[n] != ':')
		return 0;	/* prose */
	if (h[n + 1] != ' ' || !h[n + 2])
		return fail(r, r->lineno, "an entry's heading is '## ID: title'");
	memset(&r->e, 0, sizeof(r->e));
	if (copy(r->e.id, sizeof(r->e.id), h, n))
		return fail(r, r->lineno, "an ID longer than %d bytes", CF_DIFF_ID - 1);
	for (unsigned i = 0; i < r->nids; i++)
		if (!strcmp(r->ids[i].id, r->e.id))
			return fail(r, r->lineno, "%s is listed twice (first at line %u)",
				    r->e.id, r->ids[i].line);
	struct seen *s = push(&r->ids, &r->nids, sizeof(*s));
	if (!s)
		return fail(r, r->lineno, "out of memory");
	memcpy(s->id, r->e.id, sizeof(s->id));
	s->line = r->lineno;
	r->e.line = r->lineno;
	r->e.in_fields = true;
	r->e.replay_from = r->out->nreplay;
	return 0;
}

/* One line (no newline) of the file. */
static int line(struct reader *r, char *l)
{
	struct entry *e = &r->e;

	if (!strncmp(l, "## ", 3))
		return heading(r, l + 3);
	if (!e->line || !e->in_fields)
		return 0;
	if (!*l) {
		e->in_fields = !e->any_field;	/* a blank line ends them */
		return 0;
	}
	size_t klen = strspn(l + 2, "abcdefghijklmnopqrstuvwxyz");
	if (strncmp(l, "- ", 2) || !klen || strncmp(l + 2 + klen, ": ", 2)) {
		e->in_fields = false;		/* the prose begins */
		return 0;
	}
	e->any_field = true;
	char *v = l + 4 + klen;
	v += strspn(v, " \t");
	size_t n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		v[--n] = 0;
	return field(r, l + 2, klen, v);
}

void cf_diffs_free(struct cf_diffs *d)
{
	free(d->known);
	free(d->replay);
	memset(d, 0, sizeof(*d));
}

int cf_diffs_read(FILE *f, const char *path, struct cf_diffs *out,
		  char *err, size_t errlen)
{
	struct reader r = { .path = path, .err = err, .errlen = errlen,
			    .out = out };
	char buf[CF_DIFF_LINE + 2];
	int rc = 0;

	memset(out, 0, sizeof(*out));
	while (!rc && fgets(buf, sizeof(buf), f)) {
		r.lineno++;
		size_t n = strlen(buf);
		if (n && buf[n - 1] == '\n')
			buf[--n] = 0;
		else if (n < sizeof(buf) - 1 && !feof(f))
			rc = fail(&r, r.lineno, "a NUL byte");
		else if (!feof(f))
			rc = fail(&r, r.lineno, "a line longer than %d bytes", CF_DIFF_LINE);
		if (n && buf[n - 1] == '\r')
			buf[--n] = 0;
		if (!rc)
			rc = line(&r, buf);
	}
	if (!rc && ferror(f))
		rc = fail(&r, r.lineno, "read error");
	if (!rc)
		rc = finish(&r);
	free(r.ids);
	if (rc)
		cf_diffs_free(out);
	return rc;
}

int cf_diffs_load(const char *path, struct cf_diffs *out, char *err,
		  size_t errlen)
{
	memset(out, 0, sizeof(*out));
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	int rc = cf_diffs_read(f, path, out, err, errlen);
	fclose(f);
	return rc;
}

static bool answer_is(const struct roce_frame *f, const struct cf_answer *a)
{
	if (!f || !(f->ib.exts & ROCE_EXT_AETH))
		return false;
	if (a->ack)
		return roce_aeth_type(f->ib.aeth.syndrome) == ROCE_AETH_ACK;
	return f->ib.aeth.syndrome == a->syndrome;
}

const char *cf_diffs_replay_match(const struct cf_diffs *d, uint8_t request,
				  const struct roce_frame *cap,
				  const struct roce_frame *emu)
{
	for (unsigned i = 0; i < d->nreplay; i++) {
		const struct cf_replay_rule *r = &d->replay[i];
		if (!r->coalesced && r->request == request &&
		    answer_is(cap, &r->captured) && answer_is(emu, &r->rocemu))
			return r->id;
	}
	return NULL;
}

const char *cf_diffs_coalesced(const struct cf_diffs *d)
{
	for (unsigned i = 0; i < d->nreplay; i++)
		if (d->replay[i].coalesced)
			return d->replay[i].id;
	return NULL;
}

const char *cf_diffs_ibta(const struct cf_diffs *d, const char *id)
{
	const char *s = NULL;

	for (unsigned i = 0; i < d->nreplay && !s; i++)
		if (!strcmp(d->replay[i].id, id))
			s = d->replay[i].ibta;
	for (unsigned i = 0; i < d->nknown && !s; i++)
		if (!strcmp(d->known[i].id, id))
			s = d->known[i].ibta;
	return s && *s ? s : NULL;
}
