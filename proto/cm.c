/* SPDX-License-Identifier: MIT */
/* CM MADs: the common header and each CM attribute, decoded and encoded field by field. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "rocemu/cm.h"
#include "byteorder.h"

/*
 * Wire layouts (IBTA 1.4 chapter 12.6; Linux include/rdma/ibta_vol1_c12.h
 * agrees) as byte arrays, for offsetof() and sizeof() only. Bit fields
 * share a byte and are named after it; their bits are given where read.
 */
struct mad_hdr_wire {
	uint8_t base_version, mgmt_class, class_version, method, status[2],
		class_specific[2], tid[8], attr_id[2], resv[2], attr_mod[4];
};
struct path_wire {
	uint8_t local_lid[2], remote_lid[2], local_gid[16], remote_gid[16],
		flow_rate[4], /* flow label:20 rsvd:6 rate:6 */
		traffic_class, hop_limit, sl_byte, /* SL:4 subnet local:1 */
		ack_byte; /* local ACK timeout:5 (alternate: SAP:1 after) */
};
struct req_wire {
	uint8_t local_comm_id[4], vendor_id[4], service_id[8], ca_guid[8],
		rsvd24[4], qkey[4], qpn_rr[4], eecn_id[4],
		reecn[4], /* remote EECN:24 | resp timeout:5 type:2 e2e:1 */
		psn[4], /* starting PSN:24 | resp timeout:5 retry count:3 */
		pkey[2], mtu_byte, /* MTU:4 RDC:1 RNR retry:3 */
		retries_byte; /* max CM retries:4 SRQ:1 ext. transport:3 */
	struct path_wire primary, alternate;
	uint8_t priv[ROCE_CM_REQ_PRIV_LEN];
};
struct mra_wire {
	uint8_t local_comm_id[4], remote_comm_id[4], msg_byte, timeout_byte,
		priv[ROCE_CM_MRA_PRIV_LEN];
};
struct rej_wire {
	uint8_t local_comm_id[4], remote_comm_id[4], msg_byte, ari_len_byte,
		reason[2], ari[ROCE_CM_INFO_MAX], priv[ROCE_CM_REJ_PRIV_LEN];
};
struct rep_wire {
	uint8_t local_comm_id[4], remote_comm_id[4], qkey[4],
		qpn_vh[4], eecn_vm[4], psn_vl[4], /* 24 bits | vendor ID byte */
		responder_resources, initiator_depth,
		ack_byte, /* target ACK delay:5 failover:2 e2e:1 */
		rnr_byte, /* RNR retry:3 SRQ:1 */
		ca_guid[8], priv[ROCE_CM_REP_PRIV_LEN];
};
struct ids_wire {
	uint8_t local_comm_id[4], remote_comm_id[4], priv[ROCE_CM_RTU_PRIV_LEN];
};
struct dreq_wire {
	uint8_t local_comm_id[4], remote_comm_id[4], qpn[4],
		priv[ROCE_CM_DREQ_PRIV_LEN];
};
struct sidr_req_wire {
	uint8_t request_id[4], pkey[2], rsvd[2], service_id[8],
		priv[ROCE_CM_SIDR_REQ_PRIV_LEN];
};
struct sidr_rep_wire {
	uint8_t request_id[4], status, info_len, vendor_hi[2],
		qpn_vl[4], /* QPN:24 | vendor ID low byte */
		service_id[8], qkey[4], info[ROCE_CM_INFO_MAX],
		priv[ROCE_CM_SIDR_REP_PRIV_LEN];
};
struct lap_wire {
	uint8_t local_comm_id[4], remote_comm_id[4], rsvd8[4],
		qpn_timeout[4], /* remote QPN:24 | resp timeout:5 */
		rsvd16[4], local_lid[2], remote_lid[2], local_gid[16],
		remote_gid[16], flow_tc[4], /* flow label:20 rsvd:4 tclass:8 */
		hop_limit, rate_byte, sl_byte, ack_byte,
		priv[ROCE_CM_LAP_PRIV_LEN];
};
struct apr_wire {
	uint8_t local_comm_id[4], remote_comm_id[4], info_len, ap_status,
		rsvd[2], info[ROCE_CM_INFO_MAX], priv[ROCE_CM_APR_PRIV_LEN];
};

