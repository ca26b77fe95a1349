/* SPDX-License-Identifier: MIT */
/* Runs every Check suite; exits non-zero if any test fails. */
#include <stdlib.h>

#include "check_suites.h"

int main(void)
{
	SRunner *sr = srunner_create(ibhdr_suite());

	srunner_add_suite(sr, opcode_suite());
	srunner_add_suite(sr, timer_start_suite());
	srunner_add_suite(sr, aeth_psn_suite());
	srunner_add_suite(sr, icrc_suite());
	srunner_add_suite(sr, frame_suite());
	srunner_add_suite(sr, datagram_suite());
	srunner_add_suite(sr, ipid_suite());
	srunner_add_suite(sr, malformed_suite());
	srunner_add_suite(sr, rxe_pcap_suite());
	srunner_add_suite(sr, pcapio_suite());
	srunner_add_suite(sr, dissect_suite());
	srunner_add_suite(sr, rc_suite());
	srunner_add_suite(sr, rc_errors_suite());
	srunner_add_suite(sr, explain_suite());
	srunner_add_suite(sr, mw_suite());
	srunner_add_suite(sr, qp_suite());
	srunner_add_suite(sr, conformance_suite());
	srunner_add_suite(sr, uc_ud_suite());
	srunner_add_suite(sr, srq_suite());
	srunner_add_suite(sr, udp_suite());
	srunner_add_suite(sr, safety_suite());
	srunner_add_suite(sr, reads_suite());
	srunner_add_suite(sr, atomic_write_suite());
	srunner_add_suite(sr, flush_suite());
	srunner_add_suite(sr, odp_suite());
	srunner_add_suite(sr, flow_suite());
	srunner_add_suite(sr, watch_suite());
	srunner_add_suite(sr, misbehave_suite());
	srunner_add_suite(sr, rules_suite());
	srunner_add_suite(sr, cmrules_suite());
	srunner_add_suite(sr, ladder_suite());
	srunner_add_suite(sr, impair_suite());
	srunner_add_suite(sr, range_suite());
	srunner_add_suite(sr, gid_suite());
	srunner_add_suite(sr, fieldtab_suite());
	srunner_add_suite(sr, grh_suite());
	srunner_add_suite(sr, cm_suite());
	srunner_add_suite(sr, ibcm_suite());
	srunner_add_suite(sr, stamp_suite());
	srunner_add_suite(sr, soak_suite());
	srunner_add_suite(sr, state_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
