// SPDX-License-Identifier: MIT
/*
 * rxe_probe: the golden-capture scenarios that no stock program covers,
 * written with plain verbs so that the same binary runs on Linux rxe and on
 * rocemu's drop-in. One RC QP each side, set up over a TCP connection.
 *
 *   rxe_probe server [-d DEV] [-g GID] [-p PORT] STEP
 *   rxe_probe client [-d DEV] [-g GID] [-p PORT] SERVER STEP
 *
 * Steps and what each side expects (exit 0 when it saw exactly that):
 *   send_imm       SEND with immediate, 64 B; server: a RECV completion
 *                  with IBV_WC_WITH_IMM and imm 0x1234abcd
 *   write_imm      WRITE with immediate, 3000 B (three packets at MTU 1024);
 *                  server: RECV_RDMA_WITH_IMM, imm 0x5678cdef, data written
 *   inline_send    SEND of 64 B with IBV_SEND_INLINE
 *   rnr_retry      the server posts its receive only after the first SEND
 *                  met no receive: one RNR NAK, then the retry succeeds
 *   rnr_exhausted  no receive ever: RNR NAK, one retry (rnr_retry 1),
 *                  RNR NAK, client WC RNR_RETRY_EXC_ERR
 *   write_bad_rkey WRITE 64 B with a wrong rkey: NAK remote access error,
 *                  client WC REM_ACCESS_ERR
 *   read_bad_rkey  READ 64 B with a wrong rkey: likewise
 *   write_past_end WRITE 64 B whose last 32 bytes lie past the server's MR
 *   loss           WRITE with immediate, 4096 B (four packets at MTU 1024),
 *                  PSNs 0x1000..0x1003; the lab drops the first copy of
 *                  0x1001 on the wire (scenarios.sh --drop): sequence NAK,
 *                  go-back-N from 0x1001; server: the data and imm arrive
 *   atomic_misaligned  FETCH_AND_ADD at a remote address 4 bytes past an
 *                  8-byte boundary: refused at post time with EINVAL, as
 *                  rdma-core's rxe provider refuses it; nothing on the wire
 *   retry_exhausted SEND 64 B to a posted receive while the server's RoCE
 *                  answers are lost: before it says "ready" the server runs
 *                  the shell command in RXE_PROBE_LOSS (one that drops its
 *                  UDP port 4791 traffic, e.g. with tc); the client
 *                  retries once (retry_cnt 1), client WC RETRY_EXC_ERR,
 *                  server WC SUCCESS (the first SEND arrived)
 * Each side prints what it did and saw, one line each, led by t=SECONDS,
 * and last one line that sums up what it saw, for scripts to compare:
 *   RESULT client|server post=ok|EINVAL|... wc=STATUS[,STATUS...]|none qp=STATE
 * (wc: the completions it polled, by ibv_wc_status_str with spaces as '_';
 * qp: its QP's state at the end: RESET INIT RTR RTS SQD SQE ERR).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { SRV_LEN = 4096, CLI_LEN = 8192, MSG = 64, WIMM_LEN = 3000,
       LOSS_LEN = 4096 };
enum { CLI_PSN = 0x1000, SRV_PSN = 0x2000 };
/* IBTA 9.7.5.2.8 table 45: timer field 31 is 491.52 ms. The server posts
 * its receive 150 ms after the client posted: long after the first SEND
 * met an empty queue, well before the retry comes back. */
enum { RNR_SLOW = 31, RNR_FAST = 12, RNR_POST_DELAY_MS = 150 };
#define SEND_IMM 0x1234abcdu
#define WRITE_IMM 0x5678cdefu

struct peer {
	uint32_t qpn, psn, rkey, len;
	uint64_t addr;
	union ibv_gid gid;
};

struct ctx {
	struct ibv_context *dev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
	int gid_index, sock;
	struct peer me, them;
	int server;
	const char *step;
	char wcs[160];		/* the statuses polled, for the RESULT line */
	int post_err;		/* errno of a refused post, or 0 */
};

static struct timespec t0;

