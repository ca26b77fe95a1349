/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary transport packets at an RC responder in RTS; nothing outside its MR may change. */
#include <stdlib.h>
#include <string.h>

#include "rocemu/device.h"
#include "rocemu/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { GUARD = 4096, WINDOW = 16384, CANARY = 0x5a };

static const uint8_t dev_gid[16] = { [10] = 0xff, [11] = 0xff, [12] = 10,
				     [15] = 2 };
static const uint8_t peer_gid[16] = { [10] = 0xff, [11] = 0xff, [12] = 10,
				      [15] = 1 };

struct rig {
	struct rocemu_world *w;
	struct rocemu_dev *dev;
	struct rocemu_pd *pd;
	struct rocemu_cq *cq;
	struct rocemu_qp *qp;
	struct rocemu_mr *mr;
	uint8_t mem[GUARD + WINDOW + GUARD];
};

static void rig_up(struct rig *r)
{
	struct rocemu_dev_cfg cfg = { .name = "fuzz", .mtu = IBV_MTU_4096 };
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
					 .cap = { 8, 8, 1, 1, 0 } };
	struct rocemu_rc_params p = {
		.peer_qpn = 0x11, .mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.min_rnr_timer = 1, .max_rd_atomic = 4,
	};

	memcpy(cfg.gid, dev_gid, 16);
	memcpy(p.peer_gid, peer_gid, 16);
	memset(r->mem, CANARY, sizeof(r->mem));
	r->w = rocemu_world_new(1);
	r->dev = rocemu_dev_new(r->w, &cfg);
	r->pd = rocemu_pd_alloc(r->dev);
	r->cq = rocemu_cq_new(r->dev, 16, NULL);
	init.send_cq = init.recv_cq = (struct ibv_cq *)(void *)r->cq;
	r->qp = rocemu_qp_new(r->pd, &init);
	r->mr = rocemu_mr_reg(r->pd, r->mem + GUARD, WINDOW,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				      IBV_ACCESS_REMOTE_READ |
				      IBV_ACCESS_REMOTE_ATOMIC);
	if (!r->qp || !r->mr || rocemu_qp_connect(r->qp, &p))
		abort();
	for (int i = 0; i < 4; i++) {
		struct ibv_sge sge = { (uint64_t)(uintptr_t)(r->mem + GUARD + i * 4096),
				       4096, rocemu_mr_lkey(r->mr) };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;
		rocemu_post_recv(r->qp, &wr, &bad);
	}
}

static void rig_down(struct rig *r)
{
	rocemu_qp_free(r->qp);
	rocemu_mr_dereg(r->mr);
	rocemu_cq_free(r->cq);
	rocemu_pd_free(r->pd);
	rocemu_dev_free(r->dev);
	rocemu_world_free(r->w);
}

/*
 * Input: one flag byte, then a transport packet (BTH onwards, ICRC
 * included). It is framed from the QP's peer with a valid ICRC, so the
 * responder itself is what gets exercised; flag bit 0 aims it at the QP
 * (else the BTH's own QPN stands), bit 1 points the first RETH or
 * AtomicETH address into the MR.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rig r;
	static uint8_t frame[70000];
	const size_t hl = ROCE_ETH_HLEN + ROCE_IPV4_HLEN + ROCE_UDP_HLEN;

	if (size < 1 + ROCE_BTH_LEN + ROCE_ICRC_LEN || size > 9000)
		return 0;
	rig_up(&r);
	size_t tl = size - 1;
	memcpy(frame + hl, data + 1, tl);
	if (data[0] & 1)
		memcpy(frame + hl + 5, (uint8_t[]){ 0, 0, 0x11 }, 3);
	const struct roce_opcode_info *op = roce_opcode(frame[hl]);
	if ((data[0] & 2) && op && (op->exts & (ROCE_EXT_RETH | ROCE_EXT_ATMETH)) &&
	    tl >= op->hdr_len) {
		unsigned at = roce_ext_offset(op->exts, op->exts & ROCE_EXT_RETH
						? ROCE_EXT_RETH : ROCE_EXT_ATMETH);
		uint64_t va = (uint64_t)(uintptr_t)(r.mem + GUARD) +
			      (frame[hl + at + 7] & 0x3ff8);
		for (int i = 0; i < 8; i++)
			frame[hl + at + i] = (uint8_t)(va >> (56 - 8 * i));
		uint32_t key = rocemu_mr_rkey(r.mr);
		for (int i = 0; i < 4; i++)
			frame[hl + at + 8 + i] = (uint8_t)(key >> (24 - 8 * i));
	}
	/* Ethernet, IPv4 and UDP around it, then the ICRC over all of it. */
	uint8_t *ip = frame + ROCE_ETH_HLEN, *udp = ip + ROCE_IPV4_HLEN;
	memset(frame, 0, hl);
	frame[12] = 0x08;
	size_t iplen = ROCE_IPV4_HLEN + ROCE_UDP_HLEN + tl;
	ip[0] = 0x45;
	ip[2] = (uint8_t)(iplen >> 8);
	ip[3] = (uint8_t)iplen;
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, peer_gid + 12, 4);
	memcpy(ip + 16, dev_gid + 12, 4);
	uint16_t c = roce_inet_csum(ip, ROCE_IPV4_HLEN, 0);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	udp[0] = 0xc0;
	udp[2] = 0x12;
	udp[3] = 0xb7;
	udp[4] = (uint8_t)((tl + 8) >> 8);
	udp[5] = (uint8_t)(tl + 8);
	uint32_t icrc;
	if (roce_icrc_calc(ip, iplen, &icrc) == 0)
		for (int i = 0; i < 4; i++)
			frame[hl + tl - 4 + i] = (uint8_t)(icrc >> (24 - 8 * i));
	rocemu_world_inject(r.w, frame, hl + tl);
	rocemu_world_settle(r.w, 10ull * 1000000000ull);
	for (size_t i = 0; i < GUARD; i++)
		if (r.mem[i] != CANARY || r.mem[GUARD + WINDOW + i] != CANARY)
			abort(); /* something outside the MR changed */
	rig_down(&r);
	return 0;
}
