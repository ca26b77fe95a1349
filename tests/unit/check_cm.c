/* SPDX-License-Identifier: MIT */
/* The CM codec against MADs written out by hand, round trips at the fields' limits, and lies. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "rocemu/cm.h"
#include "cm_known.h"

/* Also in check_suites.h; declared here so that this file needs no include path. */
Suite *cm_suite(void);

#define EQ(f) ck_assert_uint_eq(a->f, b->f)
#define EQB(f) ck_assert_mem_eq(a->f, b->f, sizeof(a->f))

/* Field-by-field equality of two decoded messages (padding not compared). */
static void path_eq(const struct roce_cm_path *a, const struct roce_cm_path *b)
{
	EQ(local_lid); EQ(remote_lid); EQB(local_gid); EQB(remote_gid);
	EQ(flow_label); EQ(rate); EQ(traffic_class); EQ(hop_limit); EQ(sl);
	EQ(subnet_local); EQ(local_ack_timeout);
}

static void req_eq(const struct roce_cm_req *a, const struct roce_cm_req *b)
{
	EQ(local_comm_id); EQ(vendor_id); EQ(service_id); EQ(local_ca_guid);
	EQ(local_qkey); EQ(local_qpn); EQ(responder_resources);
	EQ(local_eecn); EQ(initiator_depth); EQ(remote_eecn);
	EQ(remote_cm_response_timeout); EQ(transport_type);
	EQ(end_to_end_flow_control); EQ(starting_psn);
	EQ(local_cm_response_timeout); EQ(retry_count); EQ(pkey);
	EQ(path_mtu); EQ(rdc_exists); EQ(rnr_retry_count); EQ(max_cm_retries);
	EQ(srq); EQ(extended_transport_type); EQ(sap_supported);
	path_eq(&a->primary, &b->primary);
	path_eq(&a->alternate, &b->alternate);
}

static void rep_eq(const struct roce_cm_rep *a, const struct roce_cm_rep *b)
{
	EQ(local_comm_id); EQ(remote_comm_id); EQ(local_qkey); EQ(local_qpn);
	EQ(vendor_id); EQ(local_eecn); EQ(starting_psn);
	EQ(responder_resources); EQ(initiator_depth); EQ(target_ack_delay);
	EQ(failover_accepted); EQ(end_to_end_flow_control);
	EQ(rnr_retry_count); EQ(srq); EQ(local_ca_guid);
}

static void body_eq(const struct roce_cm_msg *x, const struct roce_cm_msg *y)
{
	switch (x->attr_id) {
	case ROCE_CM_ATTR_REQ:
		req_eq(&x->req, &y->req);
		break;
	case ROCE_CM_ATTR_MRA: {
		const struct roce_cm_mra *a = &x->mra, *b = &y->mra;
		EQ(local_comm_id); EQ(remote_comm_id); EQ(msg_mraed);
		EQ(service_timeout);
		break;
	}
	case ROCE_CM_ATTR_REJ: {
		const struct roce_cm_rej *a = &x->rej, *b = &y->rej;
		EQ(local_comm_id); EQ(remote_comm_id); EQ(msg_rejected);
		EQ(ari_len); EQ(reason); EQB(ari);
		break;
	}
	case ROCE_CM_ATTR_REP:
		rep_eq(&x->rep, &y->rep);
		break;
	case ROCE_CM_ATTR_RTU:
	case ROCE_CM_ATTR_DREP: {
		const struct roce_cm_ids *a = &x->rtu, *b = &y->rtu;
		EQ(local_comm_id); EQ(remote_comm_id);
		break;
	}
	case ROCE_CM_ATTR_DREQ: {
		const struct roce_cm_dreq *a = &x->dreq, *b = &y->dreq;
		EQ(local_comm_id); EQ(remote_comm_id); EQ(remote_qpn);
		break;
	}
	case ROCE_CM_ATTR_SIDR_REQ: {
		const struct roce_cm_sidr_req *a = &x->sidr_req,
					      *b = &y->sidr_req;
		EQ(request_id); EQ(pkey); EQ(service_id);
		break;
	}
	case ROCE_CM_ATTR_SIDR_REP: {
		const struct roce_cm_sidr_rep *a = &x->sidr_rep,
					      *b = &y->sidr_rep;
		EQ(request_id); EQ(status); EQ(info_len); EQ(vendor_id); EQ(qpn);
		EQ(service_id); EQ(qkey); EQB(info);
		break;
	}
	case ROCE_CM_ATTR_LAP: {
		const struct roce_cm_lap *a = &x->lap, *b = &y->lap;
		EQ(local_comm_id); EQ(remote_comm_id); EQ(remote_qpn);
		EQ(remote_cm_response_timeout);
		path_eq(&a->alternate, &b->alternate);
		break;
	}
	case ROCE_CM_ATTR_APR: {
		const struct roce_cm_apr *a = &x->apr, *b = &y->apr;
		EQ(local_comm_id); EQ(remote_comm_id); EQ(info_len);
		EQ(ap_status); EQB(info);
		break;
	}
	default:
		ck_abort_msg("attribute 0x%x", x->attr_id);
	}
}

