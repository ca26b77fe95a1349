/* SPDX-License-Identifier: MIT */
/* The UDP wire: two worlds on real sockets at 127.0.0.2 and 127.0.0.3, RC, UC and UD, foreign datagrams. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_suites.h"
#include "rocemu/device.h"
#include "rocemu/ibcm.h"
#include "rocemu/proto.h"
#include "wire/share.h"

struct host {
	struct rocemu_world *w;
	struct rocemu_endpoint ep;
	/* shorthands for ep's members */
	struct rocemu_dev *dev;
	struct rocemu_pd *pd;
	struct rocemu_cq *cq;
	struct rocemu_qp *qp;
	struct rocemu_mr *mr;
	uint8_t *buf;
	uint8_t gid[16];
};

/* UDP offload for the hosts made next (rocemu_world_set_offload). */
static bool offload = true;

static int host_up(struct host *h, uint8_t octet, enum ibv_qp_type t)
{
	struct rocemu_dev_cfg cfg = { .name = "udp", .mtu = IBV_MTU_1024,
				      .gid = { [10] = 0xff, [11] = 0xff,
					       [12] = 127, [15] = octet } };

	memcpy(h->gid, cfg.gid, 16);
	h->w = rocemu_world_new_udp();
	rocemu_world_set_offload(h->w, offload);
	int rc = rocemu_endpoint_new(h->w, &cfg, t, 65536, 64, &h->ep);
	if (rc)
		return rc;
	h->dev = h->ep.dev;
	h->pd = h->ep.pd;
	h->cq = h->ep.cq;
	h->qp = h->ep.qp;
	h->mr = h->ep.mr;
	h->buf = h->ep.buf;
	return 0;
}

/*
 * host_up for a test that needs the host: a failure ends the test saying
 * which address and port and what to do, not as the bare errno (-98) a
 * failed comparison would print.
 */
static void host_must_up(struct host *h, uint8_t octet, enum ibv_qp_type t)
{
	int rc = host_up(h, octet, t);

	if (rc)
		ck_abort_msg("cannot bind 127.0.0.%u UDP port 4791: %s%s",
			     octet, strerror(-rc),
			     rc == -EADDRINUSE
				 ? " (another rocemu, a test running at "
				   "the same time or an rxe device binds "
				   "it: stop it or let it finish, then run "
				   "again)"
				 : "");
}

static void host_down(struct host *h)
{
	h->ep.qp = h->qp; /* a test may have replaced it */
	rocemu_endpoint_free(&h->ep);
	rocemu_world_free(h->w);
}

/* Connects qp to peer_qp of the device at peer_gid. */
static void connect_rc_at(struct rocemu_qp *qp, struct rocemu_qp *peer_qp,
			  const uint8_t peer_gid[16])
{
	struct rocemu_rc_params p = {
		.peer_qpn = rocemu_qp_num(peer_qp), .sq_psn = 5, .rq_psn = 5,
		.mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.timeout = 12, .retry_cnt = 7, .rnr_retry = 7,
		.min_rnr_timer = 1, .max_rd_atomic = 4,
	};

	memcpy(p.peer_gid, peer_gid, 16);
	ck_assert_int_eq(rocemu_qp_connect(qp, &p), 0);
}

static void connect_rc(struct host *h, const struct host *peer)
{
	connect_rc_at(h->qp, peer->qp, peer->gid);
}

/* Drives both worlds until h's CQ holds a completion (2 s at most). */
static struct ibv_wc wait_cqe(struct host *h, struct host *other)
{
	struct ibv_wc wc;

	for (int i = 0; i < 2000; i++) {
		if (rocemu_cq_poll(h->cq, 1, &wc) == 1)
			return wc;
		rocemu_world_wait(h->w, 500000);
		rocemu_world_wait(other->w, 500000);
	}
	ck_abort_msg("no completion within 2 s");
	return wc;
}

static void post1(struct host *h, enum ibv_wr_opcode op, uint64_t id,
		  uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)h->buf, len,
			       rocemu_mr_lkey(h->mr) };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	ck_assert_int_eq(rocemu_post_send(h->qp, &wr, &bad), 0);
}

static void recv1(struct host *h, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)(h->buf + off), len,
			       rocemu_mr_lkey(h->mr) };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	ck_assert_int_eq(rocemu_post_recv(h->qp, &wr, &bad), 0);
}

