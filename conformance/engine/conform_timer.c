/* SPDX-License-Identifier: MIT */
/* expect timer=ack|rnr:N: a device's timer against the IBTA formula, with the tolerance conformance/README.md states. */
#include <stdlib.h>
#include <string.h>

#include "rocemu/aeth.h"
#include "conform.h"

/* Timers run late, never early. conform starts its clock when it sent or
 * received the packet that started the device's timer, at most about a
 * millisecond after the device did; a kernel timer counted in jiffies
 * (4 ms at HZ=250) may fire up to one jiffy before the whole value. So a
 * timer of T is accepted from T - 5 ms to 2T + 200 ms (late by a busy
 * machine's scheduling). */
enum { EARLY_US = 5000, LATE_US = 200000, LATE_FACTOR = 2 };

int cf_timer_parse(const char *v, unsigned timeout, uint64_t *us, char *what,
		   size_t whatlen)
{
	char *end;

	if (!strcmp(v, "ack")) {
		if (timeout > 31)
			return -1;
		/* IBTA 9.7.6.1.3: the local ACK timeout, 4.096 us * 2^timeout;
		 * 0 means no timer */
		*us = timeout ? (4096ull << timeout) / 1000 : 0;
		snprintf(what, whatlen, "the local ACK timeout 4.096 us * 2^%u (IBTA 9.7.6.1.3)",
			 timeout);
		return timeout ? 0 : -1;
	}
	if (strncmp(v, "rnr:", 4))
		return -1;
	unsigned long code = strtoul(v + 4, &end, 0);
	if (end == v + 4 || *end || code > 31)
		return -1;
	/* IBTA 9.7.5.2.8, the RNR NAK timer table */
	*us = roce_rnr_timer_usec((unsigned)code);
	snprintf(what, whatlen, "the RNR NAK timer of code %lu (IBTA 9.7.5.2.8)", code);
	return 0;
}

void cf_timer_bounds(uint64_t us, uint64_t *lo_us, uint64_t *hi_us)
{
	*lo_us = us > EARLY_US ? us - EARLY_US : 0;
	*hi_us = us * LATE_FACTOR + LATE_US;
}
