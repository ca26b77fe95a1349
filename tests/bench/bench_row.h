/* SPDX-License-Identifier: MIT */
/* One figure of make bench: a table row on stdout and, where BENCH_JSONL names a file, one JSON line appended to it. */
#ifndef ROCEMU_BENCH_ROW_H
#define ROCEMU_BENCH_ROW_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A figure, with the reference measured in the same run (ref_name NULL
 * when there is none) and a target such as ">=0.9" or "<=1.0": on the
 * ratio value / ref when there is a reference, on the value otherwise
 * (target NULL: none). Prints the row; appends it as a JSON object to
 * $BENCH_JSONL when that is set (tests/bench/bench_report.py reads them).
 * The names are the caller's literals: no character needs escaping.
 */
static inline void bench_row(const char *group, const char *name, double value,
			     const char *unit, const char *ref_name,
			     double ref, const char *target)
{
	double ratio = ref_name && ref > 0 ? value / ref : 0;
	double on = ref_name ? ratio : value, want = 0;
	const char *verdict = "";

	if (target && strlen(target) > 2) {
		want = atof(target + 2);
		bool ge = target[0] == '>';
		verdict = (ge ? on >= want : on <= want) ? "met" : "MISSED";
	}
	printf("%-44s %10.3f %-7s", name, value, unit);
	if (ref_name)
		printf(" %10.3f %7.3f", ref, ratio);
	else
		printf(" %10s %7s", "", "");
	printf(" %-7s %s\n", target ? target : "", verdict);
	if (ref_name)
		printf("%-44s   (reference: %s)\n", "", ref_name);
	fflush(stdout);

	const char *path = getenv("BENCH_JSONL");
	FILE *f = path && *path ? fopen(path, "a") : NULL;
	if (!f)
		return;
	fprintf(f, "{\"group\": \"%s\", \"name\": \"%s\", \"value\": %.6g, "
		   "\"unit\": \"%s\"", group, name, value, unit);
	if (ref_name)
		fprintf(f, ", \"reference\": \"%s\", \"ref_value\": %.6g",
			ref_name, ref);
	if (target)
		fprintf(f, ", \"target\": \"%s\"", target);
	fprintf(f, "}\n");
	fclose(f);
}

#endif