START_TEST(test_rc_over_udp)
{
	struct host *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	host_must_up(a, 2, IBV_QPT_RC);
	host_must_up(b, 3, IBV_QPT_RC);
	connect_rc(a, b);
	connect_rc(b, a);
	for (int i = 0; i < 5000; i++)
		a->buf[i] = (uint8_t)(i * 13);
	recv1(b, 1, 30000, 8192);
	post1(a, IBV_WR_SEND, 1, 5000, 0, 0);
	ck_assert_int_eq(wait_cqe(a, b).status, IBV_WC_SUCCESS);
	struct ibv_wc r = wait_cqe(b, a);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(r.byte_len, 5000);
	ck_assert(!memcmp(b->buf + 30000, a->buf, 5000));
	/* READ and an atomic come back across the sockets too */
	post1(a, IBV_WR_RDMA_READ, 2, 3000,
	      (uint64_t)(uintptr_t)(b->buf + 30000), rocemu_mr_rkey(b->mr));
	ck_assert_int_eq(wait_cqe(a, b).status, IBV_WC_SUCCESS);
	post1(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 3, 8,
	      (uint64_t)(uintptr_t)(b->buf + 40000), rocemu_mr_rkey(b->mr));
	ck_assert_int_eq(wait_cqe(a, b).status, IBV_WC_SUCCESS);
	uint64_t v;
	memcpy(&v, b->buf + 40000, 8);
	ck_assert_uint_eq(v, 5);
	ck_assert_uint_eq(rocemu_dev_counter(b->dev, ROCEMU_CNT_RX_DROP_ICRC), 0);
	host_down(a);
	host_down(b);
	free(a);
	free(b);
}
END_TEST

/*
 * A 60000-byte WRITE and a READ of it back, MTU 1024: with offload on
 * (_i 1) the requests and the READ responses cross in GSO batches, cut
 * up again where they arrive, every byte and ICRC intact; off, each
 * packet is its own datagram.
 */
