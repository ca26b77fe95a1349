/* SPDX-License-Identifier: MIT */
/* The responder's test-only misbehaviours: each exchange on a plain pair follows the IBTA rule, on a switched pair breaks that rule and nothing else. */
#include <string.h>

#include "check_pair.h"
#include "check_suites.h"

/* IBTA table 44: the AETH syndrome's bits 6..5, and the NAK codes. */
enum { SYN_ACK = 0, SYN_RNR = 1, SYN_NAK = 3 };
enum { NAK_SEQ = 0, NAK_INV_REQ = 1, NAK_REM_ACCESS = 2 };
enum { E = 1000 };	/* the PSN b expects first */

/* One answer b put on the wire. */
struct answer {
	uint8_t op, syn;
	uint32_t psn, msn;
	uint64_t atmack;
	uint32_t plen;
	uint8_t data[64];
};

struct ex {
	struct pair p;
	unsigned n;
	struct answer a[32];
};

static void hear_b(void *arg, const uint8_t *frame, size_t len)
{
	struct ex *x = arg;
	struct roce_frame f;
	const char *why;
	static const uint8_t b4[4] = { 10, 0, 0, 2 };
	uint8_t b[16];

	roce_gid_from_ipv4(b, b4);
	if (roce_frame_parse(ROCE_LINK_ETH, frame, len, len, &f, &why) ||
	    memcmp(f.src_gid, b, 16) || x->n == 32)
		return;
	struct answer *a = &x->a[x->n++];
	a->op = f.ib.bth.opcode;
	a->psn = f.ib.bth.psn;
	a->syn = f.ib.aeth.syndrome;
	a->msn = f.ib.aeth.msn;
	a->atmack = f.ib.atmack;
	a->plen = f.ib.payload_len;
	memcpy(a->data, f.ib.payload,
	       f.ib.payload_len < 64 ? f.ib.payload_len : 64);
}

/* A pair whose b breaks rule m (none: plain), a's first PSN E. */
static void ex_up(struct ex *x, enum rocemu_misbehave m, struct pair_opts *o)
{
	struct pair_opts plain = { 0 };

	if (!o)
		o = &plain;
	o->psn_a = E;
	o->psn_b = 5000;
	o->b_misbehave = m;
	memset(x, 0, sizeof(*x));
	pair_up(&x->p, o);
	rocemu_world_watch(x->p.w, hear_b, x);
}

static void ex_down(struct ex *x)
{
	rocemu_world_watch(x->p.w, NULL, NULL);
	ck_assert(guards_intact(&x->p.a) && guards_intact(&x->p.b));
	pair_down(&x->p);
}

/* A request from a's address to b's QP, as a peer would send it. */
struct req {
	uint8_t opcode;
	uint32_t psn;
	uint64_t va;
	uint32_t rkey, len;	/* RETH, or the AtomicETH's va and rkey */
	uint64_t add;		/* FETCH_ADD's operand */
	uint32_t plen;		/* payload bytes, of 0x77 */
};

static void inject(struct ex *x, const struct req *r)
{
	struct roce_frame f;
	uint8_t buf[512], pay[64];
	uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };

	memset(pay, 0x77, sizeof(pay));
	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, a4);
	roce_gid_from_ipv4(f.dst_gid, b4);
	f.sport = 0xc000;
	f.ib.bth.opcode = r->opcode;
	f.ib.bth.dqpn = rocemu_qp_num(x->p.b.qp);
	f.ib.bth.psn = r->psn;
	f.ib.bth.ackreq = true;
	f.ib.bth.pad = (uint8_t)roce_pad_len(r->plen);
	f.ib.reth.va = f.ib.atmeth.va = r->va;
	f.ib.reth.rkey = f.ib.atmeth.rkey = r->rkey;
	f.ib.reth.len = r->len;
	f.ib.atmeth.swap_add = r->add;
	f.ib.payload = pay;
	f.ib.payload_len = r->plen;
	int n = roce_frame_build(&f, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	rocemu_world_inject(x->p.w, buf, (size_t)n);
	rocemu_world_settle(x->p.w, 1000000000ull);
}

static void write8(struct ex *x, uint32_t psn)
{
	struct req r = { ROCE_OP_RC_RDMA_WRITE_ONLY, psn,
			 addr_of(&x->p.b, 1024), rocemu_mr_rkey(x->p.b.mr), 8,
			 0, 8 };
	inject(x, &r);
}

static unsigned syn_type(const struct answer *a)
{
	return (a->syn >> 5) & 3;
}

