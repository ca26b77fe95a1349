/* SPDX-License-Identifier: MIT */
/* The helpers themselves: the one file allowed to add va + len. */
static inline uint64_t end_of(uint64_t va, uint64_t len)
{
	return va + len;
}
