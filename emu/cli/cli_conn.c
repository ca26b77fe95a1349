/* SPDX-License-Identifier: MIT */
/* rocemu ping and perf: device setup, the out-of-band exchange, connecting, waiting for completions. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli_conn.h"

static void print_trace(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "%s\n", line);
}

static int tcp_socket(const char *addr, int port, bool listen_here,
		      const char *who)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST }, *ai;
	char service[16];
	int one = 1;

	snprintf(service, sizeof(service), "%d", port);
	if (getaddrinfo(addr, service, &hints, &ai)) {
		fprintf(stderr, "%s: '%s' is not an IP address\n", who, addr);
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	int rc = listen_here ? bind(fd, ai->ai_addr, ai->ai_addrlen)
			     : connect(fd, ai->ai_addr, ai->ai_addrlen);
	if (rc == 0 && listen_here)
		rc = listen(fd, 1);
	if (rc) {
		if (listen_here)
			fprintf(stderr, "%s: cannot listen on %s TCP port %d: %s "
					"(pick another with --port)\n",
				who, addr, port, strerror(errno));
		else
			fprintf(stderr, "%s: no server at %s TCP port %d: %s "
					"(start 'rocemu %s' there first)\n",
				who, addr, port, strerror(errno), who + 7);
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* Connects to the server, retrying for --wait seconds while it starts. */
static int tcp_client(const struct conn_opts *o, const char *who)
{
	for (int i = 0; i < 10 * o->wait_s; i++) {
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
					  .ai_flags = AI_NUMERICHOST }, *ai;
		char service[16];
		snprintf(service, sizeof(service), "%d", o->tcp_port);
		if (getaddrinfo(o->server, service, &hints, &ai)) {
			fprintf(stderr, "%s: '%s' is not an IP address\n", who,
				o->server);
			return -1;
		}
		int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
		freeaddrinfo(ai);
		if (rc == 0)
			return fd;
		close(fd);
		if (errno != ECONNREFUSED)
			break;
		usleep(100000);
	}
	return tcp_socket(o->server, o->tcp_port, false, who);
}

static void info_format(const struct peer_info *p, char *line, size_t len)
{
	int n = snprintf(line, len, "ROCEMU1 %06x %06x %08x %016llx ", p->qpn,
			 p->psn, p->rkey, (unsigned long long)p->va);
	for (int i = 0; i < 16; i++)
		n += snprintf(line + n, len - (size_t)n, "%02x", p->gid[i]);
	snprintf(line + n, len - (size_t)n, "\n");
}

static int info_parse(const char *line, struct peer_info *p)
{
	unsigned long long va;
	char gid[33];

	if (sscanf(line, "ROCEMU1 %x %x %x %llx %32s", &p->qpn, &p->psn,
		   &p->rkey, &va, gid) != 5 || strlen(gid) != 32)
		return -1;
	p->va = va;
	for (int i = 0; i < 16; i++)
		if (sscanf(gid + 2 * i, "%2hhx", &p->gid[i]) != 1)
			return -1;
	return 0;
}

/* Sends our line and reads the peer's, 10 s at most. */
static int exchange(struct conn *c, int fd, const char *who)
{
	char line[128], in[128];
	size_t got = 0;

	info_format(&c->me, line, sizeof(line));
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line))
		goto fail;
	while (got < sizeof(in) - 1 && !memchr(in, '\n', got)) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		if (poll(&pfd, 1, 10000) != 1)
			goto fail;
		ssize_t n = read(fd, in + got, sizeof(in) - 1 - got);
		if (n <= 0)
			goto fail;
		got += (size_t)n;
	}
	in[got] = '\0';
	if (info_parse(in, &c->peer) == 0)
		return 0;
fail:
	fprintf(stderr, "%s: the peer did not say who it is (is it a rocemu "
			"of the same version?)\n", who);
	return -1;
}

static int make_objects(struct conn *c, const char *who)
{
	struct rocemu_dev_cfg cfg = { .name = "rocemu0", .mtu = c->o.mtu };
	struct rocemu_endpoint_attr a = {
		.type = c->o.type, .len = c->o.buf_len,
		.depth = (uint32_t)c->o.depth, .channel = true,
		.srq = c->o.srq,
	};

	if (roce_gid_parse(c->o.addr, cfg.gid)) {
		fprintf(stderr, "%s: '%s' is not an IP address\n", who, c->o.addr);
		return -1;
	}
	c->w = rocemu_world_new_udp();
	if (c->w)
		rocemu_world_set_offload(c->w, !c->o.no_offload);
	if (c->w && c->o.explain) {
		c->why.f = stderr;
		rocemu_world_explain(c->w, rocemu_why_print, &c->why);
	}
	if (c->w && c->o.stats) /* the last reason of each kind */
		rocemu_world_explain_keep(c->w, true);
	int rc = c->w ? rocemu_endpoint_new_attr(c->w, &cfg, &a, &c->ep)
		      : -ENOMEM;
	if (rc == -ENOMEM) {
		fprintf(stderr, "%s: out of memory\n", who);
		return -1;
	}
	if (rc) {
		fprintf(stderr, "%s: cannot bind %s UDP port 4791: %s (%s)\n",
			who, c->o.addr, strerror(-rc),
			rc == -EADDRINUSE
			    ? "another user's rocemu, a program that binds "
			      "it without SO_REUSEPORT or an rxe device "
			      "binds it: stop it, or pick another address "
			      "with --addr"
			    : "use a local address, e.g. --addr 127.0.0.2");
		return -1;
	}
	memcpy(c->me.gid, cfg.gid, 16);
	c->me.qpn = rocemu_qp_num(c->ep.qp);
	c->me.psn = (uint32_t)(rand() & 0xffffff);
	c->me.rkey = rocemu_mr_rkey(c->ep.mr);
	c->me.va = (uint64_t)(uintptr_t)c->ep.buf;
	return 0;
}

