/* SPDX-License-Identifier: MIT */
/* Ladder diagrams (message sequence charts) of a capture's flows: the layout, and its text and SVG renderings. */
#ifndef ROCEMU_LADDER_H
#define ROCEMU_LADDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rocemu/flow.h"
#include "rocemu/trace.h"

/*
 * A chart per flow: two columns, the flow's two ends (end[0], the end
 * that sent the flow's first packet, on the left), and rows going down
 * in time. A packet row is an arrow from the sender's column to the
 * receiver's; a note row sits on one column's lifeline (a WQE taken into
 * an SQ or RQ slot, a CQE written into a CQ slot). The layout holds text only;
 * the renderers decide what it looks like.
 */
enum roce_ladder_row_kind {
	ROCE_LADDER_PACKET,
	ROCE_LADDER_WQE,
	ROCE_LADDER_CQE,
	ROCE_LADDER_WHY,    /* why a NAK, error or drop happened: text, rule */
	ROCE_LADDER_STATE,  /* a line of a queue-state dump */
	ROCE_LADDER_REPEAT, /* the rows above, repeated (collapsed) */
};

/* How a row is drawn: normally, or marked as an error (a NAK, an RNR
 * NAK, a packet that did not parse, a CQE with an error status). */
enum roce_ladder_style {
	ROCE_LADDER_NORMAL,
	ROCE_LADDER_ERROR,
};

enum { ROCE_LADDER_LABEL = 96, ROCE_LADDER_END = 64 };

struct roce_ladder_row {
	enum roce_ladder_row_kind kind;
	enum roce_ladder_style style;
	unsigned col;	   /* packet: the sender's column; note: its own */
	uint64_t frame_no; /* packet: its frame number; note: 0 */
	unsigned cap;	   /* packet: the capture frame_no counts in */
	int64_t rel_ns;	   /* since the first frame of any capture */
	/* ROCE_LADDER_REPEAT: the period rows above it occurred repeat
	 * times in all, from frame first_no (of capture first_cap) to
	 * frame_no (of cap) */
	unsigned period, first_cap;
	uint64_t repeat, first_no;
	char label[ROCE_LADDER_LABEL];
	char rule[ROCEMU_EV_NAME]; /* ROCE_LADDER_WHY: the rule it cites */
	/* ROCE_LADDER_WHY, ROCE_LADDER_STATE: the whole text, label's
	 * longer form (the ladder's texts own it); NULL for other rows */
	const char *text;
	bool check;	/* ROCE_LADDER_WHY: a finding of the capture checker
			 * (a mark), not a trace's why event */
};

struct roce_ladder_chart {
	unsigned flow;		       /* roce_flows id */
	char title[ROCE_LADDER_LABEL]; /* "flow 0: RC, 5 packets" */
	char end[2][ROCE_LADDER_END];  /* "10.0.0.1 qp 0x11" */
	size_t n;
	struct roce_ladder_row *rows;
	size_t packets; /* packet rows among them */
};

struct roce_ladder {
	size_t n;
	struct roce_ladder_chart *charts; /* by flow id */
	size_t events_unplaced; /* events whose QP is in no charted flow
				 * (why and state events of no QP, e.g.
				 * a refused create_qp, aside) */
	size_t captures;	/* capture inputs (frames are "#a3" when 2+) */
	size_t *by_time;	/* per trace: events placed by time, as the
				 * packet they follow is in no capture */
	size_t shared;		/* packets more than one capture held */
	size_t out_of_order;	/* packets drawn against a capture's order
				 * (the captures disagree) */
	size_t collapsed;	/* rows folded into ROCE_LADDER_REPEAT rows */
	size_t marks_unplaced;	/* marks whose frame no chart draws */
	char **texts;		/* what the rows' text fields point to */
	size_t ntexts;
};

/* The most captures one ladder merges (frames are lettered a to p). */
#define ROCE_LADDER_MAX_CAPTURES 16

/* A run repeated at least this many times collapses (period 1 to
 * ROCE_LADDER_MAX_PERIOD rows). */
/* A run folds from 9 repeats on: every finite retry count gives at most 8
 * tries (1 + retry_cnt 7; 1 + rnr_retry 6), which are drawn whole, as a
 * reader learning the retry rules wants to count them; only a retry "for
 * ever" (rnr_retry 7) and longer runs fold. */
enum { ROCE_LADDER_MIN_REPEAT = 9, ROCE_LADDER_MAX_PERIOD = 4 };

/* One trace's events, in its file's order. */
struct roce_ladder_trace {
	const struct rocemu_event *evs;
	size_t n;
};

/* A note to draw right after a packet (a finding of rocemu check): frame
 * frame_no of capture cap, on its sender's lifeline, as a why note marked
 * as the checker's (row.check) with the rule and the text; error: drawn
 * as an error (a rule broken), else normally (a loss or a reason). */
struct roce_ladder_mark {
	unsigned cap;
	uint64_t frame_no;
	bool error;
	const char *rule;
	const char *text;
};

/* What roce_ladder_build_many draws. */
struct roce_ladder_input {
	const struct roce_capture *caps; /* 1 to ROCE_LADDER_MAX_CAPTURES */
	size_t ncaps;
	const struct roce_ladder_trace *traces;
	size_t ntraces;
	int only_flow;	/* ROCE_LADDER_ALL_FLOWS or a flow of the merge */
	bool collapse;	/* fold runs of identical rows */
	const struct roce_ladder_mark *marks;	/* NULL, or nmarks */
	size_t nmarks;
};

