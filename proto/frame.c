/* SPDX-License-Identifier: MIT */
/* Frame parse: link header, IPv4/IPv6, UDP 4791, then the transport packet and its ICRC. */
#include <errno.h>
#include <string.h>

#include "rocemu/frame.h"
#include "rocemu/grh.h"
#include "rocemu/icrc.h"
#include "byteorder.h"

enum {
	ETHERTYPE_IPV4 = 0x0800,
	ETHERTYPE_IPV6 = 0x86dd,
	ETHERTYPE_VLAN = 0x8100,
	ETHERTYPE_QINQ = 0x88a8,
	IPPROTO_UDP_ = 17,
	SLL_HLEN = 16,
	SLL2_HLEN = 20,
};

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

void roce_gid_from_ipv4(uint8_t gid[16], const uint8_t ip4[4])
{
	memcpy(gid, v4_mapped, 12);
	memcpy(gid + 12, ip4, 4);
}

bool roce_gid_is_ipv4(const uint8_t gid[16])
{
	return memcmp(gid, v4_mapped, 12) == 0;
}

void roce_gid_link_local(uint8_t gid[16], const uint8_t mac[6])
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	gid[8] = mac[0] ^ 0x02;	/* the universal/local bit inverted */
	gid[9] = mac[1];
	gid[10] = mac[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = mac[3];
	gid[14] = mac[4];
	gid[15] = mac[5];
}

bool roce_gid_link_local_ipv4(const uint8_t gid[16], uint8_t ip4[4])
{
	static const uint8_t prefix[10] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
					    0x02 ^ 0x02, 0 };

	if (memcmp(gid, prefix, sizeof(prefix)) || gid[11] != 0xff ||
	    gid[12] != 0xfe)
		return false;
	ip4[0] = gid[10];
	memcpy(ip4 + 1, gid + 13, 3);
	return true;
}

