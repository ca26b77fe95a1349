/* SPDX-License-Identifier: MIT */
/* What a scenario's steps may say: each step's keys, the keys an opcode's headers carry, value forms. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/opcode.h"
#include "conform.h"

/* The keys of each step kind besides rule= (every step's); NULL: the
 * step's own checker (send, expect, send-cm, expect-cm) decides. */
static const char *const *const kind_keys[CF_KIND_COUNT] = {
	[CF_SILENCE] = (const char *const[]){ NULL },
	[CF_DRAIN] = (const char *const[]){ NULL },
	[CF_WAIT] = (const char *const[]){ NULL },
	[CF_RECV] = (const char *const[]){ "mr", "off", "len", "id", "srq", NULL },
	[CF_POST] = (const char *const[]){ "op", "mr", "off", "len", "id", "raddr",
		"rkey", "imm", "inv_rkey", "compare", "swap", "add", "inline", "fence",
		"se", "qkey", "flush_len", "type", "level", NULL },
	[CF_COMPLETION] = (const char *const[]){ "status", "opcode", "len", "imm",
		"inv", "srcqp", "id", "within", NULL },
	[CF_NO_COMPLETION] = (const char *const[]){ NULL },
	[CF_MEMORY] = (const char *const[]){ "off", "len", "fill", NULL },
	[CF_STATE] = (const char *const[]){ "within", NULL },
	/* conformance/PROTOCOL.md's modify keys, every state's */
	[CF_MODIFY] = (const char *const[]){ "access", "qkey", "dgid", "dqpn",
		"rq_psn", "mtu", "max_dest_rd_atomic", "min_rnr_timer", "sq_psn",
		"timeout", "retry_cnt", "rnr_retry", "max_rd_atomic", NULL },
	[CF_BIND] = (const char *const[]){ "type", "mr", "off", "len", "access", "id",
		NULL },
	[CF_EVENT] = (const char *const[]){ "within", NULL },
	[CF_LISTEN] = (const char *const[]){ "port", NULL },
	[CF_CM_EVENT] = (const char *const[]){ "within", "skip", "status", NULL },
	[CF_ACCEPT] = (const char *const[]){ NULL },
	[CF_DISCONNECT] = (const char *const[]){ NULL },
};

/* The keys whose value is a number or an expression (cf_eval), per kind. */
static const char *const expr_keys[] = {
	"psn", "qpn", "ackreq", "se", "migreq", "pkey", "pad", "tver", "fecn",
	"becn", "va", "rkey", "dmalen", "len", "imm", "inv", "swap", "add",
	"compare", "qkey", "srcqp", "rnr_timer", "credit", "msn", "orig", "off",
	"id", "raddr", "inv_rkey", "srcqp", "port", NULL,
};

/* Keys whose value is milliseconds: a plain number. */
static const char *const ms_keys[] = { "within", "after", NULL };

/* The extension header a packet key lives in: a key names a field of
 * these headers, so an opcode whose table entry has none of them does
 * not carry it (IBTA 9.2-9.4: the headers each opcode has). */
static const struct {
	const char *key;
	uint16_t exts;
} key_exts[] = {
	{ "va", ROCE_EXT_RETH | ROCE_EXT_ATMETH },
	{ "rkey", ROCE_EXT_RETH | ROCE_EXT_ATMETH },
	{ "dmalen", ROCE_EXT_RETH },
	{ "swap", ROCE_EXT_ATMETH }, { "add", ROCE_EXT_ATMETH },
	{ "compare", ROCE_EXT_ATMETH },
	{ "imm", ROCE_EXT_IMMDT }, { "inv", ROCE_EXT_IETH },
	{ "qkey", ROCE_EXT_DETH }, { "srcqp", ROCE_EXT_DETH },
	{ "aeth", ROCE_EXT_AETH }, { "rnr_timer", ROCE_EXT_AETH },
	{ "credit", ROCE_EXT_AETH }, { "msn", ROCE_EXT_AETH },
	{ "orig", ROCE_EXT_ATMACK },
	{ "feth", ROCE_EXT_FETH },
};

static const char *ext_name(uint16_t ext)
{
	return ext & ROCE_EXT_RETH ? "RETH" : ext & ROCE_EXT_ATMETH ? "AtomicETH" :
	       ext & ROCE_EXT_IMMDT ? "ImmDt" : ext & ROCE_EXT_IETH ? "IETH" :
	       ext & ROCE_EXT_DETH ? "DETH" : ext & ROCE_EXT_AETH ? "AETH" :
	       ext & ROCE_EXT_ATMACK ? "AtomicAckETH" :
	       ext & ROCE_EXT_FETH ? "FETH" : "?";
}

