/* SPDX-License-Identifier: MIT */
/* Memory windows: alloc, the bind rules, invalidation (local, remote, by dealloc), peer access through a window on the wire. */
#include <errno.h>
#include <string.h>

#include "check_pair.h"
#include "check_suites.h"
#include "obj/obj.h"

enum {
	WIN = 4096,		/* the window's offset in b's buffer */
	WIN_LEN = 2048,
	RW = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	ALL_REMOTE = RW | IBV_ACCESS_REMOTE_ATOMIC,
	/* b's MR grants no remote access itself: only windows do */
	MR_BINDABLE = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND,
};

static int async_event(struct side *s)
{
	struct ibv_async_event ev;

	return rocemu_dev_get_async_event(s->dev, &ev) ? -1
						       : (int)ev.event_type;
}

static enum ibv_qp_state state_of(struct side *s)
{
	struct ibv_qp_attr a;

	rocemu_qp_query(s->qp, &a, NULL);
	return a.qp_state;
}

static void up(struct pair *p)
{
	struct pair_opts o = { .mr_access = MR_BINDABLE };

	pair_up(p, &o);
	memset(p->b.buf, 0xab, p->b.len);
	memset(p->a.buf, 0x11, p->a.len);
}

/* Posts a BIND_MW of mw over mr at addr on s's QP: the post's result. */
static int post_bind(struct side *s, uint64_t wr_id, struct rocemu_mw *mw,
		     struct rocemu_mr *mr, uint32_t rkey, uint64_t addr,
		     uint64_t len, int access)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = (struct ibv_mw *)(void *)mw, .rkey = rkey,
			     .bind_info = { .mr = (struct ibv_mr *)(void *)mr,
					    .addr = addr, .length = len,
					    .mw_access_flags = (unsigned)access } },
	}, *bad;

	return rocemu_post_send(s->qp, &wr, &bad);
}

/* Binds mw over b's window with access and a new key byte; asserts the
 * bind completed; returns the window's rkey. */
static uint32_t bind_b(struct pair *p, struct rocemu_mw *mw, int access)
{
	uint32_t want = (rocemu_mw_rkey(mw) & ~0xffu) |
			((rocemu_mw_rkey(mw) + 1) & 0xff);

	ck_assert_int_eq(post_bind(&p->b, 77, mw, p->b.mr, want,
				   addr_of(&p->b, WIN), WIN_LEN, access),
			 0);
	struct ibv_wc wc = poll1(p, &p->b);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_BIND_MW);
	ck_assert_uint_eq(wc.wr_id, 77);
	/* the key byte is the bind's (IBTA 10.6.7.2.1), the index kept */
	ck_assert_uint_eq(rocemu_mw_rkey(mw), want);
	return want;
}

static int post_op(struct side *s, uint64_t wr_id, enum ibv_wr_opcode op,
		   uint32_t inv_rkey)
{
	struct ibv_send_wr wr = { .wr_id = wr_id, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = inv_rkey }, *bad;

	return rocemu_post_send(s->qp, &wr, &bad);
}

static void expect_remote_access_error(struct pair *p)
{
	struct ibv_wc wc = poll1(p, &p->a);
	ck_assert_int_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(wc.wr_id, 1);
	ck_assert_int_eq(state_of(&p->b), IBV_QPS_ERR);
	ck_assert_int_eq(async_event(&p->b), IBV_EVENT_QP_ACCESS_ERR);
	ck_assert_uint_eq(rocemu_dev_counter(p->b.dev,
					     ROCEMU_CNT_NAK_SENT_REM_ACCESS),
			  1);
}

/* ---- alloc and keys ------------------------------------------------ */

