// SPDX-License-Identifier: MIT
/*
 * Extended CQs, ibv_resize_cq and device memory through the verbs API, as
 * a program written against <infiniband/verbs.h> uses them: an RC pair
 * whose CQs are extended ones, every ibv_wc_read_* field of a SEND with
 * immediate and of RDMA WRITEs, completion timestamps, ordinary polling and completion events on
 * them, a resize with completions held, and a DM MR as the target of a
 * WRITE and the source of a SEND. Built with plain cc -libverbs and
 * examples/pair.c; run on rocemu's libibverbs.so.1. Prints one line per
 * failed check and a closing "verbs_cqex: N passed, M failed".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../examples/pair.h"
#include "verbs_check.h"

static struct ibv_cq_ex *xa, *xb; /* a's and b's CQs */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* ibv_start_poll until a completion is there (five seconds at most). */
static int start_poll(struct ibv_cq_ex *cq)
{
	struct ibv_poll_cq_attr attr = { 0 };
	double t0 = now_s();
	int rc;

	while ((rc = ibv_start_poll(cq, &attr)) == ENOENT &&
	       now_s() - t0 < 5)
		;
	return rc;
}

/* Everything the read ops say of the current completion, as an ibv_wc. */
static struct ibv_wc read_all(struct ibv_cq_ex *cq)
{
	struct ibv_wc wc = {
		.wr_id = cq->wr_id, .status = cq->status,
		.opcode = ibv_wc_read_opcode(cq),
		.vendor_err = ibv_wc_read_vendor_err(cq),
		.byte_len = ibv_wc_read_byte_len(cq),
		.qp_num = ibv_wc_read_qp_num(cq),
		.src_qp = ibv_wc_read_src_qp(cq),
		.wc_flags = ibv_wc_read_wc_flags(cq),
		.slid = (uint16_t)ibv_wc_read_slid(cq),
		.sl = ibv_wc_read_sl(cq),
		.dlid_path_bits = ibv_wc_read_dlid_path_bits(cq),
	};

	wc.imm_data = ibv_wc_read_imm_data(cq);
	return wc;
}

/* One completion through the extended ops, the poll ended again. */
static int poll_one_ex(struct ibv_cq_ex *cq, struct ibv_wc *wc)
{
	int rc = start_poll(cq);

	if (rc)
		return rc;
	*wc = read_all(cq);
	ibv_end_poll(cq);
	return 0;
}

static int post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		struct ibv_sge *sge, uint32_t imm, uint64_t raddr,
		uint32_t rkey)
{
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(imm) }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static int post_a(struct pair *p, enum ibv_wr_opcode op, uint64_t wr_id,
		  size_t off, size_t len, uint32_t imm)
{
	struct ibv_sge sge = { (uintptr_t)p->a.buf + off, (uint32_t)len,
			       p->a.mr->lkey };

	return post(p->a.qp, op, wr_id, &sge, imm,
		    (uintptr_t)p->b.buf + off, p->b.mr->rkey);
}

static struct ibv_cq_ex *make_cq_ex(struct pair *p, uint64_t wc_flags,
				    struct ibv_comp_channel *ch)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 64, .wc_flags = wc_flags,
					    .channel = ch,
					    .cq_context = p };

	return ibv_create_cq_ex(p->ctx, &attr);
}

/* The fields rxe offers and the timestamps are accepted, the rest
 * refused as rxe does. */
