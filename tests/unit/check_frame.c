/* SPDX-License-Identifier: MIT */
/* Framing: link types, VLAN tags, IPv4 options, IPv6, checksums, snaplen cuts, non-RoCE frames. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"

static uint8_t payload[1024];

static int build(struct roce_frame *f, uint8_t *b, uint8_t op, unsigned ipv,
		 uint32_t plen, uint64_t seed)
{
	uint64_t rng = seed;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;
	t_make_frame(f, ipv, op, payload, plen, &rng);
	return roce_frame_build(f, b, ROCE_FRAME_MAX);
}

/* Parses from an exact-size heap copy, so that ASan sees any over-read.
 * g points into the copy, which the caller frees. */
static uint8_t *parse_ok(unsigned link, const uint8_t *b, size_t n,
			 struct roce_frame *g)
{
	const char *why = "";
	uint8_t *copy = malloc(n);

	memcpy(copy, b, n);
	ck_assert_msg(roce_frame_parse(link, copy, n, n, g, &why) == 0, "%s",
		      why);
	ck_assert(roce_frame_icrc_ok(g));
	return copy;
}

START_TEST(test_vlan_tags_round_trip)
{
	uint8_t b[ROCE_FRAME_MAX], r[ROCE_FRAME_MAX];
	struct roce_frame f, g;

	for (unsigned tags = 1; tags <= 2; tags++) {
		int n0 = build(&f, b, 0x04, 4, 64, 3);
		f.nvlan = (uint8_t)tags;
		f.vlan_tpid[0] = tags == 2 ? 0x88a8 : 0x8100;
		f.vlan_tci[0] = 0x2064;
		f.vlan_tpid[1] = 0x8100;
		f.vlan_tci[1] = 0x0123;
		int n = roce_frame_build(&f, b, sizeof(b));
		ck_assert_int_eq(n, n0 + 4 * (int)tags);
		ck_assert_uint_eq(b[12], tags == 2 ? 0x88 : 0x81);
		uint8_t *copy = parse_ok(ROCE_LINK_ETH, b, (size_t)n, &g);
		ck_assert_uint_eq(g.nvlan, tags);
		ck_assert_uint_eq(g.vlan_tci[0], 0x2064);
		ck_assert_int_eq(roce_frame_build(&g, r, sizeof(r)), n);
		ck_assert(!memcmp(b, r, (size_t)n));
		free(copy);
	}
}
END_TEST

/* The same datagram behind each link header rocemu reads. */
START_TEST(test_link_types)
{
	uint8_t b[ROCE_FRAME_MAX], w[ROCE_FRAME_MAX + 20];
	struct roce_frame f, g;
	unsigned ipv = _i ? 6 : 4;
	int n = build(&f, b, 0x0a, ipv, 100, 4);
	size_t ipn = (size_t)n - 14;
	uint16_t et = ipv == 4 ? 0x0800 : 0x86dd;

	/* raw IP */
	free(parse_ok(ROCE_LINK_RAW, b + 14, ipn, &g));
	ck_assert_uint_eq(g.ib.reth.va, f.ib.reth.va);
	/* Linux cooked v1: protocol at bytes 14-15 of a 16-byte header */
	memset(w, 0, 16);
	w[14] = (uint8_t)(et >> 8);
	w[15] = (uint8_t)et;
	memcpy(w + 16, b + 14, ipn);
	free(parse_ok(ROCE_LINK_SLL, w, ipn + 16, &g));
	ck_assert_uint_eq(g.ib.bth.psn, f.ib.bth.psn);
	/* Linux cooked v2: protocol at bytes 0-1 of a 20-byte header */
	memset(w, 0, 20);
	w[0] = (uint8_t)(et >> 8);
	w[1] = (uint8_t)et;
	memcpy(w + 20, b + 14, ipn);
	free(parse_ok(ROCE_LINK_SLL2, w, ipn + 20, &g));
	ck_assert_uint_eq(g.ib.bth.dqpn, f.ib.bth.dqpn);
	/* raw IP is also something rocemu writes */
	f.link = ROCE_LINK_RAW;
	ck_assert_int_eq(roce_frame_build(&f, w, sizeof(w)), (int)ipn);
	ck_assert(!memcmp(w, b + 14, ipn));
}
END_TEST

