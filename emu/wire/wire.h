/* SPDX-License-Identifier: MIT */
/*
 * One wire interface and what sits behind it: the deterministic loopback
 * (loop.c), UDP sockets (udp.c), and the pcap tap (tap.c), a wrapper that
 * records what crosses any wire. Devices attach ports; the engines send
 * built frames through their port; the world has each wire hand up what
 * arrived, parsed once.
 *
 * Layer rule: wire/ includes core/ and proto's public headers (rocemu/),
 * nothing of obj/, engine/ or world/: a port's device is an opaque pointer.
 */
#ifndef ROCEMU_WIRE_WIRE_H
#define ROCEMU_WIRE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

#include "core/core.h"
#include "rocemu/proto.h"

struct pollfd;
struct roce_pcap_writer;
struct wire;

/* A device's place on a wire, found by its GID. */
struct wire_port {
	UT_hash_handle hh;	/* in the wire's table, by gid */
	struct wire *top;	/* where its frames go: the tap if recording */
	struct wire *home;	/* the wire that made it: its traits */
	void *up;		/* the device; the wire never looks inside */
	uint8_t gid[16];
	uint8_t mac[6];		/* the device's: frames handed up go to it */
	/* The link-local address of the interface that holds gid (an IPv6
	 * one), which the port also takes packets at and sends from: the
	 * device's GID 0, as rxe's is its netdev's. Set by the wire at
	 * attach; has_ll false if there is none. */
	bool has_ll;
	uint8_t ll_gid[16];
	/* Where the wire counts a datagram the host refused for good (no
	 * route): the device's send_err, set by the world; NULL for none. */
	uint64_t *send_err;
	/* The port's place among the processes that share its address
	 * (docs/sharing.md): 0..255, claimed at attach on the UDP wire, 0
	 * on the others. QPNs whose top byte is the slot are the port's. */
	uint8_t slot;
	/* The QPNs the device hands out (set by the world after attach):
	 * a datagram to one of them is never forwarded. */
	uint32_t qpn_lo, qpn_hi;
};

/* What a wire hands up for one frame or datagram that arrived. */
struct wire_rx {
	/* 0: f is a RoCEv2 packet; -ENOMSG: not RoCEv2 (or cut short);
	 * -EBADMSG: a RoCEv2 packet that breaks a rule, why says which */
	int rc;
	const char *why;
	const struct roce_frame *f;
	/* The bytes as they arrived: a whole frame, or a UDP payload */
	const uint8_t *bytes;
	size_t len;
	bool datagram;
	/* Not sent by a port of this wire: no tap has seen it yet */
	bool from_outside;
};

/* Called for each arrival with the port it arrived at. */
typedef void (*wire_deliver_fn)(void *arg, struct wire_port *to,
				const struct wire_rx *rx);

struct wire_ops {
	/* Makes a port for gid: 0, -EEXIST if one has it, -errno. */
	int (*attach)(struct wire *w, const uint8_t gid[16],
		      struct wire_port **port);
	/* Frees a port; what it still had queued is dropped and counted. */
	void (*detach)(struct wire *w, struct wire_port *p);
	/* Takes a frame from the core's pool (frame_alloc, emu/core/frames.c),
	 * which the wire then owns and returns with frame_free, from a port
	 * (NULL: injected by a test, not from any port). */
	void (*send)(struct wire *w, struct wire_port *from, uint8_t *frame,
		     size_t len);
	/* Hands up what has arrived (by now); returns how many. */
	unsigned (*receive)(struct wire *w, wire_deliver_fn fn, void *arg);
	/* Sends what is queued; true if nothing is left. */
	bool (*flush)(struct wire *w);
	/* True while p's transmit queue is over its bound. */
	bool (*busy)(const struct wire *w, const struct wire_port *p);
	/* When the next frame is due; false if none is in flight. */
	bool (*next_due)(const struct wire *w, uint64_t *when);
	/* The fds to poll for arrivals and for room to send; how many. */
	unsigned (*pollfds)(const struct wire *w, struct pollfd *pfd,
			    unsigned max);
	void (*free)(struct wire *w);
	/* Claims service ID svc for p's listener among the processes that
	 * share p's address: 0, -EADDRINUSE if another process holds it,
	 * -errno. NULL on wires no other process shares. */
	int (*claim)(struct wire *w, struct wire_port *p, uint64_t svc);
	/* Gives back a claim made with claim; one not held is fine. */
	void (*unclaim)(struct wire *w, struct wire_port *p, uint64_t svc);
	/* In a forked child: closes the child's copies of the wire's
	 * sockets, and sends, receives and frees nothing (the parent's wire
	 * goes on with them). The wire is not used again. */
	void (*forget)(struct wire *w);
};

