/* SPDX-License-Identifier: MIT */
/* make bench for the device: verbs call cost, 64-byte SEND rate, 64 KiB WRITE bandwidth vs its limit. */
#include <isa-l/crc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "bench_row.h"
#include "rocemu/device.h"
#include "rocemu/proto.h"

enum { BUF = 1 << 20, BATCH = 64 };

struct node {
	struct rocemu_endpoint ep;
	struct rocemu_qp *qp;
	struct rocemu_cq *cq;
	struct rocemu_mr *mr;
	uint8_t gid[16];
	uint8_t *buf;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void node_up(struct rocemu_world *w, struct node *n, uint8_t octet,
		    enum ibv_mtu mtu)
{
	struct rocemu_dev_cfg cfg = { .name = octet == 1 ? "a" : "b", .mtu = mtu,
				      .gid = { [10] = 0xff, [11] = 0xff,
					       [12] = 10, [15] = octet } };

	if (rocemu_endpoint_new(w, &cfg, IBV_QPT_RC, BUF, 1024, &n->ep)) {
		fprintf(stderr, "bench: device setup failed\n");
		exit(1);
	}
	memcpy(n->gid, cfg.gid, 16);
	n->qp = n->ep.qp;
	n->cq = n->ep.cq;
	n->mr = n->ep.mr;
	n->buf = n->ep.buf;
}

static void link_up(struct node *n, const struct node *peer, enum ibv_mtu mtu)
{
	struct rocemu_rc_params p = {
		.peer_qpn = rocemu_qp_num(peer->qp), .mtu = mtu,
		.access = IBV_ACCESS_REMOTE_WRITE, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1,
		.max_rd_atomic = 16,
	};

	memcpy(p.peer_gid, peer->gid, 16);
	if (rocemu_qp_connect(n->qp, &p)) {
		fprintf(stderr, "bench: connect failed\n");
		exit(1);
	}
}

static void post(struct node *n, enum ibv_wr_opcode op, uint32_t len,
		 uint64_t raddr, uint32_t rkey, unsigned flags)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)n->buf, len,
			       rocemu_mr_lkey(n->mr) };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = flags }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (rocemu_post_send(n->qp, &wr, &bad)) {
		fprintf(stderr, "bench: post_send failed\n");
		exit(1);
	}
}

static void post_recvs(struct node *n, int k)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)n->buf, 64,
			       rocemu_mr_lkey(n->mr) };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	for (int i = 0; i < k; i++)
		rocemu_post_recv(n->qp, &wr, &bad);
}

static int drain(struct rocemu_cq *cq, int want)
{
	struct ibv_wc wc[64];
	int got = 0, n;

	while (got < want && (n = rocemu_cq_poll(cq, 64, wc)) > 0)
		for (int i = 0; i < n; i++, got++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "bench: completion failed\n");
				exit(1);
			}
	return got;
}

/* 64-byte SENDs through the wire, batches of BATCH; messages per second,
 * and the part of it spent in post_send and poll_cq, in ns per call. */
static double send_rate(struct rocemu_world *w, struct node *a, struct node *b,
			double *post_ns, double *poll_ns)
{
	double t_post = 0, t_poll = 0, t0 = now();
	long msgs = 0;

	do {
		post_recvs(b, BATCH);
		double t = now();
		for (int i = 0; i < BATCH; i++)
			post(a, IBV_WR_SEND, 64, 0, 0, IBV_SEND_SIGNALED);
		t_post += now() - t;
		rocemu_world_settle(w, 1000000000ull);
		t = now();
		int got = drain(a->cq, BATCH);
		t_poll += now() - t;
		got += drain(b->cq, BATCH);
		if (got != 2 * BATCH) {
			fprintf(stderr, "bench: %d completions\n", got);
			exit(1);
		}
		msgs += BATCH;
	} while (now() - t0 < 1.0);
	*post_ns = t_post / (double)msgs * 1e9;
	*poll_ns = t_poll / (double)msgs * 1e9;
	return (double)msgs / (now() - t0);
}

/* 64 KiB RDMA WRITEs, 16 in flight, for secs; GB/s of payload. */
static double write_bw(struct rocemu_world *w, struct node *a, struct node *b,
		       double secs)
{
	double t0 = now();
	long bytes = 0;

	do {
		for (int i = 0; i < 16; i++)
			post(a, IBV_WR_RDMA_WRITE, 65536,
			     (uint64_t)(uintptr_t)b->buf + (uint64_t)i * 65536,
			     rocemu_mr_rkey(b->mr), i == 15 ? IBV_SEND_SIGNALED : 0);
		rocemu_world_settle(w, 1000000000ull);
		if (drain(a->cq, 1) != 1) {
			fprintf(stderr, "bench: WRITE did not complete\n");
			exit(1);
		}
		bytes += 16 * 65536;
	} while (now() - t0 < secs);
	return (double)bytes / (now() - t0) / 1e9;
}

/*
 * GB/s of the limit's two parts over the WRITE's own working set: 4 KiB
 * copies from one 1 MiB buffer into another (copy 1), or the fastest
 * CRC-32 here, ISA-L's, over 4 KiB pieces of one (copy 0); for secs.
 */
static double rate_of(int copy, double secs)
{
	static uint8_t src[BUF], dst[BUF];
	volatile uint32_t sink = 0;
	long n = 0;

	memset(src, 7, sizeof(src));
	double t0 = now();
	do {
		for (size_t off = 0; off < BUF; off += 4096, n++) {
			if (copy)
				memcpy(dst + off, src + off, 4096);
			else
				sink ^= crc32_gzip_refl(0, src + off, 4096);
		}
		if (!copy && __builtin_cpu_supports("avx"))
			__asm__ volatile("vzeroupper");
	} while (now() - t0 < secs);
	return (double)n * 4096 / (now() - t0) / 1e9;
}

/* With an argument "send" or "write" only that part runs, for profiling. */
int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : "";
	struct rocemu_world *w = rocemu_world_new(7);
	struct node a, b;
	double post_ns = 0, poll_ns = 0;

	node_up(w, &a, 1, IBV_MTU_4096);
	node_up(w, &b, 2, IBV_MTU_4096);
	link_up(&a, &b, IBV_MTU_4096);
	link_up(&b, &a, IBV_MTU_4096);
	double sends = strcmp(only, "write") ? send_rate(w, &a, &b, &post_ns,
							  &poll_ns) : 0;
	/* The limit (one copy and one ICRC on each side, both sides on this
	 * one core) and the bandwidth are measured in alternating rounds, so
	 * that both see the same CPU clock. */
	double bw = 0, cp = 0, crc = 0;
	for (int r = 0; r < 5 && strcmp(only, "send"); r++) {
		cp += rate_of(1, 0.05) / 5;
		crc += rate_of(0, 0.1) / 5;
		bw += write_bw(w, &a, &b, 0.2) / 5;
	}
	double limit = crc ? 1.0 / (2.0 / cp + 2.0 / crc) : 1;

	const char *g = "in-process, deterministic wire, one core";
	bench_row(g, "post_send per WQE", post_ns, "ns", NULL, 0, NULL);
	bench_row(g, "poll_cq per CQE", poll_ns, "ns", NULL, 0, NULL);
	bench_row(g, "64 B RC SEND", sends / 1e6, "Mmsg/s", NULL, 0, ">=5");
	bench_row(g, "64 KiB RDMA WRITE vs copy + ICRC limit", bw, "GB/s",
		  "two 4 KiB copies and two ISA-L CRCs a packet", limit, ">=0.7");
	return 0;
}
