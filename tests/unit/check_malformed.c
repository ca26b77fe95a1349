/* SPDX-License-Identifier: MIT */
/* Malformed input: every truncation point, broken lengths, pad, TVer; -EBADMSG with a reason. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"

static int parse_exact(const uint8_t *b, size_t n, struct roce_frame *g,
		       const char **why)
{
	uint8_t *copy = malloc(n ? n : 1); /* exact size for ASan */

	memcpy(copy, b, n);
	int rc = roce_frame_parse(ROCE_LINK_ETH, copy, n, n, g, why);
	free(copy);
	return rc;
}

static int make(uint8_t *b, uint8_t op, uint32_t plen, uint64_t seed)
{
	static uint8_t payload[4096];
	struct roce_frame f;
	uint64_t rng = seed;

	t_make_frame(&f, 4, op, payload, plen, &rng);
	return roce_frame_build(&f, b, ROCE_FRAME_MAX);
}

/* Frame cut at every length, lengths in the headers left as they were. */
START_TEST(test_every_truncation_point)
{
	uint8_t b[ROCE_FRAME_MAX];
	uint64_t rng = 300 + (uint64_t)_i;
	struct roce_frame g;
	const char *why;
	uint8_t op = t_opcode((unsigned)_i);
	int n = make(b, op, t_payload_len_for(op, &rng), rng);

	for (int cut = 0; cut < n; cut++) {
		why = NULL;
		int rc = parse_exact(b, (size_t)cut, &g, &why);
		if (cut < 14 + 20 + 8)
			ck_assert_int_eq(rc, -ENOMSG);
		else
			ck_assert_int_eq(rc, -EBADMSG);
		ck_assert_ptr_nonnull(why);
	}
}
END_TEST

/* Rewrites the IPv4 and UDP lengths for a datagram of udp_len bytes. */
static void set_lengths(uint8_t *b, size_t udp_len)
{
	size_t ip = 20 + udp_len;

	b[16] = (uint8_t)(ip >> 8), b[17] = (uint8_t)ip;
	b[24] = b[25] = 0;
	uint16_t c = roce_inet_csum(b + 14, 20, 0);
	b[24] = (uint8_t)(c >> 8), b[25] = (uint8_t)c;
	b[38] = (uint8_t)(udp_len >> 8), b[39] = (uint8_t)udp_len;
}

/* Transport cut at every length with consistent IP/UDP lengths: either a
 * reasoned -EBADMSG or a packet whose ICRC does not verify. */
START_TEST(test_every_consistent_transport_cut)
{
	uint8_t b[ROCE_FRAME_MAX];
	uint64_t rng = 500 + (uint64_t)_i;
	struct roce_frame g;
	const char *why;
	uint8_t op = t_opcode((unsigned)_i);
	int n = make(b, op, t_payload_len_for(op, &rng), rng);

	for (int cut = 14 + 20 + 8; cut < n; cut++) {
		set_lengths(b, (size_t)cut - 34);
		why = NULL;
		int rc = parse_exact(b, (size_t)cut, &g, &why);
		if (rc == 0)
			ck_assert(!roce_frame_icrc_ok(&g));
		else
			ck_assert(rc == -EBADMSG && why);
	}
}
END_TEST

static const char *reason_of(uint8_t *b, int n)
{
	struct roce_frame g;
	const char *why = NULL;

	ck_assert_int_eq(parse_exact(b, (size_t)n, &g, &why), -EBADMSG);
	return why;
}

START_TEST(test_named_defects)
{
	uint8_t b[ROCE_FRAME_MAX];
	const size_t bth = 42;
	int n;

	n = make(b, 0x04, 0, 1);
	b[bth + 1] |= 0x30; /* pad 3 with no payload */
	ck_assert_str_eq(reason_of(b, n), "pad count exceeds the payload");
	n = make(b, 0x04, 8, 1);
	b[bth + 1] |= 0x01; /* TVer 1 */
	ck_assert_str_eq(reason_of(b, n), "BTH TVer is not 0");
	n = make(b, 0x04, 100, 1);
	b[bth] = 0x00; /* SEND_FIRST of 100 bytes: pad 0, as FIRST needs */
	{ /* the MTU is the receiver's to judge: not malformed */
		struct roce_frame g;
		const char *why = NULL;
		ck_assert_int_eq(parse_exact(b, (size_t)n, &g, &why), 0);
	}
	n = make(b, 0x04, 99, 1);
	b[bth] = 0x00; /* SEND_FIRST of 99 bytes with pad 1 */
	ck_assert_str_eq(reason_of(b, n), "FIRST/MIDDLE packet with pad bytes");
	n = make(b, 0x04, 8, 1);
	b[bth] = 0x11; /* an ACK with 4 bytes of payload after its AETH */
	ck_assert_str_eq(reason_of(b, n),
			 "payload on an opcode that carries none");
	n = make(b, 0x0a, 16, 1);
	b[bth] = 0x1d; /* ATOMIC_WRITE has WRITE_ONLY's headers, 8 bytes */
	ck_assert_str_eq(reason_of(b, n), "ATOMIC_WRITE payload is not 8 bytes");
	n = make(b, 0x04, 0, 1);
	b[bth] = 0x02; /* SEND_LAST with no payload: the receiver's to judge */
	{
		struct roce_frame g;
		const char *why = NULL;
		ck_assert_int_eq(parse_exact(b, (size_t)n, &g, &why), 0);
	}
	n = make(b, 0x04, 0, 1);
	b[bth] = 0x13; /* CMP_SWAP needs 28 bytes of AtomicETH */
	ck_assert_str_eq(reason_of(b, n),
			 "shorter than the headers its opcode requires");
	n = make(b, 0x04, 64, 1);
	b[39] ^= 4; /* UDP length off by 4 */
	ck_assert_str_eq(reason_of(b, n),
			 "UDP length disagrees with the IP length");
	n = make(b, 0x04, 64, 1);
	b[20] |= 0x20; /* more fragments */
	ck_assert_str_eq(reason_of(b, n), "fragmented IPv4 datagram");
}
END_TEST

START_TEST(test_random_bytes_never_crash)
{
	uint64_t rng = 77 + (uint64_t)_i;
	uint8_t b[256];
	struct roce_frame g;
	const char *why;

	/* Valid headers up to UDP 4791, then noise, so the transport parser
	 * is reached on every try. */
	int n = make(b, 0x04, 64, rng);
	for (int k = 0; k < 2000; k++) {
		size_t len = 42 + t_rand(&rng) % (size_t)(n - 41);
		for (size_t i = 42; i < len; i++)
			b[i] = (uint8_t)t_rand(&rng);
		set_lengths(b, len - 34);
		why = NULL;
		int rc = parse_exact(b, len, &g, &why);
		ck_assert(rc == 0 || (rc == -EBADMSG && why));
	}
}
END_TEST

Suite *malformed_suite(void)
{
	Suite *s = suite_create("malformed");
	TCase *tc = tcase_create("defects");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_every_truncation_point, 0,
			    (int)t_opcode_count());
	tcase_add_loop_test(tc, test_every_consistent_transport_cut, 0,
			    (int)t_opcode_count());
	tcase_add_test(tc, test_named_defects);
	tcase_add_loop_test(tc, test_random_bytes_never_crash, 0, 8);
	suite_add_tcase(s, tc);
	return s;
}
