/* SPDX-License-Identifier: MIT */
/* Captures of several processes merged into one packet sequence: the packets they share once, each capture's order kept. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ladder_local.h"
#include "rocemu/opcode.h"

/* A packet of one capture, by its bytes from the IP payload on: the
 * part two ends' captures agree on (the IP header's TTL and checksum,
 * and the link header, may differ between where they were taken). */
struct ref {
	uint64_t hash;
	const uint8_t *b;
	size_t len;
	unsigned cap;
	size_t idx;
};

static const uint8_t *l4_bytes(const struct roce_cap_pkt *p, size_t *len)
{
	const uint8_t *ip = p->f.ip_hdr;
	size_t hl = p->f.ip_ver == 4 ? 20u + p->f.ip_optlen : 40u, at = 0;

	/* a frame whose IP header did not parse is compared whole */
	if (ip && ip >= p->data && (size_t)(ip - p->data) + hl <= p->caplen)
		at = (size_t)(ip - p->data) + hl;
	*len = p->caplen - at;
	return p->data + at;
}

static uint64_t fnv1a(const uint8_t *b, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* Same bytes together, then by capture and place in it. */
static int ref_cmp(const void *pa, const void *pb)
{
	const struct ref *a = pa, *b = pb;

	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	int d = memcmp(a->b, b->b, a->len);
	if (d)
		return d;
	if (a->cap != b->cap)
		return a->cap < b->cap ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static bool same_bytes(const struct ref *a, const struct ref *b)
{
	return a->hash == b->hash && a->len == b->len &&
	       !memcmp(a->b, b->b, a->len);
}

/* The packets as nodes: one per distinct packet, which each capture
 * holds at most once. */
struct nodes {
	size_t n;
	size_t **of;	 /* per capture, per packet: its node */
	unsigned *holders; /* per node: captures holding it */
	unsigned *at_head; /* per node: captures whose next packet it is */
	unsigned *cap;	 /* per node: the first capture holding it */
	size_t *idx;	 /* and its place there */
	uint64_t *ts;	 /* the earliest of its timestamps */
	bool *done;
};

static void nodes_free(struct nodes *g, size_t ncaps)
{
	for (size_t c = 0; g->of && c < ncaps; c++)
		free(g->of[c]);
	free(g->of);
	free(g->holders);
	free(g->at_head);
	free(g->cap);
	free(g->idx);
	free(g->ts);
	free(g->done);
}

static int nodes_alloc(struct nodes *g, const struct roce_capture *caps,
		       size_t ncaps, size_t total)
{
	g->of = calloc(ncaps, sizeof(*g->of));
	if (!g->of)
		return -ENOMEM;
	for (size_t c = 0; c < ncaps; c++)
		if (!(g->of[c] = calloc(caps[c].n + 1, sizeof(size_t))))
			return -ENOMEM;
	g->holders = calloc(total + 1, sizeof(unsigned));
	g->at_head = calloc(total + 1, sizeof(unsigned));
	g->cap = calloc(total + 1, sizeof(unsigned));
	g->idx = calloc(total + 1, sizeof(size_t));
	g->ts = calloc(total + 1, sizeof(uint64_t));
	g->done = calloc(total + 1, sizeof(bool));
	return g->holders && g->at_head && g->cap && g->idx && g->ts && g->done
		   ? 0
		   : -ENOMEM;
}

/* Gives each packet its node: within a group of equal bytes, the k-th
 * of a capture is node base + k. */
static void name_nodes(const struct ref *refs, size_t total,
		       const struct roce_capture *caps, struct nodes *g)
{
	for (size_t i = 0; i < total;) {
		size_t j = i, base = g->n, k = 0, most = 0;
		for (; j < total && same_bytes(&refs[i], &refs[j]); j++) {
			k = j > i && refs[j].cap == refs[j - 1].cap ? k + 1 : 0;
			size_t node = base + k;
			const struct ref *r = &refs[j];
			uint64_t ts = caps[r->cap].pkts[r->idx].ts_ns;
			g->of[r->cap][r->idx] = node;
			if (!g->holders[node]++ || ts < g->ts[node])
				g->ts[node] = ts;
			if (g->holders[node] == 1) {
				g->cap[node] = r->cap;
				g->idx[node] = r->idx;
			}
			most = k + 1 > most ? k + 1 : most;
		}
		g->n += most;
		i = j;
	}
}

static int group(const struct roce_capture *caps, size_t ncaps, size_t total,
		 struct nodes *g)
{
	struct ref *refs = calloc(total + 1, sizeof(*refs));
	size_t at = 0;

	if (!refs)
		return -ENOMEM;
	for (unsigned c = 0; c < ncaps; c++)
		for (size_t i = 0; i < caps[c].n; i++) {
			struct ref *r = &refs[at++];
			r->b = l4_bytes(&caps[c].pkts[i], &r->len);
			r->hash = fnv1a(r->b, r->len);
			r->cap = c;
			r->idx = i;
		}
	qsort(refs, total, sizeof(*refs), ref_cmp);
	name_nodes(refs, total, caps, g);
	free(refs);
	return 0;
}

/* Moves capture c's cursor past its head and past packets already drawn. */
static void advance(const struct roce_capture *caps, unsigned c, size_t *pos,
		    struct nodes *g)
{
	if (pos[c] < caps[c].n)
		g->at_head[g->of[c][pos[c]++]]--;
	while (pos[c] < caps[c].n && g->done[g->of[c][pos[c]]])
		pos[c]++;
	if (pos[c] < caps[c].n)
		g->at_head[g->of[c][pos[c]]]++;
}

/* The next node to draw: of the capture heads, one that is the head of
 * every capture holding it, earliest first; when there is none (the
 * captures disagree), the earliest head, *forced set. SIZE_MAX at the end. */
static size_t pick(const struct roce_capture *caps, size_t ncaps,
		   const size_t *pos, const struct nodes *g, bool *forced)
{
	size_t best = SIZE_MAX, any = SIZE_MAX;

	for (size_t c = 0; c < ncaps; c++) {
		if (pos[c] >= caps[c].n)
			continue;
		size_t v = g->of[c][pos[c]];
		if (any == SIZE_MAX || g->ts[v] < g->ts[any])
			any = v;
		if (g->at_head[v] == g->holders[v] &&
		    (best == SIZE_MAX || g->ts[v] < g->ts[best]))
			best = v;
	}
	*forced = best == SIZE_MAX && any != SIZE_MAX;
	return best != SIZE_MAX ? best : any;
}

static int emit(struct ladder_seq *s, const struct roce_capture *caps,
		const struct nodes *g, size_t v)
{
	struct roce_cap_pkt *p = &s->own_pkts[s->n];
	unsigned dir;

	*p = caps[g->cap[v]].pkts[g->idx[v]];
	s->cap[s->n] = g->cap[v];
	s->shared += g->holders[v] > 1;
	int id = roce_flows_classify(s->own_flows, &p->f, s->n + 1, &dir);
	if (id == -ENOMEM)
		return -ENOMEM;
	/* every packet was classified once already; one that is not now
	 * is in no flow and so in no chart */
	p->flow = id < 0 ? UINT32_MAX : (unsigned)id;
	p->dir = id < 0 ? 0 : dir;
	s->n++;
	return 0;
}

static int order(const struct roce_capture *caps, size_t ncaps,
		 struct nodes *g, struct ladder_seq *s)
{
	size_t *pos = calloc(ncaps, sizeof(size_t));
	bool forced;
	size_t v;

	if (!pos)
		return -ENOMEM;
	for (size_t c = 0; c < ncaps; c++)
		if (caps[c].n)
			g->at_head[g->of[c][0]]++;
	while ((v = pick(caps, ncaps, pos, g, &forced)) != SIZE_MAX) {
		g->done[v] = true;
		s->out_of_order += forced;
		if (emit(s, caps, g, v)) {
			free(pos);
			return -ENOMEM;
		}
		for (unsigned c = 0; c < ncaps; c++)
			if (pos[c] < caps[c].n && g->of[c][pos[c]] == v)
				advance(caps, c, pos, g);
	}
	free(pos);
	return 0;
}

int ladder_merge(const struct roce_capture *caps, size_t ncaps,
		 struct ladder_seq *s)
{
	struct nodes g = {0};
	size_t total = 0;
	bool any = false;
	int rc = -ENOMEM;

	memset(s, 0, sizeof(*s));
	for (size_t c = 0; c < ncaps; c++) {
		total += caps[c].n;
		if (caps[c].n &&
		    (!any || (int64_t)caps[c].pkts[0].ts_ns < s->t0))
			s->t0 = (int64_t)caps[c].pkts[0].ts_ns;
		any = any || caps[c].n;
	}
	s->cap = calloc(total + 1, sizeof(unsigned));
	if (ncaps == 1) { /* nothing to merge: the capture as it is */
		s->pkts = caps[0].pkts;
		s->flows = caps[0].flows;
		s->n = caps[0].n;
		if (s->cap)
			return 0;
		ladder_seq_free(s);
		return -ENOMEM;
	}
	s->pkts = s->own_pkts = calloc(total + 1, sizeof(*s->own_pkts));
	s->flows = s->own_flows = roce_flows_new();
	if (s->own_pkts && s->cap && s->own_flows &&
	    !nodes_alloc(&g, caps, ncaps, total) &&
	    !group(caps, ncaps, total, &g))
		rc = order(caps, ncaps, &g, s);
	nodes_free(&g, ncaps);
	if (rc)
		ladder_seq_free(s);
	return rc;
}

void ladder_seq_free(struct ladder_seq *s)
{
	free(s->own_pkts);
	free(s->cap);
	roce_flows_free(s->own_flows);
	memset(s, 0, sizeof(*s));
}

size_t roce_ladder_mid_flows(const struct roce_capture *c)
{
	unsigned flows = c->flows ? roce_flows_count(c->flows) : 0;
	bool *met = calloc(flows + 1, sizeof(bool));
	size_t mid = 0;

	if (!met)
		return 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct roce_cap_pkt *p = &c->pkts[i];
		if (p->flow >= flows || met[p->flow])
			continue;
		met[p->flow] = true;
		const struct roce_opcode_info *op = p->f.ib.op;
		mid += op && (op->flags & (ROCE_OPF_RESP | ROCE_OPF_MIDDLE |
					   ROCE_OPF_LAST));
	}
	free(met);
	return mid;
}
