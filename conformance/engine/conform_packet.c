/* SPDX-License-Identifier: MIT */
/* A scenario's packet words: expressions, the frame a send step builds, the fields an expect step compares. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/aeth.h"
#include "rocemu/opcode.h"
#include "rocemu/range.h"
#include "conform.h"

enum { PSN_MASK = 0xffffff, DEFAULT_FILL = 0x5a, ROCE_PORT = 4791 };

const struct cf_mr *cf_mr_named(const struct cf_env *e, const char *name,
				size_t n)
{
	for (unsigned i = 0; i < e->nmr; i++)
		if (strlen(e->mrs[i].name) == n && !strncmp(e->mrs[i].name, name, n))
			return &e->mrs[i];
	return NULL;
}

/* NAME.qpn, NAME.myqpn or NAME.psn of the scenario's QP called NAME;
 * -1 if there is none. */
static int qp_value(const struct cf_env *e, const char *name, size_t n,
		    const char *field, size_t fn, uint64_t *v)
{
	for (unsigned i = 0; i < e->nqps; i++) {
		const struct cf_env_qp *q = &e->qps[i];
		if (!*q->name || strlen(q->name) != n || strncmp(q->name, name, n))
			continue;
		if (fn == 3 && !strncmp(field, "qpn", 3))
			*v = q->agent_qpn;
		else if (fn == 5 && !strncmp(field, "myqpn", 5))
			*v = q->my_qpn;
		else if (fn == 3 && !strncmp(field, "psn", 3))
			*v = q->psn;
		else
			return -1;
		return 0;
	}
	return -1;
}

/* The value of NAME[.FIELD]; -1 if there is none. */
static int name_value(const struct cf_env *e, const char *name, size_t n,
		      const char *field, size_t fn, uint64_t *v)
{
#define IS(s, len, lit) ((len) == sizeof(lit) - 1 && !strncmp((s), lit, (len)))
	if (!fn && IS(name, n, "qpn"))
		*v = e->agent_qpn;
	else if (!fn && IS(name, n, "myqpn"))
		*v = e->my_qpn;
	else if (!fn && IS(name, n, "psn"))
		*v = e->psn;
	else if (!fn && IS(name, n, "mtu"))
		*v = e->mtu;
	else if (!fn && IS(name, n, "mw"))
		*v = e->mw_rkey;
	else if (!fn && IS(name, n, "comm"))
		*v = e->comm;
	else if (!fn && IS(name, n, "peercomm"))
		*v = e->peer_comm;
	else if (!fn && IS(name, n, "rtid"))
		*v = e->rtid;
	else if (!fn && IS(name, n, "repsn"))
		*v = e->repsn;
	else if (!fn && IS(name, n, "tid"))
		*v = e->tid;
	else if (fn && qp_value(e, name, n, field, fn, v) == 0)
		;
	else {
		const struct cf_mr *m = cf_mr_named(e, name, n);
		if (!m)
			return -1;
		if (!fn || IS(field, fn, "addr"))
			*v = m->addr;
		else if (IS(field, fn, "rkey"))
			*v = m->rkey;
		else if (IS(field, fn, "lkey"))
			*v = m->lkey;
		else if (IS(field, fn, "size"))
			*v = m->size;
		else if (IS(field, fn, "end")) /* none if the sum wraps */
			return roce_range_end(m->addr, m->size, v) ? 0 : -1;
		else
			return -1;
	}
	return 0;
#undef IS
}

