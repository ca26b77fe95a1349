/* SPDX-License-Identifier: MIT */
/* rocemu dump's counters and the summary it closes with. */
#include <errno.h>

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

void dump_stats_print_text(FILE *out, const struct dump_stats *s)
{
	char name[40];

	fprintf(out,
		"\nsummary: %llu frames, %llu RoCEv2 packets, %llu other "
		"frames skipped\n  ICRC ok %llu, ICRC bad %llu, malformed "
		"%llu, truncated by snaplen %llu\n",
		(unsigned long long)s->frames, (unsigned long long)s->roce,
		(unsigned long long)s->skipped, (unsigned long long)s->icrc_ok,
		(unsigned long long)s->icrc_bad,
		(unsigned long long)s->malformed,
		(unsigned long long)s->truncated);
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

	fprintf(out,
		"{\"summary\":{\"frames\":%llu,\"roce\":%llu,\"skipped\":%llu,"
		"\"icrc_ok\":%llu,\"icrc_bad\":%llu,\"malformed\":%llu,"
		"\"truncated\":%llu,\"opcodes\":{",
		(unsigned long long)s->frames, (unsigned long long)s->roce,
		(unsigned long long)s->skipped, (unsigned long long)s->icrc_ok,
		(unsigned long long)s->icrc_bad,
		(unsigned long long)s->malformed,
		(unsigned long long)s->truncated);
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
