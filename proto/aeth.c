/* SPDX-License-Identifier: MIT */
/* AETH syndrome tables: RNR timer and credit count encodings. */
#include "rocemu/aeth.h"

/*
 * IBTA table 45. Code 25 is 61.44 ms; Linux rxe's rnrnak_usec[] has 61410
 * there, a typo: rocemu follows the specification.
 */
static const uint32_t rnr_usec[32] = {
	655360, 10,    20,    30,    40,    60,     80,     120,
	160,    240,   320,   480,   640,   960,    1280,   1920,
	2560,   3840,  5120,  7680,  10240, 15360,  20480,  30720,
	40960,  61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* IBTA table 44; code 31 is "invalid", meaning credits are not used. */
static const int credits[31] = {
	0,    1,    2,    3,     4,     6,     8,     12,    16,   24,   32,
	48,   64,   96,   128,   192,   256,   384,   512,   768,  1024, 1536,
	2048, 3072, 4096, 6144,  8192,  12288, 16384, 24576, 32768,
};

uint32_t roce_rnr_timer_usec(unsigned code)
{
	return rnr_usec[code & 0x1f];
}

unsigned roce_rnr_code_for_usec(uint32_t usec)
{
	unsigned best = 0; /* 655.36 ms, the longest */

	for (unsigned c = 1; c < 32; c++)
		if (rnr_usec[c] >= usec && rnr_usec[c] < rnr_usec[best])
			best = c;
	return best;
}

int roce_credit_count(unsigned code)
{
	code &= 0x1f;
	return code == ROCE_AETH_CREDITS_INVALID ? -1 : credits[code];
}

const char *roce_aeth_type_name(unsigned type)
{
	static const char *const names[] = { "ACK", "RNR_NAK", "RESERVED",
					     "NAK" };

	return names[type & 3];
}

const char *roce_nak_code_name(unsigned code)
{
	static const char *const names[] = { "PSN_SEQ_ERR", "INV_REQ",
					     "REM_ACCESS_ERR", "REM_OP_ERR",
					     "INV_RD_REQ" };

	return code < 5 ? names[code] : "RESERVED";
}
