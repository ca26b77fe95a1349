/* SPDX-License-Identifier: MIT */
/* The request messages a requester sent, kept in a small ring for the answers to be matched against. */
#include "check_local.h"

struct chk_msg *chk_msg_add(struct chk_dir *d, uint64_t no, uint32_t psn,
			    enum chk_kind kind)
{
	struct chk_msg *m = &d->ring[d->ring_n++ % CHK_RING];

	*m = (struct chk_msg){ .no = no, .first_psn = psn, .last_psn = psn,
			       .kind = (uint8_t)kind, .seq = d->msgs_done++ };
	return m;
}

/*
 * Newest first: answers nearly always concern the latest messages, so
 * the walk is one or two steps in practice and never more than CHK_RING.
 */
struct chk_msg *chk_msg_find(struct chk_dir *d, uint32_t psn)
{
	uint32_t n = d->ring_n < CHK_RING ? d->ring_n : CHK_RING;

	for (uint32_t i = 1; i <= n; i++) {
		struct chk_msg *m = &d->ring[(d->ring_n - i) % CHK_RING];
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
	uint32_t n = d->ring_n < CHK_RING ? d->ring_n : CHK_RING;

	for (uint32_t i = 1; i <= n; i++) {
		struct chk_msg *m = &d->ring[(d->ring_n - i) % CHK_RING];
		if (roce_psn_cmp(m->last_psn, psn) <= 0)
			return m;
	}
	return NULL;
}
