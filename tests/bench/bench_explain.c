/* SPDX-License-Identifier: MIT */
/* make bench for explain mode: what saying why costs, on a clean run (nothing to explain) and on a run of RNR NAKs (each one explained). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_row.h"
#include "rocemu/device.h"

enum { BATCH = 64 };

struct node {
	struct rocemu_endpoint ep;
	uint8_t gid[16];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void node_up(struct rocemu_world *w, struct node *n, uint8_t octet)
{
	struct rocemu_dev_cfg cfg = { .name = octet == 1 ? "a" : "b",
				      .mtu = IBV_MTU_4096,
				      .gid = { [10] = 0xff, [11] = 0xff,
					       [12] = 10, [15] = octet } };

	if (rocemu_endpoint_new(w, &cfg, IBV_QPT_RC, 1 << 16, 1024, &n->ep)) {
		fprintf(stderr, "bench: device setup failed\n");
		exit(1);
	}
	memcpy(n->gid, cfg.gid, 16);
}

static void link_up(struct node *n, const struct node *peer)
{
	/* rnr_retry 7: RNR NAKs for ever; timer code 1, 0.01 ms */
	struct rocemu_rc_params p = {
		.peer_qpn = rocemu_qp_num(peer->ep.qp), .mtu = IBV_MTU_4096,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.min_rnr_timer = 1, .max_rd_atomic = 16,
	};

	memcpy(p.peer_gid, peer->gid, 16);
	if (rocemu_qp_connect(n->ep.qp, &p)) {
		fprintf(stderr, "bench: connect failed\n");
		exit(1);
	}
}

static void post_send(struct node *n)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)n->ep.buf, 64,
			       rocemu_mr_lkey(n->ep.mr) };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (rocemu_post_send(n->ep.qp, &wr, &bad)) {
		fprintf(stderr, "bench: post_send failed\n");
		exit(1);
	}
}

static int drain(struct rocemu_cq *cq)
{
	struct ibv_wc wc[64];
	int got = 0, n;

	while ((n = rocemu_cq_poll(cq, 64, wc)) > 0)
		for (int i = 0; i < n; i++, got++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "bench: completion failed\n");
				exit(1);
			}
	return got;
}

/* A listener that does what a reader of the reasons does: one line each
 * written out (to /dev/null). */
static void to_null(void *arg, const struct rocemu_event *ev)
{
	fprintf(arg, "rocemu: why: %s [%s]\n", ev->text, ev->rule);
}

static void explain(struct rocemu_world *w, FILE *devnull, bool on)
{
	rocemu_world_explain(w, on ? to_null : NULL, on ? devnull : NULL);
}

/* 64-byte SENDs, every one received, for secs: messages a second. */
static double clean_rate(struct rocemu_world *w, struct node *a,
			 struct node *b, double secs)
{
	double t0 = now();
	long msgs = 0;

	do {
		struct ibv_sge sge = { (uint64_t)(uintptr_t)b->ep.buf, 64,
				       rocemu_mr_lkey(b->ep.mr) };
		struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 },
				   *bad;
		for (int i = 0; i < BATCH; i++) {
			rocemu_post_recv(b->ep.qp, &rwr, &bad);
			post_send(a);
		}
		rocemu_world_settle(w, 1000000000ull);
		if (drain(a->ep.cq) + drain(b->ep.cq) != 2 * BATCH) {
			fprintf(stderr, "bench: completions missing\n");
			exit(1);
		}
		msgs += BATCH;
	} while (now() - t0 < secs);
	return (double)msgs / (now() - t0);
}

/* A SEND to a QP with no receive posted: RNR NAKs one after another, for
 * secs of wall time; RNR NAKs a second. */
static double rnr_rate(struct rocemu_world *w, struct node *b, double secs)
{
	uint64_t n0 = rocemu_dev_counter(b->ep.dev, ROCEMU_CNT_NAK_SENT_RNR);
	double t0 = now();

	do
		rocemu_world_advance(w, 1000000); /* 1 ms: ~100 NAKs */
	while (now() - t0 < secs);
	return (double)(rocemu_dev_counter(b->ep.dev, ROCEMU_CNT_NAK_SENT_RNR) -
			n0) / (now() - t0);
}

int main(void)
{
	struct rocemu_world *w = rocemu_world_new(7);
	FILE *devnull = fopen("/dev/null", "w");
	struct node a, b;
	double off = 0, on = 0;

	if (!w || !devnull)
		return 1;
	node_up(w, &a, 1);
	node_up(w, &b, 2);
	link_up(&a, &b);
	link_up(&b, &a);
	/* alternating rounds, so that both see the same CPU clock */
	for (int r = 0; r < 6; r++) {
		explain(w, devnull, r & 1);
		*(r & 1 ? &on : &off) += clean_rate(w, &a, &b, 0.2) / 3;
	}
	explain(w, devnull, false);
	const char *g = "explain mode, in-process deterministic wire";
	bench_row(g, "64 B RC SEND, explain on (nothing to explain)",
		  on / 1e6, "Mmsg/s", "explain off, same run", off / 1e6,
		  ">=0.9");
	post_send(&a); /* b has no receive: RNR NAKs for ever */
	double noff = 0, non = 0;
	for (int r = 0; r < 6; r++) {
		explain(w, devnull, r & 1);
		*(r & 1 ? &non : &noff) += rnr_rate(w, &b, 0.2) / 3;
	}
	explain(w, devnull, false);
	bench_row(g, "RNR NAKs, each explained", non / 1e6, "M/s",
		  "explain off (counted only), same run", noff / 1e6, NULL);
	fclose(devnull);
	return 0;
}
