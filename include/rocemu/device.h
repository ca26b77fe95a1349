/* SPDX-License-Identifier: MIT */
/* The emulated RDMA device: worlds, devices, verbs objects and the RC transport. */
#ifndef ROCEMU_DEVICE_H
#define ROCEMU_DEVICE_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rocemu/trace.h"

/*
 * The verbs objects take and return rdma-core's own types (ibv_send_wr,
 * ibv_wc, ibv_qp_attr, the attribute masks and statuses), so the verbs
 * front end maps onto them one to one. Functions return 0 or a negative
 * errno and change nothing on failure, unless they say otherwise.
 */

struct rocemu_world;
struct rocemu_dev;
struct rocemu_pd;
struct rocemu_mr;
struct rocemu_cq;
struct rocemu_qp;
struct rocemu_channel;

/* ---- the world: clock, seed, the deterministic wire ---------------- */

/* Faults the loopback wire applies to each frame, as probabilities. */
struct rocemu_faults {
	double drop;
	double duplicate;
	double reorder;		/* held back by reorder_ns */
	double corrupt;		/* one bit flipped in the IP datagram */
	uint64_t latency_ns;	/* every frame; default 1000 */
	uint64_t reorder_ns;	/* extra delay of a reordered frame */
};

/* Creates a world with a virtual clock at 0 and a seeded generator. */
struct rocemu_world *rocemu_world_new(uint64_t seed);

/*
 * Creates a world on the real network: each device binds UDP port 4791 on
 * its own address (IPv4 or IPv6) and sends from a port per QP, and time is
 * the monotonic clock. rocemu_dev_new then fails with errno EADDRINUSE or
 * EADDRNOTAVAIL when the address cannot be bound.
 */
struct rocemu_world *rocemu_world_new_udp(void);

/*
 * Turns UDP segmentation and receive offload on or off for the devices
 * added to a world of rocemu_world_new_udp from now on (on by default).
 * With it, the datagrams a device sends to a loopback address (127/8,
 * ::1) in one pass go to the kernel as GSO batches of equal-sized packets
 * (UDP_SEGMENT) and a device takes batches in whole (UDP_GRO): the
 * packets and their ICRCs are the same, but a capture on lo then sees a
 * batch as one large datagram. Off, every packet is one datagram. A
 * kernel without either option is used without it. Leaves a world of
 * rocemu_world_new unchanged.
 */
void rocemu_world_set_offload(struct rocemu_world *w, bool on);

/* What a world's wire counted since it was made. */
struct rocemu_wire_stats {
	uint64_t dropped;	/* datagrams or frames lost: a full queue,
				 * a refused send, a fault injected */
	uint64_t gso_sends;	/* sends that carried several datagrams */
	uint64_t gro_batches;	/* arrivals that were several datagrams */
	/* One address shared by processes (docs/sharing.md): datagrams
	 * handed to the process that owns them, taken from another, and
	 * lost because their process is gone */
	uint64_t fwd_out, fwd_in, fwd_no_owner;
	/* IPv6 datagrams sent without their address handle's flow label,
	 * which the kernel would not lend (docs/dropin.md) */
	uint64_t flow_labels_refused;
};

/* Fills *s with the wire's counters; cannot fail. */
void rocemu_world_wire_stats(struct rocemu_world *w,
			     struct rocemu_wire_stats *s);

/* Writes the wire's counters to f as rocemu_dev_print_counters writes the
 * device's: one "<prefix>counter wire_NAME VALUE" line each (dropped,
 * gso_sends, gro_batches, fwd_out, fwd_in, fwd_no_owner); cannot fail,
 * changes nothing. */
void rocemu_world_print_wire_stats(struct rocemu_world *w, FILE *f,
				   const char *prefix);

/* Waits up to max_ns for datagrams or the next timer, then does all work
 * due (UDP worlds; a deterministic world just runs). */
void rocemu_world_wait(struct rocemu_world *w, uint64_t max_ns);

/*
 * Starts a progress thread for a UDP world: the engines then run on their
 * own, on the monotonic clock, so completions and completion-channel
 * events arrive while the application sleeps; every rocemu call is then
 * safe from other threads. Returns 0, or -EINVAL for a deterministic
 * world (it has no real time to follow). Start and stop from one thread.
 */
int rocemu_world_start(struct rocemu_world *w);
/*
 * For a caller that busy-polls: does what rocemu_world_run does, unless
 * another thread is running the engines at this moment (then returns 0 at
 * once). A busy-polling application thus drives the wire itself instead of
 * waiting for the progress thread to be scheduled, which on a loaded
 * machine can take milliseconds.
 */
unsigned long rocemu_world_poll(struct rocemu_world *w);
/* Stops it after a last pass over what arrived; no completion is lost. */
void rocemu_world_stop(struct rocemu_world *w);

