/* SPDX-License-Identifier: MIT */
/* Frame build: Ethernet or raw IP, IPv4/IPv6, UDP, transport packet, ICRC. */
#include <errno.h>
#include <string.h>

#include "rocemu/frame.h"
#include "rocemu/grh.h"
#include "rocemu/icrc.h"
#include "byteorder.h"

void roce_frame_init(struct roce_frame *f, unsigned ip_ver)
{
	memset(f, 0, sizeof(*f));
	f->link = ROCE_LINK_ETH;
	f->ip_ver = (uint8_t)ip_ver;
	f->ip_frag = ip_ver == 4 ? ROCE_IPV4_DF : 0;
	f->ttl = 64;
	f->dport = ROCE_UDP_PORT;
	f->ib.bth.pkey = 0xffff;
}

static size_t put_eth(const struct roce_frame *f, uint8_t *b)
{
	size_t off = 12;

	memcpy(b, f->eth_dst, 6);
	memcpy(b + 6, f->eth_src, 6);
	for (unsigned i = 0; i < f->nvlan && i < 2; i++, off += 4) {
		put_be16(b + off, f->vlan_tpid[i]);
		put_be16(b + off + 2, f->vlan_tci[i]);
	}
	put_be16(b + off, f->ip_ver == 4 ? 0x0800 : 0x86dd);
	return off + 2;
}

static size_t put_ipv4(const struct roce_frame *f, uint8_t *b, size_t iplen)
{
	size_t ihl = ROCE_IPV4_HLEN + (f->ip_optlen & ~3u);

	b[0] = (uint8_t)(0x40 | ihl / 4);
	b[1] = f->tos;
	put_be16(b + 2, (uint16_t)iplen);
	put_be16(b + 4, f->ip_id);
	put_be16(b + 6, f->ip_frag);
	b[8] = f->ttl;
	b[9] = 17;
	put_be16(b + 10, 0);
	memcpy(b + 12, f->src_gid + 12, 4);
	memcpy(b + 16, f->dst_gid + 12, 4);
	if (ihl > ROCE_IPV4_HLEN)
		memcpy(b + ROCE_IPV4_HLEN, f->ip_opts, ihl - ROCE_IPV4_HLEN);
	put_be16(b + 10, roce_inet_csum(b, ihl, 0));
	return ihl;
}

static size_t put_ipv6(const struct roce_frame *f, uint8_t *b, size_t plen)
{
	put_be32(b, roce_ipv6_vtcfl(f->tos, f->flow_label));
	put_be16(b + 4, (uint16_t)plen);
	b[6] = 17;
	b[7] = f->ttl;
	memcpy(b + 8, f->src_gid, 16);
	memcpy(b + 24, f->dst_gid, 16);
	return ROCE_IPV6_HLEN;
}

/* UDP checksum with the IPv4 or IPv6 pseudo-header (RFC 768, RFC 8200). */
uint16_t roce_udp_csum(const uint8_t *ip, const uint8_t *udp, size_t len)
{
	unsigned ver = ip[0] >> 4;
	uint32_t sum = 17 + (uint32_t)len;
	const uint8_t *addrs = ver == 4 ? ip + 12 : ip + 8;
	size_t alen = ver == 4 ? 8 : 32;

	for (size_t i = 0; i < alen; i += 2)
		sum += get_be16(addrs + i);
	uint16_t c = roce_inet_csum(udp, len, sum);
	return c ? c : 0xffff;
}

int roce_frame_build(const struct roce_frame *f, uint8_t *buf, size_t cap)
{
	uint8_t hdr[ROCE_ETH_HLEN + 2 * ROCE_VLAN_HLEN];
	size_t l2 = 0;

	if (f->link == ROCE_LINK_ETH)
		l2 = put_eth(f, hdr);
	else if (f->link != ROCE_LINK_RAW)
		return -EINVAL;
	if (f->ip_ver != 4 && f->ip_ver != 6)
		return -EINVAL;
	size_t ihl = f->ip_ver == 4 ? ROCE_IPV4_HLEN + (f->ip_optlen & ~3u)
				    : ROCE_IPV6_HLEN;
	size_t hl = l2 + ihl + ROCE_UDP_HLEN;
	if (cap < hl)
		return -ENOSPC;
	int tl = roce_ib_build(&f->ib, buf + hl, cap - hl);
	if (tl < 0)
		return tl;
	size_t udplen = ROCE_UDP_HLEN + (size_t)tl;
	if (udplen > 0xffff || (f->ip_ver == 4 && ihl + udplen > 0xffff))
		return -EINVAL;
	memcpy(buf, hdr, l2);
	uint8_t *ip = buf + l2, *udp = ip + ihl;
	if (f->ip_ver == 4)
		put_ipv4(f, ip, ihl + udplen);
	else
		put_ipv6(f, ip, udplen);
	put_be16(udp, f->sport);
	put_be16(udp + 2, f->dport);
	put_be16(udp + 4, (uint16_t)udplen);
	put_be16(udp + 6, 0);

	uint32_t icrc;
	roce_icrc_calc(ip, ihl + udplen, &icrc);
	put_be32(udp + udplen - ROCE_ICRC_LEN, icrc);
	if (f->udp_csum)
		put_be16(udp + 6, roce_udp_csum(ip, udp, udplen));
	return (int)(hl + (size_t)tl);
}

uint32_t roce_frame_built_icrc(const uint8_t *frame, size_t len)
{
	return len < ROCE_ICRC_LEN ? 0 : get_be32(frame + len - ROCE_ICRC_LEN);
}
