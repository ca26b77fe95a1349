/* SPDX-License-Identifier: MIT */
/* The RoCEv2 invariant CRC (IBTA Annex A17.3.3), over IPv4 or IPv6. */
#ifndef ROCEMU_ICRC_H
#define ROCEMU_ICRC_H

#include <stddef.h>
#include <stdint.h>

/*
 * The CRC-32 of IEEE 802.3 (zlib's crc32, the ICRC's polynomial) of len
 * bytes at buf, carried on from crc (0 to start; a previous result to
 * continue). Uses ISA-L's carry-less-multiply kernels where the CPU has
 * them and zlib's otherwise; both give the same value. Cannot fail.
 */
uint32_t roce_crc32(uint32_t crc, const void *buf, size_t len);

/* roce_crc32 over alen bytes at a, then blen bytes at b (0: none), as one
 * message; cannot fail. */
uint32_t roce_crc32_2(uint32_t crc, const void *a, size_t alen,
		      const void *b, size_t blen);

/* Names the CRC-32 engine roce_crc32 uses on this CPU: "isa-l" or "zlib". */
const char *roce_crc32_engine(void);

/*
 * Computes the ICRC of the RoCEv2 datagram whose IPv4 or IPv6 header starts
 * at ip; len runs from there through the 4-byte ICRC field, which is not
 * covered. The variant fields are masked to ones: IPv4 TOS, TTL and header
 * checksum, IPv6 traffic class, flow label and hop limit, the UDP checksum
 * and the BTH byte holding FECN, BECN and resv6. The result is the four
 * wire bytes read big-endian (the Wireshark convention; the CRC-32 value
 * itself is stored little-endian). Returns 0, or -EBADMSG if len cannot
 * hold the IP, UDP and BTH headers and the ICRC.
 */
int roce_icrc_calc(const uint8_t *ip, size_t len, uint32_t *icrc);

/*
 * A UDP socket does not show the IPv4 ID or the DF bit of what it
 * receives, yet the ICRC covers both. CRC-32 is affine over GF(2), so the
 * 17 unknown bits can be solved for instead of guessed: given an IPv4
 * datagram (ip, len through the ICRC) whose ID and flags/offset fields are
 * zero, finds the ID and DF that make its ICRC verify and writes them into
 * the header. Returns 0, or -EBADMSG if no such values exist (the packet
 * is corrupt). The check keeps 15 of the ICRC's 32 bits of protection.
 */
int roce_icrc_solve_ipv4(uint8_t *ip, size_t len);

/*
 * The solve of roce_icrc_solve_ipv4 for a caller that has computed the
 * ICRC already (have: as roce_icrc_calc gives it for the datagram with ID
 * and flags/offset 0) and knows the one received (want), for an IPv4
 * datagram of len bytes through the ICRC with a 20-byte header. Sets *id
 * and *frag (0 or the DF bit) and returns 0; -EBADMSG, with *id and *frag
 * unchanged, if no ID and DF make the ICRC verify or len is too short.
 */
int roce_icrc_solve_ipv4_fields(uint32_t have, uint32_t want, size_t len,
				uint16_t *id, uint16_t *frag);

#endif
