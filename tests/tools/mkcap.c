/* SPDX-License-Identifier: MIT */
/* mkcap: writes test captures with rocemu's builder, and fuzz seeds from captures. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/proto.h"
#include "../fuzz/sequence_format.h"
#include "cm_caps.h"

static uint64_t rng_state = 0x5eed;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint8_t payload[4096];

/* A frame between 10.0.0.1 and 10.0.0.2 (or fd00::1, fd00::2). */
static void frame(struct roce_frame *f, unsigned ipv, uint8_t op, uint32_t plen)
{
	static const uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };
	static const uint8_t a6[16] = { 0xfd, [15] = 1 };
	static const uint8_t b6[16] = { 0xfd, [15] = 2 };
	int back = rnd() & 1;

	roce_frame_init(f, ipv);
	uint8_t mac[6] = { 0x52, 0x54, 0, 0, 0, 1 };
	memcpy(f->eth_src, mac, 6);
	mac[5] = 2;
	memcpy(f->eth_dst, mac, 6);
	if (ipv == 4) {
		roce_gid_from_ipv4(back ? f->dst_gid : f->src_gid, a4);
		roce_gid_from_ipv4(back ? f->src_gid : f->dst_gid, b4);
	} else {
		memcpy(back ? f->dst_gid : f->src_gid, a6, 16);
		memcpy(back ? f->src_gid : f->dst_gid, b6, 16);
	}
	f->ip_id = (uint16_t)rnd();
	f->sport = (uint16_t)(0xc000 | (rnd() & 0x3fff));
	struct roce_ib *ib = &f->ib;
	ib->bth.opcode = op;
	ib->bth.dqpn = (uint32_t)rnd() & 0xffffff;
	ib->bth.psn = (uint32_t)rnd() & 0xffffff;
	ib->bth.ackreq = rnd() & 1;
	ib->bth.se = rnd() & 1;
	ib->bth.migreq = rnd() & 1;
	ib->bth.becn = op == 0x81;
	ib->rdeth.een = (uint32_t)rnd() & 0xffffff;
	ib->deth = (struct roce_deth){ (uint32_t)rnd(), 0,
				       (uint32_t)rnd() & 0xffffff };
	ib->feth = (uint32_t)rnd() & 0x3f;
	ib->reth = (struct roce_reth){ rnd(), (uint32_t)rnd(), plen };
	ib->atmeth = (struct roce_atmeth){ rnd() & ~7ull, (uint32_t)rnd(),
					   rnd(), rnd() };
	uint8_t syn[] = { 0x1f, 0x00, 0x0e, 0x2e, 0x60, 0x61, 0x62, 0x63 };
	ib->aeth = (struct roce_aeth){ syn[rnd() % sizeof(syn)],
				       (uint32_t)rnd() & 0xffffff };
	ib->atmack = rnd();
	ib->imm = (uint32_t)rnd();
	ib->ieth = (uint32_t)rnd();
	for (uint32_t i = 0; i < plen; i++)
		payload[i] = (uint8_t)rnd();
	ib->payload = payload;
	ib->payload_len = plen;
	ib->bth.pad = (uint8_t)roce_pad_len(plen);
}

static uint32_t plen_for(const struct roce_opcode_info *op)
{
	static const uint32_t mtus[] = { 256, 512, 1024, 2048, 4096 };

	if (!(op->flags & ROCE_OPF_PAYLOAD))
		return 0;
	if (op->flags & ROCE_OPF_FIXED8)
		return 8;
	if (op->flags & (ROCE_OPF_FIRST | ROCE_OPF_MIDDLE))
		return mtus[rnd() % 5];
	return 1 + (uint32_t)(rnd() % 301);
}

static struct roce_pcap_writer *out;
static uint64_t ts = 1700000000ull * 1000000000ull;

static void emit(const struct roce_frame *f)
{
	static uint8_t buf[ROCE_FRAME_MAX];
	int n = roce_frame_build(f, buf, sizeof(buf));

	if (n < 0) {
		fprintf(stderr, "mkcap: build failed: %s\n", strerror(-n));
		exit(1);
	}
	ts += 1000 + rnd() % 100000;
	if (roce_pcap_write(out, ts, buf, (size_t)n)) {
		fprintf(stderr, "mkcap: write failed\n");
		exit(1);
	}
}

/* Frames that are not RoCEv2: ARP, and UDP to another port. */
static void emit_other(void)
{
	static const uint8_t arp[42] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					 0x52, 0x54, 0, 0, 0, 1, 0x08, 0x06 };
	struct roce_frame f;
	uint8_t buf[256];

	ts += 1000;
	roce_pcap_write(out, ts, arp, sizeof(arp));
	frame(&f, 4, 0x04, 16);
	int n = roce_frame_build(&f, buf, sizeof(buf));
	buf[14 + 20 + 2] = 0x00;
	buf[14 + 20 + 3] = 53; /* DNS */
	ts += 1000;
	roce_pcap_write(out, ts, buf, (size_t)n);
}

/* Every opcode over IPv4 and IPv6, one and two VLAN tags, UDP checksums. */
static void gen_all(void)
{
	struct roce_frame f;

	for (int rep = 0; rep < 3; rep++)
		for (unsigned op = 0; op < 256; op++) {
			const struct roce_opcode_info *oi = roce_opcode((uint8_t)op);
			if (!oi)
				continue;
			frame(&f, rep == 1 ? 6 : 4, (uint8_t)op, plen_for(oi));
			if (rep == 2) {
				f.nvlan = 1 + (op & 1);
				f.vlan_tpid[0] = f.nvlan == 2 ? 0x88a8 : 0x8100;
				f.vlan_tci[0] = (uint16_t)(rnd() & 0xffff);
				f.vlan_tpid[1] = 0x8100;
				f.vlan_tci[1] = (uint16_t)(rnd() & 0xffff);
				f.udp_csum = 1;
			}
			emit(&f);
		}
	emit_other();
}

