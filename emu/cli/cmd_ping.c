/* SPDX-License-Identifier: MIT */
/* rocemu ping: round trips over RC, UC or UD between two rocemu processes or hosts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_conn.h"

static const char usage_text[] =
	"usage: rocemu ping [options] [SERVER]\n"
	"\n"
	"Without SERVER, wait for a client; with it, connect to it. Then N\n"
	"round trips of SIZE bytes: the client sends, the server answers.\n"
	"\n"
	"Options:\n"
	"  --addr IP     local address for the device (default 127.0.0.1)\n"
	"  --port PORT   TCP port for the exchange (default 18515)\n"
	"  -t rc|uc|ud   transport (default rc)\n"
	"  -s SIZE       message size in bytes (default 4096; UD: at most the MTU)\n"
	"  -n ITERS      round trips (default 1000)\n"
	"  -m MTU        path MTU: 256, 512, 1024, 2048, 4096 (default 1024)\n"
	"  --srq         take receives from a shared receive queue\n"
	"  --poll        spin on the completion queue instead of sleeping\n"
	"  --wait SEC    client: how long to try reaching the server (10)\n"
	"  --pcap FILE   record the device's traffic\n"
	"  --check       the client fills each message with a pattern of its\n"
	"                round trip, the server checks it and sends it back,\n"
	"                the client checks the answer: a byte that differs\n"
	"                fails the run (exit 1)\n"
	"  --via ADDR    send the RoCE packets to ADDR, a relay such as\n"
	"                rocemu impair, instead of the peer's own address\n"
	"  --no-offload  one datagram per packet to loopback addresses too:\n"
	"                without it they go in GSO batches, which a capture\n"
	"                on lo shows as one large datagram each\n"
	"  --trace       print each WQE, packet and CQE to stderr\n"
	"  --stats       at the end, print every counter of the device to\n"
	"                stdout (packets, drops by reason, retransmits,\n"
	"                timeouts, NAKs): one 'counter NAME VALUE' line each,\n"
	"                then one 'why KIND COUNT' line per kind of reason\n"
	"  --explain     say why next to each NAK, error completion, dropped\n"
	"                packet and refused verb, on stderr: 'rocemu: why:\n"
	"                TEXT [RULE]' (docs/explain.md)\n"
	"  -h, --help    print this text and exit\n"
	"\n"
	"Exit status:\n"
	"  0  every round trip completed\n"
	"  1  the connection or a round trip failed\n"
	"  2  a usage error\n";

static const char *who = "rocemu ping";
static bool check_data; /* --check */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* UD receive buffers start with the 40-byte GRH. */
static unsigned grh(const struct conn *c)
{
	return c->o.type == IBV_QPT_UD ? 40 : 0;
}

/* --check's pattern: byte j of round trip i, never the same for
 * neighbouring trips, so a stale or duplicated message shows too. */
static uint8_t pattern(long i, size_t j)
{
	return (uint8_t)(i * 131 + (long)(j * 7) + 1 + (long)(j >> 8));
}

static void fill(struct conn *c, uint32_t size, long i)
{
	uint8_t *b = (uint8_t *)c->ep.buf + grh(c);

	for (size_t j = 0; j < size; j++)
		b[j] = pattern(i, j);
}

/* 0 when the buffer holds round trip i's pattern; else says where not. */
static int verify(struct conn *c, uint32_t size, long i)
{
	const uint8_t *b = (const uint8_t *)c->ep.buf + grh(c);

	for (size_t j = 0; j < size; j++) {
		if (b[j] != pattern(i, j)) {
			fprintf(stderr, "%s: round trip %ld: byte %zu is 0x%02x, "
					"sent 0x%02x\n", who, i + 1, j, b[j],
				pattern(i, j));
			return -1;
		}
	}
	return 0;
}

static int post_recv(struct conn *c, uint32_t size)
{
	return conn_post_recv(c, 1, 0, size + grh(c));
}

static int post_send(struct conn *c, uint32_t size)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)c->ep.buf + grh(c), size,
			       rocemu_mr_lkey(c->ep.mr) };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (c->ah) {
		wr.wr.ud.ah = (struct ibv_ah *)(void *)c->ah;
		wr.wr.ud.remote_qpn = c->peer.qpn;
		wr.wr.ud.remote_qkey = 0x11111111;
	}
	return rocemu_post_send(c->ep.qp, &wr, &bad);
}

