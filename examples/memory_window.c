// SPDX-License-Identifier: MIT
/*
 * Memory windows: handing a peer access to part of a buffer, and taking it
 * back. b registers its buffer again, with no remote rights at all, only
 * IBV_ACCESS_MW_BIND; then it binds a type 2 memory window over 1 KiB of it
 * with remote write, by posting a BIND_MW work request on its own QP. The
 * window has its own rkey: a can WRITE there, and nowhere else. Then a
 * takes the access back for b with SEND with Invalidate naming the
 * window's rkey (b's receive completion says which key went), and a's next
 * WRITE through it fails with IBV_WC_REM_ACCESS_ERR: b's QP NAKed it.
 *   cc -o memory_window memory_window.c pair.c -libverbs
 */
#include "pair.h"

#include <stdio.h>
#include <string.h>

enum { WIN_OFF = 2048, WIN_LEN = 1024 };

int main(void)
{
	struct pair p;
	struct ibv_wc wc;
	struct ibv_mr *mr = NULL;
	struct ibv_mw *mw = NULL;
	int ok = 0;

	if (pair_open(&p, 8192, 0) || pair_add_qps(&p, IBV_QPT_RC, NULL))
		goto out;
	/* The MR that windows are bound to: local write (a window with
	 * remote write needs it, IBTA C10-74), no remote access itself. */
	mr = ibv_reg_mr(p.pd, p.b.buf, 8192,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2);
	if (!mr || !mw)
		goto out;
	/* The bind is a work request: it runs in order with b's other WRs
	 * and completes on b's send CQ. Its rkey keeps the window's index
	 * (the top 24 bits) and takes a new low byte from the WR. */
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr bind = {
		.wr_id = 1, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey,
			     .bind_info = { .mr = mr,
					    .addr = (uintptr_t)p.b.buf + WIN_OFF,
					    .length = WIN_LEN,
					    .mw_access_flags =
						    IBV_ACCESS_REMOTE_WRITE } },
	}, *bad;
	if (ibv_post_send(p.b.qp, &bind, &bad) || pair_wait(p.b.cq, &wc) ||
	    wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_BIND_MW)
		goto out;
	printf("b: bound a window over [%d, %d) of its buffer, rkey 0x%x\n",
	       WIN_OFF, WIN_OFF + WIN_LEN, rkey);

	/* a writes through the window: the window's rkey, b's address. */
	memset(p.a.buf, 'm', 512);
	struct ibv_send_wr wr = {
		.wr_id = 2, .opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = (uintptr_t)p.b.buf + WIN_OFF + 256,
			     .rkey = rkey },
	};
	if (pair_post_send(&p.a, &wr, p.a.buf, 512) || pair_wait(p.a.cq, &wc) ||
	    wc.status != IBV_WC_SUCCESS ||
	    memcmp(p.b.buf + WIN_OFF + 256, p.a.buf, 512))
		goto out;
	printf("a: WRITE of 512 bytes through the window: %s\n",
	       ibv_wc_status_str(wc.status));

	/* a ends b's window: SEND with Invalidate carries the rkey in its
	 * IETH; b's QP invalidates the window before completing the receive. */
	if (pair_post_recv(&p.b, 3, p.b.buf, 16))
		goto out;
	struct ibv_send_wr inv = { .wr_id = 4, .opcode = IBV_WR_SEND_WITH_INV,
				   .invalidate_rkey = rkey };
	if (pair_post_send(&p.a, &inv, p.a.buf, 16) || pair_wait(p.a.cq, &wc) ||
	    wc.status != IBV_WC_SUCCESS || pair_wait(p.b.cq, &wc) ||
	    wc.status != IBV_WC_SUCCESS || !(wc.wc_flags & IBV_WC_WITH_INV) ||
	    wc.invalidated_rkey != rkey)
		goto out;
	printf("b: receive completed WITH_INV, rkey 0x%x invalidated\n",
	       wc.invalidated_rkey);

	/* The same WRITE again: b's responder finds no valid window under
	 * the key and NAKs it (remote access error); both QPs go to error. */
	wr.wr_id = 5;
	if (pair_post_send(&p.a, &wr, p.a.buf, 512) || pair_wait(p.a.cq, &wc))
		goto out;
	printf("a: WRITE through the invalidated window: %s\n",
	       ibv_wc_status_str(wc.status));
	ok = wc.status == IBV_WC_REM_ACCESS_ERR;
out:
	/* A window is deallocated before the MR it was bound to. */
	if (mw)
		ibv_dealloc_mw(mw);
	if (mr)
		ibv_dereg_mr(mr);
	pair_close(&p);
	return ok ? 0 : 1;
}
