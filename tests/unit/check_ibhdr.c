/* SPDX-License-Identifier: MIT */
/* BTH and extension headers: field positions per the IBTA layout, round trips, bounds. */
#include <errno.h>
#include <string.h>

#include "check_suites.h"

/* One BTH field set to all ones, and the wire bytes IBTA 9.2 puts it in. */
static const struct {
	const char *name;
	struct roce_bth h;
	uint8_t wire[12];
} bth_bits[] = {
	{ "opcode", { .opcode = 0xff }, { 0xff } },
	{ "se", { .se = 1 }, { 0, 0x80 } },
	{ "migreq", { .migreq = 1 }, { 0, 0x40 } },
	{ "pad", { .pad = 3 }, { 0, 0x30 } },
	{ "tver", { .tver = 0xf }, { 0, 0x0f } },
	{ "pkey", { .pkey = 0xffff }, { 0, 0, 0xff, 0xff } },
	{ "fecn", { .fecn = 1 }, { [4] = 0x80 } },
	{ "becn", { .becn = 1 }, { [4] = 0x40 } },
	{ "resv6", { .resv6 = 0x3f }, { [4] = 0x3f } },
	{ "dqpn", { .dqpn = 0xffffff }, { [5] = 0xff, 0xff, 0xff } },
	{ "ackreq", { .ackreq = 1 }, { [8] = 0x80 } },
	{ "resv7", { .resv7 = 0x7f }, { [8] = 0x7f } },
	{ "psn", { .psn = 0xffffff }, { [9] = 0xff, 0xff, 0xff } },
};

START_TEST(test_bth_field_positions)
{
	uint8_t buf[12];
	struct roce_bth back;

	ck_assert_int_eq(roce_bth_put(buf, sizeof(buf), &bth_bits[_i].h), 12);
	ck_assert_msg(!memcmp(buf, bth_bits[_i].wire, 12), "BTH %s",
		      bth_bits[_i].name);
	ck_assert_int_eq(roce_bth_get(buf, sizeof(buf), &back), 12);
	ck_assert(t_bth_eq(&back, &bth_bits[_i].h));
}
END_TEST

/* The CNP of a ConnectX-4 Lx capture (scapy's RoCE tests), BTH bytes. */
START_TEST(test_bth_decodes_real_cnp)
{
	static const uint8_t cnp[12] = { 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
					 0x01, 0x18, 0, 0, 0, 0 };
	struct roce_bth h;

	ck_assert_int_eq(roce_bth_get(cnp, 12, &h), 12);
	ck_assert_uint_eq(h.opcode, 0x81);
	ck_assert(h.becn && !h.fecn && !h.se && !h.migreq && !h.ackreq);
	ck_assert_uint_eq(h.pkey, 0xffff);
	ck_assert_uint_eq(h.dqpn, 0x118);
	ck_assert_uint_eq(h.psn, 0);
}
END_TEST

START_TEST(test_ext_headers_byte_order)
{
	uint8_t b[28];
	struct roce_reth r = { 0x0102030405060708ull, 0x11121314, 0x21222324 };
	struct roce_atmeth a = { 1, 2, 0x3132333435363738ull, 4 };
	struct roce_deth d = { 0x11111111, 0, 0xabcdef };
	struct roce_aeth k = { 0x62, 0x010203 };

	ck_assert_int_eq(roce_reth_put(b, sizeof(b), &r), 16);
	ck_assert_uint_eq(b[0], 1);
	ck_assert_uint_eq(b[7], 8);
	ck_assert_uint_eq(b[8], 0x11);
	ck_assert_uint_eq(b[15], 0x24);
	ck_assert_int_eq(roce_atmeth_put(b, sizeof(b), &a), 28);
	ck_assert_uint_eq(b[7], 1);
	ck_assert_uint_eq(b[11], 2);
	ck_assert_uint_eq(b[12], 0x31);
	ck_assert_uint_eq(b[27], 4);
	ck_assert_int_eq(roce_deth_put(b, sizeof(b), &d), 8);
	ck_assert_uint_eq(b[3], 0x11);
	ck_assert_uint_eq(b[4], 0);
	ck_assert_uint_eq(b[5], 0xab);
	ck_assert_uint_eq(b[7], 0xef);
	ck_assert_int_eq(roce_aeth_put(b, sizeof(b), &k), 4);
	ck_assert_uint_eq(b[0], 0x62);
	ck_assert_uint_eq(b[3], 0x03);
}
END_TEST

