/* SPDX-License-Identifier: MIT */
/* IBTA 1.5 ATOMIC WRITE: the requester's packet on the wire, the responder's
 * store, its ACK and its NAKs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_pair.h"
#include "rocemu/pcapio.h"
#include "check_suites.h"

static uint64_t cnt(struct side *s, enum rocemu_counter c)
{
	return rocemu_dev_counter(s->dev, c);
}

static const uint8_t VALUE[8] = {0x11, 0x22, 0x33, 0x44,
				 0x55, 0x66, 0x77, 0x88};

/* An ATOMIC_WRITE request from a's address to b's QP, as a peer would
 * send it: RETH (va, rkey, len) and plen bytes of payload. */
static void inject(struct pair *p, uint32_t psn, uint64_t va, uint32_t rkey,
		   uint32_t len, const uint8_t *payload, uint32_t plen)
{
	struct roce_frame f;
	uint8_t *buf = malloc(8192);
	uint8_t a4[4] = {10, 0, 0, 1}, b4[4] = {10, 0, 0, 2};

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, a4);
	roce_gid_from_ipv4(f.dst_gid, b4);
	f.sport = 0xc000;
	f.ib.bth.opcode = ROCE_OP_RC_ATOMIC_WRITE;
	f.ib.bth.dqpn = rocemu_qp_num(p->b.qp);
	f.ib.bth.psn = psn;
	f.ib.bth.ackreq = true;
	f.ib.reth.va = va;
	f.ib.reth.rkey = rkey;
	f.ib.reth.len = len;
	f.ib.payload = payload;
	f.ib.payload_len = plen;
	int n = roce_frame_build(&f, buf, 8192);
	ck_assert_int_gt(n, 0);
	rocemu_world_inject(p->w, buf, (size_t)n);
	rocemu_world_settle(p->w, 1000000);
	free(buf);
}

/* Posts ATOMIC_WRITE of the 8 bytes at a.buf + off to raddr. */
static int post_aw(struct side *s, size_t off, uint32_t len, uint64_t raddr,
		   uint32_t rkey)
{
	return post_send1(s, IBV_WR_ATOMIC_WRITE, 5, off, len, raddr, rkey, 0);
}

/*
 * The requester: one RC_ATOMIC_WRITE packet (0x1d) with the RETH naming
 * the target and 8 bytes, the 8 bytes of the local buffer as payload;
 * the responder stores them and ACKs; the send CQE is ATOMIC_WRITE.
 */
START_TEST(test_atomic_write_wire_and_store)
{
	struct pair p;
	struct pair_opts o = {0};
	char path[] = "/tmp/rocemu-awrite-XXXXXX", err[ROCE_PCAP_ERRLEN];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	pair_up(&p, &o);
	memcpy(p.a.buf, VALUE, 8);
	ck_assert_int_eq(rocemu_world_record(p.w, path), 0);
	ck_assert_int_eq(
	    post_aw(&p.a, 0, 8, addr_of(&p.b, 64), rocemu_mr_rkey(p.b.mr)), 0);
	struct ibv_wc wc = poll1(&p, &p.a);
	ck_assert_int_eq(rocemu_world_record(p.w, NULL), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_ATOMIC_WRITE);
	ck_assert_uint_eq(wc.wr_id, 5);
	ck_assert(!memcmp(p.b.buf + 64, VALUE, 8));
	ck_assert_uint_eq(p.b.buf[63], 0);
	ck_assert_uint_eq(p.b.buf[72], 0);

	struct roce_pcap_reader *rd;
	struct roce_pcap_rec rec;
	struct roce_frame f;
	const char *why;
	unsigned n = 0, writes = 0, acks = 0;
	ck_assert_int_eq(roce_pcap_open(path, &rd, err), 0);
	while (roce_pcap_next(rd, &rec, err) == 1) {
		ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, rec.data,
						  rec.caplen, rec.wire_len, &f,
						  &why),
				 0);
		n++;
		/* IBTA 1.5, as rxe: the answer is a READ RESPONSE ONLY
		 * without payload, an ACK AETH with MSN 1 */
		if (f.ib.bth.opcode == ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY) {
			ck_assert_uint_eq(f.ib.payload_len, 0);
			ck_assert_uint_eq(roce_aeth_type(f.ib.aeth.syndrome),
					  ROCE_AETH_ACK);
			ck_assert_uint_eq(f.ib.aeth.msn, 1);
			acks++;
			continue;
		}
		ck_assert_uint_eq(f.ib.bth.opcode, 0x1d);
		ck_assert(f.ib.bth.ackreq);
		ck_assert_uint_eq(f.ib.reth.va, addr_of(&p.b, 64));
		ck_assert_uint_eq(f.ib.reth.rkey, rocemu_mr_rkey(p.b.mr));
		ck_assert_uint_eq(f.ib.reth.len, 8);
		ck_assert_uint_eq(f.ib.payload_len, 8);
		ck_assert(!memcmp(f.ib.payload, VALUE, 8));
		/* BTH 12 + RETH 16 + payload 8 + ICRC 4 in the UDP datagram */
		writes++;
	}
	roce_pcap_close(rd);
	unlink(path);
	ck_assert_uint_eq(writes, 1);
	ck_assert_uint_eq(acks, 1);
	ck_assert_uint_eq(n, 2);
	pair_down(&p);
}
END_TEST

/* The value is taken when the WR is posted, as rxe's provider copies it
 * into the WQE: changing the buffer afterwards changes nothing. */
