/* SPDX-License-Identifier: MIT */
/* rocemu impair's rules (the form of docs/impair.md, the matcher) and its frame edits, the results read back by the codec. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "cli/impair.h"
#include "rocemu/frame.h"

static struct impair_rule parsed(const char *text)
{
	struct impair_rule r;
	char err[IMP_ERR_MAX] = "";

	ck_assert_msg(impair_rule_parse(text, &r, err) == 0, "%s: %s", text,
		      err);
	return r;
}

/* The rule is refused, with a reason holding want. */
static void refused(const char *text, const char *want)
{
	struct impair_rule r;
	char err[IMP_ERR_MAX] = "";

	ck_assert_int_eq(impair_rule_parse(text, &r, err), -EINVAL);
	ck_assert_msg(strstr(err, want), "%s: reason '%s' lacks '%s'", text,
		      err, want);
}

#define PKT(d, o, q, p) (&(struct impair_pkt){ d, o, q, p })

static struct impair_pkt pkt(uint8_t dir, uint8_t op, uint32_t qpn,
			     uint32_t psn)
{
	return (struct impair_pkt){ dir, op, qpn, psn };
}

START_TEST(parse_the_brief_example)
{
	struct impair_rule r = parsed("drop opcode=RC_SEND_ONLY psn=0x10");

	ck_assert_int_eq(r.action, IMP_DROP);
	/* IBTA 9.2.1 table 38: RC SEND Only is 00100, RC WRITE Only 01010 */
	ck_assert(impair_rule_fires(&r, PKT(IMP_DIR_AB, 0x04, 5, 0x10)));
	ck_assert(!impair_rule_fires(&r, PKT(IMP_DIR_AB, 0x0a, 5, 0x10)));
	ck_assert(!impair_rule_fires(&r, PKT(IMP_DIR_AB, 0x04, 5, 0x11)));
	ck_assert(!impair_rule_fires(&r, PKT(IMP_DIR_AB, 0x04, 5, 0x0f)));
	ck_assert_str_eq(r.text, "drop opcode=RC_SEND_ONLY psn=0x10");
}
END_TEST

START_TEST(opcode_names)
{
	ck_assert_int_eq(impair_opcode_by_name("RC_RDMA_WRITE_ONLY"), 0x0a);
	ck_assert_int_eq(impair_opcode_by_name("RC_ACK"), 0x11);
	ck_assert_int_eq(impair_opcode_by_name("UD_SEND_ONLY"), 0x64);
	ck_assert_int_eq(impair_opcode_by_name("0x0c"), 0x0c);
	ck_assert_int_eq(impair_opcode_by_name("RC_SEND_ONL"), -ENOENT);
	/* 0x15 is reserved in RC's range */
	ck_assert_int_eq(impair_opcode_by_name("0x15"), -ENOENT);
	struct impair_rule r = parsed("dup opcode=RC_ACK,RC_RDMA_READ_RESPONSE_ONLY");
	ck_assert(impair_rule_fires(&r, PKT(IMP_DIR_BA, 0x11, 1, 1)));
	ck_assert(impair_rule_fires(&r, PKT(IMP_DIR_BA, 0x10, 1, 1)));
	ck_assert(!impair_rule_fires(&r, PKT(IMP_DIR_BA, 0x0f, 1, 1)));
}
END_TEST

START_TEST(action_arguments)
{
	struct impair_rule r = parsed("delay ms=30");
	ck_assert_int_eq(r.action, IMP_DELAY);
	ck_assert_uint_eq(r.ms, 30);
	r = parsed("reorder after=3");
	ck_assert_uint_eq(r.after, 3);
	ck_assert_uint_gt(r.ms, 0); /* released by a time even if alone */
	r = parsed("reorder");
	ck_assert_uint_eq(r.after, 1);
	r = parsed("corrupt");
	ck_assert_int_eq(r.byte, IMP_CORRUPT_LAST);
	ck_assert(!r.fix_icrc);
	r = parsed("corrupt byte=12 icrc=fix");
	ck_assert_int_eq(r.byte, 12);
	ck_assert(r.fix_icrc);
	r = parsed("dup copies=3");
	ck_assert_uint_eq(r.copies, 3);
	r = parsed("ecn qpn=0x11 dir=ba");
	ck_assert_int_eq(r.action, IMP_ECN);
	ck_assert(impair_rule_fires(&r, PKT(IMP_DIR_BA, 4, 0x11, 0)));
	ck_assert(!impair_rule_fires(&r, PKT(IMP_DIR_AB, 4, 0x11, 0)));
	ck_assert(!impair_rule_fires(&r, PKT(IMP_DIR_BA, 4, 0x12, 0)));
}
END_TEST