/* One of each defect that rocemu dump must report. */
static void gen_malformed(void)
{
	static uint8_t buf[ROCE_FRAME_MAX];
	struct roce_frame f;

	frame(&f, 4, 0x04, 64);
	emit(&f); /* one good packet first */
	int n = roce_frame_build(&f, buf, sizeof(buf));
	buf[n - 1] ^= 0xff; /* bad ICRC */
	roce_pcap_write(out, ts += 1000, buf, (size_t)n);
	n = roce_frame_build(&f, buf, sizeof(buf));
	buf[42] = 0x1e; /* undefined opcode */
	roce_pcap_write(out, ts += 1000, buf, (size_t)n);
	n = roce_frame_build(&f, buf, sizeof(buf));
	buf[43] |= 0x01; /* TVer 1 */
	roce_pcap_write(out, ts += 1000, buf, (size_t)n);
	frame(&f, 4, 0x04, 0);
	n = roce_frame_build(&f, buf, sizeof(buf));
	buf[43] |= 0x30; /* pad 3, no payload */
	roce_pcap_write(out, ts += 1000, buf, (size_t)n);
	frame(&f, 4, 0x06, 1024);
	n = roce_frame_build(&f, buf, sizeof(buf));
	roce_pcap_write_cut(out, ts += 1000, buf, 96, (size_t)n); /* snaplen */
}

/* The bench mix: 64-byte SENDs and their ACKs, some WRITEs and READs. */
static void gen_bench(unsigned long count)
{
	static const uint8_t ops[] = { 0x04, 0x11, 0x04, 0x11, 0x0a, 0x11,
				       0x0c, 0x10, 0x04, 0x11 };
	struct roce_frame f;

	for (unsigned long i = 0; i < count; i++) {
		uint8_t op = ops[i % sizeof(ops)];
		frame(&f, 4, op, op == 0x11 || op == 0x0c ? 0 : 64);
		emit(&f);
	}
}

/* One packet of a correct RC connection for gen_rc_bench: requests from
 * 10.0.0.1 QP 0x100+conn to 10.0.0.2 QP 0x200+conn, answers back. */
static void rc_pkt(unsigned conn, uint8_t op, uint32_t psn, uint32_t plen,
		   bool ackreq, uint32_t msn)
{
	static const uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };
	const struct roce_opcode_info *oi = roce_opcode(op);
	bool req = oi->flags & ROCE_OPF_REQ;
	struct roce_frame f;

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, req ? a4 : b4);
	roce_gid_from_ipv4(f.dst_gid, req ? b4 : a4);
	f.sport = (uint16_t)(0xc000 | conn);
	f.ib.bth.opcode = op;
	f.ib.bth.dqpn = (req ? 0x200 : 0x100) + conn;
	f.ib.bth.psn = psn & ROCE_PSN_MASK;
	f.ib.bth.ackreq = ackreq;
	f.ib.bth.pad = (uint8_t)roce_pad_len(plen);
	f.ib.reth = (struct roce_reth){ 0x10000, 0x77,
					op == ROCE_OP_RC_RDMA_READ_REQUEST
						? 512 : plen };
	f.ib.aeth = (struct roce_aeth){ ROCE_AETH_ACK_NO_CREDITS,
					msn & ROCE_PSN_MASK };
	f.ib.payload = payload;
	f.ib.payload_len = plen;
	emit(&f);
}

/*
 * count packets of correct RC traffic over 64 connections, one after
 * another in cycles of seven: a two-packet SEND at MTU 1024 and its ACK,
 * a WRITE and its ACK, a 512-byte READ and its response. rocemu check
 * finds nothing in it; the bench times it.
 */
static void gen_rc_bench(unsigned long count)
{
	enum { CONNS = 64 };
	static uint32_t psn[CONNS], msn[CONNS];

	for (unsigned i = 0; i < CONNS; i++)
		psn[i] = i << 16;
	for (unsigned long n = 0, k = 0; n < count; k++) {
		unsigned c = (unsigned)(k % CONNS);
		uint32_t p = psn[c];
		rc_pkt(c, ROCE_OP_RC_SEND_FIRST, p, 1024, false, 0);
		rc_pkt(c, ROCE_OP_RC_SEND_LAST, p + 1, 100, true, 0);
		rc_pkt(c, ROCE_OP_RC_ACK, p + 1, 0, false, ++msn[c]);
		rc_pkt(c, ROCE_OP_RC_RDMA_WRITE_ONLY, p + 2, 64, true, 0);
		rc_pkt(c, ROCE_OP_RC_ACK, p + 2, 0, false, ++msn[c]);
		rc_pkt(c, ROCE_OP_RC_RDMA_READ_REQUEST, p + 3, 0, true, 0);
		rc_pkt(c, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, p + 3, 512, false,
		       ++msn[c]);
		psn[c] = p + 4;
		n += 7;
	}
}

/* One packet of a crafted flow for --replay: requester 10.0.0.1, QP
 * a_qpn; responder 10.0.0.2, QP b_qpn (the other way round with rev). */
struct cpkt {
	uint32_t a_qpn, b_qpn;
	uint8_t op;
	uint32_t psn, msn;
	uint64_t va;		/* RETH or AtomicETH */
	uint32_t len;		/* RETH's DMA length */
	uint32_t plen;		/* payload bytes */
	uint64_t atm;		/* AtomicAckETH */
	bool bad_pad;		/* pad count 3 and no payload: malformed */
	bool rev;		/* 10.0.0.2 (QP b_qpn) is the requester */
	uint8_t syn;		/* the AETH syndrome; 0: an ACK */
	uint32_t ieth;		/* the R_Key a SEND with Invalidate names */
};