int cf_eval(const struct cf_env *e, const char *expr, uint64_t *v,
	    char *err, size_t errlen)
{
	const char *p = expr;
	char *end;

	if ((*p >= '0' && *p <= '9')) {
		errno = 0;
		*v = strtoull(p, &end, 0);
		p = end;
	} else {
		size_t n = strcspn(p, ".+-");
		const char *field = p[n] == '.' ? p + n + 1 : "";
		size_t fn = *field ? strcspn(field, "+-") : 0;
		if (name_value(e, p, n, field, fn, v)) {
			snprintf(err, errlen, "'%s': no such name (an MR's name, a QP's "
				 "NAME.qpn .myqpn .psn, qpn, myqpn, psn, mtu, mw, comm, "
				 "peercomm, rtid, repsn, tid)",
				 expr);
			return -1;
		}
		p = *field ? field + fn : p + n;
	}
	while (*p == '+' || *p == '-') {
		char sign = *p++;
		errno = 0;
		uint64_t d = strtoull(p, &end, 0);
		if (end == p || errno)
			break;
		*v = sign == '+' ? *v + d : *v - d;
		p = end;
	}
	if (*p) {
		snprintf(err, errlen, "'%s' is not a number or NAME[.FIELD][+N]", expr);
		return -1;
	}
	return 0;
}

/* An opcode by its table name (RC_SEND_ONLY) or number; -1 if none. */
static int opcode_of(const char *word)
{
	char *end;
	unsigned long n = strtoul(word, &end, 0);

	if (!*end && end != word)
		return n <= UINT8_MAX && roce_opcode((uint8_t)n) ? (int)n : -1;
	for (unsigned op = 0; op <= UINT8_MAX; op++) {
		const struct roce_opcode_info *i = roce_opcode((uint8_t)op);
		if (i && i->name && !strcmp(i->name, word))
			return (int)op;
	}
	return -1;
}

/* The keys a send step may use; anything else is a mistake. */
static const char *const build_keys[] = {
	"psn", "qpn", "ackreq", "se", "migreq", "pkey", "pad", "tver", "fecn",
	"becn", "va", "rkey", "dmalen", "len", "fill", "imm", "inv", "swap",
	"add", "compare", "qkey", "srcqp", "aeth", "rnr_timer", "credit",
	"msn", "orig", "icrc", "feth", NULL,
};

static bool known_key(const char *const *keys, const char *k)
{
	for (; *keys; keys++)
		if (!strcmp(*keys, k))
			return true;
	return false;
}

int cf_step_check(const struct cf_step *st, char *err, size_t errlen)
{
	bool expect = st->kind == CF_EXPECT;

	if (!(expect && !strcmp(st->word, "any")) && opcode_of(st->word) < 0) {
		snprintf(err, errlen, "'%s' is not an opcode the table knows (as rocemu dump "
			 "names them: RC_SEND_ONLY, RC_ACK, ...)", st->word);
		return -1;
	}
	for (unsigned i = 0; i < st->nargs; i++) {
		const char *k = st->args[i].key;
		if (expect ? !cf_match_key(k) : !known_key(build_keys, k)) {
			snprintf(err, errlen, "%s takes no key '%s'", expect ? "expect" : "send", k);
			return -1;
		}
	}
	return 0;
}

struct build_ctx {
	const struct cf_env *e;
	const struct cf_step *st;
	char *err;
	size_t errlen;
	int bad;
};

/* The value of key, def when absent; sets c->bad on a bad expression. */
static uint64_t val(struct build_ctx *c, const char *key, uint64_t def)
{
	const char *s = cf_arg_get(c->st->args, c->st->nargs, key);
	uint64_t v = def;

	if (s && !c->bad && cf_eval(c->e, s, &v, c->err, c->errlen))
		c->bad = 1;
	return v;
}

/* An AETH syndrome word: ack, rnr, nak_seq, nak_inv_req, nak_rem_access,
 * nak_rem_op, nak_inv_rd_req; -1 if it is none of them. */
