/* SPDX-License-Identifier: MIT */
/* Large RDMA READs: responses paced in bursts, restarted (not copied) on a retry, each packet's MR checked again, in PSN order with the ACKs and NAKs owed meanwhile. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check_pair.h"
#include "check_suites.h"

enum {
	KIB = 1024,
	MIB = 1024 * 1024,
	/* What rocemu promises on the deterministic wire: a responder puts
	 * at most 16 READ response packets per QP on it per latency. */
	BURST = 16,
	LATENCY_NS = 1000, /* the wire's default */
};

static uint64_t cnt(const struct side *s, enum rocemu_counter c)
{
	return rocemu_dev_counter(s->dev, c);
}

static void pattern(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 12));
}

static int post_read(struct pair *p, uint64_t wr_id, size_t off, uint32_t len,
		     uint64_t raddr, uint32_t rkey)
{
	return post_send1(&p->a, IBV_WR_RDMA_READ, wr_id, off, len, raddr, rkey,
			  0);
}

/* An 8 MiB READ on a clean wire: after every step of a quarter latency,
 * the responses in flight (sent by b, not yet taken in by a) are at most
 * one burst, and the READ completes with the data. */
START_TEST(test_read_responses_in_bursts)
{
	struct pair p;
	struct pair_opts o = { .len = 8 * MIB };
	struct ibv_wc wc;
	uint64_t most = 0;

	pair_up(&p, &o);
	pattern(p.b.buf, p.b.len, 3);
	ck_assert_int_eq(post_read(&p, 1, 0, 8 * MIB, addr_of(&p.b, 0),
				   rocemu_mr_rkey(p.b.mr)),
			 0);
	for (int step = 0; rocemu_cq_poll(p.a.cq, 1, &wc) == 0; step++) {
		ck_assert_int_lt(step, 1000000);
		rocemu_world_advance(p.w, LATENCY_NS / 4);
		/* b sends only READ responses, a takes in only those */
		uint64_t in_flight = cnt(&p.b, ROCEMU_CNT_TX_PACKETS) -
				     cnt(&p.a, ROCEMU_CNT_RX_PACKETS);
		ck_assert_uint_le(in_flight, BURST);
		if (in_flight > most)
			most = in_flight;
	}
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_gt(most, 0);
	ck_assert(!memcmp(p.a.buf, p.b.buf, 8 * MIB));
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_TX_PACKETS), 8 * MIB / KIB);
	pair_down(&p);
}
END_TEST

/*
 * A 16 MiB READ over a wire that loses 2% of the frames completes with
 * the right data. Each loss costs what was on the wire when the
 * requester asked again, not the rest of the READ a second time: the
 * responder sends well under 4 times the packets the READ takes.
 */
START_TEST(test_large_read_through_loss)
{
	struct pair p;
	struct pair_opts o = { .seed = 40 + (uint64_t)_i, .len = 16 * MIB,
			       .mtu = IBV_MTU_4096 };
	struct rocemu_faults lossy = { .drop = 0.02 };
	const uint64_t packets = 16 * MIB / (4 * KIB);

	pair_up(&p, &o);
	rocemu_world_set_faults(p.w, &lossy);
	pattern(p.b.buf, p.b.len, (unsigned)_i);
	ck_assert_int_eq(post_read(&p, 7, 0, 16 * MIB, addr_of(&p.b, 0),
				   rocemu_mr_rkey(p.b.mr)),
			 0);
	struct ibv_wc wc = poll1(&p, &p.a);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 7);
	ck_assert(!memcmp(p.a.buf, p.b.buf, 16 * MIB));
	ck_assert_uint_gt(cnt(&p.a, ROCEMU_CNT_RETRANSMITS), 0);
	ck_assert_uint_lt(cnt(&p.b, ROCEMU_CNT_TX_PACKETS), 4 * packets);
	ck_assert(guards_intact(&p.a));
	pair_down(&p);
}
END_TEST

/* A READ request from a's address to b's QP, as a peer would send it. */
static void inject_read(struct pair *p, uint32_t psn, uint64_t va,
			uint32_t rkey, uint32_t len)
{
	struct roce_frame f;
	uint8_t buf[256], a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, a4);
	roce_gid_from_ipv4(f.dst_gid, b4);
	f.sport = 0xc000;
	f.ib.bth.opcode = 0x0c; /* RC_RDMA_READ_REQUEST */
	f.ib.bth.dqpn = rocemu_qp_num(p->b.qp);
	f.ib.bth.psn = psn;
	f.ib.bth.ackreq = true;
	f.ib.reth.va = va;
	f.ib.reth.rkey = rkey;
	f.ib.reth.len = len;
	int n = roce_frame_build(&f, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	rocemu_world_inject(p->w, buf, (size_t)n);
}