static void msg_eq(const struct roce_cm_msg *a, const struct roce_cm_msg *b)
{
	EQ(attr_id); EQ(tid); EQ(status); EQ(class_specific); EQ(attr_mod);
	EQ(priv_len);
	ck_assert_mem_eq(a->priv, b->priv, a->priv_len);
	body_eq(a, b);
}

/* Decodes a known image, checks that encoding it gives the image back. */
static void decode_known(const uint8_t *img, struct roce_cm_msg *m)
{
	uint8_t out[ROCE_MAD_LEN];

	ck_assert_int_eq(roce_cm_decode(img, ROCE_MAD_LEN, m), 0);
	memset(out, 0xa5, sizeof(out));
	ck_assert_int_eq(roce_cm_encode(m, out), ROCE_MAD_LEN);
	for (unsigned i = 0; i < ROCE_MAD_LEN; i++)
		ck_assert_msg(out[i] == img[i], "byte %u: 0x%02x, want 0x%02x",
			      i, out[i], img[i]);
}

static const uint8_t gid_10_0_0_1[16] = { [10] = 0xff, 0xff, 10, 0, 0, 1 };
static const uint8_t gid_10_0_0_2[16] = { [10] = 0xff, 0xff, 10, 0, 0, 2 };
static const uint8_t zero16[16];

START_TEST(test_cm_known_req)
{
	struct roce_cm_msg m;
	const struct roce_cm_req *r = &m.req;

	decode_known(ka_req, &m);
	ck_assert_uint_eq(m.attr_id, ROCE_CM_ATTR_REQ);
	ck_assert_uint_eq(m.tid, 0x123456789abcdef0ull);
	ck_assert_uint_eq(m.attr_mod, 0);
	ck_assert_uint_eq(r->local_comm_id, 0xdeadbeef);
	ck_assert_uint_eq(r->vendor_id, 0x0002c9);
	ck_assert_uint_eq(r->service_id, 0x0000000001064e21ull);
	ck_assert_uint_eq(r->local_ca_guid, 0x1122334455667788ull);
	ck_assert_uint_eq(r->local_qkey, 0);
	ck_assert_uint_eq(r->local_qpn, 0x123);
	ck_assert_uint_eq(r->responder_resources, 16);
	ck_assert_uint_eq(r->local_eecn, 0);
	ck_assert_uint_eq(r->initiator_depth, 8);
	ck_assert_uint_eq(r->remote_eecn, 0);
	ck_assert_uint_eq(r->remote_cm_response_timeout, 20);
	ck_assert_uint_eq(r->transport_type, ROCE_CM_TRANSPORT_RC);
	ck_assert(r->end_to_end_flow_control);
	ck_assert_uint_eq(r->starting_psn, 0xabcdef);
	ck_assert_uint_eq(r->local_cm_response_timeout, 20);
	ck_assert_uint_eq(r->retry_count, 7);
	ck_assert_uint_eq(r->pkey, 0xffff);
	ck_assert_uint_eq(r->path_mtu, 3);
	ck_assert(!r->rdc_exists);
	ck_assert_uint_eq(r->rnr_retry_count, 7);
	ck_assert_uint_eq(r->max_cm_retries, 15);
	ck_assert(r->srq);
	ck_assert_uint_eq(r->extended_transport_type, 0);
	ck_assert_uint_eq(r->primary.local_lid, 0xffff);
	ck_assert_uint_eq(r->primary.remote_lid, 0xffff);
	ck_assert_mem_eq(r->primary.local_gid, gid_10_0_0_1, 16);
	ck_assert_mem_eq(r->primary.remote_gid, gid_10_0_0_2, 16);
	ck_assert_uint_eq(r->primary.flow_label, 0x12345);
	ck_assert_uint_eq(r->primary.rate, 7);
	ck_assert_uint_eq(r->primary.traffic_class, 0x68);
	ck_assert_uint_eq(r->primary.hop_limit, 64);
	ck_assert_uint_eq(r->primary.sl, 5);
	ck_assert(r->primary.subnet_local);
	ck_assert_uint_eq(r->primary.local_ack_timeout, 18);
	ck_assert_uint_eq(r->alternate.local_lid, 0);
	ck_assert_mem_eq(r->alternate.local_gid, zero16, 16);
	ck_assert(!r->sap_supported);
	ck_assert_uint_eq(m.priv_len, ROCE_CM_REQ_PRIV_LEN);
	ck_assert_uint_eq(m.priv[0], 0x00);
	ck_assert_uint_eq(m.priv[1], 0x40);
	ck_assert_uint_eq(m.priv[36], 'h');
	ck_assert_uint_eq(m.priv[91], 0x5a);
}
END_TEST

