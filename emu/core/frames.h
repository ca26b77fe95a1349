/* SPDX-License-Identifier: MIT */
/* Frame buffers, kept for reuse: the engines build every frame into one and the wire frees it once sent. */
#ifndef ROCEMU_CORE_FRAMES_H
#define ROCEMU_CORE_FRAMES_H

#include <stddef.h>
#include <stdint.h>

struct frame_buf;

/* Free buffers of the two sizes, each list kept short. */
struct frame_pool {
	struct frame_buf *small, *large;
	unsigned n_small, n_large;
};

/*
 * A buffer for a frame of len bytes, from the pool when one of its size
 * is free; NULL if memory is short. Freed only by frame_free on the same
 * pool (never by free(3)).
 */
uint8_t *frame_alloc(struct frame_pool *p, size_t len);

/* Gives a buffer of frame_alloc back (NULL is ignored); the pool keeps
 * it for the next frame unless it holds enough already. */
void frame_free(struct frame_pool *p, uint8_t *frame);

/* Frees every buffer the pool keeps; the pool is then empty. */
void frame_pool_fini(struct frame_pool *p);

#endif
