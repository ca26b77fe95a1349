/* SPDX-License-Identifier: MIT */
/* GID text and socket-address conversions, against bytes written out by hand. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "check_suites.h"
#include "rocemu/frame.h"

/* Texts that are GIDs, each with its 16 bytes spelled out. */
static const struct parse_row {
	const char *text;
	uint8_t gid[16];
} parse_ok[] = {
	{ "10.0.0.1", { [10] = 0xff, 0xff, 10, 0, 0, 1 } },
	{ "0.0.0.0", { [10] = 0xff, 0xff, 0, 0, 0, 0 } },
	{ "255.255.255.255", { [10] = 0xff, 0xff, 255, 255, 255, 255 } },
	{ "127.0.0.2", { [10] = 0xff, 0xff, 127, 0, 0, 2 } },
	/* the mapped form written as IPv6 text is the same GID */
	{ "::ffff:10.0.0.1", { [10] = 0xff, 0xff, 10, 0, 0, 1 } },
	{ "::1", { [15] = 1 } },
	{ "::", { 0 } },
	{ "fe80::1", { 0xfe, 0x80, [15] = 1 } },
	{ "2001:db8::a:b",
	  { 0x20, 0x01, 0x0d, 0xb8, [12] = 0, 0x0a, 0, 0x0b } },
	{ "FE80::0202:B3FF:FE1E:8329",
	  { 0xfe, 0x80, [8] = 0x02, 0x02, 0xb3, 0xff, 0xfe, 0x1e, 0x83, 0x29 } },
};

/* Texts that are not: each must give -EINVAL and leave gid alone. */
static const char *const parse_bad[] = {
	"", " ", "10.0.0.256", "10.0.0", "10.0.0.1.2", "10.0.0.1 ",
	" 10.0.0.1", "0x0a.0.0.1", "localhost", "fe80::1%lo", "fe80::1::2",
	"1:2:3:4:5:6:7:8:9", "::ffff:10.0.0.256", "10.0.0.1/24", "[::1]",
};

START_TEST(gid_parse_ok)
{
	const struct parse_row *r = &parse_ok[_i];
	uint8_t gid[16];

	memset(gid, 0xa5, sizeof(gid));
	ck_assert_int_eq(roce_gid_parse(r->text, gid), 0);
	ck_assert_msg(!memcmp(gid, r->gid, 16), "%s: wrong bytes", r->text);
}
END_TEST

START_TEST(gid_parse_bad)
{
	uint8_t gid[16], before[16];

	memset(gid, 0xa5, sizeof(gid));
	memcpy(before, gid, sizeof(gid));
	ck_assert_int_eq(roce_gid_parse(parse_bad[_i], gid), -EINVAL);
	ck_assert_msg(!memcmp(gid, before, 16), "'%s' wrote the GID",
		      parse_bad[_i]);
}
END_TEST

START_TEST(gid_parse_null)
{
	uint8_t gid[16] = { 0 };

	ck_assert_int_eq(roce_gid_parse(NULL, gid), -EINVAL);
}
END_TEST

START_TEST(gid_to_sockaddr_v4)
{
	const uint8_t gid[16] = { [10] = 0xff, 0xff, 192, 168, 1, 20 };
	const uint8_t port_be[2] = { 0x12, 0xb7 };	/* 4791 */
	const uint8_t addr[4] = { 192, 168, 1, 20 };
	struct sockaddr_storage ss;

	memset(&ss, 0xa5, sizeof(ss));
	ck_assert_uint_eq(roce_gid_to_sockaddr(gid, 4791, &ss),
			  sizeof(struct sockaddr_in));
	const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
	ck_assert_int_eq(a->sin_family, AF_INET);
	ck_assert(!memcmp(&a->sin_port, port_be, 2));
	ck_assert(!memcmp(&a->sin_addr, addr, 4));
	for (size_t i = 0; i < sizeof(a->sin_zero); i++)
		ck_assert_uint_eq(a->sin_zero[i], 0);
}
END_TEST

