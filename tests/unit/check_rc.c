/* SPDX-License-Identifier: MIT */
/* RC transport between two emulated devices: every operation, sizes, PSN wrap. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_pair.h"
#include "rocemu/pcapio.h"
#include "check_suites.h"

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

/* SEND of each size, received whole; _i picks the size. */
static const uint32_t sizes[] = { 0, 1, 3, 4, 255, 256, 1023, 1024, 1025,
				  4096, 5000, 65536 - 64 };

START_TEST(test_send_sizes)
{
	struct pair p;
	struct pair_opts o = { .seed = (uint64_t)_i };
	uint32_t n = sizes[_i];

	pair_up(&p, &o);
	fill(p.a.buf, n, 3);
	ck_assert_int_eq(post_recv1(&p.b, 7, 0, 65536 - 64), 0);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_SEND, 1, 0, n, 0, 0, 0), 0);
	struct ibv_wc s = poll1(&p, &p.a), r = poll1(&p, &p.b);
	ck_assert_int_eq(s.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(s.opcode, IBV_WC_SEND);
	ck_assert_uint_eq(s.wr_id, 1);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(r.opcode, IBV_WC_RECV);
	ck_assert_uint_eq(r.wr_id, 7);
	ck_assert_uint_eq(r.byte_len, n);
	ck_assert(!memcmp(p.a.buf, p.b.buf, n));
	ck_assert(guards_intact(&p.b));
	pair_down(&p);
}
END_TEST

START_TEST(test_send_with_imm_and_solicited)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED |
						IBV_SEND_SOLICITED,
				  .imm_data = htobe32(0xdeadbeef) }, *bad;

	pair_up(&p, &o);
	sge = (struct ibv_sge){ addr_of(&p.a, 0), 2000, rocemu_mr_lkey(p.a.mr) };
	post_recv1(&p.b, 1, 0, 4096);
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0);
	struct ibv_wc r = poll1(&p, &p.b);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert(r.wc_flags & IBV_WC_WITH_IMM);
	ck_assert_uint_eq(be32toh(r.imm_data), 0xdeadbeef);
	ck_assert_uint_eq(r.byte_len, 2000);
	pair_down(&p);
}
END_TEST

START_TEST(test_write_and_write_imm)
{
	struct pair p;
	struct pair_opts o = { .mtu = IBV_MTU_256 };
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htobe32(42) }, *bad;

	pair_up(&p, &o);
	fill(p.a.buf, 3000, 5);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 3000,
				    addr_of(&p.b, 100), rocemu_mr_rkey(p.b.mr), 0), 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	ck_assert(!memcmp(p.b.buf + 100, p.a.buf, 3000));
	ck_assert_int_eq(cq_count(&p, &p.b), 0); /* a plain WRITE is silent */

	sge = (struct ibv_sge){ addr_of(&p.a, 0), 700, rocemu_mr_lkey(p.a.mr) };
	wr.wr.rdma.remote_addr = addr_of(&p.b, 8000);
	wr.wr.rdma.rkey = rocemu_mr_rkey(p.b.mr);
	post_recv1(&p.b, 5, 0, 0);
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0);
	struct ibv_wc r = poll1(&p, &p.b);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(r.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(be32toh(r.imm_data), 42);
	ck_assert(!memcmp(p.b.buf + 8000, p.a.buf, 700));
	pair_down(&p);
}
END_TEST

START_TEST(test_read_multi_packet)
{
	struct pair p;
	struct pair_opts o = { 0 };

	pair_up(&p, &o);
	fill(p.b.buf + 1000, 10000, 9);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_READ, 3, 20000, 10000,
				    addr_of(&p.b, 1000), rocemu_mr_rkey(p.b.mr), 0), 0);
	struct ibv_wc s = poll1(&p, &p.a);
	ck_assert_int_eq(s.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(s.opcode, IBV_WC_RDMA_READ);
	ck_assert_uint_eq(s.byte_len, 10000);
	ck_assert(!memcmp(p.a.buf + 20000, p.b.buf + 1000, 10000));
	ck_assert(guards_intact(&p.a));
	pair_down(&p);
}
END_TEST

