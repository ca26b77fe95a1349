/* SPDX-License-Identifier: MIT */
/* libFuzzer target: any bytes as a CM MAD through decode, encode, decode; the A11 header too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/cm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * A header that parses rebuilds into bytes that parse to the same fields
 * (an IPv4 header's padding is not read, so the bytes may differ there).
 */
static void ip_hdr_round_trip(const uint8_t *priv, size_t len)
{
	struct roce_cm_ip_hdr h, g;
	uint8_t back[ROCE_CM_IP_HDR_LEN];

	if (roce_cm_ip_hdr_parse(priv, len, &h))
		return;
	if (roce_cm_ip_hdr_build(&h, back, sizeof(back)) != ROCE_CM_IP_HDR_LEN ||
	    roce_cm_ip_hdr_parse(back, sizeof(back), &g) ||
	    g.version != h.version || g.ip_version != h.ip_version ||
	    g.src_port != h.src_port ||
	    memcmp(&g.src, &h.src, h.ip_version == 4 ? 4 : 16) ||
	    memcmp(&g.dst, &h.dst, h.ip_version == 4 ? 4 : 16))
		abort();
}

/*
 * Input: the MAD, at any length (exactly 256 bytes can decode). Property
 * beyond not crashing: a MAD that decodes encodes into 256 bytes that
 * decode again and encode into the very same bytes (reserved bits are
 * dropped on the first encode, so the first image may differ from the
 * input), with the same attribute and private data.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct roce_cm_msg m, d;
	uint8_t a[ROCE_MAD_LEN], b[ROCE_MAD_LEN];
	uint8_t *mad = malloc(size ? size : 1); /* exact size for ASan */
	struct roce_mad_hdr h;

	memcpy(mad, data, size);
	if (roce_mad_hdr_parse(mad, size, &h) == 0)
		(void)roce_cm_attr_name(h.attr_id);
	if (roce_cm_decode(mad, size, &m) == 0) {
		(void)roce_cm_rej_reason_name(m.rej.reason);
		if (roce_cm_encode(&m, a) != ROCE_MAD_LEN ||
		    roce_cm_decode(a, sizeof(a), &d) ||
		    roce_cm_encode(&d, b) != ROCE_MAD_LEN ||
		    memcmp(a, b, sizeof(a)) || d.attr_id != m.attr_id ||
		    d.tid != m.tid || d.priv_len != m.priv_len ||
		    d.priv_len != roce_cm_priv_len(d.attr_id) ||
		    memcmp(d.priv, m.priv, d.priv_len))
			abort();
		ip_hdr_round_trip(m.priv, m.priv_len);
	}
	free(mad);
	return 0;
}
