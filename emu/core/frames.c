/* SPDX-License-Identifier: MIT */
/* Frame buffers in two sizes on free lists: malloc and free of a 4 KiB frame per packet cost page faults each time glibc gave the heap's top back. */
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
	struct frame_buf **list = len <= SMALL ? &p->small
			       : len <= LARGE ? &p->large : NULL;
	struct frame_buf *b = list ? *list : NULL;

	if (b) {
		*list = b->next;
		len <= SMALL ? p->n_small-- : p->n_large--;
		return (uint8_t *)b + HDR;
	}
	size_t cap = len <= SMALL ? SMALL : len <= LARGE ? LARGE : len;
	b = aligned_alloc(HDR, HDR + ((cap + HDR - 1) & ~(size_t)(HDR - 1)));
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
	if (b->cap == SMALL && p->n_small < KEEP_SMALL) {
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
