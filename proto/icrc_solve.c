/* SPDX-License-Identifier: MIT */
/* Recovering the IPv4 ID and DF bit that an ICRC was computed over. */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "rocemu/icrc.h"
#include "byteorder.h"

enum {
	UNKNOWN_BITS = 17,	/* 16 of the ID, then DF */
	PREFIX = 8 + 8,		/* the LRH ones and IPv4 bytes 0..7 */
};

/* CRC-32 without its affine part for a prefix holding only bit j. */
static uint32_t unit(int j)
{
	uint8_t z[PREFIX] = { 0 }, zero[PREFIX] = { 0 };

	if (j < 16)
		z[8 + 4 + j / 8] = (uint8_t)(0x80 >> (j % 8));
	else
		z[8 + 6] = 0x40;
	return (uint32_t)(crc32(0L, z, PREFIX) ^ crc32(0L, zero, PREFIX));
}

/*
 * An XOR basis in insertion order: each row has zeros at the pivots of
 * the rows before it, so one pass reduces any vector.
 */
struct basis {
	uint32_t row[UNKNOWN_BITS], comb[UNKNOWN_BITS];
	int pivot[UNKNOWN_BITS], n;
};

static void basis_add(struct basis *b, uint32_t v, uint32_t comb)
{
	for (int r = 0; r < b->n; r++)
		if (v & (1u << b->pivot[r])) {
			v ^= b->row[r];
			comb ^= b->comb[r];
		}
	if (!v)
		return;
	b->row[b->n] = v;
	b->comb[b->n] = comb;
	b->pivot[b->n++] = 31 - __builtin_clz(v);
}

int roce_icrc_solve_ipv4_fields(uint32_t have, uint32_t want, size_t len,
				uint16_t *id, uint16_t *frag)
{
	if (len < 20 + 8 + 12 + 4)
		return -EBADMSG;
	/* Both values are the wire bytes read big-endian: byte-swapped CRCs. */
	uint32_t diff = __builtin_bswap32(want ^ have);
	/* The prefix's contribution moves through the bytes that follow it:
	 * the rest of the datagram, up to the ICRC. */
	uLong shift = crc32_combine_gen((z_off_t)(8 + len - 4 - PREFIX));
	struct basis b = { .n = 0 };
	for (int j = 0; j < UNKNOWN_BITS; j++)
		basis_add(&b, (uint32_t)crc32_combine_op(unit(j), 0, shift),
			  1u << j);
	uint32_t x = 0;
	for (int r = 0; r < b.n; r++)
		if (diff & (1u << b.pivot[r])) {
			diff ^= b.row[r];
			x ^= b.comb[r];
		}
	if (diff)
		return -EBADMSG;
	*id = 0;
	for (int j = 0; j < 16; j++)
		if (x & (1u << j))
			*id |= (uint16_t)(0x8000 >> j);
	*frag = (x >> 16) & 1 ? 0x4000 : 0;
	return 0;
}

int roce_icrc_solve_ipv4(uint8_t *ip, size_t len)
{
	uint32_t have;
	uint16_t id, frag;

	if (len < 20 + 8 + 12 + 4 || ip[0] != 0x45)
		return -EBADMSG;
	if (roce_icrc_calc(ip, len, &have))
		return -EBADMSG;
	if (roce_icrc_solve_ipv4_fields(have, get_be32(ip + len - 4), len, &id,
					&frag))
		return -EBADMSG;
	put_be16(ip + 4, id);
	put_be16(ip + 6, frag);
	return 0;
}