START_TEST(test_cm_known_rep)
{
	struct roce_cm_msg m;
	const struct roce_cm_rep *r = &m.rep;

	decode_known(ka_rep, &m);
	ck_assert_uint_eq(m.attr_id, ROCE_CM_ATTR_REP);
	ck_assert_uint_eq(m.tid, 0x123456789abcdef0ull);
	ck_assert_uint_eq(r->local_comm_id, 0x11223344);
	ck_assert_uint_eq(r->remote_comm_id, 0xdeadbeef);
	ck_assert_uint_eq(r->local_qkey, 0x01234567);
	ck_assert_uint_eq(r->local_qpn, 0x456);
	ck_assert_uint_eq(r->vendor_id, 0x0002c9);
	ck_assert_uint_eq(r->local_eecn, 0);
	ck_assert_uint_eq(r->starting_psn, 0x123456);
	ck_assert_uint_eq(r->responder_resources, 16);
	ck_assert_uint_eq(r->initiator_depth, 4);
	ck_assert_uint_eq(r->target_ack_delay, 15);
	ck_assert_uint_eq(r->failover_accepted, 1);
	ck_assert(r->end_to_end_flow_control);
	ck_assert_uint_eq(r->rnr_retry_count, 7);
	ck_assert(r->srq);
	ck_assert_uint_eq(r->local_ca_guid, 0x0202c0fffe000002ull);
	ck_assert_uint_eq(m.priv_len, ROCE_CM_REP_PRIV_LEN);
	ck_assert_uint_eq(m.priv[0], 'o');
	ck_assert_uint_eq(m.priv[195], 0xa5);
}
END_TEST

START_TEST(test_cm_known_rej)
{
	struct roce_cm_msg m;
	const struct roce_cm_rej *r = &m.rej;
	static const uint8_t ari[4] = { 0xa1, 0xa2, 0xa3, 0xa4 };

	decode_known(ka_rej, &m);
	ck_assert_uint_eq(m.attr_id, ROCE_CM_ATTR_REJ);
	ck_assert_uint_eq(m.tid, 0x000000010000002aull);
	ck_assert_uint_eq(r->local_comm_id, 0x11223344);
	ck_assert_uint_eq(r->remote_comm_id, 0xdeadbeef);
	ck_assert_uint_eq(r->msg_rejected, ROCE_CM_MSG_REP);
	ck_assert_uint_eq(r->ari_len, 4);
	ck_assert_uint_eq(r->reason, ROCE_CM_REJ_CONSUMER_DEFINED);
	ck_assert_mem_eq(r->ari, ari, 4);
	ck_assert_uint_eq(r->ari[71], 0xee);
	ck_assert_uint_eq(m.priv_len, ROCE_CM_REJ_PRIV_LEN);
	ck_assert_uint_eq(m.priv[0], 0x55);
	ck_assert_uint_eq(m.priv[1], 0x66);
}
END_TEST

START_TEST(test_cm_known_dreq)
{
	struct roce_cm_msg m;

	decode_known(ka_dreq, &m);
	ck_assert_uint_eq(m.attr_id, ROCE_CM_ATTR_DREQ);
	ck_assert_uint_eq(m.tid, 0x00000002deadbeefull);
	ck_assert_uint_eq(m.dreq.local_comm_id, 0xdeadbeef);
	ck_assert_uint_eq(m.dreq.remote_comm_id, 0x11223344);
	ck_assert_uint_eq(m.dreq.remote_qpn, 0x456);
	ck_assert_uint_eq(m.priv_len, ROCE_CM_DREQ_PRIV_LEN);
	ck_assert_uint_eq(m.priv[0], 0x99);
}
END_TEST

START_TEST(test_cm_known_sidr_req)
{
	struct roce_cm_msg m;
	uint16_t ps = 0, port = 0;

	decode_known(ka_sidr_req, &m);
	ck_assert_uint_eq(m.attr_id, ROCE_CM_ATTR_SIDR_REQ);
	ck_assert_uint_eq(m.tid, 0xfedcba9876543210ull);
	ck_assert_uint_eq(m.attr_mod, 7);
	ck_assert_uint_eq(m.sidr_req.request_id, 0xcafef00d);
	ck_assert_uint_eq(m.sidr_req.pkey, 0x8001);
	ck_assert_uint_eq(m.sidr_req.service_id, 0x00000000011112b7ull);
	ck_assert_int_eq(roce_cm_service_id_split(m.sidr_req.service_id, &ps,
						  &port),
			 0);
	ck_assert_uint_eq(ps, ROCE_RDMA_PS_UDP);
	ck_assert_uint_eq(port, 4791);
	ck_assert_uint_eq(m.priv_len, ROCE_CM_SIDR_REQ_PRIV_LEN);
	ck_assert_uint_eq(m.priv[36], 0x42);
}
END_TEST

