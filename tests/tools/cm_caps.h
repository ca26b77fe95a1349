/* SPDX-License-Identifier: MIT */
/* CM exchanges built with the codec: mkcap --cm writes them, the cmrules suite judges them. */
#ifndef ROCEMU_TESTS_CM_CAPS_H
#define ROCEMU_TESTS_CM_CAPS_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/proto.h"

/*
 * Where the frames go: put gets each, unbuilt (roce_frame_build is the
 * sink's), in capture order. qp1_psn is the PSN each host's QP1 sends
 * next; zero is as good a start as any.
 */
struct cm_sink {
	void (*put)(void *arg, const struct roce_frame *f);
	void *arg;
	uint32_t qp1_psn[2];
	uint8_t mad[4][ROCE_MAD_LEN]; /* the MADs of frames not yet built */
	unsigned next_mad;
	uint8_t data[32];
};

/* Ways a connection breaks one CM rule (docs/check.md). */
enum cm_fault {
	CM_GOOD,
	CM_BAD_TID,	/* the REP does not echo the REQ's TID */
	CM_BAD_COMM,	/* the RTU names a remote comm ID nobody has */
	CM_BAD_ORDER,	/* the RTU comes before the REP */
	CM_BAD_DREP,	/* a DREP answers a DREQ never sent */
	CM_BAD_QPN,	/* data goes to a QPN the REP did not announce */
	CM_BAD_PSN,	/* the first data packet is not at the starting PSN */
	CM_BAD_DREP_TID, /* the DREP does not echo the DREQ's TID */
	CM_FAULTS,
	CM_RETRY = CM_FAULTS, /* good: REQ, MRA, REP, RTU, DREQ, DREP each
			       * sent twice, as retries are */
};

static const char *const cm_fault_names[CM_FAULTS] = {
	"connect", "bad-tid", "bad-comm", "bad-order", "bad-drep", "bad-qpn",
	"bad-psn", "bad-drep-tid",
};

static const uint8_t cm_a4[4] = { 10, 0, 0, 1 }, cm_b4[4] = { 10, 0, 0, 2 };

/* One CM MAD from host 10.0.0.(1 + from) to the other's QP1, as a UD
 * SEND_ONLY with DETH Q_Key 0x80010000 and source QP 1. */
static void cm_emit(struct cm_sink *s, unsigned from,
		    const struct roce_cm_msg *m)
{
	uint8_t *mad = s->mad[s->next_mad++ % 4];
	struct roce_frame f;

	if (roce_cm_encode(m, mad) != ROCE_MAD_LEN)
		abort();	/* the messages below are all valid */
	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, from ? cm_b4 : cm_a4);
	roce_gid_from_ipv4(f.dst_gid, from ? cm_a4 : cm_b4);
	f.sport = 0xc001;
	f.ib.bth.opcode = ROCE_OP_UD_SEND_ONLY;
	f.ib.bth.dqpn = ROCE_CM_QPN;
	f.ib.bth.psn = s->qp1_psn[from]++ & ROCE_PSN_MASK;
	f.ib.deth = (struct roce_deth){ ROCE_CM_QP1_QKEY, 0, ROCE_CM_QPN };
	f.ib.payload = mad;
	f.ib.payload_len = ROCE_MAD_LEN;
	s->put(s->arg, &f);
}

/* An RC SEND_ONLY of 32 bytes (msn 0) or an ACK with msn, from 10.0.0.1
 * (or 10.0.0.2 with rev) to QP dqpn. */
static void cm_data(struct cm_sink *s, bool rev, uint32_t dqpn, uint32_t psn,
		    uint32_t msn)
{
	bool ack = msn != 0;
	struct roce_frame f;

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, rev != ack ? cm_b4 : cm_a4);
	roce_gid_from_ipv4(f.dst_gid, rev != ack ? cm_a4 : cm_b4);
	f.sport = 0xc011;
	f.ib.bth.opcode = ack ? ROCE_OP_RC_ACK : ROCE_OP_RC_SEND_ONLY;
	f.ib.bth.dqpn = dqpn;
	f.ib.bth.psn = psn & ROCE_PSN_MASK;
	f.ib.bth.ackreq = !ack;
	f.ib.aeth = (struct roce_aeth){ ROCE_AETH_ACK_NO_CREDITS, msn };
	for (unsigned i = 0; i < sizeof(s->data); i++)
		s->data[i] = (uint8_t)(i * 7 + 1);
	f.ib.payload = s->data;
	f.ib.payload_len = ack ? 0 : sizeof(s->data);
	s->put(s->arg, &f);
}

static void cm_gid(uint8_t gid[16], unsigned host)
{
	roce_gid_from_ipv4(gid, host ? cm_b4 : cm_a4);
}

