/* SPDX-License-Identifier: MIT */
/* Datagrams from a UDP socket: parsed as the frame they came in (rxe captures, built frames, corruption, lengths), wrapped for a capture; a new source port on a built frame. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"

static const char *const captures[] = {
	"atomic_cas", "err_write_bad_rkey", "rc_send_5000_mtu1024",
	"rc_send_64", "read_bw", "ud_send", "write_bw",
};
#define NCAP (sizeof(captures) / sizeof(captures[0]))

enum { BIG = 0x10000 + 128 }; /* a frame with a 64 KiB datagram */

static void be16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * roce_datagram_parse of a flow's first datagram (a table that knows no
 * flow takes whatever ID and DF its ICRC solves for): what the receiver
 * made of every datagram before it predicted IDs, the reference here.
 */
static int parse_first(const struct roce_datagram_addr *a,
		       const uint8_t *payload, size_t len,
		       uint8_t hdr[ROCE_DATAGRAM_HDR_MAX], struct roce_frame *f,
		       const char **why)
{
	struct roce_ipid_table ids;

	roce_ipid_init(&ids);
	return roce_datagram_parse(a, &ids, payload, len, hdr, f, why);
}

/* The ID and DF of an IPv4 datagram whose ID and flags are 0, as the
 * receiver worked them out before: ID 0 with DF, else solved for. */
static bool old_id_found(uint8_t *ip, size_t len)
{
	uint32_t icrc;

	ip[6] = 0x40;
	if (roce_icrc_calc(ip, len, &icrc) == 0 &&
	    icrc == ((uint32_t)get16(ip + len - 4) << 16 | get16(ip + len - 2)))
		return true;
	ip[6] = 0;
	return roce_icrc_solve_ipv4(ip, len) == 0;
}

/*
 * The reference: the frame the UDP wire wrote around a received payload
 * before it could parse one: Ethernet to the device's MAC from a zero
 * MAC, TTL or hop limit 64, UDP checksum 0, the IPv4 ID and DF recovered
 * and only then the IPv4 header checksum. Returns the frame length.
 */
static size_t old_rebuild(const struct roce_datagram_addr *a,
			  const uint8_t *payload, size_t len, uint8_t *out)
{
	bool v4 = roce_gid_is_ipv4(a->dst_gid);
	size_t ihl = v4 ? 20 : 40, ulen = 8 + len, hl = 14 + ihl + 8;
	uint8_t *ip = out + 14, *udp = ip + ihl;

	memset(out, 0, hl);
	memcpy(out, a->dst_mac, 6);
	be16(out + 12, v4 ? 0x0800 : 0x86dd);
	if (v4) {
		ip[0] = 0x45;
		be16(ip + 2, ulen + 20);
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, a->src_gid + 12, 4);
		memcpy(ip + 16, a->dst_gid + 12, 4);
	} else {
		ip[0] = 0x60;
		be16(ip + 4, ulen);
		ip[6] = 17;
		ip[7] = 64;
		memcpy(ip + 8, a->src_gid, 16);
		memcpy(ip + 24, a->dst_gid, 16);
	}
	be16(udp, a->sport);
	be16(udp + 2, 4791);
	be16(udp + 4, ulen);
	if (len)
		memcpy(udp + 8, payload, len);
	if (v4 && old_id_found(ip, ihl + ulen))
		be16(ip + 10, roce_inet_csum(ip, 20, 0));
	return hl + len;
}

/* Same decode of the transport: fields, and the bytes they build to. */
static void ib_same(const struct roce_ib *x, const uint8_t *xp,
		    const struct roce_ib *y, const uint8_t *yp)
{
	static uint8_t bx[BIG], by[BIG];

	ck_assert(x->op == y->op && x->exts == y->exts);
	ck_assert(t_bth_eq(&x->bth, &y->bth));
	ck_assert_uint_eq(x->payload_len, y->payload_len);
	ck_assert_uint_eq(x->payload_avail, y->payload_avail);
	ck_assert(x->payload - xp == y->payload - yp);
	ck_assert(!memcmp(x->pad_bytes, y->pad_bytes, 3));
	ck_assert_uint_eq(x->icrc, y->icrc);
	int nx = roce_ib_build(x, bx, sizeof(bx));
	ck_assert_int_eq(nx, roce_ib_build(y, by, sizeof(by)));
	ck_assert(nx > 0 && !memcmp(bx, by, (size_t)nx));
}

