/* SPDX-License-Identifier: MIT */
/*
 * The verbs side of the Go/cgo test: one device, two RC queue pairs
 * connected to each other through the device's own address, "a" sending
 * and "b" receiving into slots of its buffer. b's CQ reports to a
 * completion channel; a's CQ is polled. Plain libibverbs, nothing else.
 */
#ifndef GOCGO_H
#define GOCGO_H

#include <stdint.h>

/* Bytes in one message, and receive slots posted on b at once. */
enum { GC_MSG = 256, GC_SLOTS = 64 };

/* One completion, as the Go side checks it. */
struct gc_wc {
	uint64_t wr_id;
	int status;
	int opcode;
	uint32_t byte_len;
};

/*
 * Opens the first device and connects the two queue pairs. Returns 0, or
 * a negative errno with the failing call's name in *what; on failure the
 * process leaves (nothing to clean up for a test).
 */
int gc_open(const char **what);
/* b's QP number (the destination of every SEND in the capture). */
uint32_t gc_b_qpn(void);
/*
 * Posts the receive for slot @slot of b's buffer, wr_id @wr_id. Returns 0
 * or a negative errno.
 */
int gc_post_recv(int slot, uint64_t wr_id);
/*
 * Fills slot @slot of a's buffer with message @seq's bytes and posts a
 * signalled SEND of it, wr_id @seq. Returns 0 or a negative errno.
 */
int gc_post_send(int slot, uint64_t seq);
/*
 * Polls a's CQ for up to @max completions into @wc. Returns how many, or
 * a negative errno.
 */
int gc_poll_send(struct gc_wc *wc, int max);
/*
 * Blocks in ibv_get_cq_event on b's channel, acknowledges the event,
 * re-arms the CQ and polls it for up to @max completions into @wc.
 * Returns how many (0 is possible), or a negative errno: -EINTR when the
 * wait was ended by a signal.
 */
int gc_wait_recv(struct gc_wc *wc, int max);
/*
 * Whether slot @slot of b's buffer holds message @seq's bytes: 1 if so, 0
 * if not.
 */
int gc_check(int slot, uint64_t seq);

#endif