static void say(const char *fmt, ...)
{
	struct timespec t;
	va_list ap;

	clock_gettime(CLOCK_MONOTONIC, &t);
	printf("t=%.3f ", (double)(t.tv_sec - t0.tv_sec) +
				  (t.tv_nsec - t0.tv_nsec) / 1e9);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void die(const char *what)
{
	say("FAIL %s: %s", what, strerror(errno ? errno : EIO));
	exit(1);
}

static struct ibv_context *open_dev(const char *name)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *c = NULL;

	for (int i = 0; list && i < n && !c; i++)
		if (!name || !strcmp(name, ibv_get_device_name(list[i])))
			c = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return c;
}

/* The TCP side channel: one line per message. */
static void send_line(struct ctx *c, const char *line)
{
	size_t n = strlen(line);

	if (write(c->sock, line, n) != (ssize_t)n || write(c->sock, "\n", 1) != 1)
		die("tcp write");
}

static void recv_line(struct ctx *c, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		ssize_t r = read(c->sock, buf + n, 1);
		if (r <= 0) {
			errno = r ? errno : ECONNRESET;
			die("tcp read");
		}
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = 0;
}

static void expect_line(struct ctx *c, const char *want)
{
	char got[64];

	recv_line(c, got, sizeof(got));
	if (strcmp(got, want)) {
		errno = EPROTO;
		die(want);
	}
}

static int tcp_connect(const char *host, const char *port, int server)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = server ? AI_PASSIVE : 0 };
	struct addrinfo *ai;
	int s, one = 1;

	if (getaddrinfo(host, port, &hints, &ai))
		return -1;
	s = socket(ai->ai_family, ai->ai_socktype, 0);
	if (s < 0)
		return -1;
	if (server) {
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, ai->ai_addr, ai->ai_addrlen) || listen(s, 1))
			return -1;
		say("server listening on tcp %s", port);
		int a = accept(s, NULL, NULL);
		close(s);
		s = a;
	} else if (connect(s, ai->ai_addr, ai->ai_addrlen)) {
		close(s);
		s = -1;
	}
	freeaddrinfo(ai);
	return s;
}

static void exchange(struct ctx *c)
{
	char line[160], gid[40];
	unsigned long long addr;
	struct peer *t = &c->them;

	inet_ntop(AF_INET6, c->me.gid.raw, gid, sizeof(gid));
	snprintf(line, sizeof(line), "%06x %06x %08x %08x %016llx %s",
		 c->me.qpn, c->me.psn, c->me.rkey, c->me.len,
		 (unsigned long long)c->me.addr, gid);
	send_line(c, line);
	recv_line(c, line, sizeof(line));
	if (sscanf(line, "%x %x %x %x %llx %39s", &t->qpn, &t->psn, &t->rkey,
		   &t->len, &addr, gid) != 6 ||
	    inet_pton(AF_INET6, gid, t->gid.raw) != 1) {
		errno = EPROTO;
		die("peer's QP line");
	}
	t->addr = addr;
}

static void setup(struct ctx *c, const char *devname)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 8,
						.max_recv_wr = 8,
						.max_send_sge = 1,
						.max_recv_sge = 1,
						.max_inline_data = MSG } };

	c->dev = open_dev(devname);
	if (!c->dev)
		die("no verbs device");
	c->len = c->server ? SRV_LEN : CLI_LEN;
	c->buf = aligned_alloc(4096, c->len);
	if (!c->buf)
		die("buffer");
	for (size_t i = 0; i < c->len; i++)
		c->buf[i] = (uint8_t)(c->server ? 0x55 : i * 7);
	if (!(c->pd = ibv_alloc_pd(c->dev)) ||
	    !(c->cq = ibv_create_cq(c->dev, 16, NULL, NULL, 0)) ||
	    !(c->mr = ibv_reg_mr(c->pd, c->buf, c->len, access)))
		die("pd, cq or mr");
	qa.send_cq = qa.recv_cq = c->cq;
	c->qp = ibv_create_qp(c->pd, &qa);
	if (!c->qp)
		die("ibv_create_qp");
	if (ibv_query_gid(c->dev, 1, c->gid_index, &c->me.gid))
		die("ibv_query_gid");
	c->me.qpn = c->qp->qp_num;
	c->me.psn = c->server ? SRV_PSN : CLI_PSN;
	c->me.rkey = c->mr->rkey;
	c->me.len = (uint32_t)c->len;
	c->me.addr = (uintptr_t)c->buf;
}

