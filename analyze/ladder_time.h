/* SPDX-License-Identifier: MIT */
/* Seconds as the ladders print them: "0.000002", "-0.100000". */
#ifndef ROCEMU_ANALYZE_LADDER_TIME_H
#define ROCEMU_ANALYZE_LADDER_TIME_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

/* ns as seconds with six decimals into buf (len bytes); returns buf. */
static inline char *ladder_seconds(int64_t ns, char *buf, size_t len)
{
	uint64_t mag = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;

	snprintf(buf, len, "%s%" PRIu64 ".%06" PRIu64, ns < 0 ? "-" : "",
		 mag / 1000000000u, mag % 1000000000u / 1000u);
	return buf;
}

#endif
