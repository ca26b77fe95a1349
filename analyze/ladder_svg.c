/* SPDX-License-Identifier: MIT */
/* The ladder as SVG: the charts stacked, a lifeline per end, a line with an arrowhead marker per packet. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "ladder_time.h"
#include "rocemu/ladder.h"

/* Geometry, in pixels. */
enum {
	WIDTH = 980,
	X_LEFT = 220,  /* the left lifeline */
	X_RIGHT = 760, /* the right lifeline */
	ROW = 26,      /* one row */
	TITLE = 34,    /* the chart's title line */
	HEAD = 40,     /* the head boxes */
	GAP = 30,      /* between charts */
	BOX_W = 220,
};

/*
 * Writes s with XML's special characters escaped, and every byte outside
 * printable ASCII as '?': XML 1.0 forbids most control characters and
 * the document says UTF-8, which a stray byte above 0x7f may break. The
 * layout escapes what it takes from a trace (\xNN) before this.
 */
static void put_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*s >= 0x20 && *s < 0x7f ? *s : '?', out);
		}
	}
}

/* Fits an int whenever the whole picture's height does (checked by
 * total_height before anything is drawn). */
static int chart_height(const struct roce_ladder_chart *ch)
{
	return TITLE + HEAD + (int)ch->n * ROW + ROW / 2;
}

/* The picture's height, or 0 when it passes ROCE_LADDER_SVG_MAX_HEIGHT:
 * counted in 64 bits, a chart at a time, so no sum can wrap first. */
static uint64_t total_height(const struct roce_ladder *l)
{
	uint64_t h = GAP;

	for (size_t k = 0; k < l->n; k++) {
		const struct roce_ladder_chart *ch = &l->charts[k];
		if (ch->n > ROCE_LADDER_SVG_MAX_HEIGHT / ROW)
			return 0;
		h += TITLE + HEAD + (uint64_t)ch->n * ROW + ROW / 2 + GAP;
		if (h > ROCE_LADDER_SVG_MAX_HEIGHT)
			return 0;
	}
	return h;
}

static void write_defs(FILE *out, int height)
{
	fprintf(
	    out,
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" viewBox=\"0 0 %d %d\" "
	    "font-family=\"DejaVu Sans Mono, monospace\" font-size=\"12\">\n"
	    "<defs>\n"
	    "  <marker id=\"head\" markerUnits=\"userSpaceOnUse\" "
	    "markerWidth=\"12\" markerHeight=\"10\" refX=\"12\" refY=\"5\" "
	    "orient=\"auto\">\n"
	    "    <path d=\"M0,0 L12,5 L0,10 z\" fill=\"%s\"/>\n"
	    "  </marker>\n"
	    "</defs>\n"
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
	    WIDTH, height, WIDTH, height, ROCE_LADDER_SVG_HEAD);
}

static void write_head(FILE *out, const struct roce_ladder_chart *ch, int y,
		       int bottom)
{
	fprintf(out, "<g class=\"chart\" id=\"flow%u\">\n", ch->flow);
	fprintf(out,
		"<text class=\"title\" x=\"20\" y=\"%d\" font-size=\"15\" "
		"font-weight=\"bold\">",
		y + 20);
	put_text(out, ch->title);
	fputs("</text>\n", out);
	for (int d = 0; d < 2; d++) {
		int x = d ? X_RIGHT : X_LEFT;
		fprintf(out,
			"<rect class=\"end\" x=\"%d\" y=\"%d\" width=\"%d\" "
			"height=\"26\" rx=\"4\" fill=\"#eef2f8\" "
			"stroke=\"#334\"/>\n",
			x - BOX_W / 2, y + TITLE, BOX_W);
		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
			x, y + TITLE + 17);
		put_text(out, ch->end[d]);
		fputs("</text>\n", out);
		fprintf(out,
			"<line class=\"lifeline\" x1=\"%d\" y1=\"%d\" "
			"x2=\"%d\" y2=\"%d\" stroke=\"#889\" "
			"stroke-dasharray=\"4 4\"/>\n",
			x, y + TITLE + 26, x, bottom);
	}
}

