/* SPDX-License-Identifier: MIT */
/* rocemu impair's edits of a whole Ethernet frame: a flipped byte, the CE mark, new addresses; the ICRC kept right, or exactly as wrong. */
#include <errno.h>
#include <string.h>

#include "impair.h"
#include "rocemu/datagram.h"
#include "rocemu/frame.h"
#include "rocemu/icrc.h"

/* The codec's public API reads fields but writes only whole frames; these
 * edits change a field in place, so they store the two kinds of bytes the
 * codec's headers define: big-endian checksums (RFC 791) and the ICRC's
 * four wire bytes, which rocemu/icrc.h reads big-endian. */
static void store_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void store_be32(uint8_t *p, uint32_t v)
{
	store_be16(p, (uint16_t)(v >> 16));
	store_be16(p + 2, (uint16_t)v);
}

/* The ICRC of the datagram u finds in frame, as computed now. */
static int icrc_now(const uint8_t *frame, const struct roce_frame_udp *u,
		    uint32_t *icrc)
{
	return roce_icrc_calc(frame + u->ip_off,
			      u->udp_off - u->ip_off + ROCE_UDP_HLEN +
				      u->payload_len,
			      icrc);
}

static uint8_t *icrc_at(uint8_t *frame, const struct roce_frame_udp *u)
{
	return frame + roce_frame_udp_payload_off(u) + u->payload_len - 4;
}

/* Sets the IPv4 header checksum of the header at ip (ihl bytes). */
static void ipv4_csum(uint8_t *ip, size_t ihl)
{
	store_be16(ip + 10, 0);
	store_be16(ip + 10, roce_inet_csum(ip, ihl, 0));
}

int impair_corrupt(uint8_t *frame, size_t len, int32_t off, bool fix)
{
	struct roce_frame_udp u;
	uint32_t icrc;

	if (roce_frame_find_udp(frame, len, &u))
		return -ENOMSG;
	size_t last = u.payload_len - 5; /* the byte before the ICRC */
	size_t at = off == IMP_CORRUPT_LAST ? last : (size_t)off;
	if (off < IMP_CORRUPT_LAST || at > last)
		return -ERANGE;
	frame[roce_frame_udp_payload_off(&u) + at] ^= 0xff;
	if (fix && icrc_now(frame, &u, &icrc) == 0)
		store_be32(icrc_at(frame, &u), icrc);
	return 0;
}

int impair_mark_ce(uint8_t *frame, size_t len)
{
	struct roce_frame_udp u;

	if (roce_frame_find_udp(frame, len, &u))
		return -ENOMSG;
	uint8_t *ip = frame + u.ip_off;
	if (u.ip_ver == 4) {
		ip[1] |= 0x03;
		ipv4_csum(ip, (size_t)(ip[0] & 0x0f) * 4);
	} else { /* traffic class: the low nibble of byte 0, high of byte 1 */
		ip[1] |= 0x30;
	}
	return 0;
}

int impair_readdress(const uint8_t *in, size_t inlen, const uint8_t src[16],
		     const uint8_t dst[16], uint16_t sport, uint8_t *out,
		     size_t cap)
{
	struct roce_frame f;
	struct roce_frame_udp u, v;
	const char *why;
	uint32_t icrc;

	if (roce_frame_parse(ROCE_LINK_ETH, in, inlen, inlen, &f, &why) ||
	    roce_frame_find_udp(in, inlen, &u))
		return -ENOMSG;
	if (roce_gid_is_ipv4(src) != (f.ip_ver == 4) ||
	    roce_gid_is_ipv4(dst) != (f.ip_ver == 4))
		return -EINVAL;
	/* how wrong the ICRC came: 0 when right */
	uint32_t wrong = f.icrc_calc ^ f.ib.icrc;
	memcpy(f.src_gid, src, 16);
	memcpy(f.dst_gid, dst, 16);
	f.sport = sport;
	f.ip_id = 0;
	f.ip_frag = f.ip_ver == 4 ? ROCE_IPV4_DF : 0;
	f.ip_csum = 0;
	f.flow_label = 0;
	int n = roce_datagram_wrap(&f, in + roce_frame_udp_payload_off(&u),
				   u.payload_len, out, cap);
	if (n < 0)
		return n == -EINVAL ? -ENOMSG : n;
	if (roce_frame_find_udp(out, (size_t)n, &v))
		return -ENOMSG;
	if (v.ip_ver == 4)
		ipv4_csum(out + v.ip_off, ROCE_IPV4_HLEN);
	if (icrc_now(out, &v, &icrc))
		return -ENOMSG;
	store_be32(icrc_at(out, &v), icrc ^ wrong);
	return n;
}