static int connect_qp(struct conn *c)
{
	struct rocemu_rc_params p = {
		.peer_qpn = c->peer.qpn, .sq_psn = c->me.psn,
		.rq_psn = c->peer.psn, .mtu = c->o.mtu,
		.access = IBV_ACCESS_REMOTE_WRITE,
		.qkey = 0x11111111,
	};

	/* through a relay: it forwards to the peer, whose QPN and PSN stay */
	const uint8_t *to = c->o.has_via ? c->o.via_gid : c->peer.gid;
	memcpy(p.peer_gid, to, 16);
	if (c->o.type == IBV_QPT_UD) {
		struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1 };
		memcpy(ah.grh.dgid.raw, to, 16);
		c->ah = rocemu_ah_new(c->ep.pd, &ah);
	} else if (c->o.type == IBV_QPT_RC) {
		p.access |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		p.timeout = 14;
		p.retry_cnt = 7;
		p.rnr_retry = 7;
		p.min_rnr_timer = 12;
		p.max_rd_atomic = 16;
	}
	return rocemu_qp_connect(c->ep.qp, &p) ? -1 : 0;
}

int conn_prepare(struct conn *c, const char *who)
{
	int fd;

	srand((unsigned)getpid());
	if (make_objects(c, who))
		return -1;
	if (c->o.server) {
		fd = tcp_client(&c->o, who);
	} else {
		int lfd = tcp_socket(c->o.addr, c->o.tcp_port, true, who);
		if (lfd < 0)
			return -1;
		fprintf(stderr, "%s: waiting on %s TCP port %d\n", who, c->o.addr,
			c->o.tcp_port);
		fd = accept(lfd, NULL, NULL);
		close(lfd);
	}
	if (fd < 0 || exchange(c, fd, who)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (connect_qp(c)) {
		fprintf(stderr, "%s: could not connect the QP\n", who);
		return -1;
	}
	if (c->o.pcap && rocemu_world_record(c->w, c->o.pcap)) {
		fprintf(stderr, "%s: cannot write %s\n", who, c->o.pcap);
		return -1;
	}
	if (c->o.trace)
		rocemu_world_trace(c->w, print_trace, NULL);
	rocemu_cq_req_notify(c->ep.cq, false);
	return 0;
}

int conn_start(struct conn *c)
{
	return rocemu_world_start(c->w) ? -1 : 0;
}

int conn_up(struct conn *c, const char *who)
{
	return conn_prepare(c, who) || conn_start(c) ? -1 : 0;
}

void conn_down(struct conn *c)
{
	if (c->w)
		rocemu_world_stop(c->w);
	if (c->why.f) {
		rocemu_world_explain(c->w, NULL, NULL);
		rocemu_why_printer_end(&c->why);
	}
	if (c->w && c->o.pcap)
		rocemu_world_record(c->w, NULL);
	if (c->ah)
		rocemu_ah_free(c->ah);
	rocemu_endpoint_free(&c->ep);
	rocemu_world_free(c->w);
}

/*
 * Every counter, zeros included: for a lossy link the zeros are evidence
 * too (no ICRC drop says the bytes arrive intact, no retransmit says no
 * request was lost), a script finds each name on every run, and two runs
 * compare line by line, as with ethtool -S or rdma statistic.
 */
void conn_print_counters(struct conn *c)
{
	if (!c->ep.dev)
		return;
	rocemu_world_stop(c->w);
	rocemu_dev_print_counters(c->ep.dev, stdout, "");
	rocemu_world_print_wire_stats(c->w, stdout, "");
	rocemu_dev_print_why(c->ep.dev, stdout, "");
	fflush(stdout);
}

int conn_post_recv(struct conn *c, uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)(c->ep.buf + off), len,
			       rocemu_mr_lkey(c->ep.mr) };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return c->ep.srq ? rocemu_post_srq_recv(c->ep.srq, &wr, &bad)
		      : rocemu_post_recv(c->ep.qp, &wr, &bad);
}