/*
 * Has the progress thread call fn(arg) at most once every period_ns
 * while it runs (it wakes at least every 100 ms, so a call is late by at
 * most that): for work that must happen while the application runs on,
 * such as writing the counters out. fn runs on the progress thread only,
 * without the world's lock (it may call rocemu_dev_print_counters and
 * the like, and do stdio). NULL stops the calls. Set it while no
 * progress thread runs (before rocemu_world_start or after
 * rocemu_world_stop); nothing else changes.
 */
typedef void (*rocemu_tick_fn)(void *arg);
void rocemu_world_tick(struct rocemu_world *w, rocemu_tick_fn fn, void *arg,
		       uint64_t period_ns);
void rocemu_world_free(struct rocemu_world *w);

uint64_t rocemu_world_now(const struct rocemu_world *w);
/* The device clock as it reads at this moment, in ns: the virtual clock
 * (rocemu_world_now), or on a real-time world CLOCK_MONOTONIC, the clock
 * completions are stamped with there. Cannot fail. */
uint64_t rocemu_world_clock(const struct rocemu_world *w);
/* A time t of the device clock as ns since the Unix epoch: t itself on
 * the virtual clock (which starts at the epoch), and on a real-time world
 * t moved by CLOCK_REALTIME's offset from CLOCK_MONOTONIC as it is now.
 * Cannot fail. */
uint64_t rocemu_world_wallclock(const struct rocemu_world *w, uint64_t t);
void rocemu_world_set_faults(struct rocemu_world *w,
			     const struct rocemu_faults *f);

/* Records every frame the wire carries, as sent, to an Ethernet pcap. */
int rocemu_world_record(struct rocemu_world *w, const char *path);

/* Called with each frame the wire carries; valid during the call only. */
typedef void (*rocemu_frame_fn)(void *arg, const uint8_t *frame, size_t len);

/*
 * Calls fn with every frame sent on w's wire from now on, as built,
 * before the wire's faults: the devices' frames and injected ones, each
 * once. fn NULL stops it; recording to a pcap is unaffected. fn runs
 * under the world's lock and must not call into w. Never fails.
 */
void rocemu_world_watch(struct rocemu_world *w, rocemu_frame_fn fn,
			void *arg);

/*
 * For pthread_atfork. prepare takes the world lock and writes out the
 * capture's buffer, so that a child that exits does not write it a second
 * time into the same file. parent releases the lock in the parent.
 * child, in the child, abandons w there: the lock stays as the fork left
 * it (held by a thread of the parent's, which the child cannot release),
 * the child's copies of w's sockets and wake-up pipe are closed (nothing
 * is sent or received through them: they are the parent's), and nothing
 * is freed. The child must not use w again in any way, rocemu_world_free
 * included; a world of its own it can make. Neither fails.
 */
void rocemu_world_fork_prepare(struct rocemu_world *w);
void rocemu_world_fork_parent(struct rocemu_world *w);
void rocemu_world_fork_child(struct rocemu_world *w);

/* Puts a frame on the wire as if another host had sent it: it reaches the
 * device that owns its destination address (replaying a capture against
 * an emulated responder). The wire's faults apply. */
void rocemu_world_inject(struct rocemu_world *w, const uint8_t *frame,
			 size_t len);

/* Does all work that is due now, without moving the clock. Returns the
 * number of steps taken. On the UDP wire, where time moves meanwhile and
 * work can keep coming, it stops after a bounded number of passes so that
 * other threads get the device; call again for the rest. */
unsigned long rocemu_world_run(struct rocemu_world *w);

/* Moves the clock forward by ns, doing each piece of work at its time. */
void rocemu_world_advance(struct rocemu_world *w, uint64_t ns);

/*
 * Runs and moves the clock to each next event until nothing is pending
 * (no frame in flight, no timer armed, no response owed) or max_ns have
 * passed. Returns true if it went idle.
 */
bool rocemu_world_settle(struct rocemu_world *w, uint64_t max_ns);

/* A line of trace per WQE, packet, ACK and CQE, or NULL for none. */
typedef void (*rocemu_trace_fn)(void *arg, const char *line);
void rocemu_world_trace(struct rocemu_world *w, rocemu_trace_fn fn,
			void *arg);

/*
 * The same run as structured events (rocemu/trace.h): each WQE taken into
 * an SQ slot and each CQE written into a CQ slot, with the number of
 * frames rocemu_world_record has written so far, so a ladder places it
 * between the packets. fn runs under the world's lock and must not call
 * into rocemu; NULL stops the events. Text tracing is unaffected.
 */
