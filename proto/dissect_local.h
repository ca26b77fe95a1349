/* SPDX-License-Identifier: MIT */
/* The header field table that the three renderings share. */
#ifndef ROCEMU_PROTO_DISSECT_LOCAL_H
#define ROCEMU_PROTO_DISSECT_LOCAL_H

#include <stdint.h>

#include "rocemu/dissect.h"
#include "strbuf.h"

/*
 * The field table that the three renderings walk, so that the tree, the
 * JSON and the one-line form cannot name a field differently: one table
 * per header, each field with its name, where it is in struct roce_frame
 * and how it is written.
 */
enum field_json {
	FJ_NUM,		/* a JSON number */
	FJ_BOOL,	/* true or false */
	FJ_HEX,		/* a "0x..." string: 64-bit values would round in
			 * readers that hold numbers as doubles */
};

enum field_text {
	FT_SP2,		/* "  key value" after the previous field */
	FT_SP1,		/* " key value": right after the header's name */
	FT_BRK,		/* on a new line of the tree */
};

struct hdr_field {
	const char *key;	/* JSON key and text label */
	uint16_t off;		/* offsetof(struct roce_frame, ...), or of
				 * struct roce_mad_view in a MAD's tables */
	uint8_t size;		/* 1, 2, 4 or 8 bytes */
	uint8_t hex;		/* text: hex digits to print; 0 prints decimal */
	uint8_t json;		/* enum field_json */
	uint8_t text;		/* enum field_text, for the tree */
	/* Text after the value in the tree ("(RC_SEND_ONLY)"); NULL: none. */
	void (*text_gloss)(struct roce_sb *sb, uint64_t v);
	/* JSON members after this one ("opcode_name"); NULL: none. */
	void (*json_more)(struct roce_sb *sb, uint64_t v);
};

struct hdr_desc {
	unsigned ext;		/* enum roce_ext bit; 0 for IP, UDP and BTH */
	const char *key;	/* JSON object name and one-line label; NULL:
				 * the fields are members of the frame's object */
	const char *label;	/* the tree's header name; NULL: roce_ext_name() */
	const struct hdr_field *fields;
	unsigned nfields;
	/* The tree's text after "  NAME:" ("10.0.0.1 > 10.0.0.2"); NULL: none.
	 * base is what the offsets are from: the frame, or the MAD view. */
	void (*text_head)(struct roce_sb *sb, const void *base);
	/* JSON members after the fields (the AETH's type); NULL: none. */
	void (*json_tail)(struct roce_sb *sb, const void *base);
};

/*
 * Walks the IP, UDP and BTH headers of f, in wire order: start with
 * *pos = 0; returns the next description, or NULL after the last.
 */
const struct hdr_desc *roce_hdr_next(const struct roce_frame *f,
				     unsigned *pos);

/*
 * Walks the extension headers present in ib, in wire order: start with
 * *pos = 0; returns the next description, or NULL after the last.
 */
const struct hdr_desc *roce_ext_next(const struct roce_ib *ib, unsigned *pos);

/* The value of field fl of obj (a frame or a MAD view), widened. */
uint64_t roce_field_value(const void *obj, const struct hdr_field *fl);

/*
 * Walks the headers of the MAD v: the MAD header, then for a decoded CM
 * message its fields, its primary path (REQ) and its Annex A11 header
 * (REQ, SIDR_REQ): start with *pos = 0; returns the next description,
 * whose offsets are from v, or NULL after the last.
 */
const struct hdr_desc *roce_mad_next(const struct roce_mad_view *v,
				     unsigned *pos);

/* "ACK", "NAK REM_ACCESS_ERR", "RNR_NAK 1280us" for an AETH syndrome. */
void roce_fmt_aeth(struct roce_sb *sb, uint8_t syndrome);

/* Seconds with 6 decimals, after a '-' for a negative time. */
void roce_fmt_time(struct roce_sb *sb, int64_t ns);

void roce_fmt_mac(struct roce_sb *sb, const uint8_t mac[6]);

#endif
