/* SPDX-License-Identifier: MIT */
/* rocemu perf: bandwidth and latency of WRITE, READ, SEND and atomics between two rocemu devices. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_conn.h"

static const char usage_text[] =
	"usage: rocemu perf write|read|send|atomic [options] [SERVER]\n"
	"\n"
	"Bandwidth (or, with --lat, latency) of RDMA WRITE, RDMA READ, SEND or\n"
	"fetch-and-add between two rocemu devices. Without SERVER, wait for a\n"
	"client; with it, connect to it and run the test against it.\n"
	"\n"
	"Options:\n"
	"  -s SIZE       message size (default 65536; atomic: 8)\n"
	"  -n ITERS      operations (default 5000)\n"
	"  -d DEPTH      operations in flight for bandwidth (default 64)\n"
	"  --lat         latency: one operation at a time\n"
	"  --addr IP     local address for the device (default 127.0.0.1)\n"
	"  --port PORT   TCP port for the exchange (default 18515)\n"
	"  -t rc|uc|ud   transport (default rc; read and atomic need rc)\n"
	"  -m MTU        path MTU: 256, 512, 1024, 2048, 4096 (default 1024)\n"
	"  --srq         take receives from a shared receive queue\n"
	"  --poll        spin on the completion queue instead of sleeping\n"
	"  --wait SEC    client: how long to try reaching the server (10)\n"
	"  --pcap FILE   record the device's traffic\n"
	"  --via ADDR    send the RoCE packets to ADDR, a relay such as\n"
	"                rocemu impair, instead of the peer's own address\n"
	"  --no-offload  one datagram per packet to loopback addresses too\n"
	"  --trace       print each WQE, packet and CQE to stderr\n"
	"  --stats       at the end, print every counter of the device to\n"
	"                stdout: one 'counter NAME VALUE' line each, then one\n"
	"                'why KIND COUNT' line per kind of reason\n"
	"  --explain     say why next to each NAK, error completion, dropped\n"
	"                packet and refused verb, on stderr: 'rocemu: why:\n"
	"                TEXT [RULE]' (docs/explain.md)\n"
	"  -h, --help    print this text and exit\n"
	"\n"
	"Exit status:\n"
	"  0  the test ran to its end\n"
	"  1  the connection or an operation failed\n"
	"  2  a usage error\n";

static const char *who = "rocemu perf";

enum test { T_WRITE, T_READ, T_SEND, T_ATOMIC };

struct perf {
	struct conn c;
	enum test test;
	uint32_t size;
	long iters;
	int depth;
	bool lat;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int post_op(struct perf *p, uint64_t id)
{
	struct conn *c = &p->c;
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_SEND,
		IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_sge sge = { (uint64_t)(uintptr_t)c->ep.buf, p->size,
			       rocemu_mr_lkey(c->ep.mr) };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = ops[p->test],
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (p->test == T_ATOMIC) {
		wr.wr.atomic.remote_addr = c->peer.va;
		wr.wr.atomic.rkey = c->peer.rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = c->peer.va;
		wr.wr.rdma.rkey = c->peer.rkey;
	}
	return rocemu_post_send(c->ep.qp, &wr, &bad);
}

static int post_recv(struct conn *c, uint32_t size)
{
	return conn_post_recv(c, 0, 0, size);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report_lat(struct perf *p, double *t)
{
	qsort(t, (size_t)p->iters, sizeof(*t), cmp_double);
	long n = p->iters;
	double sum = 0;
	for (long i = 0; i < n; i++)
		sum += t[i];
	printf(" #bytes #iterations    t_min[usec]    t_max[usec]  "
	       "t_typical[usec]    t_avg[usec]    99%%[usec]   99.9%%[usec]\n");
	printf(" %-6u %-11ld %-14.2f %-14.2f %-16.2f %-14.2f %-11.2f %.2f\n",
	       p->size, n, t[0] * 1e6, t[n - 1] * 1e6, t[n / 2] * 1e6,
	       sum / (double)n * 1e6, t[n * 99 / 100] * 1e6,
	       t[n * 999 / 1000] * 1e6);
	printf(" (completion time of one operation in flight, not half a "
	       "round trip)\n");
}

/* The client: runs the test, then tells the server with one SEND. */
static int client(struct perf *p)
{
	struct ibv_wc wc;
	long posted = 0, done = 0;
	double *lat = p->lat ? calloc((size_t)p->iters, sizeof(double)) : NULL;
	int depth = p->lat ? 1 : p->depth;
	double t0 = now_s(), ts = 0;

	while (done < p->iters) {
		while (posted < p->iters && posted - done < depth) {
			ts = now_s();
			if (post_op(p, (uint64_t)posted++))
				return -1;
		}
		if (conn_wait(&p->c, &wc, 10000, who))
			return -1;
		if (lat)
			lat[done] = now_s() - ts;
		done++;
	}
	double t = now_s() - t0;
	if (lat) {
		report_lat(p, lat);
		free(lat);
	} else {
		printf(" #bytes     #iterations    BW average[MB/sec]   "
		       "MsgRate[Mpps]\n");
		printf(" %-10u %-14ld %-20.2f %.6f\n", p->size, p->iters,
		       (double)p->size * (double)p->iters / t / 1e6,
		       (double)p->iters / t / 1e6);
	}
	enum test was = p->test;
	p->test = T_SEND; /* "done" */
	uint32_t size = p->size;
	p->size = 0;
	int rc = post_op(p, ~0ull) || conn_wait(&p->c, &wc, 10000, who);
	p->test = was;
	p->size = size;
	return rc ? -1 : 0;
}

