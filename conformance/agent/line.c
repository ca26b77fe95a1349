// SPDX-License-Identifier: MIT
/*
 * rocemu-agent: one request line from its bytes to its answer: the bytes
 * checked, the token asked for first, the words split, the command found
 * and its keys checked. Nothing here touches the device: the commands do
 * (cmd_*.c), so this part can be driven on its own (tests/fuzz).
 */
#include <stdio.h>
#include <string.h>

#include "agent.h"

typedef int (*cmd_fn)(struct agent_dev *, struct agent_objs *, struct req *,
		      struct answer *);

static int cmd_auth(struct agent_dev *d, struct agent_objs *o, struct req *r,
		    struct answer *a);

static const struct command {
	const char *name;
	cmd_fn fn;
	const char *const keys[24];	/* the keys it takes; modify checks its own */
} commands[] = {
	{ "auth", cmd_auth, { "token" } },
	{ "hello", cmd_hello, { "proto" } },
	{ "pd", cmd_pd, { NULL } },
	{ "mr", cmd_mr, { "pd", "size", "access", "fill" } },
	{ "cq", cmd_cq, { "depth" } },
	{ "srq", cmd_srq, { "pd", "max_wr", "limit" } },
	{ "qp", cmd_qp, { "pd", "type", "scq", "rcq", "sq", "rq", "ops", "srq" } },
	{ "modify", cmd_modify, { "qp", "state", "access", "qkey", "dgid", "dqpn", "rq_psn",
		"mtu", "max_dest_rd_atomic", "min_rnr_timer", "sq_psn", "timeout", "retry_cnt",
		"rnr_retry", "max_rd_atomic", "sgid_index" } },
	{ "query", cmd_query, { "qp" } },
	{ "ah", cmd_ah, { "pd", "dgid", "sgid_index" } },
	{ "mw", cmd_mw, { "pd", "type" } },
	{ "bind", cmd_bind, { "qp", "mw", "mr", "off", "len", "access", "id" } },
	{ "recv", cmd_recv, { "qp", "srq", "mr", "off", "len", "id" } },
	{ "send", cmd_send, { "qp", "op", "mr", "off", "len", "id", "raddr", "rkey", "imm",
		"inv_rkey", "compare", "swap", "add", "ah", "dqpn", "qkey", "inline", "fence",
		"se", "flush_len", "type", "level" } },
	{ "poll", cmd_poll, { "cq", "wait_ms" } },
	{ "event", cmd_event, { "wait_ms" } },
	{ "read", cmd_read, { "mr", "off", "len" } },
	{ "write", cmd_write, { "mr", "off", "data" } },
	{ "destroy", cmd_destroy, { "qp", "mw", "ah", "mr", "cq", "pd", "srq" } },
	{ "cm_listen", cmd_cm_listen, { "port", "sgid_index" } },
	{ "cm_event", cmd_cm_event, { "wait_ms" } },
	{ "cm_accept", cmd_cm_accept, { "conn" } },
	{ "cm_disconnect", cmd_cm_disconnect, { "conn" } },
	{ "cm_poll", cmd_cm_poll, { "conn", "wait_ms" } },
	{ "bye", NULL, { NULL } },
};

bool agent_token_ok(const char *t)
{
	size_t n = strnlen(t, AGENT_TOKEN_MAX + 1);

	if (n == 0 || n > AGENT_TOKEN_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (t[i] <= ' ' || t[i] >= 127)
			return false;
	return true;
}

bool agent_token_equal(const char *want, const char *got)
{
	/* Both padded to the same fixed size and every byte compared, so the
	 * time taken does not say how much of a guess was right. */
	char w[AGENT_TOKEN_MAX + 1] = { 0 }, g[AGENT_TOKEN_MAX + 1] = { 0 };
	size_t wl = strnlen(want, AGENT_TOKEN_MAX + 1);
	size_t gl = strnlen(got, AGENT_TOKEN_MAX + 1);
	volatile unsigned char diff = wl != gl || wl > AGENT_TOKEN_MAX;

	memcpy(w, want, wl > AGENT_TOKEN_MAX ? AGENT_TOKEN_MAX : wl);
	memcpy(g, got, gl > AGENT_TOKEN_MAX ? AGENT_TOKEN_MAX : gl);
	for (size_t i = 0; i < sizeof(w); i++)
		diff |= (unsigned char)(w[i] ^ g[i]);
	return !diff;
}

/* auth token=T: right, the connection may go on; wrong, it is closed (1). */
static int cmd_auth(struct agent_dev *d, struct agent_objs *o, struct req *r,
		    struct answer *a)
{
	const char *t = req_str(r, "token");

	if (!d->token) {	/* nothing asked for: any token will do */
		ans_add(a, "ok");
		return 0;
	}
	o->authed = t && agent_token_equal(d->token, t);
	if (!o->authed) {
		/* The text never repeats what was sent: it may be a near miss. */
		ans_err(a, "EACCES", "%s; closing", t ? "wrong token" : "auth needs token=");
		return 1;
	}
	ans_add(a, "ok");
	return 0;
}

int agent_dispatch(struct agent_dev *d, struct agent_objs *o, struct req *r,
		   struct answer *a)
{
	const struct command *c = NULL;

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, r->cmd))
			c = &commands[i];
	if (d->token && !o->authed && (!c || c->fn != cmd_auth)) {
		ans_err(a, "EACCES", "this agent wants auth token=TOKEN first; closing");
		return 1;
	}
	if (!c)
		return ans_err(a, "EINVAL", "unknown command '%.40s'", r->cmd);
	if (!o->hello && strcmp(c->name, "hello") && c->fn != cmd_auth)
		return ans_err(a, "EPROTO", "say hello proto=%d first", AGENT_PROTO);
	if (!req_keys_ok(r, c->keys)) {
		ans_err(a, "EINVAL", "%s", r->err);
		/* a malformed auth on a connection that must authenticate */
		return d->token && !o->authed;
	}
	if (!c->fn) {
		ans_add(a, "ok");
		return 1;
	}
	return c->fn(d, o, r, a);
}

/* Where line holds a byte that is not printable ASCII (tab and CR aside,
 * which separate words): its index, or len. */
static size_t bad_byte(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if ((c < ' ' && c != '\t' && c != '\r') || c >= 127)
			return i;
	}
	return len;
}

int agent_line_overlong(struct agent_dev *d, struct agent_objs *o,
			struct answer *a)
{
	bool must_auth = d->token && !o->authed;

	a->len = 0;
	ans_err(a, must_auth ? "EACCES" : "EINVAL", "line longer than %d bytes",
		AGENT_LINE_MAX);
	return must_auth;
}

int agent_line(struct agent_dev *d, struct agent_objs *o, char *line,
	       size_t len, struct answer *a)
{
	struct req r;
	size_t bad = bad_byte(line, len);
	/* Until the token is given, nothing but a well-formed auth is read. */
	bool must_auth = d->token && !o->authed;

	if (len > AGENT_LINE_MAX)
		return agent_line_overlong(d, o, a);
	a->len = 0;
	a->text[0] = 0;
	if (bad < len) {
		/* A NUL would end the line early and hide the rest; an
		 * escape would reach whoever reads the answers. */
		ans_err(a, must_auth ? "EACCES" : "EINVAL",
			"byte 0x%02x at column %zu is not printable ASCII",
			(unsigned char)line[bad], bad + 1);
		return must_auth;
	}
	line[len] = 0;
	if (req_split(line, &r)) {
		ans_err(a, must_auth ? "EACCES" : "EINVAL", "%s", r.err);
		return must_auth;
	}
	return agent_dispatch(d, o, &r, a);
}