static void check_create(struct pair *p)
{
	static const uint64_t refused[] = {
		IBV_WC_EX_WITH_CVLAN, IBV_WC_EX_WITH_FLOW_TAG,
		IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_device_attr da;
	struct ibv_cq_init_attr_ex attr = { .cqe = 4 };
	struct ibv_cq_ex *cq;

	for (unsigned i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		errno = 0;
		cq = make_cq_ex(p, refused[i], NULL);
		CHECK(!cq && errno == EOPNOTSUPP,
		      "wc_flags %#llx: %p errno %d", (unsigned long long)
		      refused[i], (void *)cq, errno);
	}
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	attr.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	errno = 0;
	CHECK(!ibv_create_cq_ex(p->ctx, &attr) && errno == EOPNOTSUPP,
	      "creation flags: errno %d", errno);
	ibv_query_device(p->ctx, &da);
	attr = (struct ibv_cq_init_attr_ex){ .cqe = (uint32_t)da.max_cqe + 1 };
	errno = 0;
	CHECK(!ibv_create_cq_ex(p->ctx, &attr) && errno == EINVAL,
	      "cqe above max_cqe: errno %d", errno);
	attr = (struct ibv_cq_init_attr_ex){ .cqe = 4, .comp_vector = 1 };
	errno = 0;
	CHECK(!ibv_create_cq_ex(p->ctx, &attr) && errno == EINVAL,
	      "comp_vector 1: errno %d", errno);
	cq = make_cq_ex(p, IBV_WC_STANDARD_FLAGS, NULL);
	struct ibv_poll_cq_attr pa = { 0 };
	CHECK(cq && ibv_start_poll(cq, &pa) == ENOENT,
	      "start_poll on an empty CQ: ENOENT");
	CHECK(cq && ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) == 0, "destroy cq_ex");
}

/* The receive side's fields RoCE gives every RC completion. */
static void check_roce_fields(const struct ibv_wc *w, const char *what)
{
	CHECK(w->status == IBV_WC_SUCCESS && w->vendor_err == 0,
	      "%s: status %d vendor_err %u", what, w->status, w->vendor_err);
	/* RoCE has no LIDs and the pair uses SL 0. */
	CHECK(w->slid == 0 && w->sl == 0 && w->dlid_path_bits == 0,
	      "%s: slid %u sl %u path bits %u", what, w->slid, w->sl,
	      w->dlid_path_bits);
}

/* The same completion read through the ops and through ibv_poll_cq. */
static void check_same(const struct ibv_wc *x, const struct ibv_wc *w)
{
	CHECK(x->status == w->status && x->opcode == w->opcode &&
	      x->vendor_err == w->vendor_err && x->byte_len == w->byte_len &&
	      x->imm_data == w->imm_data && x->qp_num == w->qp_num &&
	      x->src_qp == w->src_qp && x->wc_flags == w->wc_flags &&
	      x->slid == w->slid && x->sl == w->sl &&
	      x->dlid_path_bits == w->dlid_path_bits,
	      "read ops and ibv_poll_cq differ for one kind of completion");
}

static void check_send_imm(struct pair *p)
{
	struct ibv_wc x, w;

	memset(p->a.buf, 0x5a, 100);
	memset(p->b.buf, 0, 200);
	CHECK(pair_post_recv(&p->b, 21, p->b.buf, 200) == 0, "post recv");
	CHECK(post_a(p, IBV_WR_SEND_WITH_IMM, 11, 0, 100, 0xdeadbeef) == 0,
	      "post SEND with immediate");
	CHECK(poll_one_ex(xb, &x) == 0, "receive completion");
	check_roce_fields(&x, "SEND with imm, receiver");
	CHECK(x.wr_id == 21 && x.opcode == IBV_WC_RECV && x.byte_len == 100,
	      "receiver: wr_id %llu opcode %d byte_len %u",
	      (unsigned long long)x.wr_id, x.opcode, x.byte_len);
	CHECK(x.imm_data == htonl(0xdeadbeef) && (x.wc_flags & IBV_WC_WITH_IMM),
	      "receiver: imm %#x flags %#x", ntohl(x.imm_data), x.wc_flags);
	CHECK(x.qp_num == p->b.qp->qp_num, "receiver qp_num %u", x.qp_num);
	CHECK(p->b.buf[0] == 0x5a && p->b.buf[99] == 0x5a && !p->b.buf[100],
	      "received bytes");
	struct ibv_wc rx = x;
	CHECK(poll_one_ex(xa, &x) == 0, "send completion");
	check_roce_fields(&x, "SEND with imm, sender");
	CHECK(x.wr_id == 11 && x.opcode == IBV_WC_SEND &&
	      x.qp_num == p->a.qp->qp_num && !(x.wc_flags & IBV_WC_WITH_IMM),
	      "sender: wr_id %llu opcode %d qp %u flags %#x",
	      (unsigned long long)x.wr_id, x.opcode, x.qp_num, x.wc_flags);

	/* Again, this time polled the ordinary way on the extended CQ. */
	pair_post_recv(&p->b, 22, p->b.buf, 200);
	post_a(p, IBV_WR_SEND_WITH_IMM, 12, 0, 100, 0xdeadbeef);
	CHECK(pair_wait(ibv_cq_ex_to_cq(xb), &w) == 0 && w.wr_id == 22,
	      "ibv_poll_cq on the extended CQ");
	check_same(&rx, &w);
	CHECK(poll_one_ex(xa, &x) == 0 && x.wr_id == 12, "second send");
}