static void crafted(const struct cpkt *c)
{
	static const uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };
	static uint8_t buf[ROCE_FRAME_MAX];
	bool req = roce_opcode(c->op)->flags & ROCE_OPF_REQ;
	bool from_a = req != c->rev;
	struct roce_frame f;

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, from_a ? a4 : b4);
	roce_gid_from_ipv4(f.dst_gid, from_a ? b4 : a4);
	f.sport = (uint16_t)(0xc000 | (c->a_qpn & 0x3fff));
	f.ib.bth.opcode = c->op;
	f.ib.bth.dqpn = from_a ? c->b_qpn : c->a_qpn;
	f.ib.bth.psn = c->psn & ROCE_PSN_MASK;
	f.ib.bth.ackreq = req;
	f.ib.bth.pad = (uint8_t)roce_pad_len(c->plen);
	f.ib.reth = (struct roce_reth){ c->va, 0x77, c->len };
	f.ib.atmeth = (struct roce_atmeth){ c->va, 0x77, 1, 2 };
	f.ib.aeth = (struct roce_aeth){ c->syn ? c->syn
						      : ROCE_AETH_ACK_NO_CREDITS,
					c->msn & ROCE_PSN_MASK };
	f.ib.atmack = c->atm;
	f.ib.ieth = c->ieth;
	for (uint32_t i = 0; i < c->plen; i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	f.ib.payload = payload;
	f.ib.payload_len = c->plen;
	int n = roce_frame_build(&f, buf, sizeof(buf));
	if (n < 0) {
		fprintf(stderr, "mkcap: build failed: %s\n", strerror(-n));
		exit(1);
	}
	if (c->bad_pad)
		buf[14 + 20 + 8 + 1] |= 0x30;	/* BTH pad count 3 */
	ts += 1000;
	if (roce_pcap_write(out, ts, buf, (size_t)n)) {
		fprintf(stderr, "mkcap: write failed\n");
		exit(1);
	}
}

/*
 * Captures for rocemu replay's limits (docs/capture-limits.md), by name:
 *   wrap     a WRITE to [0x40, 0x80), then a READ and a CMP_SWAP whose
 *            ranges wrap past 2^64 to end inside it, all answered
 *   bigread  one READ of 2^31 bytes with one 1024-byte response
 *   lowqpn   SEND and ACK on QPs 0x5 (responder) and 0x6, then on 0x1
 *            and 0x7, then on 0x11 and 0x12
 *   badpad   a WRITE_ONLY whose pad count exceeds its payload (malformed)
 *            and its ACK, then a SEND and its ACK
 *   backnak  a SEND from 10.0.0.1 and its ACK, then a WRITE the other way
 *            that 10.0.0.1 refuses with a remote access NAK
 *   sendinv  a SEND and its ACK, then a SEND with Invalidate of an R_Key
 *            the responder never gave out, answered as Linux rxe does: a
 *            positive ACK with MSN 0 (conformance/differences.md,
 *            SEND-INV-MR-KEY)
 */
static int gen_replay(const char *name)
{
	const uint32_t A = 0x100, B = 0x200;
	const uint64_t top = 0 - 0x40ull;

	if (!strcmp(name, "wrap")) {
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_RDMA_WRITE_ONLY, 1, 0,
					0x40, 64, 64 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 1, 1 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_RDMA_READ_REQUEST, 2,
					0, top, 0x80 });
		crafted(&(struct cpkt){ A, B,
					ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, 2,
					2, .plen = 0x80 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_CMP_SWAP, 3, 0,
					0 - 8ull });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ATOMIC_ACK, 3, 3,
					.atm = 0x4141414141414141ull });
	} else if (!strcmp(name, "bigread")) {
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_RDMA_READ_REQUEST, 1,
					0, 0x1000, 0x80000000u });
		crafted(&(struct cpkt){ A, B,
					ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST, 1,
					0, .plen = 1024 });
	} else if (!strcmp(name, "lowqpn")) {
		static const uint32_t qp[3][2] = { { 6, 5 }, { 7, 1 },
						   { 0x12, 0x11 } };
		for (unsigned i = 0; i < 3; i++) {
			crafted(&(struct cpkt){ qp[i][0], qp[i][1],
						ROCE_OP_RC_SEND_ONLY, 1,
						.plen = 64 });
			crafted(&(struct cpkt){ qp[i][0], qp[i][1],
						ROCE_OP_RC_ACK, 1, 1 });
		}
	} else if (!strcmp(name, "badpad")) {
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_RDMA_WRITE_ONLY, 1, 0,
					0x40, 0, .bad_pad = true });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 1, 1 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_SEND_ONLY, 2,
					.plen = 16 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 2, 2 });
	} else if (!strcmp(name, "backnak")) {
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_SEND_ONLY, 1,
					.plen = 16 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 1, 1 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_RDMA_WRITE_ONLY, 100,
					0, 0x1000, 32, 32, .rev = true });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 100, 0,
					.rev = true,
					.syn = ROCE_AETH_NAK_REM_ACCESS });
	} else if (!strcmp(name, "sendinv")) {
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_SEND_ONLY, 1,
					.plen = 16 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 1, 1 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_SEND_ONLY_INV, 2,
					.plen = 16, .ieth = 0x1234 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 2, 0 });
	} else {
		fprintf(stderr, "mkcap: no replay capture '%s'\n", name);
		return 2;
	}
	return 0;
}

/*
 * Captures of errors rocemu check explains (a "reason"), by name; the
 * requester is 10.0.0.1 QP 0x100, the responder 10.0.0.2 QP 0x200, every
 * RETH names R_Key 0x77:
 *   range    a WRITE of 32 bytes at 0x1000, ACKed; then one of 64 bytes
 *            at 0x1000 refused with a remote access NAK
 *   silent   a SEND at PSN 5 sent three times and never answered
 *   invreq   a READ of 16 bytes at 0x2000 refused with an invalid
 *            request NAK
 */
static int gen_why(const char *name)
{
	const uint32_t A = 0x100, B = 0x200;

	if (!strcmp(name, "range")) {
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_RDMA_WRITE_ONLY, 1, 0,
					0x1000, 32, 32 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 1, 1 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_RDMA_WRITE_ONLY, 2, 0,
					0x1000, 64, 64 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 2, 1,
					.syn = ROCE_AETH_NAK_REM_ACCESS });
	} else if (!strcmp(name, "silent")) {
		for (int i = 0; i < 3; i++)
			crafted(&(struct cpkt){ A, B, ROCE_OP_RC_SEND_ONLY, 5,
						.plen = 16 });
	} else if (!strcmp(name, "invreq")) {
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_RDMA_READ_REQUEST, 1,
					0, 0x2000, 16 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 1, 0,
					.syn = ROCE_AETH_NAK_INV_REQ });
	} else {
		fprintf(stderr, "mkcap: no why capture '%s'\n", name);
		return 2;
	}
	return 0;
}

/* count RC flows of one 64-byte SEND and its ACK each, one after
 * another: requester 10.0.0.1 QP 0x800000 + i, responder 10.0.0.2 QP
 * 0x11 + i (count up to 0x7fffee). */