START_TEST(test_atomics)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 4, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint64_t v = 100, got;

	pair_up(&p, &o);
	memcpy(p.b.buf + 64, &v, 8);
	sge = (struct ibv_sge){ addr_of(&p.a, 0), 8, rocemu_mr_lkey(p.a.mr) };
	wr.wr.atomic.remote_addr = addr_of(&p.b, 64);
	wr.wr.atomic.rkey = rocemu_mr_rkey(p.b.mr);
	wr.wr.atomic.compare_add = 100;
	wr.wr.atomic.swap = 555;
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	memcpy(&got, p.a.buf, 8);
	ck_assert_uint_eq(got, 100); /* the original value comes back */
	memcpy(&got, p.b.buf + 64, 8);
	ck_assert_uint_eq(got, 555);
	/* a compare that fails leaves memory alone */
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0);
	ck_assert_int_eq(poll1(&p, &p.a).opcode, IBV_WC_COMP_SWAP);
	memcpy(&got, p.a.buf, 8);
	ck_assert_uint_eq(got, 555);
	memcpy(&got, p.b.buf + 64, 8);
	ck_assert_uint_eq(got, 555);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.compare_add = 45;
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0);
	struct ibv_wc s = poll1(&p, &p.a);
	ck_assert_int_eq(s.opcode, IBV_WC_FETCH_ADD);
	memcpy(&got, p.a.buf, 8);
	ck_assert_uint_eq(got, 555);
	memcpy(&got, p.b.buf + 64, 8);
	ck_assert_uint_eq(got, 600);
	pair_down(&p);
}
END_TEST

START_TEST(test_sgl_inline_unsignaled_sig_all)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_sge sg[3];
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = sg, .num_sge = 3,
				  .opcode = IBV_WR_SEND }, *bad;
	uint8_t inl[100];

	pair_up(&p, &o);
	fill(p.a.buf, 3000, 1);
	for (int i = 0; i < 3; i++)
		sg[i] = (struct ibv_sge){ addr_of(&p.a, (size_t)i * 1000 + 10),
					  (uint32_t)(100 + i), rocemu_mr_lkey(p.a.mr) };
	post_recv1(&p.b, 1, 0, 1000);
	post_recv1(&p.b, 2, 1000, 1000);
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0); /* unsignaled */
	/* inline: the buffer is copied at post time, then scribbled on */
	fill(inl, sizeof(inl), 77);
	struct ibv_sge isg = { (uint64_t)(uintptr_t)inl, sizeof(inl), 0 };
	struct ibv_send_wr iwr = { .wr_id = 2, .sg_list = &isg, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED };
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &iwr, &bad), 0);
	uint8_t want[100];
	memcpy(want, inl, 100);
	memset(inl, 0, sizeof(inl));
	ck_assert_int_eq(cq_count(&p, &p.a), 1); /* only the signaled one */
	struct ibv_wc r[2];
	ck_assert_int_eq(rocemu_cq_poll(p.b.cq, 2, r), 2);
	ck_assert_uint_eq(r[0].byte_len, 303);
	ck_assert(!memcmp(p.b.buf, p.a.buf + 10, 100));
	ck_assert(!memcmp(p.b.buf + 100, p.a.buf + 1010, 101));
	ck_assert(!memcmp(p.b.buf + 201, p.a.buf + 2010, 102));
	ck_assert(!memcmp(p.b.buf + 1000, want, 100));
	pair_down(&p);
}
END_TEST

/* PSNs that cross 0xffffff on both sides, with multi-packet messages. */
START_TEST(test_psn_wraps)
{
	struct pair p;
	struct pair_opts o = { .psn_a = 0xfffffd, .psn_b = 0xffffff,
			       .mtu = IBV_MTU_256 };

	pair_up(&p, &o);
	for (int k = 0; k < 4; k++) {
		fill(p.a.buf, 1000, (uint8_t)k);
		post_recv1(&p.b, (uint64_t)k, 4096, 4096);
		ck_assert_int_eq(post_send1(&p.a, IBV_WR_SEND, (uint64_t)k, 0,
					    1000, 0, 0, 0), 0);
		ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
		ck_assert_int_eq(poll1(&p, &p.b).byte_len, 1000);
		ck_assert(!memcmp(p.b.buf + 4096, p.a.buf, 1000));
		ck_assert_int_eq(post_send1(&p.b, IBV_WR_RDMA_READ, 9, 0, 900,
					    addr_of(&p.a, 0),
					    rocemu_mr_rkey(p.a.mr), 0), 0);
		ck_assert_int_eq(poll1(&p, &p.b).status, IBV_WC_SUCCESS);
	}
	struct ibv_qp_attr a;
	rocemu_qp_query(p.a.qp, &a, NULL);
	ck_assert_uint_lt(a.sq_psn, 0x100); /* it wrapped */
	pair_down(&p);
}
END_TEST