typedef void (*rocemu_event_fn)(void *arg, const struct rocemu_event *ev);
void rocemu_world_events(struct rocemu_world *w, rocemu_event_fn fn,
			 void *arg);

/*
 * Explain mode (docs/explain.md): the device says why, in words and with
 * the rule, next to each NAK it sends, each error completion it writes,
 * each packet it drops and each verb it fails. Each reason is a why
 * event (ROCEMU_EV_WHY: qpn, op and wr_id where a WQE is concerned, rule,
 * text) that goes to the world's event function (rocemu_world_events)
 * whenever one is set, and to fn set here. fn runs under the world's lock
 * and must not call into rocemu; NULL stops the calls. The text is built
 * only while someone listens (an event function, fn, or keep below);
 * otherwise a reason costs one counter increment. Never fails.
 */
void rocemu_world_explain(struct rocemu_world *w, rocemu_event_fn fn,
			  void *arg);
/* Keeps, per device, the last text of each kind of reason, for
 * rocemu_dev_print_why (on while on, whoever else listens). */
void rocemu_world_explain_keep(struct rocemu_world *w, bool on);

/* What a reason is about: its kind, counted per device. */
enum rocemu_why {
	ROCEMU_WHY_NAK_PSN_SEQ,		/* NAK PSN sequence error sent */
	ROCEMU_WHY_NAK_RNR,		/* RNR NAK sent */
	ROCEMU_WHY_NAK_INV_REQ,		/* NAK invalid request sent */
	ROCEMU_WHY_NAK_REM_ACCESS,	/* NAK remote access error sent */
	ROCEMU_WHY_NAK_REM_OP,		/* NAK remote operational error sent */
	ROCEMU_WHY_DROP,		/* a packet taken in and dropped */
	ROCEMU_WHY_CQE_ERROR,		/* a WQE completed in error */
	ROCEMU_WHY_FLUSH,		/* WQEs flushed by the Error state */
	ROCEMU_WHY_VERB,		/* a verb refused (EINVAL and the like) */
	ROCEMU_WHY_KINDS
};

/* The kind's name ("nak_rem_access"); "?" past the last. */
const char *rocemu_why_name(enum rocemu_why k);
/* Reasons of kind k the device gave so far (counted whoever listens). */
uint64_t rocemu_dev_why_count(const struct rocemu_dev *d, enum rocemu_why k);
/*
 * Writes one "<prefix>why KIND COUNT" line per kind, zeros included, to
 * f (ROCEMU_STATS, --stats), each with " last: TEXT [RULE]" after it when
 * a text of that kind was kept (rocemu_world_explain_keep). Changes
 * nothing.
 */
void rocemu_dev_print_why(const struct rocemu_dev *d, FILE *f,
			  const char *prefix);

/*
 * A rocemu_event_fn for rocemu_world_explain: writes each why event to
 * the struct rocemu_why_printer given as arg, as one line "rocemu: why:
 * TEXT [RULE]". A reason the same as the one before it (a QP retrying
 * for ever) is counted, not printed again; the count is written as
 * "rocemu: why: (the same N more times)" before the next different one
 * and by rocemu_why_printer_end. Other events are ignored.
 */
struct rocemu_why_printer {
	FILE *f;
	char last[ROCEMU_EV_TEXT + ROCEMU_EV_NAME + 4];
	uint64_t repeats;
};
void rocemu_why_print(void *arg, const struct rocemu_event *ev);
/* Writes the repeats not yet written, if any, and forgets the last. */
void rocemu_why_printer_end(struct rocemu_why_printer *p);

/* ---- devices ----------------------------------------------------- */

/*
 * Test-only: the responder breaks one IBTA rule on purpose, so that a
 * conformance suite can be shown to catch that break (rocemu conform's
 * tests do). Never for use: a device so set is wrong by design.
 */
enum rocemu_misbehave {
	ROCEMU_MISBEHAVE_NONE,
	ROCEMU_MISBEHAVE_SEQ_NAK_EVERY,	/* a NAK for every packet ahead */
	ROCEMU_MISBEHAVE_DUP_READ_IGNORED, /* a duplicate READ dropped */
	ROCEMU_MISBEHAVE_DUP_ATOMIC_REEXEC, /* a duplicate atomic redone */
	ROCEMU_MISBEHAVE_RNR_TIMER_ZERO, /* RNR NAKs carry timer code 0 */
	ROCEMU_MISBEHAVE_MSN_FROZEN,	/* every AETH carries MSN 0 */
	ROCEMU_MISBEHAVE_RKEY_NAK_INVALID, /* R_Key errors NAKed 0x61 */
	ROCEMU_MISBEHAVE_COUNT,
};

/* The misbehaviour's name ("seq_nak_every"), and the rule it breaks in
 * words; NULL for a value past the last. */
