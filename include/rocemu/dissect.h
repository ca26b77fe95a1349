/* SPDX-License-Identifier: MIT */
/* Text renderings of a parsed frame: one line, a per-field tree, one JSON object. */
#ifndef ROCEMU_DISSECT_H
#define ROCEMU_DISSECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