START_TEST(test_alloc_types_and_keys)
{
	struct pair p;
	struct rocemu_mw *mw[8];
	struct rocemu_mr *mr[8];
	uint32_t idx[17];

	up(&p);
	errno = 0;
	ck_assert_ptr_null(rocemu_mw_alloc(p.b.pd, (enum ibv_mw_type)3));
	ck_assert_int_eq(errno, EINVAL);
	/* MRs and MWs interleaved: every key index names one object */
	idx[16] = rocemu_mr_rkey(p.b.mr) >> 8;
	for (int i = 0; i < 8; i++) {
		mw[i] = rocemu_mw_alloc(p.b.pd, i & 1 ? IBV_MW_TYPE_2
						      : IBV_MW_TYPE_1);
		mr[i] = rocemu_mr_reg(p.b.pd, p.b.buf, 64, MR_BINDABLE);
		ck_assert_ptr_nonnull(mw[i]);
		ck_assert_ptr_nonnull(mr[i]);
		idx[2 * i] = rocemu_mw_rkey(mw[i]) >> 8;
		idx[2 * i + 1] = rocemu_mr_rkey(mr[i]) >> 8;
	}
	for (int i = 0; i < 17; i++)
		for (int j = 0; j < i; j++)
			ck_assert_uint_ne(idx[i], idx[j]);
	/* a window's key is no local key: an SGE naming it fails */
	struct ibv_sge sge = { addr_of(&p.b, 0), 8, rocemu_mw_rkey(mw[0]) };
	ck_assert_int_eq(sge_copy_to(p.b.pd, &sge, 1, 0, "12345678", 8, 0),
			 -EFAULT);
	/* the PD is in use while a window lives in it */
	struct rocemu_pd *pd2 = rocemu_pd_alloc(p.b.dev);
	struct rocemu_mw *w2 = rocemu_mw_alloc(pd2, IBV_MW_TYPE_2);
	ck_assert_int_eq(rocemu_pd_free(pd2), -EBUSY);
	ck_assert_int_eq(rocemu_mw_dealloc(w2), 0);
	ck_assert_int_eq(rocemu_pd_free(pd2), 0);
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(rocemu_mw_dealloc(mw[i]), 0);
		ck_assert_int_eq(rocemu_mr_dereg(mr[i]), 0);
	}
	pair_down(&p);
}
END_TEST

/* ---- access through a window ----------------------------------------- */

/* _i: type 1 (through its verb's WR) or type 2. WRITE, READ and an atomic
 * through the window reach exactly the window's bytes. */
START_TEST(test_peer_access_through_window)
{
	struct pair p;
	enum ibv_mw_type t = _i ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1;

	up(&p);
	struct rocemu_mw *mw = rocemu_mw_alloc(p.b.pd, t);
	uint32_t rkey = bind_b(&p, mw, ALL_REMOTE);
	/* the MR's own key grants nothing remote */
	uint64_t base = addr_of(&p.b, WIN);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, WIN_LEN,
				    base, rkey, 0), 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	for (size_t i = 0; i < p.b.len; i++)
		ck_assert_uint_eq(p.b.buf[i], i >= WIN && i < WIN + WIN_LEN
						      ? 0x11 : 0xab);
	memset(p.b.buf + WIN, 0x5c, WIN_LEN);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_READ, 2, 8192, WIN_LEN,
				    base, rkey, 0), 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(p.a.buf[8192], 0x5c);
	ck_assert_uint_eq(p.a.buf[8192 + WIN_LEN - 1], 0x5c);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_ATOMIC_FETCH_AND_ADD, 3, 0, 8,
				    base + WIN_LEN - 8, rkey, 0), 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	/* IBTA 1.5 ATOMIC WRITE through the window too: 8 bytes of a's */
	memset(p.a.buf + 64, 0x3e, 8);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_ATOMIC_WRITE, 4, 64, 8,
				    base + 16, rkey, 0), 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(p.b.buf[WIN + 16], 0x3e);
	ck_assert_uint_eq(p.b.buf[WIN + 23], 0x3e);
	ck_assert_uint_eq(p.b.buf[WIN + 24], 0x5c);
	ck_assert(guards_intact(&p.b));
	/* bound: the MR stays (EBUSY), until the window goes */
	ck_assert_int_eq(rocemu_mr_dereg(p.b.mr), -EBUSY);
	ck_assert_int_eq(rocemu_mr_rereg(p.b.mr, IBV_REREG_MR_CHANGE_ACCESS,
					 NULL, NULL, 0, MR_BINDABLE),
			 -EBUSY);
	ck_assert_int_eq(rocemu_mw_dealloc(mw), 0);
	pair_down(&p);
}
END_TEST