START_TEST(gid_to_sockaddr_v6)
{
	const uint8_t gid[16] = { 0xfe, 0x80, [14] = 0x12, 0x34 };
	const uint8_t port_be[2] = { 0xc0, 0x01 };	/* 49153 */
	struct sockaddr_storage ss;

	memset(&ss, 0xa5, sizeof(ss));
	ck_assert_uint_eq(roce_gid_to_sockaddr(gid, 49153, &ss),
			  sizeof(struct sockaddr_in6));
	const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
	ck_assert_int_eq(a->sin6_family, AF_INET6);
	ck_assert(!memcmp(&a->sin6_port, port_be, 2));
	ck_assert(!memcmp(&a->sin6_addr, gid, 16));
	ck_assert_uint_eq(a->sin6_flowinfo, 0);
	ck_assert_uint_eq(a->sin6_scope_id, 0);
}
END_TEST

START_TEST(gid_from_sockaddr_v4)
{
	const uint8_t want[16] = { [10] = 0xff, 0xff, 10, 1, 2, 3 };
	struct sockaddr_storage ss;
	struct sockaddr_in *a = (struct sockaddr_in *)&ss;
	uint8_t gid[16];

	memset(&ss, 0, sizeof(ss));
	a->sin_family = AF_INET;
	memcpy(&a->sin_port, (const uint8_t[2]){ 0x01, 0x02 }, 2); /* 258 */
	memcpy(&a->sin_addr, (const uint8_t[4]){ 10, 1, 2, 3 }, 4);
	ck_assert_int_eq(roce_gid_from_sockaddr(&ss, gid), 258);
	ck_assert(!memcmp(gid, want, 16));
}
END_TEST

START_TEST(gid_from_sockaddr_v6)
{
	const uint8_t want[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 7 };
	struct sockaddr_storage ss;
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
	uint8_t gid[16];

	memset(&ss, 0, sizeof(ss));
	a->sin6_family = AF_INET6;
	memcpy(&a->sin6_port, (const uint8_t[2]){ 0xff, 0xff }, 2);
	memcpy(&a->sin6_addr, want, 16);
	ck_assert_int_eq(roce_gid_from_sockaddr(&ss, gid), 65535);
	ck_assert(!memcmp(gid, want, 16));
}
END_TEST

/* A family that is neither IP version is refused, the GID untouched. */
START_TEST(gid_from_sockaddr_other)
{
	struct sockaddr_storage ss;
	uint8_t gid[16], before[16];

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	memset(gid, 0xa5, sizeof(gid));
	memcpy(before, gid, sizeof(gid));
	ck_assert_int_eq(roce_gid_from_sockaddr(&ss, gid), -EAFNOSUPPORT);
	ck_assert(!memcmp(gid, before, 16));
}
END_TEST

/* Through a socket address and back, for every parsed row. */
START_TEST(gid_sockaddr_round_trip)
{
	const struct parse_row *r = &parse_ok[_i];
	struct sockaddr_storage ss;
	uint8_t gid[16];

	roce_gid_to_sockaddr(r->gid, 4791, &ss);
	ck_assert_int_eq(roce_gid_from_sockaddr(&ss, gid), 4791);
	ck_assert_msg(!memcmp(gid, r->gid, 16), "%s: changed", r->text);
}
END_TEST

Suite *gid_suite(void)
{
	Suite *s = suite_create("gid");
	TCase *tc = tcase_create("core");
	const int n_ok = (int)(sizeof(parse_ok) / sizeof(parse_ok[0]));

	tcase_add_loop_test(tc, gid_parse_ok, 0, n_ok);
	tcase_add_loop_test(tc, gid_parse_bad, 0,
			    (int)(sizeof(parse_bad) / sizeof(parse_bad[0])));
	tcase_add_test(tc, gid_parse_null);
	tcase_add_test(tc, gid_to_sockaddr_v4);
	tcase_add_test(tc, gid_to_sockaddr_v6);
	tcase_add_test(tc, gid_from_sockaddr_v4);
	tcase_add_test(tc, gid_from_sockaddr_v6);
	tcase_add_test(tc, gid_from_sockaddr_other);
	tcase_add_loop_test(tc, gid_sockaddr_round_trip, 0, n_ok);
	suite_add_tcase(s, tc);
	return s;
}
