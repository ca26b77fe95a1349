/* SPDX-License-Identifier: MIT */
/* rocemu demo: two emulated devices run SEND, WRITE with immediate, READ and atomics, traced. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rocemu/device.h"

enum { BUF = 16384 };

struct node {
	struct rocemu_dev *dev;
	struct rocemu_pd *pd;
	struct rocemu_cq *cq;
	struct rocemu_qp *qp;
	struct rocemu_mr *mr;
	uint8_t gid[16];
	uint8_t *buf;
};

static void print_line(void *arg, const char *line)
{
	(void)arg;
	printf("    %s\n", line);
}

static int make_node(struct rocemu_world *w, struct node *n, const char *name,
		     uint8_t octet)
{
	struct rocemu_dev_cfg cfg = { .name = name, .mtu = IBV_MTU_1024 };
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
					 .cap = { .max_send_wr = 16,
						  .max_recv_wr = 16,
						  .max_send_sge = 1,
						  .max_recv_sge = 1 } };

	uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = octet };
	memcpy(n->gid, gid, 16);
	memcpy(cfg.gid, gid, 16);
	n->buf = calloc(1, BUF);
	n->dev = n->buf ? rocemu_dev_new(w, &cfg) : NULL;
	n->pd = n->dev ? rocemu_pd_alloc(n->dev) : NULL;
	n->cq = n->pd ? rocemu_cq_new(n->dev, 16, NULL) : NULL;
	n->mr = n->cq ? rocemu_mr_reg(n->pd, n->buf, BUF,
				      IBV_ACCESS_LOCAL_WRITE |
					      IBV_ACCESS_REMOTE_WRITE |
					      IBV_ACCESS_REMOTE_READ |
					      IBV_ACCESS_REMOTE_ATOMIC)
		      : NULL;
	init.send_cq = init.recv_cq = (struct ibv_cq *)(void *)n->cq;
	n->qp = n->mr ? rocemu_qp_new(n->pd, &init) : NULL;
	return n->qp ? 0 : -ENOMEM;
}

static int connect_to(struct node *n, const struct node *peer, uint32_t sq,
		      uint32_t rq)
{
	struct rocemu_rc_params p = {
		.peer_qpn = rocemu_qp_num(peer->qp), .sq_psn = sq, .rq_psn = rq,
		.mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.min_rnr_timer = 12, .max_rd_atomic = 4,
	};

	memcpy(p.peer_gid, peer->gid, 16);
	return rocemu_qp_connect(n->qp, &p);
}

static int post(struct node *n, enum ibv_wr_opcode op, uint32_t off,
		uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t cmp,
		uint64_t swap)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)(n->buf + off), len,
			       rocemu_mr_lkey(n->mr) };
	struct ibv_send_wr wr = { .wr_id = off, .sg_list = &sge, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htobe32(0x1234) }, *bad;

	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		wr.wr.atomic = (typeof(wr.wr.atomic)){ raddr, cmp, swap, rkey };
	else
		wr.wr.rdma = (typeof(wr.wr.rdma)){ raddr, rkey };
	return rocemu_post_send(n->qp, &wr, &bad);
}

static int post_recv(struct node *n, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)(n->buf + off), len,
			       rocemu_mr_lkey(n->mr) };
	struct ibv_recv_wr wr = { .wr_id = off, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return rocemu_post_recv(n->qp, &wr, &bad);
}

/* Runs the world until idle and reports every completion; returns how
 * many failed. */
static int drain(struct rocemu_world *w, struct node *a, struct node *b)
{
	struct ibv_wc wc;
	int bad = 0;

	rocemu_world_settle(w, 1000000000ull);
	for (int i = 0; i < 2; i++) {
		struct node *n = i ? b : a;
		while (rocemu_cq_poll(n->cq, 1, &wc) == 1)
			bad += wc.status != IBV_WC_SUCCESS;
	}
	return bad;
}

static void step(const char *what)
{
	printf("\n%s\n", what);
}