START_TEST(test_offload_batches)
{
	struct host *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct rocemu_wire_stats sa, sb;
	enum { LEN = 60000 };

	offload = _i;
	host_must_up(a, 2, IBV_QPT_RC);
	host_must_up(b, 3, IBV_QPT_RC);
	offload = true;
	connect_rc(a, b);
	connect_rc(b, a);
	for (int i = 0; i < LEN; i++)
		a->buf[i] = (uint8_t)(i * 7 + i / 251);
	post1(a, IBV_WR_RDMA_WRITE, 1, LEN, (uint64_t)(uintptr_t)b->buf,
	      rocemu_mr_rkey(b->mr));
	ck_assert_int_eq(wait_cqe(a, b).status, IBV_WC_SUCCESS);
	ck_assert(!memcmp(b->buf, a->buf, LEN));
	memset(a->buf, 0, LEN);
	post1(a, IBV_WR_RDMA_READ, 2, LEN, (uint64_t)(uintptr_t)b->buf,
	      rocemu_mr_rkey(b->mr));
	ck_assert_int_eq(wait_cqe(a, b).status, IBV_WC_SUCCESS);
	ck_assert(!memcmp(a->buf, b->buf, LEN));
	rocemu_world_wire_stats(a->w, &sa);
	rocemu_world_wire_stats(b->w, &sb);
	ck_assert_uint_eq(sa.dropped + sb.dropped, 0);
	ck_assert_uint_eq(rocemu_dev_counter(a->dev, ROCEMU_CNT_RX_DROP_ICRC) +
			  rocemu_dev_counter(b->dev, ROCEMU_CNT_RX_DROP_ICRC), 0);
	ck_assert_uint_eq(rocemu_dev_counter(a->dev, ROCEMU_CNT_RETRANSMITS), 0);
	if (_i) {
		ck_assert_uint_gt(sa.gso_sends, 0);	/* the WRITE */
		ck_assert_uint_gt(sb.gro_batches, 0);
		ck_assert_uint_gt(sb.gso_sends, 0);	/* the READ responses */
		ck_assert_uint_gt(sa.gro_batches, 0);
	} else {
		ck_assert_uint_eq(sa.gso_sends + sb.gso_sends, 0);
		ck_assert_uint_eq(sa.gro_batches + sb.gro_batches, 0);
	}
	host_down(a);
	host_down(b);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_ud_over_udp)
{
	struct host *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qkey = 0x1234 };
	int m = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;

	host_must_up(a, 2, IBV_QPT_UD);
	host_must_up(b, 3, IBV_QPT_UD);
	for (int i = 0; i < 2; i++) {
		struct rocemu_qp *qp = i ? b->qp : a->qp;
		at.qp_state = IBV_QPS_INIT;
		ck_assert_int_eq(rocemu_qp_modify(qp, &at, m), 0);
		at.qp_state = IBV_QPS_RTR;
		ck_assert_int_eq(rocemu_qp_modify(qp, &at, IBV_QP_STATE), 0);
		at.qp_state = IBV_QPS_RTS;
		ck_assert_int_eq(rocemu_qp_modify(qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	}
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	memcpy(aa.grh.dgid.raw, b->gid, 16);
	struct rocemu_ah *ah = rocemu_ah_new(a->pd, &aa);
	recv1(b, 7, 0, 40 + 512);
	memcpy(a->buf, "datagram", 8);
	struct ibv_sge sge = { (uint64_t)(uintptr_t)a->buf, 512, rocemu_mr_lkey(a->mr) };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.wr.ud.ah = (struct ibv_ah *)(void *)ah;
	wr.wr.ud.remote_qpn = rocemu_qp_num(b->qp);
	wr.wr.ud.remote_qkey = 0x1234;
	ck_assert_int_eq(rocemu_post_send(a->qp, &wr, &bad), 0);
	struct ibv_wc r = wait_cqe(b, a);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(r.byte_len, 40 + 512);
	ck_assert_uint_eq(r.src_qp, rocemu_qp_num(a->qp));
	ck_assert(!memcmp(b->buf + 40, "datagram", 8));
	ck_assert(!memcmp(b->buf + 20 + 12, a->gid + 12, 4)); /* GRH source */
	rocemu_ah_free(ah);
	host_down(a);
	host_down(b);
	free(a);
	free(b);
}
END_TEST

/*
 * GID 0 of a device at an IPv4 address is the link-local address of its
 * MAC, which no interface holds: what is sent to it still arrives (at the
 * device's address), from another device and from the device itself. The
 * GID table past GID 1 is empty, then ends.
 */
START_TEST(test_gid0_over_udp)
{
	struct host *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	uint8_t ga[16], gb[16], g[16];

	host_must_up(a, 2, IBV_QPT_RC);
	host_must_up(b, 3, IBV_QPT_RC);
	ck_assert_int_eq(rocemu_dev_gid_at(a->dev, 0, ga), 0);
	ck_assert_int_eq(rocemu_dev_gid_at(b->dev, 0, gb), 0);
	/* fe80::7fff:fe00:3: the MAC 02:00:7f:00:00:03 of 127.0.0.3 */
	static const uint8_t want_b[16] = { 0xfe, 0x80, [10] = 0x7f,
					    [11] = 0xff, [12] = 0xfe,
					    [15] = 3 };
	ck_assert_mem_eq(gb, want_b, 16);
	ck_assert_int_eq(rocemu_dev_gid_at(b->dev, 1, g), 0);
	ck_assert_mem_eq(g, b->gid, 16);
	memset(g, 0x5a, 16);
	ck_assert_int_eq(rocemu_dev_gid_at(b->dev, 2, g), -ENODATA);
	ck_assert_int_eq(rocemu_dev_gid_at(b->dev, ROCEMU_GID_TABLE_LEN - 1, g),
			 -ENODATA);
	ck_assert_int_eq(rocemu_dev_gid_at(b->dev, ROCEMU_GID_TABLE_LEN, g),
			 -EINVAL);
	ck_assert_uint_eq(g[0], 0x5a); /* untouched */

	/* a and b, each connected to the other's GID 0 */
	connect_rc_at(a->qp, b->qp, gb);
	connect_rc_at(b->qp, a->qp, ga);
	for (int i = 0; i < 3000; i++)
		a->buf[i] = (uint8_t)(i * 7);
	recv1(b, 1, 30000, 4096);
	post1(a, IBV_WR_SEND, 1, 3000, 0, 0);
	ck_assert_int_eq(wait_cqe(a, b).status, IBV_WC_SUCCESS);
	struct ibv_wc r = wait_cqe(b, a);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(r.byte_len, 3000);
	ck_assert(!memcmp(b->buf + 30000, a->buf, 3000));
	post1(a, IBV_WR_RDMA_READ, 2, 2000,
	      (uint64_t)(uintptr_t)(b->buf + 30000), rocemu_mr_rkey(b->mr));
	ck_assert_int_eq(wait_cqe(a, b).status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(rocemu_dev_counter(a->dev, ROCEMU_CNT_RX_DROP_BAD_STATE), 0);

	/* a to itself: a second QP on a, the two connected through GID 0 */
	struct ibv_cq *cq = (struct ibv_cq *)(void *)a->cq;
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq,
				       .qp_type = IBV_QPT_RC,
				       .cap = { 16, 16, 1, 1, 0 } };
	struct rocemu_qp *q2 = rocemu_qp_new(a->pd, &ia);
	struct rocemu_qp *q1 = rocemu_qp_new(a->pd, &ia);
	ck_assert_ptr_nonnull(q2);
	ck_assert_ptr_nonnull(q1);
	connect_rc_at(q1, q2, ga);
	connect_rc_at(q2, q1, ga);
	struct rocemu_qp *orig = a->qp;
	a->qp = q2;
	recv1(a, 3, 40000, 4096);
	a->qp = q1;
	post1(a, IBV_WR_SEND, 4, 1000, 0, 0);
	a->qp = orig;
	uint64_t seen = 0;
	for (int i = 0; i < 2; i++) {
		struct ibv_wc wc = wait_cqe(a, b);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		seen |= 1u << wc.wr_id;
	}
	ck_assert_uint_eq(seen, (1u << 3) | (1u << 4));
	ck_assert(!memcmp(a->buf + 40000, a->buf, 1000));
	ck_assert_int_eq(rocemu_qp_free(q1), 0);
	ck_assert_int_eq(rocemu_qp_free(q2), 0);
	host_down(a);
	host_down(b);
	free(a);
	free(b);
}
END_TEST

/* Random datagrams and frames with wrong keys thrown at a live device:
 * counted, no crash, no harm to a transfer beside them. */
START_TEST(test_foreign_datagrams)
{
	struct host *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	uint64_t rng = 3;
	uint8_t junk[600];

	host_must_up(a, 2, IBV_QPT_RC);
	host_must_up(b, 3, IBV_QPT_RC);
	connect_rc(a, b);
	connect_rc(b, a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(4791) };
	inet_pton(AF_INET, "127.0.0.3", &to.sin_addr);
	for (int k = 0; k < 200; k++) {
		size_t n = 1 + t_rand(&rng) % sizeof(junk);
		for (size_t i = 0; i < n; i++)
			junk[i] = (uint8_t)t_rand(&rng);
		if (k % 2)
			junk[0] = 0x04; /* an RC SEND_ONLY header on noise */
		sendto(fd, junk, n, 0, (struct sockaddr *)&to, sizeof(to));
		if (k == 100) {
			recv1(b, 1, 0, 4096);
			post1(a, IBV_WR_SEND, 1, 4000, 0, 0);
		}
		if (k % 25 == 24) /* within the socket's buffer */
			rocemu_world_wait(b->w, 1000000);
	}
	close(fd);
	ck_assert_int_eq(wait_cqe(a, b).status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wait_cqe(b, a).status, IBV_WC_SUCCESS);
	uint64_t dropped = 0;
	for (int c = ROCEMU_CNT_RX_DROP_MALFORMED; c <= ROCEMU_CNT_RX_DROP_SEQ; c++)
		dropped += rocemu_dev_counter(b->dev, (enum rocemu_counter)c);
	ck_assert_uint_eq(dropped, 200);
	host_down(a);
	host_down(b);
	free(a);
	free(b);
}
END_TEST

/* With progress threads the application only sleeps: a blocking poll on
 * the completion channel wakes when the CQE arrives. */
START_TEST(test_progress_thread)
{
	struct host *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct rocemu_cq *got;

	host_must_up(a, 2, IBV_QPT_RC);
	host_must_up(b, 3, IBV_QPT_RC);
	struct rocemu_channel *ch = rocemu_channel_new(b->dev);
	struct rocemu_cq *rcq = rocemu_cq_new(b->dev, 256, ch);
	rocemu_qp_free(b->qp);
	struct ibv_qp_init_attr init = {
		.send_cq = (struct ibv_cq *)(void *)b->cq,
		.recv_cq = (struct ibv_cq *)(void *)rcq, .qp_type = IBV_QPT_RC,
		.cap = { 64, 64, 1, 1, 0 } };
	b->qp = rocemu_qp_new(b->pd, &init);
	connect_rc(a, b);
	connect_rc(b, a);
	ck_assert_int_eq(rocemu_world_start(a->w), 0);
	ck_assert_int_eq(rocemu_world_start(b->w), 0);
	ck_assert_int_eq(rocemu_world_start(b->w), -EINVAL); /* already */

	ck_assert_int_eq(rocemu_cq_req_notify(rcq, false), 0);
	for (uint64_t k = 0; k < 50; k++)
		recv1(b, k, (uint32_t)(k * 256), 256);
	for (uint64_t k = 0; k < 50; k++)
		post1(a, IBV_WR_SEND, k, 100, 0, 0);
	struct pollfd pfd = { rocemu_channel_fd(ch), POLLIN, 0 };
	ck_assert_int_eq(poll(&pfd, 1, 5000), 1); /* woken, not polling */
	ck_assert_int_eq(rocemu_channel_get_event(ch, &got), 0);
	ck_assert_ptr_eq(got, rcq);
	struct ibv_wc wc[64];
	int recvd = 0, sent = 0;
	for (int i = 0; i < 5000 && (recvd < 50 || sent < 50); i++) {
		recvd += rocemu_cq_poll(rcq, 64, wc);
		sent += rocemu_cq_poll(a->cq, 64, wc);
		usleep(1000);
	}
	ck_assert_int_eq(recvd, 50);
	ck_assert_int_eq(sent, 50);
	rocemu_world_stop(a->w);
	rocemu_world_stop(b->w);
	rocemu_qp_free(b->qp);
	b->qp = NULL;
	ck_assert_int_eq(rocemu_cq_free(rcq), 0);
	ck_assert_int_eq(rocemu_channel_free(ch), 0);
	init.recv_cq = (struct ibv_cq *)(void *)b->cq;
	b->qp = rocemu_qp_new(b->pd, &init);
	host_down(a);
	host_down(b);
	free(a);
	free(b);
}
END_TEST

/* Counts completions on h's CQ with wr_ids in order from *next. */
static int take_in_order(struct host *h, uint64_t *next)
{
	struct ibv_wc wc[16];
	int n = rocemu_cq_poll(h->cq, 16, wc);

	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(wc[i].status, IBV_WC_SUCCESS);
		ck_assert_int_eq(wc[i].wr_id, (*next)++);
	}
	return n;
}

