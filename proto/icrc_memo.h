/* SPDX-License-Identifier: MIT */
/* A per-thread memo of ICRC corrections (icrc_memo.c); proto-internal. */
#ifndef ROCEMU_PROTO_ICRC_MEMO_H
#define ROCEMU_PROTO_ICRC_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rocemu/datagram.h"

/* A key: a tag, the header bytes the correction depends on and the BTH
 * byte the ICRC masks, packed in 8-byte words (written and read as whole
 * words: a word read over byte stores waits for them to drain). */
enum { ICRC_MEMO_WORDS = 1 + (ROCE_DATAGRAM_HDR_MAX + 7) / 8 };

struct icrc_memo_hit {
	uint32_t start;	/* the CRC the single pass starts from */
	uint32_t fix;	/* XORed into that pass's result */
	/* The IPv4 header checksum and the UDP checksum are keyed out (an IP
	 * ID that counts changes the one each packet, a socket's checksums
	 * the other): csum0 and udp0 are the values fix was found with, and
	 * their differences from them, a nibble at a time, index the
	 * correction (CRC-32 is linear in them too): csum_fix[0..3] for the
	 * IPv4 checksum, [4..7] for UDP's, filled when first needed. */
	uint16_t csum0, udp0;
	bool tables;
	uint32_t csum_fix[8][16];
};

/*
 * Looks up key (words words, 1 to ICRC_MEMO_WORDS) for a pass of len bytes
 * in the calling thread's memo; returns its entry (the caller may fill its
 * tables), valid until this thread's next icrc_memo_put, or NULL if none
 * holds it.
 */
struct icrc_memo_hit *icrc_memo_find(const uint64_t *key, size_t words,
				     size_t len);

/* Makes an entry for key (as icrc_memo_find takes it) and len in the
 * calling thread's memo, replacing its oldest, and returns it for the
 * caller to fill before its next memo call; NULL (nothing recorded) for
 * keys of no words or more than ICRC_MEMO_WORDS. */
struct icrc_memo_hit *icrc_memo_put(const uint64_t *key, size_t words,
				    size_t len);

/*
 * The CRC-32 (as roce_crc32 gives it, not byte-swapped) of the ICRC's
 * message for a datagram whose IP and UDP headers are hdr (hl bytes: a
 * 20-byte IPv4 or a 40-byte IPv6 header, then UDP's) and whose UDP payload
 * starts at payload, over its first n bytes (the payload less the ICRC
 * field; n >= the BTH's 12). The same value as roce_icrc_calc over the
 * headers and payload laid end to end; one CRC pass over payload when the
 * calling thread's memo holds the headers. Cannot fail.
 */
uint32_t icrc_crc_of_parts(const uint8_t *hdr, size_t hl,
			   const uint8_t *payload, size_t n);

#endif
