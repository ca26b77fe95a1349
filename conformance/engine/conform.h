/* SPDX-License-Identifier: MIT */
/* rocemu conform: scenarios read from files, played against a device's agent packet by packet. */
#ifndef ROCEMU_EMU_CLI_CONFORM_H
#define ROCEMU_EMU_CLI_CONFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rocemu/frame.h"
#include "rocemu/ipid.h"
#include "rocemu/pcapio.h"

enum {
	CF_MAX_ARGS = 24,	/* key=value words on one line */
	CF_MAX_STEPS = 64,
	CF_MAX_MRS = 4,
	CF_MAX_QPS = 4,		/* agent QPs of a scenario */
	CF_NAME = 48,
	CF_TEXT = 400,
	CF_WORD = 96,
	CF_EVIDENCE = 64,	/* lines of a failure's evidence kept: */
	CF_EVIDENCE_HEAD = 32,	/* the scenario's first ones, and the
				 * last CF_EVIDENCE - CF_EVIDENCE_HEAD */
};

/* One key=value word of a scenario line ("va=a.addr+16"); a bare word
 * has an empty value. */
struct cf_arg {
	char key[24];
	char val[CF_WORD];
};

enum cf_step_kind {
	CF_SEND,	/* a crafted packet to the agent's QP */
	CF_EXPECT,	/* the next packet from the agent matches */
	CF_SILENCE,	/* no packet from the agent for a while */
	CF_DRAIN,	/* whatever arrives for a while is taken unchecked */
	CF_WAIT,	/* time passes */
	CF_RECV,	/* the agent posts a receive */
	CF_POST,	/* the agent posts a send work request */
	CF_COMPLETION,	/* the agent's next completion matches */
	CF_NO_COMPLETION,
	CF_MEMORY,	/* bytes of an agent MR */
	CF_STATE,	/* the agent's QP state */
	CF_MODIFY,	/* the agent's QP moves to a state */
	CF_BIND,	/* the agent binds a memory window */
	CF_EVENT,	/* the agent's next asynchronous event */
	CF_CM_SEND,	/* a CM MAD to the agent's QP1 */
	CF_CM_EXPECT,	/* the next CM MAD from the agent matches */
	CF_LISTEN,	/* the agent listens on a port through its CM */
	CF_CM_EVENT,	/* the agent's next CM event */
	CF_ACCEPT,	/* the agent accepts the connection request with a QP */
	CF_DISCONNECT,	/* the agent disconnects the connection */
	CF_KIND_COUNT,
};

struct cf_step {
	enum cf_step_kind kind;
	unsigned line;		/* in the scenario file */
	char word[CF_NAME];	/* the opcode, MR or state the step names */
	/* expect A | B: the packet is one of nalt alternatives, each a
	 * step of its own after the first; alt marks those later ones. */
	unsigned nalt;
	bool alt;
	bool optional;		/* maybe: the packet may not come */
	char rule[CF_NAME];	/* rule=ID: the rule book's rule the step
				 * checks, or "" (the scenario's covers) */
	char qp[16];		/* qp=NAME: the agent QP it concerns, or ""
				 * (the scenario's first) */
	unsigned nargs;
	struct cf_arg args[CF_MAX_ARGS];
};

/* An MR the agent registers for the scenario. */
struct cf_mr {
	char name[16];
	uint32_t size;
	char access[CF_WORD];
	char fill[16];		/* "inc" or a byte; "" is 0 */
	bool other_pd;		/* pd=other: a second PD, not the QP's */
	/* From the agent. */
	unsigned id;
	uint64_t addr;
	uint32_t rkey, lkey;
};

/* cm: the agent's connection manager is judged; the agent's QP is the
 * one it accepts a connection with, conform plays the active side. */
enum cf_role { CF_RESPONDER, CF_REQUESTER, CF_CM };

