/* SPDX-License-Identifier: MIT */
/* rocemu impair: the rules that pick packets and what is done to them, and the frame edits (docs/impair.md). */
#ifndef ROCEMU_EMU_CLI_IMPAIR_H
#define ROCEMU_EMU_CLI_IMPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

enum impair_action {
	IMP_DROP,
	IMP_DUP,
	IMP_DELAY,
	IMP_REORDER,
	IMP_CORRUPT,
	IMP_ECN,
};

/* Which way a packet goes: from side a to side b, or back. */
enum impair_dir {
	IMP_DIR_ANY,
	IMP_DIR_AB,
	IMP_DIR_BA,
};

enum {
	IMP_TEXT_MAX = 512,	/* a rule's text as kept for the report */
	IMP_ERR_MAX = 1024,
	IMP_CORRUPT_LAST = -1,	/* corrupt's default: the byte before the ICRC */
};

struct impair_rule {
	uint8_t action;		/* enum impair_action */
	char text[IMP_TEXT_MAX];
	/* what the action takes */
	uint32_t copies;	/* dup: extra copies (1) */
	uint32_t ms;		/* delay: how long; reorder: the latest release */
	uint32_t after;		/* reorder: released after this many later ones */
	int32_t byte;		/* corrupt: offset from the BTH, or IMP_CORRUPT_LAST */
	bool fix_icrc;		/* corrupt: recompute the ICRC after the flip */
	/* what it matches; a key not given matches everything */
	bool has_ops;
	uint64_t ops[4];	/* opcodes, one bit each */
	bool has_qpn;
	uint32_t qpn;		/* the BTH's destination QP */
	bool has_psn;
	uint32_t psn_lo, psn_hi;	/* inclusive */
	uint8_t dir;		/* enum impair_dir */
	uint32_t every;		/* only each every-th matching packet (0: all) */
	bool has_prob;
	double prob;		/* then with this probability */
	uint64_t rng;		/* the rule's own generator, from its seed */
	uint64_t max;		/* at most this many times (0: no limit) */
	/* what happened */
	uint64_t matched;	/* packets its keys matched */
	uint64_t fired;		/* of them, the ones acted on */
};

/* What a rule looks at in a packet. */
struct impair_pkt {
	uint8_t dir;		/* IMP_DIR_AB or IMP_DIR_BA */
	uint8_t opcode;
	uint32_t dqpn, psn;
};

/*
 * Parses one rule, "ACTION [ARG=VALUE]... [KEY=VALUE]..." (docs/impair.md),
 * into *r, which it clears first. Returns 0; -EINVAL with the reason in
 * err (IMP_ERR_MAX bytes) for an unknown action, key or opcode name, a
 * value out of range, or a key given twice. r is unspecified on failure.
 */
int impair_rule_parse(const char *text, struct impair_rule *r, char *err);

/*
 * Reads rules from a file, one a line; blank lines and those starting
 * with '#' are skipped, as is text after " #". Appends them to *rules
 * (*n of them so far, realloc'd). Returns 0; -errno with err saying
 * which line and why when the file cannot be read or a line is not a
 * rule (the rules read so far stay, *n counting them).
 */
int impair_rules_load(const char *path, struct impair_rule **rules, size_t *n,
		      char *err);

/*
 * Whether r acts on p: its keys match (counted in r->matched), then the
 * every-th, the probability (one draw of r's generator per packet that
 * reaches it) and the at-most limit allow it (counted in r->fired).
 */
bool impair_rule_fires(struct impair_rule *r, const struct impair_pkt *p);

/* The action's name as the rule form spells it: "drop", "dup", ... */
const char *impair_action_name(unsigned action);

/*
 * The opcode a name as rocemu dump prints it ("RC_SEND_ONLY") stands
 * for, or -ENOENT; a number (0x04) is taken too.
 */
int impair_opcode_by_name(const char *name);

/* ---- frame edits (impair_frame.c), on whole Ethernet frames ---- */

/*
 * Flips (xor 0xff) the byte at off from the BTH of an Ethernet frame
 * carrying RoCEv2, IMP_CORRUPT_LAST meaning the byte before the ICRC,
 * then with fix recomputes the ICRC. Returns 0; -ENOMSG for a frame that
 * is not RoCEv2, -ERANGE for an offset past the byte before the ICRC
 * (the frame then unchanged).
 */
int impair_corrupt(uint8_t *frame, size_t len, int32_t off, bool fix);

