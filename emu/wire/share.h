/* SPDX-License-Identifier: MIT */
/*
 * One address shared by many processes (docs/sharing.md): a port's slot
 * and inbox, the service claims of its listeners, which process owns an
 * arriving datagram, and handing it there. The UDP wire's (udp.c).
 */
#ifndef ROCEMU_WIRE_SHARE_H
#define ROCEMU_WIRE_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

enum { SHARE_SLOTS = 256 };

struct share_claim {
	struct share_claim *next;
	uint64_t svc;
	int fd;		/* bound to the service's name: an inbox too */
};

/* A port's part in sharing its address. */
struct share {
	int inbox;			/* bound to the slot's name */
	uint8_t slot;
	char prefix[80];		/* "rocemu.<uid>.<address>" */
	struct share_claim *claims;
	/* Claims given back whose sockets are still open: a thread blocked
	 * in poll() on a socket keeps it, and so its name, alive after
	 * close(), until the poll returns. They are closed by share_reap
	 * when no poll is under way, and taken back if claimed again. */
	struct share_claim *retired;
};

/* What a forwarded datagram carries besides its bytes: what the process
 * that took it from the socket knew of it. */
struct share_meta {
	uint8_t dst_gid[16];		/* the local address it arrived at */
	struct sockaddr_storage src;	/* its source address and port */
	uint64_t when_ns;		/* when it arrived */
	uint8_t tos;			/* its TOS or traffic class */
	uint32_t flow_label;		/* its IPv6 flow label */
};

/* Where a datagram goes: here, or to a slot's or a service's inbox. */
struct share_route {
	bool here;
	bool to_svc;	/* else to slot */
	uint8_t slot;
	uint64_t svc;
};

/*
 * Claims the lowest free slot on gid's address for s (its inbox bound to
 * the slot's abstract name). 0, -EUSERS if all 256 are held, -errno; s is
 * left with no inbox (-1) on failure.
 */
int share_open(struct share *s, const uint8_t gid[16]);

/* Closes s's inbox and claims (the kernel frees their names). */
void share_close(struct share *s);

/*
 * Claims svc for s's process: 0, 0 if s holds it already, -EADDRINUSE
 * if another process does, -errno (s unchanged on failure).
 */
int share_claim(struct share *s, uint64_t svc);

/* Gives back s's claim of svc (its name is freed at the next share_reap;
 * a claim of svc before that takes it back); one not held is fine. */
void share_unclaim(struct share *s, uint64_t svc);

/* Closes the sockets of the claims given back, freeing their names. Call
 * only where no thread polls s's sockets (before a poll is set up). */
void share_reap(struct share *s);

/*
 * Which process owns a RoCEv2 UDP payload that arrived at s's port:
 * the destination QPN's slot (here if it is s's or in [qpn_lo, qpn_hi]);
 * for QP1, a CM REQ or SIDR_REQ goes to its service's claimant (here if
 * none), other CM messages by the receiver's comm ID (here if 0). Short or
 * unreadable payloads stay here. Reads only.
 */
struct share_route share_route_of(const struct share *s, const uint8_t *p,
				  size_t len, uint32_t qpn_lo, uint32_t qpn_hi);

/*
 * Sends payload with m to r's inbox from s. Returns 0, -ECONNREFUSED if
 * nobody holds it (a dead or absent process), -errno (a full inbox:
 * -EAGAIN). Nothing is kept.
 */
int share_forward(const struct share *s, const struct share_route *r,
		  const struct share_meta *m, const uint8_t *payload,
		  size_t len);

/*
 * Reads one forwarded datagram from inbox fd into buf (cap bytes) and *m.
 * Returns its length, -EAGAIN when the inbox is empty, -EBADMSG for one
 * that is malformed or sent by another user (read and dropped).
 */
int share_receive(int fd, struct share_meta *m, uint8_t *buf, size_t cap);

#endif
