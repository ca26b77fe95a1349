/* SPDX-License-Identifier: MIT */
/* Shared dissection pieces and the one-line rendering. */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>

#include "rocemu/aeth.h"
#include "dissect_local.h"

#define FLD(k, m, h) { k, offsetof(struct roce_ib, m), \
		       sizeof(((struct roce_ib *)0)->m), h }

static const struct ext_field rdeth_f[] = { FLD("een", rdeth.een, 6) };
static const struct ext_field deth_f[] = { FLD("qkey", deth.qkey, 8),
					   FLD("src_qp", deth.src_qp, 6) };
static const struct ext_field feth_f[] = { FLD("feth", feth, 8) };
static const struct ext_field reth_f[] = { FLD("va", reth.va, 16),
					   FLD("rkey", reth.rkey, 8),
					   FLD("len", reth.len, 0) };
static const struct ext_field atmeth_f[] = {
	FLD("va", atmeth.va, 16), FLD("rkey", atmeth.rkey, 8),
	FLD("swap_add", atmeth.swap_add, 16),
	FLD("compare", atmeth.compare, 16)
};
static const struct ext_field aeth_f[] = { FLD("syndrome", aeth.syndrome, 2),
					   FLD("msn", aeth.msn, 0) };
static const struct ext_field atmack_f[] = { FLD("orig", atmack, 16) };
static const struct ext_field imm_f[] = { FLD("imm", imm, 8) };
static const struct ext_field ieth_f[] = { FLD("rkey", ieth, 8) };

#define DESC(e, k, f) { e, k, f, sizeof(f) / sizeof(f[0]) }

static const struct ext_desc descs[] = {
	DESC(ROCE_EXT_RDETH, "rdeth", rdeth_f),
	DESC(ROCE_EXT_DETH, "deth", deth_f),
	DESC(ROCE_EXT_FETH, "feth", feth_f),
	DESC(ROCE_EXT_RETH, "reth", reth_f),
	DESC(ROCE_EXT_ATMETH, "atomiceth", atmeth_f),
	DESC(ROCE_EXT_AETH, "aeth", aeth_f),
	DESC(ROCE_EXT_ATMACK, "atomicacketh", atmack_f),
	DESC(ROCE_EXT_IMMDT, "immdt", imm_f),
	DESC(ROCE_EXT_IETH, "ieth", ieth_f),
};

const struct ext_desc *roce_ext_next(const struct roce_ib *ib, unsigned *pos)
{
	while (*pos < sizeof(descs) / sizeof(descs[0])) {
		const struct ext_desc *d = &descs[(*pos)++];
		if (ib->exts & d->ext)
			return d;
	}
	return NULL;
}

uint64_t roce_ext_field_value(const struct roce_ib *ib,
			      const struct ext_field *fl)
{
	const uint8_t *p = (const uint8_t *)ib + fl->off;
	uint64_t v64;
	uint32_t v32;

	switch (fl->size) {
	case 1:
		return *p;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

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

static void line_exts(struct roce_sb *sb, const struct roce_ib *ib)
{
	const struct ext_desc *d;

	for (unsigned pos = 0; (d = roce_ext_next(ib, &pos));) {
		sb_putc(sb, ' ');
		sb_puts(sb, d->key);
		if (d->ext == ROCE_EXT_AETH) {
			sb_putc(sb, ' ');
			roce_fmt_aeth(sb, ib->aeth.syndrome);
		}
		for (unsigned j = 0; j < d->nfields; j++) {
			const struct ext_field *fl = &d->fields[j];
			uint64_t v = roce_ext_field_value(ib, fl);
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
	line_exts(sb, ib);
	sb_kv_u64(sb, " payload ", ib->payload_len);
	line_icrc(sb, f);
	sb_putc(sb, '\n');
}
