/* SPDX-License-Identifier: MIT */
/* Numbers handed out in turn from a range, never one still in use. */
#include <errno.h>

#include "idgen.h"

void idgen_init(struct idgen *g, uint32_t lo, uint32_t hi, uint32_t first)
{
	g->lo = lo;
	g->hi = hi;
	g->next = first >= lo && first <= hi ? first : lo;
}

int idgen_take(struct idgen *g, bool (*in_use)(void *arg, uint32_t n),
	       void *arg, uint32_t *out)
{
	uint32_t n = g->next;
	uint64_t left = (uint64_t)g->hi - g->lo + 1;

	/* Each number of the range is looked at once at most. */
	for (; left; left--) {
		uint32_t next = n == g->hi ? g->lo : n + 1;
		if (!in_use(arg, n)) {
			*out = n;
			g->next = next;
			return 0;
		}
		n = next;
	}
	return -ENOSPC;
}
