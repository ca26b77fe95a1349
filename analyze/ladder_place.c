/* SPDX-License-Identifier: MIT */
/* Trace events placed among a merged capture's packets: by the last frame their device saw, or by frames or time. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ladder_local.h"

bool roce_ladder_trace_is_old(const struct rocemu_event *evs, size_t n)
{
	bool frames = false;

	for (size_t e = 0; e < n; e++) {
		if (evs[e].seen || evs[e].last_icrc)
			return false;
		frames = frames || evs[e].frames;
	}
	return frames;
}

/* A packet by its ICRC, for finding the one an event names. */
struct by_icrc {
	uint32_t icrc;
	size_t i;
};

static int icrc_cmp(const void *pa, const void *pb)
{
	const struct by_icrc *a = pa, *b = pb;

	if (a->icrc != b->icrc)
		return a->icrc < b->icrc ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* What finding an event's packet needs: the packets by ICRC, and per
 * packet how many packets of its source and of its destination address
 * came before it and it (its rank among that device's frames). */
struct finder {
	const struct ladder_seq *s;
	struct by_icrc *idx;
	uint64_t *rank_src, *rank_dst;
};

static int gid_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

/* Fills the ranks: the distinct addresses sorted, a count for each. */
static int rank(struct finder *fd)
{
	const struct ladder_seq *s = fd->s;
	uint8_t(*gids)[16] = calloc(2 * s->n + 1, 16);
	uint64_t *count = calloc(2 * s->n + 1, sizeof(uint64_t));
	size_t m = 0;

	if (!gids || !count) {
		free(gids);
		free(count);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n; i++) {
		memcpy(gids[m++], s->pkts[i].f.src_gid, 16);
		memcpy(gids[m++], s->pkts[i].f.dst_gid, 16);
	}
	qsort(gids, m, 16, gid_cmp);
	for (size_t i = 0; i < s->n; i++) {
		const struct roce_frame *f = &s->pkts[i].f;
		uint8_t(*a)[16] = bsearch(f->src_gid, gids, m, 16, gid_cmp);
		uint8_t(*b)[16] = bsearch(f->dst_gid, gids, m, 16, gid_cmp);
		/* equal addresses sort together: the first of them counts */
		while (a > gids && !memcmp(a[-1], *a, 16))
			a--;
		while (b > gids && !memcmp(b[-1], *b, 16))
			b--;
		fd->rank_src[i] = ++count[a - gids];
		fd->rank_dst[i] = a == b ? count[a - gids] : ++count[b - gids];
	}
	free(gids);
	free(count);
	return 0;
}

static int finder_init(struct finder *fd, const struct ladder_seq *s)
{
	fd->s = s;
	fd->idx = calloc(s->n + 1, sizeof(*fd->idx));
	fd->rank_src = calloc(s->n + 1, sizeof(uint64_t));
	fd->rank_dst = calloc(s->n + 1, sizeof(uint64_t));
	if (!fd->idx || !fd->rank_src || !fd->rank_dst)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		fd->idx[i].icrc = s->pkts[i].f.ib.icrc;
		fd->idx[i].i = i;
	}
	qsort(fd->idx, s->n, sizeof(*fd->idx), icrc_cmp);
	return rank(fd);
}

static void finder_free(struct finder *fd)
{
	free(fd->idx);
	free(fd->rank_src);
	free(fd->rank_dst);
}

/* The event's device's rank of packet i, or 0 when the device (by its
 * address) neither sent nor received it. */
static uint64_t dev_rank(const struct finder *fd, size_t i,
			 const struct rocemu_event *ev)
{
	const struct roce_frame *f = &fd->s->pkts[i].f;

	if (!memcmp(f->src_gid, ev->gid, 16))
		return fd->rank_src[i];
	if (!memcmp(f->dst_gid, ev->gid, 16))
		return fd->rank_dst[i];
	return 0;
}

/*
 * The packet the event follows, at or after packet lo: of the packets
 * with its ICRC its device sent or received, the one that was the
 * device's seen-th frame; else the last before that rank (frames the
 * captures missed make ranks smaller); else the first. SIZE_MAX: none.
 */
static size_t find(const struct finder *fd, const struct rocemu_event *ev,
		   size_t lo)
{
	size_t a = 0, b = fd->s->n, first = SIZE_MAX, below = SIZE_MAX;

	while (a < b) { /* the first entry not below (icrc, lo) */
		size_t mid = a + (b - a) / 2;
		const struct by_icrc *m = &fd->idx[mid];
		if (m->icrc < ev->last_icrc ||
		    (m->icrc == ev->last_icrc && m->i < lo))
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < fd->s->n && fd->idx[a].icrc == ev->last_icrc; a++) {
		size_t i = fd->idx[a].i;
		uint64_t r = dev_rank(fd, i, ev);
		if (!r)
			continue;
		if (r == ev->seen)
			return i;
		if (first == SIZE_MAX)
			first = i;
		if (r > ev->seen)
			break;
		below = i;
	}
	return below != SIZE_MAX ? below : first;
}

/* The packets before the first after prev stamped later than the event. */
static size_t by_time(const struct ladder_seq *s, size_t prev,
		      const struct rocemu_event *ev)
{
	size_t j = prev;

	while (j < s->n && s->pkts[j].ts_ns <= ev->time_ns)
		j++;
	return j;
}

/* An older trace: after the packets its own capture held (frames). */
static void place_old(const struct ladder_seq *s,
		      const struct roce_ladder_trace *t, size_t *after)
{
	size_t prev = 0;

	for (size_t e = 0; e < t->n; e++) {
		while (prev < s->n && s->pkts[prev].no <= t->evs[e].frames)
			prev++;
		after[e] = prev;
	}
}

int ladder_place(const struct ladder_seq *s, const struct roce_ladder_trace *t,
		 bool old, size_t *after, size_t *timed)
{
	struct finder fd = {0};
	size_t prev = 0;

	*timed = 0;
	if (old) {
		place_old(s, t, after);
		return 0;
	}
	if (finder_init(&fd, s)) {
		finder_free(&fd);
		return -ENOMEM;
	}
	for (size_t e = 0; e < t->n; e++) {
		const struct rocemu_event *ev = &t->evs[e];
		if (ev->seen || ev->last_icrc) {
			size_t i = find(&fd, ev, prev ? prev - 1 : 0);
			if (i != SIZE_MAX) {
				prev = i + 1;
			} else {
				prev = by_time(s, prev, ev);
				(*timed)++;
			}
		}
		after[e] = prev;
	}
	finder_free(&fd);
	return 0;
}