/* The Annex A11 headers inside the known REQ and SIDR_REQ. */
START_TEST(test_cm_ip_hdr_known)
{
	struct roce_cm_msg m;
	struct roce_cm_ip_hdr h;
	static const uint8_t a1[4] = { 10, 0, 0, 1 }, a2[4] = { 10, 0, 0, 2 };
	static const uint8_t s6[16] = { 0xfd, [15] = 1 };
	static const uint8_t d6[16] = { 0xfd, [15] = 2 };
	uint8_t back[ROCE_CM_IP_HDR_LEN];

	ck_assert_int_eq(roce_cm_decode(ka_req, ROCE_MAD_LEN, &m), 0);
	ck_assert_int_eq(roce_cm_ip_hdr_parse(m.priv, m.priv_len, &h), 0);
	ck_assert_uint_eq(h.version, 0);
	ck_assert_uint_eq(h.ip_version, 4);
	ck_assert_uint_eq(h.src_port, 50000);
	ck_assert_mem_eq(h.src.v4, a1, 4);
	ck_assert_mem_eq(h.dst.v4, a2, 4);
	ck_assert_int_eq(roce_cm_ip_hdr_build(&h, back, sizeof(back)),
			 ROCE_CM_IP_HDR_LEN);
	ck_assert_mem_eq(back, ka_req + 164, ROCE_CM_IP_HDR_LEN);

	ck_assert_int_eq(roce_cm_decode(ka_sidr_req, ROCE_MAD_LEN, &m), 0);
	ck_assert_int_eq(roce_cm_ip_hdr_parse(m.priv, m.priv_len, &h), 0);
	ck_assert_uint_eq(h.ip_version, 6);
	ck_assert_uint_eq(h.src_port, 0x1234);
	ck_assert_mem_eq(h.src.v6, s6, 16);
	ck_assert_mem_eq(h.dst.v6, d6, 16);
	ck_assert_int_eq(roce_cm_ip_hdr_build(&h, back, sizeof(back)),
			 ROCE_CM_IP_HDR_LEN);
	ck_assert_mem_eq(back, ka_sidr_req + 40, ROCE_CM_IP_HDR_LEN);
}
END_TEST

START_TEST(test_cm_service_id)
{
	uint16_t ps = 1, port = 2;

	/* Annex A11: 0x0000000001, the protocol byte, the port */
	ck_assert_uint_eq(roce_cm_service_id(ROCE_RDMA_PS_TCP, 20001),
			  0x0000000001064e21ull);
	ck_assert_uint_eq(roce_cm_service_id(ROCE_RDMA_PS_UDP, 0xffff),
			  0x000000000111ffffull);
	ck_assert_uint_eq(roce_cm_service_id(ROCE_RDMA_PS_IB, 0),
			  0x00000000013f0000ull);
	ck_assert_int_eq(roce_cm_service_id_split(0x00000000013f1234ull, &ps,
						  &port),
			 0);
	ck_assert_uint_eq(ps, 0x013f);
	ck_assert_uint_eq(port, 0x1234);
	/* outside the IP CM range: untouched */
	ps = 1, port = 2;
	ck_assert_int_eq(roce_cm_service_id_split(0x1000000001064e21ull, &ps,
						  &port),
			 -EINVAL);
	ck_assert_int_eq(roce_cm_service_id_split(0x0000000002064e21ull, &ps,
						  &port),
			 -EINVAL);
	ck_assert_uint_eq(ps, 1);
	ck_assert_uint_eq(port, 2);
	ck_assert_str_eq(roce_cm_ps_name(ROCE_RDMA_PS_TCP), "TCP");
	ck_assert_str_eq(roce_cm_ps_name(0x0111), "UDP");
	ck_assert_str_eq(roce_cm_ps_name(0x013f), "IB");
	ck_assert_str_eq(roce_cm_ps_name(0x0107), "unknown");
}
END_TEST

START_TEST(test_cm_names)
{
	ck_assert_str_eq(roce_cm_attr_name(0x0010), "REQ");
	ck_assert_str_eq(roce_cm_attr_name(0x0014), "RTU");
	ck_assert_str_eq(roce_cm_attr_name(0x0018), "SIDR_REP");
	ck_assert_str_eq(roce_cm_attr_name(0x001a), "APR");
	ck_assert_str_eq(roce_cm_attr_name(0x0001), "ClassPortInfo");
	ck_assert_str_eq(roce_cm_attr_name(0x001b), "unknown");
	ck_assert_str_eq(roce_cm_attr_name(0xffff), "unknown");
	ck_assert_str_eq(roce_cm_rej_reason_name(1), "NO_QP");
	ck_assert_str_eq(roce_cm_rej_reason_name(8), "INVALID_SERVICE_ID");
	ck_assert_str_eq(roce_cm_rej_reason_name(10), "STALE_CONN");
	ck_assert_str_eq(roce_cm_rej_reason_name(12), "INVALID_GID");
	ck_assert_str_eq(roce_cm_rej_reason_name(26), "INVALID_MTU");
	ck_assert_str_eq(roce_cm_rej_reason_name(28), "CONSUMER_DEFINED");
	ck_assert_str_eq(roce_cm_rej_reason_name(30),
			 "DUPLICATE_LOCAL_COMM_ID");
	ck_assert_str_eq(roce_cm_rej_reason_name(35),
			 "VENDOR_OPTION_NOT_SUPPORTED");
	ck_assert_str_eq(roce_cm_rej_reason_name(0), "unknown");
	ck_assert_str_eq(roce_cm_rej_reason_name(34), "unknown");
	ck_assert_str_eq(roce_cm_rej_reason_name(36), "unknown");
	ck_assert_str_eq(roce_cm_sidr_status_name(3), "NO_QP");
	ck_assert_str_eq(roce_cm_sidr_status_name(6), "unknown");
	ck_assert_uint_eq(roce_cm_priv_len(ROCE_CM_ATTR_MRA), 222);
	ck_assert_uint_eq(roce_cm_priv_len(ROCE_CM_ATTR_LAP), 168);
	ck_assert_uint_eq(roce_cm_priv_len(ROCE_CM_ATTR_SIDR_REP), 136);
	ck_assert_uint_eq(roce_cm_priv_len(0x001b), 0);
}
END_TEST

