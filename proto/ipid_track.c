/* SPDX-License-Identifier: MIT */
/* The per-flow IPv4 ID predictor: which solved IDs a receiver accepts (rocemu/ipid.h, docs/icrc.md). */
#include <string.h>

#include "rocemu/ipid.h"

enum {
	SETS = ROCE_IPID_FLOWS / ROCE_IPID_WAYS,
	ID_SPACE = 0x10000,
	NS_PER_MS = 1000000,
};

_Static_assert((SETS & (SETS - 1)) == 0, "a power of two of sets");

void roce_ipid_init(struct roce_ipid_table *t)
{
	memset(t, 0, sizeof(*t));
}

static uint32_t addr32(const uint8_t a[4])
{
	uint32_t v;

	memcpy(&v, a, 4);
	return v;
}

/* The first slot of the set a flow lies in. */
static struct roce_ipid_flow *set_of(struct roce_ipid_table *t, uint32_t src,
				     uint32_t dst)
{
	uint32_t h = src * 0x9e3779b1u ^ (dst + 0x7f4a7c15u) * 0x85ebca6bu;

	h ^= h >> 16;
	return &t->flow[(h & (SETS - 1)) * ROCE_IPID_WAYS];
}

/* The flow's slot, NULL if the table does not hold it. */
static struct roce_ipid_flow *find(struct roce_ipid_table *t, uint32_t src,
				   uint32_t dst)
{
	struct roce_ipid_flow *s = set_of(t, src, dst);

	for (int i = 0; i < ROCE_IPID_WAYS; i++)
		if (s[i].used && s[i].src == src && s[i].dst == dst)
			return &s[i];
	return NULL;
}

/* A slot for a new flow: a free one of its set, else the least recently
 * used there (counted). */
static struct roce_ipid_flow *claim(struct roce_ipid_table *t, uint32_t src,
				    uint32_t dst)
{
	struct roce_ipid_flow *s = set_of(t, src, dst), *v = &s[0];

	for (int i = 1; i < ROCE_IPID_WAYS && v->used; i++)
		if (s[i].used < v->used)
			v = &s[i];
	if (v->used)
		t->evicted++;
	memset(v, 0, sizeof(*v));
	v->src = src;
	v->dst = dst;
	return v;
}

/*
 * How far past an anchor the next ID may lie, elapsed_ms after the
 * flow's previous datagram: Linux adds to its counter a random jump below
 * the jiffies since it was last used (at most one a millisecond), so the
 * window grows with the time, a quarter more for jitter between the
 * sender's clock and the arrivals, 2 for rounding to whole jiffies; and
 * one for each datagram the receiving socket dropped since the anchor
 * (lost, each may have carried one of the flow's IDs: a burst that
 * overran the socket moves the sender's counter by its length, with no
 * time to show for it). Never past the ID space.
 */
static uint32_t ahead(uint32_t elapsed_ms, uint32_t lost)
{
	uint64_t a = ROCE_IPID_AHEAD + 2 + (uint64_t)elapsed_ms +
		     elapsed_ms / 4 + lost;
	uint32_t max = ID_SPACE - 1 - ROCE_IPID_BEHIND;

	return a > max ? max : (uint32_t)a;
}

/* Whether id lies from ROCE_IPID_BEHIND before anchor to span after it. */
static bool near(uint16_t id, uint16_t anchor, uint32_t span)
{
	uint16_t d = (uint16_t)(id - anchor + ROCE_IPID_BEHIND);

	return d <= ROCE_IPID_BEHIND + span;
}

/* The flow takes id and df as its last ones, at the socket's drop count
 * drops. */
static bool anchor(struct roce_ipid_flow *e, uint16_t id, bool df,
		   uint32_t drops)
{
	e->last_drops = drops;
	e->last = id;
	e->df = df;
	e->has_pending = false;
	return true;
}

bool roce_ipid_accept(struct roce_ipid_table *t, const uint8_t src[4],
		      const uint8_t dst[4], uint64_t now_ns, uint32_t drops,
		      uint16_t id, bool df)
{
	uint32_t s = addr32(src), d = addr32(dst);
	uint32_t now_ms = (uint32_t)(now_ns / NS_PER_MS);
	struct roce_ipid_flow *e = find(t, s, d);

	t->clock++;
	if (!e) {
		e = claim(t, s, d);
		e->used = t->clock;
		e->seen_ms = now_ms;
		t->learned++;
		return anchor(e, id, df, drops);
	}
	/* wraps after 49 days: an idle that long just resyncs */
	uint32_t dt = now_ms - e->seen_ms;
	uint32_t span = ahead(dt, drops - e->last_drops);
	e->used = t->clock;
	e->seen_ms = now_ms;
	if (id == 0) {
		t->zero++;
		return anchor(e, id, df, drops);
	}
	if (df == e->df && near(id, e->last, span)) {
		t->window++;
		return anchor(e, id, df, drops);
	}
	/* Strictly after the pending ID: a corruption that repeats (the
	 * same bytes wrong in the same datagram) solves to the same ID, and
	 * must not confirm itself. */
	if (e->has_pending && df == e->pending_df &&
	    (uint16_t)(id - e->pending - 1) <
		    ahead(dt, drops - e->pending_drops)) {
		t->resynced++;
		return anchor(e, id, df, drops);
	}
	e->pending = id;
	e->pending_drops = drops;
	e->pending_df = df;
	e->has_pending = true;
	t->refused++;
	return false;
}

void roce_ipid_seen(struct roce_ipid_table *t, const uint8_t src[4],
		    const uint8_t dst[4], uint64_t now_ns)
{
	struct roce_ipid_flow *e = find(t, addr32(src), addr32(dst));

	if (e)
		e->seen_ms = (uint32_t)(now_ns / NS_PER_MS);
}
