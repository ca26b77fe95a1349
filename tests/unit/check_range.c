/* SPDX-License-Identifier: MIT */
/* range.h at the 2^64 edge, against sums done in 128 bits. */
#include <stdbool.h>
#include <stdint.h>

#include "check_suites.h"
#include "rocemu/range.h"

typedef unsigned __int128 u128;

static const u128 TWO64 = (u128)1 << 64;

/* The model: what each helper must answer, with sums that cannot wrap. */
static bool m_end(uint64_t va, uint64_t len)
{
	return (u128)va + len < TWO64;
}

static bool m_inside(uint64_t va, uint64_t len, uint64_t lo, uint64_t hi)
{
	return m_end(va, len) && va >= lo && (u128)va + len <= hi;
}

static bool m_in_region(uint64_t va, uint64_t len, uint64_t base,
			uint64_t size)
{
	return m_end(base, size) && m_inside(va, len, base, base + size);
}

/* Rows written out by hand: the edge cases, each with its answer. */
static const struct end_row {
	uint64_t va, len;
	bool ok;
	uint64_t end;
} end_rows[] = {
	{ 0, 0, true, 0 },
	{ UINT64_MAX, 0, true, UINT64_MAX },	/* empty at the very top */
	{ UINT64_MAX, 1, false, 0 },		/* the last byte's end is 2^64 */
	{ UINT64_MAX - 1, 1, true, UINT64_MAX },
	{ 0xffffffffffffff00ull, 0x100, false, 0 },
	{ 0xffffffffffffff00ull, 0xff, true, UINT64_MAX },
	{ 0xffffffffffffff00ull, 0x200, false, 0 },
	{ 1, UINT64_MAX, false, 0 },
	{ 0, UINT64_MAX, true, UINT64_MAX },
	{ 0x1000, 0x2000, true, 0x3000 },
};

START_TEST(test_range_end_edges)
{
	const struct end_row *r = &end_rows[_i];
	uint64_t end = 0x5a5a5a5a5a5a5a5aull;

	ck_assert_int_eq(roce_range_end(r->va, r->len, &end), r->ok);
	if (r->ok)
		ck_assert_uint_eq(end, r->end);
	else /* untouched on failure */
		ck_assert_uint_eq(end, 0x5a5a5a5a5a5a5a5aull);
	ck_assert_int_eq(m_end(r->va, r->len), r->ok);
}
END_TEST

static const struct region_row {
	uint64_t va, len, base, size;
	bool inside;
	uint64_t off;
} region_rows[] = {
	/* exactly the region, and exactly at its end */
	{ 0x1000, 0x1000, 0x1000, 0x1000, true, 0 },
	{ 0x1fff, 1, 0x1000, 0x1000, true, 0xfff },
	{ 0x2000, 0, 0x1000, 0x1000, true, 0x1000 },	/* empty at the end */
	{ 0x2000, 1, 0x1000, 0x1000, false, 0 },	/* one past */
	{ 0x1fff, 2, 0x1000, 0x1000, false, 0 },
	{ 0xfff, 1, 0x1000, 0x1000, false, 0 },		/* one before */
	{ 0x1000, 0, 0x1000, 0, true, 0 },		/* empty region */
	{ 0x1000, 1, 0x1000, 0, false, 0 },
	/* a range whose sum wraps to land inside a region at 0 */
	{ 0xffffffffffffff00ull, 0x200, 0, 0x10000, false, 0 },
	{ 0xffffffffffffff00ull, 0x200, 0, UINT64_MAX, false, 0 },
	/* the same range in a region that reaches the top but not 2^64 */
	{ 0xffffffffffffff00ull, 0xff, 0xffffffffffff0000ull, 0xffff, true,
	  0xff00 },
	/* a region that wraps itself holds nothing, not even its base */
	{ 0xffffffffffffff00ull, 1, 0xffffffffffffff00ull, 0x200, false, 0 },
	{ 0x10, 1, 0xffffffffffffff00ull, 0x200, false, 0 },
	/* the region ending at 2^64 exactly: its end is not a number */
	{ UINT64_MAX - 1, 1, 0xffffffffffffff00ull, 0x100, false, 0 },
	/* the whole space but its last byte */
	{ UINT64_MAX - 1, 1, 0, UINT64_MAX, true, UINT64_MAX - 1 },
	{ UINT64_MAX, 0, 0, UINT64_MAX, true, UINT64_MAX },
	{ UINT64_MAX, 1, 0, UINT64_MAX, false, 0 },
};