/* The last answer is a positive ACK of psn. */
static void expect_ack(const struct ex *x, uint32_t psn, const char *what)
{
	ck_assert_msg(x->n > 0, "%s: no answer", what);
	const struct answer *a = &x->a[x->n - 1];
	ck_assert_msg(a->op == ROCE_OP_RC_ACK && syn_type(a) == SYN_ACK &&
			      a->psn == psn,
		      "%s: op %#x syndrome %#x PSN %u, wanted an ACK of %u",
		      what, a->op, a->syn, a->psn, psn);
}

static enum ibv_qp_state state_of(struct rocemu_qp *qp)
{
	struct ibv_qp_attr at;

	rocemu_qp_query(qp, &at, NULL);
	return at.qp_state;
}

/* 9.7.5.1.1: three packets ahead of E, one NAK sequence error carrying E;
 * seq_nak_every: one per packet. E itself is then taken in both. */
START_TEST(seq_nak_every)
{
	for (int broken = 0; broken < 2; broken++) {
		struct ex x;
		ex_up(&x, broken ? ROCEMU_MISBEHAVE_SEQ_NAK_EVERY
				 : ROCEMU_MISBEHAVE_NONE, NULL);
		for (uint32_t k = 2; k <= 4; k++)
			write8(&x, E + k);
		ck_assert_uint_eq(x.n, broken ? 3 : 1);
		for (unsigned i = 0; i < x.n; i++) {
			ck_assert_uint_eq(x.a[i].op, ROCE_OP_RC_ACK);
			ck_assert_uint_eq(syn_type(&x.a[i]), SYN_NAK);
			ck_assert_uint_eq(x.a[i].syn & 31, NAK_SEQ);
			ck_assert_uint_eq(x.a[i].psn, E);
			ck_assert_uint_eq(x.a[i].msn, 0);
		}
		unsigned before = x.n;
		write8(&x, E);
		ck_assert_uint_eq(x.n, before + 1);
		expect_ack(&x, E, "the gap closed");
		ck_assert_uint_eq(x.a[x.n - 1].msn, 1);
		ex_down(&x);
	}
}
END_TEST

/* 9.7.5.1.1, C9-110: a READ asked again after its response is executed again,
 * with the memory as it is then, from the same PSN; dup_read_ignored:
 * no second answer. The next new PSN is taken in both. */
START_TEST(dup_read_ignored)
{
	for (int broken = 0; broken < 2; broken++) {
		struct ex x;
		ex_up(&x, broken ? ROCEMU_MISBEHAVE_DUP_READ_IGNORED
				 : ROCEMU_MISBEHAVE_NONE, NULL);
		struct req rd = { ROCE_OP_RC_RDMA_READ_REQUEST, E,
				  addr_of(&x.p.b, 0), rocemu_mr_rkey(x.p.b.mr),
				  64, 0, 0 };
		for (int i = 0; i < 64; i++)
			x.p.b.buf[i] = (uint8_t)(i + 1);
		inject(&x, &rd);
		ck_assert_uint_eq(x.n, 1);
		ck_assert_uint_eq(x.a[0].op, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY);
		ck_assert_uint_eq(x.a[0].psn, E);
		ck_assert_uint_eq(x.a[0].plen, 64);
		ck_assert_mem_eq(x.a[0].data, x.p.b.buf, 64);
		memset(x.p.b.buf, 0x5a, 64); /* changed since */
		inject(&x, &rd);
		ck_assert_uint_eq(x.n, broken ? 1 : 2);
		if (!broken) {
			ck_assert_uint_eq(x.a[1].op,
					  ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY);
			ck_assert_uint_eq(x.a[1].psn, E);
			ck_assert_uint_eq(x.a[1].plen, 64);
			ck_assert_mem_eq(x.a[1].data, x.p.b.buf, 64);
			ck_assert_uint_eq(x.a[1].msn, x.a[0].msn);
		}
		write8(&x, E + 1);
		expect_ack(&x, E + 1, "after the duplicate READ");
		ex_down(&x);
	}
}
END_TEST

/* 9.7.5.1.1, C9-110: a FETCH_ADD asked again after a later WRITE is answered
 * with the value and MSN saved the first time and not applied again;
 * dup_atomic_reexec: applied again, its new original value answered. The
 * expected PSN and the MSN do not move for the duplicate in either. */
