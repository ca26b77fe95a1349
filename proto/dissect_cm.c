/* SPDX-License-Identifier: MIT */
/* MADs on QP1 in the renderings: the MAD header, the CM message's fields, the IP CM header. */
#include <errno.h>
#include <stddef.h>

#include "dissect_local.h"

#define V(m) offsetof(struct roce_mad_view, m)
#define SIZE(m) sizeof(((struct roce_mad_view *)0)->m)
/* A field of the view: text hex digits (0: decimal), the first of a
 * header on a line of its own (FT_BRK), 64-bit ones as JSON strings. */
#define MF(k, m, h, t) \
	{ k, V(m), SIZE(m), h, (h) == 16 ? FJ_HEX : FJ_NUM, t, NULL, NULL }
#define M1(k, m, h) MF(k, m, h, FT_BRK)
#define M(k, m, h) MF(k, m, h, FT_SP2)
#define MB(k, m) { k, V(m), SIZE(m), 0, FJ_BOOL, FT_SP2, NULL, NULL }
#define N(a) (sizeof(a) / sizeof(a[0]))

int roce_frame_mad(const struct roce_frame *f, struct roce_mad_view *v)
{
	const struct roce_ib *ib = &f->ib;

	if (!ib->has_bth || ib->bth.opcode != ROCE_OP_UD_SEND_ONLY ||
	    ib->bth.dqpn != ROCE_CM_QPN || !(ib->exts & ROCE_EXT_DETH) ||
	    ib->deth.qkey != ROCE_CM_QP1_QKEY || !ib->payload ||
	    ib->payload_avail < ROCE_MAD_HDR_LEN)
		return -ENOENT;
	struct roce_mad_view m = { 0 };
	if (roce_mad_hdr_parse(ib->payload, ib->payload_avail, &m.hdr))
		return -ENOENT;
	if (m.hdr.mgmt_class != ROCE_MGMT_CLASS_CM) {
		m.kind = ROCE_MAD_OTHER;
		*v = m;
		return 0;
	}
	m.kind = ROCE_MAD_CM_BAD;
	if (ib->payload_len != ROCE_MAD_LEN) {
		m.err = -EMSGSIZE;
		m.why = "payload is not the 256 bytes of a MAD";
	} else if (ib->payload_avail < ROCE_MAD_LEN) {
		m.err = -EMSGSIZE;
		m.why = "MAD cut short by the capture";
	} else {
		m.err = roce_cm_decode(ib->payload, ROCE_MAD_LEN, &m.cm);
		if (!m.err)
			m.kind = ROCE_MAD_CM;
		else if (m.hdr.base_version != ROCE_MAD_BASE_VERSION)
			m.why = "base version not 1";
		else if (m.hdr.class_version != ROCE_CM_CLASS_VERSION)
			m.why = "class version not 2";
		else if (m.hdr.method != ROCE_MAD_METHOD_SEND)
			m.why = "method not Send (0x03)";
		else if (m.err == -EPROTO)
			m.why = "attribute ID not a CM message";
		else
			m.why = "an information length above 72";
	}
	if (m.kind == ROCE_MAD_CM &&
	    (m.cm.attr_id == ROCE_CM_ATTR_REQ ||
	     m.cm.attr_id == ROCE_CM_ATTR_SIDR_REQ))
		m.has_ip = roce_cm_ip_hdr_parse(m.cm.priv, m.cm.priv_len,
						&m.ip) == 0;
	*v = m;
	return 0;
}

/* ---- the field tables ---------------------------------------------- */

static void text_mad(struct roce_sb *sb, const void *base)
{
	const struct roce_mad_view *v = base;

	sb_putc(sb, ' ');
	if (v->kind == ROCE_MAD_OTHER) {
		sb_kv_hex(sb, "class ", v->hdr.mgmt_class, 2);
		return;
	}
	sb_puts(sb, "CM ");
	sb_puts(sb, roce_cm_attr_name(v->hdr.attr_id));
	if (v->kind == ROCE_MAD_CM_BAD) {
		sb_puts(sb, ", undecodable: ");
		sb_puts(sb, v->why);
	}
}

