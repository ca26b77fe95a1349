/* SPDX-License-Identifier: MIT */
/* ICRC: CRC-32 over a masked copy of IP/UDP/BTH, then the rest as is. */
#include <errno.h>
#include <string.h>

#include "rocemu/icrc.h"
#include "rocemu/ibhdr.h"

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

int roce_icrc_calc(const uint8_t *ip, size_t len, uint32_t *icrc)
{
	uint8_t buf[LRH_ONES + ONE_CALL_MAX];

	memset(buf, 0xff, LRH_ONES);
	int iplen = mask_ip(ip, len, buf + LRH_ONES);
	if (iplen < 0)
		return iplen;
	size_t hdrs = (size_t)iplen + UDP_LEN + ROCE_BTH_LEN;
	if (len < hdrs + ROCE_ICRC_LEN)
		return -EBADMSG;
	size_t body = len - ROCE_ICRC_LEN;
	size_t copy = body <= ONE_CALL_MAX ? body : hdrs;
	uint8_t *udp = buf + LRH_ONES + iplen;
	memcpy(udp, ip + iplen, copy - (size_t)iplen);
	udp[6] = udp[7] = 0xff;		/* UDP checksum */
	udp[UDP_LEN + 4] = 0xff;	/* BTH FECN, BECN, resv6 */

	uint32_t crc = roce_crc32_2(0, buf, LRH_ONES + copy, ip + copy,
				    body - copy);
	*icrc = __builtin_bswap32(crc);
	return 0;
}