/* A busy-polling caller drives the wire itself while the progress threads
 * run; once it stops spinning, the threads take over again. */
START_TEST(test_busy_poll)
{
	struct host *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	uint64_t sent = 0, recvd = 0;
	unsigned long by_caller = 0;

	host_must_up(a, 2, IBV_QPT_RC);
	host_must_up(b, 3, IBV_QPT_RC);
	connect_rc(a, b);
	connect_rc(b, a);
	ck_assert_int_eq(rocemu_world_start(a->w), 0);
	ck_assert_int_eq(rocemu_world_start(b->w), 0);
	for (uint64_t k = 0; k < 200; k++) {
		recv1(b, k, (uint32_t)(k % 64) * 64, 64);
		post1(a, IBV_WR_SEND, k, 64, 0, 0);
		for (long spin = 0; sent <= k || recvd <= k; spin++) {
			ck_assert_int_lt(spin, 50000000);
			by_caller += rocemu_world_poll(a->w) + rocemu_world_poll(b->w);
			take_in_order(a, &sent);
			take_in_order(b, &recvd);
		}
	}
	ck_assert_uint_gt(by_caller, 0);
	/* Nobody spins now: the threads must deliver on their own. */
	recv1(b, 200, 0, 64);
	post1(a, IBV_WR_SEND, 200, 64, 0, 0);
	for (int i = 0; i < 5000 && (sent < 201 || recvd < 201); i++) {
		take_in_order(a, &sent);
		take_in_order(b, &recvd);
		usleep(1000);
	}
	ck_assert_int_eq(sent, 201);
	ck_assert_int_eq(recvd, 201);
	rocemu_world_stop(a->w);
	rocemu_world_stop(b->w);
	host_down(a);
	host_down(b);
	free(a);
	free(b);
}
END_TEST

