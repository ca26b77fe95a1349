/* SPDX-License-Identifier: MIT */
/* The RoCEv2 routing header's wire fields: IPv6 traffic class and flow label, IPv4 marks, UDP source port. */
#ifndef ROCEMU_GRH_H
#define ROCEMU_GRH_H

#include <stdint.h>

#include "rocemu/frame.h"

/* The bits of an IPv6 flow label. */
enum { ROCE_FLOW_LABEL_MASK = 0xfffff };

/* The first 32 bits of an IPv6 header in host order: version 6, the
 * traffic class, and the low 20 bits of flow_label (the rest are
 * dropped). */
uint32_t roce_ipv6_vtcfl(uint8_t tclass, uint32_t flow_label);

/* Splits the first 32 bits of an IPv6 header (host order) into its
 * traffic class and flow label; the version nibble is not looked at. */
void roce_ipv6_vtcfl_split(uint32_t w, uint8_t *tclass, uint32_t *flow_label);

/*
 * The 20-bit flow label Linux gives a connected QP's packets
 * (rdma_calc_flow_label): made from both QP numbers, so the two
 * directions of a connection share it.
 */
uint32_t roce_flow_label_of_qpns(uint32_t lqpn, uint32_t rqpn);

/* The UDP source port, 0xC000..0xFFFF, that Linux derives from a flow
 * label (rdma_flow_label_to_udp_sport). */
uint16_t roce_udp_sport_of_flow_label(uint32_t flow_label);

/* The UDP source port rxe gives a datagram (UD) QP when it is created:
 * 0xC000 plus a 14-bit hash of its QP number (hash_32). */
uint16_t roce_udp_sport_of_qpn(uint32_t qpn);

/*
 * Addresses a frame template to dgid with traffic class tclass: IPv4 (with
 * Don't Fragment, as Linux sends RoCE) for an IPv4-mapped GID, else IPv6;
 * sets ip_ver, ip_frag, dst_gid and tos, and leaves every other field,
 * the TTL included, as it was.
 */
void roce_frame_address(struct roce_frame *f, const uint8_t dgid[16],
			uint8_t tclass);

#endif