const char *rocemu_misbehave_name(enum rocemu_misbehave m);
const char *rocemu_misbehave_text(enum rocemu_misbehave m);
/* The misbehaviour called name, or -1 if there is none. */
int rocemu_misbehave_parse(const char *name);

struct rocemu_dev_cfg {
	const char *name;
	uint8_t gid[16];	/* ::ffff:a.b.c.d for IPv4 */
	enum ibv_mtu mtu;	/* port MTU, IBV_MTU_256 .. IBV_MTU_4096 */
	/* The first QP number to hand out; 0 (or below the lowest): the
	 * lowest (min_qpn). Numbers go up from there, wrap to the lowest
	 * after 0xffffff, and skip any still in use. */
	uint32_t first_qpn;
	/* The lowest QP number handed out: 0 for 0x11, as rxe keeps the
	 * first 16 back; 2..0x11 lets those be had too (replaying a
	 * capture of QPs so numbered). QP0 and QP1, special to the IBTA
	 * (SMI, GSI), never are: below 2 counts as 2. */
	uint32_t min_qpn;
	enum rocemu_misbehave misbehave;	/* test-only; 0: none */
};

struct rocemu_dev *rocemu_dev_new(struct rocemu_world *w,
				  const struct rocemu_dev_cfg *cfg);
void rocemu_dev_free(struct rocemu_dev *d);

/* Counters, per device. */
enum rocemu_counter {
	ROCEMU_CNT_TX_PACKETS,
	ROCEMU_CNT_RX_PACKETS,
	ROCEMU_CNT_RX_DROP_MALFORMED,
	ROCEMU_CNT_RX_DROP_ICRC,
	ROCEMU_CNT_RX_DROP_NOT_ROCE,
	ROCEMU_CNT_RX_DROP_UNKNOWN_QP,
	ROCEMU_CNT_RX_DROP_BAD_STATE,	/* QP not ready, wrong transport or source */
	ROCEMU_CNT_RX_DROP_PKEY,
	ROCEMU_CNT_RX_DROP_SEQ,		/* out of sequence, silently dropped */
	ROCEMU_CNT_RX_DROP_QKEY,	/* UD: Q_Key mismatch */
	ROCEMU_CNT_RX_DROP_NO_RECV,	/* UC/UD: no receive WQE posted */
	ROCEMU_CNT_RX_DROP_UC_MESSAGE,	/* UC: rest of a broken message */
	ROCEMU_CNT_RETRANSMITS,		/* packets sent again */
	ROCEMU_CNT_TIMEOUTS,
	ROCEMU_CNT_NAK_SENT_SEQ,
	ROCEMU_CNT_NAK_SENT_RNR,
	ROCEMU_CNT_NAK_SENT_INV_REQ,
	ROCEMU_CNT_NAK_SENT_REM_ACCESS,
	ROCEMU_CNT_NAK_SENT_REM_OP,
	ROCEMU_CNT_NAK_RCVD_SEQ,
	ROCEMU_CNT_NAK_RCVD_RNR,
	ROCEMU_CNT_NAK_RCVD_ERROR,
	ROCEMU_CNT_ACKS_SENT,
	ROCEMU_CNT_DUP_REQUESTS,
	ROCEMU_CNT_CQ_OVERRUNS,
	/* QP1 (the GSI QP) and its CM (docs/cm.md): */
	ROCEMU_CNT_RX_DROP_GSI,		/* to QP1 but no GSI MAD: opcode,
					 * Q_Key or length */
	ROCEMU_CNT_RX_DROP_MAD,		/* a MAD the CM does not take: class,
					 * versions, method, lying lengths */
	ROCEMU_CNT_CM_RX_MSGS,		/* CM messages taken */
	ROCEMU_CNT_CM_TX_MSGS,		/* CM messages sent, retries too */
	ROCEMU_CNT_CM_TX_RETRIES,	/* sent again after a timeout */
	ROCEMU_CNT_CM_RX_DUPLICATES,	/* answered as the original was */
	ROCEMU_CNT_CM_RX_UNMATCHED,	/* for no id, or one in another state */
	ROCEMU_CNT_SEND_ERR,		/* packets the host would not send (no
					 * route): lost as on a wire, rxe's
					 * send_err */
	ROCEMU_CNT_COUNTER_MAX,
};
uint64_t rocemu_dev_counter(const struct rocemu_dev *d, enum rocemu_counter c);
const char *rocemu_counter_name(enum rocemu_counter c);
/* Writes every counter, zeros included, one "<prefix>counter NAME VALUE"
 * line each, to f (rocemu ping --stats, ROCEMU_STATS=1). */
void rocemu_dev_print_counters(const struct rocemu_dev *d, FILE *f,
			       const char *prefix);