/* The server: takes SENDs (or just the final one) until the client is done. */
static int server(struct perf *p)
{
	struct ibv_wc wc;
	long want = p->test == T_SEND ? p->iters + 1 : 1;

	for (int i = 0; i < p->depth && i < want; i++)
		if (post_recv(&p->c, p->size))
			return -1;
	for (long got = 0; got < want; got++) {
		if (conn_wait(&p->c, &wc, 60000, who))
			return -1;
		if (got + p->depth < want && post_recv(&p->c, p->size))
			return -1;
	}
	printf("%s: the client finished\n", who);
	return 0;
}

static int parse(struct perf *p, int argc, char **argv)
{
	static const char *const tests[] = { "write", "read", "send", "atomic" };

	if (argc < 2) {
		fputs(usage_text, stderr);
		return -1;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage_text, stdout);
		return 1;
	}
	p->test = (enum test)-1;
	for (int t = 0; t < 4; t++)
		if (!strcmp(argv[1], tests[t]))
			p->test = (enum test)t;
	if ((int)p->test < 0) {
		fprintf(stderr, "%s: the test is write, read, send or atomic, "
				"not '%s'\n", who, argv[1]);
		return -1;
	}
	for (int i = 2; i < argc; i++) {
		int k = conn_parse_opt(&p->c.o, argc, argv, i, who);
		if (k < 0)
			return -1;
		if (k) {
			i += k - 1;
		} else if (!strcmp(argv[i], "--lat")) {
			p->lat = true;
		} else if (!strcmp(argv[i], "-h") ||
			   !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return 1;
		} else if ((!strcmp(argv[i], "-s") || !strcmp(argv[i], "-n") ||
			    !strcmp(argv[i], "-d")) && i + 1 < argc) {
			long v = atol(argv[i + 1]);
			if (v < 1 || v > 1 << 30) {
				fprintf(stderr, "%s: bad %s '%s'\n", who, argv[i],
					argv[i + 1]);
				return -1;
			}
			if (argv[i][1] == 's')
				p->size = (uint32_t)v;
			else if (argv[i][1] == 'n')
				p->iters = v;
			else
				p->depth = (int)(v > 4096 ? 4096 : v);
			i++;
		} else if (argv[i][0] != '-' && !p->c.o.server) {
			p->c.o.server = argv[i];
		} else {
			fprintf(stderr, "%s: unknown option '%s'\n", who, argv[i]);
			return -1;
		}
	}
	if (p->test == T_ATOMIC)
		p->size = 8;
	return 0;
}

int cmd_perf(int argc, char **argv)
{
	struct perf p = { .c.o = { .addr = "127.0.0.1", .tcp_port = 18515, .wait_s = 10,
				   .type = IBV_QPT_RC, .mtu = IBV_MTU_1024 },
			  .size = 65536, .iters = 5000, .depth = 64 };
	int rc = parse(&p, argc, argv);

	if (rc)
		return rc > 0 ? CLI_OK : CLI_USAGE;
	if (p.c.o.type != IBV_QPT_RC && p.test != T_WRITE && p.test != T_SEND) {
		fprintf(stderr, "%s: %s needs RC\n", who, argv[1]);
		return CLI_USAGE;
	}
	p.c.o.depth = p.depth + 2;
	p.c.o.buf_len = p.size + 64;
	rc = conn_up(&p.c, who) || (p.c.o.server ? client(&p) : server(&p))
		     ? CLI_FAIL : CLI_OK;
	if (p.c.o.stats) /* after a failed run too: that is when they matter */
		conn_print_counters(&p.c);
	conn_down(&p.c);
	return rc;
}