/* ibv_wc_status_str's words with '_' for spaces, and the agent's opcodes. */
static const char *const wc_statuses[] = {
	"success", "local_length_error", "local_QP_operation_error",
	"local_EE_context_operation_error", "local_protection_error",
	"Work_Request_Flushed_Error", "memory_management_operation_error",
	"bad_response_error", "local_access_error", "remote_invalid_request_error",
	"remote_access_error", "remote_operation_error",
	"transport_retry_counter_exceeded", "RNR_retry_counter_exceeded",
	"local_RDD_violation_error", "remote_invalid_RD_request", "aborted_error",
	"invalid_EE_context_number", "invalid_EE_context_state", "fatal_error",
	"response_timeout_error", "general_error", NULL,
};
static const char *const wc_opcodes[] = {
	"send", "write", "read", "cas", "faa", "bind_mw", "local_inv", "recv",
	"recv_imm", "flush", "atomic_write", NULL,
};
static const char *const aeth_words[] = {
	"ack", "rnr", "nak", "nak_seq", "nak_inv_req", "nak_rem_access",
	"nak_rem_op", "nak_inv_rd_req", NULL,
};

static bool in(const char *const *list, const char *w)
{
	for (; list && *list; list++)
		if (!strcmp(*list, w))
			return true;
	return false;
}

static int lint_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int lint_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* A fill= value: a byte, inc or inc:N (and unchanged for memory). */
static bool fill_ok(const char *v, bool memory)
{
	char *end;

	if (memory && !strcmp(v, "unchanged"))
		return true;
	if (!strcmp(v, "inc"))
		return true;
	if (!strncmp(v, "inc:", 4)) {
		strtoul(v + 4, &end, 0);
		return end != v + 4 && !*end;
	}
	unsigned long b = strtoul(v, &end, 0);
	return end != v && !*end && b <= 0xff;
}

/* A completion status= or opcode= value: a word of list, any, or !WORD. */
static int wc_word(const char *key, const char *v, const char *const *list,
		   char *err, size_t errlen)
{
	const char *w = v[0] == '!' ? v + 1 : v;

	if (!strcmp(v, "any") || in(list, w))
		return 0;
	return lint_fail(err, errlen, "%s=%s: no such word (see conformance/README.md: "
			 "ibv_wc_status_str's words with '_' for spaces, or the agent's "
			 "opcodes)", key, v);
}

/* A send or expect step's keys against its opcode's headers. */
static int opcode_keys(const struct cf_step *st, char *err, size_t errlen)
{
	char *end;
	unsigned long n = strtoul(st->word, &end, 0);
	const struct roce_opcode_info *oi = NULL;

	if (!strcmp(st->word, "any"))
		return 0;
	if (!*end && end != st->word)
		oi = n <= UINT8_MAX ? roce_opcode((uint8_t)n) : NULL;
	for (unsigned op = 0; !oi && op <= UINT8_MAX; op++) {
		const struct roce_opcode_info *i = roce_opcode((uint8_t)op);
		if (i && i->name && !strcmp(i->name, st->word))
			oi = i;
	}
	if (!oi)
		return 0;	/* cf_step_check said so already */
	for (unsigned i = 0; i < st->nargs; i++) {
		const char *k = st->args[i].key;
		if (!strcmp(k, "fill") && !(oi->flags & ROCE_OPF_PAYLOAD))
			return lint_fail(err, errlen, "%s carries no payload: fill=%s does not apply",
					 st->word, st->args[i].val);
		for (size_t e = 0; e < sizeof(key_exts) / sizeof(key_exts[0]); e++) {
			if (strcmp(key_exts[e].key, k) || (oi->exts & key_exts[e].exts))
				continue;
			snprintf(err, errlen, "%s has no %s: %s= does not apply", st->word,
				 ext_name(key_exts[e].exts), k);
			return -1;
		}
	}
	return 0;
}