/* The frame fields a socket hides, the same in both. */
static void hidden_same(const struct roce_frame *x, const struct roce_frame *y)
{
	ck_assert_uint_eq(x->ip_ver, y->ip_ver);
	ck_assert(!memcmp(x->src_gid, y->src_gid, 16));
	ck_assert(!memcmp(x->dst_gid, y->dst_gid, 16));
	ck_assert_uint_eq(x->sport, y->sport);
	ck_assert_uint_eq(x->dport, y->dport);
	ck_assert_uint_eq(x->udp_len, y->udp_len);
	ck_assert_uint_eq(x->ip_id, y->ip_id);
	ck_assert_uint_eq(x->ip_frag, y->ip_frag);
	ck_assert_uint_eq(x->ip_csum, y->ip_csum);
	ck_assert_uint_eq(x->ttl, y->ttl);
	ck_assert_uint_eq(x->tos, y->tos);
	ck_assert_uint_eq(x->flow_label, y->flow_label);
	ck_assert_uint_eq(x->udp_csum, y->udp_csum);
	ck_assert_uint_eq(x->wire_len, y->wire_len);
	ck_assert(!x->truncated && !y->truncated);
	ck_assert(!memcmp(x->eth_dst, y->eth_dst, 6));
	ck_assert(!memcmp(x->eth_src, y->eth_src, 6));
	size_t hl = (x->ip_ver == 4 ? 20 : 40) + 8;
	ck_assert(!memcmp(x->ip_hdr, y->ip_hdr, hl));
}

struct outcome {
	int rc;
	bool icrc_ok;
};

/*
 * Parses a payload as a datagram and checks it against the reference:
 * the same return and reason as roce_frame_parse gives for the frame the
 * old wire made; when 0, the same fields, decode, computed ICRC and
 * verdict; its wrap is that frame byte for byte, and roce_frame_parse of
 * the wrap gives what the datagram parse gave. ASan sees an exact-size
 * copy of the payload.
 */
static struct outcome same_as_before(const struct roce_datagram_addr *a,
				     const uint8_t *payload, size_t len)
{
	static uint8_t old[BIG], wrapped[BIG];
	uint8_t *p = payload ? malloc(len ? len : 1) : NULL;
	uint8_t hdr[ROCE_DATAGRAM_HDR_MAX];
	struct roce_frame fo, fd, fw;
	const char *why_o = "", *why_d = "", *why_w = "";

	if (len)
		memcpy(p, payload, len);
	size_t n = old_rebuild(a, payload, len, old);
	int rc_o = roce_frame_parse(ROCE_LINK_ETH, old, n, n, &fo, &why_o);
	int rc = parse_first(a, p, len, hdr, &fd, &why_d);
	ck_assert_int_eq(rc, rc_o);
	ck_assert_str_eq(why_d, why_o);
	ck_assert_int_eq(
	    roce_datagram_wrap(&fd, p, len, wrapped, sizeof(wrapped)), (int)n);
	ck_assert_msg(!memcmp(wrapped, old, n), "wrap differs from before");
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, wrapped, n, n, &fw,
					  &why_w), rc);
	if (rc == 0) {
		hidden_same(&fd, &fo);
		ib_same(&fd.ib, p, &fo.ib, old + n - len);
		ck_assert_uint_eq(fd.icrc_calc, fo.icrc_calc);
		ck_assert(roce_frame_icrc_ok(&fd) == roce_frame_icrc_ok(&fo));
		ck_assert(roce_frame_icrc_ok(&fw) == roce_frame_icrc_ok(&fd));
	}
	struct outcome o = { rc, rc == 0 && roce_frame_icrc_ok(&fd) };
	free(p);
	return o;
}

/* What a receiving socket shows of frame b (parsed as fo). */
static void addr_of(const uint8_t *b, const struct roce_frame *fo,
		    struct roce_datagram_addr *a)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->src_gid, fo->src_gid, 16);
	memcpy(a->dst_gid, fo->dst_gid, 16);
	memcpy(a->dst_mac, b, 6);
	a->sport = fo->sport;
}

static const uint8_t *udp_payload(const struct roce_frame *f)
{
	return f->ip_hdr + (f->ip_ver == 4 ? 20 : 40) + 8;
}

