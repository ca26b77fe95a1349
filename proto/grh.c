/* SPDX-License-Identifier: MIT */
/* The routing header's wire fields, as Linux and rxe compute them. */
#include <string.h>

#include "rocemu/grh.h"

enum {
	ROCE_SPORT_BASE = 0xc000,	/* RoCEv2 source ports: 0xC000.. */
	SPORT_MASK = 0x3fff,
	GOLDEN_RATIO_32 = 0x61c88647,	/* Linux's hash_32 multiplier */
};

uint32_t roce_ipv6_vtcfl(uint8_t tclass, uint32_t flow_label)
{
	return 6u << 28 | (uint32_t)tclass << 20 |
	       (flow_label & ROCE_FLOW_LABEL_MASK);
}

void roce_ipv6_vtcfl_split(uint32_t w, uint8_t *tclass, uint32_t *flow_label)
{
	*tclass = (uint8_t)(w >> 20);
	*flow_label = w & ROCE_FLOW_LABEL_MASK;
}

uint32_t roce_flow_label_of_qpns(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;

	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)v & ROCE_FLOW_LABEL_MASK;
}

uint16_t roce_udp_sport_of_flow_label(uint32_t fl)
{
	uint32_t fl_low = fl & SPORT_MASK, fl_high = fl & 0xfc000;

	return (uint16_t)((fl_low ^ (fl_high >> 14)) | ROCE_SPORT_BASE);
}

uint16_t roce_udp_sport_of_qpn(uint32_t qpn)
{
	/* hash_32(qpn, 14): the top 14 bits of the 32-bit product */
	uint32_t h = (uint32_t)(qpn * (uint32_t)GOLDEN_RATIO_32) >> 18;

	return (uint16_t)(ROCE_SPORT_BASE + (h & SPORT_MASK));
}

void roce_frame_address(struct roce_frame *f, const uint8_t dgid[16],
			uint8_t tclass)
{
	f->ip_ver = roce_gid_is_ipv4(dgid) ? 4 : 6;
	f->ip_frag = f->ip_ver == 4 ? ROCE_IPV4_DF : 0;
	memmove(f->dst_gid, dgid, 16);	/* dgid may be f->dst_gid */
	f->tos = tclass;
}