/* A zero-based type 2 window: the peer's address is an offset into it. */
START_TEST(test_zero_based_window)
{
	struct pair p;

	up(&p);
	struct rocemu_mw *mw = rocemu_mw_alloc(p.b.pd, IBV_MW_TYPE_2);
	uint32_t rkey = bind_b(&p, mw, RW | IBV_ACCESS_ZERO_BASED);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 16, 32,
				    rkey, 0), 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(p.b.buf[WIN + 31], 0xab);
	ck_assert_uint_eq(p.b.buf[WIN + 32], 0x11);
	ck_assert_uint_eq(p.b.buf[WIN + 47], 0x11);
	ck_assert_uint_eq(p.b.buf[WIN + 48], 0xab);
	/* offsets past the window's length are refused */
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 16,
				    WIN_LEN - 8, rkey, 0), 0);
	expect_remote_access_error(&p);
	ck_assert(guards_intact(&p.b));
	ck_assert_int_eq(rocemu_mw_dealloc(mw), 0);
	pair_down(&p);
}
END_TEST

/* Each way a request through a window must fail on the wire: _i picks. */
START_TEST(test_window_refuses)
{
	static const char *const what[] = {
		"write one byte past the window", "write one byte before it",
		"read without the read right", "atomic without the atomic right",
		"write after LOCAL_INV", "write after dealloc",
		"write with the key byte of before the bind",
		"type 1 after a rebind of length 0", "the MR's own rkey",
		"write after SEND with Invalidate",
		"zero based, a write whose end passes 2^64 to land inside",
	};
	struct pair p;
	enum ibv_mw_type t = _i == 7 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2;
	enum ibv_wr_opcode op = IBV_WR_RDMA_WRITE;
	uint64_t raddr;
	uint32_t len = 64;

	up(&p);
	struct rocemu_mw *mw = rocemu_mw_alloc(p.b.pd, t);
	uint32_t old = rocemu_mw_rkey(mw);
	uint32_t rkey = bind_b(&p, mw, _i == 2 ? IBV_ACCESS_REMOTE_WRITE
				     : _i == 3 ? RW
				     : _i == 10 ? RW | IBV_ACCESS_ZERO_BASED
						: ALL_REMOTE);
	raddr = addr_of(&p.b, WIN);
	switch (_i) {
	case 0: raddr += WIN_LEN - len + 1; break;
	case 1: raddr -= 1; break;
	case 2: op = IBV_WR_RDMA_READ; break;
	case 3: op = IBV_WR_ATOMIC_FETCH_AND_ADD; len = 8; break;
	case 4:
		ck_assert_int_eq(post_op(&p.b, 9, IBV_WR_LOCAL_INV, rkey), 0);
		ck_assert_int_eq(poll1(&p, &p.b).opcode, IBV_WC_LOCAL_INV);
		break;
	case 5: ck_assert_int_eq(rocemu_mw_dealloc(mw), 0); break;
	case 6: rkey = old; break;
	case 7:
		ck_assert_int_eq(post_bind(&p.b, 9, mw, NULL, rkey + 1, 0, 0, 0),
				 0);
		ck_assert_int_eq(poll1(&p, &p.b).status, IBV_WC_SUCCESS);
		rkey = rocemu_mw_rkey(mw);
		break;
	case 8: rkey = rocemu_mr_rkey(p.b.mr); break;
	/* 0xffffffffffffff00 + 0x200 is 0x100 mod 2^64, inside WIN_LEN */
	case 10: raddr = 0xffffffffffffff00ull; len = 0x200; break;
	case 9: {
		ck_assert_int_eq(post_recv1(&p.b, 8, 0, 64), 0);
		ck_assert_int_eq(post_op(&p.a, 9, IBV_WR_SEND_WITH_INV, rkey), 0);
		struct ibv_wc wc = poll1(&p, &p.b);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert(wc.wc_flags & IBV_WC_WITH_INV);
		ck_assert_uint_eq(wc.invalidated_rkey, rkey);
		ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
		break;
	}
	}
	ck_assert_int_eq(post_send1(&p.a, op, 1, 0, len, raddr, rkey, 0), 0);
	expect_remote_access_error(&p);
	ck_assert_msg(guards_intact(&p.b), "%s", what[_i]);
	for (size_t i = 0; i < p.b.len; i++)
		ck_assert_msg(p.b.buf[i] == 0xab, "%s: byte %zu", what[_i], i);
	if (_i != 5)
		ck_assert_int_eq(rocemu_mw_dealloc(mw), 0);
	/* no window left on it: the MR goes */
	ck_assert_int_eq(rocemu_mr_dereg(p.b.mr), 0);
	p.b.mr = rocemu_mr_reg(p.b.pd, p.b.buf, p.b.len, MR_BINDABLE);
	pair_down(&p);
}
END_TEST

