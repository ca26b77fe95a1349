/* SPDX-License-Identifier: MIT */
/* The IPv4 ID a UDP socket hides: corrupted datagrams of an established flow refused, and the per-flow predictor's window, resync and table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "../tools/icrc_flood.h"

enum { MS = 1000000 }; /* ns */

/* A datagram's UDP payload, as a socket delivers it, of an RC SEND Only
 * from 10.0.0.<from> (or fd00::<from>) to .2 with this ID and DF (IPv4),
 * in p; returns its length. */
static size_t dgram(uint8_t *p, unsigned ipv, uint8_t from, uint16_t id,
		    bool df)
{
	uint8_t payload[40] = { 1, 2, 3 }, b[ROCE_FRAME_MAX];
	const uint8_t src4[4] = { 10, 0, 0, from }, dst4[4] = { 10, 0, 0, 2 };
	struct roce_frame f;

	roce_frame_init(&f, ipv);
	if (ipv == 4) {
		roce_gid_from_ipv4(f.src_gid, src4);
		roce_gid_from_ipv4(f.dst_gid, dst4);
	} else {
		f.src_gid[0] = f.dst_gid[0] = 0xfd;
		f.src_gid[15] = from;
		f.dst_gid[15] = 2;
	}
	f.sport = 0xc001;
	f.ip_id = id;
	f.ip_frag = df ? ROCE_IPV4_DF : 0;
	f.ib.bth.opcode = 0x04; /* RC SEND Only */
	f.ib.bth.dqpn = 0x12;
	f.ib.bth.psn = id;	/* a payload of its own for each */
	f.ib.payload = payload;
	f.ib.payload_len = sizeof(payload);
	int n = roce_frame_build(&f, b, sizeof(b));
	size_t off = ROCE_ETH_HLEN + (ipv == 4 ? ROCE_IPV4_HLEN : ROCE_IPV6_HLEN) +
		     ROCE_UDP_HLEN;
	ck_assert_int_gt(n, (int)off);
	memcpy(p, b + off, (size_t)n - off);
	return (size_t)n - off;
}

/* Parses p at now_ns as received at .2 from .<from>, with table ids
 * (NULL: the strict mode); true if it parsed with a good ICRC. A refused
 * one shows ID and DF 0, as an unsolvable one does. */
static bool takes(struct roce_ipid_table *ids, unsigned ipv, uint8_t from,
		  const uint8_t *p, size_t len, uint64_t now_ns)
{
	struct roce_datagram_addr a = { .sport = 0xc001, .when_ns = now_ns };
	uint8_t hdr[ROCE_DATAGRAM_HDR_MAX];
	struct roce_frame f;
	const char *why = "";

	if (ipv == 4) {
		roce_gid_from_ipv4(a.src_gid, (const uint8_t[4]){ 10, 0, 0, from });
		roce_gid_from_ipv4(a.dst_gid, (const uint8_t[4]){ 10, 0, 0, 2 });
	} else {
		a.src_gid[0] = a.dst_gid[0] = 0xfd;
		a.src_gid[15] = from;
		a.dst_gid[15] = 2;
	}
	ck_assert_int_eq(roce_datagram_parse(&a, ids, p, len, hdr, &f, &why),
			 0);
	bool ok = roce_frame_icrc_ok(&f);
	if (!ok)
		ck_assert(f.ip_id == 0 && f.ip_frag == 0);
	return ok;
}

/* Whether the receiver takes an IPv4 datagram from 10.0.0.<from> with
 * this ID and DF at now_ms. */
static bool sent(struct roce_ipid_table *ids, uint8_t from, uint16_t id,
		 bool df, uint64_t now_ms)
{
	uint8_t p[ROCE_FRAME_MAX];
	size_t len = dgram(p, 4, from, id, df);

	return takes(ids, 4, from, p, len, now_ms * MS);
}

/* A busy flow's consecutive IDs (through the wrap), each taken; the
 * first is learned, the rest fall in the window. */
