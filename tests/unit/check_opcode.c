/* SPDX-License-Identifier: MIT */
/* The opcode table against the IBTA listing, and a build/parse round trip of every opcode. */
#include <errno.h>
#include <string.h>

#include "check_suites.h"
#include "obj/wr_opcode.h"
#include "rocemu/device.h"

/*
 * IBTA 1.4 table 38 (and 1.5 for FLUSH, ATOMIC_WRITE), written out as
 * bytes of extension headers after the BTH and whether payload may follow.
 */
static const struct {
	uint8_t op;
	uint8_t ext_bytes;
	uint8_t payload;
	const char *name;
} ibta[] = {
	{ 0x00, 0, 1, "RC_SEND_FIRST" }, { 0x01, 0, 1, "RC_SEND_MIDDLE" },
	{ 0x02, 0, 1, "RC_SEND_LAST" }, { 0x03, 4, 1, "RC_SEND_LAST_IMM" },
	{ 0x04, 0, 1, "RC_SEND_ONLY" }, { 0x05, 4, 1, "RC_SEND_ONLY_IMM" },
	{ 0x06, 16, 1, "RC_RDMA_WRITE_FIRST" },
	{ 0x07, 0, 1, "RC_RDMA_WRITE_MIDDLE" },
	{ 0x08, 0, 1, "RC_RDMA_WRITE_LAST" },
	{ 0x09, 4, 1, "RC_RDMA_WRITE_LAST_IMM" },
	{ 0x0a, 16, 1, "RC_RDMA_WRITE_ONLY" },
	{ 0x0b, 20, 1, "RC_RDMA_WRITE_ONLY_IMM" },
	{ 0x0c, 16, 0, "RC_RDMA_READ_REQUEST" },
	{ 0x0d, 4, 1, "RC_RDMA_READ_RESPONSE_FIRST" },
	{ 0x0e, 0, 1, "RC_RDMA_READ_RESPONSE_MIDDLE" },
	{ 0x0f, 4, 1, "RC_RDMA_READ_RESPONSE_LAST" },
	{ 0x10, 4, 1, "RC_RDMA_READ_RESPONSE_ONLY" },
	{ 0x11, 4, 0, "RC_ACK" }, { 0x12, 12, 0, "RC_ATOMIC_ACK" },
	{ 0x13, 28, 0, "RC_CMP_SWAP" }, { 0x14, 28, 0, "RC_FETCH_ADD" },
	{ 0x16, 4, 1, "RC_SEND_LAST_INV" }, { 0x17, 4, 1, "RC_SEND_ONLY_INV" },
	{ 0x1c, 20, 0, "RC_FLUSH" }, { 0x1d, 16, 1, "RC_ATOMIC_WRITE" },
	{ 0x20, 0, 1, "UC_SEND_FIRST" }, { 0x21, 0, 1, "UC_SEND_MIDDLE" },
	{ 0x22, 0, 1, "UC_SEND_LAST" }, { 0x23, 4, 1, "UC_SEND_LAST_IMM" },
	{ 0x24, 0, 1, "UC_SEND_ONLY" }, { 0x25, 4, 1, "UC_SEND_ONLY_IMM" },
	{ 0x26, 16, 1, "UC_RDMA_WRITE_FIRST" },
	{ 0x27, 0, 1, "UC_RDMA_WRITE_MIDDLE" },
	{ 0x28, 0, 1, "UC_RDMA_WRITE_LAST" },
	{ 0x29, 4, 1, "UC_RDMA_WRITE_LAST_IMM" },
	{ 0x2a, 16, 1, "UC_RDMA_WRITE_ONLY" },
	{ 0x2b, 20, 1, "UC_RDMA_WRITE_ONLY_IMM" },
	{ 0x40, 12, 1, "RD_SEND_FIRST" }, { 0x41, 12, 1, "RD_SEND_MIDDLE" },
	{ 0x42, 12, 1, "RD_SEND_LAST" }, { 0x43, 16, 1, "RD_SEND_LAST_IMM" },
	{ 0x44, 12, 1, "RD_SEND_ONLY" }, { 0x45, 16, 1, "RD_SEND_ONLY_IMM" },
	{ 0x46, 28, 1, "RD_RDMA_WRITE_FIRST" },
	{ 0x47, 12, 1, "RD_RDMA_WRITE_MIDDLE" },
	{ 0x48, 12, 1, "RD_RDMA_WRITE_LAST" },
	{ 0x49, 16, 1, "RD_RDMA_WRITE_LAST_IMM" },
	{ 0x4a, 28, 1, "RD_RDMA_WRITE_ONLY" },
	{ 0x4b, 32, 1, "RD_RDMA_WRITE_ONLY_IMM" },
	{ 0x4c, 28, 0, "RD_RDMA_READ_REQUEST" },
	{ 0x4d, 8, 1, "RD_RDMA_READ_RESPONSE_FIRST" },
	{ 0x4e, 4, 1, "RD_RDMA_READ_RESPONSE_MIDDLE" },
	{ 0x4f, 8, 1, "RD_RDMA_READ_RESPONSE_LAST" },
	{ 0x50, 8, 1, "RD_RDMA_READ_RESPONSE_ONLY" },
	{ 0x51, 8, 0, "RD_ACK" }, { 0x52, 16, 0, "RD_ATOMIC_ACK" },
	{ 0x53, 40, 0, "RD_CMP_SWAP" }, { 0x54, 40, 0, "RD_FETCH_ADD" },
	{ 0x55, 12, 0, "RD_RESYNC" },
	{ 0x64, 8, 1, "UD_SEND_ONLY" }, { 0x65, 12, 1, "UD_SEND_ONLY_IMM" },
	{ 0x81, 16, 0, "CNP" },
};
#define NIBTA (sizeof(ibta) / sizeof(ibta[0]))

