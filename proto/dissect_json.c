/* SPDX-License-Identifier: MIT */
/* The JSON rendering: one object per packet, every decoded field. */
#include <errno.h>

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

/* One member per field, as the table says, then the header's own. */
static void json_fields(struct roce_sb *sb, const void *base,
			const struct hdr_desc *d)
{
	for (unsigned j = 0; j < d->nfields; j++) {
		const struct hdr_field *fl = &d->fields[j];
		uint64_t v = roce_field_value(base, fl);

		if (fl->json == FJ_HEX)
			hexstr(sb, fl->key, v, 16);
		else if (fl->json == FJ_BOOL)
			boolean(sb, fl->key, v);
		else
			num(sb, fl->key, v);
		if (fl->json_more)
			fl->json_more(sb, v);
	}
	if (d->json_tail)
		d->json_tail(sb, base);
}

/* IP, UDP and BTH fields are members of the frame's object; each
 * extension header is an object of its own. */
static void json_hdr(struct roce_sb *sb, const void *base,
		     const struct hdr_desc *d)
{
	if (!d->key) {
		json_fields(sb, base, d);
		return;
	}
	key(sb, d->key);
	sb_putc(sb, '{');
	json_fields(sb, base, d);
	sb_putc(sb, '}');
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
	const struct hdr_desc *d;

	sb_kv_u64(sb, "{\"frame\":", in->frame_no);
	key(sb, "time");
	roce_fmt_time(sb, in->rel_ns);
	num(sb, "len", f->wire_len);
	num(sb, "caplen", in->caplen);
	str(sb, "status", status_name(in, f));
	if (in->status)
		str(sb, "error", in->why);
	json_link(sb, f);
	num(sb, "ip_version", f->ip_ver);
	gidstr(sb, "src", f->src_gid);
	gidstr(sb, "dst", f->dst_gid);
	for (unsigned pos = 0; (d = roce_hdr_next(f, &pos));)
		json_hdr(sb, f, d);
	if (in->status == 0) {
		for (unsigned pos = 0; (d = roce_ext_next(ib, &pos));)
			json_hdr(sb, f, d);
		num(sb, "payload_len", ib->payload_len);
		struct roce_mad_view mv;
		if (roce_frame_mad(f, &mv) == 0)
			for (unsigned pos = 0; (d = roce_mad_next(&mv, &pos));)
				json_hdr(sb, &mv, d);
	}
	if (in->status == 0 && !f->truncated) {
		hexstr(sb, "icrc", ib->icrc, 8);
		hexstr(sb, "icrc_calc", f->icrc_calc, 8);
		boolean(sb, "icrc_ok", roce_frame_icrc_ok(f));
	}
	sb_puts(sb, "}\n");
}
