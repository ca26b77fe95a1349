/* SPDX-License-Identifier: MIT */
/* Fault soak: 100 000 random RC operations on a wire that drops, duplicates, reorders and corrupts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_pair.h"
#include "check_suites.h"

enum {
	OPS = 100000,
	SLOTS = 64,		/* operations in flight at most */
	SLOT = 65536,
	ATOMIC_AT = 2 * SLOTS * SLOT,	/* b's 64-bit counter */
};

struct op {
	enum ibv_wr_opcode kind;
	uint32_t len;
	uint64_t expect_orig;	/* atomics: what must come back */
	uint8_t seed;
};

struct soak {
	struct pair p;
	uint64_t rng;
	struct op ops[OPS];
	uint64_t model;		/* the counter's value, by posting order */
	unsigned posted, done, recvs_posted, recvs_done, stalled;
};

static uint64_t rnd(struct soak *s)
{
	return t_rand(&s->rng);
}

/* Sizes spread evenly over the orders of magnitude from 1 B to 64 KiB. */
static uint32_t rnd_len(struct soak *s)
{
	double u = (double)(rnd(s) >> 11) * 0x1.0p-53;
	uint32_t n = (uint32_t)exp(u * log(65536.0));
	return n < 1 ? 1 : n > 65536 ? 65536 : n;
}

static void pattern(uint8_t *p, uint32_t n, uint8_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed ^ (i * 31) ^ (i >> 8));
}

static void post_op(struct soak *s)
{
	static const enum ibv_wr_opcode kinds[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct pair *p = &s->p;
	unsigned k = s->posted, slot = k % SLOTS;
	struct op *op = &s->ops[k];
	size_t a_off = (size_t)slot * SLOT, b_off = (size_t)slot * SLOT;
	size_t b_src = (size_t)(SLOTS + slot) * SLOT;

	op->kind = kinds[rnd(s) % 7];
	op->len = rnd_len(s);
	op->seed = (uint8_t)rnd(s);
	struct ibv_sge sge = { addr_of(&p->a, a_off), op->len,
			       rocemu_mr_lkey(p->a.mr) };
	struct ibv_send_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1,
				  .opcode = op->kind,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htobe32(k) }, *bad;
	wr.wr.rdma.remote_addr = addr_of(&p->b, b_off);
	wr.wr.rdma.rkey = rocemu_mr_rkey(p->b.mr);
	switch (op->kind) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		ck_assert_int_eq(post_recv1(&p->b, k, b_off, SLOT), 0);
		s->recvs_posted++;
		/* fall through */
	case IBV_WR_RDMA_WRITE:
		pattern(p->a.buf + a_off, op->len, op->seed);
		break;
	case IBV_WR_RDMA_READ:
		pattern(p->b.buf + b_src, op->len, op->seed);
		wr.wr.rdma.remote_addr = addr_of(&p->b, b_src);
		break;
	default:
		sge.length = op->len = 8;
		wr.wr.atomic.remote_addr = addr_of(&p->b, ATOMIC_AT);
		wr.wr.atomic.rkey = rocemu_mr_rkey(p->b.mr);
		op->expect_orig = s->model;
		if (op->kind == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.compare_add = rnd(s) & 0xffff;
			s->model += wr.wr.atomic.compare_add;
		} else {
			/* half the compares succeed */
			wr.wr.atomic.compare_add = rnd(s) & 1 ? s->model : ~s->model;
			wr.wr.atomic.swap = rnd(s);
			if (wr.wr.atomic.compare_add == s->model)
				s->model = wr.wr.atomic.swap;
		}
	}
	ck_assert_int_eq(rocemu_post_send(p->a.qp, &wr, &bad), 0);
	s->posted++;
}

/* Checks one requester completion against what its operation did. */
static void check_done(struct soak *s, const struct ibv_wc *wc)
{
	struct pair *p = &s->p;
	unsigned k = s->done, slot = k % SLOTS;
	const struct op *op = &s->ops[k];
	uint8_t want[SLOT];

	ck_assert_msg(wc->status == IBV_WC_SUCCESS, "op %u: status %d", k,
		      wc->status);
	ck_assert_msg(wc->wr_id == k, "op %u completed as %llu: not in order",
		      k, (unsigned long long)wc->wr_id);
	pattern(want, op->len, op->seed);
	if (op->kind == IBV_WR_RDMA_WRITE)
		ck_assert_msg(!memcmp(p->b.buf + (size_t)slot * SLOT, want, op->len),
			      "op %u: WRITE data", k);
	if (op->kind == IBV_WR_RDMA_READ)
		ck_assert_msg(!memcmp(p->a.buf + (size_t)slot * SLOT, want, op->len),
			      "op %u: READ data", k);
	if (op->kind == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    op->kind == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		uint64_t orig;
		memcpy(&orig, p->a.buf + (size_t)slot * SLOT, 8);
		ck_assert_msg(orig == op->expect_orig, "op %u: atomic result", k);
	}
	s->done++;
}

