/* SPDX-License-Identifier: MIT */
/* CM MADs (IBTA 1.4 chapter 12) and the IP CM service (Annex A11): structs, encode, decode. */
#ifndef ROCEMU_CM_H
#define ROCEMU_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A CM message is one 256-byte MAD sent on QP1 (UD SEND_ONLY, Q_Key
 * ROCE_CM_QP1_QKEY): a 24-byte common header, then 232 bytes of
 * attribute data whose layout the attribute ID selects.
 */
enum {
	ROCE_MAD_LEN = 256,
	ROCE_MAD_HDR_LEN = 24,
	ROCE_CM_DATA_LEN = ROCE_MAD_LEN - ROCE_MAD_HDR_LEN,
	ROCE_MAD_BASE_VERSION = 1,
	ROCE_MGMT_CLASS_CM = 0x07,
	ROCE_CM_CLASS_VERSION = 2,
	ROCE_MAD_METHOD_SEND = 0x03,
	ROCE_CM_QPN = 1,
	ROCE_CM_GID_LEN = 16,
	/* the longest private-data area (RTU, DREP) */
	ROCE_CM_PRIV_MAX = 224,
	/* REJ ARI, SIDR_REP and APR additional information */
	ROCE_CM_INFO_MAX = 72,
};

/* IB_QP1_QKEY: the Q_Key every CM MAD carries in its DETH. */
#define ROCE_CM_QP1_QKEY 0x80010000u

/* Attribute IDs of the CM class (IBTA table 104; Linux include/rdma/ib_cm.h). */
enum roce_cm_attr {
	ROCE_CM_ATTR_CLASS_PORT_INFO = 0x0001,
	ROCE_CM_ATTR_REQ = 0x0010,
	ROCE_CM_ATTR_MRA = 0x0011,
	ROCE_CM_ATTR_REJ = 0x0012,
	ROCE_CM_ATTR_REP = 0x0013,
	ROCE_CM_ATTR_RTU = 0x0014,
	ROCE_CM_ATTR_DREQ = 0x0015,
	ROCE_CM_ATTR_DREP = 0x0016,
	ROCE_CM_ATTR_SIDR_REQ = 0x0017,
	ROCE_CM_ATTR_SIDR_REP = 0x0018,
	ROCE_CM_ATTR_LAP = 0x0019,
	ROCE_CM_ATTR_APR = 0x001a,
};

/* Private-data bytes each message carries: all of the MAD after its fields. */
enum {
	ROCE_CM_REQ_PRIV_LEN = 92,
	ROCE_CM_MRA_PRIV_LEN = 222,
	ROCE_CM_REJ_PRIV_LEN = 148,
	ROCE_CM_REP_PRIV_LEN = 196,
	ROCE_CM_RTU_PRIV_LEN = 224,
	ROCE_CM_DREQ_PRIV_LEN = 220,
	ROCE_CM_DREP_PRIV_LEN = 224,
	ROCE_CM_SIDR_REQ_PRIV_LEN = 216,
	ROCE_CM_SIDR_REP_PRIV_LEN = 136,
	ROCE_CM_LAP_PRIV_LEN = 168,
	ROCE_CM_APR_PRIV_LEN = 148,
};

/* REJ reasons (IBTA table 112; Linux enum ib_cm_rej_reason). */
enum roce_cm_rej_reason {
	ROCE_CM_REJ_NO_QP = 1,
	ROCE_CM_REJ_NO_EEC = 2,
	ROCE_CM_REJ_NO_RESOURCES = 3,
	ROCE_CM_REJ_TIMEOUT = 4,
	ROCE_CM_REJ_UNSUPPORTED = 5,
	ROCE_CM_REJ_INVALID_COMM_ID = 6,
	ROCE_CM_REJ_INVALID_COMM_INSTANCE = 7,
	ROCE_CM_REJ_INVALID_SERVICE_ID = 8,
	ROCE_CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	ROCE_CM_REJ_STALE_CONN = 10,
	ROCE_CM_REJ_RDC_NOT_EXIST = 11,
	ROCE_CM_REJ_INVALID_GID = 12,
	ROCE_CM_REJ_INVALID_LID = 13,
	ROCE_CM_REJ_INVALID_SL = 14,
	ROCE_CM_REJ_INVALID_TRAFFIC_CLASS = 15,
	ROCE_CM_REJ_INVALID_HOP_LIMIT = 16,
	ROCE_CM_REJ_INVALID_PACKET_RATE = 17,
	ROCE_CM_REJ_INVALID_ALT_GID = 18,
	ROCE_CM_REJ_INVALID_ALT_LID = 19,
	ROCE_CM_REJ_INVALID_ALT_SL = 20,
	ROCE_CM_REJ_INVALID_ALT_TRAFFIC_CLASS = 21,
	ROCE_CM_REJ_INVALID_ALT_HOP_LIMIT = 22,
	ROCE_CM_REJ_INVALID_ALT_PACKET_RATE = 23,
	ROCE_CM_REJ_PORT_CM_REDIRECT = 24,
	ROCE_CM_REJ_PORT_REDIRECT = 25,
	ROCE_CM_REJ_INVALID_MTU = 26,
	ROCE_CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	ROCE_CM_REJ_CONSUMER_DEFINED = 28,
	ROCE_CM_REJ_INVALID_RNR_RETRY = 29,
	ROCE_CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	ROCE_CM_REJ_INVALID_CLASS_VERSION = 31,
	ROCE_CM_REJ_INVALID_FLOW_LABEL = 32,
	ROCE_CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
	ROCE_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED = 35,
};

