/* SPDX-License-Identifier: MIT */
/* Flows in a capture: which RoCEv2 packets belong to one QP-to-QP conversation, and a whole capture loaded by flow. */
#ifndef ROCEMU_FLOW_H
#define ROCEMU_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rocemu/frame.h"

/*
 * A flow is the traffic between two QPs. RC and UC packets name only the
 * destination QP, so a connection is seen as two halves, (A to B, QP b)
 * and (B to A, QP a), which the table pairs: the second half joins the
 * oldest flow from B to A whose far QP is still unknown, preferring one
 * that has sent a request with the PSN a response of the new half
 * carries. A UD packet names both QPs (DETH), so both ends are known at
 * once. CNPs, RD packets and undefined opcodes form flows of their own
 * kind per half. Pairing is a guess only where two QPs between the same
 * two addresses start talking at once without answering each other.
 * Each request of a flow still waiting is indexed by its PSN, so an
 * answer carrying one finds its flow at once; one that carries none is
 * fitted against the 1024 newest flows waiting between its addresses
 * (linear in packets however many never hear back).
 */
enum roce_flow_kind {
	ROCE_FLOW_RC,
	ROCE_FLOW_UC,
	ROCE_FLOW_UD,
	ROCE_FLOW_OTHER,	/* CNP, RD, an undefined opcode */
};

/* One side of a flow: an address and a QP number. */
struct roce_flow_end {
	uint8_t gid[16];
	uint32_t qpn;
	bool qpn_known;	/* false until a packet to this side was seen */
};

struct roce_flow {
	unsigned id;			/* 0, 1, ... in order of first packet */
	enum roce_flow_kind kind;
	/* end[0] sent the flow's first packet; a packet's direction d
	 * means it was sent by end[d] to end[1 - d]. */
	struct roce_flow_end end[2];
	uint64_t first_no, last_no;	/* frame numbers, from 1 */
	uint64_t packets[2];		/* sent by end[0], by end[1] */
	/* PSN of the first and the latest request packet end[d] sent,
	 * valid when requests[d] is not 0. */
	uint64_t requests[2];
	uint32_t first_req_psn[2], last_req_psn[2];
};

struct roce_flows;

/* An empty table; NULL when out of memory. */
struct roce_flows *roce_flows_new(void);

/* Frees the table and its flows; NULL is ignored. */
void roce_flows_free(struct roce_flows *t);

/*
 * The flow of a parsed RoCEv2 frame (roce_frame_parse returned 0, or
 * -EBADMSG with a BTH: f->ib.op set), found or created; no is its frame
 * number. Returns the flow id and its direction in *dir; -EINVAL for a
 * frame without a decoded BTH opcode (nothing is recorded); -ENOMEM.
 * The flow's counters, frame numbers and PSNs are updated.
 */
int roce_flows_classify(struct roce_flows *t, const struct roce_frame *f,
			uint64_t no, unsigned *dir);

/* The number of flows. */
unsigned roce_flows_count(const struct roce_flows *t);

/* Flow id, or NULL past the last. Valid until the next classify. */
const struct roce_flow *roce_flows_get(const struct roce_flows *t,
				       unsigned id);

/* "RC", "UC", "UD", "other". */
const char *roce_flow_kind_name(enum roce_flow_kind k);

/*
 * "10.0.0.1 qp 0x11": an end as text, IPv4-mapped GIDs in dotted form,
 * "qp ?" while unknown. Writes at most len bytes, NUL included; returns
 * buf.
 */
char *roce_flow_end_text(const struct roce_flow_end *e, char *buf,
			 size_t len);

/* ---- a whole capture in memory, by flow ---------------------------- */

/* One frame of the capture that parsed as RoCEv2 with a BTH. */
struct roce_cap_pkt {
	uint64_t no;		/* frame number in the capture, from 1 */
	uint64_t ts_ns;		/* capture time */
	unsigned flow;		/* roce_flows id */
	unsigned dir;		/* sent by flow end[dir] */
	int parse_rc;		/* 0, or -EBADMSG (then why says why) */
	const char *why;
	uint32_t caplen, wire_len;
	uint8_t *data;		/* the frame as captured, caplen bytes */
	struct roce_frame f;	/* parsed; its pointers point into data */
};

struct roce_capture {
	unsigned link;			/* enum roce_link of the file */
	uint64_t frames;		/* every frame, RoCEv2 or not */
	size_t n;			/* packets in pkts */
	struct roce_cap_pkt *pkts;	/* in capture order */
	struct roce_flows *flows;
};

/*
 * Reads a pcap or pcapng file ("-": standard input) into c: every frame
 * that parses as RoCEv2 with a BTH, classified into flows; other frames
 * are only counted. Returns 0; on failure a negative errno with the
 * reason in err (ROCE_PCAP_ERRLEN bytes, without the path) as
 * roce_pcap_open and roce_pcap_next give it, or -ENOMEM; c is then
 * empty (roce_capture_free on it is harmless).
 */
int roce_capture_load(const char *path, struct roce_capture *c, char *err);

/* Frees what roce_capture_load allocated and empties c. */
void roce_capture_free(struct roce_capture *c);

#endif