START_TEST(bad_rules)
{
	refused("", "empty rule");
	refused("explode", "unknown action 'explode'");
	refused("drop opcode=RC_SEND_ONL", "unknown opcode 'RC_SEND_ONL'");
	refused("drop colour=red", "unknown key 'colour'");
	refused("drop psn=0x20-0x10", "psn=");
	refused("drop psn=0x1000000", "psn=");
	refused("drop prob=1.5", "prob=");
	refused("drop prob=", "not KEY=VALUE");
	refused("drop count=0", "count=");
	refused("drop qpn=0x1000000", "qpn=");
	refused("drop qpn=-1", "qpn=");
	refused("drop dir=up", "dir=");
	refused("drop ms=5", "drop does not take ms=");
	refused("dup after=2", "dup does not take after=");
	refused("delay", "delay wants ms=");
	refused("corrupt icrc=maybe", "icrc=");
	refused("drop psn=1 psn=2", "psn= given twice");
	refused("drop opcode", "not KEY=VALUE");
}
END_TEST

START_TEST(every_nth_and_at_most)
{
	struct impair_rule r = parsed("drop every=3");
	unsigned fired = 0, at[4], n = 0;

	for (unsigned i = 1; i <= 10; i++)
		if (impair_rule_fires(&r, PKT(IMP_DIR_AB, 4, 1, i)))
			at[n < 4 ? n++ : n] = i, fired++;
	ck_assert_uint_eq(fired, 3);
	ck_assert_uint_eq(at[0], 3);
	ck_assert_uint_eq(at[1], 6);
	ck_assert_uint_eq(at[2], 9);
	ck_assert_uint_eq(r.matched, 10);
	ck_assert_uint_eq(r.fired, 3);

	r = parsed("drop opcode=RC_SEND_ONLY count=2");
	fired = 0;
	for (unsigned i = 0; i < 10; i++)
		fired += impair_rule_fires(&r, PKT(IMP_DIR_AB, 4, 1, i));
	ck_assert_uint_eq(fired, 2);
	/* an ACK does not match, so it is not counted as matched */
	impair_rule_fires(&r, PKT(IMP_DIR_BA, 0x11, 1, 1));
	ck_assert_uint_eq(r.matched, 10);
}
END_TEST

START_TEST(probability_is_seeded)
{
	struct impair_rule a = parsed("drop prob=0.5 seed=7");
	struct impair_rule b = parsed("drop prob=0.5 seed=7");
	struct impair_rule c = parsed("drop prob=0.5 seed=8");
	struct impair_rule never = parsed("drop prob=0");
	struct impair_rule always = parsed("drop prob=1");
	unsigned fa = 0, differ = 0;

	for (unsigned i = 0; i < 1000; i++) {
		struct impair_pkt p = pkt(IMP_DIR_AB, 4, 1, i);
		bool x = impair_rule_fires(&a, &p), y = impair_rule_fires(&b, &p);
		ck_assert(x == y); /* the same seed, the same choices */
		differ += x != impair_rule_fires(&c, &p);
		fa += x;
		ck_assert(!impair_rule_fires(&never, &p));
		ck_assert(impair_rule_fires(&always, &p));
	}
	/* half, loosely: 1000 fair draws fall outside 400..600 with
	 * probability below 1e-9 */
	ck_assert_uint_gt(fa, 400);
	ck_assert_uint_lt(fa, 600);
	ck_assert_uint_gt(differ, 0); /* another seed, other choices */
}
END_TEST

