/* SPDX-License-Identifier: MIT */
/* QP1, the GSI QP the device owns: MADs checked as rxe checks them and handed to the CM; MADs sent as UD SEND Only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* Why a packet to QP1 is no GSI MAD; NULL if it is one. rxe's hdr_check
 * and check_keys: QP1 takes UD SEND Only with Q_Key 0x80010000 (the P_Key
 * was checked for every packet already); ib_core's MAD layer then takes
 * exactly one MAD. */
static const char *not_a_mad(const struct roce_frame *f)
{
	if (f->ib.bth.opcode != ROCE_OP_UD_SEND_ONLY)
		return "QP1 takes UD SEND Only";
	if (f->ib.deth.qkey != ROCE_CM_QP1_QKEY)
		return "QP1's Q_Key is 0x80010000";
	if (f->ib.payload_len != ROCE_MAD_LEN)
		return "a MAD is 256 bytes";
	return NULL;
}

void gsi_receive(struct rocemu_dev *d, const struct roce_frame *f)
{
	const char *why = not_a_mad(f);

	if (!why && !d->gsi_ops)
		why = "no connection manager runs on this device";
	if (why) {
		dev_count(d, ROCEMU_CNT_RX_DROP_GSI);
		core_trace(d->core, "%s qp1 drop: %s", d->name, why);
		dev_why(d, ROCEMU_WHY_DROP, 1, NULL, 0, "IBTA ch. 13 (GSI)",
			"drop: %s psn 0x%x to QP1 (the GSI QP) from qp 0x%x: %s",
			f->ib.op->name, f->ib.bth.psn,
			f->ib.exts & ROCE_EXT_DETH ? f->ib.deth.src_qp : 0,
			why);
		return;
	}
	struct gsi_mad m = { .mad = f->ib.payload, .hop_limit = f->ttl,
			     .traffic_class = f->tos };

	memcpy(m.src_gid, f->src_gid, 16);
	dev_count(d, ROCEMU_CNT_RX_PACKETS);
	d->gsi_ops->receive(d->gsi_user, &m);
}

/* QP1's sending state: a UD QP numbered 1 with a frame template, kept by
 * the device; NULL without memory. */
static struct rocemu_qp *gsi_qp(struct rocemu_dev *d)
{
	struct rocemu_qp *qp = d->gsi;

	if (qp)
		return qp;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->dev = d;
	qp->qpn = ROCE_CM_QPN;
	qp->init.qp_type = IBV_QPT_UD;
	qp->attr.qkey = ROCE_CM_QP1_QKEY;
	qp->state = IBV_QPS_RTS;
	roce_frame_init(&qp->tmpl, 4);
	memcpy(qp->tmpl.eth_src, d->mac, 6);
	memcpy(qp->tmpl.src_gid, d->gid, 16);
	qp->tmpl.sport = roce_udp_sport_of_qpn(qp->qpn);
	d->gsi = qp;
	return qp;
}

int gsi_send(struct rocemu_dev *d, const uint8_t dgid[16], uint8_t tclass,
	     const uint8_t mad[ROCE_MAD_LEN])
{
	struct rocemu_qp *qp = gsi_qp(d);
	struct ibv_ah_attr av = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = 1,
					   .traffic_class = tclass } };
	struct roce_ib ib = { 0 };

	if (!qp)
		return -ENOMEM;
	memcpy(av.grh.dgid.raw, dgid, 16);
	ib.bth.opcode = ROCE_OP_UD_SEND_ONLY;
	ib.bth.psn = qp->req.psn;
	ib.bth.dqpn = ROCE_CM_QPN;
	ib.deth.qkey = ROCE_CM_QP1_QKEY;
	ib.deth.src_qp = ROCE_CM_QPN;
	ib.payload = mad;
	ib.payload_len = ROCE_MAD_LEN;
	qp_template_to(qp, &av);
	qp_send_packet(qp, &ib);
	qp->req.psn = roce_psn_add(qp->req.psn, 1);
	return 0;
}

void gsi_first_packet(struct rocemu_dev *d, struct rocemu_qp *qp)
{
	qp->heard = true;
	/* IBTA 11.6.3.1: communication established, the first packet at a
	 * QP in RTR (the RTU may be lost, or still on its way). */
	if (qp->state == IBV_QPS_RTR)
		dev_async_event(d, IBV_EVENT_COMM_EST, qp);
	/* The CM learns of it in RTS too: an rdma_cm passive side moves its
	 * QP to RTS before its REP goes out. */
	if (d->gsi_ops)
		d->gsi_ops->comm_est(d->gsi_user, qp);
}
