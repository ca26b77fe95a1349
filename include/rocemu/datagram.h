/* SPDX-License-Identifier: MIT */
/* RoCEv2 through a UDP socket: parse a received datagram once, wrap it for a capture, find and re-port a frame to send. */
#ifndef ROCEMU_DATAGRAM_H
#define ROCEMU_DATAGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "rocemu/frame.h"
#include "rocemu/ipid.h"

/* What a UDP socket tells of a datagram it received, and the receiver's
 * MAC (a socket shows no Ethernet header: f->eth_dst is set to it). */
struct roce_datagram_addr {
	uint8_t src_gid[16];	/* the sender's address as a GID */
	uint8_t dst_gid[16];	/* the receiving socket's own address */
	uint8_t dst_mac[6];	/* the receiving device's MAC */
	uint16_t sport;		/* the sender's UDP port */
	/* When it arrived (ns, the clock of the roce_ipid_table it is
	 * judged by): how far the sender's IPv4 ID may have moved */
	uint64_t when_ns;
	/* The receiving socket's count of datagrams it dropped for want of
	 * room, as of this one (SO_RXQ_OVFL; 0 where unknown): each may
	 * have carried one of the sender's IPv4 IDs */
	uint32_t drops;
	/* The IPv4 TOS or IPv6 traffic class the socket reported with it
	 * (IP_RECVTOS, IPV6_RECVTCLASS; 0 where unknown) */
	uint8_t tos;
	/* The IPv6 flow label it reported (IPV6_FLOWINFO; 0 where unknown
	 * and for IPv4) */
	uint32_t flow_label;
};

enum {
	/* Room for the IP and UDP headers a datagram parse writes. */
	ROCE_DATAGRAM_HDR_MAX = ROCE_IPV6_HLEN + ROCE_UDP_HLEN,
	/* Longest UDP payload each IP version's length fields can hold. */
	ROCE_DATAGRAM_MAX_IPV4 = 0xffff - ROCE_IPV4_HLEN - ROCE_UDP_HLEN,
	ROCE_DATAGRAM_MAX_IPV6 = 0xffff - ROCE_UDP_HLEN,
};

/*
 * Parses the UDP payload of a datagram received on port 4791 as the frame
 * it travelled in, as far as a socket shows it: Ethernet to a->dst_mac
 * from a zero MAC, IPv4 or IPv6 by the version of a->dst_gid, TOS or
 * traffic class a->tos, flow label 0, TTL or hop limit 64, UDP checksum
 * 0. The socket hides the IPv4 ID and DF bit, which the ICRC covers: ID 0 with DF is tried first (what
 * a kernel socket with DF sends), then they are solved for and judged by
 * ids, the receiver's table of flows (rocemu/ipid.h, docs/icrc.md), which
 * learns from them; with ids NULL only ID 0, with DF or without, is
 * taken (the strict mode: no state, a full 32-bit check). When found and
 * taken they are set and the IPv4 header checksum computed, otherwise ID,
 * flags and header checksum stay 0 and the ICRC check fails. The IP and
 * UDP headers so made are written to hdr, where f->ip_hdr (and
 * f->ip_opts, empty) point: hdr must outlive their use. f->ib points into
 * payload. The ICRC is computed over hdr and then the payload in place:
 * only its BTH is copied.
 *
 * Returns what roce_frame_parse returns for that frame, with the same
 * reasons in *why: 0 for a RoCEv2 packet (then f->icrc_calc is set and
 * roce_frame_icrc_ok tells whether it verified); -EBADMSG for a payload
 * that breaks a rule, f filled as far as it was read. A payload longer
 * than ROCE_DATAGRAM_MAX_IPV4 or _IPV6 also gives -EBADMSG, with f's
 * lengths and f->ip_hdr left 0 and hdr and ids untouched; IPv6 datagrams
 * leave ids untouched too.
 */
int roce_datagram_parse(const struct roce_datagram_addr *a,
			struct roce_ipid_table *ids, const uint8_t *payload,
			size_t len,
			uint8_t hdr[ROCE_DATAGRAM_HDR_MAX],
			struct roce_frame *f, const char **why);

/*
 * Writes to out the Ethernet frame that f (from roce_datagram_parse of
 * these len payload bytes, whatever it returned) describes: f's Ethernet
 * addresses, its IP and UDP header fields as they are (a 0 IPv4 header
 * checksum stays 0), then the payload as received, ICRC included and not
 * recomputed. payload may lie inside out. Returns the frame length;
 * -EINVAL if f is not an IPv4 or IPv6 frame with no VLAN tag and no IPv4
 * options, or its UDP length is not len + 8; -ENOSPC if cap is short.
 * Nothing is written on failure.
 */
int roce_datagram_wrap(const struct roce_frame *f, const uint8_t *payload,
		       size_t len, uint8_t *out, size_t cap);

/* Where the UDP datagram of a frame lies, and what a socket needs of it. */
struct roce_frame_udp {
	uint8_t ip_ver;			/* 4 or 6 */
	uint8_t src_gid[16], dst_gid[16];
	uint16_t sport;
	uint8_t tos;			/* IPv4 TOS or IPv6 traffic class */
	uint32_t flow_label;		/* IPv6 only (20 bits); 0 for IPv4 */
	size_t ip_off;			/* offset of the IP header */
	size_t udp_off;			/* offset of the UDP header */
	size_t payload_len;		/* UDP payload: ICRC included */
};

/* Offset of the UDP payload of f's datagram. */
static inline size_t roce_frame_udp_payload_off(const struct roce_frame_udp *u)
{
	return u->udp_off + ROCE_UDP_HLEN;
}

/*
 * Reads an Ethernet frame's headers (up to two VLAN tags, IPv4 with any
 * options or IPv6) to find its UDP datagram, without parsing the
 * transport packet or checking the ICRC. Returns 0 and fills u; -ENOMSG
 * for a frame that is not unfragmented IPv4 or IPv6 carrying UDP to port
 * 4791; -EBADMSG when the IP and UDP lengths disagree with each other or
 * the frame, or the datagram cannot hold a BTH and an ICRC. u is not
 * touched on failure.
 */
int roce_frame_find_udp(const uint8_t *frame, size_t len,
			struct roce_frame_udp *u);

/*
 * Changes the UDP source port of an Ethernet frame to sport and updates
 * its ICRC by the change alone, so a right ICRC stays right and a wrong
 * one stays exactly as wrong; a UDP checksum that is not 0 is recomputed.
 * Returns 0; the errors of roce_frame_find_udp, the frame untouched.
 */
int roce_frame_set_sport(uint8_t *frame, size_t len, uint16_t sport);

#endif
