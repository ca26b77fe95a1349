/* SPDX-License-Identifier: MIT */
/* Transmit: a packet from a QP's frame template, built once, counted, traced and put on the wire. */
#include <stdlib.h>

#include "engine.h"
#include "rocemu/dissect.h"

/* One trace line for a frame about to be sent by d: decoding what was
 * built shows exactly what goes on the wire. */
static void trace_packet(struct rocemu_dev *d, const uint8_t *frame, size_t len)
{
	char text[512];
	struct roce_sb sb;
	struct roce_frame f;
	const char *why = "";
	struct roce_dissect_in in = { .frame_no = d->cnt[ROCEMU_CNT_TX_PACKETS],
				      .rel_ns = d->core->now };

	/* Decoding what was built shows exactly what went on the wire. */
	in.status = roce_frame_parse(ROCE_LINK_ETH, frame, len, len, &f, &why);
	in.why = why;
	roce_sb_init(&sb, text, sizeof(text));
	roce_fmt_line(&sb, &in, &f);
	if (sb.len && text[sb.len - 1] == '\n')
		text[--sb.len] = '\0';
	core_trace(d->core, "%s > %s", d->name, text);
}

void qp_send_packet(struct rocemu_qp *qp, struct roce_ib *ib)
{
	struct roce_frame *f = &qp->tmpl;
	struct rocemu_dev *d = qp->dev;
	const struct roce_opcode_info *op = roce_opcode(ib->bth.opcode);
	unsigned pad = roce_pad_len(ib->payload_len);
	size_t cap = ROCE_ETH_HLEN + (f->ip_ver == 4 ? ROCE_IPV4_HLEN
						    : ROCE_IPV6_HLEN) +
		     ROCE_UDP_HLEN + op->hdr_len + ib->payload_len + pad +
		     ROCE_ICRC_LEN;
	uint8_t *buf = frame_alloc(&d->core->frames, cap);

	if (!buf)
		return; /* lost, as on a wire; the retry timer covers it */
	/* Built straight into the buffer the wire keeps: one copy of the
	 * payload, from memory into the frame. */
	/* A UDP socket with DF set sends ID 0; the loopback numbers them. */
	f->ip_id = wire_ip_id_zero(d->port)
			   ? 0 : (uint16_t)d->cnt[ROCEMU_CNT_TX_PACKETS];
	f->ib = *ib;
	f->ib.bth.pkey = 0xffff;
	if (!qp_is(qp, IBV_QPT_UD))
		f->ib.bth.dqpn = qp->attr.dest_qp_num;
	f->ib.bth.pad = (uint8_t)pad;
	int n = roce_frame_build(f, buf, cap);
	if (n < 0) {
		frame_free(&d->core->frames, buf); /* only valid packets are built */
		return;
	}
	dev_count(d, ROCEMU_CNT_TX_PACKETS);
	dev_saw_frame(d, roce_frame_built_icrc(buf, (size_t)n));
	if (core_tracing(d->core))
		trace_packet(d, buf, (size_t)n);
	wire_send(d->port, buf, (size_t)n);
}

