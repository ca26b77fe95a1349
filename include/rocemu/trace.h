/* SPDX-License-Identifier: MIT */
/* Structured trace events of a running device (WQE posted, CQE written) and their one-line text form. */
#ifndef ROCEMU_TRACE_H
#define ROCEMU_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * What a device did at its verbs edge, as opposed to what it put on the
 * wire (the capture holds that): a work request taken into a send or
 * receive queue slot, a completion written into a completion queue slot. Each
 * event says how many frames the world's capture held when it happened, so a
 * reader places it between the capture's packets exactly, whatever the
 * clocks say.
 */
enum rocemu_event_kind {
	ROCEMU_EV_WQE,	    /* a send WQE in slot of the QP's SQ */
	ROCEMU_EV_CQE,	    /* a CQE in slot of a CQ, for the QP qpn */
	ROCEMU_EV_RECV_WQE, /* a receive WQE in slot of the QP's RQ */
	ROCEMU_EV_WHY,	    /* why a NAK, error CQE, drop or failed verb
			     * happened (explain mode): rule and text */
	ROCEMU_EV_STATE,    /* one line of a queue-state dump: text */
	ROCEMU_EV_KINDS
};

enum { ROCEMU_EV_NAME = 32, ROCEMU_EV_TEXT = 256 };

struct rocemu_event {
	enum rocemu_event_kind kind;
	uint64_t frames;  /* frames recorded before it (0: none yet) */
	uint64_t time_ns; /* the world's clock, as the capture's stamps */
	char dev[ROCEMU_EV_NAME];    /* the device's name */
	uint8_t gid[16];	     /* the device's address (GID 1) */
	uint32_t qpn;		     /* the WQE's QP; the QP the CQE names */
	uint32_t slot;		     /* SQ, RQ or CQ slot */
	char op[ROCEMU_EV_NAME];     /* WR opcode, "RECV", or WC opcode */
	char status[ROCEMU_EV_NAME]; /* CQE: WC status ("SUCCESS"); WQE: "" */
	uint64_t wr_id;
	uint32_t len; /* WQE: bytes to send; CQE: byte_len */
	/* Frames this device sent or received before the event, captured
	 * or not, and the ICRC of the last of them (0 and 0: none, or a
	 * trace written before these were kept). A reader places the event
	 * after that frame in any capture that holds it, the peer's too. */
	uint64_t seen;
	uint32_t last_icrc;
	/* why: the rule, e.g. "IBTA 9.7.5.1.5"; written with its spaces as
	 * '_' and read back with spaces (a rule has no '_' of its own) */
	char rule[ROCEMU_EV_NAME];
	char text[ROCEMU_EV_TEXT];  /* why, state: words, no newline */
};

/* The longest line rocemu_event_format writes, newline and NUL included. */
#define ROCEMU_EV_LINE 1024

/* The first line of a trace file; a reader refuses a file without it. */
#define ROCEMU_TRACE_MAGIC "# rocemu trace 1"

/*
 * One event as one line of text, newline included, e.g.
 * "wqe frames=0 t=0 dev=devA gid=10.0.0.1 qp=0x000011 slot=0 op=SEND
 * wr_id=0 len=28 seen=0 last=0x00000000". A why event adds "rule=R" and
 * a why or state event ends in "text=" and its text, which runs to the
 * end of the line (a newline in it is written as a space). Writes at
 * most len bytes, NUL included; returns the length of the whole line (as
 * snprintf: len or more means it was cut). ev is unchanged.
 */
int rocemu_event_format(char *buf, size_t len, const struct rocemu_event *ev);

/* Writes the magic line that starts a trace file; 0, or -EIO. */
int rocemu_trace_begin(FILE *f);

/*
 * A rocemu_event_fn (rocemu_world_events) that appends each event to the
 * FILE * given as arg, as rocemu_event_format writes it. Write errors
 * show in ferror(arg). ev is unchanged.
 */
void rocemu_trace_to_file(void *arg, const struct rocemu_event *ev);

/*
 * Reads a line rocemu_event_format wrote (the newline optional) into ev.
 * Returns 0; -EINVAL when the line is not an event (ev is then partly
 * written; the caller's other state is unchanged).
 */
int rocemu_event_parse(const char *line, struct rocemu_event *ev);

/*
 * Reads a whole trace file: the magic line, then one event per line
 * (blank lines and lines starting with '#' are skipped, whatever their
 * length; a line that is not blank or a comment and no event is an
 * error, a line longer than any event among them). On success
 * *evs (malloc'd; free it) holds *n events in file order and 0 is
 * returned. On failure returns -errno (-EINVAL for a line that is not an
 * event, with its number in err) with a message of at most errlen bytes
 * in err; *evs and *n are then left unchanged.
 */
int rocemu_trace_load(const char *path, struct rocemu_event **evs, size_t *n,
		      char *err, size_t errlen);

/*
 * rocemu_trace_load on a stream open for reading, from where it stands:
 * the same results. Reads f to its end or to the line that fails; does
 * not close it.
 */
int rocemu_trace_read(FILE *f, struct rocemu_event **evs, size_t *n,
		      char *err, size_t errlen);

#endif