static void gen_flows(unsigned long count)
{
	for (unsigned long i = 0; i < count && i < 0x7fffee; i++) {
		uint32_t a = 0x800000 + (uint32_t)i, b = 0x11 + (uint32_t)i;
		crafted(&(struct cpkt){ a, b, ROCE_OP_RC_SEND_ONLY, 1,
					.plen = 64 });
		crafted(&(struct cpkt){ a, b, ROCE_OP_RC_ACK, 1, 1 });
	}
}

/* One RC flow of count 64-byte SENDs, PSN 1 on (count below 2^23, so
 * that their PSNs stay in order), answered by one coalesced ACK of the
 * last at the very end: requester 10.0.0.1 QP 0x100, responder 10.0.0.2
 * QP 0x200. */
static void gen_oneflow(unsigned long count)
{
	uint32_t i;

	for (i = 1; i <= count && i < 0x800000; i++)
		crafted(&(struct cpkt){ 0x100, 0x200, ROCE_OP_RC_SEND_ONLY, i,
					.plen = 64 });
	if (i > 1)
		crafted(&(struct cpkt){ 0x100, 0x200, ROCE_OP_RC_ACK, i - 1,
					i - 1 });
}

/* ---- CM exchanges (--cm, tests/tools/cm_caps.h) --------------------- */

static void cm_put(void *arg, const struct roce_frame *f)
{
	(void)arg;
	emit(f);
}

static int gen_cm(const char *name)
{
	struct cm_sink sink = { .put = cm_put, .qp1_psn = { 0x100, 0x200 } };

	if (cm_caps_gen(&sink, name) == 0)
		return 0;
	fprintf(stderr, "mkcap: --cm: no capture named '%s'\n", name);
	return 2;
}

/* ---- responder bounds the CM announced (--resp) ---------------------- */

/* One RC packet of the --resp connection: from 10.0.0.1 (QP 0x11) to
 * 10.0.0.2 (QP 0x12), or back with rev; READ requests ask 64 bytes. */
static void resp_pkt(bool rev, uint8_t op, uint32_t psn, uint8_t syn,
		     uint32_t msn)
{
	static const uint8_t a[4] = { 10, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 };
	struct roce_frame f;

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, rev ? b : a);
	roce_gid_from_ipv4(f.dst_gid, rev ? a : b);
	f.sport = 0xc021;
	f.ib.bth.opcode = op;
	f.ib.bth.dqpn = rev ? 0x11 : 0x12;
	f.ib.bth.psn = psn & ROCE_PSN_MASK;
	f.ib.bth.ackreq = !rev;
	f.ib.reth = (struct roce_reth){ 0x10000 + 64 * psn, 0x77, 64 };
	f.ib.aeth = (struct roce_aeth){ syn, msn };
	for (unsigned i = 0; i < 64; i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	f.ib.payload = payload;
	f.ib.payload_len = op == ROCE_OP_RC_SEND_ONLY ||
				   op == ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY
			       ? 64 : 0;
	emit(&f);
}

/*
 * REQ (QP 0x11, PSN 0x0a0a00) and REP (QP 0x12, PSN 0x0b0b00) and RTU;
 * the REP asks the REQ's sender for rnr RNR retries, the REQ announces
 * initiator depth depth. 10.0.0.1 then sends from PSN 0x0b0b00.
 */
static void resp_connect(unsigned rnr, unsigned depth)
{
	struct cm_sink sink = { .put = cm_put, .qp1_psn = { 0x100, 0x200 } };
	struct roce_cm_msg req, rep, rtu;
	uint32_t ca = 0x1000a001, cb = 0x2000b002;
	uint64_t ta = 0xa00000000ull | ca;

	cm_req(&req, ta, ca, 0x11, 0x0a0a00, 7174);
	req.req.initiator_depth = (uint8_t)depth;
	req.req.responder_resources = (uint8_t)depth;
	memset(&rep, 0, sizeof(rep));
	rep.attr_id = ROCE_CM_ATTR_REP;
	rep.tid = ta;
	rep.rep = (struct roce_cm_rep){ .local_comm_id = cb,
					.remote_comm_id = ca,
					.local_qpn = 0x12,
					.starting_psn = 0x0b0b00,
					.responder_resources = (uint8_t)depth,
					.initiator_depth = (uint8_t)depth,
					.target_ack_delay = 15,
					.rnr_retry_count = (uint8_t)rnr,
					.local_ca_guid = 0x02000afffe000002ull };
	cm_ids(&rtu, ROCE_CM_ATTR_RTU, ta + 0x100000000ull, ca, cb);
	cm_emit(&sink, 0, &req);
	cm_emit(&sink, 1, &rep);
	cm_emit(&sink, 0, &rtu);
}

/*
 * rnr-ok / rnr-over: the REP asks for 2 RNR retries; a SEND refused by
 * RNR NAKs (timer code 1, 0.01 ms) is sent again 2 (3) times, then
 * ACKed. depth-ok / depth-over: the REQ announces initiator depth 2; 2
 * (3) READs go out before the first is answered.
 */
static int gen_resp(const char *name)
{
	const uint32_t p = 0x0b0b00;
	uint8_t rnr = roce_aeth_syndrome(ROCE_AETH_RNR_NAK, 1);
	bool over = strstr(name, "-over") != NULL;

	if (!strncmp(name, "rnr-", 4)) {
		resp_connect(2, 1);
		unsigned tries = over ? 3 : 2;
		resp_pkt(false, ROCE_OP_RC_SEND_ONLY, p, 0, 0);
		for (unsigned i = 0; i < tries; i++) {
			resp_pkt(true, ROCE_OP_RC_ACK, p, rnr, 0);
			resp_pkt(false, ROCE_OP_RC_SEND_ONLY, p, 0, 0);
		}
		resp_pkt(true, ROCE_OP_RC_ACK, p, ROCE_AETH_ACK_NO_CREDITS, 1);
		return 0;
	}
	if (!strncmp(name, "depth-", 6)) {
		resp_connect(7, 2);
		unsigned n = over ? 3 : 2;
		for (unsigned i = 0; i < n; i++)
			resp_pkt(false, ROCE_OP_RC_RDMA_READ_REQUEST, p + i, 0,
				 0);
		for (unsigned i = 0; i < n; i++)
			resp_pkt(true, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY,
				 p + i, ROCE_AETH_ACK_NO_CREDITS, i + 1);
		return 0;
	}
	fprintf(stderr, "mkcap: --resp: no capture named '%s'\n", name);
	return 2;
}

