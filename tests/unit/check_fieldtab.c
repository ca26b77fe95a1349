/* SPDX-License-Identifier: MIT */
/*
 * dump -v and dump --json name the same header fields alike: every field
 * the JSON object has appears under the same name, with the same value,
 * in the tree, and every named field of the tree is in the JSON.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"

enum { MAXF = 96, KEYLEN = 48 };

struct field {
	char key[KEYLEN]; /* "psn"; "reth.va" in a header object */
	uint64_t val;
};

struct fields {
	struct field f[MAXF];
	unsigned n;
};

/*
 * JSON members that describe the frame rather than name a header field
 * (the tree shows them as prose: "frame 7: 81 bytes", "IPv4: a > b",
 * "(RC_SEND_ONLY)", "AETH: NAK ...", "ICRC: ... ok"), and the link layer,
 * whose VLAN tags the JSON nests in an array.
 */
static const char *const framewide[] = {
	"frame", "time", "len", "caplen", "status", "error", "eth_src",
	"eth_dst", "vlan", "ip_version", "src", "dst", "opcode_name",
	"transport", "payload_len", "icrc", "icrc_calc", "icrc_ok",
	"aeth.type", "aeth.value",
	/* a MAD's names and addresses: prose in the tree */
	"mad.attr_name", "mad.error", "cm.reason_name", "cm.status_name",
	"cm_path.local_gid", "cm_path.remote_gid", "ip_cm.src", "ip_cm.dst",
};

static bool is_framewide(const char *k)
{
	for (size_t i = 0; i < sizeof(framewide) / sizeof(framewide[0]); i++)
		if (!strcmp(k, framewide[i]))
			return true;
	return false;
}

