/* SPDX-License-Identifier: MIT */
/* The three renderings carry the decoded values, and never write past their buffer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"

/* An RC WRITE_ONLY of 3 bytes, values chosen here, from 10.0.0.1:49441. */
static void sample(struct roce_frame *g, uint8_t *b)
{
	static const uint8_t data[3] = { 1, 2, 3 };
	struct roce_frame f;
	uint64_t rng = 5;
	const char *why = "";

	t_make_frame(&f, 4, 0x0a, data, 3, &rng);
	f.sport = 49441;
	f.ib.bth.dqpn = 0x11;
	f.ib.bth.psn = 0xf8ba50;
	f.ib.bth.ackreq = 1;
	f.ib.bth.se = 0;
	f.ib.bth.fecn = f.ib.bth.becn = 0;
	f.ib.bth.pkey = 0xffff;
	f.ib.reth.va = 0x00005567ef93f000ull;
	f.ib.reth.rkey = 0x2ea;
	f.ib.reth.len = 3;
	int n = roce_frame_build(&f, b, ROCE_FRAME_MAX);
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n,
					  (size_t)n, g, &why), 0);
}

static const struct roce_dissect_in in = { .frame_no = 7, .rel_ns = 1500000,
					   .caplen = 81 };

START_TEST(test_line_has_the_fields)
{
	uint8_t b[ROCE_FRAME_MAX];
	char out[512];
	struct roce_frame f;
	struct roce_sb sb;

	sample(&f, b);
	roce_sb_init(&sb, out, sizeof(out));
	roce_fmt_line(&sb, &in, &f);
	ck_assert(!sb.overflow);
	ck_assert_msg(strstr(out, "7 0.001500 10.0.0.1:49441 > 10.0.0.2:4791 "
				  "RC_RDMA_WRITE_ONLY dqpn 0x000011 psn "
				  "0xf8ba50 A "),
		      "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "va 0x00005567ef93f000"));
	ck_assert_ptr_nonnull(strstr(out, "rkey 0x000002ea"));
	ck_assert_ptr_nonnull(strstr(out, "payload 3 icrc ok\n"));
}
END_TEST

START_TEST(test_json_has_the_fields)
{
	uint8_t b[ROCE_FRAME_MAX];
	char out[2048];
	struct roce_frame f;
	struct roce_sb sb;

	sample(&f, b);
	roce_sb_init(&sb, out, sizeof(out));
	roce_fmt_json(&sb, &in, &f);
	static const char *const want[] = {
		"{\"frame\":7,", "\"status\":\"ok\"", "\"src\":\"10.0.0.1\"",
		"\"sport\":49441", "\"opcode\":10",
		"\"opcode_name\":\"RC_RDMA_WRITE_ONLY\"", "\"dqpn\":17",
		"\"psn\":16300624", "\"ackreq\":true",
		("\"reth\":{\"va\":\"0x00005567ef93f000\",\"rkey\":746,"
		 "\"len\":3}"),
		"\"payload_len\":3", "\"icrc_ok\":true}\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(strstr(out, want[i]), "%s missing in %s",
			      want[i], out);
}
END_TEST

START_TEST(test_tree_and_bad_icrc)
{
	uint8_t b[ROCE_FRAME_MAX];
	char out[2048];
	struct roce_frame f;
	struct roce_sb sb;

	sample(&f, b);
	f.ib.icrc ^= 1;
	roce_sb_init(&sb, out, sizeof(out));
	roce_fmt_tree(&sb, &in, &f);
	ck_assert_ptr_nonnull(strstr(out, "BTH: opcode 0x0a "
					  "(RC_RDMA_WRITE_ONLY)"));
	ck_assert_ptr_nonnull(strstr(out, "psn 0xf8ba50 (16300624)"));
	ck_assert_ptr_nonnull(strstr(out, "RETH:"));
	ck_assert_ptr_nonnull(strstr(out, " BAD, computed "));
	roce_sb_init(&sb, out, sizeof(out));
	roce_fmt_line(&sb, &in, &f);
	ck_assert_ptr_nonnull(strstr(out, "icrc BAD wire "));
}
END_TEST

START_TEST(test_malformed_line_gives_reason)
{
	uint8_t b[ROCE_FRAME_MAX];
	char out[512];
	struct roce_frame f;
	struct roce_sb sb;
	struct roce_dissect_in bad = in;

	sample(&f, b);
	bad.status = -EBADMSG;
	bad.why = "pad count exceeds the payload";
	roce_sb_init(&sb, out, sizeof(out));
	roce_fmt_line(&sb, &bad, &f);
	ck_assert_ptr_nonnull(
		strstr(out, " MALFORMED: pad count exceeds the payload\n"));
	roce_sb_init(&sb, out, sizeof(out));
	roce_fmt_json(&sb, &bad, &f);
	ck_assert_ptr_nonnull(strstr(out, "\"status\":\"malformed\""));
	ck_assert_ptr_nonnull(
		strstr(out, "\"error\":\"pad count exceeds the payload\""));
}
END_TEST

START_TEST(test_small_buffer_overflows_safely)
{
	uint8_t b[ROCE_FRAME_MAX];
	struct roce_frame f;
	struct roce_sb sb;
	size_t cap = (size_t)_i + 1;
	char *out = malloc(cap); /* exact size: ASan sees any overrun */

	sample(&f, b);
	roce_sb_init(&sb, out, cap);
	roce_fmt_json(&sb, &in, &f);
	roce_fmt_tree(&sb, &in, &f);
	ck_assert(sb.overflow);
	ck_assert_uint_lt(sb.len, cap);
	free(out);
}
END_TEST

START_TEST(test_ipv6_address_text)
{
	struct roce_sb sb;
	char out[64];
	uint8_t gid[16] = { 0xfe, 0x80, [8] = 0x50, 0x54, 0, 0xff, 0xfe, 0,
			    0, 1 };

	roce_sb_init(&sb, out, sizeof(out));
	roce_fmt_gid(&sb, gid);
	ck_assert_str_eq(out, "fe80::5054:ff:fe00:1");
}
END_TEST

Suite *dissect_suite(void)
{
	Suite *s = suite_create("dissect");
	TCase *tc = tcase_create("render");

	tcase_add_test(tc, test_line_has_the_fields);
	tcase_add_test(tc, test_json_has_the_fields);
	tcase_add_test(tc, test_tree_and_bad_icrc);
	tcase_add_test(tc, test_malformed_line_gives_reason);
	tcase_add_loop_test(tc, test_small_buffer_overflows_safely, 0, 300);
	tcase_add_test(tc, test_ipv6_address_text);
	suite_add_tcase(s, tc);
	return s;
}