/*
 * Waits until this turn's send and receive both completed. Each receive
 * used is posted again at once: UC and UD drop a message that finds no
 * receive waiting, so receives are kept posted ahead (as ibv_uc_pingpong
 * does) rather than one per turn.
 */
static int wait_both(struct conn *c, uint32_t size, bool want_send,
		     bool want_recv)
{
	struct ibv_wc wc;

	while (want_send || want_recv) {
		if (conn_wait(c, &wc, 10000, who))
			return -1;
		if (wc.wr_id == 1) {
			want_recv = false;
			if (post_recv(c, size))
				return -1;
		} else {
			want_send = false;
		}
	}
	return 0;
}

/* Receives go up before the engines start: UC and UD lose a message that
 * finds none, and the peer may send its first before this side is ready
 * (ibv_uc_pingpong posts them before connecting, too). */
static int up(struct conn *c, uint32_t size)
{
	if (conn_prepare(c, who))
		return -1;
	for (int i = 0; i < c->o.depth - 1; i++)
		if (post_recv(c, size))
			return -1;
	return conn_start(c);
}

static int run(struct conn *c, uint32_t size, long iters)
{
	bool client = c->o.server != NULL;
	double t0 = now_s();

	for (long i = 0; i < iters; i++) {
		if (client && check_data)
			fill(c, size, i);
		if (client && post_send(c, size))
			return -1;
		if (wait_both(c, size, client, true))
			return -1;
		if (check_data && verify(c, size, i))
			return -1;
		if (!client && (post_send(c, size) ||
				wait_both(c, size, true, false)))
			return -1;
	}
	double t = now_s() - t0;
	printf("%ld bytes in %.2f seconds = %.2f Mbit/sec\n",
	       2 * iters * (long)size, t, 2.0 * iters * size * 8 / t / 1e6);
	printf("%ld iters in %.2f seconds = %.2f usec/iter\n", iters, t,
	       t * 1e6 / (double)iters);
	if (check_data)
		printf("%ld messages checked, every byte as sent\n",
		       iters);
	return 0;
}

int cmd_ping(int argc, char **argv)
{
	struct conn c = { .o = { .addr = "127.0.0.1", .tcp_port = 18515, .wait_s = 10,
				 .type = IBV_QPT_RC, .mtu = IBV_MTU_1024,
				 .depth = 16 } };
	long size = 4096, iters = 1000;

	for (int i = 1; i < argc; i++) {
		int k = conn_parse_opt(&c.o, argc, argv, i, who);
		if (k < 0)
			return CLI_USAGE;
		if (k) {
			i += k - 1;
		} else if ((!strcmp(argv[i], "-s") || !strcmp(argv[i], "-n")) &&
			   i + 1 < argc) {
			char *end;
			long v = strtol(argv[i + 1], &end, 10);
			if (*end || v < (argv[i][1] == 's' ? 0 : 1) || v > 1 << 30) {
				fprintf(stderr, "%s: bad %s '%s'\n", who, argv[i],
					argv[i + 1]);
				return CLI_USAGE;
			}
			*(argv[i][1] == 's' ? &size : &iters) = v;
			i++;
		} else if (!strcmp(argv[i], "--check")) {
			check_data = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return CLI_OK;
		} else if (argv[i][0] != '-' && !c.o.server) {
			c.o.server = argv[i];
		} else {
			fprintf(stderr, "%s: unknown option '%s'\n%s", who, argv[i],
				usage_text);
			return CLI_USAGE;
		}
	}
	if (c.o.type == IBV_QPT_UD && size > (128 << c.o.mtu)) {
		fprintf(stderr, "%s: a UD message is one packet: -s %ld is more "
				"than the MTU (%d)\n", who, size, 128 << c.o.mtu);
		return CLI_USAGE;
	}
	c.o.buf_len = (size_t)size + 64;
	int rc = up(&c, (uint32_t)size) || run(&c, (uint32_t)size, iters) ? CLI_FAIL
								      : CLI_OK;
	if (c.o.stats) /* after a failed run too: that is when they matter */
		conn_print_counters(&c);
	conn_down(&c);
	return rc;
}
