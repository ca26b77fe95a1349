/* SPDX-License-Identifier: MIT */
/* An expect step against a received packet: each field the step names, "any" for none. */
#include <stdlib.h>
#include <string.h>

#include "rocemu/aeth.h"
#include "rocemu/opcode.h"
#include "conform.h"

/* The keys an expect step may use besides the timing ones. */
static const char *const match_keys[] = {
	"psn", "qpn", "ackreq", "se", "pkey", "pad", "va", "rkey", "dmalen",
	"len", "fill", "imm", "inv", "swap", "add", "compare", "qkey", "srcqp",
	"aeth", "rnr_timer", "msn", "orig", "feth", "within", "after", "timer", NULL,
};

static const char *op_name(uint8_t op)
{
	const struct roce_opcode_info *i = roce_opcode(op);
	return i && i->name ? i->name : "UNKNOWN";
}

static void syndrome_str(uint8_t syn, char *out, size_t len)
{
	unsigned type = roce_aeth_type(syn), v = roce_aeth_value(syn);

	if (type == ROCE_AETH_ACK)
		snprintf(out, len, "ack");
	else if (type == ROCE_AETH_RNR_NAK)
		snprintf(out, len, "rnr rnr_timer=%u", v);
	else if (type == ROCE_AETH_NAK)
		snprintf(out, len, "nak %s", roce_nak_code_name(v));
	else
		snprintf(out, len, "reserved 0x%02x", syn);
}

void cf_packet_describe(const struct cf_packet *p, char *out, size_t len)
{
	const struct roce_ib *ib = &p->f.ib;
	size_t n;

	if (p->parse_rc) {
		snprintf(out, len, "a datagram of %zu bytes that is no RoCEv2 packet (%s)",
			 p->len, p->why ? p->why : "?");
		return;
	}
	if (ib->bth.dqpn == 1) {	/* QP1: what the CM message says */
		cf_cm_describe(p, out, len);
		return;
	}
	n = (size_t)snprintf(out, len, "%s psn=%#x qpn=%#x%s", op_name(ib->bth.opcode),
			     ib->bth.psn, ib->bth.dqpn, ib->bth.ackreq ? " ackreq=1" : "");
	uint16_t ex = ib->exts;
	if (n < len && (ex & ROCE_EXT_AETH)) {
		char syn[48];
		syndrome_str(ib->aeth.syndrome, syn, sizeof(syn));
		n += (size_t)snprintf(out + n, len - n, " aeth=%s msn=%u", syn, ib->aeth.msn);
	}
	if (n < len && (ex & ROCE_EXT_FETH))
		n += (size_t)snprintf(out + n, len - n, " feth=%#x", ib->feth);
	if (n < len && (ex & ROCE_EXT_RETH))
		n += (size_t)snprintf(out + n, len - n, " va=%#llx rkey=%#x dmalen=%u",
				      (unsigned long long)ib->reth.va, ib->reth.rkey,
				      ib->reth.len);
	if (n < len && (ex & ROCE_EXT_ATMETH))
		n += (size_t)snprintf(out + n, len - n, " va=%#llx rkey=%#x swap/add=%#llx "
				      "compare=%#llx", (unsigned long long)ib->atmeth.va,
				      ib->atmeth.rkey, (unsigned long long)ib->atmeth.swap_add,
				      (unsigned long long)ib->atmeth.compare);
	if (n < len && (ex & ROCE_EXT_ATMACK))
		n += (size_t)snprintf(out + n, len - n, " orig=%#llx",
				      (unsigned long long)ib->atmack);
	if (n < len && (ex & ROCE_EXT_DETH))
		n += (size_t)snprintf(out + n, len - n, " qkey=%#x srcqp=%#x",
				      ib->deth.qkey, ib->deth.src_qp);
	if (n < len)
		snprintf(out + n, len - n, " len=%u%s", ib->payload_len,
			 p->icrc_ok ? "" : " ICRC-BAD");
}

