/* SPDX-License-Identifier: MIT */
/* ICRC: one CRC-32 pass over the datagram as it is, corrected for the masked fields (icrc_memo.c); the masked copy of IP/UDP/BTH finds the correction. */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "rocemu/icrc.h"
#include "rocemu/ibhdr.h"
#include "icrc_memo.h"

enum {
	LRH_ONES = 8,		/* stands in for the IB LRH (A17.3.3) */
	IPV4_MAX = 60,
	IPV6_LEN = 40,
	UDP_LEN = 8,
	/*
	 * A CRC call has a fixed cost (zlib's 80-120 ns, ISA-L's about 15 ns)
	 * besides its per-byte one, so a small datagram is copied whole and
	 * hashed in one call; above this size the copy costs more than the
	 * second call.
	 */
	ONE_CALL_MAX = 512,
};

/* The length of the IP header at ip (len bytes); -EBADMSG if it is no
 * IPv4 or IPv6 header. */
static int ip_hlen(const uint8_t *ip, size_t len)
{
	if (len >= 20 && ip[0] >> 4 == 4 && (ip[0] & 0xf) >= 5 &&
	    (ip[0] & 0xf) * 4u <= len)
		return (ip[0] & 0xf) * 4;
	if (len >= IPV6_LEN && ip[0] >> 4 == 6)
		return IPV6_LEN;
	return -EBADMSG;
}

/* Copies the IP header at ip into out with its variant fields set to ones;
 * returns its length or -EBADMSG. */
static int mask_ip(const uint8_t *ip, size_t len, uint8_t *out)
{
	int hl = ip_hlen(ip, len);

	if (hl < 0)
		return hl;
	memcpy(out, ip, (size_t)hl);
	if (ip[0] >> 4 == 4) {
		out[1] = 0xff;			/* TOS */
		out[8] = 0xff;			/* TTL */
		out[10] = out[11] = 0xff;	/* header checksum */
	} else {
		out[0] |= 0x0f;			/* traffic class, flow label */
		out[1] = out[2] = out[3] = 0xff;
		out[7] = 0xff;			/* hop limit */
	}
	return hl;
}

/* The CRC (not yet byte-swapped) of the masked message: the masked copy of
 * the headers and, past them, the bytes at ip as they are. */
static uint32_t masked_crc(const uint8_t *ip, size_t len, int iplen,
			   uint8_t *buf)
{
	size_t hdrs = (size_t)iplen + UDP_LEN + ROCE_BTH_LEN;
	size_t body = len - ROCE_ICRC_LEN;
	size_t copy = body <= ONE_CALL_MAX ? body : hdrs;
	uint8_t *udp = buf + LRH_ONES + iplen;

	memcpy(udp, ip + iplen, copy - (size_t)iplen);
	udp[6] = udp[7] = 0xff;		/* UDP checksum */
	udp[UDP_LEN + 4] = 0xff;	/* BTH FECN, BECN, resv6 */
	return roce_crc32_2(0, buf, LRH_ONES + copy, ip + copy, body - copy);
}

/* The memo key of the datagram at ip: its IP header's first byte (version
 * and length: where the masked fields lie) and the masked fields' values
 * but the checksums', which with the length fix the masked message's
 * difference from the bytes as they are. */
static uint64_t calc_key(const uint8_t *ip, int iplen)
{
	const uint8_t *udp = ip + iplen;
	bool v4 = ip[0] >> 4 == 4;
	uint64_t k = 'c';

	k = k << 8 | ip[0];
	k = k << 8 | ip[1];
	k = k << 8 | ip[v4 ? 8 : 2];
	k = k << 8 | (v4 ? 0 : ip[3]);	/* an IPv4 checksum: see csum_fix */
	k = k << 8 | (v4 ? 0 : ip[7]);
	k = k << 8 | udp[UDP_LEN + 4];	/* the checksum at udp + 6 neither */
	return k;
}

/* Fills csum_fix[at..at+3] of hit for a checksum after which z bytes of
 * the pass follow: bit k of the difference contributes the CRC register
 * of that bit alone carried through z zero bytes. */
static void csum_tables(struct icrc_memo_hit *hit, unsigned at, size_t z)
{
	uLong op = crc32_combine_gen((z_off_t)z);
	uint32_t bit[16];

	for (unsigned k = 0; k < 16; k++) {
		uint8_t e[2] = { (uint8_t)((1u << k) >> 8), (uint8_t)(1u << k) };
		uint32_t reg = ~roce_crc32(0xffffffff, e, 2); /* from zero */
		bit[k] = (uint32_t)crc32_combine_op(reg, 0, op);
	}
	for (unsigned j = 0; j < 4; j++)
		for (unsigned v = 0; v < 16; v++) {
			uint32_t t = 0;
			for (unsigned b = 0; b < 4; b++)
				if (v >> b & 1)
					t ^= bit[4 * j + b];
			hit->csum_fix[at + j][v] = t;
		}
}

/* The correction for a checksum that differs by d from the one hit's fix
 * was found with: the tables at 0 (IPv4's) or at 4 (UDP's). */
