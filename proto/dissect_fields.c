/* SPDX-License-Identifier: MIT */
/* The header field table: every field the renderings name, once. */
#include <stddef.h>
#include <string.h>

#include "rocemu/aeth.h"
#include "dissect_local.h"

#define SIZE(m) sizeof(((struct roce_frame *)0)->m)
/* A field: JSON kind, tree placement, text hex digits (0: decimal). */
#define F(k, m, h, j, t) \
	{ k, offsetof(struct roce_frame, m), SIZE(m), h, j, t, NULL, NULL }
#define NUM(k, m, h) F(k, m, h, FJ_NUM, FT_SP2)
#define BRK(k, m, h) F(k, m, h, FJ_NUM, FT_BRK)
#define BOOL(k, m, t) F(k, m, 0, FJ_BOOL, t)
#define N(f) (sizeof(f) / sizeof(f[0]))

static void text_addrs(struct roce_sb *sb, const void *base)
{
	const struct roce_frame *f = base;

	sb_putc(sb, ' ');
	roce_fmt_gid(sb, f->src_gid);
	sb_puts(sb, " > ");
	roce_fmt_gid(sb, f->dst_gid);
}

static void text_opname(struct roce_sb *sb, uint64_t v)
{
	sb_puts(sb, " (");
	roce_fmt_opname(sb, (uint8_t)v);
	sb_putc(sb, ')');
}

static void json_opname(struct roce_sb *sb, uint64_t v)
{
	const struct roce_opcode_info *op = roce_opcode((uint8_t)v);

	sb_puts(sb, ",\"opcode_name\":\"");
	roce_fmt_opname(sb, (uint8_t)v);
	sb_puts(sb, "\",\"transport\":\"");
	sb_puts(sb, op ? roce_transport_name(op->transport) : "?");
	sb_putc(sb, '"');
}

static void text_decimal(struct roce_sb *sb, uint64_t v)
{
	sb_kv_u64(sb, " (", v);
	sb_putc(sb, ')');
}

static void text_aeth(struct roce_sb *sb, const void *base)
{
	const struct roce_frame *f = base;

	sb_putc(sb, ' ');
	roce_fmt_aeth(sb, f->ib.aeth.syndrome);
}

static void json_aeth(struct roce_sb *sb, const void *base)
{
	const struct roce_frame *f = base;
	uint8_t s = f->ib.aeth.syndrome;

	sb_puts(sb, ",\"type\":\"");
	sb_puts(sb, roce_aeth_type_name(roce_aeth_type(s)));
	sb_kv_u64(sb, "\",\"value\":", roce_aeth_value(s));
}

static const struct hdr_field ipv4_f[] = {
	BRK("tos", tos, 2), NUM("ttl", ttl, 0), NUM("ip_id", ip_id, 4),
	NUM("ip_flags_frag", ip_frag, 4), NUM("ip_csum", ip_csum, 4),
};
/* The JSON names of IPv4 for the traffic class and the hop limit. */
static const struct hdr_field ipv6_f[] = {
	BRK("tos", tos, 2), NUM("ttl", ttl, 0),
	NUM("flow_label", flow_label, 5),
};
static const struct hdr_field udp_f[] = {
	NUM("sport", sport, 0), NUM("dport", dport, 0),
	NUM("udp_len", udp_len, 0), NUM("udp_csum", udp_csum, 4),
};
static const struct hdr_field bth_f[] = {
	{ "opcode", offsetof(struct roce_frame, ib.bth.opcode),
	  SIZE(ib.bth.opcode), 2, FJ_NUM, FT_SP1, text_opname, json_opname },
	BOOL("se", ib.bth.se, FT_BRK), BOOL("migreq", ib.bth.migreq, FT_SP2),
	NUM("pad", ib.bth.pad, 0), NUM("tver", ib.bth.tver, 0),
	NUM("pkey", ib.bth.pkey, 4),
	BOOL("fecn", ib.bth.fecn, FT_BRK), BOOL("becn", ib.bth.becn, FT_SP2),
	NUM("resv6", ib.bth.resv6, 2), NUM("dqpn", ib.bth.dqpn, 6),
	BOOL("ackreq", ib.bth.ackreq, FT_BRK), NUM("resv7", ib.bth.resv7, 2),
	{ "psn", offsetof(struct roce_frame, ib.bth.psn), SIZE(ib.bth.psn), 6,
	  FJ_NUM, FT_SP2, text_decimal, NULL },
};

