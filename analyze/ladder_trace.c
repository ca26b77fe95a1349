/* SPDX-License-Identifier: MIT */
/* Trace events as text lines: written by a running device, read back by rocemu ladder. */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/dissect.h"
#include "rocemu/frame.h"
#include "rocemu/trace.h"

static const char *const kind_names[ROCEMU_EV_KINDS] = {
    [ROCEMU_EV_WQE] = "wqe",	   [ROCEMU_EV_CQE] = "cqe",
    [ROCEMU_EV_RECV_WQE] = "rwqe", [ROCEMU_EV_WHY] = "why",
    [ROCEMU_EV_STATE] = "state",
};

static const char *kind_name(enum rocemu_event_kind k)
{
	return (unsigned)k < ROCEMU_EV_KINDS ? kind_names[k] : "?";
}

static bool has_text(enum rocemu_event_kind k)
{
	return k == ROCEMU_EV_WHY || k == ROCEMU_EV_STATE;
}

/* s (at most max bytes, NUL or not) with each control character turned
 * into a space, and with spaces too when one_word: a field of a line
 * whose fields are split at white space. */
static void clean(char *dst, const char *s, size_t max, bool one_word)
{
	size_t i, n = strnlen(s, max);

	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		dst[i] = (ch < 0x20 || ch == 0x7f || (one_word && ch == ' '))
			     ? (one_word ? '_' : ' ')
			     : (char)ch;
	}
	dst[n] = '\0';
}

int rocemu_event_format(char *buf, size_t len, const struct rocemu_event *ev)
{
	char gid[64], rule[ROCEMU_EV_NAME + 1], text[ROCEMU_EV_TEXT + 1];
	struct roce_sb sb;
	bool why = ev->kind == ROCEMU_EV_WHY;

	roce_sb_init(&sb, gid, sizeof(gid));
	roce_fmt_gid(&sb, ev->gid);
	gid[sb.len < sizeof(gid) ? sb.len : sizeof(gid) - 1] = '\0';
	clean(rule, ev->rule, ROCEMU_EV_NAME, true);
	clean(text, ev->text, ROCEMU_EV_TEXT, false);
	return snprintf(
	    buf, len,
	    "%s frames=%" PRIu64 " t=%" PRIu64 " dev=%s gid=%s "
	    "qp=0x%06x slot=%u op=%s%s%s wr_id=%" PRIu64 " len=%u"
	    " seen=%" PRIu64 " last=0x%08x%s%s%s%s\n",
	    kind_name(ev->kind), ev->frames, ev->time_ns,
	    ev->dev[0] ? ev->dev : "-", gid, ev->qpn, ev->slot,
	    ev->op[0] ? ev->op : "-",
	    ev->kind == ROCEMU_EV_CQE ? " status=" : "",
	    ev->kind == ROCEMU_EV_CQE ? ev->status : "", ev->wr_id, ev->len,
	    ev->seen, ev->last_icrc, why ? " rule=" : "",
	    why ? (rule[0] ? rule : "-") : "", has_text(ev->kind) ? " text=" : "",
	    has_text(ev->kind) ? text : "");
}

int rocemu_trace_begin(FILE *f)
{
	return fprintf(f, "%s\n", ROCEMU_TRACE_MAGIC) < 0 ? -EIO : 0;
}

void rocemu_trace_to_file(void *arg, const struct rocemu_event *ev)
{
	char line[ROCEMU_EV_LINE];
	int n = rocemu_event_format(line, sizeof(line), ev);

	if (n > 0 && (size_t)n < sizeof(line))
		fputs(line, arg);
}

static int copy_name(char dst[ROCEMU_EV_NAME], const char *v)
{
	if (strlen(v) >= ROCEMU_EV_NAME)
		return -EINVAL;
	strcpy(dst, v);
	return 0;
}

/* A rule as rocemu_event_format writes it: its spaces were written as
 * '_' (a field is one word), and are spaces again. */
static int copy_rule(char dst[ROCEMU_EV_NAME], const char *v)
{
	if (copy_name(dst, v))
		return -EINVAL;
	for (char *p = dst; *p; p++)
		if (*p == '_')
			*p = ' ';
	return 0;
}

static int parse_u64(const char *v, int base, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, base);
	return (errno || end == v || *end || *v == '-') ? -EINVAL : 0;
}

/* One key=value of an event line; mask collects the keys seen. */
static int parse_field(struct rocemu_event *ev, const char *key, const char *v,
		       unsigned *mask)
{
	static const char *const keys[] = {
	    "frames", "t",     "dev", "gid",  "qp",   "slot", "op",
	    "status", "wr_id", "len", "seen", "last", "rule"};
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i]))
			break;
	if (i == sizeof(keys) / sizeof(keys[0]) || (*mask & 1u << i))
		return -EINVAL;
	*mask |= 1u << i;
	switch (i) {
	case 2: return copy_name(ev->dev, v);
	case 3: return roce_gid_parse(v, ev->gid);
	case 6: return copy_name(ev->op, v);
	case 7: return copy_name(ev->status, v);
	case 12: return strcmp(v, "-") ? copy_rule(ev->rule, v) : 0;
	}
	if (parse_u64(v, i == 4 || i == 11 ? 16 : 10, &n))
		return -EINVAL;
	switch (i) {
	case 0: ev->frames = n; break;
	case 1: ev->time_ns = n; break;
	case 4: ev->qpn = (uint32_t)n; return n > 0xffffff ? -EINVAL : 0;
	case 5: ev->slot = (uint32_t)n; return n > UINT32_MAX ? -EINVAL : 0;
	case 8: ev->wr_id = n; break;
	case 10: ev->seen = n; break;
	case 11:
		ev->last_icrc = (uint32_t)n;
		return n > UINT32_MAX ? -EINVAL : 0;
	default: ev->len = (uint32_t)n; return n > UINT32_MAX ? -EINVAL : 0;
	}
	return 0;
}

