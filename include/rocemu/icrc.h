/* SPDX-License-Identifier: MIT */
/* The RoCEv2 invariant CRC (IBTA Annex A17.3.3), over IPv4 or IPv6. */
#ifndef ROCEMU_ICRC_H
#define ROCEMU_ICRC_H

#include <stddef.h>
#include <stdint.h>

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

#endif