/* IPv4 or IPv6, UDP, BTH: the members of the frame's own JSON object. */
static const struct hdr_desc base_hdrs[] = {
	{ 0, NULL, "IPv4", ipv4_f, N(ipv4_f), text_addrs, NULL },
	{ 0, NULL, "IPv6", ipv6_f, N(ipv6_f), text_addrs, NULL },
	{ 0, NULL, "UDP", udp_f, N(udp_f), NULL, NULL },
	{ 0, NULL, "BTH", bth_f, N(bth_f), NULL, NULL },
};

const struct hdr_desc *roce_hdr_next(const struct roce_frame *f,
				     unsigned *pos)
{
	unsigned i = *pos;

	if (i == 0) {			/* IPv4 or IPv6, then on to UDP */
		*pos = 2;
		return &base_hdrs[f->ip_ver == 4 ? 0 : 1];
	}
	if (i >= N(base_hdrs) || (i == 3 && !f->ib.has_bth))
		return NULL;
	*pos = i + 1;
	return &base_hdrs[i];
}

/* An extension header's fields: the first on a line of its own. */
#define XF(k, m, h) F(k, ib.m, h, (h) == 16 ? FJ_HEX : FJ_NUM, FT_SP2)
#define XF1(k, m, h) F(k, ib.m, h, (h) == 16 ? FJ_HEX : FJ_NUM, FT_BRK)

static const struct hdr_field rdeth_f[] = { XF1("een", rdeth.een, 6) };
static const struct hdr_field deth_f[] = { XF1("qkey", deth.qkey, 8),
					   XF("src_qp", deth.src_qp, 6) };
static const struct hdr_field feth_f[] = { XF1("feth", feth, 8) };
static const struct hdr_field reth_f[] = { XF1("va", reth.va, 16),
					   XF("rkey", reth.rkey, 8),
					   XF("len", reth.len, 0) };
static const struct hdr_field atmeth_f[] = {
	XF1("va", atmeth.va, 16), XF("rkey", atmeth.rkey, 8),
	XF("swap_add", atmeth.swap_add, 16),
	XF("compare", atmeth.compare, 16)
};
static const struct hdr_field aeth_f[] = { XF1("syndrome", aeth.syndrome, 2),
					   XF("msn", aeth.msn, 0) };
static const struct hdr_field atmack_f[] = { XF1("orig", atmack, 16) };
static const struct hdr_field imm_f[] = { XF1("imm", imm, 8) };
static const struct hdr_field ieth_f[] = { XF1("rkey", ieth, 8) };

/* The tree names them as roce_ext_name() does. */
#define EXT(e, k, f) { e, k, NULL, f, N(f), NULL, NULL }

static const struct hdr_desc exts[] = {
	EXT(ROCE_EXT_RDETH, "rdeth", rdeth_f),
	EXT(ROCE_EXT_DETH, "deth", deth_f),
	EXT(ROCE_EXT_FETH, "feth", feth_f),
	EXT(ROCE_EXT_RETH, "reth", reth_f),
	EXT(ROCE_EXT_ATMETH, "atomiceth", atmeth_f),
	{ ROCE_EXT_AETH, "aeth", NULL, aeth_f, N(aeth_f), text_aeth,
	  json_aeth },
	EXT(ROCE_EXT_ATMACK, "atomicacketh", atmack_f),
	EXT(ROCE_EXT_IMMDT, "immdt", imm_f),
	EXT(ROCE_EXT_IETH, "ieth", ieth_f),
};

const struct hdr_desc *roce_ext_next(const struct roce_ib *ib, unsigned *pos)
{
	while (*pos < N(exts)) {
		const struct hdr_desc *d = &exts[(*pos)++];
		if (ib->exts & d->ext)
			return d;
	}
	return NULL;
}

uint64_t roce_field_value(const void *obj, const struct hdr_field *fl)
{
	/* a member of a struct: off comes from offsetof, not from input */
	const uint8_t *p = (const uint8_t *)obj + fl->off;
	uint64_t v64;
	uint32_t v32;
	uint16_t v16;

	switch (fl->size) {
	case 1:
		return *p;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}
