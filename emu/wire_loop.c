/* SPDX-License-Identifier: MIT */
/* The deterministic loopback wire: frames on the virtual clock, with seeded faults. */
#include <stdlib.h>
#include <string.h>

#include "local.h"

/* Flips one bit inside the IP datagram, where the ICRC (or the IP and UDP
 * checks before it) must catch it. */
static void corrupt(struct rocemu_world *w, uint8_t *p, size_t len)
{
	size_t start = ROCE_ETH_HLEN;

	if (len <= start)
		return;
	size_t bit = world_rand(w) % ((len - start) * 8);
	p[start + bit / 8] ^= (uint8_t)(1u << (bit % 8));
	w->wire_corrupted++;
}

static void enqueue(struct rocemu_world *w, uint8_t *frame, size_t len,
		    uint64_t delay, bool damage);

/* Each copy on the wire is delayed (reordered) and damaged on its own. */
static void wire_send_copy_delay(struct rocemu_world *w, uint8_t *frame,
				 size_t len)
{
	const struct rocemu_faults *fl = &w->faults;
	uint64_t delay = fl->latency_ns;

	if (world_chance(w, fl->reorder)) {
		delay += fl->reorder_ns ? fl->reorder_ns : 4 * fl->latency_ns;
		w->wire_reordered++;
	}
	enqueue(w, frame, len, delay, world_chance(w, fl->corrupt));
}

/* Queues frame (which the queue then owns) for delivery after delay. */
static void enqueue(struct rocemu_world *w, uint8_t *frame, size_t len,
		    uint64_t delay, bool damage)
{
	struct inflight f = { w->now + delay, w->seq++, (uint32_t)len, frame };

	if (damage)
		corrupt(w, f.data, len);
	if (heap_push(&w->frames, &f))
		free(f.data); /* out of memory: lost, as on a wire */
}

void wire_send_owned(struct rocemu_world *w, uint8_t *frame, size_t len)
{
	const struct rocemu_faults *fl = &w->faults;

	if (w->pcap)
		roce_pcap_write(w->pcap, w->now, frame, len);
	if (w->udp) {
		udp_send(w, frame, len);
		return;
	}
	if (world_chance(w, fl->drop)) {
		w->wire_dropped++;
		free(frame);
		return;
	}
	if (world_chance(w, fl->duplicate)) {
		uint8_t *copy = malloc(len);
		if (copy) {
			memcpy(copy, frame, len);
			w->wire_duplicated++;
			wire_send_copy_delay(w, copy, len);
		}
	}
	wire_send_copy_delay(w, frame, len);
}

void wire_send(struct rocemu_world *w, const uint8_t *frame, size_t len)
{
	uint8_t *copy = malloc(len);

	if (!copy)
		return;
	memcpy(copy, frame, len);
	wire_send_owned(w, copy, len);
}

/* The device that owns the destination address, or NULL. */
static struct rocemu_dev *route(struct rocemu_world *w, const uint8_t *frame,
				size_t len)
{
	uint8_t gid[16];

	if (len < ROCE_ETH_HLEN + ROCE_IPV4_HLEN)
		return NULL;
	const uint8_t *ip = frame + ROCE_ETH_HLEN;
	if (ip[0] >> 4 == 4) {
		roce_gid_from_ipv4(gid, ip + 16);
	} else if (len >= ROCE_ETH_HLEN + ROCE_IPV6_HLEN) {
		memcpy(gid, ip + 24, 16);
	} else {
		return NULL;
	}
	for (struct rocemu_dev *d = w->devs; d; d = d->next)
		if (!memcmp(d->gid, gid, 16))
			return d;
	return NULL;
}

unsigned wire_deliver_due(struct rocemu_world *w)
{
	const struct inflight *top;
	unsigned n = 0;

	while ((top = heap_top(&w->frames)) && top->when <= w->now) {
		struct inflight f;
		heap_pop(&w->frames, &f);
		struct rocemu_dev *d = route(w, f.data, f.len);
		if (d)
			dev_receive(d, f.data, f.len);
		else
			w->wire_dropped++;
		free(f.data);
		n++;
	}
	return n;
}

void rocemu_world_inject(struct rocemu_world *w, const uint8_t *frame,
			 size_t len)
{
	WORLD_GUARD(w);
	wire_send(w, frame, len);
}