_Static_assert(sizeof(struct mad_hdr_wire) == ROCE_MAD_HDR_LEN, "MAD hdr");
_Static_assert(sizeof(struct path_wire) == 44, "REQ path");
_Static_assert(sizeof(struct req_wire) == ROCE_CM_DATA_LEN, "REQ");
_Static_assert(sizeof(struct mra_wire) == ROCE_CM_DATA_LEN, "MRA");
_Static_assert(sizeof(struct rej_wire) == ROCE_CM_DATA_LEN, "REJ");
_Static_assert(sizeof(struct rep_wire) == ROCE_CM_DATA_LEN, "REP");
_Static_assert(sizeof(struct ids_wire) == ROCE_CM_DATA_LEN, "RTU/DREP");
_Static_assert(sizeof(struct dreq_wire) == ROCE_CM_DATA_LEN, "DREQ");
_Static_assert(sizeof(struct sidr_req_wire) == ROCE_CM_DATA_LEN, "SIDR_REQ");
_Static_assert(sizeof(struct sidr_rep_wire) == ROCE_CM_DATA_LEN, "SIDR_REP");
_Static_assert(sizeof(struct lap_wire) == ROCE_CM_DATA_LEN, "LAP");
_Static_assert(sizeof(struct apr_wire) == ROCE_CM_DATA_LEN, "APR");

#define AT(p, s, f) ((p) + offsetof(struct s, f))

/* Bits [shift, shift + width) of a byte, bit 0 the least significant. */
static unsigned bits(uint8_t byte, unsigned shift, unsigned width)
{
	return (byte >> shift) & ((1u << width) - 1);
}

/*
 * The encoder's cursor: the attribute data of a zeroed MAD, and whether a
 * value did not fit its field. Fields are OR-ed in, so every bit not
 * written stays zero: reserved bits need no code.
 */
struct wr {
	uint8_t *d;
	bool bad;
};

static void put_bits(struct wr *w, uint8_t *byte, unsigned shift,
		     unsigned width, unsigned v)
{
	if (v >> width)
		w->bad = true;
	*byte |= (uint8_t)((v & ((1u << width) - 1)) << shift);
}

/* A 24-bit field in the top three bytes of a 4-byte word. */
static void put_u24(struct wr *w, uint8_t *p, uint32_t v)
{
	if (v >> 24)
		w->bad = true;
	put_be24(p, v & 0xffffff);
}

/* ---- paths ---------------------------------------------------------------- */

static void path_get(const uint8_t *p, struct roce_cm_path *r)
{
	r->local_lid = get_be16(AT(p, path_wire, local_lid));
	r->remote_lid = get_be16(AT(p, path_wire, remote_lid));
	memcpy(r->local_gid, AT(p, path_wire, local_gid), ROCE_CM_GID_LEN);
	memcpy(r->remote_gid, AT(p, path_wire, remote_gid), ROCE_CM_GID_LEN);
	r->flow_label = get_be32(AT(p, path_wire, flow_rate)) >> 12;
	r->rate = bits(p[offsetof(struct path_wire, flow_rate) + 3], 0, 6);
	r->traffic_class = *AT(p, path_wire, traffic_class);
	r->hop_limit = *AT(p, path_wire, hop_limit);
	r->sl = bits(*AT(p, path_wire, sl_byte), 4, 4);
	r->subnet_local = bits(*AT(p, path_wire, sl_byte), 3, 1);
	r->local_ack_timeout = bits(*AT(p, path_wire, ack_byte), 3, 5);
}

static void path_put(struct wr *w, uint8_t *p, const struct roce_cm_path *r)
{
	put_be16(AT(p, path_wire, local_lid), r->local_lid);
	put_be16(AT(p, path_wire, remote_lid), r->remote_lid);
	memcpy(AT(p, path_wire, local_gid), r->local_gid, ROCE_CM_GID_LEN);
	memcpy(AT(p, path_wire, remote_gid), r->remote_gid, ROCE_CM_GID_LEN);
	if (r->flow_label >> 20)
		w->bad = true;
	put_be32(AT(p, path_wire, flow_rate), (r->flow_label & 0xfffff) << 12);
	put_bits(w, p + offsetof(struct path_wire, flow_rate) + 3, 0, 6,
		 r->rate);
	*AT(p, path_wire, traffic_class) = r->traffic_class;
	*AT(p, path_wire, hop_limit) = r->hop_limit;
	put_bits(w, AT(p, path_wire, sl_byte), 4, 4, r->sl);
	put_bits(w, AT(p, path_wire, sl_byte), 3, 1, r->subnet_local);
	put_bits(w, AT(p, path_wire, ack_byte), 3, 5, r->local_ack_timeout);
}