/* Which message an MRA delays or a REJ refuses (2 bits). */
enum roce_cm_msg_ref {
	ROCE_CM_MSG_REQ = 0,
	ROCE_CM_MSG_REP = 1,
	ROCE_CM_MSG_OTHER = 2, /* LAP for an MRA; "no message" for a REJ */
};

/* REQ and REP transport service type (2 bits). */
enum roce_cm_transport {
	ROCE_CM_TRANSPORT_RC = 0,
	ROCE_CM_TRANSPORT_UC = 1,
	ROCE_CM_TRANSPORT_RD = 2,
};

/* SIDR_REP status (IBTA table 120). */
enum roce_cm_sidr_status {
	ROCE_CM_SIDR_SUCCESS = 0,
	ROCE_CM_SIDR_UNSUPPORTED = 1,
	ROCE_CM_SIDR_REJECT = 2,
	ROCE_CM_SIDR_NO_QP = 3,
	ROCE_CM_SIDR_REDIRECT = 4,
	ROCE_CM_SIDR_UNSUPPORTED_VERSION = 5,
};

/*
 * The MAD common header (IBTA 13.4.3). Every field is kept, so that a
 * dissector can show a MAD that roce_cm_decode refuses.
 */
struct roce_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;	/* with the R bit (0x80) */
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint16_t resv;
	uint32_t attr_mod;	/* ECE options when ECE is used */
};

/*
 * One path of a REQ (primary or alternate) or the alternate path of a
 * LAP. Field widths on the wire are given where they are not the C type's.
 */
struct roce_cm_path {
	uint16_t local_lid;
	uint16_t remote_lid;
	uint8_t local_gid[ROCE_CM_GID_LEN];
	uint8_t remote_gid[ROCE_CM_GID_LEN];
	uint32_t flow_label;	/* 20 bits */
	uint8_t rate;		/* 6 bits, IBTA static rate encoding */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;		/* 4 bits */
	bool subnet_local;
	uint8_t local_ack_timeout; /* 5 bits */
};

/* REQ (IBTA table 99, attribute 0x0010). */
struct roce_cm_req {
	uint32_t local_comm_id;
	uint32_t vendor_id;	/* 24 bits, ECE */
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn;	/* 24 bits */
	uint8_t responder_resources;
	uint32_t local_eecn;	/* 24 bits */
	uint8_t initiator_depth;
	uint32_t remote_eecn;	/* 24 bits */
	uint8_t remote_cm_response_timeout; /* 5 bits */
	uint8_t transport_type;	/* 2 bits, enum roce_cm_transport */
	bool end_to_end_flow_control;
	uint32_t starting_psn;	/* 24 bits */
	uint8_t local_cm_response_timeout; /* 5 bits */
	uint8_t retry_count;	/* 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;	/* 4 bits, IBTA MTU code (3 = 1024) */
	bool rdc_exists;
	uint8_t rnr_retry_count; /* 3 bits */
	uint8_t max_cm_retries;	/* 4 bits */
	bool srq;
	uint8_t extended_transport_type; /* 3 bits */
	struct roce_cm_path primary;
	struct roce_cm_path alternate; /* all zero: no alternate path */
	bool sap_supported;
};

/* MRA (attribute 0x0011). */
struct roce_cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_mraed;	/* 2 bits, enum roce_cm_msg_ref */
	uint8_t service_timeout; /* 5 bits */
};

/* REJ (attribute 0x0012). ari holds ari_len meaningful bytes of 72. */
struct roce_cm_rej {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_rejected;	/* 2 bits, enum roce_cm_msg_ref */
	uint8_t ari_len;	/* 7 bits on the wire, at most 72 */
	uint16_t reason;	/* enum roce_cm_rej_reason */
	uint8_t ari[ROCE_CM_INFO_MAX];
};