START_TEST(test_opcode_table_matches_ibta)
{
	const struct roce_opcode_info *op = roce_opcode(ibta[_i].op);

	ck_assert_ptr_nonnull(op);
	ck_assert_str_eq(op->name, ibta[_i].name);
	ck_assert_uint_eq(op->hdr_len, 12 + ibta[_i].ext_bytes);
	ck_assert_uint_eq(!!(op->flags & ROCE_OPF_PAYLOAD), ibta[_i].payload);
	/* The offsets of the headers add up to the header length. */
	unsigned end = ROCE_BTH_LEN;
	for (unsigned b = 1; b < (1u << ROCE_EXT_COUNT); b <<= 1)
		if (op->exts & b) {
			ck_assert_uint_eq(roce_ext_offset(op->exts, b), end);
			end += roce_ext_len(b);
		}
	ck_assert_uint_eq(end, op->hdr_len);
}
END_TEST

START_TEST(test_opcode_table_defines_nothing_else)
{
	unsigned defined = 0;

	for (unsigned op = 0; op < 256; op++) {
		int listed = 0;
		for (size_t i = 0; i < NIBTA; i++)
			listed |= ibta[i].op == op;
		ck_assert_msg(!!roce_opcode((uint8_t)op) == listed,
			      "opcode 0x%02x", op);
		defined += listed;
	}
	ck_assert_uint_eq(defined, NIBTA);
}
END_TEST

/*
 * Every name of enum roce_op, listed here apart from the header, with the
 * name its table row must carry. A typo in the enum does not compile here;
 * a wrong value finds another row (or none) and fails.
 */