static int is_rnr_step(const struct ctx *c)
{
	return !strncmp(c->step, "rnr_", 4);
}

static void connect_qp(struct ctx *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC };
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = c->them.qpn;
	a.rq_psn = c->them.psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = !strcmp(c->step, "rnr_retry") ? RNR_SLOW : RNR_FAST;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = c->them.gid;
	a.ah_attr.grh.sgid_index = (uint8_t)c->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV |
				       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				       IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->me.psn;
	a.timeout = 14;
	/* One retry makes retry exhaustion quick to reach; the loss step
	 * wants room for its go-back-N (and a timeout besides). */
	a.retry_cnt = !strcmp(c->step, "loss") ? 3 : 1;
	/* rnr_retry 7 retries for ever; the exhausted step wants one. */
	a.rnr_retry = !strcmp(c->step, "rnr_exhausted") ? 1 : 7;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				       IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS");
	say("QP 0x%06x psn 0x%06x -> QP 0x%06x psn 0x%06x rkey 0x%08x",
	    c->me.qpn, c->me.psn, c->them.qpn, c->them.psn, c->them.rkey);
}

/* One completion within ms milliseconds, or status -1 when none came. */
static struct ibv_wc wait_wc(struct ctx *c, int ms)
{
	struct ibv_wc wc = { .status = (enum ibv_wc_status)-1 };

	for (int i = 0; i < ms * 10; i++) {
		int n = ibv_poll_cq(c->cq, 1, &wc);
		if (n < 0)
			die("ibv_poll_cq");
		if (n == 1) {
			char st[48];
			size_t k = strlen(c->wcs);
			snprintf(st, sizeof(st), "%s", ibv_wc_status_str(wc.status));
			for (char *p = st; *p; p++)
				if (*p == ' ')
					*p = '_';
			snprintf(c->wcs + k, sizeof(c->wcs) - k, "%s%s",
				 k ? "," : "", st);
			say("WC %s wr_id=%llu status=%s opcode=%d byte_len=%u "
			    "wc_flags=0x%x imm=0x%08x",
			    c->server ? "server" : "client",
			    (unsigned long long)wc.wr_id,
			    ibv_wc_status_str(wc.status), wc.opcode,
			    wc.byte_len, wc.wc_flags, ntohl(wc.imm_data));
			return wc;
		}
		usleep(100);
	}
	return wc;
}

static void post_recv(struct ctx *c)
{
	struct ibv_sge sge = { (uintptr_t)c->buf, MSG, c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 100, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(c->qp, &wr, &bad))
		die("ibv_post_recv");
	say("posted a receive of %d bytes", MSG);
}

/* Posts one signaled WR; returns 0, or the error ibv_post_send gave. */
static int post(struct ctx *c, enum ibv_wr_opcode op, uint32_t len,
		uint64_t raddr, uint32_t rkey, unsigned flags, uint32_t imm)
{
	struct ibv_sge sge = { (uintptr_t)c->buf, len, c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED | flags,
				  .imm_data = htonl(imm) }, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	int err = ibv_post_send(c->qp, &wr, &bad);
	say("post%s opcode %d len %u raddr 0x%llx rkey 0x%08x%s%s",
	    err ? " refused:" : "ed", op, len, (unsigned long long)raddr, rkey,
	    err ? " " : "", err ? strerror(err) : "");
	return err;
}

struct step {
	const char *name;
	enum ibv_wr_opcode op;
	uint32_t len;
	unsigned flags;
	uint32_t imm;
	int bad_rkey;		/* use a key the server never handed out */
	uint32_t offset;	/* into the server's buffer */
	enum ibv_wc_status client_wc;
	int server_recv;	/* the server expects a receive completion */
	int post_err;		/* the client expects its post refused so */
	int lossy;		/* the server runs RXE_PROBE_LOSS first */
};