START_TEST(test_ext_headers_round_trip)
{
	uint64_t rng = 42 + (uint64_t)_i;
	uint8_t b[28];
	struct roce_reth r = { t_rand(&rng), (uint32_t)t_rand(&rng),
			       (uint32_t)t_rand(&rng) }, r2;
	struct roce_atmeth a = { t_rand(&rng), (uint32_t)t_rand(&rng),
				 t_rand(&rng), t_rand(&rng) }, a2;
	struct roce_deth d = { (uint32_t)t_rand(&rng), (uint8_t)t_rand(&rng),
			       (uint32_t)t_rand(&rng) & 0xffffff }, d2;
	struct roce_rdeth e = { (uint8_t)t_rand(&rng),
				(uint32_t)t_rand(&rng) & 0xffffff }, e2;
	struct roce_aeth k = { (uint8_t)t_rand(&rng),
			       (uint32_t)t_rand(&rng) & 0xffffff }, k2;

	roce_reth_put(b, 16, &r);
	roce_reth_get(b, 16, &r2);
	ck_assert(r.va == r2.va && r.rkey == r2.rkey && r.len == r2.len);
	roce_atmeth_put(b, 28, &a);
	roce_atmeth_get(b, 28, &a2);
	ck_assert(a.va == a2.va && a.rkey == a2.rkey &&
		  a.swap_add == a2.swap_add && a.compare == a2.compare);
	roce_deth_put(b, 8, &d);
	roce_deth_get(b, 8, &d2);
	ck_assert(d.qkey == d2.qkey && d.resv == d2.resv &&
		  d.src_qp == d2.src_qp);
	roce_rdeth_put(b, 4, &e);
	roce_rdeth_get(b, 4, &e2);
	ck_assert(e.resv == e2.resv && e.een == e2.een);
	roce_aeth_put(b, 4, &k);
	roce_aeth_get(b, 4, &k2);
	ck_assert(k.syndrome == k2.syndrome && k.msn == k2.msn);
}
END_TEST

START_TEST(test_headers_refuse_short_buffers)
{
	uint8_t b[28] = { 0 };
	struct roce_bth h = { 0 };
	struct roce_reth r;
	struct roce_atmeth a;
	struct roce_deth d;
	struct roce_aeth k;
	uint64_t v;

	ck_assert_int_eq(roce_bth_get(b, 11, &h), -EBADMSG);
	ck_assert_int_eq(roce_bth_put(b, 11, &h), -ENOSPC);
	ck_assert_int_eq(roce_reth_get(b, 15, &r), -EBADMSG);
	ck_assert_int_eq(roce_atmeth_get(b, 27, &a), -EBADMSG);
	ck_assert_int_eq(roce_deth_get(b, 7, &d), -EBADMSG);
	ck_assert_int_eq(roce_aeth_get(b, 3, &k), -EBADMSG);
	ck_assert_int_eq(roce_u64_get(b, 7, &v), -EBADMSG);
	/* A refused write leaves the buffer alone. */
	memset(b, 0xaa, sizeof(b));
	ck_assert_int_eq(roce_reth_put(b, 15, &r), -ENOSPC);
	for (int i = 0; i < 28; i++)
		ck_assert_uint_eq(b[i], 0xaa);
}
END_TEST

Suite *ibhdr_suite(void)
{
	Suite *s = suite_create("ibhdr");
	TCase *tc = tcase_create("headers");

	tcase_add_loop_test(tc, test_bth_field_positions, 0,
			    sizeof(bth_bits) / sizeof(bth_bits[0]));
	tcase_add_test(tc, test_bth_decodes_real_cnp);
	tcase_add_test(tc, test_ext_headers_byte_order);
	tcase_add_loop_test(tc, test_ext_headers_round_trip, 0, 64);
	tcase_add_test(tc, test_headers_refuse_short_buffers);
	suite_add_tcase(s, tc);
	return s;
}