#define NAMED(nm) { ROCE_OP_##nm, #nm }
static const struct {
	unsigned op;
	const char *name;
} named[] = {
	NAMED(RC_SEND_FIRST), NAMED(RC_SEND_MIDDLE), NAMED(RC_SEND_LAST),
	NAMED(RC_SEND_LAST_IMM), NAMED(RC_SEND_ONLY), NAMED(RC_SEND_ONLY_IMM),
	NAMED(RC_RDMA_WRITE_FIRST), NAMED(RC_RDMA_WRITE_MIDDLE),
	NAMED(RC_RDMA_WRITE_LAST), NAMED(RC_RDMA_WRITE_LAST_IMM),
	NAMED(RC_RDMA_WRITE_ONLY), NAMED(RC_RDMA_WRITE_ONLY_IMM),
	NAMED(RC_RDMA_READ_REQUEST), NAMED(RC_RDMA_READ_RESPONSE_FIRST),
	NAMED(RC_RDMA_READ_RESPONSE_MIDDLE), NAMED(RC_RDMA_READ_RESPONSE_LAST),
	NAMED(RC_RDMA_READ_RESPONSE_ONLY), NAMED(RC_ACK),
	NAMED(RC_ATOMIC_ACK), NAMED(RC_CMP_SWAP), NAMED(RC_FETCH_ADD),
	NAMED(RC_SEND_LAST_INV), NAMED(RC_SEND_ONLY_INV), NAMED(RC_FLUSH),
	NAMED(RC_ATOMIC_WRITE),
	NAMED(UC_SEND_FIRST), NAMED(UC_SEND_MIDDLE), NAMED(UC_SEND_LAST),
	NAMED(UC_SEND_LAST_IMM), NAMED(UC_SEND_ONLY), NAMED(UC_SEND_ONLY_IMM),
	NAMED(UC_RDMA_WRITE_FIRST), NAMED(UC_RDMA_WRITE_MIDDLE),
	NAMED(UC_RDMA_WRITE_LAST), NAMED(UC_RDMA_WRITE_LAST_IMM),
	NAMED(UC_RDMA_WRITE_ONLY), NAMED(UC_RDMA_WRITE_ONLY_IMM),
	NAMED(RD_SEND_FIRST), NAMED(RD_SEND_MIDDLE), NAMED(RD_SEND_LAST),
	NAMED(RD_SEND_LAST_IMM), NAMED(RD_SEND_ONLY), NAMED(RD_SEND_ONLY_IMM),
	NAMED(RD_RDMA_WRITE_FIRST), NAMED(RD_RDMA_WRITE_MIDDLE),
	NAMED(RD_RDMA_WRITE_LAST), NAMED(RD_RDMA_WRITE_LAST_IMM),
	NAMED(RD_RDMA_WRITE_ONLY), NAMED(RD_RDMA_WRITE_ONLY_IMM),
	NAMED(RD_RDMA_READ_REQUEST), NAMED(RD_RDMA_READ_RESPONSE_FIRST),
	NAMED(RD_RDMA_READ_RESPONSE_MIDDLE), NAMED(RD_RDMA_READ_RESPONSE_LAST),
	NAMED(RD_RDMA_READ_RESPONSE_ONLY), NAMED(RD_ACK),
	NAMED(RD_ATOMIC_ACK), NAMED(RD_CMP_SWAP), NAMED(RD_FETCH_ADD),
	NAMED(RD_RESYNC),
	NAMED(UD_SEND_ONLY), NAMED(UD_SEND_ONLY_IMM),
	NAMED(CNP),
};
#define NNAMED (sizeof(named) / sizeof(named[0]))

START_TEST(test_enum_names_their_rows)
{
	const struct roce_opcode_info *op = roce_opcode((uint8_t)named[_i].op);

	ck_assert_msg(op != NULL, "%s: no row at 0x%02x", named[_i].name,
		      named[_i].op);
	ck_assert_str_eq(op->name, named[_i].name);
}
END_TEST

/* The listing above names each row once: none is left without a name. */
START_TEST(test_every_row_is_named)
{
	ck_assert_uint_eq(NNAMED, t_opcode_count());
	for (size_t i = 0; i < NNAMED; i++)
		for (size_t j = 0; j < i; j++)
			ck_assert_uint_ne(named[i].op, named[j].op);
}
END_TEST

/*
 * IBTA 9.2.1 table 38, written out by hand: which opcode each transport
 * uses for an RC operation, or -1 where it has none (UC: SEND and WRITE
 * only; RD: all but SEND with Invalidate and the 1.5 extensions; UD:
 * SEND_ONLY with and without immediate).
 */
static const struct {
	uint8_t rc;
	int uc, rd, ud;
} same_operation[] = {
	{ 0x00, 0x20, 0x40, -1 }, { 0x01, 0x21, 0x41, -1 },
	{ 0x02, 0x22, 0x42, -1 }, { 0x03, 0x23, 0x43, -1 },
	{ 0x04, 0x24, 0x44, 0x64 }, { 0x05, 0x25, 0x45, 0x65 },
	{ 0x06, 0x26, 0x46, -1 }, { 0x07, 0x27, 0x47, -1 },
	{ 0x08, 0x28, 0x48, -1 }, { 0x09, 0x29, 0x49, -1 },
	{ 0x0a, 0x2a, 0x4a, -1 }, { 0x0b, 0x2b, 0x4b, -1 },
	{ 0x0c, -1, 0x4c, -1 }, { 0x0d, -1, 0x4d, -1 },
	{ 0x0e, -1, 0x4e, -1 }, { 0x0f, -1, 0x4f, -1 },
	{ 0x10, -1, 0x50, -1 }, { 0x11, -1, 0x51, -1 },
	{ 0x12, -1, 0x52, -1 }, { 0x13, -1, 0x53, -1 },
	{ 0x14, -1, 0x54, -1 }, { 0x16, -1, -1, -1 },
	{ 0x17, -1, -1, -1 }, { 0x1c, -1, -1, -1 }, { 0x1d, -1, -1, -1 },
};

