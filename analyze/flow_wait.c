/* SPDX-License-Identifier: MIT */
/* Flows waiting for their other half, found for an answer in constant time. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "rocemu/psn.h"
#include "flow_wait.h"

/*
 * RC and UC packets name only the destination QP, so the first packet
 * from B to A's QP is matched against the flows from A to B whose far QP
 * is unknown. A capture can hold any number of those (many QPs that never
 * heard back), and fitting every answer against all of them made a
 * capture quadratic. Answers mostly carry the PSN of the request they
 * answer, so each request of a waiting flow is indexed by its PSN; only
 * an answer that matches none is fitted, against the newest flows.
 */

/* Ids in arrival order; taken ones stay until a compaction. */
struct ids {
	unsigned *v;
	size_t n, cap;
};

struct wait_list {
	uint8_t key[FLOW_PAIR_KEY_LEN];
	struct ids ids;
	size_t head, dead;	/* the oldest maybe-live; how many taken */
	UT_hash_handle hh;
};

enum { EXACT_KEY_LEN = FLOW_PAIR_KEY_LEN + 4 };

struct exact {
	uint8_t key[EXACT_KEY_LEN];
	struct ids ids;
	UT_hash_handle hh;
};

struct flow_waits {
	struct wait_list *lists;
	struct exact *exact;
	uint8_t *waiting;	/* by flow id: 1 while it waits */
	size_t wcap;
};

struct flow_waits *flow_waits_new(void)
{
	return calloc(1, sizeof(struct flow_waits));
}

void flow_waits_free(struct flow_waits *s)
{
	struct wait_list *l, *ltmp;
	struct exact *e, *etmp;

	if (!s)
		return;
	HASH_ITER(hh, s->lists, l, ltmp) {
		HASH_DEL(s->lists, l);
		free(l->ids.v);
		free(l);
	}
	HASH_ITER(hh, s->exact, e, etmp) {
		HASH_DEL(s->exact, e);
		free(e->ids.v);
		free(e);
	}
	free(s->waiting);
	free(s);
}

void flow_pair_key(uint8_t key[FLOW_PAIR_KEY_LEN], const uint8_t *a,
		   const uint8_t *b, enum roce_flow_kind k)
{
	memcpy(key, a, 16);
	memcpy(key + 16, b, 16);
	key[32] = (uint8_t)k;
}

