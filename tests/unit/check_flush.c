/* SPDX-License-Identifier: MIT */
/* IBTA 1.5 FLUSH: the requester's packet, the responder's answer (a
 * zero-length READ response, as rxe since Linux 6.2), its NAKs, its
 * order after WRITEs, its duplicate, and the access rights it needs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_pair.h"
#include "rocemu/aeth.h"
#include "rocemu/pcapio.h"
#include "check_suites.h"

enum {
	RIGHTS = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	QP_RIGHTS = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_ATOMIC,
	/* the FETH: placement type bits 0-3, selectivity level bits 4-5 */
	GLOBAL_RANGE = ROCEMU_FLUSH_GLOBAL,
	GLOBAL_MR = ROCEMU_FLUSH_GLOBAL | ROCEMU_FLUSH_MR << 4,
	PERSIST_RANGE = ROCEMU_FLUSH_PERSISTENT,
};

/* Both sides may flush: the MRs and QPs have the global-visibility
 * right besides every other. */
static const struct pair_opts FLUSHABLE = {
	.mr_access = RIGHTS | ROCEMU_ACCESS_FLUSH_GLOBAL,
	.qp_access = QP_RIGHTS | ROCEMU_ACCESS_FLUSH_GLOBAL,
};

static uint64_t cnt(struct side *s, enum rocemu_counter c)
{
	return rocemu_dev_counter(s->dev, c);
}

static int post_flush(struct side *s, uint64_t id, uint64_t va, uint32_t rkey,
		      uint64_t len, uint32_t feth)
{
	struct ibv_send_wr wr = { .wr_id = id, .opcode = ROCEMU_WR_FLUSH,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.atomic.remote_addr = va;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = len;
	wr.wr.atomic.swap = feth;
	return rocemu_post_send(s->qp, &wr, &bad);
}

/* A FLUSH from a's address to b's QP, as a peer would send it. */
static void inject(struct pair *p, uint32_t psn, uint32_t feth, uint64_t va,
		   uint32_t rkey, uint32_t len)
{
	struct roce_frame f;
	uint8_t buf[512];
	uint8_t a4[4] = {10, 0, 0, 1}, b4[4] = {10, 0, 0, 2};

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, a4);
	roce_gid_from_ipv4(f.dst_gid, b4);
	f.sport = 0xc000;
	f.ib.bth.opcode = ROCE_OP_RC_FLUSH;
	f.ib.bth.dqpn = rocemu_qp_num(p->b.qp);
	f.ib.bth.psn = psn;
	f.ib.bth.ackreq = true;
	f.ib.feth = feth;
	f.ib.reth.va = va;
	f.ib.reth.rkey = rkey;
	f.ib.reth.len = len;
	int n = roce_frame_build(&f, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	rocemu_world_inject(p->w, buf, (size_t)n);
	rocemu_world_settle(p->w, 1000000);
}

/*
 * A WRITE then a FLUSH of the range it wrote. On the wire: the WRITE, the
 * FLUSH (0x1c) with AckReq, its FETH (global visibility, range) and its
 * RETH as posted, no payload; b answers with one zero-length READ
 * RESPONSE ONLY at the FLUSH's PSN whose AETH is an ACK of MSN 2 (two
 * messages done). a completes both, in order, the FLUSH as IBV_WC_FLUSH
 * (8), and b's memory holds the WRITE's bytes.
 */
START_TEST(test_flush_wire_and_order)
{
	struct pair p;
	char path[] = "/tmp/rocemu-flush-XXXXXX", err[ROCE_PCAP_ERRLEN];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	pair_up(&p, &FLUSHABLE);
	memset(p.a.buf, 0x77, 256);
	ck_assert_int_eq(rocemu_world_record(p.w, path), 0);
	uint32_t rkey = rocemu_mr_rkey(p.b.mr);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 256,
				    addr_of(&p.b, 512), rkey, 0),
			 0);
	ck_assert_int_eq(post_flush(&p.a, 2, addr_of(&p.b, 512), rkey, 256,
				    GLOBAL_RANGE),
			 0);
	struct ibv_wc w1 = poll1(&p, &p.a), w2 = poll1(&p, &p.a);
	ck_assert_int_eq(rocemu_world_record(p.w, NULL), 0);
	ck_assert_int_eq(w1.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(w1.wr_id, 1);
	ck_assert_int_eq(w1.opcode, IBV_WC_RDMA_WRITE);
	ck_assert_int_eq(w2.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(w2.wr_id, 2);
	ck_assert_int_eq(w2.opcode, 8);
	for (size_t i = 0; i < 256; i++)
		ck_assert_uint_eq(p.b.buf[512 + i], 0x77);

	struct roce_pcap_reader *rd;
	struct roce_pcap_rec rec;
	struct roce_frame f;
	const char *why;
	unsigned flushes = 0, answers = 0;
	uint32_t flush_psn = 0;
	ck_assert_int_eq(roce_pcap_open(path, &rd, err), 0);
	while (roce_pcap_next(rd, &rec, err) == 1) {
		ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, rec.data,
						  rec.caplen, rec.wire_len, &f,
						  &why),
				 0);
		if (f.ib.bth.opcode == ROCE_OP_RC_FLUSH) {
			flushes++;
			flush_psn = f.ib.bth.psn;
			ck_assert(f.ib.bth.ackreq);
			ck_assert(!f.ib.bth.se);
			ck_assert_uint_eq(f.ib.feth, 0x01);
			ck_assert_uint_eq(f.ib.reth.va, addr_of(&p.b, 512));
			ck_assert_uint_eq(f.ib.reth.rkey, rkey);
			ck_assert_uint_eq(f.ib.reth.len, 256);
			ck_assert_uint_eq(f.ib.payload_len, 0);
		} else if (f.ib.bth.opcode ==
			   ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY) {
			answers++;
			ck_assert_uint_eq(f.ib.bth.psn, flush_psn);
			ck_assert_uint_eq(f.ib.payload_len, 0);
			ck_assert_uint_eq(roce_aeth_type(f.ib.aeth.syndrome),
					  ROCE_AETH_ACK);
			ck_assert_uint_eq(f.ib.aeth.msn, 2);
		}
	}
	roce_pcap_close(rd);
	unlink(path);
	ck_assert_uint_eq(flushes, 1);
	ck_assert_uint_eq(answers, 1);
	pair_down(&p);
}
END_TEST

