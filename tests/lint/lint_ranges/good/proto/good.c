/* SPDX-License-Identifier: MIT */
/* What the lint must let pass: checked ends, buffer pointers, cursors. */
#include "rocemu/range.h"

/* A comment may say va + len, and so may a string. */
static const char *say = "va + len > mr->iova + mr->length";

int good(const uint8_t *p, uint64_t va, uint64_t len, uint64_t off,
	 size_t n, uint64_t size)
{
	uint64_t end, at = 0;
	const uint8_t *q = p + n;		/* a pointer into a checked buffer */
	size_t hl = ROCE_ETH_HLEN + ROCE_UDP_HLEN; /* constants */
	size_t total = hdr_len + payload_len;	/* two lengths */
	uint64_t nb = addr_a + addr_b;		/* two addresses */

	if (!roce_range_end(va, len, &end) ||
	    !roce_range_inside(off, len, 0, size))
		return -1;
	va += len;				/* a cursor in a checked range */
	at = x * len + va;			/* a product, then a sum */
	at = idx - va + len;			/* (idx - va) + len */
	at = off + n / 2;			/* a quotient */
	at = va + roundup(len);			/* a call */
	at = buf + off;				/* a buffer and an offset */
	at = MAX_VA + MAX_LEN;			/* constants */
	(void)say;
	return (int)(q - p + hl + total + nb + at);
}