struct cf_scenario {
	char id[CF_NAME];	/* the file name without .scn */
	char path[256];
	char title[CF_TEXT];
	char rule[CF_TEXT];	/* the IBTA section or compliance statement */
	char covers[CF_TEXT];	/* the rule book IDs it tests (rocemu check
				 * --rules), space-separated, or "" */
	enum cf_role role;
	char transport[4];	/* rc, uc, ud */
	char needs[CF_WORD];	/* capabilities: atomics, mw2, ... */
	/* The agent's QPs (qp [NAME] KEY=VALUE...): the first is the one a
	 * step without qp= concerns; nqps is at least 1 once loaded. */
	unsigned nqps;
	struct cf_qpdecl {
		char name[16];		/* "" for an unnamed first QP */
		unsigned nargs;
		struct cf_arg args[CF_MAX_ARGS];
	} qps[CF_MAX_QPS];
	/* srq KEY=VALUE...: a shared receive queue (qp ... srq=1 uses it) */
	bool has_srq;
	unsigned nsrq;
	struct cf_arg srq[CF_MAX_ARGS];
	unsigned nmr;
	struct cf_mr mrs[CF_MAX_MRS];
	unsigned nsteps;
	struct cf_step steps[CF_MAX_STEPS];
};

/*
 * Reads a scenario file. Returns 0; -1 after writing "FILE:LINE: why"
 * to err (errlen bytes) for a file that cannot be read or breaks the
 * format (unknown keyword, missing title or rule, too many steps). s is
 * filled on success only as far as it was read otherwise.
 */
int cf_scenario_load(const char *path, struct cf_scenario *s, char *err,
		     size_t errlen);

/*
 * Checks one step of s without a device (conform_lint.c): every key is
 * one the step takes, a packet key names a header the opcode carries,
 * and each value has a form the step can use (an expression over s's
 * names, a completion status the verbs name, a fill, milliseconds).
 * Returns 0, or -1 with the reason in err.
 */
int cf_step_lint(const struct cf_scenario *s, const struct cf_step *st,
		 char *err, size_t errlen);

/* The value of key among args, or NULL. */
const char *cf_arg_get(const struct cf_arg *args, unsigned n,
		       const char *key);

/* ---- the agent's control connection (conform_agent.c) ---- */

/* What the agent's hello said of its device. */
struct cf_device {
	char name[64];
	char gid[64];
	uint8_t gid_bytes[16];
	uint32_t active_mtu;
	uint32_t max_rd_atom;
	char atomic_cap[8];
	/* The device's RoCEv2 GID of each family ([CF_IPV4], [CF_IPV6]) as
	 * hello's gid4=/gid6= said, with its index; an agent that names
	 * neither gives gid= alone, for its family, with index -1 (the
	 * agent's own, no sgid_index= sent). */
	bool has_gid[2];
	uint8_t fam_gid[2][16];
	int fam_index[2];
	char caps[64];		/* hello's caps=: atomic_write,flush_global,... */
};
/* The IP versions a scenario runs over, as indexes. */
enum { CF_IPV4, CF_IPV6 };

struct cf_agent {
	int fd;
	char host[128];
	int port;
	char line[4096];	/* the last answer */
	char rbuf[8192];
	size_t rlen;
	char sent[4096];	/* the last request, for messages */
	FILE *log;		/* every request and answer when set */
	const char *token;	/* sent first (auth) when set; never logged */
};

/*
 * Connects to the agent at host:port, gives it a->token if set (auth)
 * and says hello (protocol 1); dev gets what the agent said. a->log and
 * a->token stay as they are. Returns 0; -1 with the reason in err.
 */
int cf_agent_open(struct cf_agent *a, const char *host, int port,
		  struct cf_device *dev, char *err, size_t errlen);
/* Closes the connection; the agent destroys what it made on it. */
void cf_agent_close(struct cf_agent *a);
/*
 * Sends one request (printf format, no newline) and reads the answer
 * into a->line. Returns 1 for "ok ...", 0 for "err ..." (a->line holds
 * it), -1 when the connection failed or timed out (a->line says so).
 */
