/* SPDX-License-Identifier: MIT */
/* What a peer may not make the device do: objects that went away between packets, remote invalidation, opcodes it does not serve. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../emu/core/idgen.h"
#include "check_pair.h"
#include "check_suites.h"

/* A request packet from a's address to b's QP, as a peer would craft it. */
struct req {
	uint8_t opcode;
	uint32_t psn;
	bool ackreq;
	uint64_t va;
	uint32_t rkey, len;	/* RETH */
	uint32_t ieth;
	const uint8_t *payload;
	uint32_t plen;
};

static void inject(struct pair *p, const struct req *r)
{
	struct roce_frame f;
	uint8_t *buf = malloc(8192);
	uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, a4);
	roce_gid_from_ipv4(f.dst_gid, b4);
	f.sport = 0xc000;
	f.ib.bth.opcode = r->opcode;
	f.ib.bth.dqpn = rocemu_qp_num(p->b.qp);
	f.ib.bth.psn = r->psn;
	f.ib.bth.ackreq = r->ackreq;
	f.ib.bth.pad = (uint8_t)roce_pad_len(r->plen);
	f.ib.reth.va = r->va;
	f.ib.reth.rkey = r->rkey;
	f.ib.reth.len = r->len;
	f.ib.ieth = r->ieth;
	f.ib.payload = r->payload;
	f.ib.payload_len = r->plen;
	int n = roce_frame_build(&f, buf, 8192);
	ck_assert_int_gt(n, 0);
	rocemu_world_inject(p->w, buf, (size_t)n);
	rocemu_world_settle(p->w, 1000000);
	free(buf);
}

static uint64_t cnt(struct side *s, enum rocemu_counter c)
{
	return rocemu_dev_counter(s->dev, c);
}

static enum ibv_qp_state qp_state(struct rocemu_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr init;

	ck_assert_int_eq(rocemu_qp_query(qp, &a, &init), 0);
	return a.qp_state;
}

enum { KIB = 1024 };

/*
 * A peer's multi-packet WRITE whose MR is deregistered after its FIRST
 * packet: the rest is NAKed (remote access) and not one byte of it lands
 * in the memory the application has taken back.
 */
START_TEST(test_write_after_dereg_is_naked)
{
	struct pair p;
	struct pair_opts o = { 0 };
	uint8_t *mem = calloc(1, 4 * KIB), data[KIB];

	pair_up(&p, &o);
	struct rocemu_mr *mr = rocemu_mr_reg(p.b.pd, mem, 4 * KIB,
					     IBV_ACCESS_LOCAL_WRITE |
						     IBV_ACCESS_REMOTE_WRITE);
	ck_assert_ptr_nonnull(mr);
	uint64_t va = (uint64_t)(uintptr_t)mem;
	struct req r = { .opcode = 0x06, .psn = 0, .va = va,
			 .rkey = rocemu_mr_rkey(mr), .len = 3 * KIB,
			 .payload = data, .plen = KIB };
	memset(data, 0xab, sizeof(data));
	inject(&p, &r);
	ck_assert_uint_eq(mem[0], 0xab);
	ck_assert_uint_eq(mem[KIB - 1], 0xab);
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	memset(data, 0xcd, sizeof(data));
	r = (struct req){ .opcode = 0x07, .psn = 1, .payload = data,
			  .plen = KIB };
	inject(&p, &r);
	r.opcode = 0x08;
	r.psn = 2;
	r.ackreq = true;
	inject(&p, &r);
	for (size_t i = KIB; i < 4 * KIB; i++)
		ck_assert_uint_eq(mem[i], 0);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_NAK_SENT_REM_ACCESS), 1);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_ACKS_SENT), 0);
	ck_assert_int_eq(qp_state(p.b.qp), IBV_QPS_ERR);
	pair_down(&p);
	free(mem);
}
END_TEST

/* The same when the range is registered again between the packets, even
 * if the new registration happened to get the same key: the message
 * began under another registration. */