START_TEST(test_consecutive_ids_taken)
{
	struct roce_ipid_table ids;

	roce_ipid_init(&ids);
	for (unsigned k = 0; k < 300; k++)
		ck_assert_msg(sent(&ids, 1, (uint16_t)(65400 + k), true, 7),
			      "ID %u", (65400 + k) & 0xffff);
	ck_assert_uint_eq(ids.learned, 1);
	ck_assert_uint_eq(ids.window + ids.zero, 299);
	ck_assert_uint_eq(ids.refused, 0);
}
END_TEST

/* rocemu's own sender over loopback: GSO batches numbered 0, 1, ... 63,
 * each starting again at 0, and single datagrams with ID 0. */
START_TEST(test_gso_batches_taken)
{
	struct roce_ipid_table ids;
	static const unsigned batch[] = { 64, 64, 1, 1, 17, 64, 2 };

	roce_ipid_init(&ids);
	for (size_t b = 0; b < sizeof(batch) / sizeof(batch[0]); b++)
		for (unsigned k = 0; k < batch[b]; k++)
			ck_assert_msg(sent(&ids, 1, (uint16_t)k, true, b),
				      "batch %zu ID %u", b, k);
	ck_assert_uint_eq(ids.refused, 0);
	ck_assert_uint_eq(ids.zero, 6);
}
END_TEST

/* A sender whose ID jumps 5000 with no time to explain it (its counter
 * shared with other traffic): refused once, then the next consecutive
 * datagram resyncs the flow, and the ones after it follow. */
START_TEST(test_jump_refused_once_then_resynced)
{
	struct roce_ipid_table ids;

	roce_ipid_init(&ids);
	for (uint16_t id = 100; id <= 102; id++)
		ck_assert(sent(&ids, 1, id, true, 50));
	ck_assert(!sent(&ids, 1, 5102, true, 50));
	ck_assert_uint_eq(ids.refused, 1);
	ck_assert(sent(&ids, 1, 5103, true, 50));
	ck_assert_uint_eq(ids.resynced, 1);
	ck_assert(sent(&ids, 1, 5104, true, 50));
	/* the old numbers are behind now */
	ck_assert(!sent(&ids, 1, 103, true, 50));
}
END_TEST

/* Linux after an idle of t ms adds a random jump below t (HZ <= 1000):
 * taken at once after 5 s, refused after 1 ms. */
START_TEST(test_jump_after_idle_taken)
{
	struct roce_ipid_table ids;

	roce_ipid_init(&ids);
	ck_assert(sent(&ids, 1, 100, true, 1000));
	ck_assert(sent(&ids, 1, (uint16_t)(101 + 4999), true, 6000));
	ck_assert_uint_eq(ids.window, 1);
	ck_assert(!sent(&ids, 1, (uint16_t)(5101 + 4000), true, 6001));
	ck_assert_uint_eq(ids.refused, 1);
	/* what time allows is bounded: one a millisecond and a quarter */
	ck_assert(!sent(&ids, 1, (uint16_t)(5100 + 1100), true, 6801));
}
END_TEST

/* A DF that changes is refused; the flow goes on with its own DF. */
START_TEST(test_df_flip_refused)
{
	struct roce_ipid_table ids;

	roce_ipid_init(&ids);
	for (uint16_t id = 100; id <= 102; id++)
		ck_assert(sent(&ids, 1, id, true, 0));
	ck_assert(!sent(&ids, 1, 103, false, 0));
	ck_assert(sent(&ids, 1, 104, true, 0));
	ck_assert_uint_eq(ids.refused, 1);
	/* ID 0 is taken either way, with the full 32-bit check */
	ck_assert(sent(&ids, 1, 0, false, 0));
	ck_assert(sent(&ids, 1, 0, true, 0));
}
END_TEST

/* A few behind (reordering) and ahead (losses) are taken; further
 * behind is not. */