/* Writes each frame of the captures to DIR/seed-N for the fuzzers. With
 * transport set, only the RoCE transport packet, after a flag byte of 1
 * (aim at the QP); else the whole frame after a link-type byte. */
static int gen_seeds(const char *dir, int argc, char **argv, int transport)
{
	char err[ROCE_PCAP_ERRLEN], path[4096];
	unsigned n = 0;

	for (int i = 0; i < argc; i++) {
		struct roce_pcap_reader *r;
		struct roce_pcap_rec rec;
		if (roce_pcap_open(argv[i], &r, err)) {
			fprintf(stderr, "mkcap: %s: %s\n", argv[i], err);
			return 1;
		}
		int rc;
		while ((rc = roce_pcap_next(r, &rec, err)) == 1) {
			snprintf(path, sizeof(path), "%s/seed-%u", dir, n++);
			FILE *fp = fopen(path, "wb");
			if (!fp) {
				perror(path);
				return 1;
			}
			struct roce_frame f;
			const char *why;
			if (!transport) {
				fputc((int)roce_pcap_link(r), fp);
				fwrite(rec.data, 1, rec.caplen, fp);
			} else if (!roce_frame_parse(roce_pcap_link(r), rec.data,
						     rec.caplen, rec.wire_len,
						     &f, &why) &&
				   !f.truncated) {
				size_t tl = f.udp_len - ROCE_UDP_HLEN;
				fputc(1, fp);
				fwrite(f.ib.payload - f.ib.op->hdr_len, 1, tl, fp);
			}
			fclose(fp);
		}
		roce_pcap_close(r);
		if (rc < 0) {
			fprintf(stderr, "mkcap: %s: %s\n", argv[i], err);
			return 1;
		}
	}
	return 0;
}

/* ---- sequence seeds ------------------------------------------------ */

/* The post-send step's work request opcodes, by index, and what a seed
 * posts at most (the target's send queue holds 16). */
enum {
	WR_SEND = 0, WR_SEND_IMM, WR_WRITE, WR_WRITE_IMM, WR_READ, WR_CAS,
	WR_FAA, WR_SEND_INV,
	SEQ_MAX_WRS = 12,	/* sends posted per seed: its queue holds 16 */
};

/* One RoCE packet of a capture: its flow and its transport bytes. */
struct cap_pkt {
	uint8_t src[16], dst[16];
	uint32_t dqpn, psn;
	const struct roce_opcode_info *op;
	uint32_t reth_len, payload_len;
	uint8_t *tp;		/* BTH to ICRC */
	size_t tl;
};

struct seq {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct seq *s, const void *data, size_t n)
{
	if (s->n + n > s->cap) {
		s->cap = 2 * (s->n + n);
		if (!(s->p = realloc(s->p, s->cap))) {
			fprintf(stderr, "mkcap: out of memory\n");
			exit(1);
		}
	}
	memcpy(s->p + s->n, data, n);
	s->n += n;
}

#define PUT(s, ...) put((s), (const uint8_t[]){ __VA_ARGS__ }, \
			sizeof((const uint8_t[]){ __VA_ARGS__ }))

/* A packet's flow and a copy of its transport bytes; -ENOMEM. */
static int keep_packet(struct cap_pkt *p, const struct roce_frame *f)
{
	memcpy(p->src, f->src_gid, 16);
	memcpy(p->dst, f->dst_gid, 16);
	p->dqpn = f->ib.bth.dqpn;
	p->psn = f->ib.bth.psn;
	p->op = f->ib.op;
	p->reth_len = f->ib.reth.len;
	p->payload_len = f->ib.payload_len;
	p->tl = f->udp_len - ROCE_UDP_HLEN;
	if (!(p->tp = malloc(p->tl)))
		return -ENOMEM;
	memcpy(p->tp, f->ib.payload - f->ib.op->hdr_len, p->tl);
	return 0;
}

static void free_packets(struct cap_pkt *pkts, long n)
{
	for (long i = 0; i < n; i++)
		free(pkts[i].tp);
	free(pkts);
}

/* Reads every untruncated RoCE packet of a capture into *pkts_out: the
 * count, or -1 after saying why (then nothing is left allocated). */
static long read_packets(const char *path, struct cap_pkt **pkts_out)
{
	char err[ROCE_PCAP_ERRLEN];
	struct roce_pcap_reader *r;
	struct roce_pcap_rec rec;
	long n = 0;
	int rc;

	*pkts_out = NULL;
	if (roce_pcap_open(path, &r, err)) {
		fprintf(stderr, "mkcap: %s: %s\n", path, err);
		return -1;
	}
	while ((rc = roce_pcap_next(r, &rec, err)) == 1) {
		struct roce_frame f;
		const char *why;
		if (roce_frame_parse(roce_pcap_link(r), rec.data, rec.caplen,
				     rec.wire_len, &f, &why) || f.truncated)
			continue;
		struct cap_pkt *v =
			realloc(*pkts_out, (size_t)(n + 1) * sizeof(*v));
		if (v)
			*pkts_out = v;
		if (!v || keep_packet(&v[n], &f)) {
			snprintf(err, sizeof(err), "out of memory");
			rc = -ENOMEM;
			break;
		}
		n++;
	}
	roce_pcap_close(r);
	if (rc < 0) {
		fprintf(stderr, "mkcap: %s: %s\n", path, err);
		free_packets(*pkts_out, n);
		return -1;
	}
	return n;
}

static bool same_flow(const struct cap_pkt *a, const struct cap_pkt *b)
{
	return !memcmp(a->src, b->src, 16) && !memcmp(a->dst, b->dst, 16) &&
	       a->dqpn == b->dqpn;
}

/* The reverse direction of a flow: the peer answering it. */
static bool reverse_flow(const struct cap_pkt *a, const struct cap_pkt *b)
{
	return !memcmp(a->src, b->dst, 16) && !memcmp(a->dst, b->src, 16);
}

static bool is_request(const struct cap_pkt *p)
{
	return !(p->op->flags & ROCE_OPF_RESP);
}

