/* SPDX-License-Identifier: MIT */
/* Scenario files: one keyword per line, key=value words after it (conformance/README.md). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"

/* The step keywords, in enum cf_step_kind's order, and whether each
 * takes a leading word (an opcode, MR, state or milliseconds). */
static const struct {
	const char *name;
	int word;	/* 1: required, 0: none, 2: optional */
} step_kw[CF_KIND_COUNT] = {
	[CF_SEND] = { "send", 1 },
	[CF_EXPECT] = { "expect", 1 },
	[CF_SILENCE] = { "silence", 1 },
	[CF_DRAIN] = { "drain", 1 },
	[CF_WAIT] = { "wait", 1 },
	[CF_RECV] = { "recv", 0 },
	[CF_POST] = { "post", 0 },
	[CF_COMPLETION] = { "completion", 0 },
	[CF_NO_COMPLETION] = { "no-completion", 2 },
	[CF_MEMORY] = { "memory", 1 },
	[CF_STATE] = { "state", 1 },
	[CF_MODIFY] = { "modify", 1 },
	[CF_BIND] = { "bind", 0 },
	[CF_EVENT] = { "event", 1 },
	[CF_CM_SEND] = { "send-cm", 1 },
	[CF_CM_EXPECT] = { "expect-cm", 1 },
	[CF_LISTEN] = { "listen", 0 },
	[CF_CM_EVENT] = { "cm-event", 1 },
	[CF_ACCEPT] = { "accept", 0 },
	[CF_DISCONNECT] = { "disconnect", 0 },
};

struct reader {
	const char *path;
	unsigned line;
	char *err;
	size_t errlen;
};

static int fail(struct reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, r->errlen, "%s:%u: ", r->path, r->line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->errlen)
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Copies src to dst (cap bytes) or fails when it does not fit. */
static int put(struct reader *r, char *dst, size_t cap, const char *src,
	       const char *what)
{
	if (strlen(src) >= cap)
		return fail(r, "%s '%.40s...' is too long (at most %zu characters)",
			    what, src, cap - 1);
	strcpy(dst, src);
	return 0;
}

/* Splits the words after the keyword into key=value args; the first
 * word without '=' goes to *word when word is not NULL. */
static int split_args(struct reader *r, char *rest, struct cf_arg *args,
		      unsigned *n, char *word, size_t wordcap)
{
	*n = 0;
	for (char *save = NULL, *t = strtok_r(rest, " \t", &save); t;
	     t = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(t, '=');
		if (!eq && word && !*word) {
			if (put(r, word, wordcap, t, "word"))
				return -1;
			continue;
		}
		if (!eq || eq == t)
			return fail(r, "'%s' is not key=value", t);
		if (*n == CF_MAX_ARGS)
			return fail(r, "more than %d key=value words", CF_MAX_ARGS);
		*eq = 0;
		for (unsigned i = 0; i < *n; i++)
			if (!strcmp(args[i].key, t))
				return fail(r, "key '%s' given twice", t);
		if (put(r, args[*n].key, sizeof(args[*n].key), t, "key") ||
		    put(r, args[*n].val, sizeof(args[*n].val), eq + 1, "value"))
			return -1;
		(*n)++;
	}
	return 0;
}