static int ids_add(struct ids *ids, unsigned id)
{
	if (ids->n == ids->cap) {
		size_t cap = ids->cap ? 2 * ids->cap : 4;
		unsigned *v = realloc(ids->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		ids->v = v;
		ids->cap = cap;
	}
	ids->v[ids->n++] = id;
	return 0;
}

static bool waits(const struct flow_waits *s, unsigned id)
{
	return id < s->wcap && s->waiting[id];
}

static int mark_waiting(struct flow_waits *s, unsigned id)
{
	if (id >= s->wcap) {
		size_t cap = s->wcap ? 2 * s->wcap : 64;
		while (cap <= id)
			cap *= 2;
		uint8_t *w = realloc(s->waiting, cap);
		if (!w)
			return -ENOMEM;
		memset(w + s->wcap, 0, cap - s->wcap);
		s->waiting = w;
		s->wcap = cap;
	}
	s->waiting[id] = 1;
	return 0;
}

int flow_waits_push(struct flow_waits *s, const uint8_t *key, unsigned id)
{
	struct wait_list *l;

	HASH_FIND(hh, s->lists, key, FLOW_PAIR_KEY_LEN, l);
	if (!l) {
		if (!(l = calloc(1, sizeof(*l))))
			return -ENOMEM;
		memcpy(l->key, key, FLOW_PAIR_KEY_LEN);
		HASH_ADD(hh, s->lists, key, FLOW_PAIR_KEY_LEN, l);
	}
	if (mark_waiting(s, id))
		return -ENOMEM;
	if (ids_add(&l->ids, id)) {
		s->waiting[id] = 0;
		return -ENOMEM;
	}
	return 0;
}

static void exact_key(uint8_t k[EXACT_KEY_LEN], const uint8_t *key,
		      uint32_t psn)
{
	memcpy(k, key, FLOW_PAIR_KEY_LEN);
	memcpy(k + FLOW_PAIR_KEY_LEN, &psn, 4);
}

int flow_waits_note(struct flow_waits *s, const uint8_t *key, unsigned id,
		    uint32_t psn)
{
	uint8_t k[EXACT_KEY_LEN];
	struct exact *e;

	if (!waits(s, id))
		return 0;
	exact_key(k, key, psn);
	HASH_FIND(hh, s->exact, k, EXACT_KEY_LEN, e);
	if (!e) {
		if (!(e = calloc(1, sizeof(*e))))
			return -ENOMEM;
		memcpy(e->key, k, EXACT_KEY_LEN);
		HASH_ADD(hh, s->exact, key, EXACT_KEY_LEN, e);
	}
	return ids_add(&e->ids, id);
}

/* How well waiting flow fl fits a first packet from its far end: 0 for
 * a response to its latest request, then the PSN distance from it;
 * ROCE_PSN_MASK + 1 for no fit. */
static uint32_t fit(const struct roce_flow *fl, const struct roce_frame *f)
{
	if (!(f->ib.op->flags & ROCE_OPF_RESP) || !fl->requests[0])
		return ROCE_PSN_MASK + 1;
	uint32_t psn = f->ib.bth.psn;
	if (roce_psn_cmp(psn, fl->first_req_psn[0]) < 0)
		return ROCE_PSN_MASK + 1;
	/* READ responses run ahead of the request's PSN: distance from
	 * the latest request, either way */
	uint32_t d = roce_psn_diff(psn, fl->last_req_psn[0]);
	return d < (1u << 23) ? d : roce_psn_diff(fl->last_req_psn[0], psn);
}

/* The oldest flow indexed under (key, f's PSN) that still waits and
 * fits exactly; stale entries are dropped on the way. -1 if none. */
static int exact_find(struct flow_waits *s, const uint8_t *key,
		      const struct roce_flow *v, const struct roce_frame *f)
{
	uint8_t k[EXACT_KEY_LEN];
	struct exact *e;
	int best = -1;

	exact_key(k, key, f->ib.bth.psn);
	HASH_FIND(hh, s->exact, k, EXACT_KEY_LEN, e);
	if (!e)
		return -1;
	size_t kept = 0;
	for (size_t i = 0; i < e->ids.n; i++) {
		unsigned id = e->ids.v[i];
		if (!waits(s, id) || fit(&v[id], f) != 0)
			continue;
		e->ids.v[kept++] = id;
		if (best < 0 || id < (unsigned)best)
			best = (int)id;
	}
	e->ids.n = kept;
	return best;
}

/* The oldest live flow of l; -1 if none. */
static int oldest(struct flow_waits *s, struct wait_list *l)
{
	while (l->head < l->ids.n && !waits(s, l->ids.v[l->head]))
		l->head++;
	return l->head < l->ids.n ? (int)l->ids.v[l->head] : -1;
}

/* The best fit among the newest FLOW_WAIT_SCAN_MAX entries of l, the
 * oldest on a tie; the oldest live flow when none fits. */
static int scan(struct flow_waits *s, struct wait_list *l,
		const struct roce_flow *v, const struct roce_frame *f)
{
	size_t from = l->ids.n > FLOW_WAIT_SCAN_MAX
			      ? l->ids.n - FLOW_WAIT_SCAN_MAX
			      : 0;
	uint32_t best_fit = ROCE_PSN_MASK + 1;
	int best = -1;

	for (size_t i = from; i < l->ids.n && best_fit; i++) {
		unsigned id = l->ids.v[i];
		if (!waits(s, id))
			continue;
		uint32_t d = fit(&v[id], f);
		if (d < best_fit) {
			best = (int)id;
			best_fit = d;
		}
	}
	return best >= 0 ? best : oldest(s, l);
}

/* Drops taken ids once they are most of l: each take pays for one. */
static void compact(struct flow_waits *s, struct wait_list *l)
{
	if (l->dead < 32 || 2 * l->dead < l->ids.n)
		return;
	size_t kept = 0;
	for (size_t i = 0; i < l->ids.n; i++)
		if (waits(s, l->ids.v[i]))
			l->ids.v[kept++] = l->ids.v[i];
	l->ids.n = kept;
	l->head = 0;
	l->dead = 0;
}

int flow_waits_take(struct flow_waits *s, const uint8_t *key,
		    const struct roce_flow *v, const struct roce_frame *f)
{
	struct wait_list *l;

	HASH_FIND(hh, s->lists, key, FLOW_PAIR_KEY_LEN, l);
	if (!l || l->dead == l->ids.n)
		return -1;
	int id = exact_find(s, key, v, f);
	if (id < 0)
		id = scan(s, l, v, f);
	if (id < 0)
		return -1;
	s->waiting[id] = 0;
	l->dead++;
	compact(s, l);
	return id;
}