uint16_t roce_inet_csum(const uint8_t *p, size_t len, uint32_t sum)
{
	uint64_t s = sum;

	for (; len > 1; p += 2, len -= 2)
		s += get_be16(p);
	if (len)
		s += (uint32_t)p[0] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

int roce_frame_dst_gid(const uint8_t *frame, size_t len, uint8_t gid[16])
{
	const uint8_t *ip = frame + ROCE_ETH_HLEN;

	if (len < ROCE_ETH_HLEN + ROCE_IPV4_HLEN)
		return -EBADMSG;
	if (ip[0] >> 4 == 4) {
		roce_gid_from_ipv4(gid, ip + 16);
		return 0;
	}
	if (len < ROCE_ETH_HLEN + ROCE_IPV6_HLEN)
		return -EBADMSG;
	memcpy(gid, ip + 24, 16);
	return 0;
}

static int skip(const char **why, const char *reason)
{
	*why = reason;
	return -ENOMSG;
}

static int bad(const char **why, const char *reason)
{
	*why = reason;
	return -EBADMSG;
}

/* Finds the IP header; returns its offset, or -ENOMSG. */
static int parse_link(unsigned link, const uint8_t *b, size_t cap,
		      struct roce_frame *f, const char **why)
{
	size_t off;
	uint16_t type;

	switch (link) {
	case ROCE_LINK_ETH:
		if (cap < ROCE_ETH_HLEN)
			return skip(why, "shorter than an Ethernet header");
		memcpy(f->eth_dst, b, 6);
		memcpy(f->eth_src, b + 6, 6);
		off = 12;
		type = get_be16(b + off);
		while ((type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ) &&
		       f->nvlan < 2 && cap >= off + 2 + ROCE_VLAN_HLEN) {
			f->vlan_tpid[f->nvlan] = type;
			f->vlan_tci[f->nvlan++] = get_be16(b + off + 2);
			off += ROCE_VLAN_HLEN;
			type = get_be16(b + off);
		}
		off += 2;
		break;
	case ROCE_LINK_SLL:
		if (cap < SLL_HLEN)
			return skip(why, "shorter than a Linux cooked header");
		type = get_be16(b + 14);
		off = SLL_HLEN;
		break;
	case ROCE_LINK_SLL2:
		if (cap < SLL2_HLEN)
			return skip(why, "shorter than a Linux cooked v2 header");
		type = get_be16(b);
		off = SLL2_HLEN;
		break;
	case ROCE_LINK_RAW:
		if (cap < 1)
			return skip(why, "empty frame");
		type = (b[0] >> 4) == 6 ? ETHERTYPE_IPV6 : ETHERTYPE_IPV4;
		off = 0;
		break;
	default:
		return skip(why, "unsupported link type");
	}
	if (type != ETHERTYPE_IPV4 && type != ETHERTYPE_IPV6)
		return skip(why, "not IPv4 or IPv6");
	f->ip_ver = type == ETHERTYPE_IPV4 ? 4 : 6;
	return (int)off;
}

/* Parses the IP header at b; returns its length and sets *iplen to the
 * datagram length the header claims; -ENOMSG if not UDP. */
static int parse_ipv4(const uint8_t *b, size_t cap, struct roce_frame *f,
		      size_t *iplen, const char **why)
{
	if (cap < ROCE_IPV4_HLEN || b[0] >> 4 != 4)
		return skip(why, "not a whole IPv4 header");
	size_t ihl = (size_t)(b[0] & 0xf) * 4;
	if (ihl < ROCE_IPV4_HLEN || cap < ihl)
		return skip(why, "bad IPv4 header length");
	if (b[9] != IPPROTO_UDP_)
		return skip(why, "not UDP");
	f->tos = b[1];
	*iplen = get_be16(b + 2);
	f->ip_id = get_be16(b + 4);
	f->ip_frag = get_be16(b + 6);
	f->ttl = b[8];
	f->ip_csum = get_be16(b + 10);
	roce_gid_from_ipv4(f->src_gid, b + 12);
	roce_gid_from_ipv4(f->dst_gid, b + 16);
	f->ip_optlen = (uint8_t)(ihl - ROCE_IPV4_HLEN);
	f->ip_opts = b + ROCE_IPV4_HLEN;
	if (f->ip_frag & 0x1fff)
		return skip(why, "IPv4 fragment other than the first");
	return (int)ihl;
}

static int parse_ipv6(const uint8_t *b, size_t cap, struct roce_frame *f,
		      size_t *iplen, const char **why)
{
	if (cap < ROCE_IPV6_HLEN || b[0] >> 4 != 6)
		return skip(why, "not a whole IPv6 header");
	if (b[6] != IPPROTO_UDP_)
		return skip(why, "not UDP (or IPv6 extension headers)");
	roce_ipv6_vtcfl_split(get_be32(b), &f->tos, &f->flow_label);
	*iplen = ROCE_IPV6_HLEN + (size_t)get_be16(b + 4);
	f->ttl = b[7];
	memcpy(f->src_gid, b + 8, 16);
	memcpy(f->dst_gid, b + 24, 16);
	return ROCE_IPV6_HLEN;
}

/* Checks the IP and UDP lengths against each other and the frame. */
static int check_lengths(const struct roce_frame *f, size_t iphl,
			 size_t iplen, size_t room, const char **why)
{
	if (f->ip_ver == 4 && (f->ip_frag & 0x2000))
		return bad(why, "fragmented IPv4 datagram");
	if (iplen < iphl + ROCE_UDP_HLEN)
		return bad(why, "IP length shorter than IP and UDP headers");
	if (iplen > room)
		return bad(why, "IP length runs past the end of the frame");
	if (f->udp_len != iplen - iphl)
		return bad(why, "UDP length disagrees with the IP length");
	return 0;
}

int roce_frame_parse(unsigned link, const uint8_t *buf, size_t caplen,
		     size_t wire_len, struct roce_frame *f, const char **why)
{
	size_t iplen = 0;
	int ihl;

	memset(f, 0, sizeof(*f));
	f->link = (uint8_t)link;
	f->wire_len = (uint32_t)wire_len;
	if (caplen > wire_len)
		caplen = wire_len;
	f->truncated = caplen < wire_len;
	int l2 = parse_link(link, buf, caplen, f, why);
	if (l2 < 0)
		return l2;
	const uint8_t *ip = buf + l2;
	size_t cap = caplen - (size_t)l2;
	f->ip_hdr = ip;
	ihl = f->ip_ver == 4 ? parse_ipv4(ip, cap, f, &iplen, why)
			     : parse_ipv6(ip, cap, f, &iplen, why);
	if (ihl < 0)
		return ihl;
	if (cap < (size_t)ihl + ROCE_UDP_HLEN)
		return skip(why, "UDP header cut off");
	const uint8_t *udp = ip + ihl;
	f->sport = get_be16(udp);
	f->dport = get_be16(udp + 2);
	f->udp_len = get_be16(udp + 4);
	f->udp_csum = get_be16(udp + 6);
	if (f->dport != ROCE_UDP_PORT)
		return skip(why, "not UDP port 4791");
	int rc = check_lengths(f, (size_t)ihl, iplen, wire_len - (size_t)l2,
			       why);
	if (rc)
		return rc;
	/* Only a cut inside the datagram matters, not a cut Ethernet pad. */
	f->truncated = (size_t)l2 + iplen > caplen;
	size_t tlen = f->udp_len - ROCE_UDP_HLEN;
	size_t tavail = (f->truncated ? cap : iplen) - (size_t)ihl -
			ROCE_UDP_HLEN;
	rc = roce_ib_parse(udp + ROCE_UDP_HLEN, tlen, tavail, &f->ib, why);
	if (rc == -ENODATA)
		return 0; /* f->truncated tells the caller */
	if (rc)
		return rc;
	return roce_icrc_calc(ip, iplen, &f->icrc_calc) ? bad(why, "ICRC")
							 : 0;
}