/* The device's clock, in its cycles (ibv_query_rt_values_ex). */
static uint64_t raw_clock(struct pair *p)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	int rc = ibv_query_rt_values_ex(p->ctx, &v);

	CHECK(rc == 0 && v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK,
	      "ibv_query_rt_values_ex: %d, comp_mask %#x", rc, v.comp_mask);
	return (uint64_t)v.raw_clock.tv_sec * 1000000000u +
	       (uint64_t)v.raw_clock.tv_nsec;
}

/*
 * Completion timestamps: the device says it has them (1 GHz), each
 * completion's lies between the raw clock read before the post and after
 * the poll, the receive's before the send's (which waits for the ACK),
 * and the wall-clock one is the same instant on CLOCK_REALTIME.
 */
static void check_timestamps(struct pair *p)
{
	struct ibv_device_attr_ex dx;
	uint64_t before, after, t_rx, t_tx, wall;
	struct timespec real;

	CHECK(ibv_query_device_ex(p->ctx, NULL, &dx) == 0 &&
	      dx.completion_timestamp_mask == UINT64_MAX &&
	      dx.hca_core_clock == 1000000,
	      "timestamp mask %#llx, hca_core_clock %llu kHz",
	      (unsigned long long)dx.completion_timestamp_mask,
	      (unsigned long long)dx.hca_core_clock);
	before = raw_clock(p);
	CHECK(pair_post_recv(&p->b, 31, p->b.buf, 200) == 0, "post recv");
	CHECK(post_a(p, IBV_WR_SEND, 32, 0, 10, 0) == 0, "post SEND");
	CHECK(start_poll(xb) == 0 && xb->wr_id == 31, "receive completion");
	t_rx = ibv_wc_read_completion_ts(xb);
	ibv_end_poll(xb);
	CHECK(start_poll(xa) == 0 && xa->wr_id == 32, "send completion");
	t_tx = ibv_wc_read_completion_ts(xa);
	wall = ibv_wc_read_completion_wallclock_ns(xa);
	ibv_end_poll(xa);
	after = raw_clock(p);
	clock_gettime(CLOCK_REALTIME, &real);
	CHECK(before <= t_rx && t_rx <= t_tx && t_tx <= after,
	      "raw clock %llu, receive at %llu, send at %llu, raw clock %llu",
	      (unsigned long long)before, (unsigned long long)t_rx,
	      (unsigned long long)t_tx, (unsigned long long)after);
	/* Behind the real time read after it by what came since (at most
	 * the poll's five seconds, and then some on a loaded machine). */
	uint64_t now = (uint64_t)real.tv_sec * 1000000000u +
		       (uint64_t)real.tv_nsec;
	CHECK(wall <= now && now - wall < 600000000000ull,
	      "wall clock %llu, CLOCK_REALTIME %llu",
	      (unsigned long long)wall, (unsigned long long)now);
}