/* ---- REQ ------------------------------------------------------------------ */

static int req_get(const uint8_t *d, struct roce_cm_msg *m)
{
	struct roce_cm_req *r = &m->req;
	uint8_t b;

	r->local_comm_id = get_be32(AT(d, req_wire, local_comm_id));
	r->vendor_id = get_be24(AT(d, req_wire, vendor_id) + 1);
	r->service_id = get_be64(AT(d, req_wire, service_id));
	r->local_ca_guid = get_be64(AT(d, req_wire, ca_guid));
	r->local_qkey = get_be32(AT(d, req_wire, qkey));
	r->local_qpn = get_be24(AT(d, req_wire, qpn_rr));
	r->responder_resources = AT(d, req_wire, qpn_rr)[3];
	r->local_eecn = get_be24(AT(d, req_wire, eecn_id));
	r->initiator_depth = AT(d, req_wire, eecn_id)[3];
	r->remote_eecn = get_be24(AT(d, req_wire, reecn));
	b = AT(d, req_wire, reecn)[3];
	r->remote_cm_response_timeout = bits(b, 3, 5);
	r->transport_type = bits(b, 1, 2);
	r->end_to_end_flow_control = bits(b, 0, 1);
	r->starting_psn = get_be24(AT(d, req_wire, psn));
	b = AT(d, req_wire, psn)[3];
	r->local_cm_response_timeout = bits(b, 3, 5);
	r->retry_count = bits(b, 0, 3);
	r->pkey = get_be16(AT(d, req_wire, pkey));
	b = *AT(d, req_wire, mtu_byte);
	r->path_mtu = bits(b, 4, 4);
	r->rdc_exists = bits(b, 3, 1);
	r->rnr_retry_count = bits(b, 0, 3);
	b = *AT(d, req_wire, retries_byte);
	r->max_cm_retries = bits(b, 4, 4);
	r->srq = bits(b, 3, 1);
	r->extended_transport_type = bits(b, 0, 3);
	path_get(AT(d, req_wire, primary), &r->primary);
	path_get(AT(d, req_wire, alternate), &r->alternate);
	/* SAP supported: bit 2 of the alternate path's last byte */
	r->sap_supported = bits(AT(d, req_wire, alternate)[43], 2, 1);
	return 0;
}

static void req_put(struct wr *w, const struct roce_cm_msg *m)
{
	const struct roce_cm_req *r = &m->req;
	uint8_t *d = w->d;

	put_be32(AT(d, req_wire, local_comm_id), r->local_comm_id);
	put_u24(w, AT(d, req_wire, vendor_id) + 1, r->vendor_id);
	put_be64(AT(d, req_wire, service_id), r->service_id);
	put_be64(AT(d, req_wire, ca_guid), r->local_ca_guid);
	put_be32(AT(d, req_wire, qkey), r->local_qkey);
	put_u24(w, AT(d, req_wire, qpn_rr), r->local_qpn);
	AT(d, req_wire, qpn_rr)[3] = r->responder_resources;
	put_u24(w, AT(d, req_wire, eecn_id), r->local_eecn);
	AT(d, req_wire, eecn_id)[3] = r->initiator_depth;
	put_u24(w, AT(d, req_wire, reecn), r->remote_eecn);
	put_bits(w, AT(d, req_wire, reecn) + 3, 3, 5,
		 r->remote_cm_response_timeout);
	put_bits(w, AT(d, req_wire, reecn) + 3, 1, 2, r->transport_type);
	put_bits(w, AT(d, req_wire, reecn) + 3, 0, 1,
		 r->end_to_end_flow_control);
	put_u24(w, AT(d, req_wire, psn), r->starting_psn);
	put_bits(w, AT(d, req_wire, psn) + 3, 3, 5,
		 r->local_cm_response_timeout);
	put_bits(w, AT(d, req_wire, psn) + 3, 0, 3, r->retry_count);
	put_be16(AT(d, req_wire, pkey), r->pkey);
	put_bits(w, AT(d, req_wire, mtu_byte), 4, 4, r->path_mtu);
	put_bits(w, AT(d, req_wire, mtu_byte), 3, 1, r->rdc_exists);
	put_bits(w, AT(d, req_wire, mtu_byte), 0, 3, r->rnr_retry_count);
	put_bits(w, AT(d, req_wire, retries_byte), 4, 4, r->max_cm_retries);
	put_bits(w, AT(d, req_wire, retries_byte), 3, 1, r->srq);
	put_bits(w, AT(d, req_wire, retries_byte), 0, 3,
		 r->extended_transport_type);
	path_put(w, AT(d, req_wire, primary), &r->primary);
	path_put(w, AT(d, req_wire, alternate), &r->alternate);
	put_bits(w, AT(d, req_wire, alternate) + 43, 2, 1, r->sap_supported);
}

