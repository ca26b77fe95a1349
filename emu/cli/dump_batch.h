/* SPDX-License-Identifier: MIT */
/* rocemu dump's batches: frames read in order, decoded and rendered by two threads. */
#ifndef ROCEMU_EMU_DUMP_BATCH_H
#define ROCEMU_EMU_DUMP_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dump_stats.h"
#include "rocemu/dissect.h"

enum dump_style { STYLE_LINE, STYLE_TREE, STYLE_JSON };

struct batch_rec {
	uint64_t frame_no;
	int64_t rel_ns;		/* below 0 if stamped before frame 1 */
	size_t off;		/* into the arena */
	uint32_t caplen, wire_len;
};

struct batch {
	unsigned link;
	enum dump_style style;
	uint8_t *arena;
	size_t arena_len, arena_cap;
	struct batch_rec *recs;
	size_t n, cap;
};

/* Allocates an empty batch; NULL if out of memory. */
struct batch *batch_new(unsigned link, enum dump_style style);

/* Frees b and what it holds; NULL is ignored. */
void batch_free(struct batch *b);

/*
 * True when a frame of caplen bytes can be added now; false when the
 * batch must be processed first. An empty batch takes a frame of any size.
 */
bool batch_has_room(const struct batch *b, uint32_t caplen);

/*
 * Copies one frame in, growing the arena if the batch is empty and the
 * frame larger than it. Returns 0; -ENOSPC if batch_has_room() said no;
 * -ENOMEM if the arena could not grow. On failure the batch is unchanged.
 */
int batch_add(struct batch *b, const uint8_t *data, uint32_t caplen,
	      uint32_t wire_len, uint64_t frame_no, int64_t rel_ns);

/*
 * Decodes and renders every frame of the batch, half on a second thread,
 * writes the text to out in frame order, adds to *st and empties the
 * batch. Without a second thread it does all the work itself. Returns 0,
 * or -ENOMEM if an output buffer could not be had (nothing is written).
 */
int batch_process(struct batch *b, FILE *out, struct dump_stats *st);

/* Renders one parsed frame in the given style. */
void dump_render(struct roce_sb *sb, enum dump_style style,
		 const struct roce_dissect_in *in, const struct roce_frame *f);

#endif