/*
 * Marks an Ethernet frame's IP header Congestion Experienced (ECN 11,
 * RFC 3168), with a new IPv4 header checksum; the ICRC masks those bits,
 * so it stays as it was. Returns 0 or -ENOMSG for a frame that is not
 * RoCEv2 over IP (unchanged).
 */
int impair_mark_ce(uint8_t *frame, size_t len);

/*
 * Writes to out the frame in (inlen bytes, Ethernet, RoCEv2 over IPv4 or
 * IPv6) readdressed from src to dst, UDP source port sport, IPv4 ID 0
 * with DF (what a kernel socket with DF sends), flow label 0, IP checksum
 * and ICRC recomputed; an ICRC that was wrong stays exactly as wrong.
 * The two GIDs must be of the frame's IP version. Returns the length;
 * -ENOMSG for a frame that is not RoCEv2, -EINVAL for a GID of the other
 * version, -ENOSPC when cap is short.
 */
int impair_readdress(const uint8_t *in, size_t inlen, const uint8_t src[16],
		     const uint8_t dst[16], uint16_t sport, uint8_t *out,
		     size_t cap);

/* ---- the relay (impair_relay.c) ---- */

struct sockaddr_storage;
struct roce_pcap_writer;
struct roce_ipid_table;

/* How the relay is wired (docs/impair.md, "Two modes"). */
struct impair_cfg {
	bool eth;		/* mode eth: whole Ethernet frames in datagrams */
	/* mode ip: the relay's own address, and the two endpoints' */
	uint8_t relay_gid[16], a_gid[16], b_gid[16];
	/* mode eth: where each side's socket is bound and where it sends */
	struct sockaddr_storage *a_local, *a_peer, *b_local, *b_peer;
	struct impair_rule *rules;
	size_t nrules;
	/* where frames are recorded as they came and as they left (NULL:
	 * not recorded), opened and closed by the caller */
	struct roce_pcap_writer *pcap_in, *pcap_out;
};

/* What the relay did, for the report. Index by enum impair_dir. */
struct impair_stats {
	uint64_t rx[3], tx[3];
	uint64_t not_roce;	/* forwarded without a look (mode eth) */
	uint64_t malformed;	/* RoCEv2 datagrams the codec refuses: dropped */
	uint64_t stranger;	/* mode ip: from neither endpoint: dropped */
	uint64_t bad_icrc;	/* arrived with a wrong ICRC: forwarded so */
	uint64_t send_err;
	uint64_t acted[6];	/* per enum impair_action */
};

/*
 * Binds the relay's sockets. Returns 0; -errno with err saying which
 * address and what to do (in use, not local). *fds gets the sockets
 * (mode ip: one, then -1; mode eth: side a's and side b's).
 */
int impair_bind(const struct impair_cfg *c, int fds[2], char *err);

/*
 * Takes one datagram from fds[side] (side 0: fds[0]) into frame (cap
 * bytes) as the Ethernet frame it travelled in: in mode eth the datagram
 * itself, in mode ip the frame a socket's view allows (rocemu/datagram.h,
 * the IPv4 ID solved by ids). Returns its length with *dir set; 0 for a
 * datagram taken and counted in st but not to be relayed (from a
 * stranger, malformed); -EAGAIN when none is waiting; another -errno.
 */
int impair_recv(const struct impair_cfg *c, const int fds[2], int side,
		struct roce_ipid_table *ids, uint8_t *frame, size_t cap,
		uint8_t *dir, struct impair_stats *st);

/*
 * Sends a frame on its way in direction dir: in mode eth whole to the
 * peer of the side it goes to, in mode ip its UDP payload from the relay
 * to the endpoint, with the frame's TOS or traffic class. 0 or -errno.
 */
int impair_send(const struct impair_cfg *c, const int fds[2], uint8_t dir,
		const uint8_t *frame, size_t len);

/*
 * Relays until *stop is set (from a signal handler), applying the rules
 * in order to each RoCEv2 packet, writing the captures, counting into st;
 * then sends what it still holds. Returns 0; -errno with err when a
 * capture cannot be written or a socket fails. The sockets and captures
 * stay open.
 */
int impair_relay(const struct impair_cfg *c, const int fds[2],
		 volatile sig_atomic_t *stop, struct impair_stats *st,
		 char *err);

/*
 * Prints what the relay did to out: as text, lines "received ab N ba N",
 * "sent ab N ba N", the other counts, "action NAME N" per action and
 * "rule I matched N acted N: TEXT" per rule; or with json one object
 * (docs/impair.md names its fields). Cannot fail (out's errors stay in
 * out).
 */
void impair_report(const struct impair_cfg *c, const struct impair_stats *st,
		   FILE *out, bool json);

#endif