/* ---- MRA, REJ ------------------------------------------------------------- */

static int mra_get(const uint8_t *d, struct roce_cm_msg *m)
{
	m->mra.local_comm_id = get_be32(AT(d, mra_wire, local_comm_id));
	m->mra.remote_comm_id = get_be32(AT(d, mra_wire, remote_comm_id));
	m->mra.msg_mraed = bits(*AT(d, mra_wire, msg_byte), 6, 2);
	m->mra.service_timeout = bits(*AT(d, mra_wire, timeout_byte), 3, 5);
	return 0;
}

static void mra_put(struct wr *w, const struct roce_cm_msg *m)
{
	put_be32(AT(w->d, mra_wire, local_comm_id), m->mra.local_comm_id);
	put_be32(AT(w->d, mra_wire, remote_comm_id), m->mra.remote_comm_id);
	put_bits(w, AT(w->d, mra_wire, msg_byte), 6, 2, m->mra.msg_mraed);
	put_bits(w, AT(w->d, mra_wire, timeout_byte), 3, 5,
		 m->mra.service_timeout);
}

static int rej_get(const uint8_t *d, struct roce_cm_msg *m)
{
	struct roce_cm_rej *r = &m->rej;

	r->ari_len = bits(*AT(d, rej_wire, ari_len_byte), 1, 7);
	if (r->ari_len > ROCE_CM_INFO_MAX)
		return -EINVAL;
	r->local_comm_id = get_be32(AT(d, rej_wire, local_comm_id));
	r->remote_comm_id = get_be32(AT(d, rej_wire, remote_comm_id));
	r->msg_rejected = bits(*AT(d, rej_wire, msg_byte), 6, 2);
	r->reason = get_be16(AT(d, rej_wire, reason));
	memcpy(r->ari, AT(d, rej_wire, ari), ROCE_CM_INFO_MAX);
	return 0;
}

static void rej_put(struct wr *w, const struct roce_cm_msg *m)
{
	const struct roce_cm_rej *r = &m->rej;

	put_be32(AT(w->d, rej_wire, local_comm_id), r->local_comm_id);
	put_be32(AT(w->d, rej_wire, remote_comm_id), r->remote_comm_id);
	put_bits(w, AT(w->d, rej_wire, msg_byte), 6, 2, r->msg_rejected);
	if (r->ari_len > ROCE_CM_INFO_MAX)
		w->bad = true;
	put_bits(w, AT(w->d, rej_wire, ari_len_byte), 1, 7, r->ari_len);
	put_be16(AT(w->d, rej_wire, reason), r->reason);
	memcpy(AT(w->d, rej_wire, ari), r->ari, ROCE_CM_INFO_MAX);
}

/* ---- REP ------------------------------------------------------------------ */

static int rep_get(const uint8_t *d, struct roce_cm_msg *m)
{
	struct roce_cm_rep *r = &m->rep;
	uint8_t b;

	r->local_comm_id = get_be32(AT(d, rep_wire, local_comm_id));
	r->remote_comm_id = get_be32(AT(d, rep_wire, remote_comm_id));
	r->local_qkey = get_be32(AT(d, rep_wire, qkey));
	r->local_qpn = get_be24(AT(d, rep_wire, qpn_vh));
	r->local_eecn = get_be24(AT(d, rep_wire, eecn_vm));
	r->starting_psn = get_be24(AT(d, rep_wire, psn_vl));
	/* the ECE vendor ID fills the byte after each 24-bit field */
	r->vendor_id = (uint32_t)AT(d, rep_wire, qpn_vh)[3] << 16 |
		       (uint32_t)AT(d, rep_wire, eecn_vm)[3] << 8 |
		       AT(d, rep_wire, psn_vl)[3];
	r->responder_resources = *AT(d, rep_wire, responder_resources);
	r->initiator_depth = *AT(d, rep_wire, initiator_depth);
	b = *AT(d, rep_wire, ack_byte);
	r->target_ack_delay = bits(b, 3, 5);
	r->failover_accepted = bits(b, 1, 2);
	r->end_to_end_flow_control = bits(b, 0, 1);
	b = *AT(d, rep_wire, rnr_byte);
	r->rnr_retry_count = bits(b, 5, 3);
	r->srq = bits(b, 4, 1);
	r->local_ca_guid = get_be64(AT(d, rep_wire, ca_guid));
	return 0;
}