/* ---- queue state on demand (docs/state.md) ------------------------ */

/* Called with each line of a state dump: no newline, valid during the
 * call only. It runs under the world's lock: it must not call rocemu. */
typedef void (*rocemu_state_fn)(void *arg, const char *line);

/*
 * Describes the queues of d, a line at a time, to fn: a line for the
 * device, then per QP (by QPN) its type, state, PSNs (next to send,
 * oldest unacknowledged, next expected), retries left, destination QP,
 * its send WQEs not yet retired (opcode, wr_id, length, progress) and
 * its posted receives; then each CQ and SRQ those QPs use (completions
 * waiting or receives posted, their slots; an SRQ's limit). Holds the
 * world's lock while it runs; changes nothing; cannot fail.
 */
void rocemu_dev_dump_state(struct rocemu_dev *d, rocemu_state_fn fn,
			   void *arg);

/* rocemu_dev_dump_state for every device of w, in the world's order. */
void rocemu_world_dump_state(struct rocemu_world *w, rocemu_state_fn fn,
			     void *arg);

/*
 * Hands the same lines to w's event sink (rocemu_world_events) as
 * ROCEMU_EV_STATE events, one per line, each with its device's place
 * among the frames it saw; nothing when no sink is set. Cannot fail.
 */
void rocemu_world_trace_state(struct rocemu_world *w);

/* The device's GID: its IP address (IPv4-mapped for IPv4). */
const uint8_t *rocemu_dev_gid(const struct rocemu_dev *d);

/* The port's GID table: as long as rxe's, with empty entries after the
 * two GIDs a device has. */
enum { ROCEMU_GID_TABLE_LEN = 1024 };

/*
 * The GID at index of the device's one port: 0 the IPv6 link-local
 * address of its MAC (as the kernel makes GID 0 of an rxe port), or, for a
 * device on an interface's IPv6 address, that interface's link-local
 * address; 1 its address (rocemu_dev_gid). Returns 0; -ENODATA for an
 * empty entry; -EINVAL past the table. gid is untouched on failure. Every
 * GID reaches the device: packets to GID 0 of a device at an IPv4 address
 * travel to that address.
 */
int rocemu_dev_gid_at(const struct rocemu_dev *d, unsigned index,
		      uint8_t gid[16]);

/* Limits this device honours (what ibv_query_device reports). */
void rocemu_dev_attr(const struct rocemu_dev *d, struct ibv_device_attr *a);

/* The same limits with the extended ones (ibv_query_device_ex): the
 * port count, capabilities and sizes of what rocemu offers beyond the
 * base verbs; zero for what it does not offer. */
void rocemu_dev_attr_ex(const struct rocemu_dev *d,
			struct ibv_device_attr_ex *a);

/* Asynchronous events: a file descriptor readable while one is queued,
 * and the queue itself (-EAGAIN when empty). An event names the device's
 * object; the events still queued about an object go when it is
 * destroyed, so none handed out later names a freed object. */
int rocemu_dev_async_fd(const struct rocemu_dev *d);
/*
 * Waits until fd (the async fd, a channel's fd, or any stream socket
 * holding a byte while it has something) is readable, as a read(2) of the
 * kernel's event file waits: restarted after a signal whose handler has
 * SA_RESTART, -EINTR after one without; -EAGAIN at once when the fd is
 * non-blocking; 0 when readable or its writing end is closed (the caller
 * looks again). Takes nothing from fd.
 */
int rocemu_fd_wait(int fd);
int rocemu_dev_get_async_event(struct rocemu_dev *d,
			       struct ibv_async_event *ev);

/* ---- protection domains and memory regions ------------------------- */

struct rocemu_pd *rocemu_pd_alloc(struct rocemu_dev *d);
int rocemu_pd_free(struct rocemu_pd *pd);	/* -EBUSY while in use */
/* The PD's number on its device (1, 2, ... in the order they were
 * allocated), which explain mode's reasons name and the drop-in gives
 * programs as ibv_pd.handle. pd is unchanged. */
uint32_t rocemu_pd_handle(const struct rocemu_pd *pd);

/* Registers [addr, addr+len) with IBV_ACCESS_* flags; NULL and errno set:
 * EINVAL for bad flags (e.g. remote write without local write), EFAULT
 * when part of the range is not mapped, or not writable while a write
 * access is asked for (as the kernel's registration answers). With
 * IBV_ACCESS_ON_DEMAND the memory is checked at each access instead (it
 * may be unmapped and mapped again meanwhile); addr NULL with len
 * SIZE_MAX then registers the whole address space (implicit ODP). */
struct rocemu_mr *rocemu_mr_reg(struct rocemu_pd *pd, void *addr, size_t len,
				int access);
