/* SPDX-License-Identifier: MIT */
/* make bench, scale: what an idle RC QP costs, and 10 000 busy QP pairs between two devices against one. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_row.h"
#include "rocemu/device.h"

enum { QPS = 10000, IDLE_QPS = 2000, BUF = 1 << 20, SECONDS = 2 };

struct side {
	struct rocemu_dev *dev;
	struct rocemu_pd *pd;
	struct rocemu_cq *cq;
	struct rocemu_mr *mr;
	uint8_t *buf;
	uint8_t gid[16];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_scale: %s\n", what);
	exit(1);
}

/* Bytes the process has from malloc now (mmap'd blocks included). */
static size_t heap_bytes(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}

static void side_up(struct rocemu_world *w, struct side *s, uint8_t octet)
{
	struct rocemu_dev_cfg cfg = { .name = octet == 1 ? "a" : "b",
				      .mtu = IBV_MTU_1024,
				      .gid = { [10] = 0xff, [11] = 0xff,
					       [12] = 10, [15] = octet } };

	memcpy(s->gid, cfg.gid, 16);
	s->dev = rocemu_dev_new(w, &cfg);
	s->pd = s->dev ? rocemu_pd_alloc(s->dev) : NULL;
	s->cq = s->pd ? rocemu_cq_new(s->dev, 1 << 17, NULL) : NULL;
	s->buf = calloc(1, BUF);
	s->mr = s->cq && s->buf ? rocemu_mr_reg(s->pd, s->buf, BUF,
					       IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!s->mr)
		die("device setup failed");
}

static struct rocemu_qp *qp_new(struct side *s, uint32_t depth)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.send_cq = (struct ibv_cq *)(void *)s->cq,
		.recv_cq = (struct ibv_cq *)(void *)s->cq,
		.cap = { depth, depth, 1, 1, 0 },
	};
	struct rocemu_qp *qp = rocemu_qp_new(s->pd, &ia);

	if (!qp)
		die("rocemu_qp_new failed (out of QP numbers or memory)");
	return qp;
}

static void connect_to(struct rocemu_qp *qp, const struct rocemu_qp *peer,
		       const uint8_t gid[16])
{
	struct rocemu_rc_params p = { .peer_qpn = rocemu_qp_num(peer),
				      .mtu = IBV_MTU_1024, .timeout = 14,
				      .retry_cnt = 7, .rnr_retry = 7,
				      .min_rnr_timer = 1 };

	memcpy(p.peer_gid, gid, 16);
	if (rocemu_qp_connect(qp, &p))
		die("rocemu_qp_connect failed");
}

/* Messages per second of 64-byte SENDs, k in flight on each of n pairs:
 * each round posts them all, runs the wire until it is quiet, and takes
 * every completion. */
static double send_rate(struct rocemu_world *w, struct side *a, struct side *b,
			struct rocemu_qp **qa, struct rocemu_qp **qb, int n,
			int k)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)a->buf, 64,
			       rocemu_mr_lkey(a->mr) };
	struct ibv_sge rs = { (uint64_t)(uintptr_t)b->buf, 64,
			      rocemu_mr_lkey(b->mr) };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rw = { .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_wc wc[256];
	long msgs = 0;
	double t0 = now();

	do {
		for (int i = 0; i < n; i++)
			for (int j = 0; j < k; j++)
				if (rocemu_post_recv(qb[i], &rw, &rbad) ||
				    rocemu_post_send(qa[i], &wr, &bad))
					die("post failed");
		rocemu_world_settle(w, 10000000000ull);
		long got = 0;
		int m;
		while ((m = rocemu_cq_poll(a->cq, 256, wc)) > 0)
			for (int j = 0; j < m; j++, got++)
				if (wc[j].status != IBV_WC_SUCCESS)
					die("a SEND failed");
		while ((m = rocemu_cq_poll(b->cq, 256, wc)) > 0)
			got += m;
		if (got != 2L * n * k)
			die("completions missing");
		msgs += (long)n * k;
	} while (now() - t0 < SECONDS);
	return (double)msgs / (now() - t0);
}

int main(void)
{
	struct rocemu_world *w = rocemu_world_new(11);
	struct side a, b;
	struct rocemu_qp **qa = calloc(QPS, sizeof(*qa));
	struct rocemu_qp **qb = calloc(QPS, sizeof(*qb));

	side_up(w, &a, 1);
	side_up(w, &b, 2);
	/* An idle QP: 16 WRs each way, one SGE, no inline data. */
	size_t h0 = heap_bytes();
	for (int i = 0; i < IDLE_QPS; i++)
		qa[i] = qp_new(&a, 16);
	double idle = (double)(heap_bytes() - h0) / IDLE_QPS;
	for (int i = 0; i < IDLE_QPS; i++)
		rocemu_qp_free(qa[i]);
	h0 = heap_bytes();
	for (int i = 0; i < IDLE_QPS; i++)
		qa[i] = qp_new(&a, 128);
	double deep = (double)(heap_bytes() - h0) / IDLE_QPS;
	for (int i = 0; i < IDLE_QPS; i++)
		rocemu_qp_free(qa[i]);

	for (int i = 0; i < QPS; i++) {
		qa[i] = qp_new(&a, 16);
		qb[i] = qp_new(&b, 16);
	}
	for (int i = 0; i < QPS; i++) {
		connect_to(qa[i], qb[i], b.gid);
		connect_to(qb[i], qa[i], a.gid);
	}
	double one = send_rate(w, &a, &b, qa, qb, 1, 16);
	double all = send_rate(w, &a, &b, qa, qb, QPS, 4);

	const char *g = "scale, in-process";
	bench_row(g, "idle RC QP, 16 WRs each way", idle / 1024, "KiB", NULL, 0,
		  "<=16");
	bench_row(g, "idle RC QP, 128 WRs each way", deep / 1024, "KiB", NULL,
		  0, NULL);
	bench_row(g, "10 000 busy QP pairs, 64 B SENDs", all / 1e6, "Mmsg/s",
		  "one QP pair, 16 in flight", one / 1e6, ">=0.8");
	return 0;
}
