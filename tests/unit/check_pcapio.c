/* SPDX-License-Identifier: MIT */
/* The capture reader: pcap and pcapng records of every legal size, and each malformed record reported by number and offset. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_suites.h"

#define USEC 0xa1b2c3d4u
#define NSEC 0xa1b23c4du
#define KUZNETSOV 0xa1b2cd34u

/* A capture built byte by byte in memory, in the byte order it says. */
struct cap {
	uint8_t *b;
	size_t len, room;
	bool big;
	char path[256];
};

static void put(struct cap *c, const void *p, size_t n)
{
	if (c->len + n > c->room) {
		c->room = 2 * (c->len + n);
		c->b = realloc(c->b, c->room);
		ck_assert_ptr_nonnull(c->b);
	}
	memcpy(c->b + c->len, p, n);
	c->len += n;
}

static void put32(struct cap *c, uint32_t v)
{
	uint8_t le[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			  (uint8_t)(v >> 24) };
	uint8_t be[4] = { le[3], le[2], le[1], le[0] };

	put(c, c->big ? be : le, 4);
}

static void put16(struct cap *c, uint16_t v)
{
	uint8_t le[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	uint8_t be[2] = { le[1], le[0] };

	put(c, c->big ? be : le, 2);
}

static void pcap_header(struct cap *c, bool big, uint32_t magic,
			uint16_t minor, uint32_t snaplen, uint32_t linktype)
{
	c->big = big;
	put32(c, magic);
	put16(c, 2);
	put16(c, minor);
	put32(c, 0); /* thiszone */
	put32(c, 0); /* sigfigs */
	put32(c, snaplen);
	put32(c, linktype);
}

/* Bytes that say where they sit, so a misplaced one shows. */
static uint8_t pattern(uint32_t rec, uint32_t i)
{
	return (uint8_t)(i * 7 + rec * 13 + (i >> 8));
}

static void pcap_record(struct cap *c, uint32_t sec, uint32_t frac,
			uint32_t incl, uint32_t orig, uint32_t rec_no)
{
	put32(c, sec);
	put32(c, frac);
	put32(c, incl);
	put32(c, orig);
	for (uint32_t i = 0; i < incl; i++) {
		uint8_t x = pattern(rec_no, i);
		put(c, &x, 1);
	}
}

/* Writes the capture to a temporary file named in c->path. */
static void cap_write(struct cap *c)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(c->path, sizeof(c->path), "%s/pcapio-XXXXXX", dir);
	int fd = mkstemp(c->path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, c->b, c->len), (ssize_t)c->len);
	close(fd);
}

/* Writes the capture and opens it. */
static struct roce_pcap_reader *cap_open(struct cap *c)
{
	char err[ROCE_PCAP_ERRLEN] = "";
	struct roce_pcap_reader *r = NULL;

	cap_write(c);
	int rc = roce_pcap_open(c->path, &r, err);
	ck_assert_msg(rc == 0, "open: %d %s", rc, err);
	return r;
}

/* Writes a capture the reader must refuse; returns its error. */
static int cap_open_fails(struct cap *c, char *err)
{
	struct roce_pcap_reader *r = NULL;

	cap_write(c);
	int rc = roce_pcap_open(c->path, &r, err);
	ck_assert_ptr_null(r);
	unlink(c->path);
	free(c->b);
	return rc;
}

static void cap_done(struct cap *c, struct roce_pcap_reader *r)
{
	roce_pcap_close(r);
	unlink(c->path);
	free(c->b);
}

static void expect_record(struct roce_pcap_reader *r, uint32_t rec_no,
			  uint32_t len, uint64_t ts_ns)
{
	char err[ROCE_PCAP_ERRLEN] = "";
	struct roce_pcap_rec rec;
	int rc = roce_pcap_next(r, &rec, err);

	ck_assert_msg(rc == 1, "record %u: %d %s", rec_no, rc, err);
	ck_assert_uint_eq(rec.caplen, len);
	ck_assert_uint_eq(rec.wire_len, len);
	ck_assert_uint_eq(rec.ts_ns, ts_ns);
	for (uint32_t i = 0; i < len; i++)
		if (rec.data[i] != pattern(rec_no, i))
			ck_abort_msg("record %u byte %u differs", rec_no, i);
}

/* Reads one record, which must fail with code and a message holding want. */
static void expect_failure(struct roce_pcap_reader *r, int code,
			   const char *want)
{
	char err[ROCE_PCAP_ERRLEN] = "";
	struct roce_pcap_rec rec;
	int rc = roce_pcap_next(r, &rec, err);

	ck_assert_msg(rc == code, "got %d (%s), wanted %d", rc, err, code);
	ck_assert_msg(strstr(err, want), "'%s' lacks '%s'", err, want);
}

