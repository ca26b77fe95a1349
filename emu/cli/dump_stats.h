/* SPDX-License-Identifier: MIT */
/* Counters that rocemu dump keeps, and its closing summary. */
#ifndef ROCEMU_EMU_DUMP_STATS_H
#define ROCEMU_EMU_DUMP_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rocemu/frame.h"

enum { DUMP_MAX_REASONS = 32 };

/* Reasons are the parser's static strings, so pointers identify them. */
struct reason_count {
	const char *why;
	uint64_t n;
};

struct dump_stats {
	uint64_t frames, roce, skipped;
	uint64_t icrc_ok, icrc_bad, malformed, truncated;
	uint64_t per_opcode[256];
	struct reason_count bad_why[DUMP_MAX_REASONS];
	struct reason_count skip_why[DUMP_MAX_REASONS];
};

/* Counts one frame given roce_frame_parse()'s result. */
void dump_stats_add(struct dump_stats *s, int rc, const char *why,
		    const struct roce_frame *f);

/* Adds the counts of src to dst. */
void dump_stats_merge(struct dump_stats *dst, const struct dump_stats *src);

/* True when every RoCE packet decoded and passed its ICRC. */
bool dump_stats_clean(const struct dump_stats *s);

/* Writes the summary as text lines, after a blank line unless the output
 * already ends with one (after_blank: -v's frames each end so); s is not
 * changed, and a write error is left to out's error flag. */
void dump_stats_print_text(FILE *out, const struct dump_stats *s,
			   bool after_blank);
/* The same summary as one JSON object on a line. */
void dump_stats_print_json(FILE *out, const struct dump_stats *s);

#endif