START_TEST(test_fence_and_rd_atomic_limit)
{
	struct pair p;
	struct pair_opts o = { .rd_atomic = 1 };

	pair_up(&p, &o);
	fill(p.b.buf, 4096, 2);
	for (int k = 0; k < 4; k++)
		ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_READ, (uint64_t)k,
					    (size_t)k * 4096, 4096,
					    addr_of(&p.b, 0),
					    rocemu_mr_rkey(p.b.mr), 0), 0);
	/* a fenced WRITE after the READs sees all of them done */
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_WRITE, 9, 0, 4096,
				    addr_of(&p.b, 8192), rocemu_mr_rkey(p.b.mr),
				    IBV_SEND_SIGNALED | IBV_SEND_FENCE), 0);
	for (uint64_t k = 0; k < 5; k++) {
		struct ibv_wc wc = poll1(&p, &p.a);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.wr_id, k < 4 ? k : 9); /* in order */
	}
	ck_assert(!memcmp(p.b.buf + 8192, p.b.buf, 4096));
	pair_down(&p);
}
END_TEST

/* A capture started and stopped while the devices run holds what was sent
 * in between, and only that: the SEND_ONLY with its payload and its ACK. */
static void send_one(struct pair *p, uint8_t mark)
{
	p->a.buf[0] = mark;
	ck_assert_int_eq(post_recv1(&p->b, mark, 0, 64), 0);
	ck_assert_int_eq(post_send1(&p->a, IBV_WR_SEND, mark, 0, 1, 0, 0,
				    IBV_SEND_SIGNALED), 0);
	ck_assert_int_eq(poll1(p, &p->a).status, IBV_WC_SUCCESS);
	ck_assert_int_eq(poll1(p, &p->b).status, IBV_WC_SUCCESS);
}

START_TEST(test_capture_window)
{
	struct pair p;
	struct pair_opts o = { 0 };
	char path[] = "/tmp/rocemu-window-XXXXXX", err[ROCE_PCAP_ERRLEN];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	pair_up(&p, &o);
	send_one(&p, 0x11);
	ck_assert_int_eq(rocemu_world_record(p.w, path), 0);
	send_one(&p, 0x22);
	ck_assert_int_eq(rocemu_world_record(p.w, NULL), 0);
	send_one(&p, 0x33);

	struct roce_pcap_reader *rd;
	struct roce_pcap_rec rec;
	struct roce_frame f;
	const char *why;
	uint8_t ops[4];
	unsigned n = 0;
	ck_assert_int_eq(roce_pcap_open(path, &rd, err), 0);
	while (roce_pcap_next(rd, &rec, err) == 1) {
		ck_assert_uint_lt(n, 4);
		ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, rec.data,
						  rec.caplen, rec.wire_len, &f,
						  &why), 0);
		ops[n++] = f.ib.bth.opcode;
		if (f.ib.bth.opcode == ROCE_OP_RC_SEND_ONLY)
			ck_assert_uint_eq(f.ib.payload[0], 0x22);
	}
	roce_pcap_close(rd);
	unlink(path);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(ops[0], ROCE_OP_RC_SEND_ONLY);
	ck_assert_uint_eq(ops[1], ROCE_OP_RC_ACK);
	pair_down(&p);
}
END_TEST

Suite *rc_suite(void)
{
	Suite *s = suite_create("rc");
	TCase *tc = tcase_create("operations");

	tcase_add_loop_test(tc, test_send_sizes, 0,
			    sizeof(sizes) / sizeof(sizes[0]));
	tcase_add_test(tc, test_send_with_imm_and_solicited);
	tcase_add_test(tc, test_write_and_write_imm);
	tcase_add_test(tc, test_read_multi_packet);
	tcase_add_test(tc, test_atomics);
	tcase_add_test(tc, test_sgl_inline_unsignaled_sig_all);
	tcase_add_test(tc, test_psn_wraps);
	tcase_add_test(tc, test_fence_and_rd_atomic_limit);
	tcase_add_test(tc, test_capture_window);
	suite_add_tcase(s, tc);
	return s;
}
