// SPDX-License-Identifier: MIT
/*
 * Two processes, one reliable connection (RC): the program to copy when you
 * write your own. The server and the client each open the device, make a
 * queue pair, tell each other over TCP what the other needs to know (QP
 * number, first PSN, GID, and the server's buffer address and rkey), move
 * their QPs RESET -> INIT -> RTR -> RTS, and then the client sends a message
 * (SEND, into a receive the server posted) and writes another straight into
 * the server's memory (RDMA WRITE). The server checks both.
 *
 *   cc -o rc_server_client rc_server_client.c pair.c -libverbs
 *   LD_LIBRARY_PATH=../build/lib ROCEMU_ADDR=127.0.0.1 \
 *     ./rc_server_client server 127.0.0.1 &
 *   LD_LIBRARY_PATH=../build/lib ROCEMU_ADDR=127.0.0.2 \
 *     ./rc_server_client client 127.0.0.1
 *
 * --break CASE makes one deliberate mistake (docs/learn.md shows what each
 * does on the wire): rkey (the client's WRITE names a wrong rkey), recv (the
 * server posts no receive), psn (the client tells the server a wrong first
 * PSN), rtr (the client leaves its QP in RTR). --port P picks the TCP port
 * (18515 by default).
 */
#include "pair.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { BUF_LEN = 4096, WRITE_AT = 1024, GID_INDEX = 1 };
/* Each side's first PSN: any 24-bit number; fixed here so that a ladder of
 * two runs is the same. Real programs pick a random one. */
enum { SERVER_PSN = 0x000200, CLIENT_PSN = 0x000100 };
static const char send_msg[] = "hello from the client, by SEND";
static const char write_msg[] = "and this, by RDMA WRITE";

/* What one side tells the other: one line of text over TCP. */
struct peer {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	union ibv_gid gid;
};

struct end {
	const char *role;	 /* "server" or "client" */
	const char *breaks;	 /* the --break case, or "" */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
	union ibv_gid gid;
	FILE *in, *out; /* the TCP connection: a stream each way */
};

static int die(struct end *e, const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", e->role, what, strerror(err));
	return -1;
}

/* Device, protection domain, completion queue, registered buffer, QP. */
static int open_end(struct end *e)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	e->ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	if (list)
		ibv_free_device_list(list);
	if (!e->ctx) {
		pair_no_device(errno ? errno : ENODEV);
		return -1;
	}
	/* GID index 1 is the IPv4-mapped GID of the device's address (index 0
	 * is the link-local one, as on rxe): RoCEv2 puts it in the IP header. */
	if (ibv_query_gid(e->ctx, 1, GID_INDEX, &e->gid))
		return die(e, "ibv_query_gid", errno);
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->pd ? ibv_create_cq(e->ctx, 16, NULL, NULL, 0) : NULL;
	e->buf = calloc(1, BUF_LEN);
	if (!e->cq || !e->buf)
		return die(e, "ibv_alloc_pd/ibv_create_cq", errno);
	/* The server's buffer is written by the peer: REMOTE_WRITE. */
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!e->mr)
		return die(e, "ibv_reg_mr", errno);
	struct ibv_qp_init_attr init = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	e->qp = ibv_create_qp(e->pd, &init);
	if (!e->qp)
		return die(e, "ibv_create_qp", errno);
	return 0;
}

/* RESET -> INIT: the port, the partition (P_Key index 0), and what the
 * peer may do to our memory through this QP. No peer yet. */
static int to_init(struct end *e)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .pkey_index = 0,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PORT |
			  IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS))
		return die(e, "modify_qp RESET->INIT", errno);
	return 0;
}

/* INIT -> RTR (ready to receive): everything about the peer. Its QP number
 * (BTH dest QP of what we send), the PSN its first packet will carry
 * (rq_psn: the responder expects exactly that one), and its address. RoCE
 * has no LIDs: the address is the peer's GID, carried in a global route
 * header (is_global = 1), sent from our own GID at sgid_index. */
static int to_rtr(struct end *e, const struct peer *p)
{
	struct ibv_port_attr port;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .dest_qp_num = p->qpn,
		.rq_psn = p->psn, .max_dest_rd_atomic = 1,
		/* how long the peer waits after an RNR NAK: 12 = 0.64 ms */
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = p->gid, .sgid_index = GID_INDEX,
				      .hop_limit = 64 } },
	};

	if (ibv_query_port(e->ctx, 1, &port))
		return die(e, "ibv_query_port", errno);
	a.path_mtu = port.active_mtu;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return die(e, "modify_qp INIT->RTR", errno);
	return 0;
}

/* RTR -> RTS (ready to send): our own first PSN (what we told the peer),
 * and how hard to retry: timeout 14 (4.096 us * 2^14 = 67 ms before a
 * packet is sent again), retry_cnt 7 times, rnr_retry 3 times after an RNR
 * NAK (7 would mean for ever). */