/* ---- round trips with every bit field at its maximum ---------------------- */

static void path_max(struct roce_cm_path *p, uint8_t seed)
{
	p->local_lid = 0xffff, p->remote_lid = 0xfffe;
	for (unsigned i = 0; i < 16; i++)
		p->local_gid[i] = (uint8_t)(seed + i),
		p->remote_gid[i] = (uint8_t)(0xff - seed - i);
	p->flow_label = 0xfffff, p->rate = 0x3f, p->traffic_class = 0xff;
	p->hop_limit = 0xff, p->sl = 15, p->subnet_local = true;
	p->local_ack_timeout = 31;
}

/* Every field of attribute _i's message at its maximum, private data full. */
static void msg_max(struct roce_cm_msg *m, uint16_t attr)
{
	memset(m, 0, sizeof(*m));
	m->attr_id = attr;
	m->tid = 0xffffffffffffffffull, m->status = 0xffff;
	m->class_specific = 0xffff, m->attr_mod = 0xffffffff;
	m->priv_len = (uint16_t)roce_cm_priv_len(attr);
	for (unsigned i = 0; i < m->priv_len; i++)
		m->priv[i] = (uint8_t)(0xff - i);
	switch (attr) {
	case ROCE_CM_ATTR_REQ: {
		struct roce_cm_req *r = &m->req;
		r->local_comm_id = 0xffffffff, r->vendor_id = 0xffffff;
		r->service_id = ~0ull, r->local_ca_guid = ~0ull;
		r->local_qkey = 0xffffffff, r->local_qpn = 0xffffff;
		r->responder_resources = 0xff, r->local_eecn = 0xffffff;
		r->initiator_depth = 0xff, r->remote_eecn = 0xffffff;
		r->remote_cm_response_timeout = 31, r->transport_type = 3;
		r->end_to_end_flow_control = true, r->starting_psn = 0xffffff;
		r->local_cm_response_timeout = 31, r->retry_count = 7;
		r->pkey = 0xffff, r->path_mtu = 15, r->rdc_exists = true;
		r->rnr_retry_count = 7, r->max_cm_retries = 15, r->srq = true;
		r->extended_transport_type = 7, r->sap_supported = true;
		path_max(&r->primary, 1);
		path_max(&r->alternate, 0x80);
		break;
	}
	case ROCE_CM_ATTR_MRA:
		m->mra = (struct roce_cm_mra){ 0xffffffff, 0xfffffffe, 3, 31 };
		break;
	case ROCE_CM_ATTR_REJ:
		m->rej.local_comm_id = 0xffffffff;
		m->rej.remote_comm_id = 0xfffffffe;
		m->rej.msg_rejected = 3, m->rej.ari_len = ROCE_CM_INFO_MAX;
		m->rej.reason = 0xffff;
		memset(m->rej.ari, 0xfd, sizeof(m->rej.ari));
		break;
	case ROCE_CM_ATTR_REP: {
		struct roce_cm_rep *r = &m->rep;
		r->local_comm_id = 0xffffffff, r->remote_comm_id = 0xfffffffe;
		r->local_qkey = 0xffffffff, r->local_qpn = 0xffffff;
		r->vendor_id = 0xffffff, r->local_eecn = 0xffffff;
		r->starting_psn = 0xffffff, r->responder_resources = 0xff;
		r->initiator_depth = 0xff, r->target_ack_delay = 31;
		r->failover_accepted = 3, r->end_to_end_flow_control = true;
		r->rnr_retry_count = 7, r->srq = true, r->local_ca_guid = ~0ull;
		break;
	}
	case ROCE_CM_ATTR_RTU:
	case ROCE_CM_ATTR_DREP:
		m->rtu = (struct roce_cm_ids){ 0xffffffff, 0xfffffffe };
		break;
	case ROCE_CM_ATTR_DREQ:
		m->dreq = (struct roce_cm_dreq){ 0xffffffff, 0xfffffffe,
						 0xffffff };
		break;
	case ROCE_CM_ATTR_SIDR_REQ:
		m->sidr_req = (struct roce_cm_sidr_req){ 0xffffffff, 0xffff,
							 ~0ull };
		break;
	case ROCE_CM_ATTR_SIDR_REP: {
		struct roce_cm_sidr_rep *r = &m->sidr_rep;
		r->request_id = 0xffffffff, r->status = 0xff;
		r->info_len = ROCE_CM_INFO_MAX, r->vendor_id = 0xffffff;
		r->qpn = 0xffffff, r->service_id = ~0ull, r->qkey = 0xffffffff;
		memset(r->info, 0xfc, sizeof(r->info));
		break;
	}
	case ROCE_CM_ATTR_LAP:
		m->lap.local_comm_id = 0xffffffff;
		m->lap.remote_comm_id = 0xfffffffe;
		m->lap.remote_qpn = 0xffffff;
		m->lap.remote_cm_response_timeout = 31;
		path_max(&m->lap.alternate, 7);
		break;
	case ROCE_CM_ATTR_APR:
		m->apr.local_comm_id = 0xffffffff;
		m->apr.remote_comm_id = 0xfffffffe;
		m->apr.info_len = ROCE_CM_INFO_MAX, m->apr.ap_status = 0xff;
		memset(m->apr.info, 0xfb, sizeof(m->apr.info));
		break;
	}
}