static void json_mad(struct roce_sb *sb, const void *base)
{
	const struct roce_mad_view *v = base;

	if (v->kind == ROCE_MAD_OTHER)
		return;
	sb_puts(sb, ",\"attr_name\":\"");
	sb_puts(sb, roce_cm_attr_name(v->hdr.attr_id));
	sb_putc(sb, '"');
	if (v->kind == ROCE_MAD_CM_BAD) {
		sb_puts(sb, ",\"error\":\"");
		sb_puts(sb, v->why);
		sb_putc(sb, '"');
	}
}

static const struct hdr_field mad_f[] = {
	M1("base_version", hdr.base_version, 0),
	M("mgmt_class", hdr.mgmt_class, 2),
	M("class_version", hdr.class_version, 0),
	M("method", hdr.method, 2), M("status", hdr.status, 4),
	M("class_specific", hdr.class_specific, 4),
	M1("tid", hdr.tid, 16), M("attr_id", hdr.attr_id, 4),
	M("attr_mod", hdr.attr_mod, 8),
};

static const struct hdr_desc mad_d = { 0, "mad", "MAD", mad_f, N(mad_f),
				       text_mad, json_mad };

static void text_reason(struct roce_sb *sb, uint64_t v)
{
	sb_puts(sb, " (");
	sb_puts(sb, roce_cm_rej_reason_name((unsigned)v));
	sb_putc(sb, ')');
}

static void json_reason(struct roce_sb *sb, uint64_t v)
{
	sb_puts(sb, ",\"reason_name\":\"");
	sb_puts(sb, roce_cm_rej_reason_name((unsigned)v));
	sb_putc(sb, '"');
}

static void text_sidr(struct roce_sb *sb, uint64_t v)
{
	sb_puts(sb, " (");
	sb_puts(sb, roce_cm_sidr_status_name((unsigned)v));
	sb_putc(sb, ')');
}

static void json_sidr(struct roce_sb *sb, uint64_t v)
{
	sb_puts(sb, ",\"status_name\":\"");
	sb_puts(sb, roce_cm_sidr_status_name((unsigned)v));
	sb_putc(sb, '"');
}

static const struct hdr_field req_f[] = {
	M1("local_comm_id", cm.req.local_comm_id, 8),
	M("service_id", cm.req.service_id, 16),
	M("local_ca_guid", cm.req.local_ca_guid, 16),
	M1("local_qkey", cm.req.local_qkey, 8),
	M("local_qpn", cm.req.local_qpn, 6),
	M("responder_resources", cm.req.responder_resources, 0),
	M("initiator_depth", cm.req.initiator_depth, 0),
	M1("local_eecn", cm.req.local_eecn, 6),
	M("remote_eecn", cm.req.remote_eecn, 6),
	M("vendor_id", cm.req.vendor_id, 6),
	M1("remote_cm_response_timeout", cm.req.remote_cm_response_timeout, 0),
	M("transport_type", cm.req.transport_type, 0),
	MB("end_to_end_flow_control", cm.req.end_to_end_flow_control),
	M1("starting_psn", cm.req.starting_psn, 6),
	M("local_cm_response_timeout", cm.req.local_cm_response_timeout, 0),
	M("retry_count", cm.req.retry_count, 0),
	M1("pkey", cm.req.pkey, 4), M("path_mtu", cm.req.path_mtu, 0),
	MB("rdc_exists", cm.req.rdc_exists),
	M("rnr_retry_count", cm.req.rnr_retry_count, 0),
	M1("max_cm_retries", cm.req.max_cm_retries, 0),
	MB("srq", cm.req.srq),
	M("extended_transport_type", cm.req.extended_transport_type, 0),
};

/* The primary path of a REQ: its GIDs as prose, its numbers as fields. */
static void text_path(struct roce_sb *sb, const void *base)
{
	const struct roce_mad_view *v = base;

	sb_puts(sb, " local ");
	roce_fmt_gid(sb, v->cm.req.primary.local_gid);
	sb_puts(sb, " remote ");
	roce_fmt_gid(sb, v->cm.req.primary.remote_gid);
}

static void json_path(struct roce_sb *sb, const void *base)
{
	const struct roce_mad_view *v = base;

	sb_puts(sb, ",\"local_gid\":\"");
	roce_fmt_gid(sb, v->cm.req.primary.local_gid);
	sb_puts(sb, "\",\"remote_gid\":\"");
	roce_fmt_gid(sb, v->cm.req.primary.remote_gid);
	sb_putc(sb, '"');
}

