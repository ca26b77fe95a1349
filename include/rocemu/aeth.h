/* SPDX-License-Identifier: MIT */
/* AETH syndromes: ACK with credits, RNR NAK with its timer, NAK codes (IBTA 9.7.5.2). */
#ifndef ROCEMU_AETH_H
#define ROCEMU_AETH_H

#include <stdint.h>

/* Bits 6:5 of the syndrome; bit 7 is reserved. */
enum roce_aeth_type {
	ROCE_AETH_ACK = 0,
	ROCE_AETH_RNR_NAK = 1,
	ROCE_AETH_RESERVED = 2,
	ROCE_AETH_NAK = 3,
};

/* NAK codes, the low 5 bits of a NAK syndrome (IBTA table 43). */
enum roce_nak_code {
	ROCE_NAK_PSN_SEQ = 0,
	ROCE_NAK_INV_REQ = 1,
	ROCE_NAK_REM_ACCESS = 2,
	ROCE_NAK_REM_OP = 3,
	ROCE_NAK_INV_RD_REQ = 4,
};

/* Credit count 31 means "no credits advertised", which rxe always sends. */
enum { ROCE_AETH_CREDITS_INVALID = 31 };

/*
 * The whole syndromes a responder sends: an ACK advertising no credits
 * (as rxe sends every ACK), and each NAK. An RNR NAK carries its timer:
 * roce_aeth_syndrome(ROCE_AETH_RNR_NAK, code) spells it.
 */
enum roce_syndrome_name {
	ROCE_AETH_ACK_NO_CREDITS =
		ROCE_AETH_ACK << 5 | ROCE_AETH_CREDITS_INVALID,
	ROCE_AETH_NAK_PSN_SEQ = ROCE_AETH_NAK << 5 | ROCE_NAK_PSN_SEQ,
	ROCE_AETH_NAK_INV_REQ = ROCE_AETH_NAK << 5 | ROCE_NAK_INV_REQ,
	ROCE_AETH_NAK_REM_ACCESS = ROCE_AETH_NAK << 5 | ROCE_NAK_REM_ACCESS,
	ROCE_AETH_NAK_REM_OP = ROCE_AETH_NAK << 5 | ROCE_NAK_REM_OP,
	ROCE_AETH_NAK_INV_RD_REQ = ROCE_AETH_NAK << 5 | ROCE_NAK_INV_RD_REQ,
};

static inline unsigned roce_aeth_type(uint8_t syndrome)
{
	return (syndrome >> 5) & 3;
}

static inline unsigned roce_aeth_value(uint8_t syndrome)
{
	return syndrome & 0x1f;
}

static inline uint8_t roce_aeth_syndrome(unsigned type, unsigned value)
{
	return (uint8_t)(((type & 3) << 5) | (value & 0x1f));
}

/* RNR NAK timer in microseconds for a 5-bit code (IBTA table 45). */
uint32_t roce_rnr_timer_usec(unsigned code);

/* Smallest RNR code whose timer is at least usec (31 if none is). */
unsigned roce_rnr_code_for_usec(uint32_t usec);

/* Credits for a 5-bit credit code (IBTA table 44); -1 for code 31. */
int roce_credit_count(unsigned code);

/* "ACK", "RNR_NAK", "NAK", "RESERVED"; NAK code names like "PSN_SEQ_ERR". */
const char *roce_aeth_type_name(unsigned type);
const char *roce_nak_code_name(unsigned code);

#endif