/* The Annex A11 header of 10.0.0.1 port sport asking 10.0.0.2. */
static void cm_ip(struct roce_cm_msg *m, uint16_t sport)
{
	const struct roce_cm_ip_hdr ip = { .version = 0, .ip_version = 4,
					   .src_port = sport,
					   .src.v4 = { 10, 0, 0, 1 },
					   .dst.v4 = { 10, 0, 0, 2 } };

	m->priv_len = ROCE_CM_IP_HDR_LEN;
	roce_cm_ip_hdr_build(&ip, m->priv, sizeof(m->priv));
}

/* A REQ of the IP CM service: RC, PS_TCP port, 10.0.0.1 to 10.0.0.2. */
static void cm_req(struct roce_cm_msg *m, uint64_t tid, uint32_t comm,
		   uint32_t qpn, uint32_t psn, uint16_t port)
{
	memset(m, 0, sizeof(*m));
	m->attr_id = ROCE_CM_ATTR_REQ;
	m->tid = tid;
	struct roce_cm_req *r = &m->req;
	r->local_comm_id = comm;
	r->service_id = roce_cm_service_id(ROCE_RDMA_PS_TCP, port);
	r->local_ca_guid = 0x02000afffe000001ull;
	r->local_qpn = qpn;
	r->responder_resources = 1;
	r->initiator_depth = 1;
	r->remote_cm_response_timeout = 20;
	r->transport_type = ROCE_CM_TRANSPORT_RC;
	r->starting_psn = psn;
	r->local_cm_response_timeout = 20;
	r->retry_count = 7;
	r->pkey = 0xffff;
	r->path_mtu = 3;
	r->rnr_retry_count = 7;
	r->max_cm_retries = 15;
	r->primary.local_lid = 0xffff;
	r->primary.remote_lid = 0xffff;
	cm_gid(r->primary.local_gid, 0);
	cm_gid(r->primary.remote_gid, 1);
	r->primary.hop_limit = 64;
	r->primary.local_ack_timeout = 18;
	cm_ip(m, 0x9000);
}

/* A message that carries the two comm IDs only (RTU, DREP). */
static void cm_ids(struct roce_cm_msg *m, uint16_t attr, uint64_t tid,
		   uint32_t local, uint32_t remote)
{
	memset(m, 0, sizeof(*m));
	m->attr_id = attr;
	m->tid = tid;
	m->rtu = (struct roce_cm_ids){ local, remote };
}

/*
 * One connection n (0, 1, ...: distinct comm IDs, QPNs and PSNs) broken
 * as fault says: REQ from 10.0.0.1, REP, RTU, two SENDs from 10.0.0.1
 * and one back, each ACKed, between the QPNs the REQ and REP announce at
 * their starting PSNs, then DREQ from 10.0.0.1 and DREP: 11 frames. TIDs
 * are the kernel's: hi << 32 | the sender's comm ID; REP and MRA echo the
 * REQ's, DREP the DREQ's.
 */
static void cm_connection(struct cm_sink *s, unsigned n, enum cm_fault fault)
{
	uint32_t ca = 0x1000a001 + n, cb = 0x2000b002 + n;
	uint32_t qa = 0x11 + 2 * n, qb = 0x12 + 2 * n;
	uint32_t pa = 0x0a0a00 + n, pb = 0x0b0b00 + n;
	uint64_t ta = 0xa00000000ull | ca, tb = 0xb00000000ull | cb;
	struct roce_cm_msg req, rep, rtu, dreq, drep;
	struct roce_cm_msg mra = { .attr_id = ROCE_CM_ATTR_MRA, .tid = ta };
	unsigned times = fault == CM_RETRY ? 2 : 1;

	cm_req(&req, ta, ca, qa, pa, 7174);
	memset(&rep, 0, sizeof(rep));
	rep.attr_id = ROCE_CM_ATTR_REP;
	rep.tid = fault == CM_BAD_TID ? tb : ta;
	rep.rep = (struct roce_cm_rep){ .local_comm_id = cb,
					.remote_comm_id = ca,
					.local_qpn = qb,
					.starting_psn = pb,
					.responder_resources = 1,
					.initiator_depth = 1,
					.target_ack_delay = 15,
					.rnr_retry_count = 7,
					.local_ca_guid = 0x02000afffe000002ull };
	mra.mra = (struct roce_cm_mra){ cb, ca, ROCE_CM_MSG_REQ, 24 };
	cm_ids(&rtu, ROCE_CM_ATTR_RTU, ta + 0x100000000ull, ca,
	       fault == CM_BAD_COMM ? cb ^ 0x00ff0000 : cb);
	memset(&dreq, 0, sizeof(dreq));
	dreq.attr_id = ROCE_CM_ATTR_DREQ;
	dreq.tid = ta + 0x200000000ull;
	dreq.dreq = (struct roce_cm_dreq){ ca, cb, qb };
	cm_ids(&drep, ROCE_CM_ATTR_DREP,
	       fault == CM_BAD_DREP_TID ? tb : dreq.tid, cb, ca);

	for (unsigned i = 0; i < times; i++)
		cm_emit(s, 0, &req);
	if (fault == CM_RETRY)
		cm_emit(s, 1, &mra);
	if (fault == CM_BAD_ORDER)
		cm_emit(s, 0, &rtu);
	for (unsigned i = 0; i < times; i++)
		cm_emit(s, 1, &rep);
	for (unsigned i = 0; fault != CM_BAD_ORDER && i < times; i++)
		cm_emit(s, 0, &rtu);
	/* Each side sends from the PSN its peer announced: the one the peer
	 * receives with (Linux's ib_cm reads REQ and REP so). */
	uint32_t first = fault == CM_BAD_PSN ? pb + 5 : pb;
	uint32_t to_b = fault == CM_BAD_QPN ? qb + 0x40 : qb;
	cm_data(s, false, to_b, first, 0);
	cm_data(s, false, qa, first, 1);
	cm_data(s, false, to_b, first + 1, 0);
	cm_data(s, false, qa, first + 1, 2);
	cm_data(s, true, qa, pa, 0);
	cm_data(s, true, qb, pa, 1);
	for (unsigned i = 0; fault != CM_BAD_DREP && i < times; i++)
		cm_emit(s, 0, &dreq);
	for (unsigned i = 0; i < times; i++)
		cm_emit(s, 1, &drep);
}