START_TEST(test_ethernet_padding_is_ignored)
{
	uint8_t b[ROCE_FRAME_MAX];
	struct roce_frame f, g;
	int n = build(&f, b, 0x11, 4, 0, 5);

	memset(b + n, 0, 8); /* trailing pad and an FCS-sized tail */
	free(parse_ok(ROCE_LINK_ETH, b, (size_t)n + 8, &g));
	ck_assert_uint_eq(g.wire_len, (uint32_t)n + 8);
}
END_TEST

START_TEST(test_ipv4_options_and_udp_checksum)
{
	static const uint8_t opts[4] = { 0x94, 0x04, 0, 0 }; /* router alert */
	uint8_t b[ROCE_FRAME_MAX], r[ROCE_FRAME_MAX];
	struct roce_frame f, g;

	build(&f, b, 0x04, 4, 33, 6);
	f.ip_optlen = 4;
	f.ip_opts = opts;
	f.udp_csum = 1;
	int n = roce_frame_build(&f, b, sizeof(b));
	ck_assert_uint_eq(b[14], 0x46);
	uint8_t *copy = parse_ok(ROCE_LINK_ETH, b, (size_t)n, &g);
	ck_assert_uint_eq(g.ip_optlen, 4);
	ck_assert_uint_ne(g.udp_csum, 0);
	/* A correct UDP checksum sums the datagram to zero. */
	uint8_t *udp = b + 14 + 24;
	uint16_t keep = g.udp_csum;
	udp[6] = udp[7] = 0;
	ck_assert_uint_eq(roce_udp_csum(b + 14, udp, g.udp_len), keep);
	udp[6] = (uint8_t)(keep >> 8);
	udp[7] = (uint8_t)keep;
	ck_assert_uint_eq(roce_inet_csum(b + 14, 24, 0), 0);
	ck_assert_int_eq(roce_frame_build(&g, r, sizeof(r)), n);
	ck_assert(!memcmp(b, r, (size_t)n));
	free(copy);
}
END_TEST

START_TEST(test_ipv6_fields)
{
	uint8_t b[ROCE_FRAME_MAX];
	struct roce_frame f, g;

	build(&f, b, 0x64, 6, 200, 7);
	f.flow_label = 0xabcde;
	f.tos = 0x68;
	f.ttl = 3;
	int n = roce_frame_build(&f, b, sizeof(b));
	free(parse_ok(ROCE_LINK_ETH, b, (size_t)n, &g));
	ck_assert_uint_eq(g.flow_label, 0xabcde);
	ck_assert_uint_eq(g.tos, 0x68);
	ck_assert_uint_eq(g.ttl, 3);
	ck_assert(!roce_gid_is_ipv4(g.src_gid));
	ck_assert_uint_eq(g.ib.deth.qkey, f.ib.deth.qkey);
}
END_TEST

START_TEST(test_snaplen_cut_is_truncated_not_malformed)
{
	uint8_t b[ROCE_FRAME_MAX];
	struct roce_frame f, g;
	const char *why = "";
	int n = build(&f, b, 0x06, 4, 1024, 8);

	/* Cut inside the payload: headers decode, the ICRC cannot be read. */
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, 128, (size_t)n, &g,
					  &why), 0);
	ck_assert(g.truncated);
	ck_assert(!roce_frame_icrc_ok(&g));
	ck_assert_uint_eq(g.ib.reth.rkey, f.ib.reth.rkey);
	ck_assert_uint_eq(g.ib.payload_len, 1024);
	ck_assert_uint_eq(g.ib.payload_avail, 128 - 14 - 20 - 8 - 28);
	/* Cut inside the RETH: the BTH decodes, the RETH is not claimed. */
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, 14 + 20 + 8 + 20,
					  (size_t)n, &g, &why), 0);
	ck_assert(g.truncated && g.ib.has_bth && g.ib.exts == 0);
}
END_TEST

START_TEST(test_other_frames_are_skipped)
{
	uint8_t b[ROCE_FRAME_MAX];
	struct roce_frame f, g;
	const char *why = "";
	int n = build(&f, b, 0x04, 4, 16, 9);

	b[12] = 0x08, b[13] = 0x06; /* ARP */
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n,
					  (size_t)n, &g, &why), -ENOMSG);
	n = build(&f, b, 0x04, 4, 16, 9);
	b[14 + 9] = 6; /* TCP */
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n,
					  (size_t)n, &g, &why), -ENOMSG);
	ck_assert_str_eq(why, "not UDP");
	n = build(&f, b, 0x04, 4, 16, 9);
	b[14 + 20 + 3] = 53; /* UDP to port 4661 */
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n,
					  (size_t)n, &g, &why), -ENOMSG);
	ck_assert_str_eq(why, "not UDP port 4791");
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, 10, 10, &g, &why),
			 -ENOMSG);
}
END_TEST

