/* SPDX-License-Identifier: MIT */
/* make bench, network part: 64-byte RC SENDs between two processes over UDP vs a raw UDP echo. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_row.h"
#include "rocemu/device.h"
#include "rocemu/proto.h"

enum { PKT = 12 + 64 + 4, BATCH = 64, DEPTH = 64, SECONDS = 2 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int udp_on(const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), big = 4 << 20;

	inet_pton(AF_INET, ip, &a.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("bench: bind");
		exit(1);
	}
	return fd;
}

/* The baseline: the client sends batches of PKT-byte datagrams, the
 * server echoes each one; returns echoed datagrams per second. */
static double raw_echo(void)
{
	pid_t pid = fork();
	static uint8_t buf[BATCH][2048];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in peer[BATCH];

	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
		m[i].msg_hdr = (struct msghdr){ .msg_name = &peer[i],
						.msg_namelen = sizeof(peer[i]),
						.msg_iov = &iov[i], .msg_iovlen = 1 };
	}
	if (pid == 0) {
		int fd = udp_on("127.0.0.3", 4791);
		struct timeval tv = { SECONDS + 2, 0 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		for (;;) {
			for (int i = 0; i < BATCH; i++)
				m[i].msg_hdr.msg_namelen = sizeof(peer[i]);
			int n = recvmmsg(fd, m, BATCH, MSG_WAITFORONE, NULL);
			if (n <= 0)
				_exit(0);
			for (int i = 0; i < n; i++)
				iov[i].iov_len = m[i].msg_len;
			sendmmsg(fd, m, (unsigned)n, 0);
			for (int i = 0; i < n; i++)
				iov[i].iov_len = sizeof(buf[i]);
		}
	}
	int fd = udp_on("127.0.0.2", 4791);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(4791) };
	inet_pton(AF_INET, "127.0.0.3", &to.sin_addr);
	usleep(100000);
	long echoed = 0, inflight = 0;
	double t0 = now();
	while (now() - t0 < SECONDS) {
		if (inflight < DEPTH) {
			for (int i = 0; i < BATCH; i++) {
				iov[i].iov_len = PKT;
				m[i].msg_hdr.msg_name = &to;
				m[i].msg_hdr.msg_namelen = sizeof(to);
			}
			int k = sendmmsg(fd, m, DEPTH - (unsigned)inflight, 0);
			inflight += k > 0 ? k : 0;
		}
		for (int i = 0; i < BATCH; i++) {
			iov[i].iov_len = sizeof(buf[i]);
			m[i].msg_hdr.msg_name = &peer[i];
			m[i].msg_hdr.msg_namelen = sizeof(peer[i]);
		}
		int n = recvmmsg(fd, m, BATCH, MSG_DONTWAIT, NULL);
		if (n > 0) {
			echoed += n;
			inflight -= n;
		}
	}
	double t = now() - t0;
	close(fd);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	return (double)echoed / t;
}

struct side {
	struct rocemu_world *w;
	struct rocemu_endpoint ep;
	struct rocemu_dev *dev;
	struct rocemu_cq *cq;
	struct rocemu_qp *qp;
	struct rocemu_mr *mr;
	uint8_t *buf;
};

static void side_up(struct side *s, uint8_t octet)
{
	struct rocemu_dev_cfg cfg = { .name = "bench", .mtu = IBV_MTU_1024,
				      .gid = { [10] = 0xff, [11] = 0xff,
					       [12] = 127, [15] = octet } };

	s->w = rocemu_world_new_udp();
	if (rocemu_endpoint_new(s->w, &cfg, IBV_QPT_RC, 4096, 256, &s->ep)) {
		perror("bench: device");
		exit(1);
	}
	s->dev = s->ep.dev;
	s->cq = s->ep.cq;
	s->qp = s->ep.qp;
	s->mr = s->ep.mr;
	s->buf = s->ep.buf;
}