/* A type 2 window is bound to the QP it was bound through (2B): another
 * QP of the same PD reaches nothing through it, nor invalidates it. */
START_TEST(test_type2_window_belongs_to_its_qp)
{
	struct pair p;

	up(&p);
	struct rocemu_mw *mw = rocemu_mw_alloc(p.b.pd, IBV_MW_TYPE_2);
	uint32_t rkey = bind_b(&p, mw, RW);
	struct ibv_qp_init_attr init = {
		.send_cq = (struct ibv_cq *)(void *)p.b.cq,
		.recv_cq = (struct ibv_cq *)(void *)p.b.cq,
		.qp_type = IBV_QPT_RC, .cap = { 4, 4, 1, 1, 0 },
	};
	struct rocemu_qp *other = rocemu_qp_new(p.b.pd, &init);
	uint8_t *mem = NULL;
	uint64_t va = addr_of(&p.b, WIN);

	ck_assert_ptr_nonnull(other);
	ck_assert_uint_ne(rkey_resolve(p.b.qp, rkey, va, 8,
				       IBV_ACCESS_REMOTE_WRITE, &mem), 0);
	ck_assert_ptr_eq(mem, p.b.buf + WIN);
	ck_assert_uint_eq(rkey_resolve(other, rkey, va, 8,
				       IBV_ACCESS_REMOTE_WRITE, &mem), 0);
	ck_assert_int_eq(mw_invalidate(other, rkey, true, false), -EINVAL);
	/* the window is still there for its own QP */
	ck_assert_uint_ne(rkey_resolve(p.b.qp, rkey, va, 8,
				       IBV_ACCESS_REMOTE_WRITE, &mem), 0);
	ck_assert_int_eq(rocemu_qp_free(other), 0);
	ck_assert_int_eq(rocemu_mw_dealloc(mw), 0);
	pair_down(&p);
}
END_TEST

/* A QP destroyed with a type 2 window bound through it: the window ends
 * with it (its MR may go, it may be bound again). */
START_TEST(test_qp_destroy_unbinds_type2)
{
	struct pair p;
	struct ibv_qp_init_attr init = {
		.send_cq = NULL, .recv_cq = NULL,
		.qp_type = IBV_QPT_RC, .cap = { 4, 4, 1, 1, 0 },
	};

	up(&p);
	init.send_cq = init.recv_cq = (struct ibv_cq *)(void *)p.b.cq;
	struct rocemu_qp *other = rocemu_qp_new(p.b.pd, &init);
	struct rocemu_mr *mr = rocemu_mr_reg(p.b.pd, p.b.buf, 8192,
					     MR_BINDABLE);
	struct rocemu_mw *mw = rocemu_mw_alloc(p.b.pd, IBV_MW_TYPE_2);
	struct swqe wqe = { .opcode = IBV_WR_BIND_MW };
	uint8_t *mem;

	ck_assert_ptr_nonnull(other);
	wqe.bind.mw_index = rocemu_mw_rkey(mw) >> 8;
	wqe.bind.mr_key = rocemu_mr_lkey(mr);
	wqe.bind.new_rkey = 0x17;
	wqe.bind.access = IBV_ACCESS_REMOTE_WRITE;
	wqe.bind.addr = addr_of(&p.b, 0);
	wqe.bind.len = 4096;
	/* the requester's step, done here on a QP that never connects */
	ck_assert_int_eq(mw_bind(other, &wqe), 0);
	uint32_t rkey = rocemu_mw_rkey(mw);
	ck_assert_uint_ne(rkey_resolve(other, rkey, wqe.bind.addr, 8,
				       IBV_ACCESS_REMOTE_WRITE, &mem), 0);
	ck_assert_int_eq(rocemu_mr_dereg(mr), -EBUSY);
	ck_assert_int_eq(rocemu_qp_free(other), 0);
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	/* unbound, so free to be bound again (through b's QP) */
	mr = rocemu_mr_reg(p.b.pd, p.b.buf, 8192, MR_BINDABLE);
	wqe.bind.mr_key = rocemu_mr_lkey(mr);
	ck_assert_int_eq(mw_bind(p.b.qp, &wqe), 0);
	ck_assert_int_eq(rocemu_mw_dealloc(mw), 0);
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	pair_down(&p);
}
END_TEST

/* ---- the bind rules ---------------------------------------------------- */

