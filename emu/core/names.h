/* SPDX-License-Identifier: MIT */
/* Names of verbs enums for traces: WC opcodes, statuses, async events. */
#ifndef ROCEMU_EMU_NAMES_H
#define ROCEMU_EMU_NAMES_H

#include <infiniband/verbs.h>

const char *wc_opcode_name(enum ibv_wc_opcode op);
/* rocemu does not link libibverbs, so it names statuses itself. */
const char *wc_status_name(enum ibv_wc_status s);
const char *event_name(enum ibv_event_type e);

#endif