struct wire {
	const struct wire_ops *ops;
	struct core *core;
	struct wire_port *ports;	/* by gid; the tap uses its inner's */
	/* IPv4 frames carry ID 0 (a kernel socket with DF sends them so);
	 * otherwise the sender numbers them. */
	bool ip_id_zero;
	/* Time between the bursts of one READ response: a packet's time
	 * on this wire. */
	uint64_t burst_gap_ns;
	/* UDP only: datagrams to a loopback address go in GSO batches and
	 * arrive in GRO ones (UDP_SEGMENT, UDP_GRO) where the kernel has
	 * them; off for ports added while it is false. */
	bool offload;
	uint64_t dropped, duplicated, reordered, corrupted;
	/* UDP offload: sends that carried several datagrams, and received
	 * batches cut into several */
	uint64_t gso_sends, gro_batches;
	/* Sharing an address (docs/sharing.md): datagrams handed to the
	 * process that owns them, taken from another process, and lost for
	 * want of an owner */
	uint64_t fwd_out, fwd_in, fwd_no_owner;
	/* UDP: datagrams sent without their AH's IPv6 flow label, which the
	 * kernel would not lend */
	uint64_t flow_labels_refused;
};

/* The loopback wire on c's virtual clock, with the given faults. NULL if
 * out of memory. */
struct wire *loop_wire_new(struct core *c, const struct rocemu_faults *f);
/* Changes the loopback wire's faults (latency 0 means the default). */
void loop_wire_set_faults(struct wire *w, const struct rocemu_faults *f);

/* The UDP wire: a socket per port on its GID's address, port 4791,
 * shared with the other processes on that address (SO_REUSEPORT). The
 * kernel steers arrivals by QPN unless ROCEMU_STEER=0 is in the
 * environment (docs/sharing.md). NULL if out of memory. */
struct wire *udp_wire_new(struct core *c);

/* The tap around inner, which it then owns; recording is off. NULL if
 * out of memory (inner is then freed). */
struct wire *tap_wire_new(struct wire *inner);
/* Records to path from now on (NULL stops): 0, -EIO if the file being
 * closed failed, or what the pcap writer reports. */
int tap_wire_record(struct wire *tap, const char *path);
/* Flushes the recording (before a fork copies its buffer). */
void tap_wire_flush(struct wire *tap);

/* Called with each frame sent on the wire, as built, before the inner
 * wire's faults; the frame is valid during the call only. */
typedef void (*tap_watch_fn)(void *arg, const uint8_t *frame, size_t len);

/* Calls fn for every frame sent from now on (fn NULL: no more), injected
 * ones included; recording is unaffected. Never fails. */
void tap_wire_watch(struct wire *tap, tap_watch_fn fn, void *arg);

/* The port with this GID, its address or its link-local GID 0 (has_ll);
 * NULL if none. */
struct wire_port *wire_port_find(const struct wire *w, const uint8_t gid[16]);
/* Adds p (its gid set) to w's table; p->top and p->home are set to w. */
void wire_port_add(struct wire *w, struct wire_port *p);
/* Takes p out of w's table. */
void wire_port_del(struct wire *w, struct wire_port *p);

/* Sends a frame_alloc'd frame from p, through the tap; the wire owns it. */
static inline void wire_send(struct wire_port *p, uint8_t *frame, size_t len)
{
	p->top->ops->send(p->top, p, frame, len);
}

/* Whether IPv4 frames from p carry ID 0 rather than a number. */
static inline bool wire_ip_id_zero(const struct wire_port *p)
{
	return p->home->ip_id_zero;
}

/* The time between the bursts of one READ response, from p. */
static inline uint64_t wire_burst_gap(const struct wire_port *p)
{
	return p->home->burst_gap_ns;
}

/* Claims service ID svc for a listener on p among the processes sharing
 * p's address: 0, -EADDRINUSE if another holds it, -errno; 0 on a wire
 * no other process shares. */
static inline int wire_claim(struct wire_port *p, uint64_t svc)
{
	return p->home->ops->claim ? p->home->ops->claim(p->home, p, svc) : 0;
}

/* Sends now what p's wire has queued (a frame otherwise waits for the
 * end of the world's pass). */
static inline void wire_port_flush(struct wire_port *p)
{
	p->top->ops->flush(p->top);
}

/* Gives back a claim of svc on p; one not held is fine. */
static inline void wire_unclaim(struct wire_port *p, uint64_t svc)
{
	if (p->home->ops->unclaim)
		p->home->ops->unclaim(p->home, p, svc);
}

/* True while p's transmit queue is over its bound: the engines then make
 * no more packets that can wait. */
static inline bool wire_busy(const struct wire_port *p)
{
	return p->top->ops->busy(p->top, p);
}

#endif
