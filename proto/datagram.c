/* SPDX-License-Identifier: MIT */
/* A datagram from a UDP socket: its frame's fields and ICRC from the payload alone, and the frame for a capture. */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "rocemu/datagram.h"
#include "rocemu/grh.h"
#include "rocemu/icrc.h"
#include "rocemu/ipid.h"
#include "byteorder.h"
#include "icrc_memo.h"

enum {
	TTL = 64,		/* what a Linux socket sends with by default */
	/* IP and UDP headers, BTH, and room for the ICRC field. */
	BLOCK_MAX = ROCE_DATAGRAM_HDR_MAX + ROCE_BTH_LEN + ROCE_ICRC_LEN,
};

/* Writes the IP and UDP headers of f at b, fields as they are in f;
 * returns their length. */
static size_t put_headers(const struct roce_frame *f, uint8_t *b)
{
	size_t ihl = f->ip_ver == 4 ? ROCE_IPV4_HLEN : ROCE_IPV6_HLEN;
	uint8_t *udp = b + ihl;

	memset(b, 0, ihl);
	if (f->ip_ver == 4) {
		b[0] = 0x45;
		b[1] = f->tos;
		put_be16(b + 2, (uint16_t)(ROCE_IPV4_HLEN + f->udp_len));
		put_be16(b + 4, f->ip_id);
		put_be16(b + 6, f->ip_frag);
		b[8] = f->ttl;
		b[9] = 17;
		put_be16(b + 10, f->ip_csum);
		memcpy(b + 12, f->src_gid + 12, 4);
		memcpy(b + 16, f->dst_gid + 12, 4);
	} else {
		put_be32(b, roce_ipv6_vtcfl(f->tos, f->flow_label));
		put_be16(b + 4, f->udp_len);
		b[6] = 17;
		b[7] = f->ttl;
		memcpy(b + 8, f->src_gid, 16);
		memcpy(b + 24, f->dst_gid, 16);
	}
	put_be16(udp, f->sport);
	put_be16(udp + 2, f->dport);
	put_be16(udp + 4, f->udp_len);
	put_be16(udp + 6, f->udp_csum);
	return ihl + ROCE_UDP_HLEN;
}

/*
 * The CRC-32 of the ICRC's message up to the end of the BTH, for the
 * headers at hdr (hl bytes) and the BTH at the payload's start. The
 * masking is roce_icrc_calc's own: it is run over a datagram of headers
 * only, whose ICRC is this CRC byte-swapped (see icrc.h). len >= BTH+ICRC.
 */
static uint32_t crc_to_bth(const uint8_t *hdr, size_t hl,
			   const uint8_t *payload)
{
	uint8_t block[BLOCK_MAX] = { 0 };
	uint32_t icrc;

	memcpy(block, hdr, hl);
	memcpy(block + hl, payload, ROCE_BTH_LEN);
	roce_icrc_calc(block, hl + ROCE_BTH_LEN + ROCE_ICRC_LEN, &icrc);
	return __builtin_bswap32(icrc);
}

/* The ICRC, as roce_icrc_calc gives it, of headers hdr and payload. */
static uint32_t icrc_of(const uint8_t *hdr, size_t hl, const uint8_t *payload,
			size_t len)
{
	return __builtin_bswap32(
		icrc_crc_of_parts(hdr, hl, payload, len - ROCE_ICRC_LEN));
}

/*
 * Finds the IPv4 ID and DF the sender's ICRC covered (see
 * roce_icrc_solve_ipv4), among those ids accepts for the flow (rocemu/
 * ipid.h; ID 0 only when ids is NULL): ID 0 with DF costs one pass over
 * the payload; otherwise the CRC with neither follows from that one by
 * CRC-32's linearity, and the ID and DF are solved for, then judged. Sets
 * them in f and hdr and returns true; false with both 0 if none verify or
 * they are refused. *icrc is the ICRC that roce_icrc_calc gives for the
 * headers so left, so a refused datagram fails its ICRC check.
 */
static bool ipv4_id_found(const struct roce_datagram_addr *a,
			  struct roce_ipid_table *ids, struct roce_frame *f,
			  uint8_t *hdr, const uint8_t *payload, size_t len,
			  uint32_t *icrc)
{
	size_t hl = ROCE_IPV4_HLEN + ROCE_UDP_HLEN;
	uint32_t want = get_be32(payload + len - ROCE_ICRC_LEN);
	const uint8_t *src = f->src_gid + 12, *dst = f->dst_gid + 12;
	uint16_t id, frag;

	put_be16(hdr + 6, ROCE_IPV4_DF);
	uint32_t full_df = icrc_crc_of_parts(hdr, hl, payload,
					     len - ROCE_ICRC_LEN);
	*icrc = want;
	if (__builtin_bswap32(full_df) == want) {
		f->ip_frag = ROCE_IPV4_DF;
		if (ids) /* always taken: it anchors the flow */
			roce_ipid_accept(ids, src, dst, a->when_ns, a->drops, 0, true);
		return true;
	}
	uint32_t df = crc_to_bth(hdr, hl, payload);
	put_be16(hdr + 6, 0);
	uint32_t none = crc_to_bth(hdr, hl, payload);
	/* Two CRCs carried on through the same bytes differ by their
	 * difference carried on through zeros. */
	uLong op = crc32_combine_gen(
		(z_off_t)(len - ROCE_BTH_LEN - ROCE_ICRC_LEN));
	uint32_t have = __builtin_bswap32(
		(uint32_t)crc32_combine_op(none ^ df, full_df, op));
	*icrc = have;
	if (roce_icrc_solve_ipv4_fields(have, want, hl + len, &id, &frag)) {
		if (ids)
			roce_ipid_seen(ids, src, dst, a->when_ns);
		return false;
	}
	/* Some ID and DF explain a random ICRC 2^-15 of the time: taking
	 * only the few the flow predicts keeps the check near 32 bits. */
	if (ids ? !roce_ipid_accept(ids, src, dst, a->when_ns, a->drops, id,
				    frag == ROCE_IPV4_DF)
		: id != 0)
		return false;
	*icrc = want;
	f->ip_id = id;
	f->ip_frag = frag;
	put_be16(hdr + 4, id);
	put_be16(hdr + 6, frag);
	return true;
}