/* Each bind the IBTA refuses completes with MW_BIND_ERR and takes the QP
 * to ERROR (rxe); the window stays unbound. _i picks. */
START_TEST(test_bind_rules)
{
	static const char *const what[] = {
		"MR without MW_BIND", "range past the MR's end",
		"range before the MR", "remote write on an MR without local write",
		"type 2 bound twice", "type 2 of length 0",
		"window of another PD", "MR of another PD",
		"type 1 zero based", "unknown access bit",
	};
	struct pair p;
	struct rocemu_pd *other;
	enum ibv_mw_type t = _i == 8 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2;
	int access = IBV_ACCESS_REMOTE_WRITE;
	uint64_t addr, len = 256;

	up(&p);
	other = rocemu_pd_alloc(p.b.dev);
	struct rocemu_mw *mw = rocemu_mw_alloc(_i == 6 ? other : p.b.pd, t);
	struct rocemu_mr *mr = rocemu_mr_reg(
		_i == 7 ? other : p.b.pd, p.b.buf + WIN, WIN_LEN,
		_i == 0 ? IBV_ACCESS_LOCAL_WRITE
		: _i == 3 ? IBV_ACCESS_MW_BIND | IBV_ACCESS_REMOTE_READ
			  : MR_BINDABLE);
	ck_assert_ptr_nonnull(mr);
	addr = addr_of(&p.b, WIN);
	switch (_i) {
	case 1: addr += WIN_LEN - len + 1; break;
	case 2: addr -= 1; break;
	case 4:
		ck_assert_int_eq(post_bind(&p.b, 5, mw, mr, 0, addr, len, access),
				 0);
		ck_assert_int_eq(poll1(&p, &p.b).status, IBV_WC_SUCCESS);
		break;
	case 5: len = 0; break;
	case 8: access |= IBV_ACCESS_ZERO_BASED; break;
	case 9: access |= IBV_ACCESS_MW_BIND; break;
	}
	uint32_t before = rocemu_mw_rkey(mw);
	ck_assert_int_eq(post_bind(&p.b, 1, mw, len ? mr : NULL, before + 1,
				   addr, len, access), 0);
	ck_assert_int_eq(post_op(&p.b, 2, IBV_WR_SEND, 0), 0);
	struct ibv_wc wc = poll1(&p, &p.b);
	ck_assert_msg(wc.status == IBV_WC_MW_BIND_ERR, "%s: status %d",
		      what[_i], wc.status);
	ck_assert_int_eq(wc.opcode, IBV_WC_BIND_MW);
	ck_assert_uint_eq(wc.wr_id, 1);
	wc = poll1(&p, &p.b);
	ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(state_of(&p.b), IBV_QPS_ERR);
	/* nothing changed: the key byte is the old one */
	ck_assert_uint_eq(rocemu_mw_rkey(mw), before);
	ck_assert_int_eq(rocemu_mw_dealloc(mw), 0);
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	ck_assert_int_eq(rocemu_pd_free(other), 0);
	pair_down(&p);
}
END_TEST

/* ---- invalidation that must fail ----------------------------------------- */

/* LOCAL_INV of a type 1 window or of an MR's key: LOC_QP_OP_ERR, the QP
 * to ERROR, the window still usable by the peer. _i: 0 type 1, 1 MR. */
START_TEST(test_local_inv_refused)
{
	struct pair p;

	up(&p);
	struct rocemu_mw *mw = rocemu_mw_alloc(p.b.pd, IBV_MW_TYPE_1);
	uint32_t rkey = bind_b(&p, mw, RW);
	ck_assert_int_eq(post_op(&p.b, 3, IBV_WR_LOCAL_INV,
				 _i ? rocemu_mr_rkey(p.b.mr) : rkey), 0);
	struct ibv_wc wc = poll1(&p, &p.b);
	ck_assert_int_eq(wc.status, IBV_WC_LOC_QP_OP_ERR);
	ck_assert_int_eq(wc.opcode, IBV_WC_LOCAL_INV);
	ck_assert_int_eq(state_of(&p.b), IBV_QPS_ERR);
	/* the MR is bound still: its window was not invalidated */
	ck_assert_int_eq(rocemu_mr_dereg(p.b.mr), -EBUSY);
	ck_assert_int_eq(rocemu_mw_dealloc(mw), 0);
	pair_down(&p);
}
END_TEST

