/* SPDX-License-Identifier: MIT */
/* The JSON rendering: one object per packet, every decoded field. */
#include <errno.h>

#include "rocemu/aeth.h"
#include "dissect_local.h"

/* Every key but the first of an object follows a comma. */
static void key(struct roce_sb *sb, const char *k)
{
	if (sb->len && sb->buf[sb->len - 1] != '{')
		sb_putc(sb, ',');
	sb_putc(sb, '"');
	sb_puts(sb, k);
	sb_puts(sb, "\":");
}

static void num(struct roce_sb *sb, const char *k, uint64_t v)
{
	key(sb, k);
	sb_u64(sb, v);
}

static void boolean(struct roce_sb *sb, const char *k, bool v)
{
	key(sb, k);
	sb_puts(sb, v ? "true" : "false");
}

/* 64-bit values as "0x..." strings: JSON readers that use doubles would
 * round them. */
static void hexstr(struct roce_sb *sb, const char *k, uint64_t v,
		   unsigned digits)
{
	key(sb, k);
	sb_putc(sb, '"');
	sb_hex(sb, v, digits);
	sb_putc(sb, '"');
}

/* Reasons are fixed strings from the parser, free of quotes and escapes. */
static void str(struct roce_sb *sb, const char *k, const char *v)
{
	key(sb, k);
	sb_putc(sb, '"');
	sb_puts(sb, v);
	sb_putc(sb, '"');
}

static void gidstr(struct roce_sb *sb, const char *k, const uint8_t *gid)
{
	key(sb, k);
	sb_putc(sb, '"');
	roce_fmt_gid(sb, gid);
	sb_putc(sb, '"');
}

static void json_link(struct roce_sb *sb, const struct roce_frame *f)
{
	if (f->link != ROCE_LINK_ETH)
		return;
	key(sb, "eth_src");
	sb_putc(sb, '"');
	roce_fmt_mac(sb, f->eth_src);
	sb_putc(sb, '"');
	key(sb, "eth_dst");
	sb_putc(sb, '"');
	roce_fmt_mac(sb, f->eth_dst);
	sb_putc(sb, '"');
	key(sb, "vlan");
	sb_putc(sb, '[');
	for (unsigned i = 0; i < f->nvlan; i++) {
		sb_puts(sb, i ? ",{\"tpid\":" : "{\"tpid\":");
		sb_u64(sb, f->vlan_tpid[i]);
		sb_puts(sb, ",\"tci\":");
		sb_u64(sb, f->vlan_tci[i]);
		sb_putc(sb, '}');
	}
	sb_putc(sb, ']');
}

static void json_ip_udp(struct roce_sb *sb, const struct roce_frame *f)
{
	num(sb, "ip_version", f->ip_ver);
	gidstr(sb, "src", f->src_gid);
	gidstr(sb, "dst", f->dst_gid);
	num(sb, "tos", f->tos);
	num(sb, "ttl", f->ttl);
	if (f->ip_ver == 4) {
		num(sb, "ip_id", f->ip_id);
		num(sb, "ip_flags_frag", f->ip_frag);
		num(sb, "ip_csum", f->ip_csum);
	} else {
		num(sb, "flow_label", f->flow_label);
	}
	num(sb, "sport", f->sport);
	num(sb, "dport", f->dport);
	num(sb, "udp_len", f->udp_len);
	num(sb, "udp_csum", f->udp_csum);
}

static void json_bth(struct roce_sb *sb, const struct roce_bth *b)
{
	const struct roce_opcode_info *op = roce_opcode(b->opcode);

	num(sb, "opcode", b->opcode);
	key(sb, "opcode_name");
	sb_putc(sb, '"');
	roce_fmt_opname(sb, b->opcode);
	sb_putc(sb, '"');
	str(sb, "transport", op ? roce_transport_name(op->transport) : "?");
	boolean(sb, "se", b->se);
	boolean(sb, "migreq", b->migreq);
	num(sb, "pad", b->pad);
	num(sb, "tver", b->tver);
	num(sb, "pkey", b->pkey);
	boolean(sb, "fecn", b->fecn);
	boolean(sb, "becn", b->becn);
	num(sb, "resv6", b->resv6);
	num(sb, "dqpn", b->dqpn);
	boolean(sb, "ackreq", b->ackreq);
	num(sb, "resv7", b->resv7);
	num(sb, "psn", b->psn);
}

static void json_exts(struct roce_sb *sb, const struct roce_ib *ib)
{
	const struct ext_desc *d;

	for (unsigned pos = 0; (d = roce_ext_next(ib, &pos));) {
		key(sb, d->key);
		sb_putc(sb, '{');
		for (unsigned j = 0; j < d->nfields; j++) {
			const struct ext_field *fl = &d->fields[j];
			uint64_t v = roce_ext_field_value(ib, fl);
			if (fl->hex == 16)
				hexstr(sb, fl->key, v, 16);
			else
				num(sb, fl->key, v);
		}
		if (d->ext == ROCE_EXT_AETH) {
			uint8_t s = ib->aeth.syndrome;
			str(sb, "type", roce_aeth_type_name(roce_aeth_type(s)));
			num(sb, "value", roce_aeth_value(s));
		}
		sb_putc(sb, '}');
	}
}

static const char *status_name(const struct roce_dissect_in *in,
			       const struct roce_frame *f)
{
	if (in->status == -EBADMSG)
		return "malformed";
	if (f->truncated)
		return "truncated";
	return roce_frame_icrc_ok(f) ? "ok" : "bad_icrc";
}

void roce_fmt_json(struct roce_sb *sb, const struct roce_dissect_in *in,
		   const struct roce_frame *f)
{
	const struct roce_ib *ib = &f->ib;

	sb_kv_u64(sb, "{\"frame\":", in->frame_no);
	key(sb, "time");
	roce_fmt_time(sb, in->rel_ns);
	num(sb, "len", f->wire_len);
	num(sb, "caplen", in->caplen);
	str(sb, "status", status_name(in, f));
	if (in->status)
		str(sb, "error", in->why);
	json_link(sb, f);
	json_ip_udp(sb, f);
	if (ib->has_bth)
		json_bth(sb, &ib->bth);
	if (in->status == 0) {
		json_exts(sb, ib);
		num(sb, "payload_len", ib->payload_len);
	}
	if (in->status == 0 && !f->truncated) {
		hexstr(sb, "icrc", ib->icrc, 8);
		hexstr(sb, "icrc_calc", f->icrc_calc, 8);
		boolean(sb, "icrc_ok", roce_frame_icrc_ok(f));
	}
	sb_puts(sb, "}\n");
}