static const struct hdr_field path_f[] = {
	M1("local_lid", cm.req.primary.local_lid, 4),
	M("remote_lid", cm.req.primary.remote_lid, 4),
	M("flow_label", cm.req.primary.flow_label, 5),
	M("rate", cm.req.primary.rate, 0),
	M1("traffic_class", cm.req.primary.traffic_class, 2),
	M("hop_limit", cm.req.primary.hop_limit, 0),
	M("sl", cm.req.primary.sl, 0),
	MB("subnet_local", cm.req.primary.subnet_local),
	M("local_ack_timeout", cm.req.primary.local_ack_timeout, 0),
};

static const struct hdr_field mra_f[] = {
	M1("local_comm_id", cm.mra.local_comm_id, 8),
	M("remote_comm_id", cm.mra.remote_comm_id, 8),
	M("msg_mraed", cm.mra.msg_mraed, 0),
	M("service_timeout", cm.mra.service_timeout, 0),
};

static const struct hdr_field rej_f[] = {
	M1("local_comm_id", cm.rej.local_comm_id, 8),
	M("remote_comm_id", cm.rej.remote_comm_id, 8),
	M("msg_rejected", cm.rej.msg_rejected, 0),
	M("ari_len", cm.rej.ari_len, 0),
	{ "reason", V(cm.rej.reason), SIZE(cm.rej.reason), 0, FJ_NUM, FT_SP2,
	  text_reason, json_reason },
};

static const struct hdr_field rep_f[] = {
	M1("local_comm_id", cm.rep.local_comm_id, 8),
	M("remote_comm_id", cm.rep.remote_comm_id, 8),
	M("local_qkey", cm.rep.local_qkey, 8),
	M1("local_qpn", cm.rep.local_qpn, 6),
	M("local_eecn", cm.rep.local_eecn, 6),
	M("starting_psn", cm.rep.starting_psn, 6),
	M("vendor_id", cm.rep.vendor_id, 6),
	M1("responder_resources", cm.rep.responder_resources, 0),
	M("initiator_depth", cm.rep.initiator_depth, 0),
	M("target_ack_delay", cm.rep.target_ack_delay, 0),
	M("failover_accepted", cm.rep.failover_accepted, 0),
	MB("end_to_end_flow_control", cm.rep.end_to_end_flow_control),
	M1("rnr_retry_count", cm.rep.rnr_retry_count, 0),
	MB("srq", cm.rep.srq),
	M("local_ca_guid", cm.rep.local_ca_guid, 16),
};

/* RTU and DREP: the two comm IDs only, one struct roce_cm_ids (the
 * union's rtu and drep members lie at the same place), as the codec
 * reads both. */
static const struct hdr_field ids_f[] = {
	M1("local_comm_id", cm.rtu.local_comm_id, 8),
	M("remote_comm_id", cm.rtu.remote_comm_id, 8),
};

static const struct hdr_field dreq_f[] = {
	M1("local_comm_id", cm.dreq.local_comm_id, 8),
	M("remote_comm_id", cm.dreq.remote_comm_id, 8),
	M("remote_qpn", cm.dreq.remote_qpn, 6),
};

static const struct hdr_field sidr_req_f[] = {
	M1("request_id", cm.sidr_req.request_id, 8),
	M("pkey", cm.sidr_req.pkey, 4),
	M("service_id", cm.sidr_req.service_id, 16),
};

static const struct hdr_field sidr_rep_f[] = {
	M1("request_id", cm.sidr_rep.request_id, 8),
	{ "status", V(cm.sidr_rep.status), SIZE(cm.sidr_rep.status), 0,
	  FJ_NUM, FT_SP2, text_sidr, json_sidr },
	M("info_len", cm.sidr_rep.info_len, 0),
	M1("qpn", cm.sidr_rep.qpn, 6), M("qkey", cm.sidr_rep.qkey, 8),
	M("service_id", cm.sidr_rep.service_id, 16),
	M("vendor_id", cm.sidr_rep.vendor_id, 6),
};

static const struct hdr_field lap_f[] = {
	M1("local_comm_id", cm.lap.local_comm_id, 8),
	M("remote_comm_id", cm.lap.remote_comm_id, 8),
	M("remote_qpn", cm.lap.remote_qpn, 6),
	M("remote_cm_response_timeout", cm.lap.remote_cm_response_timeout, 0),
};

static const struct hdr_field apr_f[] = {
	M1("local_comm_id", cm.apr.local_comm_id, 8),
	M("remote_comm_id", cm.apr.remote_comm_id, 8),
	M("info_len", cm.apr.info_len, 0), M("ap_status", cm.apr.ap_status, 0),
};