static int want_or_einval(int op)
{
	return op < 0 ? -EINVAL : op;
}

START_TEST(test_opcode_for_transport)
{
	uint8_t rc = same_operation[_i].rc;

	ck_assert_int_eq(roce_opcode_for(ROCE_TR_RC, rc), rc);
	ck_assert_int_eq(roce_opcode_for(ROCE_TR_UC, rc),
			 want_or_einval(same_operation[_i].uc));
	ck_assert_int_eq(roce_opcode_for(ROCE_TR_RD, rc),
			 want_or_einval(same_operation[_i].rd));
	ck_assert_int_eq(roce_opcode_for(ROCE_TR_UD, rc),
			 want_or_einval(same_operation[_i].ud));
	ck_assert_int_eq(roce_opcode_for(ROCE_TR_CNP, rc), -EINVAL);
}
END_TEST

/* Only RC opcodes go in; the RC table above lists every one of them. */
START_TEST(test_opcode_for_refuses_non_rc)
{
	unsigned rc_rows = 0;

	for (unsigned op = 0; op < 256; op++) {
		const struct roce_opcode_info *info = roce_opcode((uint8_t)op);
		if (info && info->transport == ROCE_TR_RC) {
			rc_rows++;
			continue;
		}
		ck_assert_int_eq(roce_opcode_for(ROCE_TR_RC, (uint8_t)op),
				 -EINVAL);
		ck_assert_int_eq(roce_opcode_for(ROCE_TR_UC, (uint8_t)op),
				 -EINVAL);
	}
	ck_assert_uint_eq(rc_rows,
			  sizeof(same_operation) / sizeof(same_operation[0]));
	ck_assert_int_eq(roce_opcode_for((enum roce_transport)9, 0x04),
			 -EINVAL);
}
END_TEST

static void assert_same_exts(const struct roce_ib *a, const struct roce_ib *b)
{
	unsigned e = a->op->exts;

	if (e & ROCE_EXT_RDETH)
		ck_assert_uint_eq(a->rdeth.een, b->rdeth.een);
	if (e & ROCE_EXT_DETH)
		ck_assert(a->deth.qkey == b->deth.qkey &&
			  a->deth.src_qp == b->deth.src_qp);
	if (e & ROCE_EXT_FETH)
		ck_assert_uint_eq(a->feth, b->feth);
	if (e & ROCE_EXT_RETH)
		ck_assert(a->reth.va == b->reth.va &&
			  a->reth.rkey == b->reth.rkey &&
			  a->reth.len == b->reth.len);
	if (e & ROCE_EXT_ATMETH)
		ck_assert(a->atmeth.va == b->atmeth.va &&
			  a->atmeth.rkey == b->atmeth.rkey &&
			  a->atmeth.swap_add == b->atmeth.swap_add &&
			  a->atmeth.compare == b->atmeth.compare);
	if (e & ROCE_EXT_AETH)
		ck_assert(a->aeth.syndrome == b->aeth.syndrome &&
			  a->aeth.msn == b->aeth.msn);
	if (e & ROCE_EXT_ATMACK)
		ck_assert_uint_eq(a->atmack, b->atmack);
	if (e & ROCE_EXT_IMMDT)
		ck_assert_uint_eq(a->imm, b->imm);
	if (e & ROCE_EXT_IETH)
		ck_assert_uint_eq(a->ieth, b->ieth);
}

/* _i: index into ibta[] times 2, plus the IP version choice. */
START_TEST(test_every_opcode_round_trips)
{
	uint64_t rng = 7 + (uint64_t)_i;
	uint8_t opcode = ibta[_i / 2].op, payload[4096], buf[ROCE_FRAME_MAX];
	unsigned ipv = _i % 2 ? 6 : 4;
	struct roce_frame f, g;
	const char *why = "";

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)t_rand(&rng);
	uint32_t plen = t_payload_len_for(opcode, &rng);
	t_make_frame(&f, ipv, opcode, payload, plen, &rng);
	int n = roce_frame_build(&f, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, buf, (size_t)n,
					  (size_t)n, &g, &why), 0);
	ck_assert_msg(roce_frame_icrc_ok(&g), "%s", roce_opcode(opcode)->name);
	ck_assert(t_bth_eq(&f.ib.bth, &g.ib.bth));
	ck_assert_ptr_eq(g.ib.op, roce_opcode(opcode));
	assert_same_exts(&g.ib, &f.ib);
	ck_assert_uint_eq(g.ib.payload_len, plen);
	ck_assert(plen == 0 || !memcmp(g.ib.payload, payload, plen));
	ck_assert(!memcmp(f.src_gid, g.src_gid, 16));
	ck_assert_uint_eq(f.sport, g.sport);
	ck_assert_uint_eq(f.tos, g.tos);
}
END_TEST