START_TEST(test_write_after_reregistration_is_naked)
{
	struct pair p;
	struct pair_opts o = { 0 };
	uint8_t *mem = calloc(1, 4 * KIB), data[KIB];
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	pair_up(&p, &o);
	struct rocemu_mr *mr = rocemu_mr_reg(p.b.pd, mem, 4 * KIB, access);
	struct req r = { .opcode = 0x06, .va = (uint64_t)(uintptr_t)mem,
			 .rkey = rocemu_mr_rkey(mr), .len = 2 * KIB,
			 .payload = data, .plen = KIB };
	memset(data, 0x11, sizeof(data));
	inject(&p, &r);
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	mr = rocemu_mr_reg(p.b.pd, mem, 4 * KIB, access);
	ck_assert_ptr_nonnull(mr);
	r = (struct req){ .opcode = 0x08, .psn = 1, .ackreq = true,
			  .payload = data, .plen = KIB };
	memset(data, 0x22, sizeof(data));
	inject(&p, &r);
	ck_assert_uint_eq(mem[KIB], 0);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_NAK_SENT_REM_ACCESS), 1);
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	pair_down(&p);
	free(mem);
}
END_TEST

/* Takes both QPs back through RESET to RTS, with fresh PSNs. */
static void reconnect(struct pair *p)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct pair_opts o = { 0 };
	uint8_t ga[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 1 };
	uint8_t gb[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 2 };

	ck_assert_int_eq(rocemu_qp_modify(p->a.qp, &reset, IBV_QP_STATE), 0);
	ck_assert_int_eq(rocemu_qp_modify(p->b.qp, &reset, IBV_QP_STATE), 0);
	ck_assert_int_eq(qp_connect(p->a.qp, rocemu_qp_num(p->b.qp), gb, 50,
				    60, &o), 0);
	ck_assert_int_eq(qp_connect(p->b.qp, rocemu_qp_num(p->a.qp), ga, 60,
				    50, &o), 0);
}

/* Drains s's CQ. */
static void drain(struct pair *p, struct side *s)
{
	struct ibv_wc wc[16];

	rocemu_world_settle(p->w, 1000000000);
	while (rocemu_cq_poll(s->cq, 16, wc) > 0)
		;
}

/*
 * SEND with Invalidate naming an ordinary MR: the peer may invalidate only
 * type 2 windows and fast-registration MRs. The request is refused (NAK
 * invalid request; the sender sees REM_INV_REQ_ERR, the receive completes
 * in error) and the MR stays valid: a WRITE into it still works.
 */
START_TEST(test_send_invalidate_of_an_mr_refused)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	pair_up(&p, &o);
	memset(p.a.buf, 0x5a, 16);
	sge = (struct ibv_sge){ addr_of(&p.a, 0), 16, rocemu_mr_lkey(p.a.mr) };
	wr.invalidate_rkey = rocemu_mr_rkey(p.b.mr);
	post_recv1(&p.b, 1, 0, 64);
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0);
	struct ibv_wc wc = poll1(&p, &p.a);
	ck_assert_int_eq(wc.status, IBV_WC_REM_INV_REQ_ERR);
	wc = poll1(&p, &p.b);
	ck_assert_uint_eq(wc.wr_id, 1);
	ck_assert_int_eq(wc.status, IBV_WC_REM_INV_REQ_ERR);
	for (int i = 0; i < 16; i++) /* a refused message is not placed */
		ck_assert_uint_eq(p.b.buf[i], 0);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_NAK_SENT_INV_REQ), 1);
	drain(&p, &p.a);
	drain(&p, &p.b);
	reconnect(&p);
	memset(p.a.buf, 0x5e, 64);
	post_send1(&p.a, IBV_WR_RDMA_WRITE, 2, 0, 64, addr_of(&p.b, 128),
		   rocemu_mr_rkey(p.b.mr), 0);
	wc = poll1(&p, &p.a);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(p.b.buf[128], 0x5e);
	ck_assert_uint_eq(p.b.buf[191], 0x5e);
	pair_down(&p);
}
END_TEST

/* The requester's side of the same rule: a WQE whose local MR goes away
 * while it is outstanding completes with a local protection error, and
 * the memory is neither read nor written after dereg returned. */
START_TEST(test_read_into_deregistered_local_mr)
{
	struct pair p;
	struct pair_opts o = { 0 };
	uint8_t *mem = calloc(1, 4 * KIB);

	pair_up(&p, &o);
	memset(p.b.buf, 0x77, 2 * KIB);
	struct rocemu_mr *mr = rocemu_mr_reg(p.a.pd, mem, 4 * KIB,
					     IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { (uint64_t)(uintptr_t)mem, 2 * KIB,
			       rocemu_mr_lkey(mr) };
	struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.wr.rdma.remote_addr = addr_of(&p.b, 0);
	wr.wr.rdma.rkey = rocemu_mr_rkey(p.b.mr);
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0);
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	struct ibv_wc wc = poll1(&p, &p.a);
	ck_assert_int_eq(wc.status, IBV_WC_LOC_PROT_ERR);
	for (size_t i = 0; i < 4 * KIB; i++)
		ck_assert_uint_eq(mem[i], 0);
	pair_down(&p);
	free(mem);
}
END_TEST