/* SEND with Invalidate naming a type 1 window (o10-37.2.26) or an
 * ordinary MR: NAK invalid request, the sender's WQE REM_INV_REQ_ERR, the
 * receive WQE too, the receiver's QP in ERROR; the window stays bound.
 * _i: 0 type 1 window, 1 MR. */
START_TEST(test_send_with_inv_refused)
{
	struct pair p;

	up(&p);
	struct rocemu_mw *mw = rocemu_mw_alloc(p.b.pd, IBV_MW_TYPE_1);
	uint32_t rkey = bind_b(&p, mw, RW);
	ck_assert_int_eq(post_recv1(&p.b, 8, 0, 64), 0);
	ck_assert_int_eq(post_op(&p.a, 1, IBV_WR_SEND_WITH_INV,
				 _i ? rocemu_mr_rkey(p.b.mr) : rkey), 0);
	struct ibv_wc wc = poll1(&p, &p.a);
	ck_assert_int_eq(wc.status, IBV_WC_REM_INV_REQ_ERR);
	wc = poll1(&p, &p.b);
	ck_assert_uint_eq(wc.wr_id, 8);
	ck_assert_int_ne(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(state_of(&p.b), IBV_QPS_ERR);
	ck_assert_uint_eq(rocemu_dev_counter(p.b.dev,
					     ROCEMU_CNT_NAK_SENT_INV_REQ), 1);
	ck_assert_int_eq(rocemu_mr_dereg(p.b.mr), -EBUSY);
	ck_assert_int_eq(rocemu_mw_dealloc(mw), 0);
	pair_down(&p);
}
END_TEST

/*
 * A window deallocated while a long READ through it is being answered
 * (responses go out in bursts of 16 per wire latency, check_reads.c):
 * the rest of the response is a NAK remote access error, the READ fails
 * with REM_ACCESS_ERR, and no byte past what was sent before arrives.
 */
START_TEST(test_dealloc_during_read_response)
{
	struct pair p;
	struct pair_opts o = { .mr_access = MR_BINDABLE, .len = 128 * 1024 };
	enum { LEN = 64 * 1024, LATENCY_NS = 1000 };

	pair_up(&p, &o);
	memset(p.b.buf, 0x5c, p.b.len);
	struct rocemu_mw *mw = rocemu_mw_alloc(p.b.pd, IBV_MW_TYPE_2);
	ck_assert_int_eq(post_bind(&p.b, 7, mw, p.b.mr, 0x42, addr_of(&p.b, 0),
				   LEN, RW), 0);
	ck_assert_int_eq(poll1(&p, &p.b).status, IBV_WC_SUCCESS);
	uint32_t rkey = rocemu_mw_rkey(mw);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_READ, 1, 0, LEN,
				    addr_of(&p.b, 0), rkey, 0), 0);
	rocemu_world_advance(p.w, LATENCY_NS);
	uint64_t sent = rocemu_dev_counter(p.b.dev, ROCEMU_CNT_TX_PACKETS);
	ck_assert_uint_gt(sent, 0);
	ck_assert_int_eq(rocemu_mw_dealloc(mw), 0);
	expect_remote_access_error(&p);
	/* the packets sent before the dealloc (1 KiB each), nothing after */
	ck_assert_uint_lt(sent * 1024, LEN);
	for (size_t i = 0; i < LEN; i++)
		ck_assert_uint_eq(p.a.buf[i], i < sent * 1024 ? 0x5c : 0);
	pair_down(&p);
}
END_TEST

Suite *mw_suite(void)
{
	Suite *s = suite_create("mw");
	TCase *tc = tcase_create("mw");

	tcase_add_test(tc, test_alloc_types_and_keys);
	tcase_add_loop_test(tc, test_peer_access_through_window, 0, 2);
	tcase_add_test(tc, test_zero_based_window);
	tcase_add_loop_test(tc, test_window_refuses, 0, 11);
	tcase_add_test(tc, test_type2_window_belongs_to_its_qp);
	tcase_add_test(tc, test_qp_destroy_unbinds_type2);
	tcase_add_loop_test(tc, test_bind_rules, 0, 10);
	tcase_add_loop_test(tc, test_local_inv_refused, 0, 2);
	tcase_add_loop_test(tc, test_send_with_inv_refused, 0, 2);
	tcase_add_test(tc, test_dealloc_during_read_response);
	suite_add_tcase(s, tc);
	return s;
}