START_TEST(test_window_edges)
{
	struct roce_ipid_table ids;

	roce_ipid_init(&ids);
	ck_assert(sent(&ids, 1, 1000, true, 0));
	ck_assert(sent(&ids, 1, 1000 - ROCE_IPID_BEHIND, true, 0));
	ck_assert(sent(&ids, 1, 1000 - ROCE_IPID_BEHIND + ROCE_IPID_AHEAD + 2,
		       true, 0));
	uint16_t last = 1000 - ROCE_IPID_BEHIND + ROCE_IPID_AHEAD + 2;
	ck_assert(!sent(&ids, 1, last - ROCE_IPID_BEHIND - 1, true, 0));
	ck_assert(!sent(&ids, 1, last + ROCE_IPID_AHEAD + 3 + 20, true, 0));
	ck_assert(sent(&ids, 1, last + 1, true, 0));
}
END_TEST

/*
 * A burst that overran the receiving socket moved the sender's counter by
 * its length with no time to show for it (the rxe lab's ib_read_bw: 330
 * READ responses lost, then the very response the requester waits for).
 * The socket's drop count widens the window by as many, and the first
 * datagram after the loss is taken; without drops the same jump is
 * refused, and a drop count that moved less than the jump does not
 * cover it.
 */
START_TEST(test_socket_drops_widen_window)
{
	struct roce_ipid_table ids;
	const uint8_t a[4] = { 10, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 };

	roce_ipid_init(&ids);
	ck_assert(roce_ipid_accept(&ids, a, b, 0, 1000, 40455, true));
	ck_assert(roce_ipid_accept(&ids, a, b, 0, 1330, 40455 + 331, true));
	ck_assert_uint_eq(ids.window, 1);
	/* the drop count moved 10, the ID 331: refused */
	ck_assert(!roce_ipid_accept(&ids, a, b, 0, 1340, 40786 + 331, true));
	/* no drops at all: the same jump is refused too */
	roce_ipid_init(&ids);
	ck_assert(roce_ipid_accept(&ids, a, b, 0, 7, 40455, true));
	ck_assert(!roce_ipid_accept(&ids, a, b, 0, 7, 40455 + 331, true));
	ck_assert_uint_eq(ids.refused, 1);
}
END_TEST

/* A datagram repeated with the same ID (a corruption that repeats solves
 * to the same one) does not confirm itself as a resync. */
START_TEST(test_same_pending_not_resynced)
{
	struct roce_ipid_table ids;
	const uint8_t a[4] = { 10, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 };

	roce_ipid_init(&ids);
	ck_assert(roce_ipid_accept(&ids, a, b, 0, 0, 100, true));
	for (int k = 0; k < 5; k++)
		ck_assert(!roce_ipid_accept(&ids, a, b, 0, 0, 40000, true));
	ck_assert(!roce_ipid_accept(&ids, a, b, 0, 0, 39999, true));
	ck_assert(roce_ipid_accept(&ids, a, b, 0, 0, 40000, true));
	ck_assert_uint_eq(ids.resynced, 1);
}
END_TEST

/* A datagram no ID explains still tells when the sender was last heard:
 * a jump right after it is not put down to the idle before it. */
START_TEST(test_unexplained_datagram_marks_time)
{
	struct roce_ipid_table ids;
	uint8_t p[ROCE_FRAME_MAX];
	size_t len = dgram(p, 4, 1, 100, true);

	roce_ipid_init(&ids);
	ck_assert(takes(&ids, 4, 1, p, len, 0));
	/* the ICRC's low byte changed: no ID and DF explain it (checked by
	 * the counters: no decision was made) */
	p[len - 1] ^= 0x01;
	struct roce_ipid_table before = ids;
	ck_assert(!takes(&ids, 4, 1, p, len, 5000 * (uint64_t)MS));
	ck_assert_uint_eq(ids.refused + ids.window + ids.resynced,
			  before.refused + before.window + before.resynced);
	ck_assert(!sent(&ids, 1, 101 + 3000, true, 5001));
}
END_TEST

/* The table is bounded: 10000 flows pass through its 256 slots, the
 * least recently used go, and a flow in use all along stays. */