static void rep_put(struct wr *w, const struct roce_cm_msg *m)
{
	const struct roce_cm_rep *r = &m->rep;
	uint8_t *d = w->d;

	put_be32(AT(d, rep_wire, local_comm_id), r->local_comm_id);
	put_be32(AT(d, rep_wire, remote_comm_id), r->remote_comm_id);
	put_be32(AT(d, rep_wire, qkey), r->local_qkey);
	put_u24(w, AT(d, rep_wire, qpn_vh), r->local_qpn);
	put_u24(w, AT(d, rep_wire, eecn_vm), r->local_eecn);
	put_u24(w, AT(d, rep_wire, psn_vl), r->starting_psn);
	if (r->vendor_id >> 24)
		w->bad = true;
	AT(d, rep_wire, qpn_vh)[3] = (uint8_t)(r->vendor_id >> 16);
	AT(d, rep_wire, eecn_vm)[3] = (uint8_t)(r->vendor_id >> 8);
	AT(d, rep_wire, psn_vl)[3] = (uint8_t)r->vendor_id;
	*AT(d, rep_wire, responder_resources) = r->responder_resources;
	*AT(d, rep_wire, initiator_depth) = r->initiator_depth;
	put_bits(w, AT(d, rep_wire, ack_byte), 3, 5, r->target_ack_delay);
	put_bits(w, AT(d, rep_wire, ack_byte), 1, 2, r->failover_accepted);
	put_bits(w, AT(d, rep_wire, ack_byte), 0, 1,
		 r->end_to_end_flow_control);
	put_bits(w, AT(d, rep_wire, rnr_byte), 5, 3, r->rnr_retry_count);
	put_bits(w, AT(d, rep_wire, rnr_byte), 4, 1, r->srq);
	put_be64(AT(d, rep_wire, ca_guid), r->local_ca_guid);
}

/* ---- RTU, DREP, DREQ ------------------------------------------------------ */

/* RTU and DREP share their layout and their member type. */
static int ids_get(const uint8_t *d, struct roce_cm_msg *m)
{
	m->rtu.local_comm_id = get_be32(AT(d, ids_wire, local_comm_id));
	m->rtu.remote_comm_id = get_be32(AT(d, ids_wire, remote_comm_id));
	return 0;
}

static void ids_put(struct wr *w, const struct roce_cm_msg *m)
{
	put_be32(AT(w->d, ids_wire, local_comm_id), m->rtu.local_comm_id);
	put_be32(AT(w->d, ids_wire, remote_comm_id), m->rtu.remote_comm_id);
}

static int dreq_get(const uint8_t *d, struct roce_cm_msg *m)
{
	m->dreq.local_comm_id = get_be32(AT(d, dreq_wire, local_comm_id));
	m->dreq.remote_comm_id = get_be32(AT(d, dreq_wire, remote_comm_id));
	m->dreq.remote_qpn = get_be24(AT(d, dreq_wire, qpn));
	return 0;
}

static void dreq_put(struct wr *w, const struct roce_cm_msg *m)
{
	put_be32(AT(w->d, dreq_wire, local_comm_id), m->dreq.local_comm_id);
	put_be32(AT(w->d, dreq_wire, remote_comm_id), m->dreq.remote_comm_id);
	put_u24(w, AT(w->d, dreq_wire, qpn), m->dreq.remote_qpn);
}

/* ---- SIDR ----------------------------------------------------------------- */

static int sidr_req_get(const uint8_t *d, struct roce_cm_msg *m)
{
	m->sidr_req.request_id = get_be32(AT(d, sidr_req_wire, request_id));
	m->sidr_req.pkey = get_be16(AT(d, sidr_req_wire, pkey));
	m->sidr_req.service_id = get_be64(AT(d, sidr_req_wire, service_id));
	return 0;
}

static void sidr_req_put(struct wr *w, const struct roce_cm_msg *m)
{
	put_be32(AT(w->d, sidr_req_wire, request_id), m->sidr_req.request_id);
	put_be16(AT(w->d, sidr_req_wire, pkey), m->sidr_req.pkey);
	put_be64(AT(w->d, sidr_req_wire, service_id), m->sidr_req.service_id);
}