/* REP (attribute 0x0013). */
struct roce_cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;	/* 24 bits */
	uint32_t vendor_id;	/* 24 bits, ECE, spread over three bytes */
	uint32_t local_eecn;	/* 24 bits */
	uint32_t starting_psn;	/* 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay; /* 5 bits */
	uint8_t failover_accepted; /* 2 bits */
	bool end_to_end_flow_control;
	uint8_t rnr_retry_count; /* 3 bits */
	bool srq;
	uint64_t local_ca_guid;
};

/* RTU (0x0014) and DREP (0x0016): the two comm IDs only. */
struct roce_cm_ids {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
};

/* DREQ (attribute 0x0015). */
struct roce_cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;	/* 24 bits, the QPN or EECN of the receiver */
};

/* SIDR_REQ (attribute 0x0017). */
struct roce_cm_sidr_req {
	uint32_t request_id;
	uint16_t pkey;
	uint64_t service_id;
};

/* SIDR_REP (attribute 0x0018). info holds info_len bytes of 72. */
struct roce_cm_sidr_rep {
	uint32_t request_id;
	uint8_t status;		/* enum roce_cm_sidr_status */
	uint8_t info_len;	/* at most 72 */
	uint32_t vendor_id;	/* 24 bits, ECE */
	uint32_t qpn;		/* 24 bits */
	uint64_t service_id;
	uint32_t qkey;
	uint8_t info[ROCE_CM_INFO_MAX];
};

/* LAP (attribute 0x0019), decoded and encoded but not acted upon. */
struct roce_cm_lap {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;	/* 24 bits */
	uint8_t remote_cm_response_timeout; /* 5 bits */
	struct roce_cm_path alternate;
};

/* APR (attribute 0x001a). info holds info_len bytes of 72. */
struct roce_cm_apr {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t info_len;	/* at most 72 */
	uint8_t ap_status;
	uint8_t info[ROCE_CM_INFO_MAX];
};

/*
 * A decoded CM message. attr_id selects the member of the union. The
 * private data is the whole area the message has on the wire: the decoder
 * sets priv_len to that area's size (roce_cm_priv_len); the encoder writes
 * priv_len bytes and zeros the rest of the area.
 */
struct roce_cm_msg {
	uint16_t attr_id;	/* enum roce_cm_attr */
	uint64_t tid;
	uint16_t status;	/* MAD status, 0 in every CM Send */
	uint16_t class_specific;
	uint32_t attr_mod;
	union {
		struct roce_cm_req req;
		struct roce_cm_mra mra;
		struct roce_cm_rej rej;
		struct roce_cm_rep rep;
		struct roce_cm_ids rtu;
		struct roce_cm_dreq dreq;
		struct roce_cm_ids drep;
		struct roce_cm_sidr_req sidr_req;
		struct roce_cm_sidr_rep sidr_rep;
		struct roce_cm_lap lap;
		struct roce_cm_apr apr;
	};
	uint16_t priv_len;
	uint8_t priv[ROCE_CM_PRIV_MAX];
};

/*
 * Reads the 24-byte common header of any MAD, unchecked beyond its
 * length. Returns 0, or -EMSGSIZE if len < ROCE_MAD_HDR_LEN; *out is
 * untouched on failure.
 */
int roce_mad_hdr_parse(const uint8_t *mad, size_t len, struct roce_mad_hdr *out);

/*
 * Writes h as the 24-byte common header at mad, every field as given (a
 * conformance test writes wrong versions on purpose; roce_cm_encode is
 * the way to a header that is right). Returns 0, or -EMSGSIZE if len <
 * ROCE_MAD_HDR_LEN; mad is untouched on failure, its bytes after the
 * header always.
 */
int roce_mad_hdr_write(const struct roce_mad_hdr *h, uint8_t *mad, size_t len);

/*
 * Decodes one CM MAD. Returns 0 and fills *out, or
 *   -EMSGSIZE if len is not ROCE_MAD_LEN (a MAD is exactly 256 bytes);
 *   -EPROTO   if it is not a CM MAD this codec speaks: base version not 1,
 *             class not 0x07, class version not 2, method not Send (0x03),
 *             or an attribute ID other than REQ..APR;
 *   -EINVAL   if a length field inside lies (REJ ARI length, SIDR_REP or
 *             APR additional information length above 72).
 * On failure *out is untouched. Reserved bits are ignored.
 */
int roce_cm_decode(const uint8_t *mad, size_t len, struct roce_cm_msg *out);