static int read_mr(struct reader *r, struct cf_scenario *s, char *rest)
{
	struct cf_arg args[CF_MAX_ARGS];
	unsigned n;
	char name[CF_NAME] = "";

	if (s->nmr == CF_MAX_MRS)
		return fail(r, "more than %d MRs", CF_MAX_MRS);
	if (split_args(r, rest, args, &n, name, sizeof(name)))
		return -1;
	struct cf_mr *m = &s->mrs[s->nmr];
	if (!*name || !isalpha((unsigned char)*name) ||
	    put(r, m->name, sizeof(m->name), name, "MR name"))
		return *name ? -1 : fail(r, "mr needs a name (mr NAME size=...)");
	for (unsigned i = 0; i < s->nqps; i++)
		if (!strcmp(s->qps[i].name, name))
			return fail(r, "mr %s has a QP's name", name);
	const char *size = cf_arg_get(args, n, "size");
	const char *acc = cf_arg_get(args, n, "access");
	const char *fill = cf_arg_get(args, n, "fill");
	const char *pd = cf_arg_get(args, n, "pd");
	for (unsigned i = 0; i < n; i++)
		if (strcmp(args[i].key, "size") && strcmp(args[i].key, "access") &&
		    strcmp(args[i].key, "fill") && strcmp(args[i].key, "pd"))
			return fail(r, "mr takes size, access, fill and pd, not '%s'",
				    args[i].key);
	if (pd && strcmp(pd, "other") && strcmp(pd, "qp"))
		return fail(r, "mr pd= is qp (the QP's, the default) or other");
	m->other_pd = pd && !strcmp(pd, "other");
	char *end;
	unsigned long sz = size ? strtoul(size, &end, 0) : 0;
	if (!size || *end || sz == 0 || sz > (1u << 24))
		return fail(r, "mr %s needs size=BYTES (1 to 16 MiB)", name);
	m->size = (uint32_t)sz;
	if (put(r, m->access, sizeof(m->access), acc ? acc : "lw", "access") ||
	    put(r, m->fill, sizeof(m->fill), fill ? fill : "0", "fill"))
		return -1;
	s->nmr++;
	return 0;
}

/* rule=ID of any step: the rule book's ID (the tool checks that the book
 * has it) into st->rule, out of the step's key=value words. */
