/* SPDX-License-Identifier: MIT */
/* ICRC against published vectors and a bit-by-bit CRC written here from the IBTA definition. */
#include <errno.h>
#include <string.h>

#include "check_suites.h"

/* scapy's UC sample (test/contrib/roce.uts): ICRC bytes 78 f3 53 f3. */
static const uint8_t scapy_uc[] = {
	0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22, 0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22,
	0x08, 0x00, 0x45, 0x01, 0x00, 0x40, 0x04, 0x78, 0x40, 0x00, 0x40, 0x11,
	0xb4, 0xd5, 0xc0, 0xa8, 0x00, 0x07, 0xc0, 0xa8, 0x00, 0x07, 0xc0, 0x00,
	0x12, 0xb7, 0x00, 0x2c, 0xac, 0xa2, 0x24, 0x60, 0xff, 0xff, 0x00, 0x00,
	0x00, 0xd3, 0x00, 0xcf, 0x17, 0x10, 0x46, 0x30, 0x81, 0x8b, 0xe2, 0x89,
	0x35, 0xd9, 0x0e, 0x9a, 0x95, 0x50, 0x54, 0x01, 0xbe, 0x88, 0x5e, 0x50,
	0x00, 0x00, 0x78, 0xf3, 0x53, 0xf3,
};

/* A CNP captured on a ConnectX-4 Lx (same source): ICRC 82 fd 00 2a. */
static const uint8_t cx4_cnp[] = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32,
	0x08, 0x00, 0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
	0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00,
	0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
	0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x82, 0xfd,
	0x00, 0x2a,
};

START_TEST(test_icrc_scapy_uc_vector)
{
	struct roce_frame f;
	uint8_t b[sizeof(scapy_uc)], rebuilt[sizeof(scapy_uc)];
	const char *why = "";

	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, scapy_uc,
					  sizeof(scapy_uc), sizeof(scapy_uc),
					  &f, &why), 0);
	ck_assert_uint_eq(f.icrc_calc, 0x78f353f3);
	ck_assert_int_eq(roce_frame_build(&f, rebuilt, sizeof(rebuilt)),
			 (int)sizeof(scapy_uc));
	ck_assert(!memcmp(rebuilt, scapy_uc, sizeof(scapy_uc)));
	/* The UDP checksum is masked: other bytes there change nothing. */
	memcpy(b, scapy_uc, sizeof(b));
	b[40] = 0xaa;
	b[41] = 0xbb;
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, sizeof(b),
					  sizeof(b), &f, &why), 0);
	ck_assert(roce_frame_icrc_ok(&f));
	ck_assert_uint_eq(f.ib.bth.opcode, 0x24);
	ck_assert_uint_eq(f.ib.bth.pad, 2);
	ck_assert(f.ib.bth.migreq);
	ck_assert_uint_eq(f.ib.bth.dqpn, 211);
	ck_assert_uint_eq(f.ib.bth.psn, 13571856);
	ck_assert_uint_eq(f.ib.payload_len, 18);
}
END_TEST

/* scapy also gives the IPv4 (0xb4d5) and UDP (0xaca2) checksums of that
 * packet; the UDP one covers the ICRC. */
START_TEST(test_checksums_scapy_uc_vector)
{
	uint8_t b[sizeof(scapy_uc)];

	memcpy(b, scapy_uc, sizeof(b));
	ck_assert_uint_eq(roce_inet_csum(b + 14, 20, 0), 0);
	b[40] = b[41] = 0;
	ck_assert_uint_eq(roce_udp_csum(b + 14, b + 34, 44), 0xaca2);
}
END_TEST

START_TEST(test_icrc_connectx4_cnp_vector)
{
	struct roce_frame f;
	uint8_t rebuilt[sizeof(cx4_cnp)];
	const char *why = "";

	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, cx4_cnp,
					  sizeof(cx4_cnp), sizeof(cx4_cnp), &f,
					  &why), 0);
	ck_assert_uint_eq(f.icrc_calc, 0x82fd002a);
	ck_assert(roce_frame_icrc_ok(&f));
	ck_assert_int_eq(roce_frame_build(&f, rebuilt, sizeof(rebuilt)),
			 (int)sizeof(cx4_cnp));
	ck_assert(!memcmp(rebuilt, cx4_cnp, sizeof(cx4_cnp)));
}
END_TEST

