/* SPDX-License-Identifier: MIT */
/* Ring storage. */
#include <errno.h>
#include <stdlib.h>

#include "ring.h"

int ring_init(struct ring *r, uint32_t n, uint32_t slot_size)
{
	uint32_t size = 1;

	while (size < n)
		size <<= 1;
	r->slots = calloc(size, slot_size);
	if (!r->slots)
		return -ENOMEM;
	r->mask = size - 1;
	r->slot_size = slot_size;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	return 0;
}

void ring_fini(struct ring *r)
{
	free(r->slots);
	r->slots = NULL;
}
