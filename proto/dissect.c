/* SPDX-License-Identifier: MIT */
/* Shared dissection pieces and the one-line rendering. */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>

#include "rocemu/aeth.h"
#include "dissect_local.h"

void roce_fmt_aeth(struct roce_sb *sb, uint8_t syn)
{
	unsigned type = roce_aeth_type(syn), val = roce_aeth_value(syn);

	sb_puts(sb, roce_aeth_type_name(type));
	if (type == ROCE_AETH_NAK) {
		sb_putc(sb, ' ');
		sb_puts(sb, roce_nak_code_name(val));
	} else if (type == ROCE_AETH_RNR_NAK) {
		sb_putc(sb, ' ');
		sb_u64(sb, roce_rnr_timer_usec(val));
		sb_puts(sb, "us");
	}
}

void roce_fmt_time(struct roce_sb *sb, int64_t ns)
{
	/* A capture whose clock stepped back has frames stamped before the
	 * first: -0.100000, as tshark shows them. The magnitude is taken in
	 * unsigned arithmetic, where INT64_MIN has one too. */
	uint64_t mag = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;

	if (ns < 0)
		sb_putc(sb, '-');
	sb_u64(sb, mag / 1000000000u);
	sb_putc(sb, '.');
	uint64_t us = mag % 1000000000u / 1000u;
	char t[6];
	for (int i = 5; i >= 0; i--, us /= 10)
		t[i] = (char)('0' + us % 10);
	sb_putn(sb, t, 6);
}

void roce_fmt_mac(struct roce_sb *sb, const uint8_t mac[6])
{
	for (int i = 0; i < 6; i++) {
		if (i)
			sb_putc(sb, ':');
		sb_hexn(sb, mac[i], 2);
	}
}

void roce_fmt_gid(struct roce_sb *sb, const uint8_t gid[16])
{
	if (roce_gid_is_ipv4(gid)) {
		for (int i = 12; i < 16; i++) {
			if (i > 12)
				sb_putc(sb, '.');
			sb_u64(sb, gid[i]);
		}
		return;
	}
	char t[INET6_ADDRSTRLEN];
	sb_puts(sb, inet_ntop(AF_INET6, gid, t, sizeof(t)) ? t : "?");
}

void roce_fmt_opname(struct roce_sb *sb, uint8_t opcode)
{
	const struct roce_opcode_info *op = roce_opcode(opcode);

	if (op) {
		sb_puts(sb, op->name);
		return;
	}
	sb_kv_hex(sb, "OPCODE_", opcode, 2);
}

static void line_addr(struct roce_sb *sb, const struct roce_frame *f,
		      const uint8_t *gid, uint16_t port)
{
	if (f->ip_ver == 6)
		sb_putc(sb, '[');
	roce_fmt_gid(sb, gid);
	sb_puts(sb, f->ip_ver == 6 ? "]:" : ":");
	sb_u64(sb, port);
}

static void line_exts(struct roce_sb *sb, const struct roce_frame *f)
{
	const struct hdr_desc *d;

	for (unsigned pos = 0; (d = roce_ext_next(&f->ib, &pos));) {
		sb_putc(sb, ' ');
		sb_puts(sb, d->key);
		if (d->ext == ROCE_EXT_AETH) {
			sb_putc(sb, ' ');
			roce_fmt_aeth(sb, f->ib.aeth.syndrome);
		}
		for (unsigned j = 0; j < d->nfields; j++) {
			const struct hdr_field *fl = &d->fields[j];
			uint64_t v = roce_field_value(f, fl);
			sb_putc(sb, ' ');
			sb_puts(sb, fl->key);
			sb_putc(sb, ' ');
			if (fl->hex)
				sb_hex(sb, v, fl->hex);
			else
				sb_u64(sb, v);
		}
	}
}

static void line_icrc(struct roce_sb *sb, const struct roce_frame *f)
{
	if (f->truncated) {
		sb_puts(sb, " icrc unchecked (truncated)");
	} else if (roce_frame_icrc_ok(f)) {
		sb_puts(sb, " icrc ok");
	} else {
		sb_kv_hex(sb, " icrc BAD wire ", f->ib.icrc, 8);
		sb_kv_hex(sb, " computed ", f->icrc_calc, 8);
	}
}

void roce_fmt_line(struct roce_sb *sb, const struct roce_dissect_in *in,
		   const struct roce_frame *f)
{
	const struct roce_ib *ib = &f->ib;

	sb_u64(sb, in->frame_no);
	sb_putc(sb, ' ');
	roce_fmt_time(sb, in->rel_ns);
	sb_putc(sb, ' ');
	line_addr(sb, f, f->src_gid, f->sport);
	sb_puts(sb, " > ");
	line_addr(sb, f, f->dst_gid, f->dport);
	if (ib->has_bth) {
		sb_putc(sb, ' ');
		roce_fmt_opname(sb, ib->bth.opcode);
		sb_kv_hex(sb, " dqpn ", ib->bth.dqpn, 6);
		sb_kv_hex(sb, " psn ", ib->bth.psn, 6);
		if (ib->bth.ackreq)
			sb_puts(sb, " A");
		if (ib->bth.se)
			sb_puts(sb, " SE");
		if (ib->bth.fecn)
			sb_puts(sb, " FECN");
		if (ib->bth.becn)
			sb_puts(sb, " BECN");
		if (ib->bth.pkey != 0xffff)
			sb_kv_hex(sb, " pkey ", ib->bth.pkey, 4);
	}
	if (in->status == -EBADMSG) {
		sb_puts(sb, " MALFORMED: ");
		sb_puts(sb, in->why);
		sb_putc(sb, '\n');
		return;
	}
	line_exts(sb, f);
	struct roce_mad_view mv;
	if (roce_frame_mad(f, &mv) == 0) {
		sb_putc(sb, ' ');
		roce_fmt_mad_summary(sb, &mv, false);
	} else {
		sb_kv_u64(sb, " payload ", ib->payload_len);
	}
	line_icrc(sb, f);
	sb_putc(sb, '\n');
}