/*
 * A whole frame against its datagram: the datagram parse agrees with
 * roce_frame_parse of the frame on every field a socket shows, on the
 * decode and on the ICRC; the hidden IPv4 ID and DF come back; the wrap
 * is the frame from its Ethertype on (the source MAC is not known).
 * Only for frames a socket could deliver whole: TOS and flow label 0,
 * TTL 64, UDP checksum 0, as the old wire made them too.
 */
static void datagram_is_frame(const uint8_t *b, size_t n)
{
	static uint8_t wrapped[BIG];
	uint8_t hdr[ROCE_DATAGRAM_HDR_MAX];
	struct roce_datagram_addr a;
	struct roce_frame fo, fd;
	const char *why = "";

	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, n, n, &fo, &why),
			 0);
	ck_assert(roce_frame_icrc_ok(&fo));
	addr_of(b, &fo, &a);
	const uint8_t *p = udp_payload(&fo);
	size_t len = fo.udp_len - 8u;
	struct outcome o = same_as_before(&a, p, len);
	ck_assert(o.rc == 0 && o.icrc_ok);
	ck_assert_int_eq(parse_first(&a, p, len, hdr, &fd, &why), 0);
	ck_assert_uint_eq(fd.ip_id, fo.ip_id);
	ck_assert_uint_eq(fd.ip_frag, fo.ip_frag);
	ck_assert_uint_eq(fd.icrc_calc, fo.icrc_calc);
	ib_same(&fd.ib, p, &fo.ib, p);
	ck_assert_int_eq(
	    roce_datagram_wrap(&fd, p, len, wrapped, sizeof(wrapped)), (int)n);
	ck_assert(!memcmp(wrapped + 12, b + 12, n - 12));
	ck_assert(!memcmp(wrapped, b, 6));
	ck_assert(!memcmp(wrapped + 6, (uint8_t[6]){ 0 }, 6));
}

/* Calls fn on each frame of a bundled rxe capture; returns how many. */
static unsigned each_rxe_frame(const char *name, unsigned max,
			       void (*fn)(const uint8_t *, size_t))
{
	char path[512], err[ROCE_PCAP_ERRLEN];
	struct roce_pcap_reader *r;
	struct roce_pcap_rec rec;
	unsigned n = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/rxe/%s.pcap", t_pcap_dir(), name);
	ck_assert_msg(roce_pcap_open(path, &r, err) == 0, "%s", err);
	while (n < max && (rc = roce_pcap_next(r, &rec, err)) == 1) {
		ck_assert_uint_eq(rec.caplen, rec.wire_len);
		fn(rec.data, rec.caplen);
		n++;
	}
	roce_pcap_close(r);
	return n;
}

/* What rxe puts in the fields a socket hides, checked before they are
 * compared: TOS 0, TTL 64, UDP checksum 0, DF, an ID per packet. */
static void rxe_frame(const uint8_t *b, size_t n)
{
	ck_assert_uint_eq(get16(b + 12), 0x0800);
	ck_assert_uint_eq(b[14], 0x45);
	ck_assert_uint_eq(b[15], 0);
	ck_assert_uint_eq(b[22], 64);
	ck_assert_uint_eq(get16(b + 20), 0x4000);
	ck_assert_uint_eq(get16(b + 40), 0);
	datagram_is_frame(b, n);
}

START_TEST(test_rxe_datagrams_parse_as_their_frames)
{
	ck_assert_uint_gt(each_rxe_frame(captures[_i], ~0u, rxe_frame), 0);
}
END_TEST

/* A frame as a socket would deliver it, of opcode i, IPv4 or IPv6. */
static int make(uint8_t *b, size_t cap, struct roce_frame *f, unsigned ipv,
		uint8_t op, uint64_t *rng)
{
	static uint8_t payload[4096];

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)t_rand(rng);
	t_make_frame(f, ipv, op, payload, t_payload_len_for(op, rng), rng);
	f->tos = 0;
	if (ipv == 4) {
		/* rocemu sends ID 0 with DF; rxe numbers them, with DF */
		f->ip_id = t_rand(rng) % 3 ? (uint16_t)t_rand(rng) : 0;
		f->ip_frag = t_rand(rng) % 4 ? ROCE_IPV4_DF : 0;
	}
	return roce_frame_build(f, b, cap);
}

