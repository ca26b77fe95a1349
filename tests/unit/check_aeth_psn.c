/* SPDX-License-Identifier: MIT */
/* AETH syndrome encodings (IBTA tables 43-45) and 24-bit PSN order. */
#include "check_suites.h"

START_TEST(test_rnr_timer_table_ibta)
{
	/* IBTA table 45, in milliseconds as the spec prints them. */
	static const double ms[32] = {
		655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12,
		0.16, 0.24, 0.32, 0.48, 0.64, 0.96, 1.28, 1.92,
		2.56, 3.84, 5.12, 7.68, 10.24, 15.36, 20.48, 30.72,
		40.96, 61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52,
	};
	for (unsigned c = 0; c < 32; c++)
		ck_assert_uint_eq(roce_rnr_timer_usec(c),
				  (uint32_t)(ms[c] * 1000 + 0.5));
}
END_TEST

START_TEST(test_rnr_code_for_usec_rounds_up)
{
	ck_assert_uint_eq(roce_rnr_code_for_usec(10), 1);
	ck_assert_uint_eq(roce_rnr_code_for_usec(11), 2);
	ck_assert_uint_eq(roce_rnr_code_for_usec(1280), 14);
	ck_assert_uint_eq(roce_rnr_code_for_usec(491521), 0);
	ck_assert_uint_eq(roce_rnr_code_for_usec(0), 1);
}
END_TEST

START_TEST(test_credit_table_ibta)
{
	/* Table 44 doubles every two codes from 4 on: 4, 6, 8, 12, ... */
	ck_assert_int_eq(roce_credit_count(0), 0);
	ck_assert_int_eq(roce_credit_count(3), 3);
	for (unsigned c = 4; c < 31; c++) {
		int base = 1 << (2 + (c - 4) / 2);
		ck_assert_int_eq(roce_credit_count(c),
				 (c - 4) % 2 ? base * 3 / 2 : base);
	}
	ck_assert_int_eq(roce_credit_count(31), -1);
}
END_TEST

START_TEST(test_syndrome_fields)
{
	/* What rxe sends: ACK 0x1f, RNR NAK 0x20|timer, NAK 0x60|code. */
	ck_assert_uint_eq(roce_aeth_type(0x1f), ROCE_AETH_ACK);
	ck_assert_uint_eq(roce_aeth_value(0x1f), 31);
	ck_assert_uint_eq(roce_aeth_type(0x2e), ROCE_AETH_RNR_NAK);
	ck_assert_uint_eq(roce_aeth_value(0x2e), 14);
	ck_assert_uint_eq(roce_aeth_type(0x62), ROCE_AETH_NAK);
	ck_assert_uint_eq(roce_aeth_value(0x62), ROCE_NAK_REM_ACCESS);
	ck_assert_uint_eq(roce_aeth_syndrome(ROCE_AETH_NAK, ROCE_NAK_PSN_SEQ),
			  0x60);
	ck_assert_uint_eq(roce_aeth_syndrome(ROCE_AETH_RNR_NAK, 14), 0x2e);
	ck_assert_str_eq(roce_nak_code_name(3), "REM_OP_ERR");
	ck_assert_str_eq(roce_nak_code_name(17), "RESERVED");
}
END_TEST

/*
 * The named syndromes against the bytes rxe puts on the wire (its
 * AETH_ACK_UNLIMITED and AETH_NAK_* values) and IBTA table 43, each also
 * read back as the type and code it stands for.
 */
static const struct {
	uint8_t syndrome;
	uint8_t wire;
	unsigned type, value;
} named_syndromes[] = {
	{ ROCE_AETH_ACK_NO_CREDITS, 0x1f, ROCE_AETH_ACK, 31 },
	{ ROCE_AETH_NAK_PSN_SEQ, 0x60, ROCE_AETH_NAK, 0 },
	{ ROCE_AETH_NAK_INV_REQ, 0x61, ROCE_AETH_NAK, 1 },
	{ ROCE_AETH_NAK_REM_ACCESS, 0x62, ROCE_AETH_NAK, 2 },
	{ ROCE_AETH_NAK_REM_OP, 0x63, ROCE_AETH_NAK, 3 },
	{ ROCE_AETH_NAK_INV_RD_REQ, 0x64, ROCE_AETH_NAK, 4 },
};

START_TEST(test_named_syndromes_are_the_wire_bytes)
{
	uint8_t syn = named_syndromes[_i].syndrome;

	ck_assert_uint_eq(syn, named_syndromes[_i].wire);
	ck_assert_uint_eq(roce_aeth_type(syn), named_syndromes[_i].type);
	ck_assert_uint_eq(roce_aeth_value(syn), named_syndromes[_i].value);
}
END_TEST

START_TEST(test_psn_order_wraps)
{
	ck_assert_int_gt(roce_psn_cmp(1, 0), 0);
	ck_assert_int_lt(roce_psn_cmp(0, 1), 0);
	ck_assert_int_eq(roce_psn_cmp(0x123, 0x123), 0);
	/* Across the wrap, 0 follows 0xffffff. */
	ck_assert_int_gt(roce_psn_cmp(0, 0xffffff), 0);
	ck_assert_int_lt(roce_psn_cmp(0xfffffe, 2), 0);
	/* Half the circle ahead is the limit. */
	ck_assert_int_gt(roce_psn_cmp(0x7fffff, 0), 0);
	ck_assert_int_lt(roce_psn_cmp(0x800000, 0), 0);
	ck_assert_uint_eq(roce_psn_add(0xffffff, 2), 1);
	ck_assert_uint_eq(roce_psn_diff(1, 0xffffff), 2);
}
END_TEST

Suite *aeth_psn_suite(void)
{
	Suite *s = suite_create("aeth_psn");
	TCase *tc = tcase_create("encodings");

	tcase_add_test(tc, test_rnr_timer_table_ibta);
	tcase_add_test(tc, test_rnr_code_for_usec_rounds_up);
	tcase_add_test(tc, test_credit_table_ibta);
	tcase_add_test(tc, test_syndrome_fields);
	tcase_add_loop_test(tc, test_named_syndromes_are_the_wire_bytes, 0,
			    (int)(sizeof(named_syndromes) /
				  sizeof(named_syndromes[0])));
	tcase_add_test(tc, test_psn_order_wraps);
	suite_add_tcase(s, tc);
	return s;
}
