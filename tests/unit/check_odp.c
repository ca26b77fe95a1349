/* SPDX-License-Identifier: MIT */
/* On-demand paging MRs whose pages come and go, implicit ODP, and re-registration under traffic. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check_pair.h"
#include "check_suites.h"

enum {
	ODP_RW = IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE |
		 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		 IBV_ACCESS_REMOTE_ATOMIC,
};

static size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* n fresh pages of anonymous memory, at want if given (MAP_FIXED: the
 * caller unmapped them itself). */
static uint8_t *map_pages(void *want, size_t n)
{
	void *m = mmap(want, n * page(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (want ? MAP_FIXED : 0),
		       -1, 0);

	ck_assert_ptr_ne(m, MAP_FAILED);
	return m;
}

/* Posts one signaled WR with one SGE of any key and address. */
static void post_sge(struct side *s, enum ibv_wr_opcode op, uint64_t wr_id,
		     uint64_t addr, uint32_t len, uint32_t lkey,
		     uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { addr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	ck_assert_int_eq(rocemu_post_send(s->qp, &wr, &bad), 0);
}

static void post_recv_sge(struct side *s, uint64_t addr, uint32_t len,
			  uint32_t lkey)
{
	struct ibv_sge sge = { addr, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	ck_assert_int_eq(rocemu_post_recv(s->qp, &wr, &bad), 0);
}

static void expect_status(struct pair *p, struct side *s,
			  enum ibv_wc_status st)
{
	struct ibv_wc wc = poll1(p, s);

	ck_assert_msg(wc.status == st, "status %d, wanted %d", wc.status, st);
}

static uint64_t at(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* The responder's ODP page is unmapped: a remote op on it is NAKed with
 * remote access (_i: WRITE, READ, atomic), never a fault; mapped again at
 * the same address the very same rkey works. */
START_TEST(test_remote_op_on_unmapped_page_naks_then_succeeds)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	enum ibv_wr_opcode op = ops[_i];
	uint32_t len = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : 256;
	struct pair p;
	struct pair_opts o = { 0 };

	pair_up(&p, &o);
	uint8_t *m = map_pages(NULL, 2);
	struct rocemu_mr *mr = rocemu_mr_reg(p.b.pd, m, 2 * page(), ODP_RW);
	ck_assert_ptr_nonnull(mr);
	uint8_t *hole = m + page();
	ck_assert_int_eq(munmap(hole, page()), 0);
	memset(p.a.buf, 0x5a, len);
	post_sge(&p.a, op, 1, addr_of(&p.a, 0), len, rocemu_mr_lkey(p.a.mr),
		 at(hole), rocemu_mr_rkey(mr));
	expect_status(&p, &p.a, IBV_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(rocemu_dev_counter(p.b.dev,
					     ROCEMU_CNT_NAK_SENT_REM_ACCESS), 1);

	ck_assert_ptr_eq(map_pages(hole, 1), hole);
	memset(hole, 7, len);
	pair_reconnect(&p, &o);
	memset(p.a.buf, 0x5a, len);
	post_sge(&p.a, op, 2, addr_of(&p.a, 0), len, rocemu_mr_lkey(p.a.mr),
		 at(hole), rocemu_mr_rkey(mr));
	expect_status(&p, &p.a, IBV_WC_SUCCESS);
	if (op == IBV_WR_RDMA_WRITE)
		ck_assert_int_eq(memcmp(hole, p.a.buf, len), 0);
	else if (op == IBV_WR_RDMA_READ)
		ck_assert_uint_eq(p.a.buf[len - 1], 7);
	else
		ck_assert_uint_eq(hole[0], 8); /* 0x0707...07 + 1 */
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	munmap(m, 2 * page());
	pair_down(&p);
}
END_TEST

/* The requester's own ODP page is unmapped: its SEND ends with a local
 * protection error (a local access, never a fault); a receive into an
 * unmapped ODP page fails at the responder with a local protection
 * error, remote operation error at the requester. */
START_TEST(test_local_sge_on_unmapped_page_is_local_error)
{
	struct pair p;
	struct pair_opts o = { 0 };

	pair_up(&p, &o);
	uint8_t *m = map_pages(NULL, 1);
	struct side *s = _i ? &p.b : &p.a;
	struct rocemu_mr *mr = rocemu_mr_reg(s->pd, m, page(), ODP_RW);
	ck_assert_ptr_nonnull(mr);
	ck_assert_int_eq(munmap(m, page()), 0);
	if (_i == 0) {
		post_recv1(&p.b, 9, 0, 512);
		post_sge(&p.a, IBV_WR_SEND, 1, at(m), 64, rocemu_mr_lkey(mr),
			 0, 0);
		expect_status(&p, &p.a, IBV_WC_LOC_PROT_ERR);
	} else {
		post_recv_sge(&p.b, at(m), 512, rocemu_mr_lkey(mr));
		post_send1(&p.a, IBV_WR_SEND, 1, 0, 64, 0, 0, 0);
		expect_status(&p, &p.a, IBV_WC_REM_OP_ERR);
		expect_status(&p, &p.b, IBV_WC_LOC_PROT_ERR);
	}
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	pair_down(&p);
}
END_TEST

/* One implicit ODP registration (NULL, SIZE_MAX) covers memory mapped
 * after it: its rkey reaches two separate mmaps, its lkey sends from
 * both; memory outside any mapping is still refused. */
START_TEST(test_implicit_odp_key_on_two_mmaps)
{
	struct pair p;
	struct pair_opts o = { 0 };

	pair_up(&p, &o);
	struct rocemu_mr *imp = rocemu_mr_reg(p.b.pd, NULL, SIZE_MAX, ODP_RW);
	struct rocemu_mr *loc = rocemu_mr_reg(p.a.pd, NULL, SIZE_MAX, ODP_RW);
	ck_assert_ptr_nonnull(imp);
	ck_assert_ptr_nonnull(loc);
	uint8_t *m1 = map_pages(NULL, 1), *m2 = map_pages(NULL, 1);
	uint8_t *src1 = map_pages(NULL, 1), *src2 = map_pages(NULL, 1);
	memset(src1, 0x11, 128);
	memset(src2, 0x22, 128);
	post_sge(&p.a, IBV_WR_RDMA_WRITE, 1, at(src1), 128,
		 rocemu_mr_lkey(loc), at(m1), rocemu_mr_rkey(imp));
	post_sge(&p.a, IBV_WR_RDMA_WRITE, 2, at(src2), 128,
		 rocemu_mr_lkey(loc), at(m2 + 64), rocemu_mr_rkey(imp));
	expect_status(&p, &p.a, IBV_WC_SUCCESS);
	expect_status(&p, &p.a, IBV_WC_SUCCESS);
	ck_assert_uint_eq(m1[0], 0x11);
	ck_assert_uint_eq(m1[127], 0x11);
	ck_assert_uint_eq(m1[128], 0);
	ck_assert_uint_eq(m2[63], 0);
	ck_assert_uint_eq(m2[64], 0x22);
	/* m2 gone: the same key is refused there now */
	ck_assert_int_eq(munmap(m2, page()), 0);
	post_sge(&p.a, IBV_WR_RDMA_WRITE, 3, at(src1), 128,
		 rocemu_mr_lkey(loc), at(m2), rocemu_mr_rkey(imp));
	expect_status(&p, &p.a, IBV_WC_REM_ACCESS_ERR);
	ck_assert_int_eq(rocemu_mr_dereg(imp), 0);
	ck_assert_int_eq(rocemu_mr_dereg(loc), 0);
	munmap(m1, page());
	munmap(src1, page());
	munmap(src2, page());
	pair_down(&p);
}
END_TEST

static size_t nonzero(const uint8_t *b, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += b[i] != 0;
	return k;
}

/* ibv_rereg_mr while a multi-packet WRITE is half way through the old
 * registration: _i 0 changes the translation, _i 1 only the access (to
 * one that still allows the WRITE). Either way the rest of that WRITE
 * ends with a NAK, as after a deregistration, and never lands under the
 * new registration; the key stays, and names the new registration. */
START_TEST(test_rereg_mid_write)
{
	enum { LEN = 32768 };
	struct pair p;
	struct pair_opts o = { .mtu = IBV_MTU_1024, .seed = 7 };

	pair_up(&p, &o);
	uint8_t *old = p.b.buf, *fresh = calloc(1, LEN);
	uint32_t rkey = rocemu_mr_rkey(p.b.mr);
	memset(p.a.buf, 0x3c, LEN);
	/* A lossy wire stops the WRITE at its first lost packet: what came
	 * before has landed, the rest waits for a retransmission. */
	struct rocemu_faults lossy = { .drop = 0.2 }, clean = { 0 };
	rocemu_world_set_faults(p.w, &lossy);
	post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, LEN, at(old), rkey, 0);
	for (int i = 0; i < 1000 && !nonzero(old, LEN); i++)
		rocemu_world_advance(p.w, 100);
	rocemu_world_set_faults(p.w, &clean);
	size_t landed = nonzero(old, LEN);
	ck_assert_msg(landed > 0 && landed < LEN, "landed %zu", landed);
	if (_i == 0)
		ck_assert_int_eq(rocemu_mr_rereg(p.b.mr,
						 IBV_REREG_MR_CHANGE_TRANSLATION,
						 NULL, fresh, LEN, 0), 0);
	else
		ck_assert_int_eq(rocemu_mr_rereg(p.b.mr,
						 IBV_REREG_MR_CHANGE_ACCESS,
						 NULL, NULL, 0,
						 IBV_ACCESS_LOCAL_WRITE |
							 IBV_ACCESS_REMOTE_WRITE),
				 0);
	ck_assert_uint_eq(rocemu_mr_rkey(p.b.mr), rkey);
	expect_status(&p, &p.a, IBV_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(nonzero(fresh, LEN), 0);
	ck_assert_uint_eq(nonzero(old, LEN), landed);

	uint8_t *now = _i == 0 ? fresh : old, *before = _i == 0 ? old : NULL;
	if (before) {
		pair_reconnect(&p, &o);
		post_send1(&p.a, IBV_WR_RDMA_WRITE, 2, 0, LEN, at(before), rkey,
			   0);
		expect_status(&p, &p.a, IBV_WC_REM_ACCESS_ERR);
	}
	pair_reconnect(&p, &o);
	post_send1(&p.a, IBV_WR_RDMA_WRITE, 3, 0, LEN, at(now), rkey, 0);
	expect_status(&p, &p.a, IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(now, p.a.buf, LEN), 0);
	/* back over the pair's own buffer for pair_down */
	ck_assert_int_eq(rocemu_mr_rereg(p.b.mr,
					 IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
					 old, p.b.len, 0), 0);
	free(fresh);
	pair_down(&p);
}
END_TEST

/* Re-registration's own checks: bad flags, a PD of another device, a
 * range that is not mapped, remote write without local write; each
 * leaves the MR as it was (its key still works for what it allowed). */
START_TEST(test_rereg_refusals_leave_mr_unchanged)
{
	struct pair p;
	struct pair_opts o = { 0 };

	pair_up(&p, &o);
	struct rocemu_mr *mr = p.b.mr;
	uint8_t *m = map_pages(NULL, 1);
	ck_assert_int_eq(munmap(m, page()), 0);
	ck_assert_int_eq(rocemu_mr_rereg(mr, 0, NULL, NULL, 0, 0), -EINVAL);
	ck_assert_int_eq(rocemu_mr_rereg(mr, 1 << 3, NULL, NULL, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(rocemu_mr_rereg(mr, IBV_REREG_MR_CHANGE_PD, p.a.pd,
					 NULL, 0, 0), -EINVAL);
	ck_assert_int_eq(rocemu_mr_rereg(mr, IBV_REREG_MR_CHANGE_TRANSLATION,
					 NULL, m, page(), 0), -EFAULT);
	ck_assert_int_eq(rocemu_mr_rereg(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
					 NULL, 0, IBV_ACCESS_REMOTE_WRITE),
			 -EINVAL);
	memset(p.a.buf, 0x42, 64);
	post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 64, addr_of(&p.b, 0),
		   rocemu_mr_rkey(mr), 0);
	expect_status(&p, &p.a, IBV_WC_SUCCESS);
	ck_assert_uint_eq(p.b.buf[63], 0x42);
	pair_down(&p);
}
END_TEST

/*
 * An implicit ODP MR covers the whole address space as a range of
 * numbers, not as memory: a peer's WRITE or READ at a kernel-half
 * address, or at the very top where va + len passes 2^64, is refused
 * with a remote access NAK (_i: the address, then the op), counted as
 * such, and nothing else happens on either side.
 */
START_TEST(test_implicit_odp_far_addresses_nak)
{
	static const uint64_t vas[] = {
		0xffff800000000000ull,	/* kernel half: no such page here */
		0xfffffffffffff000ull,	/* the last page: va + len is 2^64 */
		0xfffffffffffffff0ull,	/* va + len wraps past 2^64 */
	};
	uint64_t va = vas[_i / 2];
	enum ibv_wr_opcode op = _i % 2 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
	struct pair p;
	struct pair_opts o = { 0 };

	pair_up(&p, &o);
	struct rocemu_mr *imp = rocemu_mr_reg(p.b.pd, NULL, SIZE_MAX, ODP_RW);
	ck_assert_ptr_nonnull(imp);
	memset(p.a.buf, 0x5a, 4096);
	post_sge(&p.a, op, 1, addr_of(&p.a, 0), 4096, rocemu_mr_lkey(p.a.mr),
		 va, rocemu_mr_rkey(imp));
	expect_status(&p, &p.a, IBV_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(rocemu_dev_counter(p.b.dev,
					     ROCEMU_CNT_NAK_SENT_REM_ACCESS), 1);
	ck_assert_uint_eq(rocemu_dev_counter(p.b.dev,
					     ROCEMU_CNT_NAK_SENT_INV_REQ), 0);
	ck_assert_uint_eq(rocemu_dev_counter(p.b.dev,
					     ROCEMU_CNT_NAK_SENT_REM_OP), 0);
	ck_assert_uint_eq(rocemu_dev_counter(p.a.dev,
					     ROCEMU_CNT_NAK_RCVD_ERROR), 1);
	/* a READ that was refused placed nothing in the requester's buffer */
	ck_assert_uint_eq(p.a.buf[0], 0x5a);
	ck_assert_uint_eq(p.a.buf[4095], 0x5a);
	ck_assert(guards_intact(&p.a));
	ck_assert_int_eq(rocemu_mr_dereg(imp), 0);
	pair_down(&p);
}
END_TEST

Suite *odp_suite(void)
{
	Suite *s = suite_create("odp");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_remote_op_on_unmapped_page_naks_then_succeeds,
			    0, 3);
	tcase_add_loop_test(tc, test_local_sge_on_unmapped_page_is_local_error,
			    0, 2);
	tcase_add_test(tc, test_implicit_odp_key_on_two_mmaps);
	tcase_add_loop_test(tc, test_rereg_mid_write, 0, 2);
	tcase_add_test(tc, test_rereg_refusals_leave_mr_unchanged);
	tcase_add_loop_test(tc, test_implicit_odp_far_addresses_nak, 0, 6);
	suite_add_tcase(s, tc);
	return s;
}