static void check_write(struct pair *p)
{
	struct ibv_wc x, w;

	memset(p->a.buf + 512, 0x77, 64);
	CHECK(post_a(p, IBV_WR_RDMA_WRITE, 13, 512, 64, 0) == 0, "post WRITE");
	CHECK(poll_one_ex(xa, &x) == 0, "WRITE completion");
	check_roce_fields(&x, "WRITE, sender");
	CHECK(x.wr_id == 13 && x.opcode == IBV_WC_RDMA_WRITE &&
	      x.qp_num == p->a.qp->qp_num && !(x.wc_flags & IBV_WC_WITH_IMM),
	      "WRITE: wr_id %llu opcode %d qp %u flags %#x",
	      (unsigned long long)x.wr_id, x.opcode, x.qp_num, x.wc_flags);
	CHECK(p->b.buf[512] == 0x77 && p->b.buf[575] == 0x77, "written bytes");
	post_a(p, IBV_WR_RDMA_WRITE, 14, 512, 64, 0);
	CHECK(pair_wait(ibv_cq_ex_to_cq(xa), &w) == 0 && w.wr_id == 14,
	      "second WRITE through ibv_poll_cq");
	check_same(&x, &w);

	/* WRITE with immediate: the receiver's completion. */
	CHECK(pair_post_recv(&p->b, 23, p->b.buf, 8) == 0, "post recv");
	CHECK(post_a(p, IBV_WR_RDMA_WRITE_WITH_IMM, 15, 512, 64, 0x1234) == 0,
	      "post WRITE with immediate");
	CHECK(poll_one_ex(xb, &x) == 0, "WRITE with imm: receive completion");
	check_roce_fields(&x, "WRITE with imm, receiver");
	CHECK(x.wr_id == 23 && x.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	      x.byte_len == 64 && x.imm_data == htonl(0x1234) &&
	      (x.wc_flags & IBV_WC_WITH_IMM) && x.qp_num == p->b.qp->qp_num,
	      "WRITE with imm: wr_id %llu opcode %d len %u imm %#x",
	      (unsigned long long)x.wr_id, x.opcode, x.byte_len,
	      ntohl(x.imm_data));
	CHECK(poll_one_ex(xa, &x) == 0 && x.wr_id == 15 &&
	      x.opcode == IBV_WC_RDMA_WRITE, "WRITE with imm: sender");
}

/* Waits for n sends of a's (their ACKs came: b completed them first). */
static void wait_sends(int n)
{
	struct ibv_wc w;

	for (int i = 0; i < n; i++)
		CHECK(pair_wait(ibv_cq_ex_to_cq(xa), &w) == 0 &&
		      w.status == IBV_WC_SUCCESS, "send %d completed", i);
}

static void send_n(struct pair *p, int n, uint64_t first_id)
{
	for (int i = 0; i < n; i++) {
		pair_post_recv(&p->b, first_id + (uint64_t)i, p->b.buf, 64);
		post_a(p, IBV_WR_SEND, 40 + (uint64_t)i, 0, 8, 0);
	}
	wait_sends(n);
}

/* start_poll, then next_poll through what is held, in order. */
static void check_next_poll(struct pair *p)
{
	struct ibv_poll_cq_attr pa = { 0 };

	send_n(p, 3, 50);
	CHECK(ibv_start_poll(xb, &pa) == 0 && xb->wr_id == 50, "first of 3");
	CHECK(ibv_next_poll(xb) == 0 && xb->wr_id == 51 &&
	      ibv_wc_read_opcode(xb) == IBV_WC_RECV, "second of 3");
	CHECK(ibv_next_poll(xb) == 0 && xb->wr_id == 52, "third of 3");
	CHECK(ibv_next_poll(xb) == ENOENT, "next_poll past the last: ENOENT");
	ibv_end_poll(xb);
}

