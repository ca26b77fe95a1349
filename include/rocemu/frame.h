/* SPDX-License-Identifier: MIT */
/* A whole RoCEv2 frame: link header, IPv4 or IPv6, UDP 4791, transport packet. */
#ifndef ROCEMU_FRAME_H
#define ROCEMU_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rocemu/packet.h"

/* Link layers rocemu reads; it writes Ethernet and raw IP. */
enum roce_link {
	ROCE_LINK_ETH,		/* Ethernet II, up to two 802.1Q/802.1ad tags */
	ROCE_LINK_SLL,		/* Linux cooked capture v1 */
	ROCE_LINK_SLL2,		/* Linux cooked capture v2 */
	ROCE_LINK_RAW,		/* IPv4 or IPv6 with no link header */
};

enum {
	ROCE_ETH_HLEN = 14,
	ROCE_VLAN_HLEN = 4,
	ROCE_IPV4_HLEN = 20,
	ROCE_IPV6_HLEN = 40,
	ROCE_UDP_HLEN = 8,
	ROCE_IPV4_DF = 0x4000,
	/* Largest frame rocemu builds: Ethernet, 2 tags, IPv4 with options. */
	ROCE_FRAME_MAX = ROCE_ETH_HLEN + 2 * ROCE_VLAN_HLEN + 60 + 8 + 9216,
};

struct roce_frame {
	uint8_t link;			/* enum roce_link */
	uint8_t eth_dst[6], eth_src[6];
	uint8_t nvlan;
	uint16_t vlan_tpid[2], vlan_tci[2];
	uint8_t ip_ver;			/* 4 or 6 */
	/* Addresses as RoCEv2 GIDs: IPv4 is ::ffff:a.b.c.d (IPv4-mapped). */
	uint8_t src_gid[16], dst_gid[16];
	uint8_t tos;			/* IPv4 TOS or IPv6 traffic class */
	uint8_t ttl;			/* IPv4 TTL or IPv6 hop limit */
	uint16_t ip_id;
	uint16_t ip_frag;		/* IPv4 flags and fragment offset */
	uint32_t flow_label;
	uint16_t ip_csum;		/* as read; the builder computes it */
	uint8_t ip_optlen;
	const uint8_t *ip_opts;
	uint16_t sport, dport;
	uint16_t udp_len;
	/* As read. The builder writes 0 when this is 0, as rxe does, and the
	 * real checksum otherwise. */
	uint16_t udp_csum;
	struct roce_ib ib;
	/* Set by parse. */
	const uint8_t *ip_hdr;		/* the IP header as received */
	uint32_t wire_len;
	bool truncated;			/* caplen < wire length */
	uint32_t icrc_calc;		/* valid when !truncated */
};

/*
 * Parses a captured frame of caplen bytes (wire_len on the wire). Returns
 * 0 for a RoCEv2 packet; -ENOMSG for a frame that is not UDP to port 4791
 * (*why says why); -EBADMSG with *why for a RoCEv2 packet that breaks a
 * rule. When the capture cut the frame short, f->truncated is set, what is
 * present is decoded and the ICRC is not checked. Pointers in f point into
 * buf.
 */
int roce_frame_parse(unsigned link, const uint8_t *buf, size_t caplen,
		     size_t wire_len, struct roce_frame *f, const char **why);

/*
 * Where an Ethernet frame is going, read from its IP header alone (no
 * other check), as a switch would route it: an IPv4 destination when the
 * version nibble says 4, else the IPv6 one. 0, or -EBADMSG when len is
 * too short for that header.
 */
int roce_frame_dst_gid(const uint8_t *frame, size_t len, uint8_t gid[16]);

/* True when a parsed, untruncated frame's ICRC is the computed one. */
static inline bool roce_frame_icrc_ok(const struct roce_frame *f)
{
	return !f->truncated && f->ib.icrc == f->icrc_calc;
}

/*
 * Clears f and sets what rxe puts in every frame: Ethernet link, the given
 * IP version, DF, TTL/hop limit 64, destination UDP port 4791, UDP checksum
 * 0, P_Key 0xffff. Addresses, ports, opcode and the rest are the caller's.
 */
void roce_frame_init(struct roce_frame *f, unsigned ip_ver);

/*
 * Builds f as an Ethernet (link ROCE_LINK_ETH) or raw IP frame: lengths,
 * IPv4 header checksum, UDP checksum (see udp_csum) and ICRC are computed.
 * Returns the frame length; -EINVAL for a link type it cannot write, a
 * bad IP version or an invalid transport packet; -ENOSPC if cap is short.
 */
int roce_frame_build(const struct roce_frame *f, uint8_t *buf, size_t cap);

/*
 * The ICRC of a frame roce_frame_build wrote (len bytes, which end in
 * it); 0 when len is shorter than an ICRC. frame is unchanged.
 */
uint32_t roce_frame_built_icrc(const uint8_t *frame, size_t len);

/* Fills a GID from an IPv4 address in network byte order (4 bytes). */
void roce_gid_from_ipv4(uint8_t gid[16], const uint8_t ip4[4]);

/* True for an IPv4-mapped GID ::ffff:a.b.c.d. */
bool roce_gid_is_ipv4(const uint8_t gid[16]);

/*
 * Parses an address literal into a GID: IPv4 dotted quad "a.b.c.d" becomes
 * the IPv4-mapped GID ::ffff:a.b.c.d, IPv6 text is the GID itself. No host
 * names, no scope ("%eth0"), no brackets, no spaces. Returns 0, or -EINVAL
 * for NULL or any other text; gid is left unchanged on failure.
 */
int roce_gid_parse(const char *text, uint8_t gid[16]);

/*
 * Fills ss with the socket address of gid and port (host byte order):
 * sockaddr_in for an IPv4-mapped GID, sockaddr_in6 (scope 0) for any
 * other; the rest of ss is zeroed. Returns the length of the address
 * written. Cannot fail.
 */
socklen_t roce_gid_to_sockaddr(const uint8_t gid[16], uint16_t port,
			       struct sockaddr_storage *ss);

/*
 * Fills gid from an AF_INET (as ::ffff:a.b.c.d) or AF_INET6 socket
 * address. Returns its port in host byte order (0..65535), or
 * -EAFNOSUPPORT for another family; gid is left unchanged on failure.
 */
int roce_gid_from_sockaddr(const struct sockaddr_storage *ss, uint8_t gid[16]);

/* Fills gid with the IPv6 link-local address the kernel makes from a MAC
 * (fe80::/64 and the modified EUI-64 interface ID, RFC 4291 appendix A):
 * the GID at index 0 of a RoCE port. */
void roce_gid_link_local(uint8_t gid[16], const uint8_t mac[6]);

/* True when gid is the link-local address of a MAC 02:00:a.b.c.d, the
 * MAC rocemu gives a device at IPv4 address a.b.c.d; ip4 then holds that
 * address (network byte order). False, ip4 untouched, for any other GID. */
bool roce_gid_link_local_ipv4(const uint8_t gid[16], uint8_t ip4[4]);

/* UDP checksum of the datagram at udp (len bytes) inside the IPv4 or IPv6
 * packet at ip, pseudo-header included; 0 is sent as 0xffff. */
uint16_t roce_udp_csum(const uint8_t *ip, const uint8_t *udp, size_t len);

/* Internet checksum (RFC 1071) of a buffer, folded and complemented. */
uint16_t roce_inet_csum(const uint8_t *p, size_t len, uint32_t sum);

#endif