/* The text of a why or state line: what follows " text=" to the line's
 * end, its newline dropped, into ev->text; the line is cut before it.
 * -EINVAL when there is none or it is too long. */
static int take_text(char *line, struct rocemu_event *ev)
{
	char *t = strstr(line, " text=");

	if (!t)
		return -EINVAL;
	*t = '\0';
	t += strlen(" text=");
	size_t n = strcspn(t, "\r\n");
	if (n >= ROCEMU_EV_TEXT)
		return -EINVAL;
	memcpy(ev->text, t, n);
	ev->text[n] = '\0';
	return 0;
}

int rocemu_event_parse(const char *line, struct rocemu_event *ev)
{
	char copy[ROCEMU_EV_LINE], *save = NULL, *tok;
	unsigned mask = 0;
	size_t l = strlen(line);

	if (l >= sizeof(copy))
		return -EINVAL;
	memcpy(copy, line, l + 1);
	memset(ev, 0, sizeof(*ev));
	tok = strtok_r(copy, " \t\r\n", &save);
	if (!tok)
		return -EINVAL;
	unsigned k = 0;
	while (k < ROCEMU_EV_KINDS && strcmp(tok, kind_names[k]))
		k++;
	if (k == ROCEMU_EV_KINDS)
		return -EINVAL;
	ev->kind = (enum rocemu_event_kind)k;
	if (has_text(ev->kind) && take_text(save, ev))
		return -EINVAL;
	while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return -EINVAL;
		*eq = '\0';
		if (parse_field(ev, tok, eq + 1, &mask))
			return -EINVAL;
	}
	/* Every key but status, seen, last and rule; status exactly for a
	 * CQE, rule exactly for a why; seen and last together or neither
	 * (traces written before they were kept have none). */
	unsigned want = 0x37f | (ev->kind == ROCEMU_EV_CQE ? 0x80 : 0) |
			(ev->kind == ROCEMU_EV_WHY ? 0x1000 : 0);
	unsigned pair = mask & 0xc00;
	return (mask & ~0xc00u) == want && (pair == 0 || pair == 0xc00)
		   ? 0
		   : -EINVAL;
}

/* Appends ev to the growing array; -ENOMEM. */
static int push(struct rocemu_event **evs, size_t *n, size_t *cap,
		const struct rocemu_event *ev)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct rocemu_event *p = reallocarray(*evs, c, sizeof(*p));
		if (!p)
			return -ENOMEM;
		*evs = p;
		*cap = c;
	}
	(*evs)[(*n)++] = *ev;
	return 0;
}

/*
 * Lines are read whole, however long (getline): a comment longer than
 * any event stays one comment, its tail never read as an event. A line
 * costs what its bytes do, once.
 */
static int read_events(FILE *f, struct rocemu_event **evs, size_t *n, char *err,
		       size_t errlen)
{
	char *line = NULL;
	size_t len = 0, cap = 0, no = 1;
	struct rocemu_event ev;
	int rc = 0;

	if (getline(&line, &len, f) < 0 ||
	    strncmp(line, ROCEMU_TRACE_MAGIC, strlen(ROCEMU_TRACE_MAGIC))) {
		snprintf(err, errlen,
			 "not a rocemu trace (the first line is "
			 "not \"%s\")",
			 ROCEMU_TRACE_MAGIC);
		free(line);
		return -EINVAL;
	}
	while (getline(&line, &len, f) >= 0) {
		no++;
		if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (rocemu_event_parse(line, &ev)) {
			snprintf(err, errlen, "line %zu is not a trace event",
				 no);
			rc = -EINVAL;
			break;
		}
		if (push(evs, n, &cap, &ev)) {
			snprintf(err, errlen, "out of memory");
			rc = -ENOMEM;
			break;
		}
	}
	free(line);
	return rc;
}

int rocemu_trace_read(FILE *f, struct rocemu_event **evs, size_t *n,
		      char *err, size_t errlen)
{
	struct rocemu_event *got = NULL;
	size_t count = 0;
	int rc = read_events(f, &got, &count, err, errlen);

	if (!rc && ferror(f)) {
		rc = -EIO;
		snprintf(err, errlen, "read error");
	}
	if (rc) {
		free(got);
		return rc;
	}
	*evs = got;
	*n = count;
	return 0;
}

int rocemu_trace_load(const char *path, struct rocemu_event **evs, size_t *n,
		      char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	rc = rocemu_trace_read(f, evs, n, err, errlen);
	fclose(f);
	return rc;
}
