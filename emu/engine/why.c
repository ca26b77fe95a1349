/* SPDX-License-Identifier: MIT */
/* Explain mode for the engines: NAKs, drops and error completions in words, each with its rule. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "core/names.h"

void why_gid(const uint8_t gid[16], char *buf, size_t n)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };
	char s[INET6_ADDRSTRLEN];

	if (!memcmp(gid, v4, 12))
		inet_ntop(AF_INET, gid + 12, s, sizeof(s));
	else
		inet_ntop(AF_INET6, gid, s, sizeof(s));
	snprintf(buf, n, "%s", s);
}

/* What a syndrome is called in a reason, and the kind it counts as. */
static const char *nak_words(uint8_t syn, enum rocemu_why *k)
{
	if (roce_aeth_type(syn) == ROCE_AETH_RNR_NAK) {
		*k = ROCEMU_WHY_NAK_RNR;
		return "RNR NAK";
	}
	switch (roce_aeth_value(syn)) {
	case ROCE_NAK_PSN_SEQ:
		*k = ROCEMU_WHY_NAK_PSN_SEQ;
		return "NAK PSN sequence error";
	case ROCE_NAK_INV_REQ:
		*k = ROCEMU_WHY_NAK_INV_REQ;
		return "NAK invalid request";
	case ROCE_NAK_REM_ACCESS:
		*k = ROCEMU_WHY_NAK_REM_ACCESS;
		return "NAK remote access";
	default:
		*k = ROCEMU_WHY_NAK_REM_OP;
		return "NAK remote operational error";
	}
}

void why_nak(struct rocemu_qp *qp, uint8_t syn, uint32_t psn,
	     const char *rule, const char *fmt, ...)
{
	enum rocemu_why k;
	const char *words = nak_words(syn, &k);
	char detail[ROCEMU_EV_TEXT], peer[64];
	va_list ap;

	/* UC answers nothing: what RC would NAK is dropped. */
	if (qp_is(qp, IBV_QPT_UC))
		k = ROCEMU_WHY_DROP;
	if (!dev_explaining(qp->dev)) {
		dev_why(qp->dev, k, qp->qpn, NULL, 0, rule, "%s", "");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	why_gid(qp->attr.ah_attr.grh.dgid.raw, peer, sizeof(peer));
	if (qp_is(qp, IBV_QPT_UC))
		dev_why(qp->dev, k, qp->qpn, NULL, 0, rule,
			"drop (UC: no NAK, the message is lost) qp 0x%x psn "
			"0x%x: %s", qp->qpn, psn, detail);
	else
		dev_why(qp->dev, k, qp->qpn, NULL, 0, rule,
			"%s (sent to %s qp 0x%x psn 0x%x): %s", words, peer,
			qp->attr.dest_qp_num, psn, detail);
}

void why_rkey_nak(struct rocemu_qp *qp, const struct roce_ib *ib,
		  uint32_t rkey, uint64_t va, uint64_t len, int access)
{
	char detail[ROCEMU_EV_TEXT];

	if (!dev_explaining(qp->dev)) {
		why_nak(qp, ROCE_AETH_NAK_REM_ACCESS, ib->bth.psn, "", "%s", "");
		return;
	}
	rkey_why(qp, rkey, va, len, access, detail, sizeof(detail));
	why_nak(qp, ROCE_AETH_NAK_REM_ACCESS, ib->bth.psn,
		"IBTA 9.7.5.1, 10.6", "%s %s", ib->op->name, detail);
}

void why_wqe_error(struct rocemu_qp *qp, const struct swqe *wqe,
		   enum ibv_wc_status status, const char *rule,
		   const char *fmt, ...)
{
	char detail[ROCEMU_EV_TEXT];
	va_list ap;
	const char *op = wqe ? wr_opcode_name(wqe->opcode) : NULL;
	uint64_t wr_id = wqe ? wqe->wr_id : 0;

	if (!dev_explaining(qp->dev)) {
		dev_why(qp->dev, ROCEMU_WHY_CQE_ERROR, qp->qpn, op, wr_id,
			rule, "%s", "");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	dev_why(qp->dev, ROCEMU_WHY_CQE_ERROR, qp->qpn, op, wr_id, rule,
		"%s: qp 0x%x %s wr_id %llu: %s", wc_status_name(status),
		qp->qpn, op ? op : "WQE", (unsigned long long)wr_id, detail);
}
