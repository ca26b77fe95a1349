/* SPDX-License-Identifier: MIT */
/* Names of CM attributes, REJ reasons, SIDR statuses and port spaces, for printing. */
#include <stddef.h>

#include "rocemu/cm.h"

#define N(tab) (sizeof(tab) / sizeof((tab)[0]))

/* The entry at i of a sparse table, or "unknown". */
static const char *lookup(const char *const *tab, size_t n, unsigned i)
{
	return i < n && tab[i] ? tab[i] : "unknown";
}

const char *roce_cm_attr_name(uint16_t attr_id)
{
	static const char *const names[] = {
		[ROCE_CM_ATTR_CLASS_PORT_INFO] = "ClassPortInfo",
		[ROCE_CM_ATTR_REQ] = "REQ",
		[ROCE_CM_ATTR_MRA] = "MRA",
		[ROCE_CM_ATTR_REJ] = "REJ",
		[ROCE_CM_ATTR_REP] = "REP",
		[ROCE_CM_ATTR_RTU] = "RTU",
		[ROCE_CM_ATTR_DREQ] = "DREQ",
		[ROCE_CM_ATTR_DREP] = "DREP",
		[ROCE_CM_ATTR_SIDR_REQ] = "SIDR_REQ",
		[ROCE_CM_ATTR_SIDR_REP] = "SIDR_REP",
		[ROCE_CM_ATTR_LAP] = "LAP",
		[ROCE_CM_ATTR_APR] = "APR",
	};

	return lookup(names, N(names), attr_id);
}

const char *roce_cm_rej_reason_name(unsigned reason)
{
#define R(x) [ROCE_CM_REJ_##x] = #x
	static const char *const names[] = {
		R(NO_QP),
		R(NO_EEC),
		R(NO_RESOURCES),
		R(TIMEOUT),
		R(UNSUPPORTED),
		R(INVALID_COMM_ID),
		R(INVALID_COMM_INSTANCE),
		R(INVALID_SERVICE_ID),
		R(INVALID_TRANSPORT_TYPE),
		R(STALE_CONN),
		R(RDC_NOT_EXIST),
		R(INVALID_GID),
		R(INVALID_LID),
		R(INVALID_SL),
		R(INVALID_TRAFFIC_CLASS),
		R(INVALID_HOP_LIMIT),
		R(INVALID_PACKET_RATE),
		R(INVALID_ALT_GID),
		R(INVALID_ALT_LID),
		R(INVALID_ALT_SL),
		R(INVALID_ALT_TRAFFIC_CLASS),
		R(INVALID_ALT_HOP_LIMIT),
		R(INVALID_ALT_PACKET_RATE),
		R(PORT_CM_REDIRECT),
		R(PORT_REDIRECT),
		R(INVALID_MTU),
		R(INSUFFICIENT_RESP_RESOURCES),
		R(CONSUMER_DEFINED),
		R(INVALID_RNR_RETRY),
		R(DUPLICATE_LOCAL_COMM_ID),
		R(INVALID_CLASS_VERSION),
		R(INVALID_FLOW_LABEL),
		R(INVALID_ALT_FLOW_LABEL),
		R(VENDOR_OPTION_NOT_SUPPORTED),
	};
#undef R

	return lookup(names, N(names), reason);
}

const char *roce_cm_sidr_status_name(unsigned status)
{
	static const char *const names[] = {
		[ROCE_CM_SIDR_SUCCESS] = "SUCCESS",
		[ROCE_CM_SIDR_UNSUPPORTED] = "UNSUPPORTED",
		[ROCE_CM_SIDR_REJECT] = "REJECT",
		[ROCE_CM_SIDR_NO_QP] = "NO_QP",
		[ROCE_CM_SIDR_REDIRECT] = "REDIRECT",
		[ROCE_CM_SIDR_UNSUPPORTED_VERSION] = "UNSUPPORTED_VERSION",
	};

	return lookup(names, N(names), status);
}

const char *roce_cm_ps_name(unsigned ps)
{
	switch (ps) {
	case ROCE_RDMA_PS_IPOIB:
		return "IPOIB";
	case ROCE_RDMA_PS_TCP:
		return "TCP";
	case ROCE_RDMA_PS_UDP:
		return "UDP";
	case ROCE_RDMA_PS_IB:
		return "IB";
	}
	return "unknown";
}
