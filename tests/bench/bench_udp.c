/* SPDX-License-Identifier: MIT */
/* make bench's yardsticks: plain UDP between two processes on 127.0.0.2 and 127.0.0.3, bulk (with or without GSO/GRO) and ping-pong. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: bench_udp bulk SIZE [gso] | bench_udp pingpong SIZE COUNT
 * bulk: one process sends SIZE-byte datagrams with sendmmsg for SECONDS
 * (gso: in UDP_SEGMENT batches of up to 64 KiB) and the other takes them
 * with recvmmsg (gso: with UDP_GRO); prints the MB/s the receiver got.
 * pingpong: COUNT round trips of SIZE bytes, both sides spinning on a
 * non-blocking socket as perftest spins on its CQ; prints the median and
 * the 99.9th percentile of half a round trip, in microseconds.
 */
enum { PORT_RX = 18990, PORT_TX = 18991, SECONDS = 2, BATCH = 64 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int sock_at(const char *ip, int port, const char *peer, int peer_port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), big = 4 << 20;

	inet_pton(AF_INET, ip, &a.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("bench_udp: bind");
		exit(1);
	}
	a.sin_port = htons((uint16_t)peer_port);
	inet_pton(AF_INET, peer, &a.sin_addr);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("bench_udp: connect");
		exit(1);
	}
	return fd;
}

/* The receiving side of bulk: counts bytes from the first datagram to a
 * 1-byte end marker, writes the MB/s to out. */
static void bulk_rx(int out, int gso)
{
	int fd = sock_at("127.0.0.2", PORT_RX, "127.0.0.3", PORT_TX), one = 1;
	static char buf[BATCH][65536];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	double t0 = 0, mbs = 0;
	long bytes = 0;

	if (gso && setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one)))
		_exit(3);
	if (write(out, "r", 1) != 1)
		_exit(1);
	for (;;) {
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
			m[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i],
							.msg_iovlen = 1 };
		}
		int n = recvmmsg(fd, m, BATCH, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		if (!t0)
			t0 = now();
		for (int i = 0; i < n; i++) {
			if (m[i].msg_len == 1) {
				mbs = (double)bytes / (now() - t0) / 1e6;
				if (write(out, &mbs, sizeof(mbs)) != sizeof(mbs))
					_exit(1);
				_exit(0);
			}
			bytes += m[i].msg_len;
		}
	}
}

static void bulk_tx(int size, int gso)
{
	int fd = sock_at("127.0.0.3", PORT_TX, "127.0.0.2", PORT_RX);
	int per = gso ? 65000 / size : 1;
	static char buf[BATCH][65536];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];

	if (gso && setsockopt(fd, SOL_UDP, UDP_SEGMENT, &size, sizeof(size)))
		exit(3);
	double t0 = now();
	while (now() - t0 < SECONDS) {
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ buf[i], (size_t)size * per };
			m[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i],
							.msg_iovlen = 1 };
		}
		if (sendmmsg(fd, m, gso ? 4 : BATCH, 0) < 0 && errno != EAGAIN &&
		    errno != ECONNREFUSED) {
			perror("bench_udp: sendmmsg");
			exit(1);
		}
	}
	int off = 0;
	setsockopt(fd, SOL_UDP, UDP_SEGMENT, &off, sizeof(off));
	for (int i = 0; i < 20; i++) {	/* the marker may be dropped */
		if (send(fd, "e", 1, 0) < 0 && errno != ECONNREFUSED) {
			perror("bench_udp: send");
			exit(1);
		}
		usleep(20000);
	}
}

static int bulk(int size, int gso)
{
	int p[2];
	char c;
	double mbs = 0;

	if (pipe(p))
		return 1;
	pid_t pid = fork();
	if (pid == 0)
		bulk_rx(p[1], gso);
	if (read(p[0], &c, 1) != 1)
		return 1;
	bulk_tx(size, gso);
	if (read(p[0], &mbs, sizeof(mbs)) != sizeof(mbs))
		return 1;
	waitpid(pid, NULL, 0);
	printf("%.1f\n", mbs);
	return 0;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void spin_recv(int fd, char *buf, int size)
{
	while (recv(fd, buf, (size_t)size, MSG_DONTWAIT) < 0)
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			exit(1);
}

static int pingpong(int size, int count)
{
	static char buf[65536];
	double *half = calloc((size_t)count, sizeof(*half));
	pid_t pid = fork();

	if (pid == 0) {
		int fd = sock_at("127.0.0.2", PORT_RX, "127.0.0.3", PORT_TX);
		for (int i = 0; i < count + 1; i++) {
			spin_recv(fd, buf, size);
			if (send(fd, buf, (size_t)size, 0) < 0)
				_exit(1);
		}
		_exit(0);
	}
	usleep(100000);
	int fd = sock_at("127.0.0.3", PORT_TX, "127.0.0.2", PORT_RX);
	for (int i = 0; i < count + 1; i++) {
		double t0 = now();
		if (send(fd, buf, (size_t)size, 0) < 0)
			return 1;
		spin_recv(fd, buf, size);
		if (i)	/* the first one waits for the other side to start */
			half[i - 1] = (now() - t0) / 2 * 1e6;
	}
	waitpid(pid, NULL, 0);
	qsort(half, (size_t)count, sizeof(*half), by_value);
	printf("%.2f %.2f\n", half[count / 2], half[(size_t)count * 999 / 1000]);
	free(half);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "bulk"))
		return bulk(atoi(argv[2]), argc > 3 && !strcmp(argv[3], "gso"));
	if (argc == 4 && !strcmp(argv[1], "pingpong"))
		return pingpong(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: bench_udp bulk SIZE [gso] | "
			"bench_udp pingpong SIZE COUNT\n");
	return 2;
}