/* Records of libpcap's largest snapshot length, back to back, so that
 * some straddle the reader's buffer; then a one-byte record. */
START_TEST(test_pcapio_largest_records_read_whole)
{
	struct cap c = { 0 };

	pcap_header(&c, false, USEC, 4, ROCE_PCAP_MAX_CAPLEN, 1);
	for (uint32_t i = 0; i < 6; i++)
		pcap_record(&c, 100, i, ROCE_PCAP_MAX_CAPLEN,
			    ROCE_PCAP_MAX_CAPLEN, i);
	pcap_record(&c, 101, 0, 1, 1, 6);
	struct roce_pcap_reader *r = cap_open(&c);
	for (uint32_t i = 0; i < 6; i++)
		expect_record(r, i, ROCE_PCAP_MAX_CAPLEN,
			      100000000000ull + i * 1000ull);
	expect_record(r, 6, 1, 101000000000ull);
	expect_failure(r, 0, "");
	cap_done(&c, r);
}
END_TEST

/* Big-endian microseconds, little-endian nanoseconds, Kuznetsov's
 * longer record header: the same fields read back. */
START_TEST(test_pcapio_byte_orders_and_precisions)
{
	static const struct {
		bool big;
		uint32_t magic, frac;
		uint64_t ts_ns;
	} v[] = {
		{ true, USEC, 250000, 7250000000ull },
		{ false, NSEC, 999999999, 7999999999ull },
		{ true, NSEC, 1, 7000000001ull },
		{ false, KUZNETSOV, 999999, 7999999000ull },
	};

	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct cap c = { 0 };
		pcap_header(&c, v[i].big, v[i].magic, 4, 65535, 1);
		put32(&c, 7);
		put32(&c, v[i].frac);
		put32(&c, 3);
		put32(&c, 3);
		if (v[i].magic == KUZNETSOV)
			put(&c, "\1\0\0\0\0\10\0\0", 8);
		for (uint32_t j = 0; j < 3; j++) {
			uint8_t x = pattern(0, j);
			put(&c, &x, 1);
		}
		struct roce_pcap_reader *r = cap_open(&c);
		ck_assert_uint_eq(roce_pcap_link(r), ROCE_LINK_ETH);
		expect_record(r, 0, 3, v[i].ts_ns);
		expect_failure(r, 0, "");
		cap_done(&c, r);
	}
}
END_TEST

/* Record 2 of a capture whose first record holds 60 bytes starts at
 * byte 24 + 16 + 60 = 100. */
static struct roce_pcap_reader *second_record_is(struct cap *c, bool nano,
						 uint32_t snaplen,
						 uint32_t frac, uint32_t incl,
						 uint32_t orig)
{
	pcap_header(c, false, nano ? NSEC : USEC, 4, snaplen, 1);
	pcap_record(c, 1, 0, 60, 60, 0);
	pcap_record(c, 1, frac, incl, orig, 1);
	struct roce_pcap_reader *r = cap_open(c);
	expect_record(r, 0, 60, 1000000000ull);
	return r;
}

START_TEST(test_pcapio_orig_len_below_incl_len)
{
	struct cap c = { 0 };
	struct roce_pcap_reader *r = second_record_is(&c, false, 0, 0, 60, 10);

	expect_failure(r, -EBADMSG,
		       "record 2 at byte 100: orig_len 10 is below "
		       "incl_len 60");
	cap_done(&c, r);
}
END_TEST

START_TEST(test_pcapio_record_over_largest_snaplen)
{
	struct cap c = { 0 };
	struct roce_pcap_reader *r = second_record_is(
		&c, false, 0, 0, ROCE_PCAP_MAX_CAPLEN + 1,
		ROCE_PCAP_MAX_CAPLEN + 1);

	expect_failure(r, -EBADMSG,
		       "record 2 at byte 100: incl_len 262145 exceeds 262144");
	cap_done(&c, r);
}
END_TEST

START_TEST(test_pcapio_record_over_file_snaplen)
{
	struct cap c = { 0 };
	struct roce_pcap_reader *r = second_record_is(&c, false, 96, 0, 97,
						      97);

	expect_failure(r, -EBADMSG,
		       "record 2 at byte 100: incl_len 97 exceeds the "
		       "snapshot length 96");
	cap_done(&c, r);
}
END_TEST