static void put_packet(struct seq *s, uint8_t flags, const struct cap_pkt *p)
{
	PUT(s, STEP_PACKET, flags, (uint8_t)(p->tl >> 8), (uint8_t)p->tl);
	put(s, p->tp, p->tl);
}

/* Verbs calls after every third packet, in turn. Where they fall is not
 * chosen to break a message: finding such a place is the fuzzer's job. */
static void put_interleaved(struct seq *s, unsigned turn)
{
	switch (turn % 7) {
	case 0: PUT(s, STEP_CQ_POLL, 0x1e); break;	/* CQ 0, 16 */
	case 1: PUT(s, STEP_ADVANCE, 20); break;	/* 1 ms */
	case 2: PUT(s, STEP_MR_REG, 0x12, 0, 0); break;	/* slot 2, window 2 */
	case 3: PUT(s, STEP_POST_RECV, 0x00, 1, 0x00, 0, 0x20, 0x00); break;
	case 4: PUT(s, STEP_MR_DEREG, 2); break;
	case 5: PUT(s, STEP_ASYNC); break;
	default: PUT(s, STEP_RUN); break;
	}
}

/* A fresh connection of QP slot qp (default attributes), n receives of
 * a whole window each. */
static void put_prologue(struct seq *s, unsigned qp, unsigned n)
{
	PUT(s, STEP_QP_STATE, (uint8_t)(1 | qp << 3), 0, 0, 0); /* RESET */
	PUT(s, STEP_QP_STATE, (uint8_t)(4 | qp << 3), 0x6a, 0xe4, 0); /* up */
	PUT(s, STEP_POST_RECV, (uint8_t)(qp | (n - 1) << 1));
	for (unsigned i = 0; i < n; i++)
		PUT(s, 1, 0x00, 0, 0x20, 0x00); /* MR 0, 8192 bytes */
}

static int write_seed(const char *dir, unsigned *n, const struct seq *s)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/seq-%u", dir, (*n)++);
	FILE *fp = fopen(path, "wb");
	bool ok = fp && fwrite(s->p, 1, s->n, fp) == s->n;
	if ((fp && fclose(fp)) || !ok) {
		perror(path);
		return 1;
	}
	return 0;
}

/*
 * The requests of the flow of pkts[first], in order, at the emulated
 * responder: aimed at its QP with the PSN it expects and RETH/AtomicETH
 * in its MR, with verbs calls between them. A UD flow goes to a UD QP
 * made for it, which also sends one datagram back through an AH.
 */
static void seed_responder(struct seq *s, const struct cap_pkt *pkts,
			   long n, long first)
{
	bool ud = pkts[first].op->transport == ROCE_TR_UD;
	uint8_t flags = ud ? PK_AIM | PK_QP1 | PK_QKEY
			   : PK_AIM | PK_ADDR | PK_PSN | PK_FIT;
	unsigned turn = 0;

	if (ud) {
		PUT(s, STEP_QP_CREATE, 0x05);	/* slot 1, UD */
		PUT(s, STEP_AH_CREATE, 0);
		put_prologue(s, 1, 8);
		/* a signaled SEND from QP 1 through AH 0, 64 bytes of MR 0 */
		PUT(s, STEP_POST_SEND, 0x18, 0x01, 0, 0, 0, 0x00, 0, 0, 64);
	} else {
		put_prologue(s, 0, 8);
	}
	for (long i = first; i < n; i++) {
		if (!same_flow(&pkts[i], &pkts[first]) || !is_request(&pkts[i]))
			continue;
		put_packet(s, flags, &pkts[i]);
		if (i % 3 == 2)
			put_interleaved(s, turn++);
	}
	PUT(s, STEP_ADVANCE, 30, STEP_CQ_POLL, 0x1e, STEP_ASYNC);
}

/* The post-send step for the message a request packet starts, or -1
 * if it starts none: opcode index, and length (2 bytes). */
static int wr_of(const struct cap_pkt *pkts, long n, long i, uint32_t *len)
{
	const struct cap_pkt *p = &pkts[i];
	unsigned fl = p->op->flags, ex = p->op->exts;

	if (!(fl & (ROCE_OPF_FIRST | ROCE_OPF_ONLY)))
		return -1;
	*len = fl & ROCE_OPF_ATOMIC ? 8 : p->reth_len;
	if (fl & ROCE_OPF_READ)
		return WR_READ;
	if (fl & ROCE_OPF_ATOMIC)
		return (p->tp[0] & 0x1f) == 0x13 ? WR_CAS : WR_FAA;
	/* The rest of the message tells a SEND's length and kind, and
	 * whether a WRITE carries an immediate. */
	*len = fl & ROCE_OPF_WRITE ? p->reth_len : 0;
	for (long j = i; j < n; j++) {
		const struct cap_pkt *q = &pkts[j];
		if (!same_flow(q, p) || !is_request(q))
			continue;
		if (fl & ROCE_OPF_SEND)
			*len += q->payload_len;
		ex |= q->op->exts;
		if (q->op->flags & (ROCE_OPF_LAST | ROCE_OPF_ONLY))
			break;
	}
	if (fl & ROCE_OPF_WRITE)
		return ex & ROCE_EXT_IMMDT ? WR_WRITE_IMM : WR_WRITE;
	return ex & ROCE_EXT_IMMDT ? WR_SEND_IMM
	       : ex & ROCE_EXT_IETH ? WR_SEND_INV : WR_SEND;
}

/* Posts, from QP slot 0, the messages of the flow of pkts[first] (one
 * per first PSN: a retransmission is not a new message). */
static void put_sends(struct seq *s, const struct cap_pkt *pkts, long n,
		      long first)
{
	uint32_t psns[SEQ_MAX_WRS];
	unsigned posted = 0;

	for (long i = first; i < n && posted < SEQ_MAX_WRS; i++) {
		uint32_t len;
		int wr;
		bool seen = false;
		if (!same_flow(&pkts[i], &pkts[first]) ||
		    !is_request(&pkts[i]) || (wr = wr_of(pkts, n, i, &len)) < 0)
			continue;
		for (unsigned k = 0; k < posted; k++)
			seen |= psns[k] == pkts[i].psn;
		if (seen)
			continue;
		psns[posted++] = pkts[i].psn;
		/* signaled, one SGE in MR 0 and the remote MR 0 */
		PUT(s, STEP_POST_SEND, (uint8_t)(wr | 0x10), 0x01, 0, 40, 99,
		    0x00, 0, (uint8_t)(len >> 8 & 0x3f), (uint8_t)len);
	}
	PUT(s, STEP_RUN);
}