/* The payload against fill=BYTE, inc or inc:OFF; 1 when equal. */
static int payload_is(const struct roce_ib *ib, const char *fill, char *why,
		      size_t whylen)
{
	unsigned long off = 0, b = 0;
	bool inc = !strncmp(fill, "inc", 3);
	char *end;

	if (inc && fill[3] == ':')
		off = strtoul(fill + 4, &end, 0);
	else if (!inc && ((b = strtoul(fill, &end, 0)) > 0xff || *end))
		return -1;
	for (uint32_t i = 0; i < ib->payload_avail; i++) {
		uint8_t want = inc ? (uint8_t)(off + i) : (uint8_t)b;
		if (ib->payload[i] != want) {
			snprintf(why, whylen, "payload byte %u is %#x, not %#x (fill=%s)", i,
				 ib->payload[i], want, fill);
			return 0;
		}
	}
	return 1;
}

/* The AETH against aeth=WORD (and rnr_timer=N when given). */
static int aeth_is(const struct cf_env *e, const struct cf_step *st,
		   const struct roce_ib *ib, char *why, size_t whylen)
{
	const char *want = cf_arg_get(st->args, st->nargs, "aeth");
	const char *timer = cf_arg_get(st->args, st->nargs, "rnr_timer");
	uint8_t syn = ib->aeth.syndrome;
	unsigned type = roce_aeth_type(syn), v = roce_aeth_value(syn);
	bool ok;
	char have[48];

	syndrome_str(syn, have, sizeof(have));
	if (!strcmp(want, "ack"))
		ok = type == ROCE_AETH_ACK;
	else if (!strcmp(want, "rnr"))
		ok = type == ROCE_AETH_RNR_NAK;
	else if (!strcmp(want, "nak"))
		ok = type == ROCE_AETH_NAK;
	else if (!strncmp(want, "nak_", 4)) {
		static const char *const codes[] = { "nak_seq", "nak_inv_req",
			"nak_rem_access", "nak_rem_op", "nak_inv_rd_req" };
		unsigned c = 0;
		while (c < 5 && strcmp(codes[c], want))
			c++;
		if (c == 5)
			return -1;
		ok = type == ROCE_AETH_NAK && v == c;
	} else
		return -1;
	if (!ok) {
		snprintf(why, whylen, "AETH is %s, not %s", have, want);
		return 0;
	}
	uint64_t t;
	char err[128];
	if (timer && strcmp(timer, "any")) {
		if (cf_eval(e, timer, &t, err, sizeof(err)))
			return -1;
		if (type != ROCE_AETH_RNR_NAK || v != t) {
			snprintf(why, whylen, "AETH is %s, not an RNR NAK with timer %llu",
				 have, (unsigned long long)t);
			return 0;
		}
	}
	return 1;
}

/* The packet's value for a numeric key; false if the packet has none. */
static bool field(const struct roce_ib *ib, const char *k, uint64_t *v)
{
	uint16_t x = ib->exts;
	struct { const char *key; bool has; uint64_t v; } t[] = {
		{ "psn", true, ib->bth.psn }, { "qpn", true, ib->bth.dqpn },
		{ "ackreq", true, ib->bth.ackreq }, { "se", true, ib->bth.se },
		{ "pkey", true, ib->bth.pkey }, { "pad", true, ib->bth.pad },
		{ "len", true, ib->payload_len },
		{ "va", x & (ROCE_EXT_RETH | ROCE_EXT_ATMETH),
		  x & ROCE_EXT_RETH ? ib->reth.va : ib->atmeth.va },
		{ "rkey", x & (ROCE_EXT_RETH | ROCE_EXT_ATMETH),
		  x & ROCE_EXT_RETH ? ib->reth.rkey : ib->atmeth.rkey },
		{ "dmalen", x & ROCE_EXT_RETH, ib->reth.len },
		{ "imm", x & ROCE_EXT_IMMDT, ib->imm },
		{ "inv", x & ROCE_EXT_IETH, ib->ieth },
		{ "swap", x & ROCE_EXT_ATMETH, ib->atmeth.swap_add },
		{ "add", x & ROCE_EXT_ATMETH, ib->atmeth.swap_add },
		{ "compare", x & ROCE_EXT_ATMETH, ib->atmeth.compare },
		{ "qkey", x & ROCE_EXT_DETH, ib->deth.qkey },
		{ "srcqp", x & ROCE_EXT_DETH, ib->deth.src_qp },
		{ "msn", x & ROCE_EXT_AETH, ib->aeth.msn },
		{ "orig", x & ROCE_EXT_ATMACK, ib->atmack },
		{ "feth", x & ROCE_EXT_FETH, ib->feth },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].key, k)) {
			*v = t[i].v;
			return t[i].has;
		}
	return false;
}

