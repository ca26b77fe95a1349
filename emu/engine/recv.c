/* SPDX-License-Identifier: MIT */
/* Receive dispatch: a parsed arrival is checked (ICRC, P_Key, QP, state, source) and goes to its engine. */
#include <errno.h>
#include <string.h>

#include "engine.h"


static bool pkey_ok(uint16_t pkey)
{
	/* The port's only P_Key is the default 0xffff: a packet matches if
	 * its low 15 bits are all ones (IBTA 10.9.3, either membership). */
	return (pkey & 0x7fff) == 0x7fff;
}

static unsigned transport_of(const struct rocemu_qp *qp)
{
	switch (qp->init.qp_type) {
	case IBV_QPT_RC: return ROCE_TR_RC;
	case IBV_QPT_UC: return ROCE_TR_UC;
	default: return ROCE_TR_UD;
	}
}

/* Why a packet may not reach qp; NULL if it may. */
static const char *qp_refuses(const struct rocemu_qp *qp,
			      const struct roce_frame *f)
{
	if (f->ib.op->transport != transport_of(qp))
		return "transport";
	/* Connected QPs take packets from their peer only (C9-54): from
	 * the address the QP sends to (its GID 0 reached at its GID 1). */
	if (qp->init.qp_type != IBV_QPT_UD &&
	    memcmp(f->src_gid, qp->tmpl.dst_gid, 16))
		return "source address";
	if (f->ib.op->flags & ROCE_OPF_RESP)
		return qp->state == IBV_QPS_RTS || qp->state == IBV_QPS_SQD
			       ? NULL : "state";
	return qp->state == IBV_QPS_RTR || qp->state == IBV_QPS_RTS ||
			       qp->state == IBV_QPS_SQD
		       ? NULL : "state";
}

void engine_receive(struct rocemu_dev *d, const struct wire_rx *rx)
{
	const struct roce_frame *f = rx->f;
	const char *why = rx->why;
	int rc = rx->rc;

	if (rc == -ENOMSG || (rc == 0 && f->truncated)) {
		dev_count(d, ROCEMU_CNT_RX_DROP_NOT_ROCE);
		return;
	}
	if (rc) {
		dev_count(d, ROCEMU_CNT_RX_DROP_MALFORMED);
		core_trace(d->core, "%s drop malformed: %s", d->name, why);
		return;
	}
	dev_saw_frame(d, f->ib.icrc);
	if (!roce_frame_icrc_ok(f)) {
		dev_count(d, ROCEMU_CNT_RX_DROP_ICRC);
		core_trace(d->core, "%s drop: bad ICRC", d->name);
		return;
	}
	if (!pkey_ok(f->ib.bth.pkey)) {
		dev_count(d, ROCEMU_CNT_RX_DROP_PKEY);
		return;
	}
	/* QP1 is the device's own (QPNs given out start above it). */
	if (f->ib.bth.dqpn == ROCE_CM_QPN) {
		gsi_receive(d, f);
		return;
	}
	struct rocemu_qp *qp = qp_find(d, f->ib.bth.dqpn);
	if (!qp) {
		dev_count(d, ROCEMU_CNT_RX_DROP_UNKNOWN_QP);
		return;
	}
	if ((why = qp_refuses(qp, f))) {
		dev_count(d, ROCEMU_CNT_RX_DROP_BAD_STATE);
		core_trace(d->core, "%s qp 0x%06x drop: %s", d->name, qp->qpn, why);
		return;
	}
	dev_count(d, ROCEMU_CNT_RX_PACKETS);
	if (!qp->heard && !qp_is(qp, IBV_QPT_UD))
		gsi_first_packet(d, qp);
	if (qp_is(qp, IBV_QPT_UD))
		ud_receive(qp, f);
	else if (qp_is(qp, IBV_QPT_UC))
		uc_receive(qp, f);
	else if (f->ib.op->flags & ROCE_OPF_RESP)
		comp_receive(qp, f);
	else
		resp_receive(qp, f);
}