/*
 * The same READ asked for again three times from its 5th packet while b
 * is still answering it (a requester's retries, queued up): the response
 * starts again from there once, and is not sent three times more.
 */
START_TEST(test_repeated_read_restarts_once)
{
	struct pair p;
	struct pair_opts o = { 0 };

	pair_up(&p, &o);
	uint64_t va = addr_of(&p.b, 0);
	inject_read(&p, 0, va, rocemu_mr_rkey(p.b.mr), 64 * KIB);
	rocemu_world_advance(p.w, LATENCY_NS); /* it arrives: a first burst */
	uint64_t before = cnt(&p.b, ROCEMU_CNT_TX_PACKETS);
	for (int k = 0; k < 3; k++)
		inject_read(&p, 4, va + 4 * KIB, rocemu_mr_rkey(p.b.mr),
			    60 * KIB);
	rocemu_world_settle(p.w, 1000000000);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_DUP_REQUESTS), 3);
	/* packets 4..63 once more, after those sent before the retries */
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_TX_PACKETS), before + 60);
	ck_assert_uint_gt(before, 4); /* the retries asked for sent ones */
	pair_down(&p);
}
END_TEST

/*
 * The MR a READ reads is deregistered, and its memory unmapped, while
 * the response is under way: the rest of the response is a NAK remote
 * access error, the requester's READ fails with REM_ACCESS_ERR, the
 * responder's QP goes to ERROR, and no byte is read from the memory
 * after the deregistration (reading it would fault).
 */
START_TEST(test_dereg_during_read_response)
{
	struct pair p;
	struct pair_opts o = { 0 };
	size_t len = 64 * KIB;
	uint8_t *mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_ne(mem, MAP_FAILED);
	pair_up(&p, &o);
	pattern(mem, len, 9);
	struct rocemu_mr *mr = rocemu_mr_reg(p.b.pd, mem, len,
					     IBV_ACCESS_REMOTE_READ);
	ck_assert_ptr_nonnull(mr);
	ck_assert_int_eq(post_read(&p, 5, 0, (uint32_t)len,
				   (uint64_t)(uintptr_t)mem,
				   rocemu_mr_rkey(mr)),
			 0);
	/* The request crosses the wire, a first burst comes back. */
	rocemu_world_advance(p.w, LATENCY_NS);
	uint64_t sent = cnt(&p.b, ROCEMU_CNT_TX_PACKETS);
	ck_assert_uint_gt(sent, 0);
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	ck_assert_int_eq(munmap(mem, len), 0);
	struct ibv_wc wc = poll1(&p, &p.a);
	ck_assert_uint_eq(wc.wr_id, 5);
	ck_assert_int_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_NAK_SENT_REM_ACCESS), 1);
	/* the packets sent before, and the NAK in place of the rest */
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_TX_PACKETS), sent + 1);
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	ck_assert_int_eq(rocemu_qp_query(p.b.qp, &attr, &init), 0);
	ck_assert_int_eq(attr.qp_state, IBV_QPS_ERR);
	/* what arrived before the deregistration is the data */
	uint8_t want[64 * KIB];
	pattern(want, len, 9);
	ck_assert(!memcmp(p.a.buf, want, sent * KIB));
	pair_down(&p);
}
END_TEST

/* The opcode names of the frames b sends, in order, from the trace. */
struct sent_by_b {
	char op[256][40];
	unsigned n;
};

static void note_b(void *arg, const char *line)
{
	struct sent_by_b *s = arg;
	const char *op = strstr(line, " RC_");

	if (strncmp(line, "devB > ", 7) || !op || s->n == 256)
		return;
	op++;
	size_t k = strcspn(op, " ");
	if (k >= sizeof(s->op[0]))
		k = sizeof(s->op[0]) - 1;
	memcpy(s->op[s->n], op, k);
	s->op[s->n++][k] = '\0';
}

/*
 * Responses go out in PSN order: a WRITE and a SEND
 * that follow a 32 KiB READ are acknowledged after the READ's last
 * response, not before it (the requester would take an ACK beyond the
 * READ for a lost response and ask for the READ again).
 */
