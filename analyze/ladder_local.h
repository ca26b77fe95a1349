/* SPDX-License-Identifier: MIT */
/* The ladder's inner steps: captures merged into one packet sequence, events placed in it, runs collapsed. */
#ifndef ROCEMU_ANALYZE_LADDER_LOCAL_H
#define ROCEMU_ANALYZE_LADDER_LOCAL_H

#include <stddef.h>

#include "rocemu/ladder.h"

/* The captures' packets as one sequence, each packet once. */
struct ladder_seq {
	size_t n;
	/* Copies of the captures' packets, their data still pointing into
	 * the captures (which must outlive this), classified again into
	 * flows of the whole sequence. */
	const struct roce_cap_pkt *pkts;
	unsigned *cap; /* per packet: the capture its frame number is of */
	const struct roce_flows *flows;
	/* What the merge allocated (one capture alone is used as it is:
	 * its packets and flows, nothing copied). */
	struct roce_cap_pkt *own_pkts;
	struct roce_flows *own_flows;
	int64_t t0;	     /* the earliest timestamp of any capture */
	size_t shared;	     /* packets more than one capture held */
	size_t out_of_order; /* drawn against some capture's order */
};

/*
 * Merges ncaps captures (1 or more) into s: a packet with the same bytes
 * from the IP payload on in two captures is one (the k-th of identical
 * ones in one is the k-th in the other), each capture's order is kept,
 * and of the packets that could come next the earliest by timestamp
 * goes first (then the lower capture). When the captures' orders
 * disagree, the earliest capture head goes and s->out_of_order counts
 * it. Returns 0, or -ENOMEM with s empty. caps are unchanged.
 */
int ladder_merge(const struct roce_capture *caps, size_t ncaps,
		 struct ladder_seq *s);

/* Frees what ladder_merge allocated and empties s. */
void ladder_seq_free(struct ladder_seq *s);

/*
 * Where each event of trace t goes in s: after[e] is the number of s's
 * packets before it (roce_ladder_build_many says how it is found).
 * old says the trace counts frames only (roce_ladder_trace_is_old);
 * *by_time counts the events placed by time. after is non-decreasing.
 * Returns 0 or -ENOMEM. s and t are unchanged.
 */
int ladder_place(const struct ladder_seq *s, const struct roce_ladder_trace *t,
		 bool old, size_t *after, size_t *by_time);

/*
 * Folds each run of ROCE_LADDER_MIN_REPEAT or more repeats of the same
 * 1 to ROCE_LADDER_MAX_PERIOD rows (same kind, column, style and label)
 * into the rows once and a ROCE_LADDER_REPEAT row after them; the rows
 * left are moved up in place. Returns the number of rows folded away.
 */
size_t ladder_collapse(struct roce_ladder_chart *ch);

/*
 * Draws the n marks in l's charts: each right after the packet row of
 * its capture and frame, as a why note with row.check set, on the
 * sender's lifeline; l->marks_unplaced counts those whose frame no chart
 * draws (a frame of no RC/UC/UD flow, or of a flow not shown). Returns
 * 0, or -ENOMEM (the charts then hold some marks or none). marks is
 * unchanged.
 */
int ladder_marks(struct roce_ladder *l, const struct roce_ladder_mark *marks,
		 size_t n);

#endif
