/* SPDX-License-Identifier: MIT */
/* Unreliable Datagram: one packet per message, DETH with Q_Key and source QP, a GRH in every receive buffer. */
#include <string.h>

#include "engine.h"

enum { GRH_LEN = 40 };

void ud_send(struct rocemu_qp *qp, struct swqe *wqe)
{
	struct roce_ib ib = { 0 };

	wqe->sent = wqe->length;
	/* C9-93.1.1: a message longer than the MTU is dropped unsent, and
	 * the WQE still completes successfully (as rxe does). */
	if (wqe->length > qp_mtu(qp))
		return;
	int opcode = req_opcode(qp, wqe, true, true);
	if (opcode < 0) {
		fail_local(qp, wqe, IBV_WC_LOC_QP_OP_ERR);
		return;
	}
	/* UD is part of the requester: its payload is gathered as req.c
	 * gathers a SEND's. */
	const uint8_t *data = req_payload(qp, wqe, 0, wqe->length,
					  qp->dev->core->bounce);
	if (!data)
		return;
	ib.bth.opcode = (uint8_t)opcode;
	ib.bth.psn = qp->req.psn;
	ib.bth.se = (wqe->flags & IBV_SEND_SOLICITED) != 0;
	ib.bth.dqpn = wqe->remote_qpn;
	/* IBTA 10.2.4: a Q_Key with its high bit set means "the QP's own";
	 * rxe sends the WR's value as it is. */
	ib.deth.qkey = (wqe->remote_qkey & 0x80000000u) ? qp->attr.qkey
							 : wqe->remote_qkey;
	ib.deth.src_qp = qp->qpn;
	ib.imm = wqe->imm;
	ib.payload = data;
	ib.payload_len = wqe->length;
	qp_template_to(qp, &wqe->av);
	qp_send_packet(qp, &ib);
	qp->req.psn = roce_psn_add(qp->req.psn, 1);
}

/* The 40 bytes every UD receive buffer starts with: the IPv6 header, or
 * for IPv4 20 zero bytes and the IPv4 header (as rxe and hardware). */
static void make_grh(const struct roce_frame *f, uint8_t grh[GRH_LEN])
{
	memset(grh, 0, GRH_LEN);
	if (f->ip_ver == 4)
		memcpy(grh + 20, f->ip_hdr, ROCE_IPV4_HLEN);
	else
		memcpy(grh, f->ip_hdr, ROCE_IPV6_HLEN);
}

void ud_receive(struct rocemu_qp *qp, const struct roce_frame *f)
{
	const struct roce_ib *ib = &f->ib;
	struct rwqe wqe;
	uint8_t grh[GRH_LEN];

	/* C9-40: a Q_Key that is not the QP's is dropped and counted. */
	if (ib->deth.qkey != qp->attr.qkey) {
		dev_count(qp->dev, ROCEMU_CNT_RX_DROP_QKEY);
		dev_why(qp->dev, ROCEMU_WHY_DROP, qp->qpn, NULL, 0, "IBTA C9-40",
			"drop: UD qp 0x%x has Q_Key 0x%x; the datagram from qp "
			"0x%x carries 0x%x", qp->qpn, qp->attr.qkey,
			ib->deth.src_qp, ib->deth.qkey);
		return;
	}
	if (!qp_take_recv(qp, &wqe)) {
		dev_count(qp->dev, ROCEMU_CNT_RX_DROP_NO_RECV);
		dev_why(qp->dev, ROCEMU_WHY_DROP, qp->qpn, NULL, 0,
			"IBTA 10.2.4, 9.8",
			"drop: UD qp 0x%x has no receive WQE posted (%s empty): "
			"the datagram from qp 0x%x is lost", qp->qpn,
			qp->srq ? "its SRQ" : "RQ", ib->deth.src_qp);
		return;
	}
	struct ibv_wc wc = { .wr_id = wqe.wr_id, .opcode = IBV_WC_RECV,
			     .qp_num = qp->qpn, .src_qp = ib->deth.src_qp,
			     .wc_flags = IBV_WC_GRH,
			     .byte_len = GRH_LEN + ib->payload_len };
	make_grh(f, grh);
	if (wc.byte_len > wqe.length)
		wc.status = IBV_WC_LOC_LEN_ERR;
	else if (sge_copy_to(qp->pd, wqe.sg, wqe.num_sge, 0, grh, GRH_LEN,
			     IBV_ACCESS_LOCAL_WRITE) ||
		 sge_copy_to(qp->pd, wqe.sg, wqe.num_sge, GRH_LEN, ib->payload,
			     ib->payload_len, IBV_ACCESS_LOCAL_WRITE))
		wc.status = IBV_WC_LOC_PROT_ERR;
	if (ib->exts & ROCE_EXT_IMMDT) {
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = htobe32(ib->imm);
	}
	cq_push(qp->rcq, &wc, ib->bth.se);
}
