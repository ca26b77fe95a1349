/* SPDX-License-Identifier: MIT */
/* rocemu dump's counters and the summary it closes with. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "dump_stats.h"
#include "rocemu/dissect.h"

static void count_reasons(struct reason_count *r, const char *why,
			  uint64_t n)
{
	int i = 0;

	while (i < DUMP_MAX_REASONS - 1 && r[i].why && r[i].why != why)
		i++;
	/* The last slot collects anything beyond the table. */
	if (!r[i].why)
		r[i].why = why;
	r[i].n += n;
}

static void count_reason(struct reason_count *r, const char *why)
{
	count_reasons(r, why, 1);
}

void dump_stats_merge(struct dump_stats *d, const struct dump_stats *s)
{
	d->frames += s->frames;
	d->roce += s->roce;
	d->skipped += s->skipped;
	d->icrc_ok += s->icrc_ok;
	d->icrc_bad += s->icrc_bad;
	d->malformed += s->malformed;
	d->truncated += s->truncated;
	for (int i = 0; i < 256; i++)
		d->per_opcode[i] += s->per_opcode[i];
	for (int i = 0; i < DUMP_MAX_REASONS && s->bad_why[i].why; i++)
		count_reasons(d->bad_why, s->bad_why[i].why, s->bad_why[i].n);
	for (int i = 0; i < DUMP_MAX_REASONS && s->skip_why[i].why; i++)
		count_reasons(d->skip_why, s->skip_why[i].why,
			      s->skip_why[i].n);
}

void dump_stats_add(struct dump_stats *s, int rc, const char *why,
		    const struct roce_frame *f)
{
	s->frames++;
	if (rc == -ENOMSG) {
		s->skipped++;
		count_reason(s->skip_why, why);
		return;
	}
	s->roce++;
	if (f->ib.has_bth)
		s->per_opcode[f->ib.bth.opcode]++;
	if (rc) {
		s->malformed++;
		count_reason(s->bad_why, why);
	} else if (f->truncated) {
		s->truncated++;
	} else if (roce_frame_icrc_ok(f)) {
		s->icrc_ok++;
	} else {
		s->icrc_bad++;
	}
}

bool dump_stats_clean(const struct dump_stats *s)
{
	return s->icrc_ok == s->roce;
}

static const char *opname(uint8_t op, char *buf, size_t cap)
{
	struct roce_sb sb;

	roce_sb_init(&sb, buf, cap);
	roce_fmt_opname(&sb, op);
	return buf;
}

/*
 * The summary's counters, which the text and the JSON summary both walk:
 * the JSON key, and the text around the value ("ICRC ok N").
 */
static const struct counter {
	const char *key;
	const char *before, *after;
	size_t off;
} counters[] = {
	{ "frames", "summary: ", " frames",
	  offsetof(struct dump_stats, frames) },
	{ "roce", ", ", " RoCEv2 packets",
	  offsetof(struct dump_stats, roce) },
	{ "skipped", ", ", " other frames skipped\n",
	  offsetof(struct dump_stats, skipped) },
	{ "icrc_ok", "  ICRC ok ", "", offsetof(struct dump_stats, icrc_ok) },
	{ "icrc_bad", ", ICRC bad ", "",
	  offsetof(struct dump_stats, icrc_bad) },
	{ "malformed", ", malformed ", "",
	  offsetof(struct dump_stats, malformed) },
	{ "truncated", ", truncated by snaplen ", "\n",
	  offsetof(struct dump_stats, truncated) },
};

static unsigned long long counter_value(const struct dump_stats *s,
					const struct counter *c)
{
	uint64_t v;

	memcpy(&v, (const char *)s + c->off, sizeof(v));
	return (unsigned long long)v;
}

void dump_stats_print_text(FILE *out, const struct dump_stats *s,
			   bool after_blank)
{
	char name[40];

	if (!after_blank)
		fputc('\n', out);

	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		fprintf(out, "%s%llu%s", counters[i].before,
			counter_value(s, &counters[i]), counters[i].after);
	for (int op = 0; op < 256; op++)
		if (s->per_opcode[op])
			fprintf(out, "  %-28s %llu\n",
				opname((uint8_t)op, name, sizeof(name)),
				(unsigned long long)s->per_opcode[op]);
	for (int i = 0; i < DUMP_MAX_REASONS && s->bad_why[i].why; i++)
		fprintf(out, "  malformed: %s: %llu\n", s->bad_why[i].why,
			(unsigned long long)s->bad_why[i].n);
	for (int i = 0; i < DUMP_MAX_REASONS && s->skip_why[i].why; i++)
		fprintf(out, "  skipped: %s: %llu\n", s->skip_why[i].why,
			(unsigned long long)s->skip_why[i].n);
}

static void json_reasons(FILE *out, const char *key,
			 const struct reason_count *r)
{
	fprintf(out, ",\"%s\":{", key);
	for (int i = 0; i < DUMP_MAX_REASONS && r[i].why; i++)
		fprintf(out, "%s\"%s\":%llu", i ? "," : "", r[i].why,
			(unsigned long long)r[i].n);
	fputc('}', out);
}

void dump_stats_print_json(FILE *out, const struct dump_stats *s)
{
	char name[40];
	int first = 1;

	fputs("{\"summary\":{", out);
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		fprintf(out, "\"%s\":%llu,", counters[i].key,
			counter_value(s, &counters[i]));
	fputs("\"opcodes\":{", out);
	for (int op = 0; op < 256; op++) {
		if (!s->per_opcode[op])
			continue;
		fprintf(out, "%s\"%s\":%llu", first ? "" : ",",
			opname((uint8_t)op, name, sizeof(name)),
			(unsigned long long)s->per_opcode[op]);
		first = 0;
	}
	fputc('}', out);
	json_reasons(out, "malformed_reasons", s->bad_why);
	json_reasons(out, "skipped_reasons", s->skip_why);
	fputs("}}\n", out);
}
