/* SPDX-License-Identifier: MIT */
/* 24-bit packet sequence numbers and their serial-number order. */
#ifndef ROCEMU_PSN_H
#define ROCEMU_PSN_H

#include <stdint.h>

enum { ROCE_PSN_MASK = 0xffffff };

static inline uint32_t roce_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

/*
 * PSNs live on a 24-bit circle (IBTA 9.7.1): a is "after" b when it lies
 * less than 2^23 steps ahead. Shifting the 24-bit difference into the top
 * of a 32-bit word makes the sign of the result that answer, so the value
 * is < 0, 0 or > 0 as a is before, equal to or after b.
 */
static inline int32_t roce_psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8);
}

/* Distance from b forward to a, 0..2^24-1. */
static inline uint32_t roce_psn_diff(uint32_t a, uint32_t b)
{
	return (a - b) & ROCE_PSN_MASK;
}

#endif
