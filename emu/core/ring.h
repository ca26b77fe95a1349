/* SPDX-License-Identifier: MIT */
/* Fixed-slot power-of-two rings with free-running head and tail counters. */
#ifndef ROCEMU_EMU_RING_H
#define ROCEMU_EMU_RING_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * The producer owns tail and the consumer owns head; each reads the
 * other's counter with acquire and publishes its own with release, so a
 * slot's contents are visible before the counter that hands it over. The
 * counters run freely and wrap: used = tail - head, no slot is wasted.
 */
struct ring {
	uint8_t *slots;
	uint32_t mask;
	uint32_t slot_size;
	_Atomic uint32_t head;
	_Atomic uint32_t tail;
};

/* Room for at least n slots (a power of two), zeroed, head and tail 0:
 * 0, or -ENOMEM with r unusable. */
int ring_init(struct ring *r, uint32_t n, uint32_t slot_size);
/* Frees the slots; r may be initialised again. */
void ring_fini(struct ring *r);

static inline uint32_t ring_size(const struct ring *r)
{
	return r->mask + 1;
}

static inline void *ring_slot(const struct ring *r, uint32_t idx)
{
	return r->slots + (size_t)(idx & r->mask) * r->slot_size;
}

static inline uint32_t ring_used(struct ring *r)
{
	return atomic_load_explicit(&r->tail, memory_order_acquire) -
	       atomic_load_explicit(&r->head, memory_order_acquire);
}

/* The next free slot, or NULL if the ring is full. */
static inline void *ring_prod_slot(struct ring *r)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);

	return t - h > r->mask ? NULL : ring_slot(r, t);
}

/* Publishes the slot ring_prod_slot() returned. */
static inline void ring_produce(struct ring *r)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
}

/* The oldest published slot, or NULL if the ring is empty. */
static inline void *ring_cons_slot(struct ring *r)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);

	return h == t ? NULL : ring_slot(r, h);
}

/* Releases the slot ring_cons_slot() returned. */
static inline void ring_consume(struct ring *r)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	atomic_store_explicit(&r->head, h + 1, memory_order_release);
}

static inline uint32_t ring_head(struct ring *r)
{
	return atomic_load_explicit(&r->head, memory_order_acquire);
}

static inline uint32_t ring_tail(struct ring *r)
{
	return atomic_load_explicit(&r->tail, memory_order_acquire);
}

#endif