/* A REQ for a service nobody listens on, and REJ 8 (no listener). */
static void cm_reject(struct cm_sink *s)
{
	struct roce_cm_msg req, rej;
	uint32_t ca = 0x1000c001;

	cm_req(&req, 0xa00000000ull | ca, ca, 0x31, 0x0c0c00, 7175);
	memset(&rej, 0, sizeof(rej));
	rej.attr_id = ROCE_CM_ATTR_REJ;
	rej.tid = req.tid;
	rej.rej = (struct roce_cm_rej){ .local_comm_id = 0,
					.remote_comm_id = ca,
					.msg_rejected = ROCE_CM_MSG_REQ,
					.reason =
						ROCE_CM_REJ_INVALID_SERVICE_ID };
	cm_emit(s, 0, &req);
	cm_emit(s, 1, &rej);
}

/* A SIDR_REQ for PS_UDP port 7174 and its SIDR_REP: QPN 0x41, Q_Key
 * 0x01234567 (RDMA_UDP_QKEY). */
static void cm_sidr(struct cm_sink *s)
{
	uint64_t sid = roce_cm_service_id(ROCE_RDMA_PS_UDP, 7174);
	struct roce_cm_msg req = { .attr_id = ROCE_CM_ATTR_SIDR_REQ,
				   .tid = 0xa0000d001ull };
	struct roce_cm_msg rep = { .attr_id = ROCE_CM_ATTR_SIDR_REP,
				   .tid = req.tid };

	req.sidr_req = (struct roce_cm_sidr_req){ 0xd001, 0xffff, sid };
	cm_ip(&req, 0x9001);
	rep.sidr_rep = (struct roce_cm_sidr_rep){ .request_id = 0xd001,
						  .status = ROCE_CM_SIDR_SUCCESS,
						  .qpn = 0x41,
						  .service_id = sid,
						  .qkey = 0x01234567 };
	cm_emit(s, 0, &req);
	cm_emit(s, 1, &rep);
}

/*
 * The CM capture called name into s: connect, reject, sidr, retry
 * (connect with every message sent twice and an MRA); bad-tid,
 * bad-comm, bad-order, bad-drep, bad-qpn, bad-psn, bad-drep-tid (a connection
 * breaking that one rule); bad (all of those, one after another).
 * Returns 0, or -ENOENT for another name (nothing is put).
 */
static int cm_caps_gen(struct cm_sink *s, const char *name)
{
	if (!strcmp(name, "reject")) {
		cm_reject(s);
		return 0;
	}
	if (!strcmp(name, "sidr")) {
		cm_sidr(s);
		return 0;
	}
	if (!strcmp(name, "retry")) {
		cm_connection(s, 0, CM_RETRY);
		return 0;
	}
	if (!strcmp(name, "bad")) {
		for (unsigned i = 1; i < CM_FAULTS; i++)
			cm_connection(s, i, (enum cm_fault)i);
		return 0;
	}
	for (unsigned i = 0; i < CM_FAULTS; i++)
		if (!strcmp(name, cm_fault_names[i])) {
			cm_connection(s, 0, (enum cm_fault)i);
			return 0;
		}
	return -ENOENT;
}

#endif
