/* SPDX-License-Identifier: MIT */
/* The RDMA IP CM service (IBTA Annex A11): the private-data header and service IDs. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "rocemu/cm.h"
#include "byteorder.h"

/* Annex A11's header, as Linux's struct cma_hdr lays it out. */
struct ip_hdr_wire {
	uint8_t version, ip_version, /* IP version:4 | rsvd:4 */
		src_port[2], src[16], dst[16];
};
_Static_assert(sizeof(struct ip_hdr_wire) == ROCE_CM_IP_HDR_LEN, "A11 hdr");

#define AT(p, f) ((p) + offsetof(struct ip_hdr_wire, f))

/* An IPv4 address is the last 4 bytes of its 16-byte field. */
enum { V4_AT = 12 };

int roce_cm_ip_hdr_parse(const uint8_t *priv, size_t len,
			 struct roce_cm_ip_hdr *out)
{
	struct roce_cm_ip_hdr h;

	if (len < ROCE_CM_IP_HDR_LEN)
		return -EMSGSIZE;
	memset(&h, 0, sizeof(h));
	h.version = *AT(priv, version);
	h.ip_version = *AT(priv, ip_version) >> 4;
	if (h.version != ROCE_CM_IP_HDR_VERSION ||
	    (h.ip_version != 4 && h.ip_version != 6))
		return -EPROTO;
	h.src_port = get_be16(AT(priv, src_port));
	if (h.ip_version == 4) {
		memcpy(h.src.v4, AT(priv, src) + V4_AT, 4);
		memcpy(h.dst.v4, AT(priv, dst) + V4_AT, 4);
	} else {
		memcpy(h.src.v6, AT(priv, src), 16);
		memcpy(h.dst.v6, AT(priv, dst), 16);
	}
	*out = h;
	return 0;
}

int roce_cm_ip_hdr_build(const struct roce_cm_ip_hdr *h, uint8_t *priv,
			 size_t cap)
{
	if (h->ip_version != 4 && h->ip_version != 6)
		return -EINVAL;
	if (cap < ROCE_CM_IP_HDR_LEN)
		return -EMSGSIZE;
	/* zero padding in front of an IPv4 address, not ::ffff (R7) */
	memset(priv, 0, ROCE_CM_IP_HDR_LEN);
	*AT(priv, version) = h->version;
	*AT(priv, ip_version) = (uint8_t)(h->ip_version << 4);
	put_be16(AT(priv, src_port), h->src_port);
	if (h->ip_version == 4) {
		memcpy(AT(priv, src) + V4_AT, h->src.v4, 4);
		memcpy(AT(priv, dst) + V4_AT, h->dst.v4, 4);
	} else {
		memcpy(AT(priv, src), h->src.v6, 16);
		memcpy(AT(priv, dst), h->dst.v6, 16);
	}
	return ROCE_CM_IP_HDR_LEN;
}

uint64_t roce_cm_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}

int roce_cm_service_id_split(uint64_t sid, uint16_t *ps, uint16_t *port)
{
	if ((sid & ROCE_CM_IP_SID_MASK) != ROCE_CM_IP_SID_PREFIX)
		return -EINVAL;
	*ps = (uint16_t)(sid >> 16);
	*port = (uint16_t)sid;
	return 0;
}
