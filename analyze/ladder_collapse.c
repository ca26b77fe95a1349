/* SPDX-License-Identifier: MIT */
/* Long runs of identical rows (a retry for ever: SEND, RNR NAK, SEND, ...) folded into the rows once and a count. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ladder_local.h"

/* Rows that look the same: everything but their frame and time. */
static bool same_row(const struct roce_ladder_row *a,
		     const struct roce_ladder_row *b)
{
	return a->kind == b->kind && a->col == b->col && a->style == b->style &&
	       a->kind != ROCE_LADDER_REPEAT &&
	       !strncmp(a->label, b->label, sizeof(a->label)) &&
	       !strcmp(a->text ? a->text : "", b->text ? b->text : "");
}

/* How many times rows[i, i + p) occurs from i on, back to back. */
static uint64_t repeats(const struct roce_ladder_row *rows, size_t n, size_t i,
			size_t p)
{
	uint64_t r = 1;

	for (size_t at = i + p; at + p <= n; at += p, r++)
		for (size_t k = 0; k < p; k++)
			if (!same_row(&rows[i + k], &rows[at + k]))
				return r;
	return r;
}

/* The first and last packet rows of rows[from, to): their frames. */
static void frames_of(const struct roce_ladder_row *rows, size_t from,
		      size_t to, struct roce_ladder_row *rep)
{
	bool got = false;

	for (size_t k = from; k < to; k++) {
		if (rows[k].kind != ROCE_LADDER_PACKET)
			continue;
		if (!got) {
			rep->first_no = rows[k].frame_no;
			rep->first_cap = rows[k].cap;
		}
		rep->cap = rows[k].cap;
		rep->frame_no = rows[k].frame_no;
		got = true;
	}
}

/* The row that stands for the run of p rows at i, repeated r times. */
static void repeat_row(const struct roce_ladder_row *rows, size_t i, size_t p,
		       uint64_t r, struct roce_ladder_row *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->kind = ROCE_LADDER_REPEAT;
	rep->period = (unsigned)p;
	rep->repeat = r;
	rep->col = rows[i].col;
	rep->style = rows[i].style;
	rep->rel_ns = rows[i + p * r - 1].rel_ns;
	frames_of(rows, i, i + p * r, rep);
	if (p == 1)
		snprintf(rep->label, sizeof(rep->label),
			 "the row above %" PRIu64 " times in all", r);
	else
		snprintf(rep->label, sizeof(rep->label),
			 "the %zu rows above %" PRIu64 " times in all", p, r);
}

size_t ladder_collapse(struct roce_ladder_chart *ch)
{
	struct roce_ladder_row *rows = ch->rows;
	size_t out = 0, i = 0, folded = 0;

	while (i < ch->n) {
		size_t p, best = 0;
		uint64_t r = 0;
		for (p = 1; p <= ROCE_LADDER_MAX_PERIOD && !best; p++) {
			r = repeats(rows, ch->n, i, p);
			if (r >= ROCE_LADDER_MIN_REPEAT)
				best = p;
		}
		if (!best) {
			rows[out++] = rows[i++];
			continue;
		}
		struct roce_ladder_row rep;
		repeat_row(rows, i, best, r, &rep);
		memmove(&rows[out], &rows[i], best * sizeof(*rows));
		out += best;
		rows[out++] = rep;
		i += best * r;
		folded += best * r - best - 1;
	}
	ch->n = out;
	return folded;
}