/* Sends the UDP payload of a frame built from 127.0.0.9:port to b. */
static void send_built(int fd, uint16_t port, struct roce_frame *f,
		       size_t cut)
{
	uint8_t buf[512];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(4791) };
	uint8_t me[4] = { 127, 0, 0, 9 }, b4[4] = { 127, 0, 0, 3 };

	roce_gid_from_ipv4(f->src_gid, me);
	roce_gid_from_ipv4(f->dst_gid, b4);
	f->sport = port;
	int n = roce_frame_build(f, buf, sizeof(buf));
	ck_assert_int_gt(n, 42);
	inet_pton(AF_INET, "127.0.0.3", &to.sin_addr);
	sendto(fd, buf + 42, (size_t)n - 42 - cut, 0, (struct sockaddr *)&to,
	       sizeof(to));
}

/* Well-formed frames that do not belong: each counted by its reason. */
START_TEST(test_wrong_keys_over_udp)
{
	struct host *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct roce_frame f;
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(50001) };

	host_must_up(a, 2, IBV_QPT_RC);
	host_must_up(b, 3, IBV_QPT_UD);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qkey = 7 };
	rocemu_qp_modify(b->qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					    IBV_QP_PORT | IBV_QP_QKEY);
	at.qp_state = IBV_QPS_RTR;
	rocemu_qp_modify(b->qp, &at, IBV_QP_STATE);
	recv1(b, 1, 0, 512);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	inet_pton(AF_INET, "127.0.0.9", &me.sin_addr);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);

	roce_frame_init(&f, 4);
	f.ib.bth.opcode = 0x64;
	f.ib.deth.qkey = 8; /* not b's */
	f.ib.bth.dqpn = rocemu_qp_num(b->qp);
	send_built(fd, 50001, &f, 0);
	f.ib.deth.qkey = 7;
	f.ib.bth.dqpn = 0x4242; /* no such QP */
	send_built(fd, 50001, &f, 0);
	f.ib.bth.dqpn = rocemu_qp_num(b->qp);
	f.ib.bth.pkey = 0x0001; /* not a P_Key of the port */
	send_built(fd, 50001, &f, 0);
	f.ib.bth.pkey = 0xffff;
	send_built(fd, 50001, &f, 2); /* cut short */
	f.ib.bth.opcode = 0x04; /* RC opcode to a UD QP */
	send_built(fd, 50001, &f, 0);
	f.ib.bth.opcode = 0x64;
	send_built(fd, 50001, &f, 0); /* at last, a good one */
	close(fd);
	struct ibv_wc r = wait_cqe(b, a);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(rocemu_dev_counter(b->dev, ROCEMU_CNT_RX_DROP_QKEY), 1);
	ck_assert_uint_eq(rocemu_dev_counter(b->dev, ROCEMU_CNT_RX_DROP_UNKNOWN_QP), 1);
	ck_assert_uint_eq(rocemu_dev_counter(b->dev, ROCEMU_CNT_RX_DROP_PKEY), 1);
	ck_assert_uint_eq(rocemu_dev_counter(b->dev, ROCEMU_CNT_RX_DROP_MALFORMED) +
			  rocemu_dev_counter(b->dev, ROCEMU_CNT_RX_DROP_ICRC), 1);
	ck_assert_uint_eq(rocemu_dev_counter(b->dev, ROCEMU_CNT_RX_DROP_BAD_STATE), 1);
	host_down(a);
	host_down(b);
	free(a);
	free(b);
}
END_TEST