START_TEST(test_built_datagrams_parse_as_their_frames)
{
	static uint8_t b[ROCE_FRAME_MAX];
	uint64_t rng = 7000 + (uint64_t)_i;
	unsigned ipv = _i % 2 ? 6 : 4;
	struct roce_frame f;

	for (unsigned k = 0; k < t_opcode_count(); k++) {
		int n = make(b, sizeof(b), &f, ipv, t_opcode(k), &rng);
		ck_assert_int_gt(n, 0);
		datagram_is_frame(b, (size_t)n);
	}
}
END_TEST

struct tally {
	unsigned flips, malformed, bad_icrc, ok;
	unsigned masked, masked_ok;	/* BTH byte 4: FECN, BECN, resv6 */
};

/* Every bit of a short payload flipped, or of a long one its first 64
 * bytes, its last 8 and a spread between. */
static void flip_bits(const struct roce_datagram_addr *a, uint8_t *p,
		      size_t len, struct tally *t)
{
	for (size_t bit = 0; bit < 8 * len; bit++) {
		size_t byte = bit / 8;
		if (len > 256 && byte >= 64 && byte < len - 8 && bit % 61)
			continue;
		p[byte] ^= (uint8_t)(1u << (bit % 8));
		struct outcome o = same_as_before(a, p, len);
		p[byte] ^= (uint8_t)(1u << (bit % 8));
		bool ok = o.rc == 0 && o.icrc_ok;
		if (byte == 4) {
			t->masked++;
			t->masked_ok += ok;
			continue;
		}
		t->flips++;
		t->malformed += o.rc != 0;
		t->bad_icrc += o.rc == 0 && !o.icrc_ok;
		t->ok += ok;
	}
}

static struct tally corrupt_tally;

static void corrupt_frame(const uint8_t *b, size_t n)
{
	struct roce_datagram_addr a;
	struct roce_frame fo;
	const char *why = "";

	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, n, n, &fo, &why),
			 0);
	addr_of(b, &fo, &a);
	size_t len = fo.udp_len - 8u;
	uint8_t *p = malloc(len);
	memcpy(p, udp_payload(&fo), len);
	flip_bits(&a, p, len, &corrupt_tally);
	free(p);
}

/* A flipped bit is dropped as the old wire dropped it: malformed with
 * the same reason, or a bad ICRC (unless an ID and DF explain it); the
 * BTH bits the ICRC does not cover (A17.3.3) change nothing. */
START_TEST(test_corrupt_datagrams_drop_as_before)
{
	memset(&corrupt_tally, 0, sizeof(corrupt_tally));
	each_rxe_frame(captures[_i], 3, corrupt_frame);
	ck_assert_uint_gt(corrupt_tally.malformed, 0);
	ck_assert_uint_gt(corrupt_tally.bad_icrc, 0);
	ck_assert_uint_lt(corrupt_tally.ok, 1 + corrupt_tally.flips / 1000);
	ck_assert_uint_gt(corrupt_tally.masked, 0);
	ck_assert_uint_eq(corrupt_tally.masked_ok, corrupt_tally.masked);
}
END_TEST

START_TEST(test_corrupt_built_datagrams_drop_as_before)
{
	static uint8_t b[ROCE_FRAME_MAX];
	uint64_t rng = 9100 + (uint64_t)_i;
	struct roce_frame f;

	memset(&corrupt_tally, 0, sizeof(corrupt_tally));
	for (unsigned k = 0; k < t_opcode_count(); k += 5) {
		int n = make(b, sizeof(b), &f, _i ? 6 : 4, t_opcode(k), &rng);
		corrupt_frame(b, (size_t)n);
	}
	ck_assert_uint_gt(corrupt_tally.malformed, 0);
	ck_assert_uint_gt(corrupt_tally.bad_icrc, 0);
}
END_TEST

/* Every length from empty to past an RDMA WRITE's RETH: short ones are
 * malformed, as before, with the same reason. */
START_TEST(test_short_datagrams_as_before)
{
	static uint8_t b[ROCE_FRAME_MAX];
	uint64_t rng = 9300;
	struct roce_datagram_addr a;
	struct roce_frame f, fo;
	const char *why = "";
	int n = make(b, sizeof(b), &f, _i ? 6 : 4, 0x06, &rng);

	ck_assert_int_eq(
	    roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n, (size_t)n, &fo, &why),
	    0);
	addr_of(b, &fo, &a);
	for (size_t len = 0; len <= 12 + 16 + 4 + 8; len++) {
		struct outcome o = same_as_before(&a, udp_payload(&fo), len);
		if (len < 12 + 4)
			ck_assert_int_eq(o.rc, -EBADMSG);
	}
	same_as_before(&a, NULL, 0);
}
END_TEST

