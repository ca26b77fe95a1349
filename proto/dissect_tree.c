/* SPDX-License-Identifier: MIT */
/* The verbose rendering: one header per line, each field named. */
#include <errno.h>

#include "dissect_local.h"

/* sep, the name, a space and the value: in hex when hex gives digits. */
static void field(struct roce_sb *sb, const char *sep, const char *k,
		  uint64_t v, unsigned hex)
{
	sb_puts(sb, sep);
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
		field(sb, "   ", "vlan tpid", f->vlan_tpid[i], 4);
		field(sb, "  ", "tci", f->vlan_tci[i], 4);
	}
	sb_putc(sb, '\n');
}

/* "  NAME: head", then "  key value" for each field, as the table says. */
static void tree_hdr(struct roce_sb *sb, const void *base,
		     const struct hdr_desc *d)
{
	sb_puts(sb, "  ");
	sb_puts(sb, d->label ? d->label : roce_ext_name(d->ext));
	sb_putc(sb, ':');
	if (d->text_head)
		d->text_head(sb, base);
	for (unsigned j = 0; j < d->nfields; j++) {
		const struct hdr_field *fl = &d->fields[j];
		uint64_t v = roce_field_value(base, fl);

		if (fl->text == FT_BRK)
			sb_puts(sb, "\n   ");
		field(sb, fl->text == FT_SP1 ? " " : "  ", fl->key, v, fl->hex);
		if (fl->text_gloss)
			fl->text_gloss(sb, v);
	}
	sb_putc(sb, '\n');
}

void roce_fmt_tree(struct roce_sb *sb, const struct roce_dissect_in *in,
		   const struct roce_frame *f)
{
	const struct roce_ib *ib = &f->ib;
	const struct hdr_desc *d;

	sb_kv_u64(sb, "frame ", in->frame_no);
	sb_kv_u64(sb, ": ", f->wire_len);
	sb_kv_u64(sb, " bytes on the wire, ", in->caplen);
	sb_puts(sb, " captured, time ");
	roce_fmt_time(sb, in->rel_ns);
	sb_putc(sb, '\n');
	tree_link(sb, f);
	for (unsigned pos = 0; (d = roce_hdr_next(f, &pos));)
		tree_hdr(sb, f, d);
	if (in->status == -EBADMSG) {
		sb_puts(sb, "  MALFORMED: ");
		sb_puts(sb, in->why);
		sb_puts(sb, "\n\n");
		return;
	}
	for (unsigned pos = 0; (d = roce_ext_next(ib, &pos));)
		tree_hdr(sb, f, d);
	sb_kv_u64(sb, "  payload: ", ib->payload_len);
	sb_puts(sb, " bytes\n");
	struct roce_mad_view mv;
	if (roce_frame_mad(f, &mv) == 0)
		for (unsigned pos = 0; (d = roce_mad_next(&mv, &pos));)
			tree_hdr(sb, &mv, d);
	sb_puts(sb, "  ICRC: ");
	if (f->truncated) {
		sb_puts(sb, "not checked, frame truncated by the capture\n\n");
		return;
	}
	sb_hex(sb, ib->icrc, 8);
	if (!roce_frame_icrc_ok(f))
		sb_kv_hex(sb, " BAD, computed ", f->icrc_calc, 8);
	sb_puts(sb, roce_frame_icrc_ok(f) ? " ok\n\n" : "\n\n");
}