/*
 * Merges the captures into one packet sequence and lays out its charts.
 * A packet two captures hold (the same bytes from the IP payload on; the
 * k-th of identical ones in one capture is the k-th in the other) is
 * one row; the order keeps each capture's own order, ties going to the
 * earlier timestamp (when captures disagree, the earliest head is drawn
 * and l->out_of_order counts it). Events carrying seen/last_icrc go
 * right after the packet with that ICRC their device (by GID) sent or
 * received, searching on from the trace's previous event (among equal
 * ones, the one that is about the device's seen-th frame); when no
 * capture holds it they go by time and l->by_time[trace] counts them.
 * Events of a trace without seen (an older trace) go by frames, which
 * only the same process's capture numbers: with such a trace and more
 * than one capture, returns -EDOM. Returns 0 with the charts in *l (free
 * with roce_ladder_free); -ENOENT when only_flow is not a flow of the
 * merge; -EINVAL for no capture or more than ROCE_LADDER_MAX_CAPTURES;
 * -ENOMEM. On failure *l is empty. in and what it points to are unchanged.
 */
int roce_ladder_build_many(const struct roce_ladder_input *in,
			   struct roce_ladder *l);

/*
 * roce_capture_load (rocemu/flow.h) for a capture that may be cut
 * short: a record that does not read whole (a file that ends mid-record,
 * a damaged record header) ends the capture there, with what came before
 * it kept, *partial set and the reason in err. Otherwise, and for a file
 * whose header does not read, as roce_capture_load (*partial false).
 */
int roce_ladder_capture_load(const char *path, struct roce_capture *c,
			     char *err, bool *partial);

/*
 * How many of c's RC and UC flows the capture joined late: their first
 * packet in it is a response, or the middle or end of a message (the
 * capture began after the connection did). Those draw from there on.
 * Returns 0 for none (and when out of memory). c is unchanged.
 */
size_t roce_ladder_mid_flows(const struct roce_capture *c);

/* Whether a trace's events carry no seen/last_icrc but count frames (a
 * trace written before they were kept): roce_ladder_build_many places
 * them only against the process's own capture. */
bool roce_ladder_trace_is_old(const struct rocemu_event *evs, size_t n);

/* Every flow (roce_ladder_build's only_flow). */
#define ROCE_LADDER_ALL_FLOWS (-1)

/*
 * Lays out the charts of capture c: every flow, or only flow only_flow
 * (>= 0). The n events evs (rocemu/trace.h; NULL, 0 for none) join the
 * chart whose flow has an end with the event's address and QP, each
 * placed as roce_ladder_build_many places them (after the packet of its
 * seen/last_icrc, or for an older trace after the packets the capture
 * held when it happened, its frames count). Rows are not collapsed.
 * Returns 0 with the charts in *l (free with roce_ladder_free); -ENOENT
 * when only_flow is not a flow of c; -ENOMEM. On failure *l is empty. c
 * and evs are unchanged.
 */
int roce_ladder_build(const struct roce_capture *c,
		      const struct rocemu_event *evs, size_t n, int only_flow,
		      struct roce_ladder *l);

/* Frees what roce_ladder_build allocated and empties l. */
void roce_ladder_free(struct roce_ladder *l);

/*
 * The packet's label: opcode name, PSN, payload length, "A" for AckReq,
 * and for an ACK its AETH ("ACK msn 2", "NAK REM_ACCESS_ERR msn 0",
 * "RNR_NAK 655360us msn 0"); a MAD on QP1 by what it says instead
 * ("CM REQ qpn 0x11 psn 0xa0a00", "CM REJ 8": roce_fmt_mad_summary's
 * brief form). Writes at most len bytes, NUL included; returns the style
 * the row gets (an error for a REJ and a CM MAD that does not decode). p
 * is unchanged.
 */
enum roce_ladder_style roce_ladder_packet_label(const struct roce_cap_pkt *p,
						char *buf, size_t len);

/*
 * Writes l as plain text, no line wider than 100 columns: per chart a
 * title, the two ends as column heads, then a line per row ("|--- label
 * --->|" left to right, "|<--- label ---|" right to left, notes against
 * their lifeline) with the frame number and time at the right. Returns
 * 0, or -EIO when writing failed. l is unchanged.
 */
int roce_ladder_write_text(FILE *out, const struct roce_ladder *l);

/*
 * Writes l as one SVG document, the charts stacked top to bottom, each
 * with its title, a head box and a dashed lifeline per end, a <line> per
 * packet ending in the arrowhead marker (filled ROCE_LADDER_SVG_HEAD and
 * in no other shape), and the notes as small boxes on their lifeline.
 * Returns 0, or -EIO when writing failed, or -EFBIG, with nothing
 * written, when the picture would be taller than ROCE_LADDER_SVG_MAX_HEIGHT
 * pixels (its coordinates are ints). l is unchanged.
 */
int roce_ladder_write_svg(FILE *out, const struct roce_ladder *l);

/* The tallest SVG roce_ladder_write_svg writes, in pixels: about 80
 * million rows (no viewer shows more; the text output has no bound). */
#define ROCE_LADDER_SVG_MAX_HEIGHT 2000000000u

/* The arrowheads' fill colour, used by nothing else in the picture: a
 * test counts the arrows of a rendering by it. */
#define ROCE_LADDER_SVG_HEAD "#cc0077"

#endif