/* 0, or -EBUSY while memory windows are bound to mr (as rxe). */
int rocemu_mr_dereg(struct rocemu_mr *mr);
/* The same, but the MR's addresses on the wire and in SGEs start at 0
 * (IBV_ACCESS_ZERO_BASED, as device memory MRs are addressed). */
struct rocemu_mr *rocemu_mr_reg_zero_based(struct rocemu_pd *pd, void *addr,
					   size_t len, int access);
/* Re-registers mr (ibv_rereg_mr(3)) with the IBV_REREG_MR_CHANGE_* flags:
 * a new range [addr, addr+len), PD pd, access; what flags leaves out
 * stays. Keys stay. 0, or -EINVAL (bad flags, PD of another device, bad
 * access or range), -EFAULT (range not mapped as asked), -EBUSY while
 * memory windows are bound to it: then mr is unchanged. Messages in flight under the old registration fail. */
int rocemu_mr_rereg(struct rocemu_mr *mr, int flags, struct rocemu_pd *pd,
		    void *addr, size_t len, int access);
/* ibv_advise_mr(3): prefetches the SGEs' ranges of on-demand MRs of pd
 * with an IBV_ADVISE_MR_ADVICE_* advice. 0; -EINVAL for bad flags or an
 * empty list; -EOPNOTSUPP for an unknown advice; -ENOENT for an lkey that is not an on-demand MR
 * of pd (or not writable for PREFETCH_WRITE); -EFAULT for a range outside
 * its MR, or, with IBV_ADVISE_MR_FLAG_FLUSH, memory not mapped as asked.
 * Without the flag the prefetch is best effort and such pages are left
 * alone. */
int rocemu_mr_advise(struct rocemu_pd *pd, int advice, uint32_t flags,
		     const struct ibv_sge *sg, uint32_t n);
uint32_t rocemu_mr_lkey(const struct rocemu_mr *mr);
uint32_t rocemu_mr_rkey(const struct rocemu_mr *mr);

/* ---- memory windows ------------------------------------------------- */

struct rocemu_mw;

/*
 * A memory window of IBV_MW_TYPE_1 or _2 in pd, not bound; its rkey shares
 * the MRs' key space. NULL and errno: EINVAL for another type, ENOMEM.
 * It is bound by posting IBV_WR_BIND_MW (both types; ibv_bind_mw does
 * so for type 1) with bind_mw.mw pointing at the struct rocemu_mw and
 * bind_info.mr at the struct rocemu_mr, as a UD WR names its AH.
 */
struct rocemu_mw *rocemu_mw_alloc(struct rocemu_pd *pd, enum ibv_mw_type type);
/* Frees mw, bound or not (its MR is released): 0. */
int rocemu_mw_dealloc(struct rocemu_mw *mw);
/* The rkey mw has now (after its last bind). */
uint32_t rocemu_mw_rkey(const struct rocemu_mw *mw);

/* ---- address handles ------------------------------------------------ */

struct rocemu_ah;

/* An address vector for datagram QPs: RoCEv2 needs is_global (the GID is
 * the IP address), port 1 and a source GID index of 0 or 1 (the table is
 * rxe's: the link-local GID, then the address). NULL, errno EINVAL else. */
struct rocemu_ah *rocemu_ah_new(struct rocemu_pd *pd,
				const struct ibv_ah_attr *attr);
int rocemu_ah_free(struct rocemu_ah *ah);
void rocemu_ah_query(const struct rocemu_ah *ah, struct ibv_ah_attr *attr);

/* ---- completion queues and channels -------------------------------- */

/*
 * A channel's fd is readable while a CQ attached to it has an event. An
 * armed CQ raises one event when a completion arrives (and disarms); a
 * CQ's events coalesce: at most one waits to be read, so nothing the
 * application leaves unread can make the device wait.
 */
struct rocemu_channel *rocemu_channel_new(struct rocemu_dev *d);
int rocemu_channel_free(struct rocemu_channel *ch);	/* -EBUSY while CQs use it */
int rocemu_channel_fd(const struct rocemu_channel *ch);
/* Takes the oldest event: its CQ into *cq; -EAGAIN if there is none. */
int rocemu_channel_try_event(struct rocemu_channel *ch, struct rocemu_cq **cq);
/* The same, but waits for an event unless the fd was made non-blocking
 * (then -EAGAIN), as rocemu_fd_wait: -EINTR after a signal without
 * SA_RESTART. */
int rocemu_channel_get_event(struct rocemu_channel *ch, struct rocemu_cq **cq);

/* At least cqe entries (rounded up to a power of two). */
struct rocemu_cq *rocemu_cq_new(struct rocemu_dev *d, int cqe,
				struct rocemu_channel *ch);