/* name, opcode, length, flags, imm, bad_rkey, offset, client_wc,
 * server_recv, post_err, lossy */
static const struct step steps[] = {
	{ "send_imm", IBV_WR_SEND_WITH_IMM, MSG, 0, SEND_IMM, 0, 0,
	  IBV_WC_SUCCESS, 1, 0, 0 },
	{ "write_imm", IBV_WR_RDMA_WRITE_WITH_IMM, WIMM_LEN, 0, WRITE_IMM, 0, 0,
	  IBV_WC_SUCCESS, 1, 0, 0 },
	{ "inline_send", IBV_WR_SEND, MSG, IBV_SEND_INLINE, 0, 0, 0,
	  IBV_WC_SUCCESS, 1, 0, 0 },
	{ "rnr_retry", IBV_WR_SEND, MSG, 0, 0, 0, 0, IBV_WC_SUCCESS, 1, 0, 0 },
	{ "rnr_exhausted", IBV_WR_SEND, MSG, 0, 0, 0, 0,
	  IBV_WC_RNR_RETRY_EXC_ERR, 0, 0, 0 },
	{ "write_bad_rkey", IBV_WR_RDMA_WRITE, MSG, 0, 0, 1, 0,
	  IBV_WC_REM_ACCESS_ERR, 0, 0, 0 },
	{ "read_bad_rkey", IBV_WR_RDMA_READ, MSG, 0, 0, 1, 0,
	  IBV_WC_REM_ACCESS_ERR, 0, 0, 0 },
	{ "write_past_end", IBV_WR_RDMA_WRITE, MSG, 0, 0, 0, SRV_LEN - MSG / 2,
	  IBV_WC_REM_ACCESS_ERR, 0, 0, 0 },
	{ "atomic_misaligned", IBV_WR_ATOMIC_FETCH_AND_ADD, 8, 0, 0, 0, 4,
	  IBV_WC_SUCCESS, 0, EINVAL, 0 },
	{ "retry_exhausted", IBV_WR_SEND, MSG, 0, 0, 0, 0, IBV_WC_RETRY_EXC_ERR,
	  1, 0, 1 },
	{ "loss", IBV_WR_RDMA_WRITE_WITH_IMM, LOSS_LEN, 0, WRITE_IMM, 0, 0,
	  IBV_WC_SUCCESS, 1, 0, 0 },
};

static const struct step *find_step(const char *name)
{
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (!strcmp(steps[i].name, name))
			return &steps[i];
	return NULL;
}

static int run_client(struct ctx *c, const struct step *s)
{
	/* A wrong key: the right one with its low byte (rxe's key8, rocemu's
	 * key byte) changed, so no MR of the server answers to it. */
	uint32_t rkey = s->bad_rkey ? c->them.rkey ^ 0x5a : c->them.rkey;

	expect_line(c, "ready");
	c->post_err = post(c, s->op, s->len, c->them.addr + s->offset, rkey,
			   s->flags, s->imm);
	send_line(c, "posted");
	int ok = c->post_err == s->post_err;
	if (!c->post_err) {
		struct ibv_wc wc = wait_wc(c, 10000);
		ok = ok && (int)wc.status == (int)s->client_wc;
	}
	if (s->post_err)
		say("client expects its post refused with %s: %s",
		    strerror(s->post_err), ok ? "ok" : "WRONG");
	else
		say("client expects %s: %s", ibv_wc_status_str(s->client_wc),
		    ok ? "ok" : "WRONG");
	/* Anything more (there should be nothing) shows in the RESULT. */
	wait_wc(c, 100);
	send_line(c, "done");
	return ok ? 0 : 1;
}

static int check_server_wc(struct ctx *c, const struct step *s,
			   struct ibv_wc wc)
{
	int ok = wc.status == IBV_WC_SUCCESS;