/* Receive completions come in posting order, each once, with the data. */
static void check_recv(struct soak *s, const struct ibv_wc *wc)
{
	const struct op *op = &s->ops[wc->wr_id];
	uint8_t want[SLOT];

	ck_assert_int_eq(wc->status, IBV_WC_SUCCESS);
	if (op->kind != IBV_WR_SEND)
		ck_assert_uint_eq(be32toh(wc->imm_data), wc->wr_id);
	pattern(want, op->len, op->seed);
	ck_assert_uint_eq(wc->byte_len, op->len);
	ck_assert_msg(!memcmp(s->p.b.buf + (wc->wr_id % SLOTS) * SLOT, want,
			      op->len), "op %llu: received data",
		      (unsigned long long)wc->wr_id);
	s->recvs_done++;
}

START_TEST(test_fault_soak)
{
	struct soak *s = calloc(1, sizeof(*s));
	struct pair_opts o = { .seed = 2026, .mtu = IBV_MTU_1024,
			       .len = ATOMIC_AT + 64, .max_wr = 2 * SLOTS,
			       .timeout = 8 };
	struct rocemu_faults f = { .drop = 0.10, .duplicate = 0.05,
				   .reorder = 0.05, .corrupt = 0.01 };
	struct ibv_wc wc[64];
	uint64_t last_recv = 0;
	bool first_recv = true;

	s->rng = 99;
	pair_up(&s->p, &o);
	rocemu_world_set_faults(s->p.w, &f);
	while (s->done < OPS) {
		while (s->posted < OPS && s->posted - s->done < SLOTS)
			post_op(s);
		uint64_t before = s->done;
		rocemu_world_advance(s->p.w, 20000);
		int n;
		while ((n = rocemu_cq_poll(s->p.a.cq, 64, wc)) > 0)
			for (int i = 0; i < n; i++)
				check_done(s, &wc[i]);
		while ((n = rocemu_cq_poll(s->p.b.cq, 64, wc)) > 0)
			for (int i = 0; i < n; i++) {
				ck_assert(first_recv || wc[i].wr_id > last_recv);
				first_recv = false;
				last_recv = wc[i].wr_id;
				check_recv(s, &wc[i]);
			}
		/* No completion in this step: let the world run to its next
		 * events (retry timers); a world with nothing left to do and
		 * operations outstanding has stalled. */
		if (s->done == before && s->stalled++ > 0) {
			char a[512], b[512];
			rocemu_qp_describe(s->p.a.qp, a, sizeof(a));
			rocemu_qp_describe(s->p.b.qp, b, sizeof(b));
			ck_abort_msg("stalled at op %u:\n%s\n%s", s->done, a, b);
		}
		if (s->done == before)
			rocemu_world_settle(s->p.w, 10ull * 1000000000ull);
		else
			s->stalled = 0;
	}
	ck_assert_int_eq(cq_count(&s->p, &s->p.a), 0); /* nothing twice */
	ck_assert_uint_eq(s->recvs_done, s->recvs_posted);
	uint64_t v;
	memcpy(&v, s->p.b.buf + ATOMIC_AT, 8);
	ck_assert_uint_eq(v, s->model);
	/* corrupted frames were caught and dropped, lost ones retransmitted */
	uint64_t caught = 0;
	for (int i = 0; i < 2; i++) {
		struct rocemu_dev *d = i ? s->p.b.dev : s->p.a.dev;
		caught += rocemu_dev_counter(d, ROCEMU_CNT_RX_DROP_ICRC);
	}
	ck_assert_uint_gt(caught, 0);
	ck_assert_uint_gt(rocemu_dev_counter(s->p.a.dev, ROCEMU_CNT_RETRANSMITS), 0);
	ck_assert(guards_intact(&s->p.a) && guards_intact(&s->p.b));
	fprintf(stderr, "soak: %u ops, %llu ICRC drops, %llu retransmits, "
			"%llu timeouts, %.3f s virtual\n", OPS,
		(unsigned long long)caught,
		(unsigned long long)rocemu_dev_counter(s->p.a.dev,
						       ROCEMU_CNT_RETRANSMITS),
		(unsigned long long)rocemu_dev_counter(s->p.a.dev,
						       ROCEMU_CNT_TIMEOUTS),
		(double)rocemu_world_now(s->p.w) / 1e9);
	pair_down(&s->p);
	free(s);
}
END_TEST

Suite *soak_suite(void)
{
	Suite *s = suite_create("soak");
	TCase *tc = tcase_create("faults");

	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, test_fault_soak);
	suite_add_tcase(s, tc);
	return s;
}
