/* SPDX-License-Identifier: MIT */
/* Seconds and frame numbers as the ladders print them: "0.000002", "#b3". */
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

/* A packet's frame number as the ladders print it: "#3", or with more
 * than one capture "#b3", the letter naming the capture (a: the first
 * given). Writes at most len bytes; returns buf. */
static inline char *ladder_frame(uint64_t no, unsigned cap, size_t captures,
				 char *buf, size_t len)
{
	if (captures > 1)
		snprintf(buf, len, "#%c%" PRIu64, 'a' + (int)(cap % 26), no);
	else
		snprintf(buf, len, "#%" PRIu64, no);
	return buf;
}

#endif