static int sidr_rep_get(const uint8_t *d, struct roce_cm_msg *m)
{
	struct roce_cm_sidr_rep *r = &m->sidr_rep;

	r->info_len = *AT(d, sidr_rep_wire, info_len);
	if (r->info_len > ROCE_CM_INFO_MAX)
		return -EINVAL;
	r->request_id = get_be32(AT(d, sidr_rep_wire, request_id));
	r->status = *AT(d, sidr_rep_wire, status);
	r->vendor_id = (uint32_t)get_be16(AT(d, sidr_rep_wire, vendor_hi))
			       << 8 |
		       AT(d, sidr_rep_wire, qpn_vl)[3];
	r->qpn = get_be24(AT(d, sidr_rep_wire, qpn_vl));
	r->service_id = get_be64(AT(d, sidr_rep_wire, service_id));
	r->qkey = get_be32(AT(d, sidr_rep_wire, qkey));
	memcpy(r->info, AT(d, sidr_rep_wire, info), ROCE_CM_INFO_MAX);
	return 0;
}

static void sidr_rep_put(struct wr *w, const struct roce_cm_msg *m)
{
	const struct roce_cm_sidr_rep *r = &m->sidr_rep;
	uint8_t *d = w->d;

	put_be32(AT(d, sidr_rep_wire, request_id), r->request_id);
	*AT(d, sidr_rep_wire, status) = r->status;
	if (r->info_len > ROCE_CM_INFO_MAX || r->vendor_id >> 24)
		w->bad = true;
	*AT(d, sidr_rep_wire, info_len) = r->info_len;
	put_be16(AT(d, sidr_rep_wire, vendor_hi),
		 (uint16_t)(r->vendor_id >> 8));
	put_u24(w, AT(d, sidr_rep_wire, qpn_vl), r->qpn);
	AT(d, sidr_rep_wire, qpn_vl)[3] = (uint8_t)r->vendor_id;
	put_be64(AT(d, sidr_rep_wire, service_id), r->service_id);
	put_be32(AT(d, sidr_rep_wire, qkey), r->qkey);
	memcpy(AT(d, sidr_rep_wire, info), r->info, ROCE_CM_INFO_MAX);
}

/* ---- LAP, APR (decoded and encoded; rocemu does not migrate paths) -------- */

static int lap_get(const uint8_t *d, struct roce_cm_msg *m)
{
	struct roce_cm_lap *r = &m->lap;
	struct roce_cm_path *p = &r->alternate;

	r->local_comm_id = get_be32(AT(d, lap_wire, local_comm_id));
	r->remote_comm_id = get_be32(AT(d, lap_wire, remote_comm_id));
	r->remote_qpn = get_be24(AT(d, lap_wire, qpn_timeout));
	r->remote_cm_response_timeout =
		bits(AT(d, lap_wire, qpn_timeout)[3], 3, 5);
	p->local_lid = get_be16(AT(d, lap_wire, local_lid));
	p->remote_lid = get_be16(AT(d, lap_wire, remote_lid));
	memcpy(p->local_gid, AT(d, lap_wire, local_gid), ROCE_CM_GID_LEN);
	memcpy(p->remote_gid, AT(d, lap_wire, remote_gid), ROCE_CM_GID_LEN);
	p->flow_label = get_be32(AT(d, lap_wire, flow_tc)) >> 12;
	p->traffic_class = AT(d, lap_wire, flow_tc)[3];
	p->hop_limit = *AT(d, lap_wire, hop_limit);
	p->rate = bits(*AT(d, lap_wire, rate_byte), 0, 6);
	p->sl = bits(*AT(d, lap_wire, sl_byte), 4, 4);
	p->subnet_local = bits(*AT(d, lap_wire, sl_byte), 3, 1);
	p->local_ack_timeout = bits(*AT(d, lap_wire, ack_byte), 3, 5);
	return 0;
}