/* attribute of loop index _i */
static uint16_t attr_at(int i)
{
	return (uint16_t)(ROCE_CM_ATTR_REQ + i);
}

START_TEST(test_cm_round_trip_max)
{
	struct roce_cm_msg m, d;
	uint8_t a[ROCE_MAD_LEN], b[ROCE_MAD_LEN];

	msg_max(&m, attr_at(_i));
	ck_assert_int_eq(roce_cm_encode(&m, a), ROCE_MAD_LEN);
	ck_assert_int_eq(roce_cm_decode(a, sizeof(a), &d), 0);
	msg_eq(&m, &d);
	ck_assert_int_eq(roce_cm_encode(&d, b), ROCE_MAD_LEN);
	ck_assert_mem_eq(a, b, sizeof(a));
}
END_TEST

/*
 * Each field alone at its maximum, the others zero, must come back alone:
 * a value that spills into a neighbour's bits shows up as a non-zero
 * neighbour. Done by clearing everything but one byte of the encoded
 * maximum message's attribute data and checking the decode re-encodes to
 * exactly that byte.
 */
START_TEST(test_cm_round_trip_one_byte)
{
	struct roce_cm_msg m, d;
	uint8_t full[ROCE_MAD_LEN], one[ROCE_MAD_LEN], back[ROCE_MAD_LEN];

	msg_max(&m, attr_at(_i));
	ck_assert_int_eq(roce_cm_encode(&m, full), ROCE_MAD_LEN);
	for (unsigned k = ROCE_MAD_HDR_LEN; k < ROCE_MAD_LEN; k++) {
		memcpy(one, full, ROCE_MAD_HDR_LEN);
		memset(one + ROCE_MAD_HDR_LEN, 0, ROCE_CM_DATA_LEN);
		one[k] = full[k];
		int rc = roce_cm_decode(one, sizeof(one), &d);
		ck_assert_int_eq(rc, 0);
		ck_assert_int_eq(roce_cm_encode(&d, back), ROCE_MAD_LEN);
		ck_assert_msg(!memcmp(one, back, sizeof(one)),
			      "attr 0x%x byte %u", attr_at(_i), k);
	}
}
END_TEST

/* Reserved bits set on the wire are ignored, and encoded back as zero. */
START_TEST(test_cm_reserved_bits_zero)
{
	struct roce_cm_msg m;
	uint8_t img[ROCE_MAD_LEN], out[ROCE_MAD_LEN];

	memcpy(img, ka_req, sizeof(img));
	img[18] = 0xff, img[19] = 0xff;	/* MAD reserved */
	img[28] = 0xff;			/* REQ byte 4, before the vendor ID */
	img[48] = 0xff;			/* REQ bytes 24..27 */
	img[114] |= 0x0f, img[115] |= 0xc0; /* 6 bits between flow and rate */
	img[118] |= 0x07, img[119] |= 0x07; /* after subnet local, ACK tmo */
	ck_assert_int_eq(roce_cm_decode(img, sizeof(img), &m), 0);
	ck_assert_uint_eq(m.req.primary.flow_label, 0x12345);
	ck_assert_uint_eq(m.req.primary.rate, 7);
	ck_assert_uint_eq(m.req.vendor_id, 0x0002c9);
	ck_assert_int_eq(roce_cm_encode(&m, out), ROCE_MAD_LEN);
	ck_assert_mem_eq(out, ka_req, sizeof(out));
}
END_TEST

/* ---- refusals, each leaving the output untouched --------------------------- */

/* Expects rc from decoding img (len bytes) and *out unchanged. */
static void decode_refused(const uint8_t *img, size_t len, int rc)
{
	struct roce_cm_msg out, before;

	memset(&out, 0x3c, sizeof(out));
	memcpy(&before, &out, sizeof(out));
	ck_assert_int_eq(roce_cm_decode(img, len, &out), rc);
	ck_assert_mem_eq(&out, &before, sizeof(out));
}

