/* SPDX-License-Identifier: MIT */
/* A per-thread memo of ICRC corrections, so that a flow's packets cost one CRC pass each over their bytes as they are. */
#include <stdbool.h>
#include <string.h>

#include "icrc_memo.h"

/*
 * Why it holds: CRC-32 is affine, so two messages of one length that
 * differ only at fixed positions have CRCs that differ by a constant
 * (the CRC of their difference, carried through the zeros after it). The
 * ICRC's masked message differs from the bytes as they are only in the
 * masked fields; a flow's packets of one size carry the same values there
 * but in the checksums (and a UDP socket's datagrams the same IP and UDP
 * headers), so the correction found for the first packet serves the rest,
 * the checksums' part looked up by their change (struct icrc_memo_hit):
 * one CRC call per packet where there were two, and no copy of the
 * headers.
 *
 * Per thread, so that threads never share or lock it; eight entries hold
 * the packets of a few flows in both directions (data and ACKs).
 */
enum { WAYS = 8 };

struct entry {
	uint64_t key[ICRC_MEMO_WORDS];
	uint32_t len;
	uint8_t words;
	struct icrc_memo_hit hit;
};

static __thread struct {
	struct entry e[WAYS];
	unsigned next;	/* the entry a put replaces */
	unsigned last;	/* the entry found or put last: tried first */
} memo;

/* Compared a word at a time: a 10-byte key through memcmp cost about as
 * much as the rest of a hit. */
static bool matches(const struct entry *e, const uint64_t *key, size_t words,
		    size_t len)
{
	if (e->words != words || e->len != len || !words)
		return false;
	for (size_t i = 0; i < words; i++)
		if (key[i] != e->key[i])
			return false;
	return true;
}

struct icrc_memo_hit *icrc_memo_find(const uint64_t *key, size_t words,
				     size_t len)
{
	unsigned last = memo.last % WAYS;

	if (matches(&memo.e[last], key, words, len))
		return &memo.e[last].hit;
	for (unsigned i = 0; i < WAYS; i++)
		if (matches(&memo.e[i], key, words, len)) {
			memo.last = i;
			return &memo.e[i].hit;
		}
	return NULL;
}

struct icrc_memo_hit *icrc_memo_put(const uint64_t *key, size_t words,
				    size_t len)
{
	if (!words || words > ICRC_MEMO_WORDS || len > UINT32_MAX)
		return NULL;
	memo.last = memo.next % WAYS;
	struct entry *e = &memo.e[memo.next++ % WAYS];
	e->len = (uint32_t)len;
	e->words = (uint8_t)words;
	memcpy(e->key, key, words * sizeof(*key));
	return &e->hit;
}