static uint32_t csum_fix(const struct icrc_memo_hit *hit, unsigned at,
			 unsigned d)
{
	const uint32_t(*t)[16] = hit->csum_fix + at;

	return t[0][d & 15] ^ t[1][d >> 4 & 15] ^ t[2][d >> 8 & 15] ^
	       t[3][d >> 12 & 15];
}

/* Fills hit's checksum tables for a pass of body bytes over a datagram
 * whose IP header is iplen bytes (IPv4's checksum ends 12 bytes in, UDP's
 * 8 past the IP header); a first packet whose checksums repeat never
 * needs them. */
static void fill_tables(struct icrc_memo_hit *hit, bool v4, int iplen,
			size_t body)
{
	if (v4)
		csum_tables(hit, 0, body - 12);
	else
		memset(hit->csum_fix, 0, sizeof(hit->csum_fix[0]) * 4);
	csum_tables(hit, 4, body - (size_t)iplen - UDP_LEN);
	hit->tables = true;
}

int roce_icrc_calc(const uint8_t *ip, size_t len, uint32_t *icrc)
{
	int iplen = ip_hlen(ip, len);

	if (iplen < 0)
		return iplen;
	size_t hdrs = (size_t)iplen + UDP_LEN + ROCE_BTH_LEN;
	if (len < hdrs + ROCE_ICRC_LEN)
		return -EBADMSG;
	size_t body = len - ROCE_ICRC_LEN;
	bool v4 = ip[0] >> 4 == 4;
	unsigned csum = v4 ? (unsigned)ip[10] << 8 | ip[11] : 0;
	unsigned ucsum = (unsigned)ip[iplen + 6] << 8 | ip[iplen + 7];
	uint64_t key[1] = { calc_key(ip, iplen) };
	struct icrc_memo_hit *hit = icrc_memo_find(key, 1, body);
	uint32_t crc;

	if (hit) {
		unsigned d = csum ^ hit->csum0, u = ucsum ^ hit->udp0;
		if ((d | u) && !hit->tables)
			fill_tables(hit, v4, iplen, body);
		crc = roce_crc32(0, ip, body) ^ hit->fix;
		if (d) /* looked up only for a checksum that changed */
			crc ^= csum_fix(hit, 0, d);
		if (u)
			crc ^= csum_fix(hit, 4, u);
	} else {
		uint8_t buf[LRH_ONES + ONE_CALL_MAX];
		memset(buf, 0xff, LRH_ONES);
		mask_ip(ip, len, buf + LRH_ONES);
		crc = masked_crc(ip, len, iplen, buf);
		struct icrc_memo_hit *put = icrc_memo_put(key, 1, body);
		if (put) {
			put->start = 0;
			put->fix = crc ^ roce_crc32(0, ip, body);
			put->csum0 = (uint16_t)csum;
			put->udp0 = (uint16_t)ucsum;
			put->tables = false;
		}
	}
	*icrc = __builtin_bswap32(crc);
	return 0;
}

uint32_t icrc_crc_of_parts(const uint8_t *hdr, size_t hl,
			   const uint8_t *payload, size_t n)
{
	uint64_t key[ICRC_MEMO_WORDS];
	size_t words = 0, i;

	/* whole words of hdr, then its tail built in a register */
	key[words++] = (uint64_t)'s' << 16 | (uint64_t)hl << 8 | payload[4];
	for (i = 0; i + 8 <= hl; i += 8)
		memcpy(&key[words++], hdr + i, 8);
	if (i < hl) {
		uint64_t t = 0;
		for (; i < hl; i++)
			t = t << 8 | hdr[i];
		key[words++] = t;
	}
	struct icrc_memo_hit *found = icrc_memo_find(key, words, n);
	if (found)
		return roce_crc32(found->start, payload, n) ^ found->fix;

	/* The state after the ones and the masked headers, then the masked
	 * BTH and the rest; the same from that state over the bytes as they
	 * are gives the correction. */
	uint8_t buf[LRH_ONES + IPV6_LEN + UDP_LEN], bth[ROCE_BTH_LEN];
	memset(buf, 0xff, LRH_ONES);
	int iplen = mask_ip(hdr, hl, buf + LRH_ONES);
	memcpy(buf + LRH_ONES + iplen, hdr + iplen, UDP_LEN);
	buf[LRH_ONES + iplen + 6] = buf[LRH_ONES + iplen + 7] = 0xff;
	memcpy(bth, payload, ROCE_BTH_LEN);
	bth[4] = 0xff;
	uint32_t start = roce_crc32(0, buf, LRH_ONES + hl);
	uint32_t crc = roce_crc32_2(start, bth, ROCE_BTH_LEN,
				    payload + ROCE_BTH_LEN, n - ROCE_BTH_LEN);
	struct icrc_memo_hit *put = icrc_memo_put(key, words, n);
	if (put) { /* the headers are keyed whole: no checksum correction */
		put->start = start;
		put->fix = crc ^ roce_crc32(start, payload, n);
		put->csum0 = put->udp0 = 0;
		put->tables = false;
	}
	return crc;
}