/* Level MR: the RETH's address and length are ignored (IBTA 1.5), so an
 * address outside the MR and a length of 2^31 are answered, not NAKed. */
START_TEST(test_flush_level_mr_ignores_range)
{
	struct pair p;

	pair_up(&p, &FLUSHABLE);
	ck_assert_int_eq(post_flush(&p.a, 3, 8, rocemu_mr_rkey(p.b.mr),
				    1u << 31, GLOBAL_MR),
			 0);
	struct ibv_wc wc = poll1(&p, &p.a);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, 8);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_NAK_SENT_REM_ACCESS), 0);
	pair_down(&p);
}
END_TEST

/* The responder's refusals, one row each (as rxe: a QP without the
 * placement type's right, or a length above 2^31, is an invalid request;
 * a key, right or range the memory does not give, a remote access
 * error). The QP goes to ERROR; nothing is answered with success. */
struct bad_row {
	const char *what;
	int qp_access, mr_access; /* 0: FLUSHABLE's */
	uint32_t feth;
	int64_t va_off; /* from b.buf; -1: just past the end */
	bool bad_rkey;
	uint32_t len;
	enum rocemu_counter nak;
};

static const struct bad_row bad_rows[] = {
    {"QP without FLUSH_GLOBAL", QP_RIGHTS, 0, GLOBAL_RANGE, 0, false, 64,
     ROCEMU_CNT_NAK_SENT_INV_REQ},
    {"QP without FLUSH_PERSISTENT", 0, 0, PERSIST_RANGE, 0, false, 64,
     ROCEMU_CNT_NAK_SENT_INV_REQ},
    {"length above 2^31", 0, 0, GLOBAL_RANGE, 0, false, 0x80000001u,
     ROCEMU_CNT_NAK_SENT_INV_REQ},
    {"MR without FLUSH_GLOBAL", 0, RIGHTS, GLOBAL_RANGE, 0, false, 64,
     ROCEMU_CNT_NAK_SENT_REM_ACCESS},
    {"MR without FLUSH_GLOBAL, level MR", 0, RIGHTS, GLOBAL_MR, 0, false,
     64, ROCEMU_CNT_NAK_SENT_REM_ACCESS},
    {"persistent: no MR has the right",
     QP_RIGHTS | ROCEMU_ACCESS_FLUSH_GLOBAL | ROCEMU_ACCESS_FLUSH_PERSISTENT,
     0, PERSIST_RANGE, 0, false, 64, ROCEMU_CNT_NAK_SENT_REM_ACCESS},
    {"range past the MR's end", 0, 0, GLOBAL_RANGE, -1, false, 8,
     ROCEMU_CNT_NAK_SENT_REM_ACCESS},
    {"bad rkey", 0, 0, GLOBAL_RANGE, 0, true, 64,
     ROCEMU_CNT_NAK_SENT_REM_ACCESS},
    {"bad rkey, level MR", 0, 0, GLOBAL_MR, 0, true, 0,
     ROCEMU_CNT_NAK_SENT_REM_ACCESS},
};