START_TEST(test_undefined_opcodes_are_refused)
{
	uint64_t rng = 99;
	uint8_t buf[256];
	struct roce_frame f, g;
	const char *why = "";

	for (unsigned op = 0; op < 256; op++) {
		if (roce_opcode((uint8_t)op))
			continue;
		t_make_frame(&f, 4, (uint8_t)op, NULL, 0, &rng);
		ck_assert_int_eq(roce_frame_build(&f, buf, sizeof(buf)),
				 -EINVAL);
		/* Forge one from a valid ACK with the opcode byte changed. */
		t_make_frame(&f, 4, 0x11, NULL, 0, &rng);
		int n = roce_frame_build(&f, buf, sizeof(buf));
		buf[14 + 20 + 8] = (uint8_t)op;
		ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, buf, (size_t)n,
						  (size_t)n, &g, &why),
				 -EBADMSG);
		ck_assert_str_eq(why, "opcode undefined by the IBTA");
	}
}
END_TEST

/*
 * The work requests rocemu takes, written out by hand: which transports
 * have each (IBTA 9.8.3 for UC, 9.8.4 for UD; READ, atomics and SEND with
 * Invalidate are RC's only), whether it is a READ or an atomic, its send
 * CQE's opcode (ibv_poll_cq(3)), and the RC request opcodes that carry it
 * first, middle, last and only in a message (IBTA 9.4). The memory
 * window operations (IBTA 10.6.7) are RC's and UC's, send nothing and
 * complete as LOCAL_INV and BIND_MW. Every other ibv_wr_opcode value is
 * refused everywhere.
 */
static const struct {
	enum ibv_wr_opcode op;
	const char *name;
	bool rc, uc, ud;
	bool rd_atomic;
	enum ibv_wc_opcode wc;
	uint8_t first, middle, last, only;
} wr_expect[] = {
	{ IBV_WR_RDMA_WRITE, "RDMA_WRITE", 1, 1, 0, 0, IBV_WC_RDMA_WRITE,
	  0x06, 0x07, 0x08, 0x0a },
	{ IBV_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM", 1, 1, 0, 0,
	  IBV_WC_RDMA_WRITE, 0x06, 0x07, 0x09, 0x0b },
	{ IBV_WR_SEND, "SEND", 1, 1, 1, 0, IBV_WC_SEND,
	  0x00, 0x01, 0x02, 0x04 },
	{ IBV_WR_SEND_WITH_IMM, "SEND_WITH_IMM", 1, 1, 1, 0, IBV_WC_SEND,
	  0x00, 0x01, 0x03, 0x05 },
	{ IBV_WR_RDMA_READ, "RDMA_READ", 1, 0, 0, 1, IBV_WC_RDMA_READ,
	  0x0c, 0x0c, 0x0c, 0x0c },
	{ IBV_WR_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP", 1, 0, 0, 1,
	  IBV_WC_COMP_SWAP, 0x13, 0x13, 0x13, 0x13 },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD", 1, 0, 0, 1,
	  IBV_WC_FETCH_ADD, 0x14, 0x14, 0x14, 0x14 },
	{ IBV_WR_SEND_WITH_INV, "SEND_WITH_INV", 1, 0, 0, 0, IBV_WC_SEND,
	  0x00, 0x01, 0x16, 0x17 },
	{ IBV_WR_LOCAL_INV, "LOCAL_INV", 1, 1, 0, 0, IBV_WC_LOCAL_INV,
	  0, 0, 0, 0 },
	{ IBV_WR_BIND_MW, "BIND_MW", 1, 1, 0, 0, IBV_WC_BIND_MW, 0, 0, 0, 0 },
	/* IBTA 1.5: RC only, one packet, no rd_atomic credit */
	{ IBV_WR_ATOMIC_WRITE, "ATOMIC_WRITE", 1, 0, 0, 0,
	  IBV_WC_ATOMIC_WRITE, 0x1d, 0x1d, 0x1d, 0x1d },
	/* IBTA 1.5 FLUSH (IBV_WR_FLUSH 14, IBV_WC_FLUSH 8 in rdma-core
	 * 45): RC only, one packet, no rd_atomic credit */
	{ (enum ibv_wr_opcode)14, "FLUSH", 1, 0, 0, 0,
	  (enum ibv_wc_opcode)8, 0x1c, 0x1c, 0x1c, 0x1c },
};
#define NWR (sizeof(wr_expect) / sizeof(wr_expect[0]))

