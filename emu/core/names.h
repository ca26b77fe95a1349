/* SPDX-License-Identifier: MIT */
/* Names of verbs enums for traces: WC opcodes, statuses, async events. */
#ifndef ROCEMU_EMU_NAMES_H
#define ROCEMU_EMU_NAMES_H

#include <infiniband/verbs.h>

/*
 * rocemu does not link libibverbs, so it names these itself, for trace
 * lines: each returns a constant string ("RDMA_WRITE", "WR_FLUSH_ERR",
 * "QP_FATAL"), and a generic one for a value verbs does not define.
 */
const char *wc_opcode_name(enum ibv_wc_opcode op);
/* The name of a completion status without its IBV_WC_ prefix. */
const char *wc_status_name(enum ibv_wc_status s);
/* The name of an async event type, without its IBV_EVENT_ prefix. */
const char *event_name(enum ibv_event_type e);

#endif
