/* SPDX-License-Identifier: MIT */
/* The verbose rendering: one header per line, each field named. */
#include <errno.h>

#include "dissect_local.h"

static void kv(struct roce_sb *sb, const char *k, uint64_t v, unsigned hex)
{
	sb_puts(sb, "  ");
	sb_puts(sb, k);
	sb_putc(sb, ' ');
	if (hex)
		sb_hex(sb, v, hex);
	else
		sb_u64(sb, v);
}

static void tree_link(struct roce_sb *sb, const struct roce_frame *f)
{
	if (f->link != ROCE_LINK_ETH)
		return;
	sb_puts(sb, "  Ethernet: ");
	roce_fmt_mac(sb, f->eth_src);
	sb_puts(sb, " > ");
	roce_fmt_mac(sb, f->eth_dst);
	for (unsigned i = 0; i < f->nvlan; i++) {
		kv(sb, " vlan tpid", f->vlan_tpid[i], 4);
		kv(sb, "tci", f->vlan_tci[i], 4);
	}
	sb_putc(sb, '\n');
}

static void tree_ip_udp(struct roce_sb *sb, const struct roce_frame *f)
{
	sb_puts(sb, f->ip_ver == 4 ? "  IPv4: " : "  IPv6: ");
	roce_fmt_gid(sb, f->src_gid);
	sb_puts(sb, " > ");
	roce_fmt_gid(sb, f->dst_gid);
	sb_putc(sb, '\n');
	sb_puts(sb, "   ");
	kv(sb, f->ip_ver == 4 ? "tos" : "tclass", f->tos, 2);
	kv(sb, f->ip_ver == 4 ? "ttl" : "hop_limit", f->ttl, 0);
	if (f->ip_ver == 4) {
		kv(sb, "id", f->ip_id, 4);
		kv(sb, "flags_frag", f->ip_frag, 4);
		kv(sb, "checksum", f->ip_csum, 4);
	} else {
		kv(sb, "flow_label", f->flow_label, 5);
	}
	sb_puts(sb, "\n  UDP:");
	kv(sb, "sport", f->sport, 0);
	kv(sb, "dport", f->dport, 0);
	kv(sb, "length", f->udp_len, 0);
	kv(sb, "checksum", f->udp_csum, 4);
	sb_putc(sb, '\n');
}

static void tree_bth(struct roce_sb *sb, const struct roce_bth *b)
{
	sb_kv_hex(sb, "  BTH: opcode ", b->opcode, 2);
	sb_puts(sb, " (");
	roce_fmt_opname(sb, b->opcode);
	sb_puts(sb, ")\n   ");
	kv(sb, "se", b->se, 0);
	kv(sb, "migreq", b->migreq, 0);
	kv(sb, "pad", b->pad, 0);
	kv(sb, "tver", b->tver, 0);
	kv(sb, "pkey", b->pkey, 4);
	sb_puts(sb, "\n   ");
	kv(sb, "fecn", b->fecn, 0);
	kv(sb, "becn", b->becn, 0);
	kv(sb, "resv6", b->resv6, 2);
	kv(sb, "dqpn", b->dqpn, 6);
	sb_puts(sb, "\n   ");
	kv(sb, "ackreq", b->ackreq, 0);
	kv(sb, "resv7", b->resv7, 2);
	kv(sb, "psn", b->psn, 6);
	sb_kv_u64(sb, " (", b->psn);
	sb_puts(sb, ")\n");
}

static void tree_exts(struct roce_sb *sb, const struct roce_ib *ib)
{
	const struct ext_desc *d;

	for (unsigned pos = 0; (d = roce_ext_next(ib, &pos));) {
		sb_puts(sb, "  ");
		sb_puts(sb, roce_ext_name(d->ext));
		sb_puts(sb, ":");
		if (d->ext == ROCE_EXT_AETH) {
			sb_putc(sb, ' ');
			roce_fmt_aeth(sb, ib->aeth.syndrome);
		}
		sb_puts(sb, "\n   ");
		for (unsigned j = 0; j < d->nfields; j++) {
			const struct ext_field *fl = &d->fields[j];
			kv(sb, fl->key, roce_ext_field_value(ib, fl), fl->hex);
		}
		sb_putc(sb, '\n');
	}
}

void roce_fmt_tree(struct roce_sb *sb, const struct roce_dissect_in *in,
		   const struct roce_frame *f)
{
	const struct roce_ib *ib = &f->ib;

	sb_kv_u64(sb, "frame ", in->frame_no);
	sb_kv_u64(sb, ": ", f->wire_len);
	sb_kv_u64(sb, " bytes on the wire, ", in->caplen);
	sb_puts(sb, " captured, time ");
	roce_fmt_time(sb, in->rel_ns);
	sb_putc(sb, '\n');
	tree_link(sb, f);
	tree_ip_udp(sb, f);
	if (ib->has_bth)
		tree_bth(sb, &ib->bth);
	if (in->status == -EBADMSG) {
		sb_puts(sb, "  MALFORMED: ");
		sb_puts(sb, in->why);
		sb_puts(sb, "\n\n");
		return;
	}
	tree_exts(sb, ib);
	sb_kv_u64(sb, "  payload: ", ib->payload_len);
	sb_puts(sb, " bytes\n  ICRC: ");
	if (f->truncated) {
		sb_puts(sb, "not checked, frame truncated by the capture\n\n");
		return;
	}
	sb_hex(sb, ib->icrc, 8);
	if (!roce_frame_icrc_ok(f))
		sb_kv_hex(sb, " BAD, computed ", f->icrc_calc, 8);
	sb_puts(sb, roce_frame_icrc_ok(f) ? " ok\n\n" : "\n\n");
}