START_TEST(test_table_bounded)
{
	static struct roce_ipid_table ids;
	const uint8_t dst[4] = { 10, 0, 0, 2 }, busy[4] = { 10, 9, 9, 9 };
	uint16_t busy_id = 7;

	roce_ipid_init(&ids);
	ck_assert(roce_ipid_accept(&ids, busy, dst, 0, 0, busy_id, true));
	for (uint32_t k = 0; k < 10000; k++) {
		uint8_t src[4] = { 172, (uint8_t)(k >> 16), (uint8_t)(k >> 8),
				   (uint8_t)k };
		ck_assert(roce_ipid_accept(&ids, src, dst, 0, 0, 1000, true));
		ck_assert(roce_ipid_accept(&ids, busy, dst, 0, 0, ++busy_id,
					   true));
	}
	ck_assert_uint_eq(ids.learned, 10001);
	ck_assert_uint_eq(ids.learned - ids.evicted, ROCE_IPID_FLOWS);
	unsigned used = 0;
	for (int i = 0; i < ROCE_IPID_FLOWS; i++)
		used += ids.flow[i].used != 0;
	ck_assert_uint_eq(used, ROCE_IPID_FLOWS);
	/* the busy flow is known: a far ID is refused, not learned */
	ck_assert(!roce_ipid_accept(&ids, busy, dst, 0, 0, 30000, true));
	/* the last flow added is known, the first long gone: learned anew */
	const uint8_t last[4] = { 172, 0, 9999 >> 8, 9999 & 0xff };
	const uint8_t first[4] = { 172, 0, 0, 0 };
	ck_assert(!roce_ipid_accept(&ids, last, dst, 0, 0, 30000, true));
	uint64_t learned = ids.learned;
	ck_assert(roce_ipid_accept(&ids, first, dst, 0, 0, 30000, true));
	ck_assert_uint_eq(ids.learned, learned + 1);
}
END_TEST

/* IPv6 has no ID: checked in full, the table never touched; in the
 * strict mode (no table) an IPv4 datagram is taken with ID 0 only. */
START_TEST(test_ipv6_and_strict_mode)
{
	struct roce_ipid_table ids, before;
	uint8_t p[ROCE_FRAME_MAX];
	size_t len = dgram(p, 6, 1, 0, false);

	roce_ipid_init(&ids);
	before = ids;
	ck_assert(takes(&ids, 6, 1, p, len, 0));
	p[len - 2] ^= 0x40;
	ck_assert(!takes(&ids, 6, 1, p, len, 0));
	ck_assert(!memcmp(&ids, &before, sizeof(ids)));
	ck_assert(sent(NULL, 1, 0, true, 0));
	ck_assert(sent(NULL, 1, 0, false, 0));
	ck_assert(!sent(NULL, 1, 100, true, 0));
	ck_assert(!sent(NULL, 1, 1, false, 0));
}
END_TEST

/* 10^5 corrupted datagrams at a flow whose IDs were 100, 101, 102: none
 * gets through (tests/tools/icrc_flood runs 10^7 from make check). */
START_TEST(test_corrupted_flood_refused)
{
	struct roce_ipid_table ids;
	struct flood f;

	flood_run(&ids, 100000, 7 + (uint64_t)_i, &f);
	ck_assert_uint_eq(f.valid_ok, 3);
	ck_assert_uint_eq(f.sent, 100000);
	ck_assert_uint_gt(f.malformed, 0);
	ck_assert_msg(f.accepted == 0, "%llu of %llu corrupted accepted",
		      (unsigned long long)f.accepted,
		      (unsigned long long)f.sent);
}
END_TEST

Suite *ipid_suite(void)
{
	Suite *s = suite_create("ipid");
	TCase *tc = tcase_create("predict");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_consecutive_ids_taken);
	tcase_add_test(tc, test_gso_batches_taken);
	tcase_add_test(tc, test_jump_refused_once_then_resynced);
	tcase_add_test(tc, test_jump_after_idle_taken);
	tcase_add_test(tc, test_df_flip_refused);
	tcase_add_test(tc, test_window_edges);
	tcase_add_test(tc, test_same_pending_not_resynced);
	tcase_add_test(tc, test_socket_drops_widen_window);
	tcase_add_test(tc, test_unexplained_datagram_marks_time);
	tcase_add_test(tc, test_table_bounded);
	tcase_add_test(tc, test_ipv6_and_strict_mode);
	tcase_add_loop_test(tc, test_corrupted_flood_refused, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
