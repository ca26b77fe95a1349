/* SPDX-License-Identifier: MIT */
/* The ladder as plain text: two lifelines, an arrow line per packet, notes against a lifeline. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ladder_time.h"
#include "rocemu/ladder.h"

/*
 * A line is "  |" + the lane + "|" + the frame number and time; the lane
 * is as wide as the chart's longest label needs, between LANE_MIN and
 * LANE_MAX, so that a line stays within 100 columns.
 */
enum { MARGIN = 2, LANE_MIN = 40, LANE_MAX = 68, DECOR = 7, SLACK = 6 };

/*
 * What a row says in a lane of width w: its label, and for a why note
 * its rule after it (the label cut so that the rule shows), for a
 * repeat its first and last frames. Writes at most len bytes.
 */
static void row_text(const struct roce_ladder_row *r, size_t w,
		     size_t captures, char *buf, size_t len)
{
	char tail[ROCEMU_EV_NAME + 64] = "", a[32], b[32];
	size_t room = w > DECOR ? w - DECOR : 0;

	if (r->kind == ROCE_LADDER_WHY && r->rule[0])
		snprintf(tail, sizeof(tail), " [%s]", r->rule);
	if (r->kind == ROCE_LADDER_REPEAT)
		snprintf(tail, sizeof(tail), ", %s to %s",
			 ladder_frame(r->first_no, r->first_cap, captures, a,
				      sizeof(a)),
			 ladder_frame(r->frame_no, r->cap, captures, b,
				      sizeof(b)));
	size_t t = strlen(tail), n = strlen(r->label);
	if (t && n + t > room)
		n = room > t ? room - t : 0;
	snprintf(buf, len, "%.*s%s", (int)n, r->label, tail);
}

static size_t lane_width(const struct roce_ladder_chart *ch, size_t captures)
{
	size_t w = LANE_MIN;
	char text[2 * ROCE_LADDER_LABEL];

	for (size_t i = 0; i < ch->n; i++) {
		row_text(&ch->rows[i], LANE_MAX, captures, text, sizeof(text));
		size_t need = strlen(text) + DECOR + SLACK;
		if (need > w)
			w = need;
	}
	return w > LANE_MAX ? LANE_MAX : w;
}

/* The label, cut to fit a lane of width w with its decoration. */
static int fit(const char *label, size_t w)
{
	size_t n = strlen(label);

	return (int)(n + DECOR > w ? w - DECOR : n);
}

static void fill(char *p, char c, size_t n)
{
	memset(p, c, n);
}

/* The lane of a packet row: "--- label ---->" or "<---- label ---". */
static void arrow_lane(const struct roce_ladder_row *r, const char *label,
		       size_t w, char *lane)
{
	int n = fit(label, w);
	size_t dashes = w - (size_t)n - 6; /* besides "--- " and " " and ">" */

	fill(lane, '-', w);
	if (r->col == 0) {
		memcpy(lane + 4, label, (size_t)n);
		lane[3] = lane[4 + n] = ' ';
		lane[w - 1] = '>';
	} else {
		memcpy(lane + 2 + dashes, label, (size_t)n);
		lane[1 + dashes] = lane[2 + dashes + n] = ' ';
		lane[0] = '<';
	}
}

/* The lane of a note: "* label" against the left lifeline, "label *"
 * against the right one ('!' for a why, '=' for a state line); a
 * repeat is "^ label" in the middle of the lane, under what it counts. */
static void note_lane(const struct roce_ladder_row *r, const char *label,
		      size_t w, char *lane)
{
	int n = fit(label, w);
	char mark = r->kind == ROCE_LADDER_WHY	   ? '!'
		    : r->kind == ROCE_LADDER_STATE ? '='
						   : '*';

	fill(lane, ' ', w);
	if (r->kind == ROCE_LADDER_REPEAT) {
		size_t at = (w - (size_t)n - 2) / 2;
		lane[at] = '^';
		memcpy(lane + at + 2, label, (size_t)n);
	} else if (r->col == 0) {
		lane[0] = mark;
		memcpy(lane + 2, label, (size_t)n);
	} else {
		lane[w - 1] = mark;
		memcpy(lane + w - 2 - n, label, (size_t)n);
	}
}

/*
 * Writes s with every byte outside printable ASCII as '?': the layout
 * escapes what it takes from a trace, so this only guards a layout built
 * otherwise from writing control characters to a terminal.
 */
static void put_plain(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s >= 0x20 && *s < 0x7f ? *s : '?', out);
}

enum { PIECES_MAX = ROCEMU_EV_TEXT + ROCEMU_EV_NAME + 16 };

/* all[0, n) cut into pieces of at most room bytes, at a space near the
 * end of each where there is one: their starts and lengths. Returns how
 * many; the widest in *widest. */