START_TEST(dup_atomic_reexec)
{
	for (int broken = 0; broken < 2; broken++) {
		struct ex x;
		ex_up(&x, broken ? ROCEMU_MISBEHAVE_DUP_ATOMIC_REEXEC
				 : ROCEMU_MISBEHAVE_NONE, NULL);
		uint64_t v = 100, add = 5, now;
		memcpy(x.p.b.buf, &v, 8); /* host order, as the operand */
		struct req fa = { ROCE_OP_RC_FETCH_ADD, E, addr_of(&x.p.b, 0),
				  rocemu_mr_rkey(x.p.b.mr), 0, add, 0 };
		inject(&x, &fa);
		ck_assert_uint_eq(x.n, 1);
		ck_assert_uint_eq(x.a[0].op, ROCE_OP_RC_ATOMIC_ACK);
		ck_assert_uint_eq(x.a[0].atmack, v);
		ck_assert_uint_eq(x.a[0].msn, 1);
		memcpy(&now, x.p.b.buf, 8);
		ck_assert_uint_eq(now, v + add);
		write8(&x, E + 1);
		expect_ack(&x, E + 1, "the WRITE after the atomic");
		inject(&x, &fa);
		ck_assert_uint_eq(x.n, 3);
		ck_assert_uint_eq(x.a[2].op, ROCE_OP_RC_ATOMIC_ACK);
		ck_assert_uint_eq(x.a[2].psn, E);
		ck_assert_uint_eq(x.a[2].msn, 1);
		ck_assert_uint_eq(x.a[2].atmack, broken ? v + add : v);
		memcpy(&now, x.p.b.buf, 8);
		ck_assert_uint_eq(now, broken ? v + 2 * add : v + add);
		write8(&x, E + 2);
		expect_ack(&x, E + 2, "after the duplicate atomic");
		ck_assert_uint_eq(x.a[x.n - 1].msn, 3);
		ex_down(&x);
	}
}
END_TEST

/* 9.7.5.2.8: a SEND with no receive posted gets an RNR NAK whose timer
 * field is the responder QP's min_rnr_timer; rnr_timer_zero: 0. Once a
 * receive is posted the SEND is taken in both. */
START_TEST(rnr_timer_zero)
{
	enum { TIMER = 14 };

	for (int broken = 0; broken < 2; broken++) {
		struct ex x;
		struct pair_opts o = { .min_rnr_timer = TIMER };
		ex_up(&x, broken ? ROCEMU_MISBEHAVE_RNR_TIMER_ZERO
				 : ROCEMU_MISBEHAVE_NONE, &o);
		struct req s = { ROCE_OP_RC_SEND_ONLY, E, 0, 0, 0, 0, 16 };
		inject(&x, &s);
		ck_assert_uint_eq(x.n, 1);
		ck_assert_uint_eq(x.a[0].op, ROCE_OP_RC_ACK);
		ck_assert_uint_eq(x.a[0].psn, E);
		ck_assert_uint_eq(syn_type(&x.a[0]), SYN_RNR);
		ck_assert_uint_eq(x.a[0].syn & 31, broken ? 0 : TIMER);
		ck_assert_int_eq(post_recv1(&x.p.b, 7, 0, 64), 0);
		inject(&x, &s);
		expect_ack(&x, E, "the SEND again");
		ck_assert_uint_eq(x.a[x.n - 1].msn, 1);
		struct ibv_wc wc = poll1(&x.p, &x.p.b);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.byte_len, 16);
		ex_down(&x);
	}
}
END_TEST

/* 9.7.5.2, C9-148: each answer's MSN counts the messages completed, a
 * WRITE, a WRITE, a READ, a FETCH_ADD: 1, 2, 3, 4; msn_frozen: 0 in
 * each, the answers otherwise the same. */
START_TEST(msn_frozen)
{
	struct answer seen[2][4];

	for (int broken = 0; broken < 2; broken++) {
		struct ex x;
		ex_up(&x, broken ? ROCEMU_MISBEHAVE_MSN_FROZEN
				 : ROCEMU_MISBEHAVE_NONE, NULL);
		uint32_t key = rocemu_mr_rkey(x.p.b.mr);
		struct req rd = { ROCE_OP_RC_RDMA_READ_REQUEST, E + 2,
				  addr_of(&x.p.b, 0), key, 16, 0, 0 };
		struct req fa = { ROCE_OP_RC_FETCH_ADD, E + 3,
				  addr_of(&x.p.b, 64), key, 0, 1, 0 };
		write8(&x, E);
		write8(&x, E + 1);
		inject(&x, &rd);
		inject(&x, &fa);
		ck_assert_uint_eq(x.n, 4);
		for (unsigned i = 0; i < 4; i++) {
			ck_assert_uint_eq(x.a[i].psn, E + i);
			ck_assert_uint_eq(x.a[i].msn, broken ? 0 : i + 1);
			seen[broken][i] = x.a[i];
		}
		ex_down(&x);
	}
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_uint_eq(seen[0][i].op, seen[1][i].op);
		ck_assert_uint_eq(seen[0][i].syn, seen[1][i].syn);
		ck_assert_uint_eq(seen[0][i].atmack, seen[1][i].atmack);
		ck_assert_uint_eq(seen[0][i].plen, seen[1][i].plen);
	}
}
END_TEST