/* One value of a send or expect step. */
static int packet_value(const struct cf_scenario *s, const struct cf_env *env,
			const struct cf_step *st, const struct cf_arg *a, char *err,
			size_t errlen)
{
	bool expect = st->kind == CF_EXPECT;
	uint64_t v;
	char why[160];

	if (!strcmp(a->val, "any")) {
		if (expect)
			return 0;
		return lint_fail(err, errlen, "%s=any: a send step sends a value (any is "
				 "for expect)", a->key);
	}
	if (!strcmp(a->key, "aeth")) {
		if (in(aeth_words, a->val) && (expect || strcmp(a->val, "nak")))
			return 0;
		if (expect)
			return lint_fail(err, errlen, "aeth=%s: expect compares ack, rnr, nak, "
					 "nak_seq, nak_inv_req, nak_rem_access, nak_rem_op or "
					 "nak_inv_rd_req", a->val);
		if (!strcmp(a->val, "nak"))
			return lint_fail(err, errlen, "aeth=nak: say which NAK (nak_seq, "
					 "nak_inv_req, ...) or give the syndrome as a number");
		/* send also takes the syndrome byte as a number */
	} else if (!strcmp(a->key, "fill")) {
		if (fill_ok(a->val, false))
			return 0;
		return lint_fail(err, errlen, "fill=%s: a byte, inc or inc:N", a->val);
	} else if (!strcmp(a->key, "icrc")) {
		return strcmp(a->val, "bad") ?
		       lint_fail(err, errlen, "icrc=%s: only icrc=bad", a->val) : 0;
	} else if (!strcmp(a->key, "timer")) {
		char what[120];
		unsigned timeout = 12;
		int q = cf_qp_index(s, st->qp);
		const struct cf_qpdecl *d = &s->qps[q < 0 ? 0 : q];
		const char *t = cf_arg_get(d->args, d->nargs, "timeout");
		if (t)
			timeout = (unsigned)strtoul(t, NULL, 0);
		return cf_timer_parse(a->val, timeout, &v, what, sizeof(what)) ?
		       lint_fail(err, errlen, "timer=%s: ack (the QP's local ACK timeout, "
				 "not 0) or rnr:CODE (0 to 31)", a->val) : 0;
	} else if (in(ms_keys, a->key)) {
		return 0;	/* the common check */
	} else if (!in(expr_keys, a->key)) {
		return 0;	/* a key another checker owns */
	}
	if (cf_eval(env, a->val, &v, why, sizeof(why)))
		return lint_fail(err, errlen, "%s=%s", a->key, why);
	return 0;
}

int cf_step_lint(const struct cf_scenario *s, const struct cf_step *st,
		 char *err, size_t errlen)
{
	struct cf_env env = { .nmr = s->nmr, .cm = s->role == CF_CM };
	uint64_t v;
	char why[160];

	memcpy(env.mrs, s->mrs, sizeof(s->mrs));
	env.nqps = s->nqps;
	for (unsigned i = 0; i < s->nqps && i < CF_MAX_QPS; i++)
		strcpy(env.qps[i].name, s->qps[i].name);
	const char *mr = st->kind == CF_MEMORY ? st->word :
			 cf_arg_get(st->args, st->nargs, "mr");
	if (mr && !cf_mr_named(&env, mr, strlen(mr)))
		return lint_fail(err, errlen, "names no MR of this scenario: '%s'", mr);
	for (unsigned i = 0; i < st->nargs; i++) {
		const struct cf_arg *a = &st->args[i];
		const char *const *keys = kind_keys[st->kind];
		char *end;
		if (keys && !in(keys, a->key)) {
			snprintf(err, errlen, "takes no key '%s'%s", a->key,
				 keys[0] ? " (see conformance/README.md)" : "");
			return -1;
		}
		if (in(ms_keys, a->key) && (strtoul(a->val, &end, 10), end == a->val || *end))
			return lint_fail(err, errlen, "%s=%s: milliseconds, a number", a->key,
					 a->val);
		if (st->kind == CF_SEND || st->kind == CF_EXPECT) {
			if (packet_value(s, &env, st, a, err, errlen))
				return -1;
			continue;
		}
		if (st->kind == CF_COMPLETION && !strcmp(a->key, "status")) {
			if (wc_word(a->key, a->val, wc_statuses, err, errlen))
				return -1;
			continue;
		}
		if (st->kind == CF_COMPLETION && !strcmp(a->key, "opcode")) {
			if (wc_word(a->key, a->val, wc_opcodes, err, errlen))
				return -1;
			continue;
		}
		if (st->kind == CF_MEMORY && !strcmp(a->key, "fill")) {
			if (!fill_ok(a->val, true))
				return lint_fail(err, errlen, "fill=%s: a byte, inc, inc:N or "
						 "unchanged", a->val);
			continue;
		}
		if (st->kind != CF_MODIFY && in(expr_keys, a->key) && strcmp(a->val, "any") &&
		    cf_eval(&env, a->val, &v, why, sizeof(why)))
			return lint_fail(err, errlen, "%s=%s", a->key, why);
	}
	if (st->kind == CF_SEND || st->kind == CF_EXPECT)
		return opcode_keys(st, err, errlen);
	return 0;
}
