/* SPDX-License-Identifier: MIT */
/* Frame buffers reused in two sizes: a malloc and free per packet faulted pages in whenever glibc trimmed the heap. */
#include <stdlib.h>

#include "frames.h"
#include "rocemu/frame.h"

/*
 * Small buffers hold ACKs, NAKs and short messages; large ones any frame
 * (ROCE_FRAME_MAX). A buffer's size and the list link sit in a header
 * before the bytes handed out, which stay 64-byte aligned for the copies
 * into them. The lists are capped so that a burst leaves at most about
 * 5 MiB behind: 512 large buffers cover a transmit ring.
 */
enum {
	SMALL = 512,
	LARGE = (ROCE_FRAME_MAX + 63) & ~63,
	KEEP_SMALL = 1024,
	KEEP_LARGE = 512,
	HDR = 64,
};

/* Under AddressSanitizer every frame is its own allocation of its exact
 * size, freed at once: a pooled buffer larger than its frame would hide
 * an overrun from it. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FRAMES_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(FRAMES_UNDER_ASAN)
enum { POOLED = 0 };
#else
enum { POOLED = 1 };
#endif

struct frame_buf {
	struct frame_buf *next;
	size_t cap;
};

static struct frame_buf *buf_of(uint8_t *frame)
{
	return (struct frame_buf *)(void *)(frame - HDR);
}

uint8_t *frame_alloc(struct frame_pool *p, size_t len)
{
	struct frame_buf **list = !POOLED ? NULL
			       : len <= SMALL ? &p->small
			       : len <= LARGE ? &p->large : NULL;
	struct frame_buf *b = list ? *list : NULL;

	if (b) {
		*list = b->next;
		len <= SMALL ? p->n_small-- : p->n_large--;
		return (uint8_t *)b + HDR;
	}
	size_t cap = !POOLED ? len : len <= SMALL ? SMALL
				   : len <= LARGE ? LARGE : len;
	size_t whole = HDR + ((cap + HDR - 1) & ~(size_t)(HDR - 1));
	b = POOLED ? aligned_alloc(HDR, whole) : malloc(HDR + cap);
	if (!b)
		return NULL;
	b->cap = cap;
	return (uint8_t *)b + HDR;
}

void frame_free(struct frame_pool *p, uint8_t *frame)
{
	if (!frame)
		return;
	struct frame_buf *b = buf_of(frame);
	if (!POOLED) {
		free(b);
	} else if (b->cap == SMALL && p->n_small < KEEP_SMALL) {
		b->next = p->small;
		p->small = b;
		p->n_small++;
	} else if (b->cap == LARGE && p->n_large < KEEP_LARGE) {
		b->next = p->large;
		p->large = b;
		p->n_large++;
	} else {
		free(b);
	}
}

void frame_pool_fini(struct frame_pool *p)
{
	for (struct frame_buf *b = p->small, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	for (struct frame_buf *b = p->large, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	*p = (struct frame_pool){ 0 };
}