static void lap_put(struct wr *w, const struct roce_cm_msg *m)
{
	const struct roce_cm_lap *r = &m->lap;
	const struct roce_cm_path *p = &r->alternate;
	uint8_t *d = w->d;

	put_be32(AT(d, lap_wire, local_comm_id), r->local_comm_id);
	put_be32(AT(d, lap_wire, remote_comm_id), r->remote_comm_id);
	put_u24(w, AT(d, lap_wire, qpn_timeout), r->remote_qpn);
	put_bits(w, AT(d, lap_wire, qpn_timeout) + 3, 3, 5,
		 r->remote_cm_response_timeout);
	put_be16(AT(d, lap_wire, local_lid), p->local_lid);
	put_be16(AT(d, lap_wire, remote_lid), p->remote_lid);
	memcpy(AT(d, lap_wire, local_gid), p->local_gid, ROCE_CM_GID_LEN);
	memcpy(AT(d, lap_wire, remote_gid), p->remote_gid, ROCE_CM_GID_LEN);
	if (p->flow_label >> 20)
		w->bad = true;
	put_be32(AT(d, lap_wire, flow_tc), (p->flow_label & 0xfffff) << 12);
	AT(d, lap_wire, flow_tc)[3] = p->traffic_class;
	*AT(d, lap_wire, hop_limit) = p->hop_limit;
	put_bits(w, AT(d, lap_wire, rate_byte), 0, 6, p->rate);
	put_bits(w, AT(d, lap_wire, sl_byte), 4, 4, p->sl);
	put_bits(w, AT(d, lap_wire, sl_byte), 3, 1, p->subnet_local);
	put_bits(w, AT(d, lap_wire, ack_byte), 3, 5, p->local_ack_timeout);
}

static int apr_get(const uint8_t *d, struct roce_cm_msg *m)
{
	struct roce_cm_apr *r = &m->apr;

	r->info_len = *AT(d, apr_wire, info_len);
	if (r->info_len > ROCE_CM_INFO_MAX)
		return -EINVAL;
	r->local_comm_id = get_be32(AT(d, apr_wire, local_comm_id));
	r->remote_comm_id = get_be32(AT(d, apr_wire, remote_comm_id));
	r->ap_status = *AT(d, apr_wire, ap_status);
	memcpy(r->info, AT(d, apr_wire, info), ROCE_CM_INFO_MAX);
	return 0;
}

static void apr_put(struct wr *w, const struct roce_cm_msg *m)
{
	const struct roce_cm_apr *r = &m->apr;

	put_be32(AT(w->d, apr_wire, local_comm_id), r->local_comm_id);
	put_be32(AT(w->d, apr_wire, remote_comm_id), r->remote_comm_id);
	if (r->info_len > ROCE_CM_INFO_MAX)
		w->bad = true;
	*AT(w->d, apr_wire, info_len) = r->info_len;
	*AT(w->d, apr_wire, ap_status) = r->ap_status;
	memcpy(AT(w->d, apr_wire, info), r->info, ROCE_CM_INFO_MAX);
}

/* ---- the table and the entry points --------------------------------------- */

/* Per attribute: where its private data starts, how long it is, its codec. */
static const struct cm_attr {
	uint16_t priv_off, priv_len;
	int (*get)(const uint8_t *d, struct roce_cm_msg *m);
	void (*put)(struct wr *w, const struct roce_cm_msg *m);
} attrs[] = {
#define ATTR(id, s, get, put)                                              \
	[ROCE_CM_ATTR_##id - ROCE_CM_ATTR_REQ] = {                         \
		offsetof(struct s, priv), ROCE_CM_##id##_PRIV_LEN, get, put \
	}
	ATTR(REQ, req_wire, req_get, req_put),
	ATTR(MRA, mra_wire, mra_get, mra_put),
	ATTR(REJ, rej_wire, rej_get, rej_put),
	ATTR(REP, rep_wire, rep_get, rep_put),
	ATTR(RTU, ids_wire, ids_get, ids_put),
	ATTR(DREQ, dreq_wire, dreq_get, dreq_put),
	ATTR(DREP, ids_wire, ids_get, ids_put),
	ATTR(SIDR_REQ, sidr_req_wire, sidr_req_get, sidr_req_put),
	ATTR(SIDR_REP, sidr_rep_wire, sidr_rep_get, sidr_rep_put),
	ATTR(LAP, lap_wire, lap_get, lap_put),
	ATTR(APR, apr_wire, apr_get, apr_put),
#undef ATTR
};

static const struct cm_attr *attr_of(uint16_t attr_id)
{
	unsigned i = (unsigned)attr_id - ROCE_CM_ATTR_REQ;

	return attr_id >= ROCE_CM_ATTR_REQ &&
			       i < sizeof(attrs) / sizeof(attrs[0]) ?
		       &attrs[i] :
		       NULL;
}

unsigned roce_cm_priv_len(uint16_t attr_id)
{
	const struct cm_attr *a = attr_of(attr_id);

	return a ? a->priv_len : 0;
}