static int to_rts(struct end *e, uint32_t my_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .sq_psn = my_psn, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 3, .max_rd_atomic = 1,
	};

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		return die(e, "modify_qp RTR->RTS", errno);
	return 0;
}

static void gid_hex(const union ibv_gid *g, char out[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", g->raw[i]);
}

/* Tell the peer about us, and read what it tells about itself. */
static int exchange(struct end *e, const struct peer *me, struct peer *them)
{
	char gid[33], line[160];

	gid_hex(&me->gid, gid);
	fprintf(e->out, "qpn %06" PRIx32 " psn %06" PRIx32 " rkey %08" PRIx32
		" addr %016" PRIx64 " gid %s\n", me->qpn, me->psn, me->rkey,
		me->addr, gid);
	fflush(e->out);
	if (!fgets(line, sizeof(line), e->in) ||
	    sscanf(line, "qpn %" SCNx32 " psn %" SCNx32 " rkey %" SCNx32
		   " addr %" SCNx64 " gid %32s", &them->qpn, &them->psn,
		   &them->rkey, &them->addr, gid) != 5 || strlen(gid) != 32) {
		fprintf(stderr, "%s: the peer's line is not 'qpn .. psn .. rkey "
			".. addr .. gid ..'\n", e->role);
		return -1;
	}
	for (int i = 0; i < 16; i++)
		sscanf(gid + 2 * i, "%2hhx", &them->gid.raw[i]);
	printf("%s: peer QP 0x%06x, first PSN 0x%06x\n", e->role, them->qpn,
	       them->psn);
	return 0;
}

/* Each side says "ready" once its QP is connected, and waits for the
 * other's. */
static int sync_ready(struct end *e)
{
	char line[16];

	fprintf(e->out, "ready\n");
	fflush(e->out);
	if (!fgets(line, sizeof(line), e->in) || strcmp(line, "ready\n")) {
		fprintf(stderr, "%s: the peer did not get ready\n", e->role);
		return -1;
	}
	return 0;
}

/* The TCP connection the two sides talk over before RDMA can. */
static int tcp_server(const char *role, const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0), c = -1;

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "%s: %s is not an IPv4 address\n", role, host);
		close(l);
		return -1;
	}
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(l, 1)) {
		fprintf(stderr, "%s: TCP port %d: %s\n", role, port,
			strerror(errno));
		if (l >= 0)
			close(l);
		return -1;
	}
	printf("%s: waiting for the client on %s TCP port %d\n", role, host,
	       port);
	fflush(stdout);
	c = accept(l, NULL, NULL);
	close(l);
	return c;
}

static int tcp_client(const char *role, const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "%s: %s is not an IPv4 address\n", role, host);
		close(s);
		return -1;
	}
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "%s: no server at %s TCP port %d: %s (start "
			"the server first)\n", role, host, port,
			strerror(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	return s;
}

/* Post one signalled work request and wait for its completion. */
static int run_wr(struct end *e, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int rc = ibv_post_send(e->qp, wr, &bad);

	if (rc) {
		fprintf(stderr, "%s: ibv_post_send %s: %s%s\n", e->role, what,
			strerror(rc), rc == EINVAL ?
			" (is the QP in RTS? only RTS sends)" : "");
		return -1;
	}
	if (pair_wait(e->cq, &wc))
		return -1;
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "%s: %s wr_id %" PRIu64 " completed with %s "
			"(status %d, vendor_err 0x%x)\n", e->role, what,
			wc.wr_id, ibv_wc_status_str(wc.status), wc.status,
			wc.vendor_err);
		return -1;
	}
	printf("%s: %s wr_id %" PRIu64 ": %s\n", e->role, what, wc.wr_id,
	       ibv_wc_status_str(wc.status));
	return 0;
}

/* The client: a SEND into the server's receive, then an RDMA WRITE to the
 * server's buffer at WRITE_AT, then "done" over TCP. */
