/* SPDX-License-Identifier: MIT */
/* A binary heap ordered by (when, seq). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"

struct key {
	uint64_t when, seq;
};

static bool before(const struct heap *h, size_t a, size_t b)
{
	const struct key *x = (const void *)(h->v + a * h->elem_size);
	const struct key *y = (const void *)(h->v + b * h->elem_size);

	return x->when < y->when || (x->when == y->when && x->seq < y->seq);
}

static void swap(struct heap *h, size_t a, size_t b)
{
	uint8_t t[64];
	size_t s = h->elem_size;

	memcpy(t, h->v + a * s, s);
	memcpy(h->v + a * s, h->v + b * s, s);
	memcpy(h->v + b * s, t, s);
}

int heap_push(struct heap *h, const void *elem)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		uint8_t *v = realloc(h->v, cap * h->elem_size);
		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	size_t i = h->n++;
	memcpy(h->v + i * h->elem_size, elem, h->elem_size);
	while (i && before(h, i, (i - 1) / 2)) {
		swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	return 0;
}

/* Moves the element at i down to its place below. */
static void sift_down(struct heap *h, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && before(h, l, m))
			m = l;
		if (r < h->n && before(h, r, m))
			m = r;
		if (m == i)
			break;
		swap(h, i, m);
		i = m;
	}
}

void heap_pop(struct heap *h, void *out)
{
	memcpy(out, h->v, h->elem_size);
	if (--h->n == 0)
		return;
	memcpy(h->v, h->v + h->n * h->elem_size, h->elem_size);
	sift_down(h, 0);
}

size_t heap_remove_if(struct heap *h,
		      bool (*drop)(const void *elem, const void *arg),
		      const void *arg)
{
	size_t s = h->elem_size, kept = 0, was = h->n;

	for (size_t i = 0; i < h->n; i++)
		if (!drop(h->v + i * s, arg)) {
			if (kept != i)
				memcpy(h->v + kept * s, h->v + i * s, s);
			kept++;
		}
	h->n = kept;
	for (size_t i = kept / 2; i-- > 0;)
		sift_down(h, i);	/* Floyd's heap construction */
	return was - kept;
}

void heap_fini(struct heap *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}