/* A SEND held back by an RNR NAK whose buffer is deregistered meanwhile:
 * the retry finds the key gone and fails locally. */
START_TEST(test_send_retry_after_local_dereg)
{
	struct pair p;
	struct pair_opts o = { .min_rnr_timer = 14 };
	uint8_t *mem = malloc(4 * KIB);

	pair_up(&p, &o);
	memset(mem, 0x42, 4 * KIB);
	struct rocemu_mr *mr = rocemu_mr_reg(p.a.pd, mem, 4 * KIB, 0);
	struct ibv_sge sge = { (uint64_t)(uintptr_t)mem, 3 * KIB,
			       rocemu_mr_lkey(mr) };
	struct ibv_send_wr wr = { .wr_id = 4, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0);
	rocemu_world_run(p.w); /* sent; b has no receive: RNR NAK */
	rocemu_world_advance(p.w, 10000);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_NAK_SENT_RNR), 1);
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	post_recv1(&p.b, 1, 0, 4 * KIB);
	struct ibv_wc wc = poll1(&p, &p.a);
	ck_assert_int_eq(wc.status, IBV_WC_LOC_PROT_ERR);
	pair_down(&p);
	free(mem);
}
END_TEST

/* ---- the application's side: objects and their lifetimes --------- */

/* Gives side a a new RC QP completing into cq, connected afresh to b's. */
static void a_qp_on(struct pair *p, struct rocemu_cq *cq)
{
	struct ibv_qp_init_attr init = { .send_cq = (struct ibv_cq *)(void *)cq,
					 .recv_cq = (struct ibv_cq *)(void *)cq,
					 .qp_type = IBV_QPT_RC,
					 .cap = { 16, 16, 1, 1, 0 } };

	ck_assert_int_eq(rocemu_qp_free(p->a.qp), 0);
	p->a.qp = rocemu_qp_new(p->a.pd, &init);
	ck_assert_ptr_nonnull(p->a.qp);
	reconnect(p);
}

/* An armed CQ whose events nobody reads, re-armed and completed 20 000
 * times: its events coalesce into one, and the device never waits on the
 * application (a pipe of pointers filled after about 8 000). */
START_TEST(test_channel_events_coalesce)
{
	struct pair p;
	struct pair_opts o = { .cq_size = 1 << 16 };
	struct rocemu_cq *got;

	pair_up(&p, &o);
	struct rocemu_channel *ch = rocemu_channel_new(p.a.dev);
	ck_assert_ptr_nonnull(ch);
	/* a's QP completes into a CQ on the channel */
	struct rocemu_cq *cq = rocemu_cq_new(p.a.dev, 1 << 16, ch);
	a_qp_on(&p, cq);
	for (int i = 0; i < 20000; i++) {
		ck_assert_int_eq(rocemu_cq_req_notify(cq, false), 0);
		post_send1(&p.a, IBV_WR_RDMA_WRITE, (uint64_t)i, 0, 8,
			   addr_of(&p.b, 0), rocemu_mr_rkey(p.b.mr), 0);
		rocemu_world_settle(p.w, 1000000000);
	}
	struct pollfd pfd = { rocemu_channel_fd(ch), POLLIN, 0 };
	ck_assert_int_eq(poll(&pfd, 1, 0), 1);
	ck_assert_int_eq(rocemu_channel_try_event(ch, &got), 0);
	ck_assert_ptr_eq(got, cq);
	ck_assert_int_eq(rocemu_channel_try_event(ch, &got), -EAGAIN);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	struct ibv_wc wc[64];
	int n = 0, k;
	while ((k = rocemu_cq_poll(cq, 64, wc)) > 0)
		n += k;
	ck_assert_int_eq(n, 20000);
	a_qp_on(&p, p.a.cq);
	ck_assert_int_eq(rocemu_cq_free(cq), 0);
	ck_assert_int_eq(rocemu_channel_free(ch), 0);
	pair_down(&p);
}
END_TEST

/* Two CQs with an event each on one channel; the first is destroyed
 * before its event is read: the channel hands out only the other, then
 * nothing (the kernel discards a destroyed CQ's unread events). */