/* Drives b until its ICRC drops and packets taken since rx0 account for
 * sent datagrams (2 s at most). */
static void drain_to(struct host *b, uint64_t icrc0, uint64_t rx0,
		     uint64_t sent)
{
	for (int i = 0; i < 2000; i++) {
		uint64_t n = rocemu_dev_counter(b->dev, ROCEMU_CNT_RX_DROP_ICRC) -
			     icrc0 +
			     rocemu_dev_counter(b->dev, ROCEMU_CNT_RX_PACKETS) -
			     rx0;
		if (n >= sent)
			return;
		rocemu_world_wait(b->w, 1000000);
	}
	ck_abort_msg("datagrams sent to the device went unaccounted");
}

/* 10^5 RDMA WRITEs with random ICRCs from a connected peer's address, at
 * the PSN its QP expects: every one dropped as a bad ICRC, nothing
 * written (the receiver used to take those whose ICRC some IPv4 ID
 * explained: about 3 in 10^5). */
START_TEST(test_random_icrc_writes_dropped)
{
	struct host *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct sockaddr_in me = { .sin_family = AF_INET };
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(4791) };
	uint8_t pay[64], frame[512], before[64];
	enum { N = 100000, SYNC = 64 };
	uint64_t rng = 11;
	struct roce_frame f;

	host_must_up(a, 2, IBV_QPT_RC);
	host_must_up(b, 3, IBV_QPT_RC);
	connect_rc(a, b);
	connect_rc(b, a);
	/* a WRITE that arrives: the flow from .2 is known, PSN 6 next */
	post1(a, IBV_WR_RDMA_WRITE, 1, 64, (uint64_t)(uintptr_t)b->buf,
	      rocemu_mr_rkey(b->mr));
	ck_assert_int_eq(wait_cqe(a, b).status, IBV_WC_SUCCESS);
	memcpy(before, b->buf + 4096, sizeof(before));
	memset(pay, 0xee, sizeof(pay));
	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, (const uint8_t[4]){ 127, 0, 0, 2 });
	roce_gid_from_ipv4(f.dst_gid, (const uint8_t[4]){ 127, 0, 0, 3 });
	f.ip_frag = ROCE_IPV4_DF;
	f.ib.bth.opcode = 0x0a; /* RC RDMA WRITE Only */
	f.ib.bth.dqpn = rocemu_qp_num(b->qp);
	f.ib.bth.psn = 6;
	f.ib.reth.va = (uint64_t)(uintptr_t)(b->buf + 4096);
	f.ib.reth.rkey = rocemu_mr_rkey(b->mr);
	f.ib.reth.len = sizeof(pay);
	f.ib.payload = pay;
	f.ib.payload_len = sizeof(pay);
	int n = roce_frame_build(&f, frame, sizeof(frame));
	ck_assert_int_gt(n, 42 + 4);
	size_t len = (size_t)n - 42;
	uint8_t *d = frame + 42, *icrc = d + len - 4;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	inet_pton(AF_INET, "127.0.0.2", &me.sin_addr);
	inet_pton(AF_INET, "127.0.0.3", &to.sin_addr);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	uint64_t icrc0 = rocemu_dev_counter(b->dev, ROCEMU_CNT_RX_DROP_ICRC);
	uint64_t rx0 = rocemu_dev_counter(b->dev, ROCEMU_CNT_RX_PACKETS);
	uint32_t good = (uint32_t)icrc[0] << 24 | (uint32_t)icrc[1] << 16 |
			(uint32_t)icrc[2] << 8 | icrc[3];
	for (uint64_t k = 1; k <= N; k++) {
		uint32_t v;
		do
			v = (uint32_t)t_rand(&rng);
		while (v == good);
		for (int i = 0; i < 4; i++)
			icrc[i] = (uint8_t)(v >> (24 - 8 * i));
		ck_assert_int_eq(sendto(fd, d, len, 0, (struct sockaddr *)&to,
					sizeof(to)), (ssize_t)len);
		if (k % SYNC == 0 || k == N) /* within the socket's buffer */
			drain_to(b, icrc0, rx0, k);
	}
	close(fd);
	uint64_t dropped =
	    rocemu_dev_counter(b->dev, ROCEMU_CNT_RX_DROP_ICRC) - icrc0;
	ck_assert_msg(dropped == N, "%llu of %d taken",
		      (unsigned long long)(N - dropped), N);
	ck_assert(!memcmp(b->buf + 4096, before, sizeof(before)));
	host_down(a);
	host_down(b);
	free(a);
	free(b);
}
END_TEST