static int run(struct rocemu_world *w, struct node *a, struct node *b)
{
	uint32_t rkey = rocemu_mr_rkey(b->mr);
	uint64_t rbase = (uint64_t)(uintptr_t)b->buf, v = 40;
	int bad = 0;

	memcpy(a->buf, "hello from devA over RoCEv2", 28);
	for (int i = 0; i < 3000; i++)
		b->buf[4096 + i] = (uint8_t)i;
	memcpy(b->buf + 8192, &v, 8);

	step("1. SEND of 28 bytes (devB posted a receive first)");
	post_recv(b, 0, 1024);
	post(a, IBV_WR_SEND, 0, 28, 0, 0, 0, 0);
	bad += drain(w, a, b);
	printf("    devB received: \"%s\"\n", (char *)b->buf);

	step("2. RDMA WRITE with immediate, 1500 bytes: two packets, one CQE each side");
	post_recv(b, 0, 0);
	post(a, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 1500, rbase + 2048, rkey, 0, 0);
	bad += drain(w, a, b);

	step("3. RDMA READ of 3000 bytes: one request, three responses");
	post(a, IBV_WR_RDMA_READ, 4096, 3000, rbase + 4096, rkey, 0, 0);
	bad += drain(w, a, b);
	bad += memcmp(a->buf + 4096, b->buf + 4096, 3000) != 0;

	step("4. compare-and-swap 40 -> 99, then fetch-and-add 1");
	post(a, IBV_WR_ATOMIC_CMP_AND_SWP, 8192, 8, rbase + 8192, rkey, 40, 99);
	post(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 8200, 8, rbase + 8192, rkey, 1, 0);
	bad += drain(w, a, b);
	uint64_t orig1, orig2, now;
	memcpy(&orig1, a->buf + 8192, 8);
	memcpy(&orig2, a->buf + 8200, 8);
	memcpy(&now, b->buf + 8192, 8);
	printf("    originals returned: %llu then %llu; devB's value is now %llu\n",
	       (unsigned long long)orig1, (unsigned long long)orig2,
	       (unsigned long long)now);
	bad += orig1 != 40 || orig2 != 99 || now != 100;
	return bad;
}

static void free_node(struct node *n)
{
	if (n->qp)
		rocemu_qp_free(n->qp);
	if (n->mr)
		rocemu_mr_dereg(n->mr);
	if (n->cq)
		rocemu_cq_free(n->cq);
	if (n->pd)
		rocemu_pd_free(n->pd);
	rocemu_dev_free(n->dev);
	free(n->buf);
}

int cmd_demo(int argc, char **argv)
{
	const char *pcap = argc > 1 ? argv[1] : "demo.pcap";
	struct rocemu_world *w = rocemu_world_new(1);
	struct node a = { 0 }, b = { 0 };

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: rocemu demo [CAPTURE]   (default demo.pcap)\n");
		return CLI_USAGE;
	}
	int rc = CLI_FAIL;
	if (!w || make_node(w, &a, "devA", 1) || make_node(w, &b, "devB", 2) ||
	    connect_to(&a, &b, 0x100, 0x200) || connect_to(&b, &a, 0x200, 0x100)) {
		fprintf(stderr, "rocemu demo: could not set up the devices\n");
		goto out;
	}
	if (rocemu_world_record(w, pcap)) {
		fprintf(stderr, "rocemu demo: cannot write %s\n", pcap);
		rc = CLI_USAGE;
		goto out;
	}
	printf("Two emulated RoCEv2 devices on a deterministic wire: devA 10.0.0.1 "
	       "(QP 0x%06x) and devB 10.0.0.2 (QP 0x%06x), path MTU 1024.\n"
	       "Trace: WQE [SQ slot] -> packets sent (device > frame) -> "
	       "CQE [CQ slot].\n",
	       rocemu_qp_num(a.qp), rocemu_qp_num(b.qp));
	rocemu_world_trace(w, print_line, NULL);
	int bad = run(w, &a, &b);
	rocemu_world_record(w, NULL);
	printf("\n%s; every frame is in %s (try: rocemu dump %s)\n",
	       bad ? "SOME OPERATIONS FAILED" : "All operations completed",
	       pcap, pcap);
	rc = bad ? CLI_FAIL : CLI_OK;
out:
	free_node(&a);
	free_node(&b);
	rocemu_world_free(w);
	return rc;
}
