/* SPDX-License-Identifier: MIT */
/* A flood of corrupted datagrams at an established IPv4 flow, for the Check suite and tests/tools/icrc_flood: how many the receiver accepts. */
#ifndef ROCEMU_TESTS_ICRC_FLOOD_H
#define ROCEMU_TESTS_ICRC_FLOOD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rocemu/proto.h"

enum { FLOOD_PAYLOAD = 64, FLOOD_BTH_FECN_BYTE = 4 };

struct flood {
	uint64_t sent;		/* corrupted datagrams parsed */
	uint64_t accepted;	/* of them, parsed with a good ICRC */
	uint64_t malformed;	/* of them, refused before the ICRC */
	uint64_t valid_ok;	/* of the flow's valid datagrams, accepted */
};

/* xorshift64*: seeded, so a flood repeats exactly. */
static inline uint64_t flood_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* An RC RDMA WRITE Only of FLOOD_PAYLOAD bytes from 10.0.0.1 to 10.0.0.2
 * with DF and IPv4 ID id, as a socket would deliver it: its UDP payload
 * goes to p (room for ROCE_FRAME_MAX); returns that payload's length. */
static inline size_t flood_datagram(uint8_t *p, uint16_t id)
{
	static const uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };
	uint8_t payload[FLOOD_PAYLOAD], b[ROCE_FRAME_MAX];
	struct roce_frame f;

	for (int i = 0; i < FLOOD_PAYLOAD; i++)
		payload[i] = (uint8_t)(i * 13 + 1);
	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, a4);
	roce_gid_from_ipv4(f.dst_gid, b4);
	f.sport = 0xc123;
	f.ip_id = id;
	f.ip_frag = ROCE_IPV4_DF;
	f.ib.bth.opcode = 0x0a; /* RC RDMA WRITE Only */
	f.ib.bth.dqpn = 0x11;
	f.ib.bth.psn = 0x1234;
	f.ib.reth.va = 0x10000;
	f.ib.reth.rkey = 0x55;
	f.ib.reth.len = FLOOD_PAYLOAD;
	f.ib.payload = payload;
	f.ib.payload_len = FLOOD_PAYLOAD;
	int n = roce_frame_build(&f, b, sizeof(b));
	size_t off = ROCE_ETH_HLEN + ROCE_IPV4_HLEN + ROCE_UDP_HLEN;
	if (n <= (int)off)
		return 0;
	memcpy(p, b + off, (size_t)n - off);
	return (size_t)n - off;
}

/* What the receiving socket at 10.0.0.2 shows of the datagrams. */
static inline void flood_addr(struct roce_datagram_addr *a)
{
	static const uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };

	memset(a, 0, sizeof(*a));
	roce_gid_from_ipv4(a->src_gid, a4);
	roce_gid_from_ipv4(a->dst_gid, b4);
	a->sport = 0xc123;
}

/* Whether the receiver with table ids parses p (len bytes), arrived at
 * now_ns, as a packet with a good ICRC; *rc is the parse's return. */
static inline bool flood_accepts(struct roce_ipid_table *ids,
				 const uint8_t *p, size_t len, uint64_t now_ns,
				 int *rc)
{
	struct roce_datagram_addr a;
	uint8_t hdr[ROCE_DATAGRAM_HDR_MAX];
	struct roce_frame f;
	const char *why = "";

	flood_addr(&a);
	a.when_ns = now_ns;
	*rc = roce_datagram_parse(&a, ids, p, len, hdr, &f, &why);
	return *rc == 0 && roce_frame_icrc_ok(&f);
}

/*
 * The flow's valid datagrams with IDs 100, 101 and 102, then n corrupted
 * copies of the next, in turn: a random ICRC, one payload bit flipped,
 * one byte changed anywhere (the ICRC included); never the BTH byte
 * whose bits the ICRC does not cover, and never a copy equal to the
 * original. They arrive a microsecond apart, at a receiver whose table is
 * ids (emptied first). Counts into *out (zeroed first).
 */
static inline void flood_run(struct roce_ipid_table *ids, uint64_t n,
			     uint64_t seed, struct flood *out)
{
	uint8_t good[ROCE_FRAME_MAX], p[ROCE_FRAME_MAX];
	uint64_t s = seed | 1, us = 0;
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	roce_ipid_init(ids);
	for (uint16_t id = 100; id <= 102; id++) {
		len = flood_datagram(good, id);
		out->valid_ok += flood_accepts(ids, good, len, us++ * 1000, &rc);
	}
	len = flood_datagram(good, 103);
	memcpy(p, good, len);
	for (uint64_t k = 0; k < n; k++) {
		uint64_t r = flood_rand(&s);
		size_t at = 0;
		switch (k % 3) {
		case 0: /* a random ICRC */
			at = len - ROCE_ICRC_LEN;
			for (int i = 0; i < ROCE_ICRC_LEN; i++)
				p[at + i] = (uint8_t)(r >> (8 * i));
			if (!memcmp(p + at, good + at, ROCE_ICRC_LEN))
				p[at] ^= 1;
			break;
		case 1: /* one bit before the ICRC */
			do
				at = (size_t)(r % (len - ROCE_ICRC_LEN)), r /= len;
			while (at == FLOOD_BTH_FECN_BYTE);
			p[at] ^= (uint8_t)(1u << (r % 8));
			break;
		default: /* one byte anywhere, to another value */
			do
				at = (size_t)(r % len), r /= len;
			while (at == FLOOD_BTH_FECN_BYTE);
			p[at] ^= (uint8_t)(1 + (r >> 8) % 255);
			break;
		}
		out->sent++;
		out->accepted += flood_accepts(ids, p, len, us++ * 1000, &rc);
		out->malformed += rc != 0;
		/* back to the original where it was changed */
		if (k % 3 == 0)
			memcpy(p + at, good + at, ROCE_ICRC_LEN);
		else
			p[at] = good[at];
	}
}

#endif