START_TEST(rules_from_a_file)
{
	const char *path = "build/tests/impair_rules.txt";
	FILE *fp = fopen(path, "w");
	struct impair_rule *rules = NULL;
	size_t n = 0;
	char err[IMP_ERR_MAX] = "";

	ck_assert_ptr_nonnull(fp);
	fputs("# losses\n\ndrop opcode=RC_SEND_ONLY count=1  # the first\n"
	      "  delay ms=5 dir=ab\n", fp);
	fclose(fp);
	ck_assert_int_eq(impair_rules_load(path, &rules, &n, err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(rules[0].action, IMP_DROP);
	ck_assert_uint_eq(rules[0].max, 1);
	ck_assert_int_eq(rules[1].action, IMP_DELAY);
	fp = fopen(path, "w");
	fputs("drop\n\nreorder after=x\n", fp);
	fclose(fp);
	ck_assert_int_eq(impair_rules_load(path, &rules, &n, err), -EINVAL);
	ck_assert_uint_eq(n, 3);
	ck_assert_msg(strstr(err, "impair_rules.txt:3: after="), "%s", err);
	free(rules);
	rules = NULL;
	ck_assert_int_lt(impair_rules_load("build/tests/no-such", &rules, &n,
					   err), 0);
}
END_TEST

/* A frame built by the codec, and parsed back. */
static size_t frame(uint8_t *buf, unsigned ip_ver, uint8_t tos)
{
	struct roce_frame f;
	static const uint8_t pay[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint64_t rng = 42;

	t_make_frame(&f, ip_ver, 0x04, pay, sizeof(pay), &rng);
	f.tos = tos;
	int n = roce_frame_build(&f, buf, ROCE_FRAME_MAX);
	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

static struct roce_frame parse(const uint8_t *buf, size_t len)
{
	struct roce_frame f;
	const char *why = NULL;

	ck_assert_msg(roce_frame_parse(ROCE_LINK_ETH, buf, len, len, &f,
				       &why) == 0, "%s", why);
	return f;
}

START_TEST(corrupt_keeps_or_fixes_the_icrc)
{
	uint8_t buf[ROCE_FRAME_MAX], orig[ROCE_FRAME_MAX];
	size_t len = frame(buf, _i ? 6 : 4, 0);

	memcpy(orig, buf, len);
	ck_assert_int_eq(impair_corrupt(buf, len, IMP_CORRUPT_LAST, false), 0);
	struct roce_frame f = parse(buf, len);
	/* the last payload byte (8), flipped; the ICRC left as it was */
	ck_assert_uint_eq(f.ib.payload[7], 8 ^ 0xff);
	ck_assert(!roce_frame_icrc_ok(&f));
	ck_assert_int_eq(memcmp(buf + len - 4, orig + len - 4, 4), 0);

	memcpy(buf, orig, len);
	ck_assert_int_eq(impair_corrupt(buf, len, 12, true), 0);
	f = parse(buf, len);
	ck_assert_uint_eq(f.ib.payload[0], 1 ^ 0xff); /* BTH is 12 bytes */
	ck_assert(roce_frame_icrc_ok(&f));

	memcpy(buf, orig, len);
	ck_assert_int_eq(impair_corrupt(buf, len, 19, false), 0); /* 12 + 8 - 1 */
	ck_assert_int_eq(impair_corrupt(buf, len, 20, false), -ERANGE);
	uint8_t junk[64] = { 0 };
	ck_assert_int_eq(impair_corrupt(junk, sizeof(junk), 0, false), -ENOMSG);
}
END_TEST

START_TEST(ce_mark_needs_no_icrc_fix)
{
	uint8_t buf[ROCE_FRAME_MAX];
	unsigned ver = _i ? 6 : 4;
	size_t len = frame(buf, ver, 0x88); /* DSCP 34, not ECN-capable */

	ck_assert_int_eq(impair_mark_ce(buf, len), 0);
	struct roce_frame f = parse(buf, len);
	ck_assert_uint_eq(f.tos, 0x8b); /* DSCP kept, ECN 11 (RFC 3168) */
	ck_assert(roce_frame_icrc_ok(&f)); /* Annex A17: TOS is masked */
	if (ver == 4) /* a header whose checksum is right sums to 0 */
		ck_assert_uint_eq(roce_inet_csum(f.ip_hdr, 20, 0), 0);
}
END_TEST

START_TEST(readdress)
{
	uint8_t buf[ROCE_FRAME_MAX], out[ROCE_FRAME_MAX], src[16], dst[16];
	static const uint8_t r4[4] = { 127, 0, 0, 220 }, b4[4] = { 127, 0, 0, 222 };
	size_t len = frame(buf, 4, 0);

	roce_gid_from_ipv4(src, r4);
	roce_gid_from_ipv4(dst, b4);
	int n = impair_readdress(buf, len, src, dst, 4791, out, sizeof(out));
	ck_assert_int_eq(n, (int)len);
	struct roce_frame f = parse(out, (size_t)n);
	ck_assert_int_eq(memcmp(f.src_gid, src, 16), 0);
	ck_assert_int_eq(memcmp(f.dst_gid, dst, 16), 0);
	ck_assert_uint_eq(f.sport, 4791);
	ck_assert_uint_eq(f.ip_id, 0);
	ck_assert_uint_eq(f.ip_frag, ROCE_IPV4_DF);
	ck_assert(roce_frame_icrc_ok(&f));
	ck_assert_uint_eq(roce_inet_csum(f.ip_hdr, 20, 0), 0);

	/* a wrong ICRC stays exactly as wrong */
	buf[len - 1] ^= 0x5a;
	n = impair_readdress(buf, len, src, dst, 4791, out, sizeof(out));
	f = parse(out, (size_t)n);
	ck_assert_uint_eq(f.ib.icrc ^ f.icrc_calc, 0x5a);
	/* an IPv6 GID for an IPv4 frame */
	uint8_t v6[16] = { 0xfd, [15] = 9 };
	ck_assert_int_eq(impair_readdress(buf, len, v6, dst, 4791, out,
					  sizeof(out)), -EINVAL);
}
END_TEST

Suite *impair_suite(void)
{
	Suite *s = suite_create("impair");
	TCase *t = tcase_create("rules");

	tcase_add_test(t, parse_the_brief_example);
	tcase_add_test(t, opcode_names);
	tcase_add_test(t, action_arguments);
	tcase_add_test(t, bad_rules);
	tcase_add_test(t, every_nth_and_at_most);
	tcase_add_test(t, probability_is_seeded);
	tcase_add_test(t, rules_from_a_file);
	suite_add_tcase(s, t);
	t = tcase_create("frames");
	tcase_add_loop_test(t, corrupt_keeps_or_fixes_the_icrc, 0, 2);
	tcase_add_loop_test(t, ce_mark_needs_no_icrc_fix, 0, 2);
	tcase_add_test(t, readdress);
	suite_add_tcase(s, t);
	return s;
}