START_TEST(test_pcapio_timestamp_fraction_of_a_second)
{
	struct cap c = { 0 };
	struct roce_pcap_reader *r =
		second_record_is(&c, false, 0, 1000000, 60, 60);

	expect_failure(r, -EBADMSG,
		       "record 2 at byte 100: timestamp fraction 1000000");
	cap_done(&c, r);

	struct cap n = { 0 };
	r = second_record_is(&n, true, 0, 1000000000, 60, 60);
	expect_failure(r, -EBADMSG,
		       "record 2 at byte 100: timestamp fraction 1000000000");
	cap_done(&n, r);
}
END_TEST

/* The file ends inside the second record's header, then inside its data. */
START_TEST(test_pcapio_truncated_records)
{
	struct cap c = { 0 };

	pcap_header(&c, false, USEC, 4, 0, 1);
	pcap_record(&c, 1, 0, 60, 60, 0);
	put32(&c, 1);
	put16(&c, 0);
	struct roce_pcap_reader *r = cap_open(&c);
	expect_record(r, 0, 60, 1000000000ull);
	expect_failure(r, -EBADMSG,
		       "record 2 at byte 100: truncated record header: 6 of "
		       "16 bytes");
	cap_done(&c, r);

	struct cap d = { 0 };
	pcap_header(&d, false, USEC, 4, 0, 1);
	pcap_record(&d, 1, 0, 60, 60, 0);
	pcap_record(&d, 1, 0, 60, 60, 1);
	d.len -= 5;
	r = cap_open(&d);
	expect_record(r, 0, 60, 1000000000ull);
	expect_failure(r, -EBADMSG,
		       "record 2 at byte 100: truncated record: incl_len 60, "
		       "but the file ends 55 bytes into its data");
	cap_done(&d, r);
}
END_TEST

/* A reader never resumes after a broken record: what follows is not
 * where the broken header says. */
START_TEST(test_pcapio_failure_stays)
{
	struct cap c = { 0 };

	pcap_header(&c, false, USEC, 4, 0, 1);
	pcap_record(&c, 1, 0, 60, 60, 0);
	pcap_record(&c, 1, 0, 60, 10, 1);
	pcap_record(&c, 1, 0, 60, 60, 2);
	struct roce_pcap_reader *r = cap_open(&c);
	expect_record(r, 0, 60, 1000000000ull);
	expect_failure(r, -EBADMSG, "record 2 at byte 100: orig_len 10");
	expect_failure(r, -EBADMSG, "record 2 at byte 100: orig_len 10");
	cap_done(&c, r);
}
END_TEST

START_TEST(test_pcapio_file_header_errors)
{
	char err[ROCE_PCAP_ERRLEN];
	struct cap c = { 0 };

	pcap_header(&c, false, USEC, 3, 0, 1);
	ck_assert_int_eq(cap_open_fails(&c, err), -EPROTONOSUPPORT);
	ck_assert_str_eq(err, "pcap version 2.3 is not supported (2.4 is)");

	struct cap l = { 0 };
	pcap_header(&l, true, USEC, 4, 0, 0);
	ck_assert_int_eq(cap_open_fails(&l, err), -EPROTONOSUPPORT);
	ck_assert_msg(strstr(err, "link type 0 (NULL) is not Ethernet"), "%s",
		      err);

	struct cap t = { 0 };
	pcap_header(&t, false, NSEC, 4, 0, 1);
	t.len = 20;
	ck_assert_int_eq(cap_open_fails(&t, err), -EBADMSG);
	ck_assert_str_eq(err, "truncated pcap file header: 20 of 24 bytes");

	struct cap j = { 0 };
	put(&j, "hello, world\n", 13);
	ck_assert_int_eq(cap_open_fails(&j, err), -EBADMSG);
	ck_assert_msg(strstr(err, "not a pcap or pcapng capture"), "%s", err);

	struct cap e = { 0 };
	ck_assert_int_eq(cap_open_fails(&e, err), -EBADMSG);
	ck_assert_msg(strstr(err, "not a pcap or pcapng capture"), "%s", err);
}
END_TEST

/* A pcapng section with one Ethernet interface, little-endian. */
static void pcapng_header(struct cap *c)
{
	put32(c, 0x0a0d0d0a);
	put32(c, 28);
	put32(c, 0x1a2b3c4d);
	put16(c, 1);
	put16(c, 0);
	put32(c, 0xffffffff); /* section length unknown */
	put32(c, 0xffffffff);
	put32(c, 28);
	put32(c, 1); /* interface description */
	put32(c, 20);
	put16(c, 1); /* Ethernet */
	put16(c, 0);
	put32(c, 0);
	put32(c, 20);
}

