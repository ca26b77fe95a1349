/* SPDX-License-Identifier: MIT */
/* The extension-header field table that the three renderings share. */
#ifndef ROCEMU_PROTO_DISSECT_LOCAL_H
#define ROCEMU_PROTO_DISSECT_LOCAL_H

#include <stdint.h>

#include "rocemu/dissect.h"
#include "strbuf.h"

/* One field of an extension header, found in struct roce_ib by offset. */
struct ext_field {
	const char *key;	/* JSON key and text label */
	uint16_t off;		/* offsetof(struct roce_ib, ...) */
	uint8_t size;		/* 1, 4 or 8 bytes */
	uint8_t hex;		/* hex digits to print; 0 prints decimal */
};

struct ext_desc {
	unsigned ext;		/* enum roce_ext bit */
	const char *key;	/* JSON object name and text label */
	const struct ext_field *fields;
	unsigned nfields;
};

/*
 * Walks the extension headers present in ib, in wire order: start with
 * *pos = 0; returns the next description, or NULL after the last.
 */
const struct ext_desc *roce_ext_next(const struct roce_ib *ib, unsigned *pos);

uint64_t roce_ext_field_value(const struct roce_ib *ib,
			      const struct ext_field *fl);

/* "ACK", "NAK REM_ACCESS_ERR", "RNR_NAK 1280us" for an AETH syndrome. */
void roce_fmt_aeth(struct roce_sb *sb, uint8_t syndrome);

/* Seconds with 6 decimals, after a '-' for a negative time. */
void roce_fmt_time(struct roce_sb *sb, int64_t ns);

void roce_fmt_mac(struct roce_sb *sb, const uint8_t mac[6]);

#endif