START_TEST(test_cm_refuse_length)
{
	uint8_t big[ROCE_MAD_LEN + 1];

	memcpy(big, ka_req, ROCE_MAD_LEN);
	big[ROCE_MAD_LEN] = 0;
	decode_refused(ka_req, ROCE_MAD_LEN - 1, -EMSGSIZE);
	decode_refused(ka_req, ROCE_MAD_HDR_LEN, -EMSGSIZE);
	decode_refused(ka_req, 0, -EMSGSIZE);
	decode_refused(big, sizeof(big), -EMSGSIZE);
}
END_TEST

/* Byte at, value: a header that is not a CM Send of class version 2. */
static const struct hdr_lie {
	unsigned at;
	uint8_t val;
} hdr_lies[] = {
	{ 0, 0x02 },	/* base version */
	{ 0, 0x00 },
	{ 1, 0x04 },	/* class: PerfMgt */
	{ 1, 0x01 },	/* class: SubnMgt */
	{ 2, 0x01 },	/* class version 1 */
	{ 2, 0x03 },
	{ 3, 0x01 },	/* method Get */
	{ 3, 0x83 },	/* Send with the R bit */
	{ 17, 0x01 },	/* attribute ClassPortInfo: not a Send message */
	{ 17, 0x0f },
	{ 17, 0x1b },	/* one past APR */
	{ 16, 0x01 },	/* 0x0110 */
};

START_TEST(test_cm_refuse_header)
{
	uint8_t img[ROCE_MAD_LEN];

	memcpy(img, ka_dreq, sizeof(img));
	img[hdr_lies[_i].at] = hdr_lies[_i].val;
	decode_refused(img, sizeof(img), -EPROTO);
}
END_TEST

/* The header written back is the one read, byte for byte (a known MAD's),
 * a wrong class version written is one the decoder refuses, and a short
 * buffer is refused untouched. */
START_TEST(test_cm_hdr_write)
{
	uint8_t img[ROCE_MAD_LEN], out[ROCE_MAD_LEN];
	struct roce_mad_hdr h;

	ck_assert_int_eq(roce_mad_hdr_parse(ka_dreq, sizeof(ka_dreq), &h), 0);
	memset(out, 0xee, sizeof(out));
	ck_assert_int_eq(roce_mad_hdr_write(&h, out, sizeof(out)), 0);
	ck_assert_mem_eq(out, ka_dreq, ROCE_MAD_HDR_LEN);
	ck_assert_uint_eq(out[ROCE_MAD_HDR_LEN], 0xee);
	memcpy(img, ka_dreq, sizeof(img));
	h.class_version = 1;
	ck_assert_int_eq(roce_mad_hdr_write(&h, img, sizeof(img)), 0);
	ck_assert_uint_eq(img[2], 1);
	decode_refused(img, sizeof(img), -EPROTO);
	memset(out, 0xee, sizeof(out));
	ck_assert_int_eq(roce_mad_hdr_write(&h, out, ROCE_MAD_HDR_LEN - 1), -EMSGSIZE);
	ck_assert_uint_eq(out[0], 0xee);
}
END_TEST

START_TEST(test_cm_refuse_info_len)
{
	uint8_t img[ROCE_MAD_LEN];
	struct roce_cm_msg m;

	/* REJ ARI length 73 of a 72-byte field (7 bits at MAD byte 33) */
	memcpy(img, ka_rej, sizeof(img));
	img[33] = 73 << 1;
	decode_refused(img, sizeof(img), -EINVAL);
	img[33] = 72 << 1;
	ck_assert_int_eq(roce_cm_decode(img, sizeof(img), &m), 0);
	ck_assert_uint_eq(m.rej.ari_len, 72);

	/* SIDR_REP and APR additional information length 73, 255 */
	msg_max(&m, ROCE_CM_ATTR_SIDR_REP);
	ck_assert_int_eq(roce_cm_encode(&m, img), ROCE_MAD_LEN);
	img[24 + 5] = 73;
	decode_refused(img, sizeof(img), -EINVAL);
	msg_max(&m, ROCE_CM_ATTR_APR);
	ck_assert_int_eq(roce_cm_encode(&m, img), ROCE_MAD_LEN);
	img[24 + 8] = 0xff;
	decode_refused(img, sizeof(img), -EINVAL);
}
END_TEST

/* Expects rc from encoding m, and the 256 bytes untouched. */
static void encode_refused(const struct roce_cm_msg *m)
{
	uint8_t out[ROCE_MAD_LEN], before[ROCE_MAD_LEN];

	memset(out, 0x3c, sizeof(out));
	memcpy(before, out, sizeof(out));
	ck_assert_int_eq(roce_cm_encode(m, out), -EINVAL);
	ck_assert_mem_eq(out, before, sizeof(out));
}