static void write_packet(FILE *out, const struct roce_ladder_row *r, int y,
			 size_t captures)
{
	char f[32];
	int from = r->col ? X_RIGHT : X_LEFT, to = r->col ? X_LEFT : X_RIGHT;
	const char *colour = r->style == ROCE_LADDER_ERROR ? "#c00000" : "#000";
	char t[32];

	fprintf(out,
		"<line class=\"packet\" x1=\"%d\" y1=\"%d\" x2=\"%d\" "
		"y2=\"%d\" stroke=\"%s\" stroke-width=\"1.5\" "
		"marker-end=\"url(#head)\"/>\n",
		from, y, to, y, colour);
	fprintf(out,
		"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
		"fill=\"%s\">",
		(X_LEFT + X_RIGHT) / 2, y - 4, colour);
	put_text(out, r->label);
	fprintf(out,
		"</text>\n<text x=\"%d\" y=\"%d\" fill=\"#556\">%s"
		" %s</text>\n",
		X_RIGHT + 16, y + 4,
		ladder_frame(r->frame_no, r->cap, captures, f, sizeof(f)),
		ladder_seconds(r->rel_ns, t, sizeof(t)));
}

/* A run of repeated rows folded: a line of text in the middle of the
 * lane, under the rows it counts, with their first and last frames. */
static void write_repeat(FILE *out, const struct roce_ladder_row *r, int y,
			 size_t captures)
{
	char a[32], b[32];

	fprintf(out,
		"<text class=\"repeat\" x=\"%d\" y=\"%d\" "
		"text-anchor=\"middle\" font-style=\"italic\" "
		"fill=\"#555\">^ ",
		(X_LEFT + X_RIGHT) / 2, y + 4);
	put_text(out, r->label);
	fprintf(out, ", %s to %s</text>\n",
		ladder_frame(r->first_no, r->first_cap, captures, a, sizeof(a)),
		ladder_frame(r->frame_no, r->cap, captures, b, sizeof(b)));
}

static const char *note_class(enum roce_ladder_row_kind k)
{
	switch (k) {
	case ROCE_LADDER_WQE: return "wqe";
	case ROCE_LADDER_WHY: return "why";
	case ROCE_LADDER_STATE: return "state";
	default: return "cqe";
	}
}

/* A note: a small box on its lifeline, the label beside it inside the
 * lane (a why note's rule after it in brackets). */
static void write_note(FILE *out, const struct roce_ladder_row *r, int y)
{
	int x = r->col ? X_RIGHT : X_LEFT;
	const char *fill = r->style == ROCE_LADDER_ERROR  ? "#c00000"
			   : r->kind == ROCE_LADDER_WQE	  ? "#1f5fbf"
			   : r->kind == ROCE_LADDER_STATE ? "#555566"
							  : "#1b8a3a";

	fprintf(out,
		"<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"10\" "
		"height=\"10\" fill=\"%s\"/>\n",
		note_class(r->kind), x - 5, y - 5, fill);
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"%s\" fill=\"%s\">",
		r->col ? x - 10 : x + 10, y + 4, r->col ? "end" : "start",
		fill);
	if (r->text) {
		/* the whole text where a viewer shows it (on hover): the
		 * label drawn is its start */
		fputs("<title>", out);
		put_text(out, r->text);
		fputs("</title>", out);
	}
	put_text(out, r->label);
	if (r->kind == ROCE_LADDER_WHY && r->rule[0]) {
		fputs(" [", out);
		put_text(out, r->rule);
		fputc(']', out);
	}
	fputs("</text>\n", out);
}

static void write_chart(FILE *out, const struct roce_ladder_chart *ch, int y,
			size_t captures)
{
	int top = y + TITLE + HEAD + ROW / 2;

	write_head(out, ch, y, y + chart_height(ch));
	for (size_t i = 0; i < ch->n; i++) {
		const struct roce_ladder_row *r = &ch->rows[i];
		int ry = top + (int)i * ROW;
		if (r->kind == ROCE_LADDER_PACKET)
			write_packet(out, r, ry, captures);
		else if (r->kind == ROCE_LADDER_REPEAT)
			write_repeat(out, r, ry, captures);
		else
			write_note(out, r, ry);
	}
	fputs("</g>\n", out);
}

int roce_ladder_write_svg(FILE *out, const struct roce_ladder *l)
{
	uint64_t total = total_height(l);

	if (!total)
		return -EFBIG;
	write_defs(out, (int)total);
	int height = GAP / 2;
	for (size_t k = 0; k < l->n; k++) {
		write_chart(out, &l->charts[k], height, l->captures);
		height += chart_height(&l->charts[k]) + GAP;
	}
	fputs("</svg>\n", out);
	return ferror(out) ? -EIO : 0;
}
