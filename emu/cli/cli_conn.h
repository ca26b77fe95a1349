/* SPDX-License-Identifier: MIT */
/* What rocemu ping and perf share: one device on the real network, one connected QP, an out-of-band TCP exchange. */
#ifndef ROCEMU_EMU_CLI_CONN_H
#define ROCEMU_EMU_CLI_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "rocemu/device.h"
#include "rocemu/frame.h"

struct conn_opts {
	const char *addr;	/* local address the device binds */
	const char *server;	/* NULL: be the server */
	int tcp_port;
	enum ibv_qp_type type;
	enum ibv_mtu mtu;
	size_t buf_len;
	int depth;		/* queue depth */
	const char *pcap;
	bool trace;
	bool srq;		/* receives from a shared receive queue */
	bool busy_poll;		/* spin on the CQ instead of sleeping */
	bool stats;		/* print the device's counters at the end */
	bool explain;		/* say why on stderr (docs/explain.md) */
	bool no_offload;	/* one datagram per packet, even on lo */
	int wait_s;		/* client: how long to try reaching the server */
	/* --via: RoCE packets go to this address (a relay such as rocemu
	 * impair) instead of the peer's own, which the exchange still uses */
	bool has_via;
	uint8_t via_gid[16];
};

/* What each side tells the other before the first packet. */
struct peer_info {
	uint32_t qpn, psn, rkey;
	uint64_t va;
	uint8_t gid[16];
};

struct conn {
	struct conn_opts o;
	struct rocemu_world *w;
	struct rocemu_endpoint ep;	/* device, PD, CQ, QP, buffer */
	struct rocemu_ah *ah;	/* UD: the peer */
	struct peer_info me, peer;
	struct rocemu_why_printer why;	/* --explain's */
};

/*
 * Sets up the device, exchanges peer_info over TCP (the server listens on
 * its address, the client connects) and connects the QP, but does not run
 * the engines yet: what the peer sends meanwhile waits in the socket, so
 * receives posted now are there before its first message is taken in.
 * Returns 0, or prints one line saying what went wrong and what to do,
 * and returns -1.
 */
int conn_prepare(struct conn *c, const char *who);
/* Starts the progress thread: the engines run from now on. 0, or -1. */
int conn_start(struct conn *c);
/* conn_prepare, then conn_start. */
int conn_up(struct conn *c, const char *who);
/* Stops the progress thread and the recording, frees every object c
 * holds, in reverse order of making; a c that was never up is fine. */
void conn_down(struct conn *c);

/*
 * --stats: stops the progress thread, so that the counts are final, and
 * prints every counter of the device to stdout, one "counter NAME VALUE"
 * line each, zeros included, then the reasons' "why KIND COUNT" lines. Prints nothing when there is no device (the
 * set-up failed before it); the objects stay for conn_down to free.
 */
void conn_print_counters(struct conn *c);

/* Posts one receive of len bytes at buf + off (to the SRQ if there is one). */
int conn_post_recv(struct conn *c, uint64_t wr_id, size_t off, uint32_t len);

/* Waits (sleeping on the completion channel) for one completion; 0 with
 * *wc filled, or -1 after timeout_ms with a message. */
int conn_wait(struct conn *c, struct ibv_wc *wc, int timeout_ms,
	      const char *who);

/* Parses the options both tools take (--addr, --port, -t, -m, --pcap,
 * --trace, --srq, --poll, --stats, --explain, --wait, --via); returns how many argv entries
 * it used for this one, 0 if it is not one of them, -1 after a usage
 * message. */
int conn_parse_opt(struct conn_opts *o, int argc, char **argv, int i,
		   const char *who);

#endif