START_TEST(test_atomic_write_value_taken_at_post)
{
	struct pair p;
	struct pair_opts o = {0};

	pair_up(&p, &o);
	memcpy(p.a.buf, VALUE, 8);
	ck_assert_int_eq(
	    post_aw(&p.a, 0, 8, addr_of(&p.b, 0), rocemu_mr_rkey(p.b.mr)), 0);
	memset(p.a.buf, 0xee, 8);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	ck_assert(!memcmp(p.b.buf, VALUE, 8));
	pair_down(&p);
}
END_TEST

/* Posting refuses what is not one aligned 8-byte value: a remote address
 * not 8-byte aligned, a length other than 8. Nothing is sent. */
START_TEST(test_atomic_write_bad_posts_refused)
{
	struct pair p;
	struct pair_opts o = {0};
	uint32_t rkey;

	pair_up(&p, &o);
	rkey = rocemu_mr_rkey(p.b.mr);
	ck_assert_int_eq(post_aw(&p.a, 0, 8, addr_of(&p.b, 4), rkey), -EINVAL);
	ck_assert_int_eq(post_aw(&p.a, 0, 4, addr_of(&p.b, 0), rkey), -EINVAL);
	ck_assert_int_eq(post_aw(&p.a, 0, 16, addr_of(&p.b, 0), rkey), -EINVAL);
	ck_assert_int_eq(cq_count(&p, &p.a), 0);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_RX_PACKETS), 0);
	pair_down(&p);
}
END_TEST

/* The responder's refusals, one row each: what the peer sends wrong, the
 * NAK it gets. Memory stays untouched and the QP goes to ERROR. */
struct bad_row {
	const char *what;
	int qp_access, mr_access; /* 0: the pair's defaults */
	int64_t va_off;		  /* from b.buf */
	bool bad_rkey;
	uint32_t len; /* RETH length */
	enum rocemu_counter nak;
};

static const struct bad_row bad_rows[] = {
    {"bad rkey", 0, 0, 0, true, 8, ROCEMU_CNT_NAK_SENT_REM_ACCESS},
    {"past the MR's end", 0, 0, -1, false, 8, ROCEMU_CNT_NAK_SENT_REM_ACCESS},
    {"MR without remote write", 0,
     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
     0, false, 8, ROCEMU_CNT_NAK_SENT_REM_ACCESS},
    {"misaligned", 0, 0, 4, false, 8, ROCEMU_CNT_NAK_SENT_INV_REQ},
    {"QP without remote write",
     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, 0, 0, false, 8,
     ROCEMU_CNT_NAK_SENT_INV_REQ},
    {"RETH length not 8", 0, 0, 0, false, 16, ROCEMU_CNT_NAK_SENT_INV_REQ},
};

START_TEST(test_atomic_write_naks)
{
	const struct bad_row *r = &bad_rows[_i];
	struct pair p;
	struct pair_opts o = {.qp_access = r->qp_access,
			      .mr_access = r->mr_access};
	enum rocemu_counter other = r->nak == ROCEMU_CNT_NAK_SENT_INV_REQ
					? ROCEMU_CNT_NAK_SENT_REM_ACCESS
					: ROCEMU_CNT_NAK_SENT_INV_REQ;

	pair_up(&p, &o);
	uint64_t va = r->va_off >= 0 ? addr_of(&p.b, (size_t)r->va_off)
				     : addr_of(&p.b, p.b.len - 8) + 8;
	uint32_t rkey = rocemu_mr_rkey(p.b.mr) ^ (r->bad_rkey ? 0x100 : 0);
	inject(&p, 0, va, rkey, r->len, VALUE, 8);
	ck_assert_msg(cnt(&p.b, r->nak) == 1, "%s: no NAK", r->what);
	ck_assert_uint_eq(cnt(&p.b, other), 0);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_ACKS_SENT), 0);
	for (size_t i = 0; i < 16; i++)
		ck_assert_uint_eq(p.b.buf[i], 0);
	ck_assert(guards_intact(&p.b));
	pair_down(&p);
}
END_TEST

/* A duplicate (IBTA 9.7.5.1.1) is answered again from its responder
 * resource (its zero-length READ response, not an ACK) and not stored
 * again: a WRITE in between keeps its bytes. */
START_TEST(test_atomic_write_duplicate_acked_not_redone)
{
	struct pair p;
	struct pair_opts o = {0};

	pair_up(&p, &o);
	uint32_t rkey = rocemu_mr_rkey(p.b.mr);
	inject(&p, 0, addr_of(&p.b, 0), rkey, 8, VALUE, 8);
	ck_assert(!memcmp(p.b.buf, VALUE, 8));
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_TX_PACKETS), 1);
	memset(p.b.buf, 0x5a, 8);
	inject(&p, 0, addr_of(&p.b, 0), rkey, 8, VALUE, 8);
	ck_assert_uint_eq(p.b.buf[0], 0x5a);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_DUP_REQUESTS), 1);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_TX_PACKETS), 2);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_ACKS_SENT), 0);
	pair_down(&p);
}
END_TEST

Suite *atomic_write_suite(void)
{
	Suite *s = suite_create("atomic_write");
	TCase *tc = tcase_create("requester");

	tcase_add_test(tc, test_atomic_write_wire_and_store);
	tcase_add_test(tc, test_atomic_write_value_taken_at_post);
	tcase_add_test(tc, test_atomic_write_bad_posts_refused);
	suite_add_tcase(s, tc);
	tc = tcase_create("responder");
	tcase_add_loop_test(tc, test_atomic_write_naks, 0,
			    sizeof(bad_rows) / sizeof(bad_rows[0]));
	tcase_add_test(tc, test_atomic_write_duplicate_acked_not_redone);
	suite_add_tcase(s, tc);
	return s;
}