/*
 * The emulated device as the requester: it posts what the requests of
 * the flow answered by pkts[first] asked for, then takes that flow's
 * responses (ACK, NAK, READ responses, atomic ACKs) in order, each at the
 * PSN it expects, with verbs calls between them.
 */
static void seed_requester(struct seq *s, const struct cap_pkt *pkts,
			   long n, long first)
{
	unsigned turn = 0;

	put_prologue(s, 0, 1);
	for (long i = 0; i < n; i++)
		if (reverse_flow(&pkts[i], &pkts[first]) &&
		    is_request(&pkts[i])) {
			put_sends(s, pkts, n, i);
			break;
		}
	for (long i = first; i < n; i++) {
		if (!same_flow(&pkts[i], &pkts[first]) || is_request(&pkts[i]))
			continue;
		put_packet(s, PK_AIM | PK_PSN, &pkts[i]);
		if (i % 3 == 2)
			put_interleaved(s, turn++);
	}
	PUT(s, STEP_ADVANCE, 30, STEP_CQ_POLL, 0x1e, STEP_ASYNC);
}

/* Whether pkts[i] is the first packet of its flow of this kind. */
static bool starts_flow(const struct cap_pkt *pkts, long i, bool requests)
{
	if (is_request(&pkts[i]) != requests)
		return false;
	for (long j = 0; j < i; j++)
		if (same_flow(&pkts[j], &pkts[i]) &&
		    is_request(&pkts[j]) == requests)
			return false;
	return true;
}

/* Writes DIR/seq-N: per flow of each capture, its requests at the
 * responder and, if it has any, its responses at the requester. */
static int gen_sequence_seeds(const char *dir, int argc, char **argv)
{
	unsigned count = 0;

	for (int a = 0; a < argc; a++) {
		struct cap_pkt *pkts;
		long n = read_packets(argv[a], &pkts);
		int rc = n < 0;
		for (long i = 0; i < n && !rc; i++) {
			struct seq s = { 0 };
			if (starts_flow(pkts, i, true))
				seed_responder(&s, pkts, n, i);
			else if (starts_flow(pkts, i, false))
				seed_requester(&s, pkts, n, i);
			if (s.n)
				rc = write_seed(dir, &count, &s);
			free(s.p);
		}
		if (n >= 0)
			free_packets(pkts, n);
		if (rc)
			return 1;
	}
	return 0;
}

static int gen_state(const char *name);
static int gen_inflight(int argc, char **argv);
static int gen_reread(int argc, char **argv);

int main(int argc, char **argv)
{
	char err[ROCE_PCAP_ERRLEN];

	if (argc >= 3 && !strcmp(argv[1], "--seeds"))
		return gen_seeds(argv[2], argc - 3, argv + 3, 0);
	if (argc >= 3 && !strcmp(argv[1], "--transport-seeds"))
		return gen_seeds(argv[2], argc - 3, argv + 3, 1);
	if (argc >= 3 && !strcmp(argv[1], "--sequence-seeds"))
		return gen_sequence_seeds(argv[2], argc - 3, argv + 3);
	if (argc < 3 || (strcmp(argv[1], "--all") && strcmp(argv[1], "--malformed") &&
			 strcmp(argv[1], "--bench") &&
			 strcmp(argv[1], "--rc-bench") &&
			 strcmp(argv[1], "--replay") &&
			 strcmp(argv[1], "--state") &&
			 strcmp(argv[1], "--why") &&
			 strcmp(argv[1], "--cm") &&
			 strcmp(argv[1], "--resp") &&
			 strcmp(argv[1], "--inflight") &&
			 strcmp(argv[1], "--reread") &&
			 strcmp(argv[1], "--flows") &&
			 strcmp(argv[1], "--oneflow"))) {
		fprintf(stderr, "usage: mkcap --all|--malformed OUT.pcap\n"
				"       mkcap --bench OUT.pcap COUNT\n"
				"       mkcap --rc-bench OUT.pcap COUNT\n"
				"       mkcap --replay OUT.pcap "
				"wrap|bigread|lowqpn|badpad|backnak|sendinv\n"
				"       mkcap --state OUT.pcap mw2|recvlen|resend\n"
				"       mkcap --why OUT.pcap range|silent|invreq\n"
				"       mkcap --cm OUT.pcap connect|reject|sidr|"
				"bad|bad-tid|bad-comm|\n"
				"             bad-order|bad-drep|bad-qpn|bad-psn|bad-drep-tid\n"
				"       mkcap --resp OUT.pcap rnr-ok|rnr-over|"
				"depth-ok|depth-over\n"
				"       mkcap --inflight OUT.pcap READS [DEPTH]\n"
				"       mkcap --reread OUT.pcap READS\n"
				"       mkcap --flows OUT.pcap COUNT\n"
				"       mkcap --oneflow OUT.pcap COUNT\n"
				"       mkcap --seeds DIR CAPTURE...\n"
				"       mkcap --transport-seeds DIR CAPTURE...\n"
				"       mkcap --sequence-seeds DIR "
				"CAPTURE...\n");
		return 2;
	}
	if (roce_pcap_create(argv[2], &out, err)) {
		fprintf(stderr, "mkcap: %s\n", err);
		return 2;
	}
	if (!strcmp(argv[1], "--replay") || !strcmp(argv[1], "--cm") ||
	    !strcmp(argv[1], "--why") || !strcmp(argv[1], "--state")) {
		const char *name = argc > 3 ? argv[3] : "";
		int rc = argv[1][2] == 'r' ? gen_replay(name)
			 : argv[1][2] == 's' ? gen_state(name)
			 : argv[1][2] == 'w' ? gen_why(name) : gen_cm(name);
		if (rc) {
			roce_pcap_finish(out);
			return rc;
		}
	} else if (!strcmp(argv[1], "--resp")) {
		int rc = gen_resp(argc > 3 ? argv[3] : "");
		if (rc) {
			roce_pcap_finish(out);
			return rc;
		}
	} else if (!strcmp(argv[1], "--inflight") ||
		   !strcmp(argv[1], "--reread")) {
		int rc = argv[1][2] == 'i' ? gen_inflight(argc - 3, argv + 3)
					   : gen_reread(argc - 3, argv + 3);
		if (rc) {
			roce_pcap_finish(out);
			return rc;
		}
	} else if (!strcmp(argv[1], "--flows"))
		gen_flows(argc > 3 ? strtoul(argv[3], NULL, 10) : 100000);
	else if (!strcmp(argv[1], "--oneflow"))
		gen_oneflow(argc > 3 ? strtoul(argv[3], NULL, 10) : 20000);
	else if (!strcmp(argv[1], "--all"))
		gen_all();
	else if (!strcmp(argv[1], "--malformed"))
		gen_malformed();
	else if (!strcmp(argv[1], "--rc-bench"))
		gen_rc_bench(argc > 3 ? strtoul(argv[3], NULL, 10) : 1000000);
	else
		gen_bench(argc > 3 ? strtoul(argv[3], NULL, 10) : 1000000);
	if (roce_pcap_finish(out)) {
		fprintf(stderr, "mkcap: writing %s failed\n", argv[2]);
		return 1;
	}
	return 0;
}

