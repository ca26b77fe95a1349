/* SPDX-License-Identifier: MIT */
/* Text renderings of a parsed frame: one line, a per-field tree, one JSON object. */
#ifndef ROCEMU_DISSECT_H
#define ROCEMU_DISSECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rocemu/cm.h"
#include "rocemu/frame.h"

/* A bounded string builder; text that does not fit sets overflow. */
struct roce_sb {
	char *buf;
	size_t len, cap;
	bool overflow;
};

static inline void roce_sb_init(struct roce_sb *sb, char *buf, size_t cap)
{
	sb->buf = buf;
	sb->len = 0;
	sb->cap = cap;
	sb->overflow = false;
}

/* What the formatters need besides the frame. */
struct roce_dissect_in {
	uint64_t frame_no;	/* 1-based position in the capture */
	int64_t rel_ns;		/* since frame 1; < 0 if stamped before */
	uint32_t caplen;
	int status;		/* roce_frame_parse()'s result: 0 or -EBADMSG */
	const char *why;	/* its reason when status != 0 */
};

/*
 * Each appends one rendering of the frame f, ending in a newline.
 * The JSON field names are stable and listed in README.md.
 */
void roce_fmt_line(struct roce_sb *sb, const struct roce_dissect_in *in,
		   const struct roce_frame *f);
void roce_fmt_tree(struct roce_sb *sb, const struct roce_dissect_in *in,
		   const struct roce_frame *f);
void roce_fmt_json(struct roce_sb *sb, const struct roce_dissect_in *in,
		   const struct roce_frame *f);

/* Writes "10.0.0.1" for an IPv4-mapped GID, else the IPv6 text form. */
void roce_fmt_gid(struct roce_sb *sb, const uint8_t gid[16]);

/* The opcode's table name, or "OPCODE_0xNN" for an undefined one. */
void roce_fmt_opname(struct roce_sb *sb, uint8_t opcode);

/*
 * A MAD on QP1 as the renderings see it: its header, and for the CM class
 * the decoded message and, in a REQ or SIDR_REQ of the IP CM service
 * (Annex A11), the private-data header.
 */
enum roce_mad_kind {
	ROCE_MAD_CM,		/* a CM MAD, decoded: hdr and cm valid */
	ROCE_MAD_CM_BAD,	/* class CM but refused: hdr, err, why valid */
	ROCE_MAD_OTHER,		/* another class: hdr valid only */
};

struct roce_mad_view {
	uint8_t kind;		/* enum roce_mad_kind */
	int err;		/* ROCE_MAD_CM_BAD: roce_cm_decode's errno */
	const char *why;	/* ROCE_MAD_CM_BAD: why, a fixed string */
	bool has_ip;		/* ip holds a valid Annex A11 header */
	struct roce_mad_hdr hdr;
	struct roce_cm_msg cm;
	struct roce_cm_ip_hdr ip;
};

/*
 * Finds the MAD a frame carries: a UD SEND_ONLY to QP 1 with Q_Key
 * ROCE_CM_QP1_QKEY and at least the 24 bytes of a MAD header captured.
 * Returns 0 with *v filled, or -ENOENT for any other frame (v is then
 * untouched). A CM MAD that roce_cm_decode refuses is ROCE_MAD_CM_BAD
 * with the reason, not an error. f is unchanged.
 */
int roce_frame_mad(const struct roce_frame *f, struct roce_mad_view *v);

/*
 * Appends a summary of a MAD: "CM REQ comm 0x0000a001 sid
 * 0x0000000001061c06 qpn 0x000012 psn 0x00abcd", "CM REJ reason 8
 * (INVALID_SERVICE_ID) ...", "CM REQ undecodable: ...", "MAD class 0x01
 * ...". With brief, only what a ladder arrow needs: "CM REQ qpn 0x12 psn
 * 0xabcd", "CM REJ 8", "CM RTU".
 */
void roce_fmt_mad_summary(struct roce_sb *sb, const struct roce_mad_view *v,
			  bool brief);

#endif
