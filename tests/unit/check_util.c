/* SPDX-License-Identifier: MIT */
/* Helpers the Check suites share: a seeded generator and frame templates. */
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"

uint64_t t_rand(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t t_payload_len_for(uint8_t opcode, uint64_t *rng)
{
	static const uint32_t mtus[] = { 256, 512, 1024, 2048, 4096 };
	const struct roce_opcode_info *op = roce_opcode(opcode);

	if (!(op->flags & ROCE_OPF_PAYLOAD))
		return 0;
	if (op->flags & ROCE_OPF_FIXED8)
		return 8;
	if (op->flags & (ROCE_OPF_FIRST | ROCE_OPF_MIDDLE))
		return mtus[t_rand(rng) % 5];
	uint32_t n = (uint32_t)(t_rand(rng) % 300);
	return (op->flags & ROCE_OPF_LAST) && n == 0 ? 1 : n;
}

static void rand_ib(struct roce_ib *ib, uint64_t *rng)
{
	ib->bth.se = t_rand(rng) & 1;
	ib->bth.migreq = t_rand(rng) & 1;
	ib->bth.pkey = (uint16_t)t_rand(rng);
	ib->bth.fecn = t_rand(rng) & 1;
	ib->bth.becn = t_rand(rng) & 1;
	ib->bth.dqpn = (uint32_t)t_rand(rng) & 0xffffff;
	ib->bth.ackreq = t_rand(rng) & 1;
	ib->bth.psn = (uint32_t)t_rand(rng) & 0xffffff;
	ib->rdeth.een = (uint32_t)t_rand(rng) & 0xffffff;
	ib->deth.qkey = (uint32_t)t_rand(rng);
	ib->deth.src_qp = (uint32_t)t_rand(rng) & 0xffffff;
	ib->feth = (uint32_t)t_rand(rng);
	ib->reth.va = t_rand(rng);
	ib->reth.rkey = (uint32_t)t_rand(rng);
	ib->reth.len = (uint32_t)t_rand(rng);
	ib->atmeth.va = t_rand(rng);
	ib->atmeth.rkey = (uint32_t)t_rand(rng);
	ib->atmeth.swap_add = t_rand(rng);
	ib->atmeth.compare = t_rand(rng);
	ib->aeth.syndrome = (uint8_t)t_rand(rng);
	ib->aeth.msn = (uint32_t)t_rand(rng) & 0xffffff;
	ib->atmack = t_rand(rng);
	ib->imm = (uint32_t)t_rand(rng);
	ib->ieth = (uint32_t)t_rand(rng);
}

void t_make_frame(struct roce_frame *f, unsigned ip_ver, uint8_t opcode,
		  const uint8_t *payload, uint32_t plen, uint64_t *rng)
{
	static const uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };
	static const uint8_t a6[16] = { 0xfd, [15] = 1 };
	static const uint8_t b6[16] = { 0xfd, [15] = 2 };
	static const uint8_t m1[6] = { 0x52, 0x54, 0, 0, 0, 1 };
	static const uint8_t m2[6] = { 0x52, 0x54, 0, 0, 0, 2 };

	roce_frame_init(f, ip_ver);
	memcpy(f->eth_src, m1, 6);
	memcpy(f->eth_dst, m2, 6);
	if (ip_ver == 4) {
		roce_gid_from_ipv4(f->src_gid, a4);
		roce_gid_from_ipv4(f->dst_gid, b4);
	} else {
		memcpy(f->src_gid, a6, 16);
		memcpy(f->dst_gid, b6, 16);
	}
	f->ip_id = (uint16_t)t_rand(rng);
	f->tos = (uint8_t)t_rand(rng);
	f->sport = (uint16_t)(0xc000 | (t_rand(rng) & 0x3fff));
	rand_ib(&f->ib, rng);
	f->ib.bth.opcode = opcode;
	f->ib.payload = payload;
	f->ib.payload_len = plen;
	f->ib.bth.pad = (uint8_t)roce_pad_len(plen);
}

const char *t_pcap_dir(void)
{
	const char *d = getenv("ROCEMU_PCAPS");

	return d && *d ? d : "pcaps";
}

int t_bth_eq(const struct roce_bth *a, const struct roce_bth *b)
{
	return a->opcode == b->opcode && a->se == b->se &&
	       a->migreq == b->migreq && a->pad == b->pad &&
	       a->tver == b->tver && a->pkey == b->pkey &&
	       a->fecn == b->fecn && a->becn == b->becn &&
	       a->resv6 == b->resv6 && a->dqpn == b->dqpn &&
	       a->ackreq == b->ackreq && a->resv7 == b->resv7 &&
	       a->psn == b->psn;
}

unsigned t_opcode_count(void)
{
	unsigned n = 0;

	for (unsigned op = 0; op < 256; op++)
		n += roce_opcode((uint8_t)op) != NULL;
	return n;
}

uint8_t t_opcode(unsigned i)
{
	for (unsigned op = 0; op < 256; op++)
		if (roce_opcode((uint8_t)op) && i-- == 0)
			return (uint8_t)op;
	return 0;
}