/* CRC-32 one bit at a time (reflected polynomial 0xEDB88320), no inversion. */
static uint32_t crc_raw(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return crc;
}

START_TEST(test_icrc_seed_is_crc_of_eight_ones)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff };

	/* rxe seeds crc32_le with 0xdebb20e3: the raw CRC of 8 bytes of ones
	 * that stand in for the LRH. */
	ck_assert_uint_eq(crc_raw(0xffffffff, ones, 8), 0xdebb20e3);
}
END_TEST

/* The four bytes at p, least significant first (the ICRC field's order). */
static uint32_t get_le32_of(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The masked frame's ICRC by bits, as in the test above (a RoCEv2 frame at
 * b, n bytes, Ethernet without VLAN, IP version ipv; m: scratch of n). */
static uint32_t ref_icrc(const uint8_t *b, size_t n, unsigned ipv, uint8_t *m)
{
	size_t ip = 14, iph = ipv == 4 ? 20 : 40, udp = ip + iph;

	memcpy(m, b, n);
	if (ipv == 4) {
		m[ip + 1] = 0xff;			/* TOS */
		m[ip + 8] = 0xff;			/* TTL */
		m[ip + 10] = m[ip + 11] = 0xff;		/* checksum */
	} else {
		m[ip] |= 0x0f;				/* traffic class */
		m[ip + 1] = m[ip + 2] = m[ip + 3] = 0xff; /* and flow */
		m[ip + 7] = 0xff;			/* hop limit */
	}
	m[udp + 6] = m[udp + 7] = 0xff;			/* UDP checksum */
	m[udp + 8 + 4] = 0xff;				/* FECN BECN resv6 */
	return ~crc_raw(0xdebb20e3, m + ip, n - ip - 4);
}

/* Masks written out from IBTA A17.3.3, applied to a copy, then the
 * bitwise CRC; compared with the library for every opcode, both IPs. */
START_TEST(test_icrc_matches_bitwise_reference)
{
	uint64_t rng = 1000 + (uint64_t)_i;
	uint8_t payload[300], b[ROCE_FRAME_MAX], m[ROCE_FRAME_MAX];
	struct roce_frame f, g;
	const char *why = "";
	unsigned ipv = _i & 1 ? 6 : 4;
	uint8_t op = (uint8_t)(t_rand(&rng) % 0x18);

	while (!roce_opcode(op) ||
	       (roce_opcode(op)->flags & (ROCE_OPF_FIRST | ROCE_OPF_MIDDLE)))
		op = (uint8_t)(op + 1) % 0x18;
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)t_rand(&rng);
	t_make_frame(&f, ipv, op, payload, t_payload_len_for(op, &rng), &rng);
	f.udp_csum = 1; /* a real checksum, to show that it is masked */
	int n = roce_frame_build(&f, b, sizeof(b));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n,
					  (size_t)n, &g, &why), 0);

	uint32_t crc = ref_icrc(b, (size_t)n, ipv, m);
	/* Stored least significant byte first. */
	ck_assert_uint_eq(b[n - 4], crc & 0xff);
	ck_assert_uint_eq(b[n - 1], crc >> 24);
	ck_assert(roce_frame_icrc_ok(&g));
}
END_TEST

/*
 * A flow of one packet size, as the per-thread memo of corrections sees
 * it (one CRC pass per packet once it holds the flow): PSN and payload
 * change each packet; TOS, TTL, flow label, the UDP checksum and the BTH's
 * FECN/BECN byte (all masked) change now and then, the source address and
 * port too. Each built frame, roce_icrc_calc of it and the ICRC of its
 * datagram as a socket delivers it must all equal the bitwise reference.
 */
