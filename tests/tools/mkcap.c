/* SPDX-License-Identifier: MIT */
/* mkcap: writes test captures with rocemu's builder, and fuzz seeds from captures. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/proto.h"

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
			fprintf(stderr, "mkcap: %s\n", err);
			return 1;
		}
		while (roce_pcap_next(r, &rec, err) == 1) {
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
	}
	return 0;
}

int main(int argc, char **argv)
{
	char err[ROCE_PCAP_ERRLEN];

	if (argc >= 3 && !strcmp(argv[1], "--seeds"))
		return gen_seeds(argv[2], argc - 3, argv + 3, 0);
	if (argc >= 3 && !strcmp(argv[1], "--transport-seeds"))
		return gen_seeds(argv[2], argc - 3, argv + 3, 1);
	if (argc < 3 || (strcmp(argv[1], "--all") && strcmp(argv[1], "--malformed") &&
			 strcmp(argv[1], "--bench"))) {
		fprintf(stderr, "usage: mkcap --all|--malformed OUT.pcap\n"
				"       mkcap --bench OUT.pcap COUNT\n"
				"       mkcap --seeds DIR CAPTURE...\n"
				"       mkcap --transport-seeds DIR CAPTURE...\n");
		return 2;
	}
	if (roce_pcap_create(argv[2], &out, err)) {
		fprintf(stderr, "mkcap: %s\n", err);
		return 2;
	}
	if (!strcmp(argv[1], "--all"))
		gen_all();
	else if (!strcmp(argv[1], "--malformed"))
		gen_malformed();
	else
		gen_bench(argc > 3 ? strtoul(argv[3], NULL, 10) : 1000000);
	if (roce_pcap_finish(out)) {
		fprintf(stderr, "mkcap: writing %s failed\n", argv[2]);
		return 1;
	}
	return 0;
}