/* Two devices on one address (here two worlds of one process, as two
 * processes would be): each its slot, its QPNs in the slot's range, and
 * traffic between them both ways (docs/sharing.md). */
START_TEST(test_address_shared)
{
	struct host *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	host_must_up(a, 4, IBV_QPT_RC);
	host_must_up(b, 4, IBV_QPT_RC);
	uint32_t qa = rocemu_qp_num(a->qp), qb = rocemu_qp_num(b->qp);
	ck_assert_msg(qa >> 16 == 0 && qb >> 16 == 1,
		      "QPNs 0x%x and 0x%x: slots 0 and 1", qa, qb);
	connect_rc(a, b);
	connect_rc(b, a);
	memset(a->buf, 0x5a, 3000);
	recv1(b, 1, 0, 4096);
	post1(a, IBV_WR_SEND, 2, 3000, 0, 0);
	ck_assert_int_eq(wait_cqe(a, b).status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wait_cqe(b, a).status, IBV_WC_SUCCESS);
	ck_assert(!memcmp(a->buf, b->buf, 3000));
	memset(b->buf, 0xa5, 100);
	recv1(a, 3, 8192, 4096);
	post1(b, IBV_WR_SEND, 4, 100, 0, 0);
	ck_assert_int_eq(wait_cqe(b, a).status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wait_cqe(a, b).status, IBV_WC_SUCCESS);
	ck_assert(!memcmp(a->buf + 8192, b->buf, 100));
	host_down(a);
	host_down(b);
	free(a);
	free(b);
}
END_TEST

/* A socket on the address that does not share it (another user's, or a
 * program's without SO_REUSEPORT) still keeps the device out. */
START_TEST(test_address_taken)
{
	struct host *b = calloc(1, sizeof(*b));
	struct sockaddr_in at = { .sin_family = AF_INET,
				  .sin_port = htons(4791) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	inet_pton(AF_INET, "127.0.0.4", &at.sin_addr);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&at, sizeof(at)), 0);
	ck_assert_int_eq(host_up(b, 4, IBV_QPT_RC), -EADDRINUSE);
	rocemu_world_free(b->w);
	close(fd);
	free(b);
}
END_TEST

static void no_events(void *user, const struct rocemu_cm_event *ev)
{
	(void)user;
	(void)ev;
}

/* A listener claims its service among the devices on its address: a
 * second one elsewhere is EADDRINUSE until the first goes, as Linux's
 * one port space makes it. */
START_TEST(test_listen_claimed)
{
	struct host *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	const uint64_t svc = 0x0106000000004e21ull;

	host_must_up(a, 4, IBV_QPT_RC);
	host_must_up(b, 4, IBV_QPT_RC);
	struct rocemu_cm_id *la = rocemu_cm_id_new(a->dev, no_events, NULL);
	struct rocemu_cm_id *lb = rocemu_cm_id_new(b->dev, no_events, NULL);
	ck_assert_ptr_nonnull(la);
	ck_assert_ptr_nonnull(lb);
	ck_assert_int_eq(rocemu_cm_listen(la, svc, ~0ull), 0);
	ck_assert_int_eq(rocemu_cm_listen(lb, svc, ~0ull), -EADDRINUSE);
	ck_assert_int_eq(rocemu_cm_listen(lb, svc + 1, ~0ull), 0);
	ck_assert_int_eq(rocemu_cm_id_free(la), 0);
	struct rocemu_cm_id *lb2 = rocemu_cm_id_new(b->dev, no_events, NULL);
	ck_assert_int_eq(rocemu_cm_listen(lb2, svc, ~0ull), 0);
	ck_assert_int_eq(rocemu_cm_id_free(lb), 0);
	ck_assert_int_eq(rocemu_cm_id_free(lb2), 0);
	host_down(a);
	host_down(b);
	free(a);
	free(b);
}
END_TEST

/* With the progress thread polling the claim's socket, a listener freed
 * and made again at once on the service gets it (a socket being polled
 * outlives its close(), and its name with it: the second listen was
 * EADDRINUSE while the thread slept in poll). */
START_TEST(test_listen_again_polled)
{
	struct host *a = calloc(1, sizeof(*a));
	const uint64_t svc = 0x0106000000004e22ull;

	host_must_up(a, 4, IBV_QPT_RC);
	ck_assert_int_eq(rocemu_world_start(a->w), 0);
	for (int i = 0; i < 5; i++) {
		struct rocemu_cm_id *l = rocemu_cm_id_new(a->dev, no_events, NULL);
		/* longer than the thread's poll period: it polls the claim */
		struct timespec nap = { 0, 150000000 };

		ck_assert_ptr_nonnull(l);
		ck_assert_msg(rocemu_cm_listen(l, svc, ~0ull) == 0,
			      "listen %d on the service after a free", i);
		nanosleep(&nap, NULL);
		ck_assert_int_eq(rocemu_cm_id_free(l), 0);
	}
	rocemu_world_stop(a->w);
	host_down(a);
	free(a);
}
END_TEST

