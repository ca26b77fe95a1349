/* SPDX-License-Identifier: MIT */
/* The responder's test-only misbehaviours: their names and the rules they break. */
#include <string.h>

#include "obj.h"

static const struct {
	const char *name;
	const char *text;
} table[ROCEMU_MISBEHAVE_COUNT] = {
	[ROCEMU_MISBEHAVE_NONE] = { "none", "follows the rules" },
	[ROCEMU_MISBEHAVE_SEQ_NAK_EVERY] = { "seq_nak_every",
		"a PSN sequence error NAK for every packet ahead, not one per gap "
		"(IBTA 9.7.5.1.1)" },
	[ROCEMU_MISBEHAVE_DUP_READ_IGNORED] = { "dup_read_ignored",
		"a duplicate RDMA READ is dropped instead of executed again (IBTA 9.7.5.1.1, C9-110)" },
	[ROCEMU_MISBEHAVE_DUP_ATOMIC_REEXEC] = { "dup_atomic_reexec",
		"a duplicate atomic is executed again instead of answered from its saved "
		"result (IBTA 9.7.5.1.1, C9-110)" },
	[ROCEMU_MISBEHAVE_RNR_TIMER_ZERO] = { "rnr_timer_zero",
		"RNR NAKs carry timer code 0, not the QP's min_rnr_timer (IBTA 9.7.5.2.8)" },
	[ROCEMU_MISBEHAVE_MSN_FROZEN] = { "msn_frozen",
		"every AETH carries MSN 0 instead of the messages completed (IBTA 9.7.5.2, C9-148)" },
	[ROCEMU_MISBEHAVE_RKEY_NAK_INVALID] = { "rkey_nak_invalid",
		"R_Key, bounds and access errors are NAKed invalid request, not remote access "
		"error (IBTA 9.7.5.2.4; the checks 9.7.5.1, 10.6)" },
};

const char *rocemu_misbehave_name(enum rocemu_misbehave m)
{
	return (unsigned)m < ROCEMU_MISBEHAVE_COUNT ? table[m].name : NULL;
}

const char *rocemu_misbehave_text(enum rocemu_misbehave m)
{
	return (unsigned)m < ROCEMU_MISBEHAVE_COUNT ? table[m].text : NULL;
}

int rocemu_misbehave_parse(const char *name)
{
	for (int m = 0; m < ROCEMU_MISBEHAVE_COUNT; m++)
		if (!strcmp(table[m].name, name))
			return m;
	return -1;
}