START_TEST(test_destroyed_cq_event_discarded)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct rocemu_cq *got, *cq[2];

	pair_up(&p, &o);
	struct rocemu_channel *ch = rocemu_channel_new(p.a.dev);
	for (int i = 0; i < 2; i++)
		cq[i] = rocemu_cq_new(p.a.dev, 16, ch);
	/* b's QP sends into cq[0], then into cq[1], each armed */
	for (int i = 0; i < 2; i++) {
		a_qp_on(&p, cq[i]);
		ck_assert_int_eq(rocemu_cq_req_notify(cq[i], false), 0);
		post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 8, addr_of(&p.b, 0),
			   rocemu_mr_rkey(p.b.mr), 0);
		rocemu_world_settle(p.w, 1000000000);
	}
	ck_assert_int_eq(rocemu_cq_free(cq[0]), 0);
	ck_assert_int_eq(rocemu_channel_try_event(ch, &got), 0);
	ck_assert_ptr_eq(got, cq[1]);
	ck_assert_int_eq(rocemu_channel_try_event(ch, &got), -EAGAIN);
	a_qp_on(&p, p.a.cq);
	ck_assert_int_eq(rocemu_cq_free(cq[1]), 0);
	ck_assert_int_eq(rocemu_channel_free(ch), 0);
	pair_down(&p);
}
END_TEST

/* A QP's asynchronous event still queued when it is destroyed goes with
 * it: nothing handed out later names the freed QP. */
START_TEST(test_destroyed_qp_async_event_discarded)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_async_event ev;
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };

	pair_up(&p, &o);
	/* a remote access error puts b's QP in ERROR with an event */
	post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 8, 0, 12345, 0);
	rocemu_world_settle(p.w, 1000000000);
	ck_assert_int_eq(rocemu_qp_modify(p.a.qp, &err, IBV_QP_STATE), 0);
	struct pollfd pfd = { rocemu_dev_async_fd(p.b.dev), POLLIN, 0 };
	ck_assert_int_eq(poll(&pfd, 1, 0), 1);
	ck_assert_int_eq(rocemu_qp_free(p.b.qp), 0);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	ck_assert_int_eq(rocemu_dev_get_async_event(p.b.dev, &ev), -EAGAIN);
	p.b.qp = rocemu_qp_new(p.b.pd, &(struct ibv_qp_init_attr){
		.send_cq = (struct ibv_cq *)(void *)p.b.cq,
		.recv_cq = (struct ibv_cq *)(void *)p.b.cq,
		.qp_type = IBV_QPT_RC, .cap = { 16, 16, 1, 1, 0 } });
	pair_down(&p);
}
END_TEST

/* ibv_reg_mr's checks: unmapped memory, or read-only memory with a write
 * access, is EFAULT, as the kernel answers; read-only memory registered
 * for remote reads only is fine. */
START_TEST(test_register_unmapped_or_read_only)
{
	struct pair p;
	struct pair_opts o = { 0 };
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, (size_t)pg * 3, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	pair_up(&p, &o);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(munmap(m + 2 * pg, (size_t)pg), 0);
	ck_assert_int_eq(mprotect(m + pg, (size_t)pg, PROT_READ), 0);
	struct rocemu_mr *mr = rocemu_mr_reg(p.b.pd, m + 2 * pg, 64, rw);
	ck_assert_ptr_null(mr);
	ck_assert_int_eq(errno, EFAULT);
	/* mapped, then a hole */
	errno = 0;
	ck_assert_ptr_null(rocemu_mr_reg(p.b.pd, m + pg, (size_t)pg + 1,
					 IBV_ACCESS_REMOTE_READ));
	ck_assert_int_eq(errno, EFAULT);
	/* read-only: no write access of any kind */
	errno = 0;
	ck_assert_ptr_null(rocemu_mr_reg(p.b.pd, m + pg, 64, rw));
	ck_assert_int_eq(errno, EFAULT);
	ck_assert_ptr_null(rocemu_mr_reg(p.b.pd, m + pg, 64,
					 IBV_ACCESS_LOCAL_WRITE));
	mr = rocemu_mr_reg(p.b.pd, m + pg, 64, IBV_ACCESS_REMOTE_READ);
	ck_assert_ptr_nonnull(mr);
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	/* across two writable-and-readable pages and one read-only one */
	mr = rocemu_mr_reg(p.b.pd, m, (size_t)pg * 2, IBV_ACCESS_REMOTE_READ);
	ck_assert_ptr_nonnull(mr);
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	ck_assert_ptr_null(rocemu_mr_reg(p.b.pd, m, (size_t)pg * 2, rw));
	munmap(m, (size_t)pg * 2);
	pair_down(&p);
}
END_TEST