int cf_agent_do(struct cf_agent *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The value of key=... in the last answer, copied to out; false if absent. */
bool cf_agent_get(const struct cf_agent *a, const char *key, char *out,
		  size_t outlen);
/* The same as a number; false if absent or not a number. */
bool cf_agent_num(const struct cf_agent *a, const char *key, uint64_t *v);

/* ---- the wire: one UDP socket at the local address, port 4791 ---- */

struct cf_wire {
	int fd;
	uint8_t local_gid[16];
	uint8_t peer_gid[16];
	struct roce_pcap_writer *pcap;
	uint64_t t0_ns;
	uint64_t sent, received;
	uint64_t foreign;	/* datagrams from other addresses, ignored */
	/* the IPv4 IDs expected of the device under test (docs/icrc.md) */
	struct roce_ipid_table ids;
	uint32_t drops;		/* the socket's drop count, as last told */
	/* What the kernel puts in the IP header of what conform sends (its
	 * TTL or hop limit: the frames built carry it, so the capture shows
	 * the header sent), and what it said of the last datagram received:
	 * its TOS or traffic class, TTL or hop limit (-1: not said), flow
	 * label. */
	uint8_t ttl;
	uint8_t rx_tos;
	int rx_ttl;
	uint32_t rx_flow;
};

/* A packet taken from the wire, parsed; the bytes stay in buf. */
struct cf_packet {
	uint8_t buf[9216 + 128];
	size_t len;		/* of the UDP payload */
	uint8_t hdr[64];
	bool icrc_ok;
	int parse_rc;		/* roce_datagram_parse's: 0 or -EBADMSG */
	const char *why;
	uint64_t t_ns;		/* since the session began */
	struct roce_frame f;	/* f.ib points into buf */
};

/*
 * Binds a UDP socket to the local address (an IPv4 or IPv6 literal) at
 * port 4791 and opens the session's capture when pcap is not NULL.
 * Returns 0; -1 with the reason in err.
 */
int cf_wire_open(struct cf_wire *w, const char *local, const char *pcap,
		 char *err, size_t errlen);
/* Closes the socket and finishes the capture. */
void cf_wire_close(struct cf_wire *w);
/* Sends a built Ethernet frame's UDP payload to the peer's port 4791 and
 * records the frame. Returns 0 or -errno. */
int cf_wire_send(struct cf_wire *w, const uint8_t *frame, size_t len);
/* Waits up to timeout_ms for a datagram from the peer's address; 1 with
 * p filled, 0 on timeout, -errno on a socket error. Datagrams from other
 * addresses are counted in foreign and ignored. */
int cf_wire_recv(struct cf_wire *w, struct cf_packet *p, int timeout_ms);
/* Nanoseconds since the session began. */
uint64_t cf_wire_now_ns(const struct cf_wire *w);

/* ---- running scenarios ---- */

enum cf_verdict { CF_PASS, CF_FAIL, CF_NA };

/* The longest ID and the longest line of the list of differences. */
enum { CF_DIFF_ID = 48, CF_DIFF_LINE = 1024 };
/* The longest ibta: value of an entry (its IBTA sections), NUL included. */
enum { CF_DIFF_IBTA = 128 };

/* A known deviation of an implementation: a conform: scenario of an
 * entry of the list of differences, with its known: text. */
struct cf_known {
	char impl[32];
	char scenario[CF_NAME];
	char text[CF_TEXT];
	char id[CF_DIFF_ID];	/* the entry's */
	char ibta[CF_DIFF_IBTA];	/* its ibta: sections, "" for none */
};

struct cf_result {
	enum cf_verdict verdict;
	unsigned step_line;		/* the step that decided a failure */
	char step_rule[CF_NAME];	/* its rule=, or "" */
	char why[CF_TEXT * 2];		/* what was wrong, in words */
	/* The packets and agent answers before the verdict: the first
	 * CF_EVIDENCE_HEAD noted, then a ring of the last ones (read them
	 * with cf_evidence_count and cf_evidence_at). */
	char evidence[CF_EVIDENCE][160];
	unsigned nevidence;		/* lines noted, kept or not */
	const struct cf_known *known;	/* a listed deviation */
	uint64_t ms;
	int family;			/* CF_IPV4 or CF_IPV6: what it ran over */
};

/* Notes one line of evidence (a packet, an answer) in r. */
void cf_evidence(struct cf_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* How many lines of r's evidence are kept; *left_out gets how many were
 * noted between the first ones and the last ones and not kept. */
unsigned cf_evidence_count(const struct cf_result *r, unsigned *left_out);
/* The i-th kept line, oldest first (i below cf_evidence_count). */
const char *cf_evidence_at(const struct cf_result *r, unsigned i);

struct cf_session {
	struct cf_agent agent;
	struct cf_device dev;
	struct cf_wire wire;
	const char *agent_host;
	int agent_port;
	bool verbose;
	uint32_t my_qpn;	/* the QPN conform plays; new per scenario */
	uint32_t first_qpn;	/* the session's first: below my_qpn, stale */
	const struct cf_known *known;
	unsigned nknown;
	char impl[32];
	uint32_t next_comm;	/* the next scenario's first comm ID; 0: not drawn */
	int family;		/* CF_IPV4 or CF_IPV6: the wire's */
	int sgid_index;		/* the agent's GID index of that family, sent as
				 * sgid_index= (modify rtr, ah, cm_listen); -1:
				 * none sent, the agent's own */
	uint64_t next_tid;	/* the TID of conform's next CM request */
};

/*
 * Plays one scenario against the agent: a new control connection, the
 * agent's objects, then each step in order. Fills r; never fails itself
 * (a lost agent is a FAIL with the reason).
 */
void cf_run(struct cf_session *s, const struct cf_scenario *sc,
	    struct cf_result *r);

/* ---- packets: scenario words to frames and back (conform_packet.c) ---- */

/* What a packet's expressions may name: the scenario's MRs and QPs. */
struct cf_env {
	struct cf_mr mrs[CF_MAX_MRS];	/* the scenario's, with the agent's keys */
	unsigned nmr;
	uint32_t agent_qpn, my_qpn, psn;	/* of the step's QP */
	uint32_t mtu;
	/* Every agent QP of the scenario, by name, with the QP conform
	 * plays against it: NAME.qpn, NAME.myqpn, NAME.psn. */
	unsigned nqps;
	struct cf_env_qp {
		char name[16];
		uint32_t agent_qpn, my_qpn, psn, mtu;
	} qps[CF_MAX_QPS];
	uint32_t mw_rkey;	/* the last bound memory window's */
	/* CM scenarios: conform's first comm ID (the scenario owns
	 * CF_COMM_SPAN from it), and what the last CM MAD received said. */
	bool cm;
	uint32_t comm;
	uint32_t peer_comm;	/* its sender's comm ID */
	uint64_t rtid;		/* its TID */
	uint32_t repsn;		/* a REP's starting PSN */
	uint64_t tid;		/* the TID of the last CM MAD conform sent */
};

/* The comm IDs a scenario may use: comm, comm+1, ... */
enum { CF_COMM_SPAN = 16 };

/* The index of the scenario's QP called name ("" the first), or -1. */
int cf_qp_index(const struct cf_scenario *s, const char *name);

/* The scenario's MR called name (its first n characters), or NULL. */
const struct cf_mr *cf_mr_named(const struct cf_env *e, const char *name,
				size_t n);

/*
 * Evaluates an expression: a number, or NAME[.FIELD][+N|-N] where NAME is
 * an MR (FIELD addr, rkey, lkey, size, end; addr when omitted), qpn (the
 * agent's), myqpn, psn (the scenario's first PSN) or mw (the bound
 * window's rkey). Returns 0; -1 with the reason in err.
 */
int cf_eval(const struct cf_env *e, const char *expr, uint64_t *v,
	    char *err, size_t errlen);

/*
 * Builds the Ethernet frame of a send step into out, and describes it in
 * *f as it was built (f->ib.payload points to a buffer that the next
 * build reuses; f->icrc_calc is the right ICRC, f->ib.icrc the one sent).
 * Returns its length; -1 with the reason in err (unknown opcode or key,
 * bad expression), f then unspecified.
 */
int cf_packet_build(const struct cf_env *e, const struct cf_wire *w,
		    const struct cf_step *st, uint8_t *out, size_t cap,
		    struct roce_frame *f, char *err, size_t errlen);

/*
 * Checks a send or expect step without a device: its opcode is one the
 * table knows (or any, for expect) and each key is one the step takes.
 * Returns 0, or -1 with the reason in err.
 */
int cf_step_check(const struct cf_step *st, char *err, size_t errlen);

/*
 * Compares a received packet with an expect step. Returns 1 when every
 * field the step names matches, 0 with the first difference in why,
 * -1 with the reason in why when the step itself is wrong.
 */
int cf_packet_match(const struct cf_env *e, const struct cf_step *st,
		    const struct cf_packet *p, char *why, size_t whylen);

/*
 * An expect step's timer=: "ack" (the local ACK timeout of the QP's
 * timeout, 4.096 us * 2^timeout) or "rnr:N" (the RNR NAK timer table's
 * entry for code N). *us gets the timer, what a description naming the
 * IBTA section. Returns 0; -1 for another value (or ack with timeout 0,
 * no timer) with *us and what unchanged.
 */
int cf_timer_parse(const char *v, unsigned timeout, uint64_t *us, char *what,
		   size_t whatlen);
/* The times a timer of us microseconds is accepted at: from *lo_us to
 * *hi_us after the packet that started it (conformance/README.md). */
void cf_timer_bounds(uint64_t us, uint64_t *lo_us, uint64_t *hi_us);

/* Whether an expect step may name key. */
bool cf_match_key(const char *key);

/* One line describing a received packet (opcode, PSN, AETH, lengths). */
void cf_packet_describe(const struct cf_packet *p, char *out, size_t len);

/* ---- CM MADs (conform_cm.c) ---- */

struct roce_cm_msg;

/*
 * Checks a send-cm or expect-cm step without a device: the message is one
 * it speaks and each key one the message takes. 0, or -1 with why in err.
 */
int cf_cm_check(const struct cf_step *st, char *err, size_t errlen);

/*
 * Builds the frame of a send-cm step into out: the MAD by the codec (its
 * fields from the step's words, defaults from e: a REQ from conform's QP
 * to the agent's GID with the IP CM header), in a UD SEND Only from QP1
 * to QP1 with TID tid (the step's tid= evaluated by the caller). Describes it in *f as
 * cf_packet_build does. Returns its length; -1 with the reason in err.
 */
int cf_cm_build(const struct cf_env *e, const struct cf_wire *w,
		const struct cf_step *st, uint64_t tid, uint8_t *out, size_t cap,
		struct roce_frame *f, char *err, size_t errlen);

/* Whether p is a UD SEND Only to QP1 carrying a CM MAD; *m decoded. */
bool cf_cm_decode(const struct cf_packet *p, struct roce_cm_msg *m);

/* Whether p is a CM MAD to QP1 that is not this scenario's: any in a
 * scenario without CM, else one whose receiver's comm ID is outside the
 * scenario's span (a late retry of an earlier scenario's connection). */
bool cf_cm_foreign(const struct cf_env *e, const struct cf_packet *p);

/* Whether an expect-cm step passes p over (its skip=MESSAGE). */
bool cf_cm_skipped(const struct cf_step *st, const struct cf_packet *p);

/*
 * Compares a received packet with an expect-cm step. 1 when it is the CM
 * message named and every field the step names matches (e then holds
 * the message's comm ID as peer_comm, its TID as rtid and, for a REP,
 * the agent's QPN as agent_qpn and its PSN as repsn); 0 with the first
 * difference in why; -1 with the reason when the step itself is wrong.
 */
int cf_cm_match(struct cf_env *e, const struct cf_step *st,
		const struct cf_packet *p, char *why, size_t whylen);

/* One line describing a packet to QP1: the CM message and its IDs. */
void cf_cm_describe(const struct cf_packet *p, char *out, size_t len);

/* ---- the list of differences (conform_diffs.c) ---- */

/*
 * conformance/differences.md: an entry is a heading "## ID: title", its
 * fields "- key: value" on the lines right after it (impl, ibta, conform,
 * known, compare, replay), then prose; any other heading is prose.
 */

/* One answer of a replay: matcher: a positive ACK of any credit count,
 * or one AETH syndrome exactly. */
struct cf_answer {
	bool ack;
	uint8_t syndrome;	/* when !ack */
};

/* A replay: matcher. coalesced: the ACKs replay lets a responder
 * coalesce otherwise; else the request rocemu answered (its opcode) and
 * the two answers, captured and rocemu's. */
struct cf_replay_rule {
	char id[CF_DIFF_ID];
	char ibta[CF_DIFF_IBTA];	/* the entry's ibta: sections, or "" */
	bool coalesced;
	uint8_t request;
	struct cf_answer captured, rocemu;
};

/* What the list says to the programs that read it. */
struct cf_diffs {
	struct cf_known *known;		/* one per conform: scenario */
	unsigned nknown;
	struct cf_replay_rule *replay;	/* one per replay: field */
	unsigned nreplay;
	unsigned entries;		/* entries read */
};

/*
 * Reads the list of differences at path into *out (its arrays malloc'd;
 * cf_diffs_free frees them). Returns 0; -1 with "path:line: what" in err
 * for a file that cannot be read or that breaks the format (an unknown
 * field, a field twice, an ID twice, a conform: without known:, a value
 * too long (an ibta: of CF_DIFF_IBTA bytes or more too), a line over CF_DIFF_LINE bytes, a bad replay: matcher);
 * *out is then empty.
 */
int cf_diffs_load(const char *path, struct cf_diffs *out, char *err,
		  size_t errlen);

/* As cf_diffs_load, from an open stream f, named path in messages; f
 * is read to its end or to the first error and left open. */
int cf_diffs_read(FILE *f, const char *path, struct cf_diffs *out,
		  char *err, size_t errlen);

/* Frees what cf_diffs_load allocated; d is left empty. */
void cf_diffs_free(struct cf_diffs *d);

/*
 * The ID of the list's replay: entry describing a divergence: rocemu
 * answered request (an opcode) with emu where the capture shows cap
 * (either NULL: no such packet; no matcher takes that). NULL when none.
 */
const char *cf_diffs_replay_match(const struct cf_diffs *d, uint8_t request,
				  const struct roce_frame *cap,
				  const struct roce_frame *emu);

/* The ID of the entry whose replay: is "coalesced", or NULL. */
const char *cf_diffs_coalesced(const struct cf_diffs *d);

/*
 * The IBTA sections (its ibta: value, as written: "9.7.5.1, 10.6.7.2")
 * of the entry id names, one with a replay: or conform: field. NULL when
 * the list has no such entry, or the entry names none (no ibta:, or
 * "-"). The string lives as long as d; d is unchanged.
 */
const char *cf_diffs_ibta(const struct cf_diffs *d, const char *id);

/* ---- reports (conform_report.c) ---- */

/* "ipv4" or "ipv6": a result's family (CF_IPV4, CF_IPV6) in reports. */
const char *cf_family_name(int family);
/* Prints the summary table of n results to f: each with its family, the
 * counts per family when both ran, then the counts of all (each scenario
 * once per family it ran over). */
void cf_report_table(FILE *f, const struct cf_scenario *const *sc,
		     const struct cf_result *r, unsigned n, const char *impl);
/* Writes a JUnit XML file; 0, or -1 when it cannot be written. */
int cf_report_junit(const char *path, const struct cf_scenario *const *sc,
		    const struct cf_result *r, unsigned n, const char *impl);

#endif