START_TEST(test_gid_helpers)
{
	static const uint8_t ip[4] = { 192, 168, 1, 9 };
	uint8_t gid[16];

	roce_gid_from_ipv4(gid, ip);
	ck_assert(roce_gid_is_ipv4(gid));
	ck_assert_uint_eq(gid[10], 0xff);
	ck_assert_uint_eq(gid[11], 0xff);
	ck_assert_uint_eq(gid[15], 9);
	gid[0] = 0xfe;
	ck_assert(!roce_gid_is_ipv4(gid));
}
END_TEST

/* Link-local GIDs as the Linux kernel made them in the rxe lab (ibv_devinfo
 * and ip -6 addr there): rxe0 on a veth with MAC 72:8e:6e:47:65:5b showed
 * GID[0] fe80::708e:6eff:fe47:655b; the veth given 02:00:fe:00:00:02 got
 * fe80::feff:fe00:2. */
START_TEST(test_gid_link_local)
{
	static const uint8_t rxe_mac[6] = { 0x72, 0x8e, 0x6e, 0x47, 0x65, 0x5b };
	static const uint8_t rxe_ll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x70,
					    0x8e, 0x6e, 0xff, 0xfe, 0x47, 0x65,
					    0x5b };
	static const uint8_t ro_mac[6] = { 0x02, 0, 0xfe, 0, 0, 0x02 };
	static const uint8_t ro_ll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0,
					   0xfe, 0xff, 0xfe, 0, 0, 0x02 };
	uint8_t gid[16], ip[4] = { 1, 2, 3, 4 };

	roce_gid_link_local(gid, rxe_mac);
	ck_assert_mem_eq(gid, rxe_ll, 16);
	/* not a MAC rocemu makes: no IPv4 address behind it */
	ck_assert(!roce_gid_link_local_ipv4(gid, ip));
	ck_assert_uint_eq(ip[0], 1);
	roce_gid_link_local(gid, ro_mac);
	ck_assert_mem_eq(gid, ro_ll, 16);
	ck_assert(roce_gid_link_local_ipv4(gid, ip));
	ck_assert_uint_eq(ip[0], 254);
	ck_assert_uint_eq(ip[1], 0);
	ck_assert_uint_eq(ip[2], 0);
	ck_assert_uint_eq(ip[3], 2);
	/* a global prefix is not link-local */
	gid[0] = 0x20;
	ck_assert(!roce_gid_link_local_ipv4(gid, ip));
}
END_TEST

START_TEST(test_build_refuses_bad_input)
{
	uint8_t b[ROCE_FRAME_MAX];
	struct roce_frame f;

	build(&f, b, 0x04, 4, 16, 10);
	ck_assert_int_eq(roce_frame_build(&f, b, 40), -ENOSPC);
	ck_assert_int_eq(roce_frame_build(&f, b, 14 + 20 + 8 + 12 + 16 + 3),
			 -ENOSPC);
	f.link = ROCE_LINK_SLL;
	ck_assert_int_eq(roce_frame_build(&f, b, sizeof(b)), -EINVAL);
	f.link = ROCE_LINK_ETH;
	f.ip_ver = 5;
	ck_assert_int_eq(roce_frame_build(&f, b, sizeof(b)), -EINVAL);
	build(&f, b, 0x11, 4, 16, 10); /* an ACK cannot carry payload */
	ck_assert_int_eq(roce_frame_build(&f, b, sizeof(b)), -EINVAL);
}
END_TEST

Suite *frame_suite(void)
{
	Suite *s = suite_create("frame");
	TCase *tc = tcase_create("framing");

	tcase_add_test(tc, test_vlan_tags_round_trip);
	tcase_add_loop_test(tc, test_link_types, 0, 2);
	tcase_add_test(tc, test_ethernet_padding_is_ignored);
	tcase_add_test(tc, test_ipv4_options_and_udp_checksum);
	tcase_add_test(tc, test_ipv6_fields);
	tcase_add_test(tc, test_snaplen_cut_is_truncated_not_malformed);
	tcase_add_test(tc, test_other_frames_are_skipped);
	tcase_add_test(tc, test_gid_helpers);
	tcase_add_test(tc, test_gid_link_local);
	tcase_add_test(tc, test_build_refuses_bad_input);
	suite_add_tcase(s, tc);
	return s;
}