int roce_mad_hdr_parse(const uint8_t *mad, size_t len, struct roce_mad_hdr *out)
{
	if (len < ROCE_MAD_HDR_LEN)
		return -EMSGSIZE;
	out->base_version = *AT(mad, mad_hdr_wire, base_version);
	out->mgmt_class = *AT(mad, mad_hdr_wire, mgmt_class);
	out->class_version = *AT(mad, mad_hdr_wire, class_version);
	out->method = *AT(mad, mad_hdr_wire, method);
	out->status = get_be16(AT(mad, mad_hdr_wire, status));
	out->class_specific = get_be16(AT(mad, mad_hdr_wire, class_specific));
	out->tid = get_be64(AT(mad, mad_hdr_wire, tid));
	out->attr_id = get_be16(AT(mad, mad_hdr_wire, attr_id));
	out->resv = get_be16(AT(mad, mad_hdr_wire, resv));
	out->attr_mod = get_be32(AT(mad, mad_hdr_wire, attr_mod));
	return 0;
}

int roce_mad_hdr_write(const struct roce_mad_hdr *h, uint8_t *mad, size_t len)
{
	if (len < ROCE_MAD_HDR_LEN)
		return -EMSGSIZE;
	*AT(mad, mad_hdr_wire, base_version) = h->base_version;
	*AT(mad, mad_hdr_wire, mgmt_class) = h->mgmt_class;
	*AT(mad, mad_hdr_wire, class_version) = h->class_version;
	*AT(mad, mad_hdr_wire, method) = h->method;
	put_be16(AT(mad, mad_hdr_wire, status), h->status);
	put_be16(AT(mad, mad_hdr_wire, class_specific), h->class_specific);
	put_be64(AT(mad, mad_hdr_wire, tid), h->tid);
	put_be16(AT(mad, mad_hdr_wire, attr_id), h->attr_id);
	put_be16(AT(mad, mad_hdr_wire, resv), h->resv);
	put_be32(AT(mad, mad_hdr_wire, attr_mod), h->attr_mod);
	return 0;
}

/* The checks Linux's MAD layer and ib_cm make before a CM handler runs. */
static bool is_cm_send(const struct roce_mad_hdr *h)
{
	return h->base_version == ROCE_MAD_BASE_VERSION &&
	       h->mgmt_class == ROCE_MGMT_CLASS_CM &&
	       h->class_version == ROCE_CM_CLASS_VERSION &&
	       h->method == ROCE_MAD_METHOD_SEND;
}

int roce_cm_decode(const uint8_t *mad, size_t len, struct roce_cm_msg *out)
{
	struct roce_mad_hdr h;
	struct roce_cm_msg m;
	const struct cm_attr *a;
	const uint8_t *d = mad + ROCE_MAD_HDR_LEN;

	if (len != ROCE_MAD_LEN)
		return -EMSGSIZE;
	roce_mad_hdr_parse(mad, len, &h);
	a = attr_of(h.attr_id);
	if (!is_cm_send(&h) || !a)
		return -EPROTO;
	memset(&m, 0, sizeof(m));
	m.attr_id = h.attr_id;
	m.tid = h.tid;
	m.status = h.status;
	m.class_specific = h.class_specific;
	m.attr_mod = h.attr_mod;
	int rc = a->get(d, &m);
	if (rc)
		return rc;
	m.priv_len = a->priv_len;
	memcpy(m.priv, d + a->priv_off, a->priv_len);
	*out = m;
	return 0;
}

int roce_cm_encode(const struct roce_cm_msg *m, uint8_t mad[ROCE_MAD_LEN])
{
	uint8_t buf[ROCE_MAD_LEN] = { 0 };
	struct wr w = { buf + ROCE_MAD_HDR_LEN, false };
	const struct cm_attr *a = attr_of(m->attr_id);

	if (!a || m->priv_len > a->priv_len)
		return -EINVAL;
	const struct roce_mad_hdr h = {
		.base_version = ROCE_MAD_BASE_VERSION,
		.mgmt_class = ROCE_MGMT_CLASS_CM,
		.class_version = ROCE_CM_CLASS_VERSION,
		.method = ROCE_MAD_METHOD_SEND,
		.status = m->status,
		.class_specific = m->class_specific,
		.tid = m->tid,
		.attr_id = m->attr_id,
		.attr_mod = m->attr_mod,
	};
	roce_mad_hdr_write(&h, buf, sizeof(buf));
	a->put(&w, m);
	if (w.bad)
		return -EINVAL;
	memcpy(w.d + a->priv_off, m->priv, m->priv_len);
	memcpy(mad, buf, sizeof(buf));
	return ROCE_MAD_LEN;
}
