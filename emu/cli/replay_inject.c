/* SPDX-License-Identifier: MIT */
/* Captured requests onto rocemu's wire, their remote addresses mapped onto rocemu's memory. */
#include <errno.h>
#include <string.h>

#include "replay.h"

/* A key no registration of the plan holds, for an rkey the captured
 * responder refused: the captured one unless rocemu gave it out. */
static uint32_t refused_key(const struct rp_plan *p, uint32_t rkey)
{
	for (size_t i = 0; i < p->nregions; i++)
		if (p->regions[i].mr &&
		    (rocemu_mr_rkey(p->regions[i].mr) == rkey ||
		     p->regions[i].key == rkey))
			return rkey ^ 0xff;	/* another key, same index */
	return rkey;
}

/* Maps one remote address; true when the packet changed. */
static bool map(const struct rp_plan *p, uint32_t *rkey, uint64_t *va)
{
	struct rp_region *g = rp_region_of(p, *rkey);

	/* a key only named by a SEND with Invalidate, and no window:
	 * nothing stands for it */
	if (g && !g->sized && !g->window)
		g = NULL;
	if (!g) {
		uint32_t k = refused_key(p, *rkey);
		bool changed = k != *rkey;
		*rkey = k;
		return changed;
	}
	/* The same offset in rocemu's buffer; for a range the region does
	 * not hold this lies outside rocemu's MR too (the sum wraps as
	 * unsigned arithmetic does), and rocemu's own checks refuse it. */
	*va = (uintptr_t)g->buf + (*va - g->lo);
	*rkey = g->key;
	return true;
}

/* A SEND with Invalidate's R_Key: a window's becomes rocemu's window's;
 * true when the packet changed. Any other stays as captured (a key
 * rocemu never gave out, refused as the IBTA says). */
static bool map_ieth(const struct rp_plan *p, uint32_t *ieth)
{
	struct rp_region *g = rp_region_of(p, *ieth);

	if (!g || !g->window || !g->mw)
		return false;
	*ieth = g->key;
	return true;
}

int rp_inject(const struct rp_plan *p, size_t k, struct rocemu_world *w)
{
	const struct roce_cap_pkt *c = rp_pkt(p, k);
	struct roce_frame f = c->f;
	bool rebuild = c->f.link != ROCE_LINK_ETH;

	if (c->f.truncated)
		return -ENODATA;	/* its payload is not all there */

	if (f.ib.exts & ROCE_EXT_RETH)
		rebuild |= map(p, &f.ib.reth.rkey, &f.ib.reth.va);
	if (f.ib.exts & ROCE_EXT_ATMETH)
		rebuild |= map(p, &f.ib.atmeth.rkey, &f.ib.atmeth.va);
	if (f.ib.exts & ROCE_EXT_IETH)
		rebuild |= map_ieth(p, &f.ib.ieth);
	if (!rebuild) {
		rocemu_world_inject(w, c->data, c->caplen);
		return 0;
	}
	uint8_t buf[ROCE_FRAME_MAX];
	f.link = ROCE_LINK_ETH;
	int n = roce_frame_build(&f, buf, sizeof(buf));
	if (n < 0)
		return -EINVAL;
	rocemu_world_inject(w, buf, (size_t)n);
	return 0;
}
