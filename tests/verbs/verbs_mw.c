// SPDX-License-Identifier: MIT
/*
 * Memory windows through the verbs API, as a program written against
 * <infiniband/verbs.h> meets them: the device's capabilities, ibv_alloc_mw
 * of each type, ibv_bind_mw (type 1: the new rkey in mw->rkey, a BIND_MW
 * completion), IBV_WR_BIND_MW and IBV_WR_LOCAL_INV (type 2), peer WRITEs
 * through windows and after they are gone, and the MR a window holds.
 * Built with plain cc -libverbs and examples/pair.c; run on rocemu's
 * libibverbs.so.1. Prints one line per failed check and a closing
 * "verbs_mw: N passed, M failed".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../../examples/pair.h"
#include "verbs_check.h"

enum { WIN_OFF = 1024, WIN_LEN = 512 };

/* a WRITEs 64 bytes to b's buffer at off through rkey: its status. */
static int write_through(struct pair *p, uint32_t rkey, size_t off)
{
	struct ibv_wc wc;
	struct ibv_send_wr wr = {
		.wr_id = 50, .opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = (uintptr_t)p->b.buf + off,
			     .rkey = rkey },
	};

	if (pair_post_send(&p->a, &wr, p->a.buf, 64) || pair_wait(p->a.cq, &wc))
		return -1;
	return wc.status;
}

static void check_caps(struct pair *p)
{
	struct ibv_device_attr a;

	CHECK(!ibv_query_device(p->ctx, &a), "ibv_query_device");
	CHECK(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW, "MEM_WINDOW");
	CHECK(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B,
	      "MEM_WINDOW_TYPE_2B");
	CHECK(a.max_mw > 0, "max_mw %d", a.max_mw);
	errno = 0;
	CHECK(!ibv_alloc_mw(p->pd, (enum ibv_mw_type)3) && errno == EINVAL,
	      "type 3: errno %d", errno);
}

/* Type 1: ibv_bind_mw, the peer writes, a rebind of length 0 ends it. */
static void check_type1(struct pair *p, struct ibv_mr *mr)
{
	struct ibv_wc wc;
	struct ibv_mw *mw = ibv_alloc_mw(p->pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = {
		.wr_id = 7, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr,
			       .addr = (uintptr_t)p->b.buf + WIN_OFF,
			       .length = WIN_LEN,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};

	CHECK(mw && mw->type == IBV_MW_TYPE_1, "alloc type 1");
	if (!mw)
		return;
	uint32_t before = mw->rkey;
	CHECK(ibv_bind_mw(p->b.qp, mw, &bind) == 0, "ibv_bind_mw");
	CHECK(!pair_wait(p->b.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 7,
	      "bind completion: status %d opcode %d", wc.status, wc.opcode);
	/* the new key: same index, the next key byte */
	CHECK(mw->rkey == ibv_inc_rkey(before) && mw->rkey != before,
	      "rkey 0x%x after 0x%x", mw->rkey, before);
	CHECK(write_through(p, mw->rkey, WIN_OFF) == IBV_WC_SUCCESS,
	      "write through type 1");
	CHECK(!memcmp(p->b.buf + WIN_OFF, p->a.buf, 64), "data placed");
	/* while bound, the MR cannot go */
	CHECK(ibv_dereg_mr(mr) == EBUSY, "dereg of a bound MR");
	/* a window of type 2 is not bound with ibv_bind_mw */
	struct ibv_mw *mw2 = ibv_alloc_mw(p->pd, IBV_MW_TYPE_2);
	CHECK(mw2 && ibv_bind_mw(p->b.qp, mw2, &bind) == EINVAL,
	      "ibv_bind_mw of type 2");
	CHECK(mw2 && ibv_dealloc_mw(mw2) == 0, "dealloc type 2");
	/* unbound by a bind of length 0: the old rkey reaches nothing */
	uint32_t old = mw->rkey;
	bind.bind_info.length = 0;
	bind.bind_info.addr = 0;
	CHECK(ibv_bind_mw(p->b.qp, mw, &bind) == 0 && !pair_wait(p->b.cq, &wc) &&
		      wc.status == IBV_WC_SUCCESS,
	      "rebind of length 0");
	CHECK(ibv_dealloc_mw(mw) == 0, "dealloc type 1");
	CHECK(write_through(p, old, WIN_OFF) == IBV_WC_REM_ACCESS_ERR,
	      "write after the window went");
}

/* Type 2: IBV_WR_BIND_MW, then IBV_WR_LOCAL_INV, then dealloc. */
static void check_type2(struct pair *p, struct ibv_mr *mr)
{
	struct ibv_wc wc;
	struct ibv_send_wr *bad;
	struct ibv_mw *mw = ibv_alloc_mw(p->pd, IBV_MW_TYPE_2);

	CHECK(mw && mw->type == IBV_MW_TYPE_2, "alloc type 2");
	if (!mw)
		return;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr bind = {
		.wr_id = 8, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey,
			     .bind_info = { .mr = mr,
					    .addr = (uintptr_t)p->b.buf + WIN_OFF,
					    .length = WIN_LEN,
					    .mw_access_flags =
						    IBV_ACCESS_REMOTE_WRITE } },
	};
	CHECK(ibv_post_send(p->b.qp, &bind, &bad) == 0, "post BIND_MW");
	CHECK(!pair_wait(p->b.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_BIND_MW,
	      "BIND_MW completion %d", wc.status);
	CHECK(write_through(p, rkey, WIN_OFF + WIN_LEN - 64) == IBV_WC_SUCCESS,
	      "write to the window's end");
	struct ibv_send_wr inv = { .wr_id = 9, .opcode = IBV_WR_LOCAL_INV,
				   .send_flags = IBV_SEND_SIGNALED,
				   .invalidate_rkey = rkey };
	CHECK(ibv_post_send(p->b.qp, &inv, &bad) == 0, "post LOCAL_INV");
	CHECK(!pair_wait(p->b.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_LOCAL_INV,
	      "LOCAL_INV completion %d", wc.status);
	/* invalidated: the MR is free to go again, the window stays */
	CHECK(ibv_dealloc_mw(mw) == 0, "dealloc type 2");
	/* the last check: the NAK puts both QPs in error */
	CHECK(write_through(p, rkey, WIN_OFF) == IBV_WC_REM_ACCESS_ERR,
	      "write after LOCAL_INV");
}

/* Each check on a pair of its own: its last WRITE fails and leaves the
 * QPs in error. Windows are bound to an MR that grants no remote access. */
static void on_new_pair(void (*check)(struct pair *, struct ibv_mr *))
{
	struct pair p;

	if (pair_open(&p, 4096, 0) || pair_add_qps(&p, IBV_QPT_RC, NULL)) {
		CHECK(0, "pair");
		return;
	}
	struct ibv_mr *mr = ibv_reg_mr(p.pd, p.b.buf, 4096,
				       IBV_ACCESS_LOCAL_WRITE |
					       IBV_ACCESS_MW_BIND);
	CHECK(mr != NULL, "ibv_reg_mr with MW_BIND: errno %d", errno);
	if (mr) {
		check_caps(&p);
		check(&p, mr);
		CHECK(ibv_dereg_mr(mr) == 0, "dereg once no window is bound");
	}
	pair_close(&p);
}

int main(void)
{
	on_new_pair(check_type1);
	on_new_pair(check_type2);
	printf("verbs_mw: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