/* A UDP payload: a BTH to qpn, a DETH, and mad (if any) after them. */
static size_t route_payload(uint8_t *p, uint32_t qpn, const struct roce_cm_msg *m)
{
	memset(p, 0, ROCE_BTH_LEN + ROCE_DETH_LEN + ROCE_MAD_LEN + 4);
	p[5] = (uint8_t)(qpn >> 16);
	p[6] = (uint8_t)(qpn >> 8);
	p[7] = (uint8_t)qpn;
	if (!m)
		return ROCE_BTH_LEN + 16;
	ck_assert_int_eq(roce_cm_encode(m, p + ROCE_BTH_LEN + ROCE_DETH_LEN),
			 ROCE_MAD_LEN);
	return ROCE_BTH_LEN + ROCE_DETH_LEN + ROCE_MAD_LEN + 4;
}

/* Who owns what arrives at slot 2 (docs/sharing.md): QPNs by their top
 * byte unless in the port's own range; on QP1 a REQ by its service (here
 * if this process claims it), replies by the receiver's comm ID's top
 * byte, comm ID 0 and short or unreadable payloads here. */
START_TEST(test_share_routes)
{
	struct share s = { .inbox = -1, .slot = 2 };
	struct share_claim mine = { .svc = 0x77 };
	uint8_t p[ROCE_BTH_LEN + ROCE_DETH_LEN + ROCE_MAD_LEN + 4];
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_REQ };
	struct share_route r;
	size_t n;

	n = route_payload(p, 0x050011, NULL);
	r = share_route_of(&s, p, n, 0x20000, 0x2ffff);
	ck_assert(!r.here && !r.to_svc && r.slot == 5);
	r = share_route_of(&s, p, n, 0x11, 0xffffff); /* its own range */
	ck_assert(r.here);
	n = route_payload(p, 0x020011, NULL);
	ck_assert(share_route_of(&s, p, n, 0x20000, 0x2ffff).here);
	ck_assert(share_route_of(&s, p, 11, 0, 0).here); /* no whole BTH */

	m.req.service_id = 0x66;
	n = route_payload(p, 1, &m);
	r = share_route_of(&s, p, n, 0x20000, 0x2ffff);
	ck_assert(!r.here && r.to_svc && r.svc == 0x66);
	s.claims = &mine;
	m.req.service_id = 0x77;
	n = route_payload(p, 1, &m);
	ck_assert(share_route_of(&s, p, n, 0x20000, 0x2ffff).here);
	s.claims = NULL;

	m = (struct roce_cm_msg){ .attr_id = ROCE_CM_ATTR_REP };
	m.rep.local_comm_id = 0x02000005; /* the sender's: not the route */
	m.rep.remote_comm_id = 0x07000009;
	n = route_payload(p, 1, &m);
	r = share_route_of(&s, p, n, 0x20000, 0x2ffff);
	ck_assert(!r.here && !r.to_svc && r.slot == 7);
	m = (struct roce_cm_msg){ .attr_id = ROCE_CM_ATTR_SIDR_REP };
	m.sidr_rep.request_id = 0x03000001;
	n = route_payload(p, 1, &m);
	r = share_route_of(&s, p, n, 0x20000, 0x2ffff);
	ck_assert(!r.here && r.slot == 3);
	m = (struct roce_cm_msg){ .attr_id = ROCE_CM_ATTR_DREQ };
	n = route_payload(p, 1, &m); /* remote comm ID 0 */
	ck_assert(share_route_of(&s, p, n, 0x20000, 0x2ffff).here);
	p[ROCE_BTH_LEN + ROCE_DETH_LEN + 1] = 0x55; /* not a CM MAD */
	ck_assert(share_route_of(&s, p, n, 0x20000, 0x2ffff).here);
}
END_TEST

Suite *udp_suite(void)
{
	Suite *s = suite_create("udp");
	TCase *tc = tcase_create("sockets");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_rc_over_udp);
	tcase_add_loop_test(tc, test_offload_batches, 0, 2);
	tcase_add_test(tc, test_ud_over_udp);
	tcase_add_test(tc, test_gid0_over_udp);
	tcase_add_test(tc, test_foreign_datagrams);
	tcase_add_test(tc, test_progress_thread);
	tcase_add_test(tc, test_busy_poll);
	tcase_add_test(tc, test_wrong_keys_over_udp);
	tcase_add_test(tc, test_random_icrc_writes_dropped);
	tcase_add_test(tc, test_address_shared);
	tcase_add_test(tc, test_address_taken);
	tcase_add_test(tc, test_listen_claimed);
	tcase_add_test(tc, test_listen_again_polled);
	tcase_add_test(tc, test_share_routes);
	suite_add_tcase(s, tc);
	return s;
}