/* A socket of one family reporting a sender of the other: the header is
 * the receiver's family, the sender's GID as it can hold it. */
START_TEST(test_mixed_families_as_before)
{
	static uint8_t b[ROCE_FRAME_MAX];
	uint64_t rng = 9400;
	struct roce_datagram_addr a;
	struct roce_frame f, fo;
	const char *why = "";
	int n = make(b, sizeof(b), &f, _i ? 6 : 4, 0x04, &rng);

	ck_assert_int_eq(
	    roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n, (size_t)n, &fo, &why),
	    0);
	addr_of(b, &fo, &a);
	if (_i) /* an IPv4-mapped sender to an IPv6 socket */
		roce_gid_from_ipv4(a.src_gid, (const uint8_t[4]){10, 0, 0, 9});
	else /* an IPv6 sender to an IPv4 socket: its last 4 bytes */
		memset(a.src_gid, 0xfd, 12);
	struct outcome o =
	    same_as_before(&a, udp_payload(&fo), fo.udp_len - 8u);
	ck_assert_int_eq(o.rc, 0);
}
END_TEST

/* A SEND Only whose UDP payload is len bytes: ICRC included, no pad. */
static int make_long(uint8_t *b, size_t cap, unsigned ipv, size_t len)
{
	static uint8_t payload[BIG];
	uint64_t rng = 9500;
	struct roce_frame f;

	t_make_frame(&f, ipv, 0x04, payload, (uint32_t)(len - 12 - 4), &rng);
	f.tos = 0;
	f.ib.bth.pad = 0;
	return roce_frame_build(&f, b, cap);
}

/* Up to what the IP and UDP length fields hold, as before; one byte more
 * cannot have come in one datagram and is malformed, never wrapped. */
START_TEST(test_datagram_length_limits)
{
	static uint8_t b[BIG];
	unsigned ipv = _i ? 6 : 4;
	size_t max = _i ? ROCE_DATAGRAM_MAX_IPV6 : ROCE_DATAGRAM_MAX_IPV4;
	uint8_t hdr[ROCE_DATAGRAM_HDR_MAX];
	struct roce_datagram_addr a;
	struct roce_frame fo, fd;
	const char *why = "";
	int n = make_long(b, sizeof(b) - 1, ipv, max);

	ck_assert_int_gt(n, 0);
	datagram_is_frame(b, (size_t)n);
	/* the limit is where the frame's own length field is full */
	ck_assert_uint_eq(get16(b + 14 + (ipv == 4 ? 2 : 4)), 0xffff);
	roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n, (size_t)n, &fo, &why);
	addr_of(b, &fo, &a);
	uint8_t *p = (uint8_t *)udp_payload(&fo);
	ck_assert_int_eq(parse_first(&a, p, max + 1, hdr, &fd, &why),
			 -EBADMSG);
	ck_assert(strlen(why) > 0);
	ck_assert(fd.ip_hdr == NULL && fd.udp_len == 0);
	ck_assert_int_eq(roce_datagram_wrap(&fd, p, max + 1, b, sizeof(b)),
			 -EINVAL);
}
END_TEST