/* The row of wr_expect for op, or -1 if op is refused everywhere. */
static int wr_expected(unsigned op)
{
	for (size_t i = 0; i < NWR; i++)
		if ((unsigned)wr_expect[i].op == op)
			return (int)i;
	return -1;
}

static bool wr_expect_on(int i, enum ibv_qp_type t)
{
	return i >= 0 && (t == IBV_QPT_RC ? wr_expect[i].rc
			  : t == IBV_QPT_UC ? wr_expect[i].uc
			  : t == IBV_QPT_UD ? wr_expect[i].ud : false);
}

static const enum ibv_qp_type every_qpt[] = {
	IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RAW_PACKET,
	IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV, IBV_QPT_DRIVER, 0, 1,
};

/* _i: every value an ibv_wr_opcode byte may hold. */
START_TEST(test_wr_table_matches_ibta)
{
	enum ibv_wr_opcode op = (enum ibv_wr_opcode)_i;
	const struct wr_opcode_info *w = wr_opcode(op);
	int i = wr_expected((unsigned)_i);

	for (size_t t = 0; t < sizeof(every_qpt) / sizeof(every_qpt[0]); t++)
		ck_assert_msg(wr_opcode_allowed(op, every_qpt[t]) ==
				      wr_expect_on(i, every_qpt[t]),
			      "opcode %d on QP type %d", _i, every_qpt[t]);
	if (i < 0) {
		ck_assert_ptr_null(w);
		ck_assert_str_eq(wr_opcode_name(op), "?");
		ck_assert(!wr_is(op, ~0u));
		return;
	}
	ck_assert_ptr_nonnull(w);
	ck_assert_str_eq(wr_opcode_name(op), wr_expect[i].name);
	ck_assert_int_eq(wr_is(op, WR_RD_ATOMIC), wr_expect[i].rd_atomic);
	ck_assert_int_eq(wr_wc_opcode(op), wr_expect[i].wc);
	ck_assert_uint_eq(w->first, wr_expect[i].first);
	ck_assert_uint_eq(w->middle, wr_expect[i].middle);
	ck_assert_uint_eq(w->last, wr_expect[i].last);
	ck_assert_uint_eq(w->only, wr_expect[i].only);
}
END_TEST

/*
 * Posting walks the same expectation: each opcode value on an RC, a UC
 * and a UD QP is taken or refused with -EINVAL. The QPs are in ERROR,
 * where a post is still checked in full and then flushed at once, so the
 * SQ never fills and nothing goes on the wire; each WQE taken comes back
 * as one flushed CQE.
 */
static void post_every_opcode(struct rocemu_pd *pd, struct rocemu_cq *cq,
			      struct rocemu_mr *mr, uint64_t *word,
			      struct rocemu_ah *ah, enum ibv_qp_type t)
{
	/* a BIND_MW names a window (one of length 0 needs no MR) */
	struct rocemu_mw *mw = rocemu_mw_alloc(pd, IBV_MW_TYPE_1);
	struct ibv_qp_init_attr init = {
		.send_cq = (struct ibv_cq *)(void *)cq,
		.recv_cq = (struct ibv_cq *)(void *)cq,
		.qp_type = t, .cap = { 4, 4, 1, 1, 16 },
	};
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_sge sge = { (uint64_t)(uintptr_t)word, 8,
			       rocemu_mr_lkey(mr) };
	struct ibv_wc wc[8];
	int taken = 0;