/*
 * Captures of state replay rebuilds from the capture (docs/replay.md), by
 * name; the requester is 10.0.0.1 QP 0x100, the responder 10.0.0.2 QP
 * 0x200, every RETH names R_Key 0x77:
 *   mw2      a WRITE of 32 bytes at 0x1000, ACKed; a SEND with
 *            Invalidate of R_Key 0x77, ACKed (MSN 2); the same WRITE
 *            again, refused with a remote access NAK: 0x77 was a type 2
 *            memory window, invalidated by the SEND
 *   recvlen  a SEND of 16 bytes, ACKed; one of 64 bytes refused with a
 *            Remote Operational Error NAK (0x63), as Linux rxe answers a
 *            SEND longer than its receive buffer
 *            (conformance/differences.md, RECV-TOO-SMALL)
 *   resend   a SEND sent again by the requester's timer before its ACK
 *            came, both ACKed, then the next SEND and its ACK, as rxe in
 *            a slow guest (DUP-REQ)
 */
static int gen_state(const char *name)
{
	const uint32_t A = 0x100, B = 0x200;

	if (!strcmp(name, "mw2")) {
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_RDMA_WRITE_ONLY, 1, 0,
					0x1000, 32, 32 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 1, 1 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_SEND_ONLY_INV, 2,
					.plen = 16, .ieth = 0x77 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 2, 2 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_RDMA_WRITE_ONLY, 3, 0,
					0x1000, 32, 32 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 3, 2,
					.syn = ROCE_AETH_NAK_REM_ACCESS });
	} else if (!strcmp(name, "recvlen")) {
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_SEND_ONLY, 1,
					.plen = 16 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 1, 1 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_SEND_ONLY, 2,
					.plen = 64 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 2, 1,
					.syn = ROCE_AETH_NAK_REM_OP });
	} else if (!strcmp(name, "resend")) {
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_SEND_ONLY, 1,
					.plen = 16 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_SEND_ONLY, 1,
					.plen = 16 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 1, 1 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 1, 1 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_SEND_ONLY, 2,
					.plen = 16 });
		crafted(&(struct cpkt){ A, B, ROCE_OP_RC_ACK, 2, 2 });
	} else {
		fprintf(stderr, "mkcap: no state capture '%s'\n", name);
		return 2;
	}
	return 0;
}

/*
 * --inflight READS [DEPTH]: READS 64-byte READs from 10.0.0.1 (QP 0x11)
 * to 10.0.0.2 (QP 0x12), sent back to back from PSN 0x0b0b00, then their
 * responses in order (MSN 1, 2, ...): READS outstanding at once. With
 * DEPTH, a CM REQ and REP announcing Initiator Depth and Responder
 * Resources DEPTH come first (both ends), and an RTU.
 */
static int gen_inflight(int argc, char **argv)
{
	const uint32_t p = 0x0b0b00;
	unsigned long n = argc > 0 ? strtoul(argv[0], NULL, 10) : 0;
	unsigned long depth = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;

	if (!n || n > 100000 || depth > 255) {
		fprintf(stderr, "mkcap: --inflight: READS 1..100000, DEPTH "
				"0..255\n");
		return 2;
	}
	if (argc > 1)
		resp_connect(7, (unsigned)depth);
	for (unsigned long i = 0; i < n; i++)
		resp_pkt(false, ROCE_OP_RC_RDMA_READ_REQUEST, p + (uint32_t)i,
			 0, 0);
	for (unsigned long i = 0; i < n; i++)
		resp_pkt(true, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY,
			 p + (uint32_t)i, ROCE_AETH_ACK_NO_CREDITS,
			 (uint32_t)i + 1);
	return 0;
}

/*
 * --reread READS: READS 64-byte READs on the --inflight connection, each
 * answered before the next is sent; then the first sent again (its
 * requester never had the answer) and answered again from the saved
 * result, with the MSN of its first answer (IBTA 9.7.5.1.1). The first
 * READ was outstanding all along: READS at once.
 */
static int gen_reread(int argc, char **argv)
{
	const uint32_t p = 0x0b0b00;
	unsigned long n = argc > 0 ? strtoul(argv[0], NULL, 10) : 0;

	if (!n || n > 100000) {
		fprintf(stderr, "mkcap: --reread: READS 1..100000\n");
		return 2;
	}
	for (unsigned long i = 0; i < n; i++) {
		resp_pkt(false, ROCE_OP_RC_RDMA_READ_REQUEST, p + (uint32_t)i,
			 0, 0);
		resp_pkt(true, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY,
			 p + (uint32_t)i, ROCE_AETH_ACK_NO_CREDITS,
			 (uint32_t)i + 1);
	}
	resp_pkt(false, ROCE_OP_RC_RDMA_READ_REQUEST, p, 0, 0);
	resp_pkt(true, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, p,
		 ROCE_AETH_ACK_NO_CREDITS, 1);
	return 0;
}