START_TEST(test_ack_waits_for_read_responses)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct sent_by_b *s = calloc(1, sizeof(*s));

	pair_up(&p, &o);
	rocemu_world_trace(p.w, note_b, s);
	pattern(p.b.buf + 32 * KIB, 32 * KIB, 1);
	ck_assert_int_eq(post_recv1(&p.b, 9, 0, 100), 0);
	ck_assert_int_eq(post_read(&p, 1, 0, 32 * KIB, addr_of(&p.b, 32 * KIB),
				   rocemu_mr_rkey(p.b.mr)),
			 0);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_WRITE, 2, 40 * KIB, 100,
				    addr_of(&p.b, 100), rocemu_mr_rkey(p.b.mr),
				    0),
			 0);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_SEND, 3, 40 * KIB, 100, 0, 0,
				    0),
			 0);
	for (uint64_t k = 1; k <= 3; k++) {
		struct ibv_wc wc = poll1(&p, &p.a);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.wr_id, k);
	}
	ck_assert(!memcmp(p.a.buf, p.b.buf + 32 * KIB, 32 * KIB));
	ck_assert_uint_eq(cnt(&p.a, ROCEMU_CNT_RETRANSMITS), 0);
	/* 32 responses, then the one coalesced ACK */
	ck_assert_uint_eq(s->n, 33);
	ck_assert_str_eq(s->op[0], "RC_RDMA_READ_RESPONSE_FIRST");
	ck_assert_str_eq(s->op[31], "RC_RDMA_READ_RESPONSE_LAST");
	ck_assert_str_eq(s->op[32], "RC_ACK");
	rocemu_world_trace(p.w, NULL, NULL);
	pair_down(&p);
	free(s);
}
END_TEST

/*
 * A WRITE with a bad key after a 64 KiB READ: the READ's responses all go
 * out first and the READ completes; then the NAK remote access, which
 * fails the WRITE and moves the responder to ERROR. A SEND after it is
 * not taken.
 */
START_TEST(test_nak_waits_for_read_responses)
{
	struct pair p;
	struct pair_opts o = { 0 };

	pair_up(&p, &o);
	pattern(p.b.buf, 64 * KIB, 4);
	ck_assert_int_eq(post_recv1(&p.b, 9, 0, 100), 0);
	ck_assert_int_eq(post_read(&p, 1, 0, 64 * KIB, addr_of(&p.b, 0),
				   rocemu_mr_rkey(p.b.mr)),
			 0);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_WRITE, 2, 0, 100,
				    addr_of(&p.b, 0),
				    rocemu_mr_rkey(p.b.mr) ^ 0x100, 0),
			 0);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_SEND, 3, 0, 100, 0, 0, 0), 0);
	struct ibv_wc wc = poll1(&p, &p.a);
	ck_assert_uint_eq(wc.wr_id, 1);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	wc = poll1(&p, &p.a);
	ck_assert_uint_eq(wc.wr_id, 2);
	ck_assert_int_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	wc = poll1(&p, &p.a);
	ck_assert_uint_eq(wc.wr_id, 3);
	ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert(!memcmp(p.a.buf, p.b.buf, 64 * KIB));
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_NAK_SENT_REM_ACCESS), 1);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_TX_PACKETS), 64 + 1);
	/* the receive was never used: it is flushed with the QP */
	wc = poll1(&p, &p.b);
	ck_assert_uint_eq(wc.wr_id, 9);
	ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	pair_down(&p);
}
END_TEST

/*
 * A requester that keeps more READs in flight than the responder's
 * max_dest_rd_atomic (4 against 1): the responder must not lose the
 * response of one it has not answered yet when the next arrives; both
 * complete, with no retransmission.
 */
START_TEST(test_reads_beyond_max_dest_rd_atomic)
{
	struct pair p;
	struct pair_opts o = { .rd_atomic = 4 };
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	uint8_t ga[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 1 };

	pair_up(&p, &o);
	ck_assert_int_eq(rocemu_qp_modify(p.b.qp, &reset, IBV_QP_STATE), 0);
	o.rd_atomic = 1;
	ck_assert_int_eq(qp_connect(p.b.qp, rocemu_qp_num(p.a.qp), ga, 0, 0, &o),
			 0);
	pattern(p.b.buf, 16 * KIB, 3);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(post_read(&p, (uint64_t)i, (size_t)i * 8 * KIB,
					   8 * KIB, addr_of(&p.b, (size_t)i * 8 * KIB),
					   rocemu_mr_rkey(p.b.mr)), 0);
	for (int i = 0; i < 2; i++) {
		struct ibv_wc wc = poll1(&p, &p.a);
		ck_assert_uint_eq(wc.wr_id, (uint64_t)i);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	}
	ck_assert(!memcmp(p.a.buf, p.b.buf, 16 * KIB));
	ck_assert_uint_eq(cnt(&p.a, ROCEMU_CNT_RETRANSMITS), 0);
	pair_down(&p);
}
END_TEST