/* The tree names the message after "CM:"; the JSON in "cm.attr_name"
 * of the MAD object already. */
static void text_cm(struct roce_sb *sb, const void *base)
{
	const struct roce_mad_view *v = base;

	sb_putc(sb, ' ');
	sb_puts(sb, roce_cm_attr_name(v->cm.attr_id));
}

#define CM(f) { 0, "cm", "CM", f, N(f), text_cm, NULL }
/* By attribute ID less ROCE_CM_ATTR_REQ. */
static const struct hdr_desc cm_d[] = {
	CM(req_f), CM(mra_f), CM(rej_f), CM(rep_f), CM(ids_f), CM(dreq_f),
	CM(ids_f), CM(sidr_req_f), CM(sidr_rep_f), CM(lap_f), CM(apr_f),
};

static const struct hdr_desc path_d = { 0, "cm_path", "CM_PATH", path_f,
					N(path_f), text_path, json_path };

/* The Annex A11 header: addresses as prose, as the IP header's are. */
static void text_ip(struct roce_sb *sb, const void *base)
{
	const struct roce_mad_view *v = base;
	uint8_t g[16] = { [10] = 0xff, [11] = 0xff };

	sb_putc(sb, ' ');
	for (int i = 0; i < 2; i++) {
		const uint8_t *a = i ? v->ip.dst.v6 : v->ip.src.v6;
		if (v->ip.ip_version == 4) {
			roce_gid_from_ipv4(g, a);
			roce_fmt_gid(sb, g);
		} else {
			roce_fmt_gid(sb, a);
		}
		if (!i)
			sb_puts(sb, " > ");
	}
}

static void json_ip(struct roce_sb *sb, const void *base)
{
	const struct roce_mad_view *v = base;

	sb_puts(sb, ",\"src\":\"");
	uint8_t g[16] = { [10] = 0xff, [11] = 0xff };
	for (int i = 0; i < 2; i++) {
		const uint8_t *a = i ? v->ip.dst.v6 : v->ip.src.v6;
		if (i)
			sb_puts(sb, "\",\"dst\":\"");
		if (v->ip.ip_version == 4) {
			roce_gid_from_ipv4(g, a);
			roce_fmt_gid(sb, g);
		} else {
			roce_fmt_gid(sb, a);
		}
	}
	sb_putc(sb, '"');
}

static const struct hdr_field ip_f[] = {
	M1("version", ip.version, 0), M("ip_version", ip.ip_version, 0),
	M("src_port", ip.src_port, 0),
};

static const struct hdr_desc ip_d = { 0, "ip_cm", "IP_CM", ip_f, N(ip_f),
				      text_ip, json_ip };

const struct hdr_desc *roce_mad_next(const struct roce_mad_view *v,
				     unsigned *pos)
{
	unsigned i = (*pos)++;
	uint16_t a = v->cm.attr_id;

	if (i == 0)
		return &mad_d;
	if (v->kind != ROCE_MAD_CM || a < ROCE_CM_ATTR_REQ ||
	    a > ROCE_CM_ATTR_APR)
		return NULL;
	if (i == 1)
		return &cm_d[a - ROCE_CM_ATTR_REQ];
	if (i == 2 && a == ROCE_CM_ATTR_REQ)
		return &path_d;
	if (i <= 3 && v->has_ip) {
		*pos = 4;
		return &ip_d;
	}
	return NULL;
}

/* ---- the summary ---------------------------------------------------- */

static void ids(struct roce_sb *sb, uint32_t local, uint32_t remote)
{
	sb_kv_hex(sb, " comm ", local, 8);
	sb_kv_hex(sb, " remote ", remote, 8);
}