static void add(struct fields *fs, const char *prefix, const char *k,
		size_t klen, uint64_t v)
{
	ck_assert_uint_lt(fs->n, MAXF);
	struct field *f = &fs->f[fs->n++];
	int n = snprintf(f->key, KEYLEN, "%s%s%.*s", prefix, *prefix ? "." : "",
			 (int)klen, k);
	ck_assert(n > 0 && n < KEYLEN);
	for (char *c = f->key; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	f->val = v;
}

static const struct field *find(const struct fields *fs, const char *k)
{
	for (unsigned i = 0; i < fs->n; i++)
		if (!strcmp(fs->f[i].key, k))
			return &fs->f[i];
	return NULL;
}

/* A JSON value: a number, true/false, a "0x..." string (else 0), or a
 * nested object or array, skipped. Returns past it. */
static const char *json_value(const char *p, uint64_t *v, bool *scalar)
{
	*scalar = true;
	*v = 0;
	if (*p == '{' || *p == '[') {
		int depth = 0;
		*scalar = false;
		do {
			if (*p == '{' || *p == '[')
				depth++;
			else if (*p == '}' || *p == ']')
				depth--;
			p++;
		} while (depth && *p);
		return p;
	}
	if (*p == '"') {
		const char *e = strchr(p + 1, '"');
		ck_assert_ptr_nonnull(e);
		if (!strncmp(p + 1, "0x", 2))
			*v = strtoull(p + 1, NULL, 16);
		return e + 1;
	}
	if (!strncmp(p, "true", 4)) {
		*v = 1;
		return p + 4;
	}
	if (!strncmp(p, "false", 5))
		return p + 5;
	char *e;
	*v = strtoull(p, &e, 10);
	while (*e && *e != ',' && *e != '}')
		e++;		/* the decimals of "time" */
	return e;
}

/* The members of one object at p ('{'); a nested object's members are
 * prefixed with its name. Returns past the closing brace. */
static const char *json_object(const char *p, const char *prefix,
			       struct fields *fs)
{
	ck_assert_int_eq(*p, '{');
	p++;
	while (*p && *p != '}') {
		if (*p == ',')
			p++;
		ck_assert_int_eq(*p, '"');
		const char *k = p + 1, *ke = strchr(k, '"');
		ck_assert_ptr_nonnull(ke);
		p = ke + 1;
		ck_assert_int_eq(*p, ':');
		p++;
		if (*p == '{' && !*prefix) {
			char name[KEYLEN];
			snprintf(name, sizeof(name), "%.*s", (int)(ke - k), k);
			p = json_object(p, name, fs);
			continue;
		}
		uint64_t v;
		bool scalar;
		p = json_value(p, &v, &scalar);
		char full[2 * KEYLEN];
		snprintf(full, sizeof(full), "%s%s%.*s", prefix,
			 *prefix ? "." : "", (int)(ke - k), k);
		if (scalar && !is_framewide(full))
			add(fs, prefix, k, (size_t)(ke - k), v);
	}
	return p + 1;
}

/* "k v k v ..." pairs of a tree line; "(...)" glosses are skipped. */
static void tree_pairs(const char *s, const char *e, const char *prefix,
		       struct fields *fs)
{
	const char *tok[32];
	size_t len[32];
	unsigned n = 0;

	while (s < e) {
		while (s < e && *s == ' ')
			s++;
		const char *t = s;
		while (s < e && *s != ' ')
			s++;
		if (s > t && *t != '(') {
			ck_assert_uint_lt(n, 32);
			tok[n] = t;
			len[n++] = (size_t)(s - t);
		}
	}
	ck_assert_msg(n % 2 == 0, "odd tree line: %.*s", (int)(e - s), s);
	for (unsigned i = 0; i < n; i += 2) {
		char *end;
		uint64_t v = strtoull(tok[i + 1], &end, 0);
		ck_assert_msg(end == tok[i + 1] + len[i + 1],
			      "field %.*s: value %.*s is not a number",
			      (int)len[i], tok[i], (int)len[i + 1], tok[i + 1]);
		add(fs, prefix, tok[i], len[i], v);
	}
}

/*
 * The named fields of a tree: "  HDR: ..." opens a header, "   k v ..."
 * lines hold its fields. IP, UDP and BTH fields are flat as in the JSON;
 * an extension header's are prefixed with its name. The UDP and BTH header
 * lines carry fields too; the others carry prose (addresses, AETH type).
 */
static void tree_fields(const char *text, struct fields *fs)
{
	char hdr[KEYLEN] = "";
	bool flat = false;

	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		ck_assert_ptr_nonnull(e);
		if (!strncmp(l, "   ", 3)) {
			tree_pairs(l, e, flat ? "" : hdr, fs);
		} else if (!strncmp(l, "  ", 2)) {
			const char *c = memchr(l, ':', (size_t)(e - l));
			ck_assert_ptr_nonnull(c);
			snprintf(hdr, sizeof(hdr), "%.*s", (int)(c - l - 2),
				 l + 2);
			flat = !strcmp(hdr, "IPv4") || !strcmp(hdr, "IPv6") ||
			       !strcmp(hdr, "UDP") || !strcmp(hdr, "BTH");
			if (!strcmp(hdr, "UDP") || !strcmp(hdr, "BTH"))
				tree_pairs(c + 1, e, "", fs);
		}
		l = e + 1;
	}
}

static void same_fields(const struct fields *a, const char *an,
			const struct fields *b, const char *bn,
			const char *text, const char *json)
{
	for (unsigned i = 0; i < a->n; i++) {
		const struct field *o = find(b, a->f[i].key);
		ck_assert_msg(o, "%s has field '%s', %s has not:\n%s%s", an,
			      a->f[i].key, bn, text, json);
		ck_assert_msg(o->val == a->f[i].val,
			      "field '%s': %s says %llu, %s %llu", a->f[i].key,
			      an, (unsigned long long)a->f[i].val, bn,
			      (unsigned long long)o->val);
	}
}

static void check_frame(const struct roce_frame *f, uint32_t caplen)
{
	static char text[8192], json[8192];
	struct roce_dissect_in in = { .frame_no = 1, .caplen = caplen };
	struct fields tf = { 0 }, jf = { 0 };
	struct roce_sb sb;

	roce_sb_init(&sb, text, sizeof(text));
	roce_fmt_tree(&sb, &in, f);
	ck_assert(!sb.overflow);
	text[sb.len] = 0;
	roce_sb_init(&sb, json, sizeof(json));
	roce_fmt_json(&sb, &in, f);
	ck_assert(!sb.overflow);
	json[sb.len] = 0;

	tree_fields(text, &tf);
	json_object(json, "", &jf);
	ck_assert_uint_ge(jf.n, 20);	/* IP, UDP and BTH at least */
	same_fields(&jf, "JSON", &tf, "text", text, json);
	same_fields(&tf, "text", &jf, "JSON", text, json);
}

