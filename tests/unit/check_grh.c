/* SPDX-License-Identifier: MIT */
/* The routing header's wire fields, against values rxe put on the wire and hand-worked ones. */
#include <string.h>

#include "check_suites.h"
#include "rocemu/grh.h"

/* 0x6 | 0xab | 0xcdef1: the traffic class straddles the first two bytes. */
START_TEST(test_ipv6_word_packs_and_splits)
{
	uint8_t tc;
	uint32_t fl;

	ck_assert_uint_eq(roce_ipv6_vtcfl(0xab, 0xcdef1), 0x6abcdef1);
	ck_assert_uint_eq(roce_ipv6_vtcfl(0, 0), 0x60000000);
	ck_assert_uint_eq(roce_ipv6_vtcfl(0xff, 0xfffff), 0x6fffffff);
	/* A label wider than 20 bits loses its top bits, not the class. */
	ck_assert_uint_eq(roce_ipv6_vtcfl(0x01, 0x1fffff), 0x601fffff);
	roce_ipv6_vtcfl_split(0x6abcdef1, &tc, &fl);
	ck_assert_uint_eq(tc, 0xab);
	ck_assert_uint_eq(fl, 0xcdef1);
	roce_ipv6_vtcfl_split(0x6ff00000, &tc, &fl);
	ck_assert_uint_eq(tc, 0xff);
	ck_assert_uint_eq(fl, 0);
	/* The version nibble is not the class's. */
	roce_ipv6_vtcfl_split(0xf0000001, &tc, &fl);
	ck_assert_uint_eq(tc, 0);
	ck_assert_uint_eq(fl, 1);
}
END_TEST

/*
 * Ports rxe sent with (pcaps/rxe): QPs 0x11 and 0x12 used 0xc132, 0x17 and
 * 0x1e 0xc2b2, either way round; the rest worked by hand from Linux's
 * rdma_calc_flow_label and rdma_flow_label_to_udp_sport.
 */
START_TEST(test_connected_sport_is_rxes)
{
	ck_assert_uint_eq(roce_flow_label_of_qpns(0x11, 0x12), 0x132);
	ck_assert_uint_eq(roce_udp_sport_of_flow_label(0x132), 0xc132);
	ck_assert_uint_eq(roce_udp_sport_of_flow_label(
				  roce_flow_label_of_qpns(0x17, 0x1e)), 0xc2b2);
	ck_assert_uint_eq(roce_udp_sport_of_flow_label(
				  roce_flow_label_of_qpns(0x1e, 0x17)), 0xc2b2);
	/* The product of two 24-bit QPNs needs 48 bits. */
	ck_assert_uint_eq(roce_flow_label_of_qpns(0xffffff, 0xffffff), 0xfff1e);
	ck_assert_uint_eq(roce_udp_sport_of_flow_label(0xfff1e), 0xff21);
	ck_assert_uint_eq(roce_flow_label_of_qpns(0x123456, 0xabcdef), 0xac3e3);
	ck_assert_uint_eq(roce_udp_sport_of_flow_label(0xac3e3), 0xc3c8);
	ck_assert_uint_eq(roce_flow_label_of_qpns(1, 0), 0);
	ck_assert_uint_eq(roce_udp_sport_of_flow_label(0), 0xc000);
	/* The top 6 label bits fold into the low ones. */
	ck_assert_uint_eq(roce_udp_sport_of_flow_label(0xfc000), 0xc03f);
}
END_TEST

/* rxe's UD QP 0x25 sent from 0xc87e (pcaps/rxe/ud_send.pcap). */
START_TEST(test_datagram_sport_is_rxes)
{
	ck_assert_uint_eq(roce_udp_sport_of_qpn(0x25), 0xc87e);
	ck_assert_uint_eq(roce_udp_sport_of_qpn(0), 0xc000);
	ck_assert_uint_eq(roce_udp_sport_of_qpn(1), 0xd872);
	ck_assert_uint_eq(roce_udp_sport_of_qpn(0x11), 0xdf94);
	ck_assert_uint_eq(roce_udp_sport_of_qpn(0xffffff), 0xf94d);
}
END_TEST

START_TEST(test_frame_address_picks_the_ip_version)
{
	static const uint8_t v4[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 9 };
	static const uint8_t v6[16] = { 0xfe, 0x80, [15] = 9 };
	/* ::ffff:0:0/96 needs both 0xff bytes. */
	static const uint8_t near[16] = { [10] = 0xff, [12] = 10 };
	struct roce_frame f;

	roce_frame_init(&f, 6);
	f.ttl = 7;
	roce_frame_address(&f, v4, 0x68);
	ck_assert_uint_eq(f.ip_ver, 4);
	ck_assert_uint_eq(f.ip_frag, 0x4000);
	ck_assert_uint_eq(f.tos, 0x68);
	ck_assert_uint_eq(f.ttl, 7);
	ck_assert(!memcmp(f.dst_gid, v4, 16));
	roce_frame_address(&f, v6, 0xb8);
	ck_assert_uint_eq(f.ip_ver, 6);
	ck_assert_uint_eq(f.ip_frag, 0);
	ck_assert_uint_eq(f.tos, 0xb8);
	ck_assert(!memcmp(f.dst_gid, v6, 16));
	roce_frame_address(&f, near, 0);
	ck_assert_uint_eq(f.ip_ver, 6);
	/* Its own dst_gid as the destination. */
	roce_frame_address(&f, v4, 0);
	roce_frame_address(&f, f.dst_gid, 1);
	ck_assert_uint_eq(f.ip_ver, 4);
	ck_assert(!memcmp(f.dst_gid, v4, 16));
}
END_TEST

Suite *grh_suite(void)
{
	Suite *s = suite_create("grh");
	TCase *tc = tcase_create("grh");

	tcase_add_test(tc, test_ipv6_word_packs_and_splits);
	tcase_add_test(tc, test_connected_sport_is_rxes);
	tcase_add_test(tc, test_datagram_sport_is_rxes);
	tcase_add_test(tc, test_frame_address_picks_the_ip_version);
	suite_add_tcase(s, tc);
	return s;
}