static size_t cut_pieces(const char *all, size_t n, size_t room,
			 size_t *at, size_t *len, size_t *widest)
{
	size_t k = 0, i = 0;

	*widest = 0;
	while (i < n && k < PIECES_MAX) {
		size_t l = n - i > room ? room : n - i;
		if (i + l < n)
			for (size_t b = l; b > room / 2; b--)
				if (all[i + b] == ' ') {
					l = b;
					break;
				}
		at[k] = i;
		len[k] = l;
		*widest = l > *widest ? l : *widest;
		k++;
		i += l;
		while (i < n && all[i] == ' ')
			i++;
	}
	return k;
}

/*
 * A why or state note whole: its text (and rule) in pieces as wide as
 * the lane allows, the first with its mark and time, the rest indented
 * under it on lines of their own with no time ("  |    rest of it  |").
 * On the right lifeline the block is set flush with its widest piece.
 */
static void write_long_note(FILE *out, const struct roce_ladder_row *r,
			    size_t w)
{
	char all[PIECES_MAX], lane[LANE_MAX + 1], t[32];
	size_t at[PIECES_MAX], len[PIECES_MAX], widest;
	/* every piece as wide as the indented ones, so none is cut */
	size_t room = w - DECOR - 2;

	snprintf(all, sizeof(all), "%s: %s%s%s%s",
		 r->kind != ROCE_LADDER_WHY ? "state"
		 : r->check		   ? "check"
					   : "why",
		 r->text,
		 r->rule[0] ? " [" : "", r->rule, r->rule[0] ? "]" : "");
	size_t k = cut_pieces(all, strlen(all), room, at, len, &widest);
	/* where the pieces start: after the mark on the left, so that the
	 * widest indented one ends before the mark on the right */
	size_t from = r->col == 0 ? 2 : w - 2 - (widest + (k > 1 ? 2 : 0));

	ladder_seconds(r->rel_ns, t, sizeof(t));
	for (size_t i = 0; i < k; i++) {
		fill(lane, ' ', w);
		if (i == 0)
			lane[r->col == 0 ? 0 : w - 1] = r->kind == ROCE_LADDER_WHY
								? '!'
								: '=';
		memcpy(lane + from + (i ? 2 : 0), all + at[i], len[i]);
		lane[w] = '\0';
		for (size_t j = 0; j < w; j++)
			if (lane[j] < 0x20 || lane[j] >= 0x7f)
				lane[j] = '?';
		fprintf(out, "%*s|%s|%s%s\n", MARGIN, "", lane, i ? "" : "  ",
			i ? "" : t);
	}
}

static void write_row(FILE *out, const struct roce_ladder_row *r, size_t w,
		      size_t captures)
{
	if (r->text &&
	    (r->kind == ROCE_LADDER_WHY || r->kind == ROCE_LADDER_STATE)) {
		write_long_note(out, r, w);
		return;
	}

	char lane[LANE_MAX + 1], t[32], f[32], text[2 * ROCE_LADDER_LABEL];

	row_text(r, w, captures, text, sizeof(text));
	if (r->kind == ROCE_LADDER_PACKET)
		arrow_lane(r, text, w, lane);
	else
		note_lane(r, text, w, lane);
	lane[w] = '\0';
	for (size_t i = 0; i < w; i++)
		if (lane[i] < 0x20 || lane[i] >= 0x7f)
			lane[i] = '?';
	ladder_seconds(r->rel_ns, t, sizeof(t));
	if (r->kind == ROCE_LADDER_PACKET)
		fprintf(out, "%*s|%s|  %s %s\n", MARGIN, "", lane,
			ladder_frame(r->frame_no, r->cap, captures, f,
				     sizeof(f)),
			t);
	else
		fprintf(out, "%*s|%s|  %s\n", MARGIN, "", lane, t);
}

/* The two ends' names, each centred over its lifeline where room allows. */
static void write_head(FILE *out, const struct roce_ladder_chart *ch, size_t w)
{
	size_t l0 = strlen(ch->end[0]), l1 = strlen(ch->end[1]);
	size_t right = MARGIN + 1 + w; /* column of the right lifeline */
	size_t at = right > l1 / 2 ? right - l1 / 2 : 0;

	if (at < l0 + 2)
		at = l0 + 2;
	put_plain(out, ch->end[0]);
	fprintf(out, "%*s", (int)(at - l0), "");
	put_plain(out, ch->end[1]);
	fputc('\n', out);
	fprintf(out, "%*s|%*s|\n", MARGIN, "", (int)w, "");
}

int roce_ladder_write_text(FILE *out, const struct roce_ladder *l)
{
	for (size_t k = 0; k < l->n; k++) {
		const struct roce_ladder_chart *ch = &l->charts[k];
		size_t w = lane_width(ch, l->captures);

		fputs(k ? "\n" : "", out);
		put_plain(out, ch->title);
		fputs("\n\n", out);
		write_head(out, ch, w);
		for (size_t i = 0; i < ch->n; i++)
			write_row(out, &ch->rows[i], w, l->captures);
	}
	return ferror(out) ? -EIO : 0;
}
