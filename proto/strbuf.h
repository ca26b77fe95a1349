/* SPDX-License-Identifier: MIT */
/* Appenders for struct roce_sb: text, hex and decimal without printf. */
#ifndef ROCEMU_PROTO_STRBUF_H
#define ROCEMU_PROTO_STRBUF_H

#include <stdint.h>
#include <string.h>

#include "rocemu/dissect.h"

/*
 * The dump tool formats millions of packets a second; snprintf per field
 * costs several times these loops, so numbers are written by hand.
 */
static inline void sb_putn(struct roce_sb *sb, const char *s, size_t n)
{
	if (sb->len + n >= sb->cap) {
		sb->overflow = true;
		return;
	}
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

static inline void sb_puts(struct roce_sb *sb, const char *s)
{
	sb_putn(sb, s, strlen(s));
}

static inline void sb_putc(struct roce_sb *sb, char c)
{
	sb_putn(sb, &c, 1);
}

/* Exactly digits hex digits, no prefix. */
static inline void sb_hexn(struct roce_sb *sb, uint64_t v, unsigned digits)
{
	static const char hex[] = "0123456789abcdef";
	char t[16];

	for (unsigned i = digits; i-- > 0; v >>= 4)
		t[i] = hex[v & 0xf];
	sb_putn(sb, t, digits);
}

/* "0x" then exactly digits hex digits. */
static inline void sb_hex(struct roce_sb *sb, uint64_t v, unsigned digits)
{
	sb_putn(sb, "0x", 2);
	sb_hexn(sb, v, digits);
}

static inline void sb_u64(struct roce_sb *sb, uint64_t v)
{
	char t[20];
	unsigned i = sizeof(t);

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sb_putn(sb, t + i, sizeof(t) - i);
}

/* A name, a space, and "0x" hex of the given width. */
static inline void sb_kv_hex(struct roce_sb *sb, const char *k, uint64_t v,
			     unsigned digits)
{
	sb_puts(sb, k);
	sb_hex(sb, v, digits);
}

static inline void sb_kv_u64(struct roce_sb *sb, const char *k, uint64_t v)
{
	sb_puts(sb, k);
	sb_u64(sb, v);
}

#endif