static void side_connect(struct side *s, uint32_t peer_qpn, uint8_t peer_octet)
{
	struct rocemu_rc_params p = {
		.peer_qpn = peer_qpn, .mtu = IBV_MTU_1024, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1,
		.max_rd_atomic = 1,
		.peer_gid = { [10] = 0xff, [11] = 0xff, [12] = 127,
			      [15] = peer_octet },
	};

	if (rocemu_qp_connect(s->qp, &p)) {
		fprintf(stderr, "bench: connect failed\n");
		exit(1);
	}
}

static void post_recv(struct side *s)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)s->buf, 64,
			       rocemu_mr_lkey(s->mr) };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	rocemu_post_recv(s->qp, &wr, &bad);
}

/* The server process: keeps receives posted; reports requests and ACKs. */
static void rc_server(int to_parent, int from_parent)
{
	struct side s;
	uint32_t qpn;
	struct ibv_wc wc[64];

	side_up(&s, 3);
	qpn = rocemu_qp_num(s.qp);
	if (write(to_parent, &qpn, 4) != 4 || read(from_parent, &qpn, 4) != 4)
		_exit(1);
	side_connect(&s, qpn, 2);
	for (int i = 0; i < 200; i++)
		post_recv(&s);
	double t0 = now();
	while (now() - t0 < SECONDS + 1) {
		rocemu_world_wait(s.w, 1000000);
		int n;
		while ((n = rocemu_cq_poll(s.cq, 64, wc)) > 0)
			for (int i = 0; i < n; i++)
				post_recv(&s);
	}
	uint64_t c[2] = { rocemu_dev_counter(s.dev, ROCEMU_CNT_RX_PACKETS),
			  rocemu_dev_counter(s.dev, ROCEMU_CNT_ACKS_SENT) };
	if (write(to_parent, c, sizeof(c)) != sizeof(c))
		_exit(1);
	_exit(0);
}

static double rc_sends(double *acks_per_req)
{
	int up[2], down[2];
	uint32_t qpn;
	struct ibv_wc wc[64];

	if (pipe(up) || pipe(down))
		exit(1);
	pid_t pid = fork();
	if (pid == 0)
		rc_server(up[1], down[0]);
	struct side s;
	side_up(&s, 2);
	uint32_t mine = rocemu_qp_num(s.qp);
	if (read(up[0], &qpn, 4) != 4 || write(down[1], &mine, 4) != 4)
		exit(1);
	side_connect(&s, qpn, 3);
	usleep(50000);
	long done = 0, posted = 0;
	double t0 = now();
	while (now() - t0 < SECONDS) {
		while (posted - done < DEPTH) {
			struct ibv_sge sge = { (uint64_t)(uintptr_t)s.buf, 64,
					       rocemu_mr_lkey(s.mr) };
			struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
						  .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED },
					   *bad;
			if (rocemu_post_send(s.qp, &wr, &bad))
				break;
			posted++;
		}
		rocemu_world_wait(s.w, 0);
		int n;
		while ((n = rocemu_cq_poll(s.cq, 64, wc)) > 0)
			done += n;
	}
	double t = now() - t0;
	uint64_t c[2] = { 1, 0 };
	if (read(up[0], c, sizeof(c)) != sizeof(c))
		c[0] = 1;
	waitpid(pid, NULL, 0);
	*acks_per_req = (double)c[1] / (double)(c[0] ? c[0] : 1);
	return (double)done / t;
}

int main(void)
{
	double acks;
	double base = raw_echo();
	double rc = rc_sends(&acks);

	bench_row("two processes, loopback", "64 B RC SEND, rocemu's API", rc / 1e6,
		  "Mmsg/s", "plain UDP echo, sendmmsg/recvmmsg, 80-byte datagrams",
		  base / 1e6, ">=0.7");
	bench_row("two processes, loopback", "  ACKs sent per request packet",
		  acks, "", NULL, 0, NULL);
	return 0;
}
