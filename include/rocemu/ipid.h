/* SPDX-License-Identifier: MIT */
/* The IPv4 IDs a receiver expects of each flow, so that solving the ID a UDP socket hides keeps the ICRC's strength (docs/icrc.md). */
#ifndef ROCEMU_IPID_H
#define ROCEMU_IPID_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A datagram from a UDP socket shows neither the IPv4 ID nor DF, which
 * the ICRC covers. Any ICRC that some (ID, DF) explains could be solved
 * for, which would leave 15 of its 32 bits; the predictor accepts only a
 * few candidates per flow instead (docs/icrc.md has the arithmetic):
 *  - ID 0, with DF or without: what a kernel socket with DF and many
 *    stacks send; it anchors the flow;
 *  - the first datagram of a flow the table does not hold: learned;
 *  - an ID from ROCE_IPID_BEHIND before the flow's last accepted one to
 *    ROCE_IPID_AHEAD after it, plus the jump the sender's counter can
 *    make while the flow is idle (Linux: below one per jiffy, HZ <= 1000,
 *    so one per millisecond, with a quarter more and 2 for jitter and
 *    rounding), and one more for each datagram the receiving socket
 *    dropped meanwhile (each may have carried one of the flow's IDs),
 *    with the flow's DF;
 *  - an ID from 1 to as far (the time's jump included) after the last
 *    refused one (pending), with its DF: two datagrams that agree with
 *    each other resync a flow whose sender jumped further (a counter
 *    shared with other traffic, a restart). Not the pending ID itself: a
 *    corruption that repeats solves to the same ID each time.
 * Everything else is refused, and becomes the pending ID.
 */
enum {
	ROCE_IPID_BEHIND = 4,	/* reordering tolerated */
	ROCE_IPID_AHEAD = 9,	/* losses tolerated, besides the time's */
	ROCE_IPID_FLOWS = 256,	/* flows a table holds */
	ROCE_IPID_WAYS = 8,	/* slots one flow may lie in: its set */
};

/* One flow: the datagrams from one IPv4 address to another. */
struct roce_ipid_flow {
	uint64_t used;		/* the table's clock at its last use; 0: free */
	uint32_t src, dst;	/* the addresses, as their bytes */
	uint32_t seen_ms;	/* arrival of its last datagram */
	/* the receiving socket's drop count when last and pending were set */
	uint32_t last_drops, pending_drops;
	uint16_t last;		/* the last ID accepted */
	uint16_t pending;	/* the last ID refused, if has_pending */
	bool df, pending_df, has_pending;
};

/*
 * The flows a receiver has seen, owned by the caller (one per receiving
 * socket, used under whatever serialises its receive path): fixed size,
 * the least recently used of a flow's ways replaced when all are taken.
 * Zeroed (roce_ipid_init) it holds no flow. The counters say what each
 * decision was, for tests and statistics.
 */
struct roce_ipid_table {
	struct roce_ipid_flow flow[ROCE_IPID_FLOWS];
	uint64_t clock;
	uint64_t learned;	/* new flows, their first ID taken as it came */
	uint64_t zero;		/* ID 0 */
	uint64_t window;	/* in the window after the last ID */
	uint64_t resynced;	/* in the window after the pending ID */
	uint64_t refused;	/* none of these: the datagram is dropped */
	uint64_t evicted;	/* flows replaced by new ones */
};

/* Empties t: no flow is known and the counters are 0. Cannot fail. */
void roce_ipid_init(struct roce_ipid_table *t);

/*
 * Decides whether to accept an IPv4 datagram from src to dst (the
 * addresses' 4 bytes) that arrived at now_ns (any monotonic clock, the
 * same for every call on t) and whose ICRC verifies with ID id and DF df,
 * by the rules above; updates the flow (learning it if new, replacing
 * the least recently used of its ways) and one counter. Returns true to
 * accept; false to refuse, the ID then pending. Cannot fail.
 */
bool roce_ipid_accept(struct roce_ipid_table *t, const uint8_t src[4],
		      const uint8_t dst[4], uint64_t now_ns, uint32_t drops,
		      uint16_t id, bool df);

/*
 * Notes a datagram from src to dst at now_ns that no ID explains: the
 * sender was active then, which bounds the jump of its next ID. A flow
 * not in t stays out; nothing else changes. Cannot fail.
 */
void roce_ipid_seen(struct roce_ipid_table *t, const uint8_t src[4],
		    const uint8_t dst[4], uint64_t now_ns);

#endif
