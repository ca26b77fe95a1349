/* SPDX-License-Identifier: MIT */
/* A binary heap of fixed-size elements ordered by (when, seq): frames in flight and timers. */
#ifndef ROCEMU_CORE_HEAP_H
#define ROCEMU_CORE_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Elements of elem_size bytes (at most 64) that start with two uint64_t
 * fields, when and seq; equal times keep the order of seq. */
struct heap {
	uint8_t *v;
	size_t n, cap, elem_size;
};

/* Adds a copy of elem: 0, or -ENOMEM with the heap unchanged. */
int heap_push(struct heap *h, const void *elem);

/* Moves the earliest element into out; the heap must not be empty. */
void heap_pop(struct heap *h, void *out);

/* The earliest element, NULL if the heap is empty; the heap is unchanged. */
static inline const void *heap_top(const struct heap *h)
{
	return h->n ? h->v : NULL;
}

/* Removes every element for which drop(elem, arg) is true, keeping the
 * order of the rest; returns how many went. Linear in the heap's size. */
size_t heap_remove_if(struct heap *h,
		      bool (*drop)(const void *elem, const void *arg),
		      const void *arg);

/* Frees the heap's storage (not what its elements point to). */
void heap_fini(struct heap *h);

#endif
