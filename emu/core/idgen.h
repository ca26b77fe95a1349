/* SPDX-License-Identifier: MIT */
/* Numbers handed out in turn from a range, never one still in use: QP numbers and MR indices. */
#ifndef ROCEMU_EMU_IDGEN_H
#define ROCEMU_EMU_IDGEN_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A counter over [lo, hi] that wraps back to lo. Numbers below lo are
 * reserved (QP0 and QP1, MR index 0) and never come out; a number whose
 * object still lives is skipped, so a long-lived object keeps a number
 * nobody else gets however many others come and go.
 */
struct idgen {
	uint32_t next, lo, hi;
};

/* Starts at first (lo if first is outside [lo, hi]). */
void idgen_init(struct idgen *g, uint32_t lo, uint32_t hi, uint32_t first);

/*
 * The next number for which in_use(arg, n) is false, into *out, and the
 * counter moves past it. Returns 0, or -ENOSPC (nothing changed) when
 * every number of the range is in use.
 */
int idgen_take(struct idgen *g, bool (*in_use)(void *arg, uint32_t n),
	       void *arg, uint32_t *out);

#endif