START_TEST(test_flush_naks)
{
	const struct bad_row *r = &bad_rows[_i];
	struct pair p;
	struct pair_opts o = FLUSHABLE;
	enum rocemu_counter other = r->nak == ROCEMU_CNT_NAK_SENT_INV_REQ
					? ROCEMU_CNT_NAK_SENT_REM_ACCESS
					: ROCEMU_CNT_NAK_SENT_INV_REQ;

	if (r->qp_access)
		o.qp_access = r->qp_access;
	if (r->mr_access)
		o.mr_access = r->mr_access;
	pair_up(&p, &o);
	uint64_t va = r->va_off >= 0 ? addr_of(&p.b, (size_t)r->va_off)
				     : addr_of(&p.b, p.b.len - 4);
	uint32_t rkey = rocemu_mr_rkey(p.b.mr) ^ (r->bad_rkey ? 0x100 : 0);
	inject(&p, 0, r->feth, va, rkey, r->len);
	ck_assert_msg(cnt(&p.b, r->nak) == 1, "%s: no NAK", r->what);
	ck_assert_uint_eq(cnt(&p.b, other), 0);
	/* the NAK is the one packet b sent */
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_TX_PACKETS), 1);
	pair_down(&p);
}
END_TEST

/* A duplicate FLUSH is answered again from its resource, the MSN the
 * first answer carried; an ACK is not what it gets. */
START_TEST(test_flush_duplicate_answered_again)
{
	struct pair p;

	pair_up(&p, &FLUSHABLE);
	uint32_t rkey = rocemu_mr_rkey(p.b.mr);
	inject(&p, 0, GLOBAL_RANGE, addr_of(&p.b, 0), rkey, 64);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_TX_PACKETS), 1);
	inject(&p, 0, GLOBAL_RANGE, addr_of(&p.b, 0), rkey, 64);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_DUP_REQUESTS), 1);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_TX_PACKETS), 2);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_ACKS_SENT), 0);
	pair_down(&p);
}
END_TEST

/* The rights: ibv_reg_mr takes FLUSH_GLOBAL, refuses FLUSH_PERSISTENT
 * (no memory of rocemu's is persistent, as rxe refuses it for memory
 * that is not); the device reports both FLUSH capabilities and ATOMIC
 * WRITE (rdma-core's IB_UVERBS_DEVICE_FLUSH_GLOBAL, _PERSISTENT and
 * _ATOMIC_WRITE: bits 38, 39, 40). */
START_TEST(test_flush_rights_and_caps)
{
	struct pair p;
	struct ibv_device_attr_ex a;

	pair_up(&p, &FLUSHABLE);
	struct rocemu_mr *mr = rocemu_mr_reg(
	    p.b.pd, p.b.buf, 64,
	    IBV_ACCESS_LOCAL_WRITE | ROCEMU_ACCESS_FLUSH_PERSISTENT);
	ck_assert_ptr_null(mr);
	mr = rocemu_mr_reg(p.b.pd, p.b.buf, 64,
			   IBV_ACCESS_LOCAL_WRITE | ROCEMU_ACCESS_FLUSH_GLOBAL);
	ck_assert_ptr_nonnull(mr);
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	rocemu_dev_attr_ex(p.b.dev, &a);
	ck_assert_uint_eq((a.device_cap_flags_ex >> 38) & 7, 7);
	pair_down(&p);
}
END_TEST

/* Posting refuses a FLUSH with an SGE, a reserved placement type bit or
 * a reserved level; nothing is sent. */
START_TEST(test_flush_bad_posts_refused)
{
	struct pair p;
	struct ibv_send_wr wr = { .opcode = ROCEMU_WR_FLUSH }, *bad;
	struct ibv_sge sge = { .length = 8 };

	pair_up(&p, &FLUSHABLE);
	sge.addr = addr_of(&p.a, 0);
	uint32_t rkey = rocemu_mr_rkey(p.b.mr);
	ck_assert_int_eq(post_flush(&p.a, 1, addr_of(&p.b, 0), rkey, 8, 0x4),
			 -EINVAL);
	ck_assert_int_eq(post_flush(&p.a, 1, addr_of(&p.b, 0), rkey, 8, 0x21),
			 -EINVAL);
	wr.wr.atomic.rkey = rkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), -EINVAL);
	ck_assert_int_eq(cq_count(&p, &p.a), 0);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_RX_PACKETS), 0);
	pair_down(&p);
}
END_TEST

Suite *flush_suite(void)
{
	Suite *s = suite_create("flush");
	TCase *tc = tcase_create("requester");

	tcase_add_test(tc, test_flush_wire_and_order);
	tcase_add_test(tc, test_flush_level_mr_ignores_range);
	tcase_add_test(tc, test_flush_bad_posts_refused);
	tcase_add_test(tc, test_flush_rights_and_caps);
	suite_add_tcase(s, tc);
	tc = tcase_create("responder");
	tcase_add_loop_test(tc, test_flush_naks, 0,
			    (int)(sizeof(bad_rows) / sizeof(bad_rows[0])));
	tcase_add_test(tc, test_flush_duplicate_answered_again);
	suite_add_tcase(s, tc);
	return s;
}