/* -EBUSY while a QP uses it. Its event not yet read, and its queued
 * asynchronous events, go with it: after this returns, no call of the
 * device hands out the CQ again. */
int rocemu_cq_free(struct rocemu_cq *cq);
/* Up to n completions, oldest first; safe from any number of threads. */
int rocemu_cq_poll(struct rocemu_cq *cq, int n, struct ibv_wc *wc);
/* The oldest completion into *wc: 0, or -ENOENT if there is none. */
int rocemu_cq_take(struct rocemu_cq *cq, struct ibv_wc *wc);
/* The same, with *ts_ns the world's clock (rocemu_world_clock) when the
 * completion was made; on -ENOENT *wc and *ts_ns are unchanged. */
int rocemu_cq_take_ts(struct rocemu_cq *cq, struct ibv_wc *wc,
		      uint64_t *ts_ns);
/* Makes room for at least cqe entries, keeping the completions held in
 * their order: 0; -EINVAL if cqe is out of [1, max_cqe] or below the
 * number held, -ENOMEM; on failure the CQ is unchanged. */
int rocemu_cq_resize(struct rocemu_cq *cq, int cqe);
/* Arms the CQ's event; without a channel, accepted and ignored. */
int rocemu_cq_req_notify(struct rocemu_cq *cq, bool solicited_only);
/* A pointer of the caller's, kept with the CQ (and likewise QPs, SRQs). */
void rocemu_cq_set_user(struct rocemu_cq *cq, void *user);
void *rocemu_cq_user(const struct rocemu_cq *cq);

/* ---- shared receive queues ------------------------------------------ */

struct rocemu_srq;

/* At least attr->attr.max_wr receives (rounded up to a power of two, and
 * written back); srq_limit arms the limit event. NULL and errno else. */
struct rocemu_srq *rocemu_srq_new(struct rocemu_pd *pd,
				  struct ibv_srq_init_attr *attr);
int rocemu_srq_free(struct rocemu_srq *srq);	/* -EBUSY while in use */
/* IBV_SRQ_LIMIT arms the limit; IBV_SRQ_MAX_WR (resizing) is -EOPNOTSUPP. */
int rocemu_srq_modify(struct rocemu_srq *srq, struct ibv_srq_attr *attr,
		      int mask);
int rocemu_srq_query(struct rocemu_srq *srq, struct ibv_srq_attr *attr);
int rocemu_post_srq_recv(struct rocemu_srq *srq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad);
void rocemu_srq_set_user(struct rocemu_srq *srq, void *user);
void *rocemu_srq_user(const struct rocemu_srq *srq);

/* ---- queue pairs ---------------------------------------------------- */

/* RC, UC or UD; attr->srq (a struct rocemu_srq) shares receives. */
struct rocemu_qp *rocemu_qp_new(struct rocemu_pd *pd,
				struct ibv_qp_init_attr *attr);
int rocemu_qp_free(struct rocemu_qp *qp);
uint32_t rocemu_qp_num(const struct rocemu_qp *qp);
void rocemu_qp_set_user(struct rocemu_qp *qp, void *user);
void *rocemu_qp_user(const struct rocemu_qp *qp);

/* ibv_modify_qp: -EINVAL for a transition, mask or value the IBTA does
 * not allow, leaving the QP as it was. */
int rocemu_qp_modify(struct rocemu_qp *qp, struct ibv_qp_attr *attr,
		     int mask);
int rocemu_qp_query(struct rocemu_qp *qp, struct ibv_qp_attr *attr,
		    struct ibv_qp_init_attr *init);

/* Everything a QP needs to go from RESET to RTS towards a peer. RC takes
 * all but qkey; UC the GID, QPN, PSNs, MTU and access; UD the Q_Key and
 * send PSN only (its peers are named by address handles). */
struct rocemu_rc_params {
	uint8_t peer_gid[16];
	uint32_t peer_qpn;
	uint32_t sq_psn, rq_psn;
	enum ibv_mtu mtu;
	int access;		/* IBV_ACCESS_REMOTE_* the QP allows */
	uint8_t timeout;	/* 4.096 us * 2^timeout; 0: never */
	uint8_t retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic;	/* both directions */
	uint32_t qkey;		/* UD only */
};

/* One line on the QP's engines: send position, PSNs, counts in flight. */
void rocemu_qp_describe(const struct rocemu_qp *qp, char *buf, size_t len);

/* The three ibv_modify_qp calls of a connection, RESET to INIT to RTR to
 * RTS, with the attributes the QP's own transport (RC, UC or UD) takes.
 * Returns 0, or the first failing call's -errno (-EINVAL for a QP not in
 * RESET or a value the transport refuses), the QP left where it got to. */