/* Every opcode the IBTA defines, over IPv4 (_i even) and IPv6 (odd). */
START_TEST(test_text_and_json_name_the_same_fields)
{
	static uint8_t payload[4096];
	uint8_t op = t_opcode((unsigned)_i / 2);
	unsigned ver = _i % 2 ? 6 : 4;
	uint64_t rng = 0x5eed + (uint64_t)_i;
	uint8_t b[ROCE_FRAME_MAX];
	struct roce_frame f, g;
	const char *why = "";

	t_make_frame(&f, ver, op, payload, t_payload_len_for(op, &rng) % 1024,
		     &rng);
	if (ver == 6)
		f.flow_label = 0xabcde;
	int n = roce_frame_build(&f, b, sizeof(b));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n,
					  (size_t)n, &g, &why), 0);
	check_frame(&g, (uint32_t)n);
}
END_TEST

/*
 * A MAD on QP1 of every CM attribute (_i 0..10: REQ..APR), one that does
 * not decode (11: class version 1) and one of another class (12): random
 * bytes under a valid header, so that every field has a value of its own.
 */
START_TEST(test_cm_text_and_json_name_the_same_fields)
{
	static const uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };
	uint8_t mad[ROCE_MAD_LEN], b[ROCE_FRAME_MAX];
	uint64_t rng = 0xc0ffee + (uint64_t)_i;
	struct roce_frame f, g;
	struct roce_cm_msg m;
	const char *why = "";
	unsigned tries = 0;

	do {
		for (unsigned i = 0; i < sizeof(mad); i++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			mad[i] = (uint8_t)(rng >> 56);
		}
		mad[0] = ROCE_MAD_BASE_VERSION;
		mad[1] = _i == 12 ? 0x01 : ROCE_MGMT_CLASS_CM;
		mad[2] = _i == 11 ? 1 : ROCE_CM_CLASS_VERSION;
		mad[3] = ROCE_MAD_METHOD_SEND;
		mad[16] = 0;
		mad[17] = (uint8_t)(ROCE_CM_ATTR_REQ + (_i > 10 ? 0 : _i));
		if (_i == 0) {	/* a REQ of the IP CM service */
			const struct roce_cm_ip_hdr ip = {
				.ip_version = 4, .src_port = 0x1234,
				.src.v4 = { 10, 0, 0, 1 },
				.dst.v4 = { 10, 0, 0, 2 } };
			ck_assert_int_eq(roce_cm_ip_hdr_build(&ip, mad + 24 + 140,
							      36), 36);
		}
		ck_assert_uint_lt(tries++, 1000);
	} while (_i <= 10 && roce_cm_decode(mad, sizeof(mad), &m));

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, a4);
	roce_gid_from_ipv4(f.dst_gid, b4);
	f.sport = 0xc001;
	f.ib.bth.opcode = ROCE_OP_UD_SEND_ONLY;
	f.ib.bth.dqpn = ROCE_CM_QPN;
	f.ib.bth.psn = 7;
	f.ib.deth = (struct roce_deth){ ROCE_CM_QP1_QKEY, 0, ROCE_CM_QPN };
	f.ib.payload = mad;
	f.ib.payload_len = sizeof(mad);
	int n = roce_frame_build(&f, b, sizeof(b));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, b, (size_t)n,
					  (size_t)n, &g, &why), 0);
	struct roce_mad_view v;
	ck_assert_int_eq(roce_frame_mad(&g, &v), 0);
	ck_assert_int_eq(v.kind, _i == 12 ? ROCE_MAD_OTHER
				 : _i == 11 ? ROCE_MAD_CM_BAD : ROCE_MAD_CM);
	if (_i == 0)
		ck_assert(v.has_ip);
	check_frame(&g, (uint32_t)n);
}
END_TEST

Suite *fieldtab_suite(void)
{
	Suite *s = suite_create("fieldtab");
	TCase *tc = tcase_create("fieldtab");

	tcase_add_loop_test(tc, test_text_and_json_name_the_same_fields, 0,
			    (int)(2 * t_opcode_count()));
	tcase_add_loop_test(tc, test_cm_text_and_json_name_the_same_fields, 0,
			    13);
	suite_add_tcase(s, tc);
	return s;
}