static int client(struct end *e, const struct peer *srv)
{
	struct ibv_sge sge = { .lkey = e->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	int rc;

	memcpy(e->buf, send_msg, sizeof(send_msg));
	sge.addr = (uintptr_t)e->buf;
	sge.length = sizeof(send_msg);
	wr.wr_id = 1;
	wr.opcode = IBV_WR_SEND;
	rc = run_wr(e, &wr, "SEND");
	if (!rc) {
		memcpy(e->buf + WRITE_AT, write_msg, sizeof(write_msg));
		sge.addr = (uintptr_t)e->buf + WRITE_AT;
		sge.length = sizeof(write_msg);
		wr.wr_id = 2;
		wr.opcode = IBV_WR_RDMA_WRITE;
		/* where, in the server's memory: its address and rkey */
		wr.wr.rdma.remote_addr = srv->addr + WRITE_AT;
		wr.wr.rdma.rkey = srv->rkey;
		if (!strcmp(e->breaks, "rkey"))
			wr.wr.rdma.rkey ^= 0x800000; /* not the server's key */
		rc = run_wr(e, &wr, "RDMA WRITE");
	}
	fprintf(e->out, "%s\n", rc ? "failed" : "done");
	fflush(e->out);
	return rc;
}

/* The server: after the client says "done", its SEND is in our receive
 * buffer and its WRITE at WRITE_AT. */
static int server(struct end *e)
{
	char line[32] = "";
	struct ibv_wc wc;

	if (!fgets(line, sizeof(line), e->in) || strcmp(line, "done\n")) {
		fprintf(stderr, "server: the client did not finish (it says "
			"'%.*s')\n", (int)strcspn(line, "\n"), line);
		return -1;
	}
	if (pair_wait(e->cq, &wc))
		return -1;
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
	    wc.byte_len != sizeof(send_msg) || strcmp(e->buf, send_msg)) {
		fprintf(stderr, "server: the receive is wrong: %s, %u bytes\n",
			ibv_wc_status_str(wc.status), wc.byte_len);
		return -1;
	}
	printf("server: received \"%s\"\n", e->buf);
	if (strcmp(e->buf + WRITE_AT, write_msg)) {
		fprintf(stderr, "server: the WRITE did not arrive\n");
		return -1;
	}
	printf("server: written \"%s\"\n", e->buf + WRITE_AT);
	return 0;
}

static int post_recv(struct end *e)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = WRITE_AT,
			       .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int rc = ibv_post_recv(e->qp, &wr, &bad);

	return rc ? die(e, "ibv_post_recv", rc) : 0;
}

/* The mistakes each side can make: the server's receive, the client's
 * rkey, PSN and state. */
static int break_known(int client_mode, const char *b)
{
	if (!*b)
		return 1;
	if (!client_mode)
		return !strcmp(b, "recv");
	return !strcmp(b, "rkey") || !strcmp(b, "psn") || !strcmp(b, "rtr");
}

static int usage(void)
{
	fprintf(stderr, "usage: rc_server_client server SERVER_IPV4 [--port P] "
		"[--break recv]\n"
		"       rc_server_client client SERVER_IPV4 [--port P] "
		"[--break rkey|psn|rtr]\n");
	return 2;
}

static void close_end(struct end *e)
{
	if (e->in)
		fclose(e->in);
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->ctx)
		ibv_close_device(e->ctx);
	free(e->buf);
}

int main(int argc, char **argv)
{
	struct end e = { .breaks = "" };
	struct peer me = { 0 }, them = { 0 };
	const char *host = NULL;
	int port = 18515, rc = -1, i = 2, fd, client_mode;

	setvbuf(stdout, NULL, _IOLBF, 0); /* lines in order with stderr's */
	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client")))
		return usage();
	e.role = argv[1];
	if (argc < 3 || argv[2][0] == '-')
		return usage();
	host = argv[i++];
	client_mode = !strcmp(e.role, "client");
	for (; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--port"))
			port = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--break"))
			e.breaks = argv[i + 1];
		else
			return usage();
	}
	if (i != argc || !break_known(client_mode, e.breaks))
		return usage();
	if (open_end(&e) || to_init(&e))
		goto out;
	me.qpn = e.qp->qp_num;
	me.psn = client_mode ? CLIENT_PSN : SERVER_PSN;
	me.rkey = e.mr->rkey;
	me.addr = (uintptr_t)e.buf;
	me.gid = e.gid;
	/* A SEND needs a receive posted at the peer before it arrives: the
	 * server posts it before it tells the client it may start. */
	if (!client_mode && strcmp(e.breaks, "recv") && post_recv(&e))
		goto out;
	fd = client_mode ? tcp_client(e.role, host, port)
			 : tcp_server(e.role, host, port);
	/* one stream to read, one to write: a stream of both needs a seek
	 * between the two, which a socket cannot do */
	if (fd < 0 || !(e.in = fdopen(fd, "r")) ||
	    !(e.out = fdopen(dup(fd), "w")))
		goto out;
	if (client_mode && !strcmp(e.breaks, "psn"))
		me.psn += 5; /* we will start at CLIENT_PSN, not at this */
	if (exchange(&e, &me, &them) || to_rtr(&e, &them))
		goto out;
	me.psn = client_mode ? CLIENT_PSN : SERVER_PSN;
	if (!(client_mode && !strcmp(e.breaks, "rtr")) && to_rts(&e, me.psn))
		goto out;
	/* The client must not send before the server's QP is in RTR: a
	 * packet that finds it still in INIT is dropped, and comes again only
	 * after the retransmission timeout. One more line says "ready". */
	if (sync_ready(&e))
		goto out;
	printf("%s: QP 0x%06x %s\n", e.role, e.qp->qp_num,
	       client_mode && !strcmp(e.breaks, "rtr") ? "left in RTR" : "ready");
	rc = client_mode ? client(&e, &them) : server(&e);
out:
	close_end(&e);
	return rc ? 1 : 0;
}
