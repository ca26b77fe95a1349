/* SPDX-License-Identifier: MIT */
/* CRC-32 (IEEE 802.3, reflected): ISA-L's folding kernels, zlib as the fallback. */
#include <isa-l/crc.h>
#include <stdbool.h>
#include <zlib.h>

#include "rocemu/icrc.h"

/*
 * ISA-L's crc32_gzip_refl picks, at its first call, the widest kernel the
 * CPU has (AVX-512 with VPCLMULQDQ here, then PCLMULQDQ); it costs about
 * 35 ns on a 110-byte datagram where zlib's crc32 costs 200 ns. Without
 * carry-less multiply ISA-L falls to a table loop no faster than zlib's,
 * so the choice is made on that CPU flag, once.
 */
static bool use_isal(void)
{
	static int have = -1;	/* read and written only atomically */
	int v = __atomic_load_n(&have, __ATOMIC_RELAXED);

	if (v < 0) {
		__builtin_cpu_init();
		v = __builtin_cpu_supports("pclmul") ? 1 : 0;
		__atomic_store_n(&have, v, __ATOMIC_RELAXED);
	}
	return v == 1;
}

/*
 * ISA-L's AVX-512 kernel returns with the upper halves of the vector
 * registers dirty (no vzeroupper); every SSE instruction after that, the
 * memcpy of the next payload included, then ran about 3x slower until
 * something cleared them. Clearing costs a cycle and is legal on any CPU
 * with AVX, which every CPU with an AVX-512 kernel has.
 */
static void clear_upper(void)
{
	static int have_avx = -1;	/* read and written only atomically */
	int v = __atomic_load_n(&have_avx, __ATOMIC_RELAXED);

	if (v < 0) {
		v = __builtin_cpu_supports("avx") ? 1 : 0;
		__atomic_store_n(&have_avx, v, __ATOMIC_RELAXED);
	}
	if (v == 1)
		__asm__ volatile("vzeroupper" ::: "memory");
}

uint32_t roce_crc32_2(uint32_t crc, const void *a, size_t alen,
		      const void *b, size_t blen)
{
	if (use_isal()) {	/* one check and one clearing for both */
		crc = crc32_gzip_refl(crc, a, alen);
		if (blen)
			crc = crc32_gzip_refl(crc, b, blen);
		clear_upper();
		return crc;
	}
	crc = roce_crc32(crc, a, alen);
	return blen ? roce_crc32(crc, b, blen) : crc;
}

uint32_t roce_crc32(uint32_t crc, const void *buf, size_t len)
{
	if (use_isal()) {
		crc = crc32_gzip_refl(crc, buf, len);
		clear_upper();
		return crc;
	}
	while (len > 0) {	/* zlib takes a uInt length */
		uInt part = len > 1u << 30 ? 1u << 30 : (uInt)len;
		crc = (uint32_t)crc32(crc, buf, part);
		buf = (const uint8_t *)buf + part;
		len -= part;
	}
	return crc;
}

const char *roce_crc32_engine(void)
{
	return use_isal() ? "isa-l" : "zlib";
}