static int take_rule(struct reader *r, struct cf_step *st)
{
	for (unsigned i = 0; i < st->nargs; i++) {
		if (strcmp(st->args[i].key, "rule"))
			continue;
		const char *v = st->args[i].val;
		if (!*v || v[strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")])
			return fail(r, "rule=%s: a rule book ID as rocemu check --rules "
				    "names it (capitals, digits, '-')", v);
		if (put(r, st->rule, sizeof(st->rule), v, "rule"))
			return -1;
		st->args[i] = st->args[--st->nargs];
		return 0;
	}
	return 0;
}

/* qp=NAME of any step: the agent QP it concerns, into st->qp (the
 * loader checks that the scenario declares it). */
static int take_qp(struct reader *r, struct cf_step *st)
{
	for (unsigned i = 0; i < st->nargs; i++) {
		if (strcmp(st->args[i].key, "qp"))
			continue;
		if (put(r, st->qp, sizeof(st->qp), st->args[i].val, "qp"))
			return -1;
		st->args[i] = st->args[--st->nargs];
		return 0;
	}
	return 0;
}

static int read_step(struct reader *r, struct cf_scenario *s, unsigned kind,
		     char *rest)
{
	if (s->nsteps == CF_MAX_STEPS)
		return fail(r, "more than %d steps", CF_MAX_STEPS);
	struct cf_step *st = &s->steps[s->nsteps];
	memset(st, 0, sizeof(*st));
	st->kind = kind;
	st->line = r->line;
	if (split_args(r, rest, st->args, &st->nargs,
		       step_kw[kind].word ? st->word : NULL, sizeof(st->word)))
		return -1;
	if (take_rule(r, st) || take_qp(r, st))
		return -1;
	if (step_kw[kind].word == 1 && !*st->word)
		return fail(r, "%s needs a word after it", step_kw[kind].name);
	char why[200];
	if ((kind == CF_SEND || kind == CF_EXPECT) && cf_step_check(st, why, sizeof(why)))
		return fail(r, "%s", why);
	if ((kind == CF_CM_SEND || kind == CF_CM_EXPECT) && cf_cm_check(st, why, sizeof(why)))
		return fail(r, "%s", why);
	if ((kind == CF_SILENCE || kind == CF_DRAIN || kind == CF_WAIT ||
	     (kind == CF_NO_COMPLETION && *st->word)) &&
	    strspn(st->word, "0123456789") != strlen(st->word))
		return fail(r, "%s takes milliseconds, not '%s'",
			    step_kw[kind].name, st->word);
	s->nsteps++;
	return 0;
}

/* expect A | B ... and maybe A | B ...: one step per alternative, the
 * first saying how many there are; maybe marks the group optional. */
static int read_expect(struct reader *r, struct cf_scenario *s, char *rest,
		       bool optional)
{
	unsigned first = s->nsteps, n = 0;

	for (char *alt = rest, *bar; alt; alt = bar, n++) {
		bar = strchr(alt, '|');
		if (bar)
			*bar++ = 0;
		if (read_step(r, s, CF_EXPECT, alt))
			return -1;
		s->steps[s->nsteps - 1].alt = n > 0;
		s->steps[s->nsteps - 1].optional = optional;
	}
	s->steps[first].nalt = n;
	return 0;
}

/* covers ID...: the rule book's IDs, capitals, digits and '-' (the
 * tool checks them against the book; the engine knows only the form). */
static int read_covers(struct reader *r, struct cf_scenario *s, char *rest)
{
	size_t n = strspn(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789- ");

	if (!*rest || rest[n])
		return fail(r, "covers wants rule IDs as rocemu check --rules "
			    "names them (capitals, digits, '-'), not '%s'",
			    rest);
	if (*s->covers)
		return fail(r, "covers is given twice");
	return put(r, s->covers, sizeof(s->covers), rest, "covers");
}

int cf_qp_index(const struct cf_scenario *s, const char *name)
{
	for (unsigned i = 0; i < s->nqps; i++)
		if (!strcmp(s->qps[i].name, name))
			return (int)i;
	return !*name ? 0 : -1;
}

/* qp [NAME] KEY=VALUE...: the first QP may go unnamed, every later one
 * has a name of its own (steps name it with qp=NAME). */
static int read_qp(struct reader *r, struct cf_scenario *s, char *rest)
{
	if (s->nqps == CF_MAX_QPS)
		return fail(r, "more than %d QPs", CF_MAX_QPS);
	struct cf_qpdecl *q = &s->qps[s->nqps];
	if (split_args(r, rest, q->args, &q->nargs, q->name, sizeof(q->name)))
		return -1;
	if (*q->name && !isalpha((unsigned char)*q->name))
		return fail(r, "qp name '%s' does not start with a letter", q->name);
	if (s->nqps && !*q->name)
		return fail(r, "a second qp needs a name (qp NAME KEY=VALUE...)");
	for (unsigned i = 0; i < s->nqps; i++)
		if (!strcmp(s->qps[i].name, q->name))
			return fail(r, "qp %s is declared twice", q->name);
	for (unsigned i = 0; i < s->nmr; i++)
		if (!strcmp(s->mrs[i].name, q->name))
			return fail(r, "qp %s has an MR's name", q->name);
	s->nqps++;
	return 0;
}

/* The header keywords: title, rule, covers, role, transport, needs, qp,
 * mr. */
static int read_header(struct reader *r, struct cf_scenario *s,
		       const char *kw, char *rest, bool *done)
{
	*done = true;
	if (!strcmp(kw, "title"))
		return put(r, s->title, sizeof(s->title), rest, "title");
	if (!strcmp(kw, "rule"))
		return put(r, s->rule, sizeof(s->rule), rest, "rule");
	if (!strcmp(kw, "needs"))
		return put(r, s->needs, sizeof(s->needs), rest, "needs");
	if (!strcmp(kw, "covers"))
		return read_covers(r, s, rest);
	if (!strcmp(kw, "role")) {
		if (!strcmp(rest, "responder"))
			s->role = CF_RESPONDER;
		else if (!strcmp(rest, "requester"))
			s->role = CF_REQUESTER;
		else if (!strcmp(rest, "cm"))
			s->role = CF_CM;
		else
			return fail(r, "role is responder, requester or cm, not '%s'", rest);
		return 0;
	}
	if (!strcmp(kw, "transport")) {
		if (strcmp(rest, "rc") && strcmp(rest, "uc") && strcmp(rest, "ud"))
			return fail(r, "transport is rc, uc or ud, not '%s'", rest);
		strcpy(s->transport, rest);
		return 0;
	}
	if (!strcmp(kw, "qp"))
		return read_qp(r, s, rest);
	if (!strcmp(kw, "srq")) {
		if (s->has_srq)
			return fail(r, "one srq line per scenario");
		s->has_srq = true;
		return split_args(r, rest, s->srq, &s->nsrq, NULL, 0);
	}
	if (!strcmp(kw, "mr"))
		return read_mr(r, s, rest);
	*done = false;
	return 0;
}

static char *trim(char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	char *e = p + strlen(p);
	while (e > p && isspace((unsigned char)e[-1]))
		*--e = 0;
	return p;
}

static int read_line(struct reader *r, struct cf_scenario *s, char *text)
{
	char *hash = strchr(text, '#');
	if (hash)
		*hash = 0;
	char *p = trim(text);
	if (!*p)
		return 0;
	char *rest = p + strcspn(p, " \t");
	if (*rest)
		*rest++ = 0;
	rest = trim(rest);
	bool done;
	if (read_header(r, s, p, rest, &done))
		return -1;
	if (done)
		return 0;
	if (!strcmp(p, "expect") || !strcmp(p, "maybe"))
		return read_expect(r, s, rest, !strcmp(p, "maybe"));
	for (unsigned k = 0; k < CF_KIND_COUNT; k++)
		if (!strcmp(p, step_kw[k].name) && k != CF_EXPECT)
			return read_step(r, s, k, rest);
	return fail(r, "unknown keyword '%s'", p);
}

static void scenario_id(const char *path, char *id, size_t cap)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strcspn(base, ".");
	if (n >= cap)
		n = cap - 1;
	memcpy(id, base, n);
	id[n] = 0;
}

int cf_scenario_load(const char *path, struct cf_scenario *s, char *err,
		     size_t errlen)
{
	struct reader r = { .path = path, .err = err, .errlen = errlen };
	FILE *f = fopen(path, "r");
	char text[1024];

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	memset(s, 0, sizeof(*s));
	scenario_id(path, s->id, sizeof(s->id));
	snprintf(s->path, sizeof(s->path), "%s", path);
	strcpy(s->transport, "rc");
	int rc = 0;
	while (!rc && fgets(text, sizeof(text), f)) {
		r.line++;
		if (!strchr(text, '\n') && !feof(f))
			rc = fail(&r, "line longer than %zu characters",
				  sizeof(text) - 2);
		else
			rc = read_line(&r, s, text);
	}
	fclose(f);
	if (rc)
		return -1;
	r.line = 0;
	if (!*s->title || !*s->rule)
		return fail(&r, "a scenario needs a title and a rule line");
	if (!s->nsteps)
		return fail(&r, "a scenario needs at least one step");
	if (!s->nqps)
		s->nqps = 1;	/* the default QP */
	for (unsigned i = 0; i < s->nqps; i++) {
		const char *v = cf_arg_get(s->qps[i].args, s->qps[i].nargs, "srq");
		if (v && (strcmp(v, "1") || !s->has_srq))
			return fail(&r, "qp%s%s srq=%s: srq=1 names the scenario's srq line%s",
				    *s->qps[i].name ? " " : "", s->qps[i].name, v,
				    s->has_srq ? "" : ", which it lacks");
	}
	/* after the whole file: a step may name an MR declared below it */
	for (unsigned i = 0; i < s->nsteps; i++) {
		char why[300];
		r.line = s->steps[i].line;
		if (*s->steps[i].qp && cf_qp_index(s, s->steps[i].qp) < 0)
			return fail(&r, "qp=%s: the scenario declares no QP of that name",
				    s->steps[i].qp);
		const char *v = cf_arg_get(s->steps[i].args, s->steps[i].nargs, "srq");
		if (v && (strcmp(v, "1") || !s->has_srq))
			return fail(&r, "recv srq=%s: srq=1 names the scenario's srq line%s", v,
				    s->has_srq ? "" : ", which it lacks");
		if (cf_step_lint(s, &s->steps[i], why, sizeof(why)))
			return fail(&r, "%s %s", step_kw[s->steps[i].kind].name, why);
	}
	return 0;
}

const char *cf_arg_get(const struct cf_arg *args, unsigned n, const char *key)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(args[i].key, key))
			return args[i].val;
	return NULL;
}
