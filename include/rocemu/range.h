/* SPDX-License-Identifier: MIT */
/* Address ranges [va, va + len) with the sum checked: the one place an end is computed. */
#ifndef ROCEMU_RANGE_H
#define ROCEMU_RANGE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A peer, a capture or a caller chooses va and len; their sum can pass
 * 2^64 and wrap to a small number that then passes every "end <= limit"
 * test. Every address/length computation goes through these helpers
 * (tests/lint/lint_ranges.sh keeps it so): a range that wraps is no range.
 */

/* Sets *end to va + len and returns true; false (and *end untouched) if
 * the sum passes 2^64. An empty range ends where it starts. */
static inline bool roce_range_end(uint64_t va, uint64_t len, uint64_t *end)
{
	uint64_t e;

	if (__builtin_add_overflow(va, len, &e))
		return false;
	*end = e;
	return true;
}

/* True if [va, va + len) lies inside [lo, hi) with neither wrapping; an
 * empty range at lo..hi counts as inside. */
static inline bool roce_range_inside(uint64_t va, uint64_t len, uint64_t lo,
				     uint64_t hi)
{
	uint64_t end;

	return roce_range_end(va, len, &end) && va >= lo && end <= hi;
}

/* True if [va, va + len) lies inside the region of size bytes at base
 * (base + size must not wrap either). */
static inline bool roce_range_in_region(uint64_t va, uint64_t len,
					uint64_t base, uint64_t size)
{
	uint64_t hi;

	return roce_range_end(base, size, &hi) &&
	       roce_range_inside(va, len, base, hi);
}

/* Sets *off to va's offset from base if [va, va + len) lies inside the
 * region of size bytes at base and returns true; false, *off untouched,
 * otherwise. */
static inline bool roce_range_offset(uint64_t va, uint64_t len, uint64_t base,
				     uint64_t size, uint64_t *off)
{
	if (!roce_range_in_region(va, len, base, size))
		return false;
	*off = va - base;
	return true;
}

#endif