/* The wrap refuses a frame it cannot write and a buffer too small. */
START_TEST(test_datagram_wrap_refuses)
{
	static uint8_t b[ROCE_FRAME_MAX], out[ROCE_FRAME_MAX];
	uint8_t hdr[ROCE_DATAGRAM_HDR_MAX];
	uint64_t rng = 9600;
	struct roce_datagram_addr a;
	struct roce_frame f, fo, fd;
	const char *why = "";
	int n = make(b, sizeof(b), &f, 4, 0x04, &rng);

	roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n, (size_t)n, &fo, &why);
	addr_of(b, &fo, &a);
	const uint8_t *p = udp_payload(&fo);
	size_t len = fo.udp_len - 8u;
	ck_assert_int_eq(parse_first(&a, p, len, hdr, &fd, &why), 0);
	memset(out, 0xa5, sizeof(out));
	ck_assert_int_eq(roce_datagram_wrap(&fd, p, len, out, (size_t)n - 1),
			 -ENOSPC);
	ck_assert_int_eq(roce_datagram_wrap(&fd, p, len - 1, out, sizeof(out)),
			 -EINVAL);
	struct roce_frame g = fd;
	g.nvlan = 1;
	ck_assert_int_eq(roce_datagram_wrap(&g, p, len, out, sizeof(out)),
			 -EINVAL);
	g = fd;
	g.ip_ver = 5;
	ck_assert_int_eq(roce_datagram_wrap(&g, p, len, out, sizeof(out)),
			 -EINVAL);
	ck_assert_uint_eq(out[0], 0xa5);
	ck_assert_uint_eq(out[sizeof(out) - 1], 0xa5);
	/* in place: the payload where the frame will hold it, or where
	 * the headers go (received with no room left in front) */
	for (size_t at = 0; at <= (size_t)n - len; at += (size_t)n - len) {
		memcpy(out + at, p, len);
		ck_assert_int_eq(roce_datagram_wrap(&fd, out + at, len, out,
						    sizeof(out)), n);
		ck_assert(!memcmp(out + 12, b + 12, (size_t)n - 12));
	}
}
END_TEST

/* Frames with VLAN tags and IPv4 options, which find_udp must step. */
static int make_dressed(uint8_t *b, struct roce_frame *f, unsigned k,
			uint64_t *rng)
{
	static const uint8_t opts[8] = { 0x94, 4, 0, 0, 1, 1, 1, 0 };
	int n = make(b, ROCE_FRAME_MAX, f, k % 2 ? 6 : 4,
		     t_opcode(k % t_opcode_count()), rng);

	if (k % 3 == 0)
		return n;
	f->nvlan = (uint8_t)(k % 3);
	f->vlan_tpid[0] = f->nvlan == 2 ? 0x88a8 : 0x8100;
	f->vlan_tpid[1] = 0x8100;
	f->vlan_tci[0] = (uint16_t)k;
	f->vlan_tci[1] = 7;
	if (f->ip_ver == 4 && k % 4 == 1) {
		f->ip_optlen = sizeof(opts);
		f->ip_opts = opts;
	}
	return roce_frame_build(f, b, ROCE_FRAME_MAX);
}

/* find_udp finds what roce_frame_parse finds, from the headers alone. */
START_TEST(test_find_udp_agrees_with_parse)
{
	static uint8_t b[ROCE_FRAME_MAX];
	uint64_t rng = 9700;
	struct roce_frame f, fo;
	struct roce_frame_udp u;
	const char *why = "";

	for (unsigned k = 0; k < 3 * t_opcode_count(); k++) {
		int n = make_dressed(b, &f, k, &rng);
		ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n,
						  (size_t)n, &fo, &why), 0);
		ck_assert_int_eq(roce_frame_find_udp(b, (size_t)n, &u), 0);
		ck_assert_uint_eq(u.ip_ver, fo.ip_ver);
		ck_assert(!memcmp(u.src_gid, fo.src_gid, 16));
		ck_assert(!memcmp(u.dst_gid, fo.dst_gid, 16));
		ck_assert_uint_eq(u.sport, fo.sport);
		ck_assert_uint_eq(u.tos, fo.tos);
		ck_assert(b + u.ip_off == fo.ip_hdr);
		ck_assert_uint_eq(u.payload_len, fo.udp_len - 8u);
		ck_assert(b + roce_frame_udp_payload_off(&u) ==
			  fo.ib.payload - fo.ib.op->hdr_len);
		/* link padding after the datagram is not part of it */
		ck_assert_int_eq(roce_frame_find_udp(b, (size_t)n + 6, &u), 0);
		ck_assert_uint_eq(u.payload_len, fo.udp_len - 8u);
	}
}
END_TEST

/* Frames find_udp must refuse, each with u and the frame untouched. */
static void refused(uint8_t *b, size_t n, int want)
{
	struct roce_frame_udp u, before;
	uint8_t *copy = malloc(n ? n : 1);

	memset(&u, 0x5a, sizeof(u));
	before = u;
	memcpy(copy, b, n);
	ck_assert_int_eq(roce_frame_find_udp(copy, n, &u), want);
	ck_assert(!memcmp(&u, &before, sizeof(u)));
	ck_assert_int_eq(roce_frame_set_sport(copy, n, 1234), want);
	ck_assert(!memcmp(copy, b, n));
	free(copy);
}