/* QP numbers wrap from 0xffffff to 0x11: never 0 or 1 (the special QPs),
 * never a number a live QP holds. */
START_TEST(test_qpn_wrap_skips_reserved_and_live)
{
	struct rocemu_world *w = rocemu_world_new(1);
	struct rocemu_dev_cfg cfg = { .name = "wrap", .mtu = IBV_MTU_1024,
				      .gid = { [10] = 0xff, [11] = 0xff,
					       [12] = 10, [15] = 9 },
				      .first_qpn = 0xfffffe };
	struct rocemu_dev *d = rocemu_dev_new(w, &cfg);
	struct rocemu_pd *pd = rocemu_pd_alloc(d);
	struct rocemu_cq *cq = rocemu_cq_new(d, 16, NULL);
	struct ibv_qp_init_attr init = { .send_cq = (struct ibv_cq *)(void *)cq,
					 .recv_cq = (struct ibv_cq *)(void *)cq,
					 .qp_type = IBV_QPT_RC,
					 .cap = { 1, 1, 1, 1, 0 } };
	struct rocemu_qp *q[4];

	for (int i = 0; i < 4; i++)
		ck_assert_ptr_nonnull(q[i] = rocemu_qp_new(pd, &init));
	ck_assert_uint_eq(rocemu_qp_num(q[0]), 0xfffffe);
	ck_assert_uint_eq(rocemu_qp_num(q[1]), 0xffffff);
	ck_assert_uint_eq(rocemu_qp_num(q[2]), 0x11);
	ck_assert_uint_eq(rocemu_qp_num(q[3]), 0x12);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(rocemu_qp_free(q[i]), 0);
	ck_assert_int_eq(rocemu_cq_free(cq), 0);
	ck_assert_int_eq(rocemu_pd_free(pd), 0);
	rocemu_dev_free(d);
	rocemu_world_free(w);
}
END_TEST

static bool in_set(void *arg, uint32_t n)
{
	const uint32_t *set = arg;

	for (int i = 0; set[i]; i++)
		if (set[i] == n)
			return true;
	return false;
}

/* The allocator itself over a small range: after a wrap it skips what is
 * in use, and says so when nothing is left. */
START_TEST(test_idgen_skips_live_numbers)
{
	struct idgen g;
	uint32_t live[8] = { 0x11, 0x13, 0x14 }, n;

	idgen_init(&g, 0x11, 0x15, 0x15);
	ck_assert_int_eq(idgen_take(&g, in_set, live, &n), 0);
	ck_assert_uint_eq(n, 0x15);
	ck_assert_int_eq(idgen_take(&g, in_set, live, &n), 0);
	ck_assert_uint_eq(n, 0x12); /* 0x11 lives */
	live[3] = 0x12;
	live[4] = 0x15;
	ck_assert_int_eq(idgen_take(&g, in_set, live, &n), -ENOSPC);
	live[0] = 0x16; /* 0x11 is free again */
	ck_assert_int_eq(idgen_take(&g, in_set, live, &n), 0);
	ck_assert_uint_eq(n, 0x11);
}
END_TEST

Suite *safety_suite(void)
{
	Suite *s = suite_create("safety");
	TCase *tc = tcase_create("peer");

	tcase_add_test(tc, test_write_after_dereg_is_naked);
	tcase_add_test(tc, test_write_after_reregistration_is_naked);
	tcase_add_test(tc, test_send_invalidate_of_an_mr_refused);
	suite_add_tcase(s, tc);
	tc = tcase_create("objects");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_read_into_deregistered_local_mr);
	tcase_add_test(tc, test_send_retry_after_local_dereg);
	tcase_add_test(tc, test_channel_events_coalesce);
	tcase_add_test(tc, test_destroyed_cq_event_discarded);
	tcase_add_test(tc, test_destroyed_qp_async_event_discarded);
	tcase_add_test(tc, test_register_unmapped_or_read_only);
	tcase_add_test(tc, test_qpn_wrap_skips_reserved_and_live);
	tcase_add_test(tc, test_idgen_skips_live_numbers);
	suite_add_tcase(s, tc);
	return s;
}