	struct rocemu_qp *qp = rocemu_qp_new(pd, &init);
	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(rocemu_qp_modify(qp, &err, IBV_QP_STATE), 0);
	for (unsigned op = 0; op < 64; op++) {
		struct ibv_send_wr wr = { .wr_id = op, .sg_list = &sge,
					  .num_sge = 1 }, *bad = NULL;
		bool want = wr_expect_on(wr_expected(op), t);

		wr.opcode = (enum ibv_wr_opcode)op;
		if (t == IBV_QPT_UD) {
			wr.wr.ud.ah = (struct ibv_ah *)(void *)ah;
			wr.wr.ud.remote_qpn = 0x11;
		} else {
			wr.wr.atomic.remote_addr = (uint64_t)(uintptr_t)word;
			wr.wr.atomic.rkey = rocemu_mr_lkey(mr);
		}
		wr.bind_mw.mw = (struct ibv_mw *)(void *)mw;
		if (op == 14) /* FLUSH: no SGE, a length, type 0, range */
			wr.num_sge = 0;
		ck_assert_msg(rocemu_post_send(qp, &wr, &bad) ==
				      (want ? 0 : -EINVAL),
			      "opcode %u on QP type %d", op, t);
		ck_assert_ptr_eq(bad, want ? NULL : &wr);
		taken += want;
	}
	for (int n; (n = rocemu_cq_poll(cq, 8, wc)) > 0; taken -= n)
		for (int k = 0; k < n; k++)
			ck_assert_int_eq(wc[k].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(taken, 0);
	ck_assert_int_eq(rocemu_qp_free(qp), 0);
	ck_assert_int_eq(rocemu_mw_dealloc(mw), 0);
}

START_TEST(test_post_takes_what_the_transport_has)
{
	struct rocemu_dev_cfg cfg = { .name = "dev", .mtu = IBV_MTU_1024,
				      .gid = { [10] = 0xff, [11] = 0xff,
					       [12] = 10, [15] = 1 } };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh.dgid.raw = { [10] = 0xff, [11] = 0xff,
						    [12] = 10, [15] = 2 } };
	static uint64_t words[8];

	struct rocemu_world *w = rocemu_world_new(1);
	struct rocemu_dev *d = rocemu_dev_new(w, &cfg);
	struct rocemu_pd *pd = rocemu_pd_alloc(d);
	struct rocemu_cq *cq = rocemu_cq_new(d, 256, NULL);
	struct rocemu_mr *mr = rocemu_mr_reg(pd, words, sizeof(words),
					     IBV_ACCESS_LOCAL_WRITE |
						     IBV_ACCESS_REMOTE_WRITE |
						     IBV_ACCESS_REMOTE_READ |
						     IBV_ACCESS_REMOTE_ATOMIC);
	struct rocemu_ah *ah = rocemu_ah_new(pd, &aa);
	ck_assert(d && pd && cq && mr && ah);
	post_every_opcode(pd, cq, mr, &words[1], ah, IBV_QPT_RC);
	post_every_opcode(pd, cq, mr, &words[1], ah, IBV_QPT_UC);
	post_every_opcode(pd, cq, mr, &words[1], ah, IBV_QPT_UD);
	ck_assert_int_eq(rocemu_ah_free(ah), 0);
	ck_assert_int_eq(rocemu_mr_dereg(mr), 0);
	ck_assert_int_eq(rocemu_cq_free(cq), 0);
	ck_assert_int_eq(rocemu_pd_free(pd), 0);
	rocemu_dev_free(d);
	rocemu_world_free(w);
}
END_TEST

Suite *opcode_suite(void)
{
	Suite *s = suite_create("opcode");
	TCase *tc = tcase_create("table");

	tcase_add_loop_test(tc, test_opcode_table_matches_ibta, 0, NIBTA);
	tcase_add_test(tc, test_opcode_table_defines_nothing_else);
	tcase_add_loop_test(tc, test_enum_names_their_rows, 0, NNAMED);
	tcase_add_test(tc, test_every_row_is_named);
	tcase_add_loop_test(tc, test_opcode_for_transport, 0,
			    sizeof(same_operation) / sizeof(same_operation[0]));
	tcase_add_test(tc, test_opcode_for_refuses_non_rc);
	tcase_add_loop_test(tc, test_every_opcode_round_trips, 0, 2 * NIBTA);
	tcase_add_test(tc, test_undefined_opcodes_are_refused);
	suite_add_tcase(s, tc);
	tc = tcase_create("work requests");
	tcase_add_loop_test(tc, test_wr_table_matches_ibta, 0, 256);
	tcase_add_test(tc, test_post_takes_what_the_transport_has);
	suite_add_tcase(s, tc);
	return s;
}