START_TEST(test_icrc_flow_of_one_size)
{
	static uint8_t b[ROCE_FRAME_MAX], m[ROCE_FRAME_MAX];
	uint64_t rng = 4242 + (uint64_t)_i;
	unsigned ipv = _i & 1 ? 6 : 4;
	uint8_t payload[1024] = { 0 }, hdr[ROCE_DATAGRAM_HDR_MAX];
	uint32_t plen = (uint32_t)(_i < 2 ? 64 : 1024);
	struct roce_frame f, g;
	const char *why = "";

	/* Offsets in the frame of the whole bytes the ICRC masks: TOS, TTL,
	 * IPv4 checksum or traffic class and flow label, hop limit; the UDP
	 * checksum; the BTH's FECN/BECN byte. */
	static const uint8_t masked4[] = { 15, 22, 24, 25, 40, 41, 46, 0 };
	static const uint8_t masked6[] = { 15, 16, 17, 21, 60, 61, 66, 0 };
	const uint8_t *masked = ipv == 4 ? masked4 : masked6;

	t_make_frame(&f, ipv, 0x04 /* RC SEND only */, payload, plen, &rng);
	for (int k = 0; k < 60; k++) {
		for (size_t i = 0; i < plen; i++)
			payload[i] = (uint8_t)t_rand(&rng);
		f.ib.bth.psn = (uint32_t)t_rand(&rng) & 0xffffff;
		/* A socket delivers what it gets with TOS 0, TTL 64, ID 0, DF,
		 * flow label 0; other values half the time. */
		bool as_socket = t_rand(&rng) & 1;
		f.tos = as_socket ? 0 : (uint8_t)t_rand(&rng);
		f.ttl = as_socket ? 64 : (uint8_t)t_rand(&rng);
		f.flow_label = as_socket ? 0 : (uint32_t)t_rand(&rng) & 0xfffff;
		f.ip_id = 0;
		f.ip_frag = ROCE_IPV4_DF;
		f.udp_csum = as_socket ? 0 : (uint16_t)t_rand(&rng);
		if (t_rand(&rng) % 4 == 0)
			f.sport = (uint16_t)(0xc000 | (t_rand(&rng) & 3));
		if (t_rand(&rng) % 4 == 0)
			f.src_gid[15] ^= 1;
		f.ib.bth.fecn = t_rand(&rng) & 1;
		f.ib.bth.becn = t_rand(&rng) & 1;
		int n = roce_frame_build(&f, b, sizeof(b));
		ck_assert_int_gt(n, 0);
		uint32_t want = ref_icrc(b, (size_t)n, ipv, m), got = 0;
		ck_assert_uint_eq(get_le32_of(b + n - 4), want);
		ck_assert_int_eq(roce_icrc_calc(b + 14, (size_t)n - 14, &got), 0);
		ck_assert_uint_eq(got, __builtin_bswap32(want));
		/* Masked bytes changed one by one, not as a sender changes
		 * them (a TTL with its checksum): the ICRC stays. */
		memcpy(m, b, (size_t)n);
		for (size_t i = 0; masked[i]; i++)
			if (t_rand(&rng) & 1)
				m[masked[i]] = (uint8_t)t_rand(&rng);
		ck_assert_int_eq(roce_icrc_calc(m + 14, (size_t)n - 14, &got), 0);
		ck_assert_uint_eq(got, __builtin_bswap32(want));
		if (!as_socket)
			continue;
		struct roce_datagram_addr a = { .sport = f.sport };
		memcpy(a.src_gid, f.src_gid, 16);
		memcpy(a.dst_gid, f.dst_gid, 16);
		size_t udp = 14 + (ipv == 4 ? 20 : 40) + 8;
		ck_assert_int_eq(roce_datagram_parse(&a, NULL, b + udp,
						     (size_t)n - udp,
						     hdr, &g, &why), 0);
		ck_assert_uint_eq(g.icrc_calc, __builtin_bswap32(want));
		ck_assert(roce_frame_icrc_ok(&g));
	}
}
END_TEST

