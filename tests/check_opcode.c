/* SPDX-License-Identifier: MIT */
/* The opcode table against the IBTA listing, and a build/parse round trip of every opcode. */
#include <errno.h>
#include <string.h>

#include "check_suites.h"

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

Suite *opcode_suite(void)
{
	Suite *s = suite_create("opcode");
	TCase *tc = tcase_create("table");

	tcase_add_loop_test(tc, test_opcode_table_matches_ibta, 0, NIBTA);
	tcase_add_test(tc, test_opcode_table_defines_nothing_else);
	tcase_add_loop_test(tc, test_every_opcode_round_trips, 0, 2 * NIBTA);
	tcase_add_test(tc, test_undefined_opcodes_are_refused);
	suite_add_tcase(s, tc);
	return s;
}