static int syndrome_type(const char *w, unsigned *type, unsigned *code)
{
	static const struct { const char *name; unsigned type, code; } t[] = {
		{ "ack", ROCE_AETH_ACK, 0 },
		{ "rnr", ROCE_AETH_RNR_NAK, 0 },
		{ "nak_seq", ROCE_AETH_NAK, ROCE_NAK_PSN_SEQ },
		{ "nak_inv_req", ROCE_AETH_NAK, ROCE_NAK_INV_REQ },
		{ "nak_rem_access", ROCE_AETH_NAK, ROCE_NAK_REM_ACCESS },
		{ "nak_rem_op", ROCE_AETH_NAK, ROCE_NAK_REM_OP },
		{ "nak_inv_rd_req", ROCE_AETH_NAK, ROCE_NAK_INV_RD_REQ },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(w, t[i].name)) {
			*type = t[i].type;
			*code = t[i].code;
			return 0;
		}
	return -1;
}

/* Payload bytes: fill=BYTE (default 0x5a), fill=inc or inc:OFF (byte i
 * is OFF + i mod 256). -1 for a fill it cannot read. */
static int fill_payload(const char *fill, uint8_t *p, uint32_t len)
{
	char *end;

	if (!fill)
		fill = "0x5a";
	if (!strncmp(fill, "inc", 3)) {
		unsigned long off = 0;
		if (fill[3] == ':')
			off = strtoul(fill + 4, &end, 0);
		else if (fill[3])
			return -1;
		for (uint32_t i = 0; i < len; i++)
			p[i] = (uint8_t)(off + i);
		return 0;
	}
	unsigned long b = strtoul(fill, &end, 0);
	if (*end || b > 0xff)
		return -1;
	memset(p, (int)b, len);
	return 0;
}

static void set_aeth(struct build_ctx *c, struct roce_ib *ib)
{
	const char *s = cf_arg_get(c->st->args, c->st->nargs, "aeth");
	unsigned type = ROCE_AETH_ACK, code = 0;

	if (s && syndrome_type(s, &type, &code)) {
		ib->aeth.syndrome = (uint8_t)val(c, "aeth", 0);
	} else if (type == ROCE_AETH_ACK) {
		code = (unsigned)val(c, "credit", ROCE_AETH_CREDITS_INVALID);
		ib->aeth.syndrome = roce_aeth_syndrome(type, code);
	} else if (type == ROCE_AETH_RNR_NAK) {
		code = (unsigned)val(c, "rnr_timer", 1);
		ib->aeth.syndrome = roce_aeth_syndrome(type, code);
	} else {
		ib->aeth.syndrome = roce_aeth_syndrome(type, code);
	}
	ib->aeth.msn = (uint32_t)val(c, "msn", 0) & PSN_MASK;
}

/* Fills ib's BTH and extension headers from the step's words. */
static void set_headers(struct build_ctx *c, struct roce_ib *ib, uint8_t op)
{
	const struct roce_opcode_info *oi = roce_opcode(op);
	bool last = oi->flags & (ROCE_OPF_LAST | ROCE_OPF_ONLY);
	bool req = oi->flags & ROCE_OPF_REQ;

	ib->bth.opcode = op;
	ib->bth.psn = (uint32_t)val(c, "psn", c->e->psn) & PSN_MASK;
	ib->bth.dqpn = (uint32_t)val(c, "qpn", c->e->agent_qpn) & PSN_MASK;
	ib->bth.ackreq = val(c, "ackreq", req && last &&
			     oi->transport == ROCE_TR_RC) != 0;
	ib->bth.se = val(c, "se", 0) != 0;
	ib->bth.migreq = val(c, "migreq", 0) != 0;
	ib->bth.pkey = (uint16_t)val(c, "pkey", 0xffff);
	ib->bth.tver = (uint8_t)val(c, "tver", 0);
	ib->bth.fecn = val(c, "fecn", 0) != 0;
	ib->bth.becn = val(c, "becn", 0) != 0;
	ib->reth.va = val(c, "va", 0);
	ib->reth.rkey = (uint32_t)val(c, "rkey", 0);
	ib->atmeth.va = ib->reth.va;
	ib->atmeth.rkey = ib->reth.rkey;
	ib->atmeth.swap_add = val(c, "swap", val(c, "add", 0));
	ib->atmeth.compare = val(c, "compare", 0);
	ib->imm = (uint32_t)val(c, "imm", 0);
	ib->ieth = (uint32_t)val(c, "inv", 0);
	ib->deth.qkey = (uint32_t)val(c, "qkey", 0);
	ib->deth.src_qp = (uint32_t)val(c, "srcqp", c->e->my_qpn) & PSN_MASK;
	ib->atmack = val(c, "orig", 0);
	/* FLUSH's FETH word: placement type bits 0-3, level bits 4-5 */
	ib->feth = (uint32_t)val(c, "feth", 0);
	set_aeth(c, ib);
}