static int wait_failed(const struct ibv_wc *wc, const char *who)
{
	if (wc->status == IBV_WC_SUCCESS)
		return 0;
	fprintf(stderr, "%s: a work request failed: status %d%s\n", who,
		wc->status, wc->status == IBV_WC_RETRY_EXC_ERR
				    ? " (the peer stopped answering)" : "");
	return -1;
}

static int nothing_for(int timeout_ms, const char *who)
{
	fprintf(stderr, "%s: nothing from the peer for %d ms\n", who, timeout_ms);
	return -1;
}

/* --poll: the caller's thread drives the wire while it waits, as a
 * busy-polling verbs program does. */
static int spin_wait(struct conn *c, struct ibv_wc *wc, int timeout_ms,
		     const char *who)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned spins = 0;; spins++) {
		if (rocemu_cq_poll(c->ep.cq, 1, wc) == 1)
			return wait_failed(wc, who);
		rocemu_world_poll(c->w);
		if (spins % 1024)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 +
			    (t.tv_nsec - t0.tv_nsec) / 1000000 > timeout_ms)
			return nothing_for(timeout_ms, who);
	}
}

int conn_wait(struct conn *c, struct ibv_wc *wc, int timeout_ms,
	      const char *who)
{
	struct rocemu_cq *got;

	if (c->o.busy_poll)
		return spin_wait(c, wc, timeout_ms, who);
	for (;;) {
		if (rocemu_cq_poll(c->ep.cq, 1, wc) == 1)
			return wait_failed(wc, who);
		struct pollfd pfd = { rocemu_channel_fd(c->ep.ch), POLLIN, 0 };
		if (poll(&pfd, 1, timeout_ms) != 1)
			return nothing_for(timeout_ms, who);
		rocemu_channel_get_event(c->ep.ch, &got);
		rocemu_cq_req_notify(c->ep.cq, false);
	}
}

/* The options without a value: where each is kept, or NULL. */
static bool *flag_of(struct conn_opts *o, const char *a)
{
	return !strcmp(a, "--trace")   ? &o->trace
	       : !strcmp(a, "--srq")   ? &o->srq
	       : !strcmp(a, "--poll")  ? &o->busy_poll
	       : !strcmp(a, "--stats") ? &o->stats
	       : !strcmp(a, "--explain") ? &o->explain
	       : !strcmp(a, "--no-offload") ? &o->no_offload
				       : NULL;
}

int conn_parse_opt(struct conn_opts *o, int argc, char **argv, int i,
		   const char *who)
{
	const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
	bool *flag = flag_of(o, a);

	if (flag) {
		*flag = true;
		return 1;
	}
	if (strcmp(a, "--addr") && strcmp(a, "--port") && strcmp(a, "-t") &&
	    strcmp(a, "-m") && strcmp(a, "--pcap") && strcmp(a, "--wait") &&
	    strcmp(a, "--via"))
		return 0;
	if (!v) {
		fprintf(stderr, "%s: %s wants a value\n", who, a);
		return -1;
	}
	if (!strcmp(a, "--addr")) {
		o->addr = v;
	} else if (!strcmp(a, "--pcap")) {
		o->pcap = v;
	} else if (!strcmp(a, "--via")) {
		if (roce_gid_parse(v, o->via_gid)) {
			fprintf(stderr, "%s: --via wants an IPv4 or IPv6 address\n",
				who);
			return -1;
		}
		o->has_via = true;
	} else if (!strcmp(a, "--wait")) {
		o->wait_s = atoi(v);
		if (o->wait_s < 1 || o->wait_s > 3600) {
			fprintf(stderr, "%s: --wait wants 1..3600 seconds\n", who);
			return -1;
		}
	} else if (!strcmp(a, "--port")) {
		o->tcp_port = atoi(v);
		if (o->tcp_port <= 0 || o->tcp_port > 65535) {
			fprintf(stderr, "%s: --port wants 1..65535\n", who);
			return -1;
		}
	} else if (!strcmp(a, "-t")) {
		o->type = !strcmp(v, "rc") ? IBV_QPT_RC : !strcmp(v, "uc") ? IBV_QPT_UC
			: !strcmp(v, "ud") ? IBV_QPT_UD : 0;
		if (!o->type) {
			fprintf(stderr, "%s: -t wants rc, uc or ud\n", who);
			return -1;
		}
	} else {
		int m = atoi(v);
		o->mtu = m == 256 ? IBV_MTU_256 : m == 512 ? IBV_MTU_512
			: m == 1024 ? IBV_MTU_1024 : m == 2048 ? IBV_MTU_2048
			: m == 4096 ? IBV_MTU_4096 : 0;
		if (!o->mtu) {
			fprintf(stderr, "%s: -m wants 256, 512, 1024, 2048 or 4096\n",
				who);
			return -1;
		}
	}
	return 2;
}