/* Sets f's link, addresses and the fields every such frame has. */
static void frame_of(const struct roce_datagram_addr *a, struct roce_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->link = ROCE_LINK_ETH;
	memcpy(f->eth_dst, a->dst_mac, 6);
	f->ip_ver = roce_gid_is_ipv4(a->dst_gid) ? 4 : 6;
	if (f->ip_ver == 4) {
		/* an IPv4 header holds the last four bytes of each GID */
		roce_gid_from_ipv4(f->src_gid, a->src_gid + 12);
		roce_gid_from_ipv4(f->dst_gid, a->dst_gid + 12);
	} else {
		memcpy(f->src_gid, a->src_gid, 16);
		memcpy(f->dst_gid, a->dst_gid, 16);
	}
	f->tos = a->tos;
	f->flow_label = f->ip_ver == 6 ? a->flow_label & ROCE_FLOW_LABEL_MASK : 0;
	f->ttl = TTL;
	f->sport = a->sport;
	f->dport = ROCE_UDP_PORT;
}

int roce_datagram_parse(const struct roce_datagram_addr *a,
			struct roce_ipid_table *ids, const uint8_t *payload,
			size_t len,
			uint8_t hdr[ROCE_DATAGRAM_HDR_MAX],
			struct roce_frame *f, const char **why)
{
	uint32_t icrc = 0;
	bool found = false;

	frame_of(a, f);
	if (len > (f->ip_ver == 4 ? ROCE_DATAGRAM_MAX_IPV4
				  : ROCE_DATAGRAM_MAX_IPV6)) {
		*why = "datagram longer than its IP and UDP lengths can say";
		return -EBADMSG;
	}
	size_t ihl = f->ip_ver == 4 ? ROCE_IPV4_HLEN : ROCE_IPV6_HLEN;
	size_t hl = ihl + ROCE_UDP_HLEN;
	f->udp_len = (uint16_t)(ROCE_UDP_HLEN + len);
	f->wire_len = (uint32_t)(ROCE_ETH_HLEN + hl + len);
	f->ip_hdr = hdr;
	if (f->ip_ver == 4)
		f->ip_opts = hdr + ROCE_IPV4_HLEN; /* none, as a parse says */
	put_headers(f, hdr);
	/* Solved for before the transport is read: the frame a capture
	 * shows carries them whatever the transport holds. */
	if (f->ip_ver == 4 && len >= ROCE_BTH_LEN + ROCE_ICRC_LEN)
		found = ipv4_id_found(a, ids, f, hdr, payload, len,
				      &icrc);
	if (found) {
		f->ip_csum = roce_inet_csum(hdr, ROCE_IPV4_HLEN, 0);
		put_be16(hdr + 10, f->ip_csum);
	}
	int rc = roce_ib_parse(payload, len, len, &f->ib, why);
	if (rc)
		return rc;
	f->icrc_calc = f->ip_ver == 4 ? icrc : icrc_of(hdr, hl, payload, len);
	return 0;
}

int roce_datagram_wrap(const struct roce_frame *f, const uint8_t *payload,
		       size_t len, uint8_t *out, size_t cap)
{
	if ((f->ip_ver != 4 && f->ip_ver != 6) || f->nvlan || f->ip_optlen ||
	    (size_t)f->udp_len != ROCE_UDP_HLEN + len)
		return -EINVAL;
	size_t hl = ROCE_ETH_HLEN + ROCE_UDP_HLEN +
		    (f->ip_ver == 4 ? ROCE_IPV4_HLEN : ROCE_IPV6_HLEN);
	if (cap < hl + len)
		return -ENOSPC;
	/* first, as the payload may lie where the headers go */
	if (len)
		memmove(out + hl, payload, len);
	memcpy(out, f->eth_dst, 6);
	memcpy(out + 6, f->eth_src, 6);
	put_be16(out + 12, f->ip_ver == 4 ? 0x0800 : 0x86dd);
	put_headers(f, out + ROCE_ETH_HLEN);
	return (int)(hl + len);
}