static int build_fail(char *err, size_t errlen, const char *fmt, const char *s)
{
	snprintf(err, errlen, fmt, s);
	return -1;
}

int cf_packet_build(const struct cf_env *e, const struct cf_wire *w,
		    const struct cf_step *st, uint8_t *out, size_t cap,
		    struct roce_frame *fp, char *err, size_t errlen)
{
	static uint8_t payload[9216];
	struct build_ctx c = { .e = e, .st = st, .err = err, .errlen = errlen };
	struct roce_frame f;
	int op = opcode_of(st->word);

	if (op < 0)
		return build_fail(err, errlen, "'%s' is not an opcode the table knows", st->word);
	for (unsigned i = 0; i < st->nargs; i++)
		if (!known_key(build_keys, st->args[i].key))
			return build_fail(err, errlen, "send: unknown key '%s'", st->args[i].key);
	roce_frame_init(&f, roce_gid_is_ipv4(w->local_gid) ? 4 : 6);
	memcpy(f.src_gid, w->local_gid, 16);
	memcpy(f.dst_gid, w->peer_gid, 16);
	f.sport = ROCE_PORT;
	f.ttl = w->ttl;	/* as the kernel sends it */
	set_headers(&c, &f.ib, (uint8_t)op);
	uint32_t len = (uint32_t)val(&c, "len", 0);
	if (c.bad)
		return -1;
	if (len > sizeof(payload))
		return build_fail(err, errlen, "len=%s is more than 9216 bytes", "len");
	if (fill_payload(cf_arg_get(st->args, st->nargs, "fill"), payload, len))
		return build_fail(err, errlen, "fill=%s: a byte, inc or inc:OFFSET",
				  cf_arg_get(st->args, st->nargs, "fill"));
	f.ib.payload = payload;
	f.ib.payload_len = len;
	f.ib.reth.len = (uint32_t)val(&c, "dmalen", len);
	f.ib.bth.pad = (uint8_t)val(&c, "pad", roce_pad_len(len));
	if (c.bad)
		return -1;
	int n = roce_frame_build(&f, out, cap);
	if (n < 0)
		return build_fail(err, errlen, "%s: the codec cannot build this packet "
				  "(payload on an opcode without one?)", st->word);
	const char *icrc = cf_arg_get(st->args, st->nargs, "icrc");
	if (icrc && strcmp(icrc, "bad"))
		return build_fail(err, errlen, "icrc=%s: only icrc=bad", icrc);
	/* The ICRC is the frame's last 4 bytes, big-endian as f->ib.icrc
	 * holds it: the built one, and the one sent (spoilt on purpose). */
	f.icrc_calc = (uint32_t)out[n - 4] << 24 | (uint32_t)out[n - 3] << 16 |
		      (uint32_t)out[n - 2] << 8 | out[n - 1];
	if (icrc)
		out[n - 1] ^= 0xff;
	f.ib.icrc = f.icrc_calc ^ (icrc ? 0xff : 0);
	f.ib.exts = roce_opcode((uint8_t)op)->exts;
	f.ib.op = roce_opcode((uint8_t)op);
	*fp = f;
	return n;
}