/*
 * As deep as rxe: both QPs allow 128 READs and atomics in flight (what
 * rxe advertises, and what perftest then asks a peer for), and 128 READs
 * posted at once all complete with their data, none sent twice.
 */
START_TEST(test_reads_rxe_depth)
{
	struct pair p;
	struct pair_opts o = { .rd_atomic = 128 };
	struct ibv_device_attr da;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;

	pair_up(&p, &o);
	rocemu_dev_attr(p.a.dev, &da);
	ck_assert_int_eq(da.max_qp_rd_atom, 128);
	ck_assert_int_eq(da.max_qp_init_rd_atom, 128);
	ck_assert_int_eq(rocemu_qp_query(p.b.qp, &qa, &qi), 0);
	ck_assert_uint_eq(qa.max_dest_rd_atomic, 128);
	pattern(p.b.buf, 128 * 256, 5);
	for (int i = 0; i < 128; i++)
		ck_assert_int_eq(post_read(&p, (uint64_t)i, (size_t)i * 256, 256,
					   addr_of(&p.b, (size_t)i * 256),
					   rocemu_mr_rkey(p.b.mr)), 0);
	for (int i = 0; i < 128; i++) {
		struct ibv_wc wc = poll1(&p, &p.a);
		ck_assert_uint_eq(wc.wr_id, (uint64_t)i);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	}
	ck_assert(!memcmp(p.a.buf, p.b.buf, 128 * 256));
	ck_assert_uint_eq(cnt(&p.a, ROCEMU_CNT_RETRANSMITS), 0);
	pair_down(&p);
}
END_TEST

/* A READ response from b's address to a's QP, as a peer would send it. */
static void inject_read_middle(struct pair *p, uint32_t psn)
{
	static uint8_t payload[KIB];
	struct roce_frame f;
	uint8_t buf[2048], a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, b4);
	roce_gid_from_ipv4(f.dst_gid, a4);
	f.sport = 0xc000;
	f.ib.bth.opcode = 0x0e; /* RC_RDMA_READ_RESPONSE_MIDDLE */
	f.ib.bth.dqpn = rocemu_qp_num(p->a.qp);
	f.ib.bth.psn = psn;
	f.ib.payload = payload;
	f.ib.payload_len = KIB;
	int n = roce_frame_build(&f, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	rocemu_world_inject(p->w, buf, (size_t)n);
}

/*
 * A READ whose first response never arrives while later ones keep coming
 * (the requester goes back for it each time) still ends: the retry timer
 * is not restarted by going back, so after retry_cnt timeouts the READ
 * completes with RETRY_EXC_ERR instead of being asked for forever.
 */
START_TEST(test_read_gap_retries_are_bounded)
{
	struct pair p;
	struct pair_opts o = { .timeout = 14, .retry_cnt = 3, .psn_a = 100 };
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };

	pair_up(&p, &o);
	/* b answers nothing; a peer keeps sending the READ's 2nd packet */
	ck_assert_int_eq(rocemu_qp_modify(p.b.qp, &err, IBV_QP_STATE), 0);
	ck_assert_int_eq(post_read(&p, 1, 0, 4 * KIB, addr_of(&p.b, 0),
				   rocemu_mr_rkey(p.b.mr)), 0);
	rocemu_world_run(p.w);
	int got = 0;
	struct ibv_wc wc;
	for (int i = 0; i < 200 && !got; i++) { /* 2 s of virtual time */
		inject_read_middle(&p, 101);
		rocemu_world_advance(p.w, 10 * 1000 * 1000);
		got = rocemu_cq_poll(p.a.cq, 1, &wc);
	}
	ck_assert_int_eq(got, 1);
	ck_assert_int_eq(wc.status, IBV_WC_RETRY_EXC_ERR);
	ck_assert_uint_eq(cnt(&p.a, ROCEMU_CNT_TIMEOUTS), 4);
	pair_down(&p);
}
END_TEST

Suite *reads_suite(void)
{
	Suite *s = suite_create("reads");
	TCase *tc = tcase_create("reads");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_read_responses_in_bursts);
	tcase_add_loop_test(tc, test_large_read_through_loss, 0, 4);
	tcase_add_test(tc, test_repeated_read_restarts_once);
	tcase_add_test(tc, test_dereg_during_read_response);
	tcase_add_test(tc, test_ack_waits_for_read_responses);
	tcase_add_test(tc, test_nak_waits_for_read_responses);
	tcase_add_test(tc, test_reads_beyond_max_dest_rd_atomic);
	tcase_add_test(tc, test_reads_rxe_depth);
	tcase_add_test(tc, test_read_gap_retries_are_bounded);
	suite_add_tcase(s, tc);
	return s;
}