/* roce_crc32, whichever engine it picked, against the bitwise CRC: the
 * standard check value, every length to 600 and long odd lengths (the
 * wide kernels fold 64 or 256 bytes at a time), split at any point. */
START_TEST(test_crc32_matches_bitwise_reference)
{
	static uint8_t buf[9001];
	uint64_t rng = 7000 + (uint64_t)_i;
	size_t len = _i < 600 ? (size_t)_i : 600 + t_rand(&rng) % 8400;

	ck_assert_uint_eq(roce_crc32(0, "123456789", 9), 0xcbf43926);
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)t_rand(&rng);
	uint32_t want = ~crc_raw(0xffffffff, buf, len);
	ck_assert_uint_eq(roce_crc32(0, buf, len), want);
	size_t cut = len ? t_rand(&rng) % len : 0;
	ck_assert_uint_eq(roce_crc32(roce_crc32(0, buf, cut), buf + cut,
				     len - cut), want);
	ck_assert(!strcmp(roce_crc32_engine(), "isa-l") ||
		  !strcmp(roce_crc32_engine(), "zlib"));
}
END_TEST

START_TEST(test_icrc_rejects_short_input)
{
	uint32_t v;

	ck_assert_int_eq(roce_icrc_calc(cx4_cnp + 14, 20 + 8 + 12 + 3, &v),
			 -EBADMSG);
	ck_assert_int_eq(roce_icrc_calc(cx4_cnp + 14, 0, &v), -EBADMSG);
	ck_assert_int_eq(roce_icrc_calc(cx4_cnp, 60, &v), -EBADMSG);
}
END_TEST

/* The IPv4 ID and DF a UDP socket hides are recovered from the ICRC. */
START_TEST(test_icrc_solves_hidden_ipv4_id)
{
	uint64_t rng = 4000 + (uint64_t)_i;
	uint8_t payload[1500], b[ROCE_FRAME_MAX];
	struct roce_frame f;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)t_rand(&rng);
	uint32_t plen = (uint32_t)(t_rand(&rng) % 1400);
	t_make_frame(&f, 4, 0x04, payload, plen, &rng);
	f.ip_frag = t_rand(&rng) & 1 ? ROCE_IPV4_DF : 0;
	int n = roce_frame_build(&f, b, sizeof(b));
	uint8_t *ip = b + 14;
	size_t len = (size_t)n - 14;
	ip[4] = ip[5] = ip[6] = ip[7] = 0;
	ck_assert_int_eq(roce_icrc_solve_ipv4(ip, len), 0);
	ck_assert_uint_eq((ip[4] << 8) | ip[5], f.ip_id);
	ck_assert_uint_eq((ip[6] << 8) | ip[7], f.ip_frag);
	/* a flipped payload bit is caught (but for a 2^-15 chance) */
	ip[4] = ip[5] = ip[6] = ip[7] = 0;
	ip[len - 5] ^= 0x10;
	ck_assert_int_eq(roce_icrc_solve_ipv4(ip, len), -EBADMSG);
}
END_TEST

Suite *icrc_suite(void)
{
	Suite *s = suite_create("icrc");
	TCase *tc = tcase_create("vectors");

	tcase_add_test(tc, test_icrc_scapy_uc_vector);
	tcase_add_test(tc, test_checksums_scapy_uc_vector);
	tcase_add_test(tc, test_icrc_connectx4_cnp_vector);
	tcase_add_test(tc, test_icrc_seed_is_crc_of_eight_ones);
	tcase_add_loop_test(tc, test_icrc_matches_bitwise_reference, 0, 200);
	tcase_add_loop_test(tc, test_icrc_flow_of_one_size, 0, 8);
	tcase_add_loop_test(tc, test_crc32_matches_bitwise_reference, 0, 700);
	tcase_add_test(tc, test_icrc_rejects_short_input);
	tcase_add_loop_test(tc, test_icrc_solves_hidden_ipv4_id, 0, 200);
	suite_add_tcase(s, tc);
	return s;
}