/* b's extended CQ reports to the pair's completion channel. */
static void check_event(struct pair *p)
{
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;
	struct ibv_wc x;

	CHECK(ibv_req_notify_cq(ibv_cq_ex_to_cq(xb), 0) == 0, "arm");
	send_n(p, 1, 60);
	CHECK(ibv_get_cq_event(p->channel, &cq, &ctx) == 0 &&
	      cq == ibv_cq_ex_to_cq(xb) && ctx == p,
	      "the event names the extended CQ and its context");
	if (cq)
		ibv_ack_cq_events(cq, 1);
	CHECK(poll_one_ex(xb, &x) == 0 && x.wr_id == 60, "evented completion");
}

/* Resizing b's CQ while it holds 3 completions, then 4 that wrap around
 * the end of a 4-entry ring. */
static void check_resize(struct pair *p)
{
	struct ibv_cq *cq = ibv_cq_ex_to_cq(xb);
	struct ibv_device_attr da;
	int before = cq->cqe;

	send_n(p, 3, 70); /* b's completions came before a's */
	CHECK(ibv_resize_cq(cq, 2) == EINVAL && cq->cqe == before,
	      "shrink below the 3 held: EINVAL, cqe still %d", cq->cqe);
	CHECK(ibv_resize_cq(cq, 3) == 0 && cq->cqe >= 3,
	      "shrink to the 3 held: cqe %d", cq->cqe);
	CHECK(ibv_resize_cq(cq, 4) == 0 && cq->cqe >= 4,
	      "grow to 4 with 3 held: cqe %d", cq->cqe);
	struct ibv_wc x = { 0 };
	CHECK(poll_one_ex(xb, &x) == 0 && x.wr_id == 70, "first held");
	send_n(p, 2, 73); /* 71..74 held, past the ring's end */
	CHECK(ibv_resize_cq(cq, 200) == 0 && cq->cqe >= 200,
	      "grow with 4 held: cqe %d", cq->cqe);
	ibv_query_device(p->ctx, &da);
	CHECK(ibv_resize_cq(cq, da.max_cqe + 1) == EINVAL,
	      "above max_cqe: EINVAL");
	CHECK(ibv_resize_cq(cq, 0) == EINVAL, "zero entries: EINVAL");
	send_n(p, 1, 75); /* new completions after the held ones */
	for (uint64_t id = 71; id < 76; id++) {
		x = (struct ibv_wc){ 0 };
		CHECK(poll_one_ex(xb, &x) == 0 && x.wr_id == id &&
		      x.status == IBV_WC_SUCCESS,
		      "after resize: wr_id %llu, expected %llu",
		      (unsigned long long)x.wr_id, (unsigned long long)id);
	}
}

/* Device memory: copies in bounds only, an MR over it written to by an
 * RDMA WRITE and sent from, freed only without MRs. */
