/* SPDX-License-Identifier: MIT */
/* The Check suites, one per module, and helpers they share. */
#ifndef ROCEMU_TESTS_CHECK_SUITES_H
#define ROCEMU_TESTS_CHECK_SUITES_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "rocemu/proto.h"

Suite *ibhdr_suite(void);
Suite *timer_start_suite(void);
Suite *opcode_suite(void);
Suite *aeth_psn_suite(void);
Suite *icrc_suite(void);
Suite *frame_suite(void);
Suite *datagram_suite(void);
Suite *ipid_suite(void);
Suite *malformed_suite(void);
Suite *rxe_pcap_suite(void);
Suite *pcapio_suite(void);
Suite *dissect_suite(void);
Suite *rc_suite(void);
Suite *rc_errors_suite(void);
Suite *explain_suite(void);
Suite *mw_suite(void);
Suite *qp_suite(void);
Suite *soak_suite(void);
Suite *state_suite(void);
Suite *conformance_suite(void);
Suite *uc_ud_suite(void);
Suite *srq_suite(void);
Suite *udp_suite(void);
Suite *safety_suite(void);
Suite *reads_suite(void);
Suite *atomic_write_suite(void);
Suite *flush_suite(void);
Suite *odp_suite(void);
Suite *flow_suite(void);
Suite *watch_suite(void);
Suite *misbehave_suite(void);
Suite *rules_suite(void);
Suite *cmrules_suite(void);
Suite *ladder_suite(void);
Suite *impair_suite(void);
Suite *range_suite(void);
Suite *gid_suite(void);
Suite *fieldtab_suite(void);
Suite *grh_suite(void);
Suite *cm_suite(void);
Suite *ibcm_suite(void);
Suite *stamp_suite(void);

/* A deterministic generator, so that failures repeat. */
uint64_t t_rand(uint64_t *state);

/*
 * Fills f with a valid packet of the given opcode, addresses 10.0.0.1 to
 * 10.0.0.2 (or fd00::1 to fd00::2), random header fields drawn from *rng,
 * and a payload of plen bytes from payload (which must hold plen bytes).
 */
void t_make_frame(struct roce_frame *f, unsigned ip_ver, uint8_t opcode,
		  const uint8_t *payload, uint32_t plen, uint64_t *rng);

/* The IBTA defines t_opcode_count() opcodes; t_opcode(i) is the i-th. */
unsigned t_opcode_count(void);
uint8_t t_opcode(unsigned i);

/* A valid payload length for an opcode: a path MTU for FIRST/MIDDLE. */
uint32_t t_payload_len_for(uint8_t opcode, uint64_t *rng);

/* Field-by-field equality (the structs have padding, memcmp would not do). */
int t_bth_eq(const struct roce_bth *a, const struct roce_bth *b);

/* Directory of the bundled captures ($ROCEMU_PCAPS, default "pcaps"). */
const char *t_pcap_dir(void);

#endif