START_TEST(test_cm_encode_refuses)
{
	struct roce_cm_msg m;

	msg_max(&m, ROCE_CM_ATTR_REQ);
	m.priv_len = ROCE_CM_REQ_PRIV_LEN + 1;
	encode_refused(&m);
	msg_max(&m, ROCE_CM_ATTR_REQ);
	m.req.local_qpn = 0x1000000;
	encode_refused(&m);
	msg_max(&m, ROCE_CM_ATTR_REQ);
	m.req.primary.flow_label = 0x100000;
	encode_refused(&m);
	msg_max(&m, ROCE_CM_ATTR_REQ);
	m.req.retry_count = 8;
	encode_refused(&m);
	msg_max(&m, ROCE_CM_ATTR_REP);
	m.rep.vendor_id = 0x1000000;
	encode_refused(&m);
	msg_max(&m, ROCE_CM_ATTR_REJ);
	m.rej.ari_len = 73;
	encode_refused(&m);
	msg_max(&m, ROCE_CM_ATTR_MRA);
	m.mra.service_timeout = 32;
	encode_refused(&m);
	msg_max(&m, ROCE_CM_ATTR_LAP);
	m.lap.alternate.sl = 16;
	encode_refused(&m);
	msg_max(&m, ROCE_CM_ATTR_SIDR_REP);
	m.sidr_rep.info_len = 73;
	encode_refused(&m);
	msg_max(&m, ROCE_CM_ATTR_RTU);
	m.attr_id = ROCE_CM_ATTR_CLASS_PORT_INFO;
	encode_refused(&m);
	m.attr_id = 0x001b;
	encode_refused(&m);
}
END_TEST

/* A11 headers that lie: too short for what they claim, wrong versions. */
START_TEST(test_cm_ip_hdr_refuses)
{
	struct roce_cm_ip_hdr out, before;
	uint8_t priv[ROCE_CM_SIDR_REQ_PRIV_LEN];
	uint8_t small[ROCE_CM_IP_HDR_LEN - 1];

	memcpy(priv, ka_sidr_req + 40, sizeof(priv));
	memset(&out, 0x3c, sizeof(out));
	memcpy(&before, &out, sizeof(out));
	/* claims IPv6 in an area one byte short of its destination address */
	ck_assert_int_eq(roce_cm_ip_hdr_parse(priv, ROCE_CM_IP_HDR_LEN - 1,
					      &out),
			 -EMSGSIZE);
	/* IPv4 in 20 bytes: the header is 36 whatever the family */
	priv[1] = 0x40;
	ck_assert_int_eq(roce_cm_ip_hdr_parse(priv, 20, &out), -EMSGSIZE);
	ck_assert_int_eq(roce_cm_ip_hdr_parse(priv, 0, &out), -EMSGSIZE);
	priv[1] = 0x50; /* IP version 5 */
	ck_assert_int_eq(roce_cm_ip_hdr_parse(priv, sizeof(priv), &out),
			 -EPROTO);
	priv[1] = 0x00;
	ck_assert_int_eq(roce_cm_ip_hdr_parse(priv, sizeof(priv), &out),
			 -EPROTO);
	priv[1] = 0x60;
	priv[0] = 0x10; /* header version 1: the kernel refuses it too */
	ck_assert_int_eq(roce_cm_ip_hdr_parse(priv, sizeof(priv), &out),
			 -EPROTO);
	ck_assert_mem_eq(&out, &before, sizeof(out));

	/* building: no room, or no such IP version, writes nothing */
	struct roce_cm_ip_hdr h = { .ip_version = 6, .src_port = 1 };
	memset(small, 0x3c, sizeof(small));
	ck_assert_int_eq(roce_cm_ip_hdr_build(&h, small, sizeof(small)),
			 -EMSGSIZE);
	h.ip_version = 5;
	ck_assert_int_eq(roce_cm_ip_hdr_build(&h, priv, sizeof(priv)),
			 -EINVAL);
	for (unsigned i = 0; i < sizeof(small); i++)
		ck_assert_uint_eq(small[i], 0x3c);
	ck_assert_uint_eq(priv[0], 0x10);
}
END_TEST

Suite *cm_suite(void)
{
	Suite *s = suite_create("cm");
	TCase *tc = tcase_create("core");
	int n_attr = ROCE_CM_ATTR_APR - ROCE_CM_ATTR_REQ + 1;

	tcase_add_test(tc, test_cm_known_req);
	tcase_add_test(tc, test_cm_known_rep);
	tcase_add_test(tc, test_cm_known_rej);
	tcase_add_test(tc, test_cm_known_dreq);
	tcase_add_test(tc, test_cm_known_sidr_req);
	tcase_add_test(tc, test_cm_ip_hdr_known);
	tcase_add_test(tc, test_cm_service_id);
	tcase_add_test(tc, test_cm_names);
	tcase_add_loop_test(tc, test_cm_round_trip_max, 0, n_attr);
	tcase_add_loop_test(tc, test_cm_round_trip_one_byte, 0, n_attr);
	tcase_add_test(tc, test_cm_reserved_bits_zero);
	tcase_add_test(tc, test_cm_refuse_length);
	tcase_add_loop_test(tc, test_cm_refuse_header, 0,
			    sizeof(hdr_lies) / sizeof(hdr_lies[0]));
	tcase_add_test(tc, test_cm_hdr_write);
	tcase_add_test(tc, test_cm_refuse_info_len);
	tcase_add_test(tc, test_cm_encode_refuses);
	tcase_add_test(tc, test_cm_ip_hdr_refuses);
	suite_add_tcase(s, tc);
	return s;
}