START_TEST(test_find_udp_refuses)
{
	static uint8_t b[ROCE_FRAME_MAX];
	uint64_t rng = 9800;
	struct roce_frame f;
	int n = make(b, sizeof(b), &f, _i ? 6 : 4, 0x04, &rng);
	size_t ip = 14, udp = ip + (_i ? 40 : 20);

	/* every cut: never found, never read past the end */
	for (size_t cut = 0; cut < (size_t)n; cut++)
		refused(b, cut, cut < udp + 8 ? -ENOMSG : -EBADMSG);
	b[12] = 0x08, b[13] = 0x06; /* ARP */
	refused(b, (size_t)n, -ENOMSG);
	n = make(b, sizeof(b), &f, _i ? 6 : 4, 0x04, &rng);
	b[udp + 3]++; /* to port 4792 */
	refused(b, (size_t)n, -ENOMSG);
	b[udp + 3]--;
	b[udp + 5]++; /* UDP length one more than IP's */
	refused(b, (size_t)n, -EBADMSG);
	b[udp + 5]--;
	b[ip + (_i ? 6 : 9)] = 6; /* TCP */
	refused(b, (size_t)n, -ENOMSG);
	if (_i)
		return;
	b[ip + 9] = 17;
	b[ip + 6] = 0x20; /* more fragments */
	refused(b, (size_t)n, -ENOMSG);
	b[ip + 6] = 0;
	b[ip] = 0x44; /* IHL below 20 bytes */
	refused(b, (size_t)n, -ENOMSG);
}
END_TEST

/* A datagram cut with its lengths made to agree: found only once it can
 * hold a BTH and an ICRC, so a port change never writes into its UDP
 * header. */
START_TEST(test_find_udp_needs_bth_and_icrc)
{
	static uint8_t b[ROCE_FRAME_MAX];
	uint64_t rng = 9850;
	struct roce_frame f;
	struct roce_frame_udp u;
	size_t ip = 14, ihl = _i ? 40 : 20, udp = ip + ihl;

	make(b, sizeof(b), &f, _i ? 6 : 4, 0x04, &rng);
	for (size_t ulen = 8; ulen <= 8 + 12 + 4; ulen++) {
		be16(b + ip + (_i ? 4 : 2), _i ? ulen : ihl + ulen);
		be16(b + udp + 4, ulen);
		if (ulen < 8 + 12 + 4)
			refused(b, udp + ulen, -EBADMSG);
		else
			ck_assert_int_eq(roce_frame_find_udp(b, udp + ulen, &u),
					 0);
	}
}
END_TEST

/* A sender's transport the receiver refuses, under a good ICRC: the
 * capture still shows the ID and DF it was sent with. */
START_TEST(test_malformed_under_good_icrc_as_before)
{
	static uint8_t b[ROCE_FRAME_MAX];
	uint8_t undefined = 0;

	while (roce_opcode(undefined))
		undefined++;
	/* BTH byte and value: an opcode the IBTA leaves undefined; TVer 1;
	 * a SEND Only turned into an RDMA WRITE First (no whole MTU) */
	const uint8_t breaks[][2] = { { 0, undefined }, { 1, 0x01 },
				      { 0, 0x06 } };
	uint64_t rng = 9870;
	struct roce_datagram_addr a;
	struct roce_frame f, fo;
	const char *why = "";

	for (size_t k = 0; k < 3; k++) {
		int n = make(b, sizeof(b), &f, 4, 0x04, &rng);
		uint8_t *ipb = b + 14, *bth = ipb + 28;
		size_t iplen = (size_t)n - 14;
		uint32_t icrc;
		if (breaks[k][0] == 0)
			bth[0] = breaks[k][1];
		else
			bth[1] |= breaks[k][1];
		roce_icrc_calc(ipb, iplen, &icrc);
		be16(b + n - 4, icrc >> 16);
		be16(b + n - 2, icrc & 0xffff);
		ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n,
						  (size_t)n, &fo, &why),
				 -EBADMSG);
		addr_of(b, &fo, &a);
		struct outcome o = same_as_before(&a, bth, iplen - 28);
		ck_assert_int_eq(o.rc, -EBADMSG);
		uint8_t out[ROCE_FRAME_MAX], hdr[ROCE_DATAGRAM_HDR_MAX];
		struct roce_frame fd;
		parse_first(&a, bth, iplen - 28, hdr, &fd, &why);
		ck_assert_int_eq(roce_datagram_wrap(&fd, bth, iplen - 28, out,
						    sizeof(out)), n);
		ck_assert(!memcmp(out + 12, b + 12, (size_t)n - 12));
	}
}
END_TEST