/*
 * Encodes m as a CM MAD (base version 1, class 0x07, class version 2,
 * method Send) into the 256 bytes at mad, reserved bits zero. Returns
 * ROCE_MAD_LEN, or -EINVAL for an unknown attribute ID, priv_len beyond
 * the message's area, an ARI or additional information length above 72,
 * or a field too wide for its bits; mad is untouched on failure.
 */
int roce_cm_encode(const struct roce_cm_msg *m, uint8_t mad[ROCE_MAD_LEN]);

/* Private-data area of a message in bytes, or 0 for an unknown attribute. */
unsigned roce_cm_priv_len(uint16_t attr_id);

/* "REQ", "SIDR_REP", "ClassPortInfo"...; "unknown" for other IDs. */
const char *roce_cm_attr_name(uint16_t attr_id);

/* "NO_QP", "INVALID_SERVICE_ID", "CONSUMER_DEFINED"...; "unknown" otherwise. */
const char *roce_cm_rej_reason_name(unsigned reason);

/* "SUCCESS", "UNSUPPORTED", "REJECT"...; "unknown" otherwise. */
const char *roce_cm_sidr_status_name(unsigned status);

/* ---- IBTA Annex A11, the RDMA IP CM service ---------------------------- */

/*
 * Port spaces (librdmacm's enum rdma_port_space). An IP CM service ID is
 * 0x0000000001 (40 bits), the protocol byte, then the port: that is
 * (ps << 16) | port with these values.
 */
enum roce_rdma_ps {
	ROCE_RDMA_PS_IPOIB = 0x0002,
	ROCE_RDMA_PS_TCP = 0x0106,
	ROCE_RDMA_PS_UDP = 0x0111,
	ROCE_RDMA_PS_IB = 0x013f,
};

/* The service IDs of the IP CM service: mask and prefix of the top 40 bits. */
#define ROCE_CM_IP_SID_MASK 0xffffffffff000000ull
#define ROCE_CM_IP_SID_PREFIX 0x0000000001000000ull

/*
 * The private-data header of a REQ or SIDR_REQ of the IP CM service
 * (Annex A11; Linux's struct cma_hdr): 36 bytes, then the user's data.
 */
enum {
	ROCE_CM_IP_HDR_LEN = 36,
	ROCE_CM_IP_HDR_VERSION = 0x00, /* the header's own version byte */
	/* what the user may send after the header */
	ROCE_CM_IP_REQ_USER_LEN = ROCE_CM_REQ_PRIV_LEN - ROCE_CM_IP_HDR_LEN,
	ROCE_CM_IP_SIDR_USER_LEN =
		ROCE_CM_SIDR_REQ_PRIV_LEN - ROCE_CM_IP_HDR_LEN,
};

/*
 * The header decoded. ip_version is 4 or 6. An IPv4 address sits in the
 * last 4 bytes of its 16-byte field on the wire with the first 12 zero
 * (not ::ffff: the kernel writes it so); here it is in v4.
 */
struct roce_cm_ip_hdr {
	uint8_t version;
	uint8_t ip_version;
	uint16_t src_port;
	union {
		uint8_t v4[4];
		uint8_t v6[16];
	} src, dst;
};

/*
 * Reads the header at the start of a private-data area of len bytes.
 * Returns 0, -EMSGSIZE if len < ROCE_CM_IP_HDR_LEN, or -EPROTO if the
 * version byte is not 0 or the IP version not 4 or 6; *out is untouched
 * on failure. Bytes of an IPv4 field before the address are not checked
 * (the kernel reads only the address).
 */
int roce_cm_ip_hdr_parse(const uint8_t *priv, size_t len,
			 struct roce_cm_ip_hdr *out);

/*
 * Writes h at priv (cap bytes): version, IP version in bits 7:4, port,
 * and the addresses, an IPv4 one zero-padded in front. Returns
 * ROCE_CM_IP_HDR_LEN, -EMSGSIZE if cap is too small, or -EINVAL if
 * ip_version is not 4 or 6; priv is untouched on failure.
 */
int roce_cm_ip_hdr_build(const struct roce_cm_ip_hdr *h, uint8_t *priv,
			 size_t cap);

/* The service ID of a port space and port: (ps << 16) | port. */
uint64_t roce_cm_service_id(uint16_t ps, uint16_t port);

/*
 * Splits an IP CM service ID into port space and port. Returns 0, or
 * -EINVAL if sid is not in the IP CM range (its top 40 bits are not
 * 0x0000000001); *ps and *port are untouched then.
 */
int roce_cm_service_id_split(uint64_t sid, uint16_t *ps, uint16_t *port);

/* "TCP", "UDP", "IB", "IPOIB"; "unknown" for other port spaces. */
const char *roce_cm_ps_name(unsigned ps);

#endif