static int match_fields(const struct cf_env *e, const struct cf_step *st,
			const struct roce_ib *ib, char *why, size_t whylen)
{
	for (unsigned i = 0; i < st->nargs; i++) {
		const char *k = st->args[i].key, *want = st->args[i].val;
		uint64_t have, w;
		int rc;
		if (!strcmp(want, "any") || !strcmp(k, "within") || !strcmp(k, "after") ||
		    !strcmp(k, "rnr_timer") || !strcmp(k, "timer"))
			continue;
		if (!strcmp(k, "aeth")) {
			if (!(ib->exts & ROCE_EXT_AETH)) {
				snprintf(why, whylen, "no AETH (aeth=%s expected)", want);
				return 0;
			}
			if ((rc = aeth_is(e, st, ib, why, whylen)) != 1)
				return rc;
			continue;
		}
		if (!strcmp(k, "fill")) {
			if ((rc = payload_is(ib, want, why, whylen)) != 1)
				return rc;
			continue;
		}
		if (cf_eval(e, want, &w, why, whylen))
			return -1;
		if (!field(ib, k, &have)) {
			snprintf(why, whylen, "the packet has no %s (%s=%s expected)", k, k, want);
			return 0;
		}
		if (have != w) {
			snprintf(why, whylen, "%s is %#llx, not %#llx (%s)", k,
				 (unsigned long long)have, (unsigned long long)w, want);
			return 0;
		}
	}
	return 1;
}

bool cf_match_key(const char *key)
{
	for (const char *const *k = match_keys; *k; k++)
		if (!strcmp(*k, key))
			return true;
	return false;
}

int cf_packet_match(const struct cf_env *e, const struct cf_step *st,
		    const struct cf_packet *p, char *why, size_t whylen)
{
	for (unsigned i = 0; i < st->nargs; i++) {
		if (!cf_match_key(st->args[i].key)) {
			snprintf(why, whylen, "expect: unknown key '%s'", st->args[i].key);
			return -1;
		}
	}
	if (p->parse_rc) {
		snprintf(why, whylen, "not a RoCEv2 packet: %s", p->why ? p->why : "?");
		return 0;
	}
	if (!p->icrc_ok) {
		snprintf(why, whylen, "its ICRC is wrong (%#x, computed %#x)",
			 p->f.ib.icrc, p->f.icrc_calc);
		return 0;
	}
	const struct roce_ib *ib = &p->f.ib;
	if (strcmp(st->word, "any") && strcmp(st->word, op_name(ib->bth.opcode))) {
		snprintf(why, whylen, "opcode %s, not %s", op_name(ib->bth.opcode), st->word);
		return 0;
	}
	/* Unless the step says otherwise, a packet goes to conform's QP. */
	if (!cf_arg_get(st->args, st->nargs, "qpn") && ib->bth.dqpn != e->my_qpn) {
		snprintf(why, whylen, "destination QP %#x, not conform's %#x", ib->bth.dqpn,
			 e->my_qpn);
		return 0;
	}
	return match_fields(e, st, ib, why, whylen);
}