/* A new source port: the frame is what the builder makes with that port,
 * UDP checksum and all, and parses with a good ICRC. */
START_TEST(test_set_sport_is_as_built)
{
	static uint8_t b[ROCE_FRAME_MAX], e[ROCE_FRAME_MAX];
	uint64_t rng = 9900 + (uint64_t)_i;
	struct roce_frame f, g;
	const char *why = "";

	for (unsigned k = 0; k < 3 * t_opcode_count(); k++) {
		int n = make_dressed(b, &f, k, &rng);
		f.udp_csum = (uint16_t)(k % 2);
		ck_assert_int_eq(roce_frame_build(&f, b, sizeof(b)), n);
		uint16_t port = (uint16_t)t_rand(&rng);
		f.sport = port;
		ck_assert_int_eq(roce_frame_build(&f, e, sizeof(e)), n);
		ck_assert_int_eq(roce_frame_set_sport(b, (size_t)n, port), 0);
		ck_assert_msg(!memcmp(b, e, (size_t)n), "opcode 0x%02x",
			      f.ib.bth.opcode);
		ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n,
						  (size_t)n, &g, &why), 0);
		ck_assert(roce_frame_icrc_ok(&g));
		ck_assert_uint_eq(g.sport, port);
	}
}
END_TEST

/* A frame that left with a bad ICRC still has one, by the same bits: a
 * port change must not make a corrupt packet good. */
START_TEST(test_set_sport_keeps_a_bad_icrc_bad)
{
	static uint8_t b[ROCE_FRAME_MAX];
	uint64_t rng = 9950;
	struct roce_frame f, g;
	const char *why = "";

	for (unsigned k = 0; k < t_opcode_count(); k++) {
		int n =
		    make(b, sizeof(b), &f, k % 2 ? 6 : 4, t_opcode(k), &rng);
		uint32_t err = (uint32_t)t_rand(&rng) | 1;
		for (int i = 0; i < 4; i++)
			b[n - 4 + i] ^= (uint8_t)(err >> (24 - 8 * i));
		ck_assert_int_eq(roce_frame_set_sport(b, (size_t)n,
						      (uint16_t)(k * 977)), 0);
		ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n,
						  (size_t)n, &g, &why), 0);
		ck_assert_uint_eq(g.ib.icrc ^ g.icrc_calc, err);
	}
}
END_TEST

Suite *datagram_suite(void)
{
	Suite *s = suite_create("datagram");
	TCase *tc = tcase_create("receive");
	TCase *tx = tcase_create("send");

	tcase_set_timeout(tc, 120);
	tcase_set_timeout(tx, 60);
	tcase_add_loop_test(tc, test_rxe_datagrams_parse_as_their_frames, 0,
			    NCAP);
	tcase_add_loop_test(tc, test_built_datagrams_parse_as_their_frames, 0,
			    8);
	tcase_add_loop_test(tc, test_corrupt_datagrams_drop_as_before, 0, NCAP);
	tcase_add_loop_test(tc, test_corrupt_built_datagrams_drop_as_before, 0,
			    2);
	tcase_add_loop_test(tc, test_short_datagrams_as_before, 0, 2);
	tcase_add_loop_test(tc, test_mixed_families_as_before, 0, 2);
	tcase_add_loop_test(tc, test_datagram_length_limits, 0, 2);
	tcase_add_test(tc, test_malformed_under_good_icrc_as_before);
	tcase_add_test(tc, test_datagram_wrap_refuses);
	suite_add_tcase(s, tc);
	tcase_add_test(tx, test_find_udp_agrees_with_parse);
	tcase_add_loop_test(tx, test_find_udp_refuses, 0, 2);
	tcase_add_loop_test(tx, test_find_udp_needs_bth_and_icrc, 0, 2);
	tcase_add_loop_test(tx, test_set_sport_is_as_built, 0, 2);
	tcase_add_test(tx, test_set_sport_keeps_a_bad_icrc_bad);
	suite_add_tcase(s, tx);
	return s;
}