/* 9.7.5.2.4: a WRITE with an R_Key that names no MR (_i 0), a WRITE past
 * the MR's end (_i 1), a READ (_i 2) and a FETCH_ADD (_i 3) with an R_Key
 * that names no MR are NAKed remote access error; rkey_nak_invalid:
 * invalid request. In both the memory is untouched, nothing is read out
 * and b's QP reports the access error it is. */
START_TEST(rkey_nak_invalid)
{
	for (int broken = 0; broken < 2; broken++) {
		struct ex x;
		ex_up(&x, broken ? ROCEMU_MISBEHAVE_RKEY_NAK_INVALID
				 : ROCEMU_MISBEHAVE_NONE, NULL);
		uint32_t key = rocemu_mr_rkey(x.p.b.mr);
		struct req w = { ROCE_OP_RC_RDMA_WRITE_ONLY, E,
				 addr_of(&x.p.b, 0), key ^ 0x100, 8, 0, 8 };
		if (_i == 1) { /* the right key, 4 of 8 bytes past the end */
			w.va = addr_of(&x.p.b, x.p.b.len - 4);
			w.rkey = key;
		} else if (_i == 2) {
			w.opcode = ROCE_OP_RC_RDMA_READ_REQUEST;
			w.plen = 0;
		} else if (_i == 3) {
			w.opcode = ROCE_OP_RC_FETCH_ADD;
			w.add = 1;
			w.plen = 0;
		}
		inject(&x, &w);
		ck_assert_uint_eq(x.n, 1);
		ck_assert_uint_eq(x.a[0].op, ROCE_OP_RC_ACK);
		ck_assert_uint_eq(x.a[0].psn, E);
		ck_assert_uint_eq(syn_type(&x.a[0]), SYN_NAK);
		ck_assert_uint_eq(x.a[0].syn & 31,
				  broken ? NAK_INV_REQ : NAK_REM_ACCESS);
		for (size_t i = 0; i < x.p.b.len; i++)
			ck_assert_msg(!x.p.b.buf[i], "byte %zu written", i);
		ck_assert_int_eq(state_of(x.p.b.qp), IBV_QPS_ERR);
		struct ibv_async_event ev;
		ck_assert_int_eq(rocemu_dev_get_async_event(x.p.b.dev, &ev), 0);
		ck_assert_int_eq(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
		ex_down(&x);
	}
}
END_TEST

/* The name table: each name back to its value, each rule cited, an
 * unknown name refused. */
START_TEST(names)
{
	ck_assert_str_eq(rocemu_misbehave_name(ROCEMU_MISBEHAVE_NONE), "none");
	for (int m = 1; m < ROCEMU_MISBEHAVE_COUNT; m++) {
		const char *name = rocemu_misbehave_name((enum rocemu_misbehave)m);
		ck_assert_ptr_nonnull(name);
		ck_assert_int_eq(rocemu_misbehave_parse(name), m);
		ck_assert_ptr_nonnull(
			strstr(rocemu_misbehave_text((enum rocemu_misbehave)m),
			       "IBTA 9.7"));
	}
	ck_assert_str_eq(rocemu_misbehave_name(ROCEMU_MISBEHAVE_SEQ_NAK_EVERY),
			 "seq_nak_every");
	ck_assert_int_eq(rocemu_misbehave_parse("sloppy"), -1);
	ck_assert_int_eq(rocemu_misbehave_parse(""), -1);
	ck_assert_ptr_null(rocemu_misbehave_name(ROCEMU_MISBEHAVE_COUNT));
	ck_assert_ptr_null(rocemu_misbehave_text(ROCEMU_MISBEHAVE_COUNT));
}
END_TEST

Suite *misbehave_suite(void)
{
	Suite *s = suite_create("misbehave");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, seq_nak_every);
	tcase_add_test(tc, dup_read_ignored);
	tcase_add_test(tc, dup_atomic_reexec);
	tcase_add_test(tc, rnr_timer_zero);
	tcase_add_test(tc, msn_frozen);
	tcase_add_loop_test(tc, rkey_nak_invalid, 0, 4);
	tcase_add_test(tc, names);
	suite_add_tcase(s, tc);
	return s;
}
