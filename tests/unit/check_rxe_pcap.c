/* SPDX-License-Identifier: MIT */
/* Every packet of the captures taken from real Linux rxe: decodes, ICRC verifies, rebuilds to the same bytes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check_suites.h"

static const char *const captures[] = {
	"atomic_cas", "err_write_bad_rkey", "rc_send_5000_mtu1024",
	"rc_send_64", "read_bw", "ud_send", "write_bw",
};
#define NCAP (sizeof(captures) / sizeof(captures[0]))

/* What each capture's README says it holds, checked packet by packet. */
struct seen {
	unsigned n, per_op[256];
	unsigned nak_rem_access, reth_not_first_write, qkey_11111111;
	unsigned atomic_ack_with_orig, wrong_psn_step;
};

static void observe(struct seen *s, const struct roce_frame *f,
		    uint32_t *next_psn)
{
	const struct roce_ib *ib = &f->ib;
	unsigned fl = ib->op->flags;

	s->n++;
	s->per_op[ib->bth.opcode]++;
	if ((ib->exts & ROCE_EXT_AETH) && ib->aeth.syndrome == 0x62)
		s->nak_rem_access++;
	if ((fl & ROCE_OPF_WRITE) && (ib->exts & ROCE_EXT_RETH) &&
	    !(fl & (ROCE_OPF_FIRST | ROCE_OPF_ONLY)))
		s->reth_not_first_write++;
	if ((ib->exts & ROCE_EXT_DETH) && ib->deth.qkey == 0x11111111)
		s->qkey_11111111++;
	if (ib->bth.opcode == 0x12 && (ib->exts & ROCE_EXT_ATMACK))
		s->atomic_ack_with_orig++;
	/* Within a multi-packet SEND from the client, PSNs step by one. */
	if (ib->bth.opcode <= 0x02 && f->src_gid[15] == 2) {
		if (ib->bth.opcode != 0x00 && ib->bth.psn != *next_psn)
			s->wrong_psn_step++;
		*next_psn = roce_psn_add(ib->bth.psn, 1);
	}
}

static void read_capture(const char *name, struct seen *s)
{
	char path[512], err[ROCE_PCAP_ERRLEN];
	struct roce_pcap_reader *r;
	struct roce_pcap_rec rec;
	struct roce_frame f;
	uint8_t rebuilt[ROCE_FRAME_MAX];
	uint32_t next_psn = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/rxe/%s.pcap", t_pcap_dir(), name);
	ck_assert_msg(roce_pcap_open(path, &r, err) == 0, "%s", err);
	ck_assert_uint_eq(roce_pcap_link(r), ROCE_LINK_ETH);
	memset(s, 0, sizeof(*s));
	while ((rc = roce_pcap_next(r, &rec, err)) == 1) {
		const char *why = "";
		ck_assert_msg(roce_frame_parse(ROCE_LINK_ETH, rec.data,
					       rec.caplen, rec.wire_len, &f,
					       &why) == 0,
			      "%s packet %u: %s", name, s->n + 1, why);
		ck_assert_msg(roce_frame_icrc_ok(&f), "%s packet %u ICRC",
			      name, s->n + 1);
		int n = roce_frame_build(&f, rebuilt, sizeof(rebuilt));
		ck_assert_int_eq(n, (int)rec.caplen);
		ck_assert_msg(!memcmp(rebuilt, rec.data, rec.caplen),
			      "%s packet %u rebuilds differently", name,
			      s->n + 1);
		observe(s, &f, &next_psn);
	}
	ck_assert_int_eq(rc, 0);
	roce_pcap_close(r);
	ck_assert_uint_gt(s->n, 0);
}

START_TEST(test_rxe_capture_decodes_and_rebuilds)
{
	struct seen s;

	read_capture(captures[_i], &s);
	ck_assert_uint_eq(s.wrong_psn_step, 0);
	ck_assert_uint_eq(s.reth_not_first_write, 0);
}
END_TEST

START_TEST(test_rxe_captures_hold_what_their_readme_says)
{
	struct seen s;

	read_capture("rc_send_5000_mtu1024", &s);
	ck_assert_uint_eq(s.per_op[0x01], 3 * s.per_op[0x00]);
	ck_assert_uint_eq(s.per_op[0x02], s.per_op[0x00]);
	read_capture("err_write_bad_rkey", &s);
	ck_assert_uint_ge(s.nak_rem_access, 1);
	read_capture("ud_send", &s);
	ck_assert_uint_eq(s.qkey_11111111, s.n);
	ck_assert_uint_eq(s.per_op[0x64], s.n);
	read_capture("atomic_cas", &s);
	ck_assert_uint_eq(s.per_op[0x13], 5);
	ck_assert_uint_eq(s.atomic_ack_with_orig, s.per_op[0x12]);
	read_capture("read_bw", &s);
	ck_assert_uint_gt(s.per_op[0x0c], 0);
	ck_assert_uint_eq(s.per_op[0x0d], s.per_op[0x0f]);
}
END_TEST

START_TEST(test_pcap_open_errors)
{
	char err[ROCE_PCAP_ERRLEN] = "";
	struct roce_pcap_reader *r;

	ck_assert_int_eq(roce_pcap_open("/nonexistent/x.pcap", &r, err),
			 -ENOENT);
	ck_assert(strlen(err) > 0);
	char path[512];
	snprintf(path, sizeof(path), "%s/rxe/README.md", t_pcap_dir());
	ck_assert_int_lt(roce_pcap_open(path, &r, err), 0);
}
END_TEST

Suite *rxe_pcap_suite(void)
{
	Suite *s = suite_create("rxe_pcap");
	TCase *tc = tcase_create("captures");

	tcase_add_loop_test(tc, test_rxe_capture_decodes_and_rebuilds, 0, NCAP);
	tcase_add_test(tc, test_rxe_captures_hold_what_their_readme_says);
	tcase_add_test(tc, test_pcap_open_errors);
	suite_add_tcase(s, tc);
	return s;
}