/* An enhanced packet block; the default resolution is microseconds. */
static void pcapng_packet(struct cap *c, uint64_t usec, uint32_t caplen,
			  uint32_t len, uint32_t rec_no)
{
	uint32_t padded = (caplen + 3) & ~3u;

	put32(c, 6);
	put32(c, 32 + padded);
	put32(c, 0);
	put32(c, (uint32_t)(usec >> 32));
	put32(c, (uint32_t)usec);
	put32(c, caplen);
	put32(c, len);
	for (uint32_t i = 0; i < padded; i++) {
		uint8_t x = i < caplen ? pattern(rec_no, i) : 0;
		put(c, &x, 1);
	}
	put32(c, 32 + padded);
}

START_TEST(test_pcapio_pcapng_records)
{
	struct cap c = { 0 };

	pcapng_header(&c);
	pcapng_packet(&c, 5000001, 61, 61, 0);
	pcapng_packet(&c, 5000002, 60, 10, 1);
	struct roce_pcap_reader *r = cap_open(&c);
	ck_assert_uint_eq(roce_pcap_link(r), ROCE_LINK_ETH);
	expect_record(r, 0, 61, 5000001000ull);
	expect_failure(r, -EBADMSG,
		       "record 2: original packet length 10 is below the "
		       "captured length 60");
	cap_done(&c, r);
}
END_TEST

/* What rocemu writes it reads back whole, up to the largest record. */
START_TEST(test_pcapio_writer_output_reads_back)
{
	static uint8_t frame[ROCE_PCAP_MAX_CAPLEN];
	char err[ROCE_PCAP_ERRLEN] = "";
	struct roce_pcap_writer *w;
	struct cap c = { 0 };

	for (uint32_t i = 0; i < sizeof(frame); i++)
		frame[i] = pattern(0, i);
	cap_write(&c);
	ck_assert_msg(roce_pcap_create(c.path, &w, err) == 0, "%s", err);
	ck_assert_int_eq(roce_pcap_write(w, 3000000001ull, frame,
					 sizeof(frame)),
			 0);
	ck_assert_int_eq(roce_pcap_finish(w), 0);
	struct roce_pcap_reader *r = NULL;
	ck_assert_msg(roce_pcap_open(c.path, &r, err) == 0, "%s", err);
	expect_record(r, 0, sizeof(frame), 3000000001ull);
	expect_failure(r, 0, "");
	cap_done(&c, r);
}
END_TEST

/* An unbuffered writer's file is a whole capture before it is finished:
 * what a program that ends in _exit leaves behind. */
START_TEST(test_pcapio_unbuffered_whole_while_open)
{
	static uint8_t frame[ROCE_PCAP_MAX_CAPLEN];
	char err[ROCE_PCAP_ERRLEN] = "";
	struct roce_pcap_writer *w;
	struct cap c = { 0 };

	for (uint32_t i = 0; i < sizeof(frame); i++)
		frame[i] = pattern(0, i);
	cap_write(&c);
	ck_assert_msg(roce_pcap_create(c.path, &w, err) == 0, "%s", err);
	ck_assert_int_eq(roce_pcap_unbuffered(w), 0);
	ck_assert_int_eq(roce_pcap_write(w, 3000000001ull, frame, 60), 0);
	ck_assert_int_eq(roce_pcap_write(w, 3000000002ull, frame,
					 sizeof(frame)),
			 0);
	struct roce_pcap_reader *r = NULL;
	ck_assert_msg(roce_pcap_open(c.path, &r, err) == 0, "%s", err);
	expect_record(r, 0, 60, 3000000001ull);
	expect_record(r, 0, sizeof(frame), 3000000002ull);
	expect_failure(r, 0, "");
	ck_assert_int_eq(roce_pcap_finish(w), 0);
	cap_done(&c, r);
}
END_TEST

Suite *pcapio_suite(void)
{
	Suite *s = suite_create("pcapio");
	TCase *tc = tcase_create("reader");

	tcase_add_test(tc, test_pcapio_largest_records_read_whole);
	tcase_add_test(tc, test_pcapio_byte_orders_and_precisions);
	tcase_add_test(tc, test_pcapio_orig_len_below_incl_len);
	tcase_add_test(tc, test_pcapio_record_over_largest_snaplen);
	tcase_add_test(tc, test_pcapio_record_over_file_snaplen);
	tcase_add_test(tc, test_pcapio_timestamp_fraction_of_a_second);
	tcase_add_test(tc, test_pcapio_truncated_records);
	tcase_add_test(tc, test_pcapio_failure_stays);
	tcase_add_test(tc, test_pcapio_unbuffered_whole_while_open);
	tcase_add_test(tc, test_pcapio_file_header_errors);
	tcase_add_test(tc, test_pcapio_pcapng_records);
	tcase_add_test(tc, test_pcapio_writer_output_reads_back);
	suite_add_tcase(s, tc);
	return s;
}
