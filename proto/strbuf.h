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
/* Room for n more bytes and the NUL, or NULL (and overflow set). */
static inline char *sb_room(struct roce_sb *sb, size_t n)
{
	if (sb->len + n >= sb->cap) {
		sb->overflow = true;
		return NULL;
	}
	return sb->buf + sb->len;
}

static inline void sb_commit(struct roce_sb *sb, size_t n)
{
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

static inline void sb_putn(struct roce_sb *sb, const char *s, size_t n)
{
	char *d = sb_room(sb, n);

	if (!d)
		return;
	/* Most pieces are a few bytes: a call to memcpy costs more. */
	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
	sb_commit(sb, n);
}

static inline void sb_puts(struct roce_sb *sb, const char *s)
{
	sb_putn(sb, s, strlen(s));
}

static inline void sb_putc(struct roce_sb *sb, char c)
{
	char *d = sb_room(sb, 1);

	if (d) {
		*d = c;
		sb_commit(sb, 1);
	}
}

/* Exactly digits hex digits, no prefix. */
static inline void sb_hexn(struct roce_sb *sb, uint64_t v, unsigned digits)
{
	static const char hex[] = "0123456789abcdef";
	char *d = sb_room(sb, digits);

	if (!d)
		return;
	for (unsigned i = digits; i-- > 0; v >>= 4)
		d[i] = hex[v & 0xf];
	sb_commit(sb, digits);
}

/* "0x" then exactly digits hex digits. */
static inline void sb_hex(struct roce_sb *sb, uint64_t v, unsigned digits)
{
	sb_putn(sb, "0x", 2);
	sb_hexn(sb, v, digits);
}

static inline void sb_u64(struct roce_sb *sb, uint64_t v)
{
	unsigned n = 1;

	for (uint64_t t = v; t >= 10; t /= 10)
		n++;
	char *d = sb_room(sb, n);
	if (!d)
		return;
	for (unsigned i = n; i-- > 0; v /= 10)
		d[i] = (char)('0' + v % 10);
	sb_commit(sb, n);
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