static void check_dm(struct pair *p)
{
	struct ibv_device_attr_ex dx;
	struct ibv_alloc_dm_attr da = { .length = 4096 };
	uint8_t in[4096], out[4096];
	struct ibv_dm *dm;
	struct ibv_mr *mr;
	struct ibv_wc x;
	int access = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
		     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

	CHECK(ibv_query_device_ex(p->ctx, NULL, &dx) == 0 &&
	      dx.max_dm_size >= 4096, "max_dm_size %llu",
	      (unsigned long long)dx.max_dm_size);
	struct ibv_alloc_dm_attr big = { .length = dx.max_dm_size + 1 };
	CHECK(!ibv_alloc_dm(p->ctx, &big), "DM above max_dm_size refused");
	dm = ibv_alloc_dm(p->ctx, &da);
	CHECK(dm != NULL, "alloc DM: errno %d", errno);
	if (!dm)
		return;
	for (int i = 0; i < 4096; i++)
		in[i] = (uint8_t)(i * 7 + 1);
	CHECK(ibv_memcpy_to_dm(dm, 0, in, 4096) == 0, "copy the whole DM");
	CHECK(ibv_memcpy_to_dm(dm, 4092, in, 8) != 0, "copy past the end");
	CHECK(ibv_memcpy_to_dm(dm, 4096, in, 4) != 0, "copy at the end");
	CHECK(ibv_memcpy_to_dm(dm, 0, in, 4100) != 0, "copy longer than DM");
	CHECK(ibv_memcpy_to_dm(dm, UINT64_MAX - 3, in, 8) != 0,
	      "offset that wraps");
	CHECK(ibv_memcpy_from_dm(out, dm, 4092, 8) != 0, "read past the end");
	CHECK(ibv_memcpy_to_dm(dm, 2, in, 4) != 0, "unaligned offset");
	memset(out, 0, sizeof(out));
	CHECK(ibv_memcpy_from_dm(out, dm, 0, 4096) == 0 &&
	      !memcmp(in, out, 4096), "read back: the failed copies left it");

	errno = 0;
	CHECK(!ibv_reg_dm_mr(p->pd, dm, 1024, 4096, access) && errno == EINVAL,
	      "DM MR beyond the DM: errno %d", errno);
	CHECK(!ibv_reg_dm_mr(p->pd, dm, 0, 64, IBV_ACCESS_LOCAL_WRITE),
	      "DM MR without ZERO_BASED refused");
	mr = ibv_reg_dm_mr(p->pd, dm, 1024, 2048, access);
	CHECK(mr != NULL, "DM MR: errno %d", errno);
	if (!mr) {
		ibv_free_dm(dm);
		return;
	}
	CHECK(ibv_free_dm(dm) == EBUSY, "free DM under an MR: EBUSY");

	/* A WRITE into the DM MR at offset 16: MR-relative addressing. */
	memset(p->a.buf, 0xc3, 256);
	struct ibv_sge sge = { (uintptr_t)p->a.buf, 256, p->a.mr->lkey };
	CHECK(post(p->a.qp, IBV_WR_RDMA_WRITE, 80, &sge, 0, 16, mr->rkey) == 0,
	      "post WRITE to DM");
	CHECK(poll_one_ex(xa, &x) == 0 && x.wr_id == 80 &&
	      x.status == IBV_WC_SUCCESS, "WRITE to DM: status %d", x.status);
	ibv_memcpy_from_dm(out, dm, 1024, 512);
	CHECK(out[15] == in[1024 + 15] && out[16] == 0xc3 &&
	      out[271] == 0xc3 && out[272] == in[1024 + 272],
	      "WRITE landed at DM offset 1024 + 16 and nowhere else");

	/* The DM MR as a local SGE: a SEND from it. */
	memset(p->b.buf, 0, 256);
	CHECK(pair_post_recv(&p->b, 81, p->b.buf, 256) == 0, "post recv");
	struct ibv_sge dsge = { 16, 256, mr->lkey };
	CHECK(post(p->a.qp, IBV_WR_SEND, 82, &dsge, 0,
		   0, 0) == 0, "post SEND from DM");
	CHECK(poll_one_ex(xa, &x) == 0 && x.wr_id == 82 &&
	      x.status == IBV_WC_SUCCESS, "SEND from DM: status %d", x.status);
	CHECK(poll_one_ex(xb, &x) == 0 && x.wr_id == 81 && x.byte_len == 256 &&
	      (uint8_t)p->b.buf[0] == 0xc3 &&
	      (uint8_t)p->b.buf[255] == 0xc3,
	      "received what the DM held: wr_id %llu len %u status %d [0] %#x",
	      (unsigned long long)x.wr_id, x.byte_len, x.status,
	      (uint8_t)p->b.buf[0]);

	/* A WRITE past the DM MR's end is refused by the responder. */
	CHECK(post(p->a.qp, IBV_WR_RDMA_WRITE, 83, &sge, 0, 2048 - 128,
		   mr->rkey) == 0, "post WRITE past the DM MR");
	CHECK(poll_one_ex(xa, &x) == 0 && x.wr_id == 83 &&
	      x.status == IBV_WC_REM_ACCESS_ERR,
	      "WRITE past the DM MR: status %d", x.status);
	ibv_memcpy_from_dm(out, dm, 0, 4096);
	CHECK(!memcmp(out + 3072, in + 3072, 1024),
	      "nothing written after the MR");
	CHECK(ibv_dereg_mr(mr) == 0, "dereg DM MR");
	CHECK(ibv_free_dm(dm) == 0, "free DM");
}