int rocemu_qp_connect(struct rocemu_qp *qp, const struct rocemu_rc_params *p);

/*
 * IBTA 1.5 FLUSH (rdma-core 45's ibv_wr_flush; the system headers may
 * predate it, so the numbers are rdma-core's, named here). A FLUSH work
 * request is an ibv_send_wr with opcode ROCEMU_WR_FLUSH, num_sge 0,
 * wr.atomic.remote_addr and .rkey naming the memory, .compare_add the
 * length and .swap the placement type (bits 0-3: ROCEMU_FLUSH_GLOBAL,
 * _PERSISTENT) and selectivity level (bits 4-5: ROCEMU_FLUSH_RANGE,
 * _MR), as the FETH carries them. It completes with ROCEMU_WC_FLUSH.
 */
#define ROCEMU_WR_FLUSH ((enum ibv_wr_opcode)14)	/* IBV_WR_FLUSH */
#define ROCEMU_WC_FLUSH ((enum ibv_wc_opcode)8)		/* IBV_WC_FLUSH */
#define ROCEMU_ACCESS_FLUSH_GLOBAL (1 << 8)	/* IBV_ACCESS_FLUSH_GLOBAL */
#define ROCEMU_ACCESS_FLUSH_PERSISTENT (1 << 9)
#define ROCEMU_QP_EX_WITH_FLUSH (1ull << 11)	/* IBV_QP_EX_WITH_FLUSH */
enum {
	ROCEMU_FLUSH_GLOBAL = 1, ROCEMU_FLUSH_PERSISTENT = 2,	/* type */
	ROCEMU_FLUSH_RANGE = 0, ROCEMU_FLUSH_MR = 1,		/* level */
};

/* ibv_post_send / ibv_post_recv: -ENOMEM when the queue is full, -EINVAL
 * for a bad work request; *bad names the first one not posted. */
int rocemu_post_send(struct rocemu_qp *qp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad);
/* The same for a whole list or none of it (ibv_wr_complete): -EINVAL when
 * the QP cannot send yet or for a bad WR (*bad names it), -ENOMEM when the
 * queue lacks room for all; nothing is posted then. */
int rocemu_post_send_all(struct rocemu_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad);
int rocemu_post_recv(struct rocemu_qp *qp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad);

/* ---- endpoints ------------------------------------------------------ */

/* A device with what one QP needs around it: the shape every small
 * program and test starts from. */
struct rocemu_endpoint {
	struct rocemu_dev *dev;
	struct rocemu_pd *pd;
	struct rocemu_channel *ch;	/* the CQ's, or NULL */
	struct rocemu_cq *cq;		/* both send and receive */
	struct rocemu_srq *srq;		/* the QP's receive queue, or NULL */
	struct rocemu_qp *qp;
	struct rocemu_mr *mr;		/* over buf, every access */
	uint8_t *buf;
	size_t len;
};

/* How rocemu_endpoint_new_attr shapes an endpoint. */
struct rocemu_endpoint_attr {
	enum ibv_qp_type type;
	size_t len;		/* bytes of the registered buffer */
	uint32_t depth;		/* entries of each queue; the CQ has twice */
	uint32_t max_inline;	/* the QP's inline bytes */
	bool channel;		/* the CQ reports to a completion channel */
	bool srq;		/* the QP receives from a shared queue */
};

/*
 * Creates a device from cfg in w, a PD, a CQ of 2 * depth entries, a
 * zeroed buffer of len bytes registered with every access right, and a QP
 * of the given type with depth entries in each queue (one SGE, 64 bytes
 * inline). Returns 0, or -errno (EADDRINUSE, EADDRNOTAVAIL, ENOMEM, ...)
 * with nothing left allocated.
 */
int rocemu_endpoint_new(struct rocemu_world *w, const struct rocemu_dev_cfg *cfg,
			enum ibv_qp_type type, size_t len, uint32_t depth,
			struct rocemu_endpoint *ep);
/*
 * The same, shaped by a: with a completion channel for the CQ and a
 * shared receive queue of depth entries (one SGE) when a asks for them.
 * Returns 0, or -errno with nothing left allocated: the device's
 * (EADDRINUSE, EADDRNOTAVAIL, ...) when it could not be made, else the
 * failing object's (ENOMEM).
 */
int rocemu_endpoint_new_attr(struct rocemu_world *w,
			     const struct rocemu_dev_cfg *cfg,
			     const struct rocemu_endpoint_attr *a,
			     struct rocemu_endpoint *ep);
/* Frees what rocemu_endpoint_new made, in reverse order, and zeroes ep;
 * a zeroed ep is fine. Objects made on its PD since (an AH) go first. */
void rocemu_endpoint_free(struct rocemu_endpoint *ep);

#endif