START_TEST(test_range_region_edges)
{
	const struct region_row *r = &region_rows[_i];
	uint64_t off = 77;

	ck_assert_int_eq(roce_range_in_region(r->va, r->len, r->base, r->size),
			 r->inside);
	ck_assert_int_eq(roce_range_offset(r->va, r->len, r->base, r->size,
					   &off),
			 r->inside);
	ck_assert_uint_eq(off, r->inside ? r->off : 77);
	ck_assert_int_eq(m_in_region(r->va, r->len, r->base, r->size),
			 r->inside);
}
END_TEST

static const struct inside_row {
	uint64_t va, len, lo, hi;
	bool inside;
} inside_rows[] = {
	{ 0, 0, 0, 0, true },
	{ 5, 0, 0, 4, false },		/* empty, but past hi */
	{ 4, 0, 0, 4, true },
	{ 0, 4, 0, 4, true },
	{ 1, 4, 0, 4, false },
	{ 3, 4, 4, 8, false },		/* starts below lo */
	{ UINT64_MAX, 1, 0, UINT64_MAX, false },
	{ UINT64_MAX, 0, 0, UINT64_MAX, true },
	{ 0xffffffffffffff00ull, 0x200, 0, 0x100, false },
	/* offset and length inside a buffer of n bytes */
	{ 0xfffffffffffffffeull, 4, 0, 16, false },
	{ 12, 4, 0, 16, true },
	{ 13, 4, 0, 16, false },
};

START_TEST(test_range_inside_edges)
{
	const struct inside_row *r = &inside_rows[_i];

	ck_assert_int_eq(roce_range_inside(r->va, r->len, r->lo, r->hi),
			 r->inside);
	ck_assert_int_eq(m_inside(r->va, r->len, r->lo, r->hi), r->inside);
}
END_TEST

/* Values near the edges where sums wrap or just fit. */
static const uint64_t edge[] = {
	0, 1, 2, 0xff, 0x100, 0x1000, 0x7fffffffffffffffull,
	0x8000000000000000ull, 0xffffffffffffff00ull, UINT64_MAX - 1,
	UINT64_MAX,
};
enum { NEDGE = sizeof(edge) / sizeof(edge[0]) };

/* One case of the model test: all four helpers agree with the model. */
static void agree(uint64_t va, uint64_t len, uint64_t x, uint64_t y)
{
	uint64_t end = 3, off = 3;
	bool e = roce_range_end(va, len, &end);
	bool in = roce_range_offset(va, len, x, y, &off);

	ck_assert_int_eq(e, m_end(va, len));
	ck_assert(e ? (u128)end == (u128)va + len : end == 3);
	ck_assert_int_eq(roce_range_inside(va, len, x, y),
			 m_inside(va, len, x, y));
	ck_assert_int_eq(roce_range_in_region(va, len, x, y),
			 m_in_region(va, len, x, y));
	ck_assert_int_eq(in, m_in_region(va, len, x, y));
	ck_assert(in ? (u128)off + x == va : off == 3);
}

/* Every combination of edge values agrees with the 128-bit model. */
START_TEST(test_range_model_agrees)
{
	for (unsigned a = 0; a < NEDGE; a++)
		for (unsigned b = 0; b < NEDGE; b++)
			for (unsigned c = 0; c < NEDGE; c++)
				for (unsigned d = 0; d < NEDGE; d++)
					agree(edge[a], edge[b], edge[c],
					      edge[d]);
}
END_TEST

Suite *range_suite(void)
{
	Suite *s = suite_create("range");
	TCase *tc = tcase_create("range");

	tcase_add_loop_test(tc, test_range_end_edges, 0,
			    sizeof(end_rows) / sizeof(end_rows[0]));
	tcase_add_loop_test(tc, test_range_region_edges, 0,
			    sizeof(region_rows) / sizeof(region_rows[0]));
	tcase_add_loop_test(tc, test_range_inside_edges, 0,
			    sizeof(inside_rows) / sizeof(inside_rows[0]));
	tcase_add_test(tc, test_range_model_agrees);
	suite_add_tcase(s, tc);
	return s;
}
