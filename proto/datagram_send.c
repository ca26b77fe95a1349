/* SPDX-License-Identifier: MIT */
/* A built frame on its way to a UDP socket: where its datagram lies, and a new source port with the ICRC to match. */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "rocemu/datagram.h"
#include "rocemu/grh.h"
#include "rocemu/icrc.h"
#include "byteorder.h"

enum {
	ETHERTYPE_IPV4 = 0x0800,
	ETHERTYPE_IPV6 = 0x86dd,
	ETHERTYPE_VLAN = 0x8100,
	ETHERTYPE_QINQ = 0x88a8,
	MAX_TAGS = 2,
	IPV4_MF_OFFSET = 0x3fff,	/* more fragments, fragment offset */
};

/* The offset of the IP header and its version (4, 6; 0 if neither). */
static size_t ip_offset(const uint8_t *b, size_t len, uint8_t *ver)
{
	size_t off = 12;
	uint16_t type = get_be16(b + off);

	for (int t = 0; t < MAX_TAGS && (type == ETHERTYPE_VLAN ||
					 type == ETHERTYPE_QINQ); t++) {
		off += ROCE_VLAN_HLEN;
		if (len < off + 2) {
			*ver = 0;
			return 0;
		}
		type = get_be16(b + off);
	}
	*ver = type == ETHERTYPE_IPV4 ? 4 : type == ETHERTYPE_IPV6 ? 6 : 0;
	return off + 2;
}

/* Reads the IP header at ip (cap bytes there); returns its length and
 * the datagram length it claims in *iplen, or -ENOMSG. */
static int ip_header(const uint8_t *ip, size_t cap, struct roce_frame_udp *u,
		     size_t *iplen)
{
	if (u->ip_ver == 4) {
		if (cap < ROCE_IPV4_HLEN || ip[0] >> 4 != 4)
			return -ENOMSG;
		size_t ihl = (size_t)(ip[0] & 0xf) * 4;
		if (ihl < ROCE_IPV4_HLEN || cap < ihl || ip[9] != 17 ||
		    (get_be16(ip + 6) & IPV4_MF_OFFSET))
			return -ENOMSG;
		*iplen = get_be16(ip + 2);
		roce_gid_from_ipv4(u->src_gid, ip + 12);
		roce_gid_from_ipv4(u->dst_gid, ip + 16);
		return (int)ihl;
	}
	if (cap < ROCE_IPV6_HLEN || ip[0] >> 4 != 6 || ip[6] != 17)
		return -ENOMSG;
	*iplen = ROCE_IPV6_HLEN + (size_t)get_be16(ip + 4);
	memcpy(u->src_gid, ip + 8, 16);
	memcpy(u->dst_gid, ip + 24, 16);
	return ROCE_IPV6_HLEN;
}

int roce_frame_find_udp(const uint8_t *frame, size_t len,
			struct roce_frame_udp *u)
{
	struct roce_frame_udp v = { 0 };
	size_t iplen;

	if (len < ROCE_ETH_HLEN)
		return -ENOMSG;
	v.ip_off = ip_offset(frame, len, &v.ip_ver);
	if (!v.ip_ver)
		return -ENOMSG;
	const uint8_t *ip = frame + v.ip_off;
	int ihl = ip_header(ip, len - v.ip_off, &v, &iplen);
	if (ihl < 0)
		return ihl;
	v.udp_off = v.ip_off + (size_t)ihl;
	if (len < v.udp_off + ROCE_UDP_HLEN ||
	    get_be16(frame + v.udp_off + 2) != ROCE_UDP_PORT)
		return -ENOMSG;
	size_t udp_len = get_be16(frame + v.udp_off + 4);
	/* What follows the IP datagram is link padding, as a parse sees it. */
	if (iplen > len - v.ip_off || udp_len != iplen - (size_t)ihl ||
	    udp_len < ROCE_UDP_HLEN + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return -EBADMSG;
	v.sport = get_be16(frame + v.udp_off);
	if (v.ip_ver == 4)
		v.tos = ip[1];
	else
		roce_ipv6_vtcfl_split(get_be32(ip), &v.tos, &v.flow_label);
	v.payload_len = udp_len - ROCE_UDP_HLEN;
	*u = v;
	return 0;
}

/*
 * How the ICRC changes when the source port changes from old to sport:
 * CRC-32 is affine, so two messages that differ in two bytes have CRCs
 * that differ by the CRC, without its constant part, of those two bytes
 * carried on through the after bytes that follow them. Returned as the
 * ICRC is read (the CRC byte-swapped).
 */
static uint32_t icrc_delta(uint16_t old, uint16_t sport, size_t after)
{
	uint8_t d[2], zero[2] = { 0, 0 };

	put_be16(d, old ^ sport);
	uLong lin = crc32(0L, d, 2) ^ crc32(0L, zero, 2);
	uLong op = crc32_combine_gen((z_off_t)after);
	return __builtin_bswap32((uint32_t)crc32_combine_op(lin, 0, op));
}

int roce_frame_set_sport(uint8_t *frame, size_t len, uint16_t sport)
{
	struct roce_frame_udp u;
	int rc = roce_frame_find_udp(frame, len, &u);

	if (rc)
		return rc;
	uint8_t *udp = frame + u.udp_off;
	size_t udp_len = ROCE_UDP_HLEN + u.payload_len;
	uint8_t *icrc = udp + udp_len - ROCE_ICRC_LEN;
	/* the ICRC covers the bytes from the port's up to the ICRC field */
	size_t after = udp_len - ROCE_ICRC_LEN - 2;

	put_be32(icrc, get_be32(icrc) ^ icrc_delta(u.sport, sport, after));
	put_be16(udp, sport);
	if (get_be16(udp + 6)) {
		put_be16(udp + 6, 0);
		put_be16(udp + 6,
			 roce_udp_csum(frame + u.ip_off, udp, udp_len));
	}
	return 0;
}
