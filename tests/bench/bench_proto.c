/* SPDX-License-Identifier: MIT */
/* make bench for the codec: ICRC vs the fastest CRC-32 here (ISA-L) and zlib's, and rocemu dump vs tshark, in one run. */
#include <errno.h>
#include <getopt.h>
#include <isa-l/crc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "bench_row.h"
#include "rocemu/proto.h"

enum { PAYLOAD = 4096, PACKETS = 1000000, ROUNDS = 9, FLOW = 16 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Keeps the compiler from dropping a result. */
static volatile uint32_t sink;

/* A 4 KiB RC SEND_ONLY frame over IPv4, the k-th of a flow: from k = 1
 * on, the IP ID differs from packet to packet and the UDP checksum is
 * set, as a socket's packets seen on a wire carry them; returns its
 * length. */
static int make_frame(uint8_t *buf, size_t cap, unsigned k)
{
	static uint8_t payload[PAYLOAD];
	static const uint8_t a[4] = { 10, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 };
	struct roce_frame f;

	for (int i = 0; i < PAYLOAD; i++)
		payload[i] = (uint8_t)(i * 7);
	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, a);
	roce_gid_from_ipv4(f.dst_gid, b);
	f.sport = 0xc000;
	f.ib.bth.opcode = 0x04;
	f.ib.payload = payload;
	f.ib.payload_len = PAYLOAD;
	f.ib.bth.psn = k;
	if (k) {
		f.ip_id = (uint16_t)(k * 40503u);
		f.ip_frag = 0;
		f.udp_csum = 1; /* computed */
	}
	return roce_frame_build(&f, buf, cap);
}

/* Parses the frame's UDP payload as a socket hands it over (ID 0 with DF,
 * as rocemu sends), judged by a receiver's table of flows; returns the
 * ICRC it computed. */
static uint32_t parse_datagram(const uint8_t *ip, size_t len)
{
	static struct roce_ipid_table ids; /* the flow's, as a port has */
	struct roce_datagram_addr a = { .sport = 0xc000 };
	uint8_t hdr[ROCE_DATAGRAM_HDR_MAX];
	size_t hl = ROCE_IPV4_HLEN + ROCE_UDP_HLEN;
	struct roce_frame f;
	const char *why;

	roce_gid_from_ipv4(a.src_gid, ip + 12);
	roce_gid_from_ipv4(a.dst_gid, ip + 16);
	roce_datagram_parse(&a, &ids, ip + hl, len - hl, hdr, &f, &why);
	return f.icrc_calc;
}

/* Runs which over the FLOW frames at ip (len bytes each from there) in
 * turn for secs; returns GB/s of bytes. */
static double rate(int which, uint8_t *const ip[FLOW], size_t len,
		   uint8_t *dst, double secs)
{
	long iters = 0;
	double t0 = now(), t;

	do {
		for (int k = 0; k < 1000; k++) {
			const uint8_t *p = ip[k % FLOW];
			uint32_t v = 0;
			if (which == 0)
				roce_icrc_calc(p, len, &v);
			else if (which == 1)
				v = (uint32_t)crc32(0L, p, (uInt)len);
			else if (which == 4)
				v = crc32_gzip_refl(0, p, len);
			else if (which == 3)
				v = parse_datagram(ip[0], len);
			else
				memcpy(dst, p, len), v = dst[k % len];
			sink ^= v;
		}
		iters += 1000;
		t = now() - t0;
	} while (t < secs);
	return (double)iters * (double)len / t / 1e9;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of ROUNDS figures (sorts them). */
static double median(double *v)
{
	qsort(v, ROUNDS, sizeof(*v), by_value);
	return v[ROUNDS / 2];
}

/* Runs argv with stdout and stderr to /dev/null; returns seconds, or -1. */
static double run_timed(char *const argv[])
{
	double t0 = now();
	pid_t pid = fork();

	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) ||
		    !freopen("/dev/null", "w", stderr))
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) == 127)
		return -1;
	return now() - t0;
}

