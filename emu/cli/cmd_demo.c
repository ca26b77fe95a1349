/* SPDX-License-Identifier: MIT */
/* rocemu demo: two emulated devices run SEND, WRITE with immediate, READ and atomics, traced. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rocemu/device.h"

enum { BUF = 16384 };

struct node {
	struct rocemu_endpoint ep;
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
	struct rocemu_dev_cfg cfg = { .name = name, .mtu = IBV_MTU_1024,
				      .gid = { [10] = 0xff, [11] = 0xff,
					       [12] = 10, [15] = octet } };
	int rc = rocemu_endpoint_new(w, &cfg, IBV_QPT_RC, BUF, 16, &n->ep);

	memcpy(n->gid, cfg.gid, 16);
	n->buf = n->ep.buf;
	return rc;
}

static int connect_to(struct node *n, const struct node *peer, uint32_t sq,
		      uint32_t rq)
{
	struct rocemu_rc_params p = {
		.peer_qpn = rocemu_qp_num(peer->ep.qp), .sq_psn = sq, .rq_psn = rq,
		.mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.min_rnr_timer = 12, .max_rd_atomic = 4,
	};

	memcpy(p.peer_gid, peer->gid, 16);
	return rocemu_qp_connect(n->ep.qp, &p);
}

static int post(struct node *n, enum ibv_wr_opcode op, uint32_t off,
		uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t cmp,
		uint64_t swap)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)(n->buf + off), len,
			       rocemu_mr_lkey(n->ep.mr) };
	struct ibv_send_wr wr = { .wr_id = off, .sg_list = &sge, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htobe32(0x1234) }, *bad;

	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		wr.wr.atomic = (typeof(wr.wr.atomic)){ raddr, cmp, swap, rkey };
	else
		wr.wr.rdma = (typeof(wr.wr.rdma)){ raddr, rkey };
	return rocemu_post_send(n->ep.qp, &wr, &bad);
}

static int post_recv(struct node *n, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)(n->buf + off), len,
			       rocemu_mr_lkey(n->ep.mr) };
	struct ibv_recv_wr wr = { .wr_id = off, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return rocemu_post_recv(n->ep.qp, &wr, &bad);
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
		while (rocemu_cq_poll(n->ep.cq, 1, &wc) == 1)
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
	uint32_t rkey = rocemu_mr_rkey(b->ep.mr);
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

static const char usage_text[] =
	"usage: rocemu demo [CAPTURE] [--trace FILE] [--state] [--explain]\n"
	"\n"
	"Two emulated RoCEv2 devices on a deterministic wire run SEND, RDMA\n"
	"WRITE with immediate, RDMA READ and atomics over RC; each WQE, the\n"
	"packets it sends and its CQE are printed as they happen, and every\n"
	"frame is written to CAPTURE (default demo.pcap).\n"
	"\n"
	"Options:\n"
	"  --trace FILE  write the WQE and CQE events to FILE too, for\n"
	"                rocemu ladder --trace\n"
	"  --state       at the end, print the queue state of both devices\n"
	"                (QPs, PSNs, WQEs outstanding, CQ fill; docs/state.md),\n"
	"                and put it in the --trace FILE as state events\n"
	"  --explain     say why next to each NAK, error completion, dropped\n"
	"                packet and refused verb, among the trace lines:\n"
	"                'rocemu: why: TEXT [RULE]' (docs/explain.md)\n"
	"  -h, --help    print this text and exit\n"
	"\n"
	"Exit status:\n"
	"  0  every operation completed as expected\n"
	"  1  an operation failed\n"
	"  2  a usage error, or a file that cannot be written\n";

/* [CAPTURE] [--trace FILE] [--state] [--explain]; 0 to run, 1 after
 * --help, or -EINVAL after printing the usage. */
static int parse_args(int argc, char **argv, const char **pcap,
		      const char **trace, bool *state, bool *explain)
{
	bool have_pcap = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return 1;
		} else if (!strcmp(argv[i], "--trace") && i + 1 < argc &&
			   !*trace) {
			*trace = argv[++i];
		} else if (!strcmp(argv[i], "--state")) {
			*state = true;
		} else if (!strcmp(argv[i], "--explain")) {
			*explain = true;
		} else if (argv[i][0] != '-' && !have_pcap) {
			*pcap = argv[i];
			have_pcap = true;
		} else {
			fprintf(stderr, "rocemu demo: unexpected argument '%s'\n%s",
				argv[i], usage_text);
			return -EINVAL;
		}
	}
	return 0;
}

static void state_line(void *arg, const char *line)
{
	(void)arg;
	printf("state: %s\n", line);
}

/* --state: the queues as the run left them, printed and traced. */
static void print_state(struct rocemu_world *w)
{
	printf("\nQueue state at the end (docs/state.md):\n");
	rocemu_world_dump_state(w, state_line, NULL);
	rocemu_world_trace_state(w);
}

/* Opens the trace file and has the world write its events there. */
static FILE *start_events(struct rocemu_world *w, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f || rocemu_trace_begin(f)) {
		fprintf(stderr, "rocemu demo: cannot write %s\n", path);
		if (f)
			fclose(f);
		return NULL;
	}
	rocemu_world_events(w, rocemu_trace_to_file, f);
	return f;
}

int cmd_demo(int argc, char **argv)
{
	const char *pcap = "demo.pcap", *trace = NULL;
	FILE *events = NULL;
	bool explain = false;
	struct rocemu_why_printer why = { .f = stdout };

	bool state = false;
	int parsed = parse_args(argc, argv, &pcap, &trace, &state, &explain);

	if (parsed)
		return parsed > 0 ? CLI_OK : CLI_USAGE;
	struct rocemu_world *w = rocemu_world_new(1);
	struct node a = { 0 }, b = { 0 };
	int rc = CLI_FAIL;
	if (w && explain) /* on stdout, among the trace lines */
		rocemu_world_explain(w, rocemu_why_print, &why);
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
	       rocemu_qp_num(a.ep.qp), rocemu_qp_num(b.ep.qp));
	if (trace && !(events = start_events(w, trace))) {
		rc = CLI_USAGE;
		goto out;
	}
	rocemu_world_trace(w, print_line, NULL);
	int bad = run(w, &a, &b);
	if (state)
		print_state(w);
	rocemu_world_record(w, NULL);
	rocemu_world_events(w, NULL, NULL);
	rocemu_world_explain(w, NULL, NULL);
	rocemu_why_printer_end(&why);
	if (events && fclose(events)) {
		fprintf(stderr, "rocemu demo: writing %s failed\n", trace);
		bad++;
	}
	events = NULL;
	printf("\n%s; every frame is in %s (try: rocemu dump %s)\n",
	       bad ? "SOME OPERATIONS FAILED" : "All operations completed",
	       pcap, pcap);
	if (trace)
		printf("WQE and CQE events are in %s (try: rocemu ladder %s "
		       "--trace %s)\n", trace, pcap, trace);
	rc = bad ? CLI_FAIL : CLI_OK;
out:
	if (events)
		fclose(events);
	rocemu_endpoint_free(&a.ep);
	rocemu_endpoint_free(&b.ep);
	rocemu_world_free(w);
	return rc;
}
