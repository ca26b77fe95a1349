/* SPDX-License-Identifier: MIT */
/* The request messages a requester sent, kept in a ring for the answers to be matched against. */
#include <stdlib.h>

#include "check_local.h"

static struct chk_msg *slot(const struct chk_dir *d, uint64_t seq)
{
	return &d->ring[seq & (d->cap - 1)];
}

/* The oldest message held is unanswered: overwriting it would lose it. */
static bool oldest_open(const struct chk_dir *d)
{
	const struct chk_msg *m = slot(d, d->msgs_done - d->cap);

	return !d->answered || roce_psn_cmp(m->last_psn, d->acked_psn) > 0;
}

/* Doubles the ring, the messages keeping their numbers. */
static int grow(struct chk_dir *d)
{
	uint32_t cap = d->cap ? d->cap * 2 : CHK_RING_MIN;
	struct chk_msg *ring = calloc(cap, sizeof(*ring));

	if (!ring)
		return -1;
	uint64_t held = d->msgs_done < d->cap ? d->msgs_done : d->cap;
	for (uint64_t s = d->msgs_done - held; s < d->msgs_done; s++)
		ring[s & (cap - 1)] = *slot(d, s);
	free(d->ring);
	d->ring = ring;
	d->cap = cap;
	return 0;
}

struct chk_msg *chk_msg_add(struct chk_dir *d, uint64_t no, uint32_t psn,
			    enum chk_kind kind)
{
	if (d->msgs_done >= d->cap && d->cap < CHK_RING_MAX &&
	    (!d->cap || oldest_open(d)))
		grow(d);
	if (!d->cap) {
		d->msgs_done++;
		return NULL;
	}
	struct chk_msg *m = slot(d, d->msgs_done);
	*m = (struct chk_msg){ .no = no, .first_psn = psn, .last_psn = psn,
			       .kind = (uint8_t)kind, .seq = d->msgs_done++ };
	return m;
}

struct chk_msg *chk_msg_get(struct chk_dir *d, uint64_t seq)
{
	if (!d->cap || seq >= d->msgs_done || d->msgs_done - seq > d->cap)
		return NULL;
	return slot(d, seq);
}

static uint64_t held(const struct chk_dir *d)
{
	return d->msgs_done < d->cap ? d->msgs_done : d->cap;
}

bool chk_msg_forgotten(struct chk_dir *d, uint32_t psn)
{
	/* The oldest message the ring knows: a slot never filled (a message
	 * counted but not seen whole, e.g. one begun before the capture or
	 * redone by a duplicate of its request) knows nothing. */
	for (uint64_t i = held(d); i >= 1; i--) {
		const struct chk_msg *m = slot(d, d->msgs_done - i);
		if (m->no)
			return roce_psn_cmp(psn, m->first_psn) < 0;
	}
	return d->msgs_done > 0;
}

/*
 * Newest first: answers nearly always concern the latest messages, so
 * the walk is one or two steps in practice.
 */
struct chk_msg *chk_msg_find(struct chk_dir *d, uint32_t psn)
{
	for (uint64_t i = 1; i <= held(d); i++) {
		struct chk_msg *m = slot(d, d->msgs_done - i);
		if (roce_psn_cmp(psn, m->first_psn) >= 0 &&
		    roce_psn_cmp(psn, m->last_psn) <= 0)
			return m;
		if (roce_psn_cmp(psn, m->last_psn) > 0)
			return NULL;	/* older ones end earlier still */
	}
	return NULL;
}

struct chk_msg *chk_msg_ended_by(struct chk_dir *d, uint32_t psn)
{
	for (uint64_t i = 1; i <= held(d); i++) {
		struct chk_msg *m = slot(d, d->msgs_done - i);
		if (roce_psn_cmp(m->last_psn, psn) <= 0)
			return m;
	}
	return NULL;
}

void chk_msgs_free(struct chk_dir *d)
{
	free(d->ring);
	d->ring = NULL;
	d->cap = 0;
}