int main(int argc, char **argv)
{
	const char *rocemu = "build/bin/rocemu", *mkcap = "build/tests/mkcap";
	const char *work = "build/bench";
	static const struct option lo[] = {
		{ "rocemu", required_argument, NULL, 'r' },
		{ "mkcap", required_argument, NULL, 'm' },
		{ "work", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	static uint8_t frame[FLOW][ROCE_FRAME_MAX], dst[ROCE_FRAME_MAX];
	char cap[4096], count[32];
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1)
		switch (c) {
		case 'r': rocemu = optarg; break;
		case 'm': mkcap = optarg; break;
		case 'w': work = optarg; break;
		default: return 2;
		}
	mkdir(work, 0755);

	/* A flow of FLOW frames: the ICRC and its references run over them in
	 * turn, so the ICRC's per-thread memo sees the IP IDs and UDP
	 * checksums change as on a wire (frame 0, ID 0 and DF, is what a
	 * socket delivers: the datagram parse runs on it). */
	uint8_t *ip[FLOW];
	int n = 0;
	for (unsigned k = 0; k < FLOW; k++) {
		n = make_frame(frame[k], sizeof(frame[k]), k);
		ip[k] = frame[k] + ROCE_ETH_HLEN;
	}
	size_t iplen = (size_t)n - ROCE_ETH_HLEN;
	/* The ICRC and its reference in alternating rounds, medians: both
	 * see the same clock speed and the same neighbours. */
	double ri[ROUNDS], rr[ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		ri[r] = rate(0, ip, iplen, dst, 0.1);
		rr[r] = rate(4, ip, iplen, dst, 0.1);
	}
	double icrc = median(ri), isal = median(rr);
	double crc = rate(1, ip, iplen, dst, 0.5);
	/* The upper halves ISA-L's AVX-512 kernel leaves dirty slow the
	 * copies measured next (roce_crc32 clears them; this call does not). */
	if (__builtin_cpu_supports("avx"))
		__asm__ volatile("vzeroupper");
	double mcpy = rate(2, ip, iplen, dst, 0.5);
	double dgram = rate(3, ip, iplen, dst, 0.5);

	snprintf(cap, sizeof(cap), "%s/bench.pcap", work);
	snprintf(count, sizeof(count), "%d", PACKETS);
	char *gen[] = { (char *)mkcap, "--bench", cap, count, NULL };
	char *dump[] = { (char *)rocemu, "dump", cap, NULL };
	char *tsh[] = { "tshark", "-n", "-r", cap, NULL };
	if (run_timed(gen) < 0) {
		fprintf(stderr, "bench: %s could not write %s\n", mkcap, cap);
		return 1;
	}
	double td = run_timed(dump), tt = run_timed(tsh);
	double dump_pps = td > 0 ? PACKETS / td : 0;
	double tsh_pps = tt > 0 ? PACKETS / tt : 0;

	const char *g = "codec";
	bench_row(g, "ICRC, 4 KiB payload, vs fastest CRC-32", icrc, "GB/s",
		  "ISA-L crc32_gzip_refl, same bytes (16 packets, IP IDs "
		  "and UDP checksums changing)", isal, ">=0.9");
	bench_row(g, "ICRC, 4 KiB payload, vs zlib", icrc, "GB/s",
		  "zlib crc32, same bytes", crc, NULL);
	bench_row(g, "datagram parse (with ICRC), 4 KiB", dgram, "GB/s",
		  "ICRC alone", icrc, NULL);
	bench_row(g, "memcpy of the same bytes", mcpy, "GB/s", NULL, 0, NULL);
	bench_row(g, "rocemu dump, 1M packets", dump_pps / 1e6, "Mpkt/s", NULL,
		  0, ">=2");
	if (tsh_pps > 0)
		bench_row(g, "rocemu dump vs tshark, same file", dump_pps / 1e6,
			  "Mpkt/s", "tshark -n -r", tsh_pps / 1e6, ">=20");
	else
		printf("tshark could not be run: install the tshark package\n");
	unlink(cap);
	return 0;
}
