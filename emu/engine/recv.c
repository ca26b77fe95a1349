/* SPDX-License-Identifier: MIT */
/* Receive dispatch: a parsed arrival is checked (ICRC, P_Key, QP, state, source) and goes to its engine. */
#include <errno.h>
#include <stdio.h>
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

/* A dropped packet's reason, with its rule: counted always, its words
 * built only in explain mode. */
static void why_drop(struct rocemu_dev *d, const struct roce_frame *f,
		     uint32_t qpn, const char *rule, const char *what,
		     const char *detail)
{
	char src[64];

	if (!dev_explaining(d)) {
		dev_why(d, ROCEMU_WHY_DROP, qpn, NULL, 0, rule, "%s", "");
		return;
	}
	why_gid(f->src_gid, src, sizeof(src));
	dev_why(d, ROCEMU_WHY_DROP, qpn, NULL, 0, rule,
		"drop: %s%s (%s psn 0x%x from %s)", what, detail,
		f->ib.op && f->ib.op->name ? f->ib.op->name : "packet",
		f->ib.bth.psn, src);
}

/* Why qp in its state refuses f, in words, into buf. */
static void state_why(const struct rocemu_qp *qp, const struct roce_frame *f,
		      const char *why, char *buf, size_t n)
{
	static const char *const tr[] = { [ROCE_TR_RC] = "RC",
					  [ROCE_TR_UC] = "UC",
					  [ROCE_TR_UD] = "UD" };
	char peer[64];

	if (!strcmp(why, "transport")) {
		snprintf(buf, n, "qp 0x%x is %s; the packet is of another "
				 "transport", qp->qpn,
			 tr[transport_of(qp)]);
	} else if (!strcmp(why, "source address")) {
		why_gid(qp->tmpl.dst_gid, peer, sizeof(peer));
		snprintf(buf, n, "qp 0x%x is connected to %s and takes packets "
				 "from it only", qp->qpn, peer);
	} else if (f->ib.op->flags & ROCE_OPF_RESP) {
		snprintf(buf, n, "qp 0x%x is in %s; responses are taken only "
				 "in RTS or SQD", qp->qpn,
			 qp_state_name(qp->state));
	} else {
		snprintf(buf, n, "qp 0x%x is in %s; packets are taken only "
				 "from RTR on", qp->qpn,
			 qp_state_name(qp->state));
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
		dev_why(d, ROCEMU_WHY_DROP, 0, NULL, 0, "IBTA ch. 9 (headers)",
			"drop: malformed packet: %s", why ? why : "?");
		return;
	}
	dev_saw_frame(d, f->ib.icrc);
	if (!roce_frame_icrc_ok(f)) {
		dev_count(d, ROCEMU_CNT_RX_DROP_ICRC);
		core_trace(d->core, "%s drop: bad ICRC", d->name);
		why_drop(d, f, f->ib.bth.dqpn, "IBTA A17, ch. 7 (ICRC)",
			 "bad ICRC", " (the packet was changed on the way)");
		return;
	}
	if (!pkey_ok(f->ib.bth.pkey)) {
		dev_count(d, ROCEMU_CNT_RX_DROP_PKEY);
		why_drop(d, f, f->ib.bth.dqpn, "IBTA 10.9.3",
			 "P_Key does not match the port's 0xffff", "");
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
		if (dev_explaining(d)) {
			char q[32];
			snprintf(q, sizeof(q), "unknown QP 0x%x",
				 f->ib.bth.dqpn);
			why_drop(d, f, f->ib.bth.dqpn,
				 "IBTA ch. 9 (header validation)", q,
				 " (no QP of that number on this device)");
		} else {
			dev_why(d, ROCEMU_WHY_DROP, 0, NULL, 0, "", "%s", "");
		}
		return;
	}
	if ((why = qp_refuses(qp, f))) {
		dev_count(d, ROCEMU_CNT_RX_DROP_BAD_STATE);
		core_trace(d->core, "%s qp 0x%06x drop: %s", d->name, qp->qpn, why);
		char text[ROCEMU_EV_TEXT] = "";
		if (dev_explaining(d))
			state_why(qp, f, why, text, sizeof(text));
		why_drop(d, f, qp->qpn, "IBTA 10.3.1, C9-54", text, "");
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