static void summary_full(struct roce_sb *sb, const struct roce_cm_msg *m)
{
	switch (m->attr_id) {
	case ROCE_CM_ATTR_REQ:
		sb_kv_hex(sb, " comm ", m->req.local_comm_id, 8);
		sb_kv_hex(sb, " sid ", m->req.service_id, 16);
		sb_kv_hex(sb, " qpn ", m->req.local_qpn, 6);
		sb_kv_hex(sb, " psn ", m->req.starting_psn, 6);
		break;
	case ROCE_CM_ATTR_MRA:
		ids(sb, m->mra.local_comm_id, m->mra.remote_comm_id);
		sb_kv_u64(sb, " timeout ", m->mra.service_timeout);
		break;
	case ROCE_CM_ATTR_REJ:
		sb_kv_u64(sb, " reason ", m->rej.reason);
		text_reason(sb, m->rej.reason);
		ids(sb, m->rej.local_comm_id, m->rej.remote_comm_id);
		break;
	case ROCE_CM_ATTR_REP:
		ids(sb, m->rep.local_comm_id, m->rep.remote_comm_id);
		sb_kv_hex(sb, " qpn ", m->rep.local_qpn, 6);
		sb_kv_hex(sb, " psn ", m->rep.starting_psn, 6);
		break;
	case ROCE_CM_ATTR_RTU:
	case ROCE_CM_ATTR_DREP:
		ids(sb, m->rtu.local_comm_id, m->rtu.remote_comm_id);
		break;
	case ROCE_CM_ATTR_DREQ:
		ids(sb, m->dreq.local_comm_id, m->dreq.remote_comm_id);
		sb_kv_hex(sb, " qpn ", m->dreq.remote_qpn, 6);
		break;
	case ROCE_CM_ATTR_SIDR_REQ:
		sb_kv_hex(sb, " req ", m->sidr_req.request_id, 8);
		sb_kv_hex(sb, " sid ", m->sidr_req.service_id, 16);
		break;
	case ROCE_CM_ATTR_SIDR_REP:
		sb_kv_hex(sb, " req ", m->sidr_rep.request_id, 8);
		sb_kv_u64(sb, " status ", m->sidr_rep.status);
		text_sidr(sb, m->sidr_rep.status);
		sb_kv_hex(sb, " qpn ", m->sidr_rep.qpn, 6);
		sb_kv_hex(sb, " qkey ", m->sidr_rep.qkey, 8);
		break;
	case ROCE_CM_ATTR_LAP:
		ids(sb, m->lap.local_comm_id, m->lap.remote_comm_id);
		break;
	default:
		ids(sb, m->apr.local_comm_id, m->apr.remote_comm_id);
		break;
	}
}

/* k, then v in hex with no leading zeros: "qpn 0x12". */
static void hexmin(struct roce_sb *sb, const char *k, uint64_t v)
{
	unsigned digits = 1;

	for (uint64_t t = v >> 4; t; t >>= 4)
		digits++;
	sb_kv_hex(sb, k, v, digits);
}

static void summary_brief(struct roce_sb *sb, const struct roce_cm_msg *m)
{
	switch (m->attr_id) {
	case ROCE_CM_ATTR_REQ:
		hexmin(sb, " qpn ", m->req.local_qpn);
		hexmin(sb, " psn ", m->req.starting_psn);
		break;
	case ROCE_CM_ATTR_REP:
		hexmin(sb, " qpn ", m->rep.local_qpn);
		hexmin(sb, " psn ", m->rep.starting_psn);
		break;
	case ROCE_CM_ATTR_REJ:
		sb_kv_u64(sb, " ", m->rej.reason);
		break;
	case ROCE_CM_ATTR_SIDR_REP:
		sb_kv_u64(sb, " ", m->sidr_rep.status);
		hexmin(sb, " qpn ", m->sidr_rep.qpn);
		break;
	default:
		break;
	}
}

void roce_fmt_mad_summary(struct roce_sb *sb, const struct roce_mad_view *v,
			  bool brief)
{
	if (v->kind == ROCE_MAD_OTHER) {
		sb_kv_hex(sb, "MAD class ", v->hdr.mgmt_class, 2);
		sb_kv_hex(sb, " method ", v->hdr.method, 2);
		sb_kv_hex(sb, " attr ", v->hdr.attr_id, 4);
		if (!brief)
			sb_kv_hex(sb, " tid ", v->hdr.tid, 16);
		return;
	}
	sb_puts(sb, "CM ");
	sb_puts(sb, roce_cm_attr_name(v->hdr.attr_id));
	if (v->kind == ROCE_MAD_CM_BAD) {
		sb_puts(sb, " undecodable");
		if (!brief) {
			sb_puts(sb, ": ");
			sb_puts(sb, v->why);
		}
		return;
	}
	if (brief) {
		summary_brief(sb, &v->cm);
		return;
	}
	summary_full(sb, &v->cm);
	sb_kv_hex(sb, " tid ", v->hdr.tid, 16);
}
