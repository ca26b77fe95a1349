/* SPDX-License-Identifier: MIT */
/* conform's reports: the summary table, JUnit XML. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"

static const char *verdict_name(const struct cf_result *r)
{
	if (r->verdict == CF_PASS)
		return "PASS";
	if (r->verdict == CF_NA)
		return "N/A";
	return r->known ? "KNOWN" : "FAIL";
}

const char *cf_family_name(int family)
{
	return family == CF_IPV6 ? "ipv6" : "ipv4";
}

/* The counts of the results over family (-1: every family). */
struct tally {
	unsigned n, pass, fail, known, na;
};

static struct tally count(const struct cf_result *r, unsigned n, int family)
{
	struct tally t = { 0 };

	for (unsigned i = 0; i < n; i++) {
		if (family >= 0 && r[i].family != family)
			continue;
		t.n++;
		if (r[i].verdict == CF_PASS)
			t.pass++;
		else if (r[i].verdict == CF_NA)
			t.na++;
		else if (r[i].known)
			t.known++;
		else
			t.fail++;
	}
	return t;
}

static void tally_line(FILE *f, const char *what, struct tally t, const char *impl,
		       const char *tail)
{
	fprintf(f, "conform: %s%u scenarios on %s: %u passed, %u failed, "
		"%u failed as known %s deviations, %u not applicable%s\n",
		what, t.n, impl, t.pass, t.fail, t.known, impl, t.na, tail);
}

void cf_report_table(FILE *f, const struct cf_scenario *const *sc,
		     const struct cf_result *r, unsigned n, const char *impl)
{
	bool fam[2] = { false, false };
	char name[CF_NAME + 8];

	fprintf(f, "\n%-6s %-30s %s\n", "result", "scenario", "rule");
	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s (%s)", sc[i]->id, cf_family_name(r[i].family));
		fprintf(f, "%-6s %-30s %.70s\n", verdict_name(&r[i]), name, sc[i]->rule);
		fam[r[i].family == CF_IPV6] = true;
	}
	fputc('\n', f);
	/* one line per IP version when both ran; the last line counts each
	 * scenario once per version it ran over */
	if (fam[0] && fam[1]) {
		tally_line(f, "ipv4: ", count(r, n, CF_IPV4), impl, "");
		tally_line(f, "ipv6: ", count(r, n, CF_IPV6), impl, "");
	}
	tally_line(f, "", count(r, n, -1), impl,
		   fam[0] && fam[1] ? " (ipv4 and ipv6)" : fam[1] ? " (ipv6)" : " (ipv4)");
}

/* Writes s with XML's five special characters escaped. */
static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
				fputc(*s, f);
		}
	}
}

static void junit_case(FILE *f, const struct cf_scenario *sc, const struct cf_result *r)
{
	fprintf(f, "  <testcase classname=\"conform.%s\" name=\"", sc->transport);
	xml_text(f, sc->id);
	fprintf(f, " (%s)", cf_family_name(r->family));
	fprintf(f, "\" time=\"%.3f\">\n", (double)r->ms / 1000);
	if (r->verdict == CF_NA) {
		fputs("    <skipped message=\"", f);
		xml_text(f, r->why);
		fputs("\"/>\n", f);
	} else if (r->verdict == CF_FAIL) {
		fputs("    <failure message=\"", f);
		xml_text(f, sc->path);
		fprintf(f, ":%u: ", r->step_line);
		xml_text(f, r->why);
		fputs(" (rule: ", f);
		if (r->step_rule[0]) {
			xml_text(f, r->step_rule);
			fputs("; ", f);
		}
		xml_text(f, sc->rule);
		fputs(")", f);
		fputs("\">", f);
		if (r->known) {
			xml_text(f, "known deviation: ");
			xml_text(f, r->known->text);
			fputc('\n', f);
		}
		unsigned left_out, n = cf_evidence_count(r, &left_out);
		for (unsigned i = 0; i < n; i++) {
			if (i == CF_EVIDENCE_HEAD && left_out)
				fprintf(f, "... %u lines left out ...\n", left_out);
			xml_text(f, cf_evidence_at(r, i));
			fputc('\n', f);
		}
		fputs("</failure>\n", f);
	}
	fputs("  </testcase>\n", f);
}

int cf_report_junit(const char *path, const struct cf_scenario *const *sc,
		    const struct cf_result *r, unsigned n, const char *impl)
{
	FILE *f = fopen(path, "w");
	unsigned fail = 0, na = 0;
	uint64_t ms = 0;

	if (!f)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		fail += r[i].verdict == CF_FAIL;
		na += r[i].verdict == CF_NA;
		ms += r[i].ms;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuite name=\"rocemu conform: ");
	xml_text(f, impl);
	fprintf(f, "\" tests=\"%u\" failures=\"%u\" errors=\"0\" skipped=\"%u\" time=\"%.3f\">\n",
		n, fail, na, (double)ms / 1000);
	for (unsigned i = 0; i < n; i++)
		junit_case(f, sc[i], &r[i]);
	fprintf(f, "</testsuite>\n");
	return fclose(f) ? -1 : 0;
}