	if (s->imm)
		ok = ok && (wc.wc_flags & IBV_WC_WITH_IMM) &&
		     ntohl(wc.imm_data) == s->imm;
	if (s->op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		ok = ok && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM;
		for (uint32_t i = 0; i < s->len; i++)
			ok = ok && c->buf[i] == (uint8_t)(i * 7);
	} else {
		ok = ok && wc.opcode == IBV_WC_RECV && wc.byte_len == MSG;
		for (uint32_t i = 0; i < MSG; i++)
			ok = ok && c->buf[i] == (uint8_t)(i * 7);
	}
	return ok;
}

static int run_server(struct ctx *c, const struct step *s)
{
	int ok = 1;

	if (s->server_recv && !is_rnr_step(c))
		post_recv(c);
	/* Sent before the client may post: the loss is in place by then. */
	if (s->lossy) {
		const char *cmd = getenv("RXE_PROBE_LOSS");
		if (!cmd || !*cmd) {
			errno = EINVAL;
			die("retry_exhausted needs RXE_PROBE_LOSS");
		}
		int rc = system(cmd);
		say("ran RXE_PROBE_LOSS: %s (exit %d)", cmd, rc);
		if (rc) {
			errno = EIO;
			die("RXE_PROBE_LOSS");
		}
	}
	send_line(c, "ready");
	expect_line(c, "posted");
	if (!strcmp(s->name, "rnr_retry")) {
		usleep(RNR_POST_DELAY_MS * 1000);
		post_recv(c);
	}
	if (s->server_recv)
		ok = check_server_wc(c, s, wait_wc(c, 10000));
	expect_line(c, "done");
	/* Anything more (there should be nothing) shows in the RESULT. */
	wait_wc(c, 100);
	say("server %s", ok ? "ok" : "WRONG");
	return ok ? 0 : 1;
}

static const char *qp_state_name(enum ibv_qp_state st)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS",
					     "SQD", "SQE", "ERR" };

	return (unsigned)st < sizeof(names) / sizeof(names[0]) ? names[st]
							       : "UNKNOWN";
}

/* The one line scripts compare: see the top of this file. */
static void result(struct ctx *c)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	const char *qp = "UNKNOWN";

	if (!ibv_query_qp(c->qp, &a, IBV_QP_STATE, &ia))
		qp = qp_state_name(a.qp_state);
	printf("RESULT %s post=%s wc=%s qp=%s\n", c->server ? "server" : "client",
	       c->post_err == 0 ? "ok"
	       : c->post_err == EINVAL ? "EINVAL"
	       : c->post_err == ENOMEM ? "ENOMEM"
	       : "error",
	       c->wcs[0] ? c->wcs : "none", qp);
	fflush(stdout);
}

static void usage(void)
{
	fprintf(stderr, "usage: rxe_probe server [-d DEV] [-g GID] [-p PORT] STEP\n"
			"       rxe_probe client [-d DEV] [-g GID] [-p PORT] "
			"SERVER STEP\nsteps:");
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		fprintf(stderr, " %s", steps[i].name);
	fputc('\n', stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	struct ctx c = { .gid_index = 1 };
	const char *dev = NULL, *port = "18515";
	int o;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (argc < 2)
		usage();
	c.server = !strcmp(argv[1], "server");
	if (!c.server && strcmp(argv[1], "client"))
		usage();
	optind = 2;
	while ((o = getopt(argc, argv, "d:g:p:")) != -1) {
		if (o == 'd')
			dev = optarg;
		else if (o == 'g')
			c.gid_index = atoi(optarg);
		else if (o == 'p')
			port = optarg;
		else
			usage();
	}
	if (argc - optind != (c.server ? 1 : 2))
		usage();
	c.step = argv[argc - 1];
	const struct step *s = find_step(c.step);
	if (!s)
		usage();
	setup(&c, dev);
	c.sock = tcp_connect(c.server ? NULL : argv[optind], port, c.server);
	if (c.sock < 0)
		die("tcp connect");
	exchange(&c);
	connect_qp(&c);
	int rc = c.server ? run_server(&c, s) : run_client(&c, s);
	result(&c);
	say("%s done", c.server ? "server" : "client");
	return rc;
}
