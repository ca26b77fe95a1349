/* SPDX-License-Identifier: MIT */
/* ICRC: CRC-32 over a masked copy of IP/UDP/BTH, then the rest as is. */
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

/* Copies the IP header at ip into out with its variant fields set to ones;
 * returns its length or -EBADMSG. */
static int mask_ip(const uint8_t *ip, size_t len, uint8_t *out)
{
	if (len < 1)
		return -EBADMSG;
	if (ip[0] >> 4 == 4) {
		size_t ihl = (size_t)(ip[0] & 0xf) * 4;
		if (ihl < 20 || len < ihl)
			return -EBADMSG;
		memcpy(out, ip, ihl);
		out[1] = 0xff;			/* TOS */
		out[8] = 0xff;			/* TTL */
		out[10] = out[11] = 0xff;	/* header checksum */
		return (int)ihl;
	}
	if (ip[0] >> 4 == 6 && len >= IPV6_LEN) {
		memcpy(out, ip, IPV6_LEN);
		out[0] |= 0x0f;			/* traffic class, flow label */
		out[1] = out[2] = out[3] = 0xff;
		out[7] = 0xff;			/* hop limit */
		return IPV6_LEN;
	}
	return -EBADMSG;
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
 * but the IPv4 checksum's, which with the length fix the masked message's
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
	k = k << 8 | udp[6];
	k = k << 8 | udp[7];
	return k;
}

/* The length of the IP header at ip (len bytes), checked as mask_ip
 * checks it; -EBADMSG if it is no IPv4 or IPv6 header. */
static int ip_hlen(const uint8_t *ip, size_t len)
{
	if (len >= 20 && ip[0] >> 4 == 4 && (ip[0] & 0xf) * 4u <= len &&
	    (ip[0] & 0xf) >= 5)
		return (ip[0] & 0xf) * 4;
	if (len >= IPV6_LEN && ip[0] >> 4 == 6)
		return IPV6_LEN;
	return -EBADMSG;
}

/* Fills hit's IPv4 checksum correction for a pass in which z bytes follow
 * the checksum: bit k of the difference contributes the CRC register of
 * that bit alone carried through z zero bytes. */
static void csum_tables(struct icrc_memo_hit *hit, size_t z)
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
			hit->csum_fix[j][v] = t;
		}
}

/* The correction for an IPv4 checksum that differs by d from csum0. */
static uint32_t csum_fix(const struct icrc_memo_hit *hit, unsigned d)
{
	return hit->csum_fix[0][d & 15] ^ hit->csum_fix[1][d >> 4 & 15] ^
	       hit->csum_fix[2][d >> 8 & 15] ^ hit->csum_fix[3][d >> 12 & 15];
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
	uint64_t key[2] = { calc_key(ip, iplen), ip[iplen + UDP_LEN + 4] };
	const struct icrc_memo_hit *hit = icrc_memo_find(key, 2, body);
	uint32_t crc;

	if (hit) {
		crc = roce_crc32(0, ip, body) ^ hit->fix ^
		      csum_fix(hit, csum ^ hit->csum0);
	} else {
		uint8_t buf[LRH_ONES + ONE_CALL_MAX];
		memset(buf, 0xff, LRH_ONES);
		mask_ip(ip, len, buf + LRH_ONES);
		crc = masked_crc(ip, len, iplen, buf);
		struct icrc_memo_hit *put = icrc_memo_put(key, 2, body);
		if (put) {
			put->start = 0;
			put->fix = crc ^ roce_crc32(0, ip, body);
			put->csum0 = (uint16_t)csum;
			if (v4)
				csum_tables(put, body - 12);
			else
				memset(put->csum_fix, 0, sizeof(put->csum_fix));
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
	const struct icrc_memo_hit *found = icrc_memo_find(key, words, n);
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
		put->csum0 = 0;
		memset(put->csum_fix, 0, sizeof(put->csum_fix));
	}
	return crc;
}