/* A DM imported by its handle (within the process: contexts do not
 * import, there is no kernel object to share) reaches the same memory. */
static void check_dm_import(struct pair *p)
{
	struct ibv_alloc_dm_attr da = { .length = 64 };
	struct ibv_dm *dm = ibv_alloc_dm(p->ctx, &da), *imp = NULL;
	uint32_t in[16], out[16];

	CHECK(dm && (dm->comp_mask & IBV_DM_MASK_HANDLE), "DM with a handle");
	if (!dm)
		return;
	imp = ibv_import_dm(p->ctx, dm->handle);
	CHECK(imp != NULL, "import the DM: errno %d", errno);
	CHECK(!ibv_import_dm(p->ctx, dm->handle + 1000), "no such DM handle");
	for (int i = 0; i < 16; i++)
		in[i] = 0x01020304u * (uint32_t)i;
	if (imp) {
		CHECK(ibv_memcpy_to_dm(dm, 0, in, 64) == 0 &&
		      ibv_memcpy_from_dm(out, imp, 0, 64) == 0 &&
		      !memcmp(in, out, 64), "the import reads what was written");
		CHECK(ibv_memcpy_from_dm(out, imp, 4, 64) != 0,
		      "the import's copies are bounded too");
		CHECK(ibv_free_dm(dm) == EBUSY, "free the original while imported");
		struct ibv_mr *mr = ibv_reg_dm_mr(p->pd, imp, 0, 64,
						  IBV_ACCESS_ZERO_BASED |
						  IBV_ACCESS_LOCAL_WRITE);
		CHECK(mr != NULL, "MR over the import: errno %d", errno);
		ibv_unimport_dm(imp);
		/* the MR over the import holds the memory, the original's */
		CHECK(ibv_free_dm(dm) == EBUSY, "free under the import's MR");
		CHECK(mr && ibv_dereg_mr(mr) == 0, "dereg the import's MR");
	}
	CHECK(ibv_free_dm(dm) == 0, "free the original");
}

static int use_cq_ex(struct pair *p)
{
	ibv_destroy_cq(p->a.cq);
	ibv_destroy_cq(p->b.cq);
	const uint64_t ts = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;

	xa = make_cq_ex(p, IBV_WC_STANDARD_FLAGS | ts, NULL);
	xb = make_cq_ex(p, IBV_WC_STANDARD_FLAGS | ts, p->channel);
	if (!xa || !xb)
		return -1;
	p->a.cq = ibv_cq_ex_to_cq(xa);
	p->b.cq = ibv_cq_ex_to_cq(xb);
	return 0;
}

int main(void)
{
	struct pair p;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pair_open(&p, 4096, 1) || use_cq_ex(&p) ||
	    pair_add_qps(&p, IBV_QPT_RC, NULL)) {
		printf("verbs_cqex: 0 passed, 1 failed\n");
		return 1;
	}
	check_create(&p);
	check_send_imm(&p);
	check_timestamps(&p);
	check_write(&p);
	check_next_poll(&p);
	check_event(&p);
	check_resize(&p);
	check_dm_import(&p);
	check_dm(&p); /* last: its refused WRITE ends the RC connection */
	pair_close(&p);
	printf("verbs_cqex: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
