/* SPDX-License-Identifier: MIT */
/* The steps the agent plays: receives and sends it posts, completions, memory, QP state, windows. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rocemu/range.h"
#include "conform_run.h"

enum { COMPLETION_MS = 2000, NO_COMPLETION_MS = 100, READ_CHUNK = 1024,
       STATE_MS = 1000, STATE_POLL_MS = 5 };

/* The agent's MR number for the MR a step names, or 0 after a verdict. */
static unsigned mr_id(struct cf_run *x, const struct cf_step *st, const char *name)
{
	const struct cf_mr *m = cf_mr_named(&x->e, name, strlen(name));

	if (m)
		return m->id;
	cf_verdict(x, CF_FAIL, st->line, "%s: no MR named '%s'", x->sc->path, name);
	return 0;
}

/* Appends " key=VALUE" for each step word in keys, evaluated, to buf. */
static int add_words(struct cf_run *x, const struct cf_step *st,
		     const char *const *keys, char *buf, size_t cap)
{
	char err[200];

	for (; *keys; keys++) {
		const char *v = cf_arg_get(st->args, st->nargs, *keys);
		uint64_t n;
		if (!v)
			continue;
		if (cf_eval(&x->e, v, &n, err, sizeof(err)))
			return cf_verdict(x, CF_FAIL, st->line, "%s=%s: %s", *keys, v, err);
		size_t l = strlen(buf);
		snprintf(buf + l, cap - l, " %s=%#llx", *keys, (unsigned long long)n);
	}
	return 0;
}

/* The agent's answer to what the step asked, which must be ok. */
static int ask(struct cf_run *x, const struct cf_step *st, const char *req)
{
	int rc = cf_agent_do(&x->s->agent, "%s", req);

	cf_evidence(x->r, "           agent> %.60s: %.70s", req, x->s->agent.line);
	if (rc == 1)
		return 0;
	return cf_verdict(x, CF_FAIL, st->line, "the agent refused '%s': %s", req,
			  x->s->agent.line);
}

/* recv and post: the buffer words mr/off/len, then the op's words. */
static int step_post(struct cf_run *x, const struct cf_step *st, bool recv)
{
	static const char *const recv_keys[] = { "off", "len", "id", NULL };
	static const char *const send_keys[] = { "off", "len", "id", "raddr", "rkey",
		"imm", "inv_rkey", "compare", "swap", "add", "inline", "fence", "se",
		"flush_len", "type", "level", NULL };
	char req[1024];
	const char *mr = cf_arg_get(st->args, st->nargs, "mr");
	const char *op = cf_arg_get(st->args, st->nargs, "op");

	const char *srq = cf_arg_get(st->args, st->nargs, "srq");

	if (recv && srq)	/* the scenario's one SRQ (the reader checked srq=1) */
		snprintf(req, sizeof(req), "recv srq=%u", x->srq);
	else if (recv)
		snprintf(req, sizeof(req), "recv qp=%u", x->qp);
	else if (!op)
		return cf_verdict(x, CF_FAIL, st->line, "%s: post needs op=", x->sc->path);
	else
		snprintf(req, sizeof(req), "send qp=%u op=%s", x->qp, op);
	if (mr) {
		unsigned id = mr_id(x, st, mr);
		if (!id)
			return -1;
		size_t l = strlen(req);
		snprintf(req + l, sizeof(req) - l, " mr=%u", id);
	}
	if (add_words(x, st, recv ? recv_keys : send_keys, req, sizeof(req)))
		return -1;
	if (!recv && !strcmp(x->sc->transport, "ud")) {
		const char *qkey = cf_arg_get(st->args, st->nargs, "qkey");
		size_t l = strlen(req);
		snprintf(req + l, sizeof(req) - l, " ah=%u dqpn=%#x qkey=%s", x->ah,
			 x->e.my_qpn, qkey ? qkey : "0x11111111");
	}
	return ask(x, st, req);
}

/* A completion word against the agent's answer; 0 when it matches. */
static int wc_field(struct cf_run *x, const struct cf_step *st, const char *key,
		    const char *agent_key, bool numeric)
{
	const char *want = cf_arg_get(st->args, st->nargs, key);
	char have[64], err[200];
	uint64_t w, h;

	if (!want || !strcmp(want, "any"))
		return 0;
	if (!cf_agent_get(&x->s->agent, agent_key, have, sizeof(have)))
		return cf_verdict(x, CF_FAIL, st->line, "completion without %s (%s=%s expected): %s",
				  agent_key, key, want, x->s->agent.line);
	if (!numeric && want[0] == '!') {	/* anything but this */
		if (!strcmp(have, want + 1))
			return cf_verdict(x, CF_FAIL, st->line, "completion %s is %s", key, have);
		return 0;
	}
	if (!numeric) {
		if (strcmp(have, want))
			return cf_verdict(x, CF_FAIL, st->line,
					  "completion %s is %s, not %s", key, have, want);
		return 0;
	}
	if (cf_eval(&x->e, want, &w, err, sizeof(err)))
		return cf_verdict(x, CF_FAIL, st->line, "%s=%s: %s", key, want, err);
	h = strtoull(have, NULL, 0);
	if (h != w)
		return cf_verdict(x, CF_FAIL, st->line, "completion %s is %#llx, not %#llx (%s)",
				  key, (unsigned long long)h, (unsigned long long)w, want);
	return 0;
}

/* The request that polls the scenario's CQ: the accepted connection's
 * in a CM scenario. */
static void poll_req(const struct cf_run *x, char *req, size_t cap, unsigned ms)
{
	if (x->sc->role == CF_CM)
		snprintf(req, cap, "cm_poll conn=%u wait_ms=%u", x->conn, ms);
	else
		snprintf(req, cap, "poll cq=%u wait_ms=%u", x->cq, ms);
}

static int step_completion(struct cf_run *x, const struct cf_step *st)
{
	static const char *const keys[] = { "status", "opcode", "len", "imm", "inv",
		"srcqp", "id", "within", NULL };
	char req[64];

	for (unsigned i = 0; i < st->nargs; i++) {
		const char *const *k = keys;
		while (*k && strcmp(*k, st->args[i].key))
			k++;
		if (!*k)
			return cf_verdict(x, CF_FAIL, st->line, "%s: completion: unknown key '%s'",
					  x->sc->path, st->args[i].key);
	}
	const char *w = cf_arg_get(st->args, st->nargs, "within");
	poll_req(x, req, sizeof(req), w ? (unsigned)strtoul(w, NULL, 0) : COMPLETION_MS);
	if (ask(x, st, req))
		return -1;
	if (!strcmp(x->s->agent.line, "ok none"))
		return cf_verdict(x, CF_FAIL, st->line, "expected a completion: none came");
	if (!cf_arg_get(st->args, st->nargs, "status") &&
	    !strstr(x->s->agent.line, " status=success"))
		return cf_verdict(x, CF_FAIL, st->line, "completion not successful: %s",
				  x->s->agent.line);
	/* qp=NAME: the completion is that QP's (the CQ is shared) */
	uint64_t qpn;
	if (*st->qp && (!cf_agent_num(&x->s->agent, "qpn", &qpn) || qpn != x->e.agent_qpn))
		return cf_verdict(x, CF_FAIL, st->line, "the completion is not QP %s's "
				  "(qpn %#x): %s", st->qp, x->e.agent_qpn, x->s->agent.line);
	return wc_field(x, st, "status", "status", false) ||
	       wc_field(x, st, "opcode", "opcode", false) ||
	       wc_field(x, st, "len", "byte_len", true) ||
	       wc_field(x, st, "imm", "imm", true) ||
	       wc_field(x, st, "inv", "inv_rkey", true) ||
	       wc_field(x, st, "srcqp", "src_qp", true) ||
	       wc_field(x, st, "id", "id", true) ? -1 : 0;
}

static int step_no_completion(struct cf_run *x, const struct cf_step *st)
{
	char req[64];
	unsigned ms = *st->word ? (unsigned)strtoul(st->word, NULL, 10) : NO_COMPLETION_MS;

	poll_req(x, req, sizeof(req), ms);
	if (ask(x, st, req))
		return -1;
	if (strcmp(x->s->agent.line, "ok none"))
		return cf_verdict(x, CF_FAIL, st->line, "expected no completion, got: %s",
				  x->s->agent.line + 3);
	return 0;
}

/* The expected byte at MR offset off + i for fill=... (as the MR's
 * initial fill when "unchanged"). */
static int want_byte(const struct cf_mr *m, const char *fill, uint64_t off,
		     uint8_t *b)
{
	char *end;

	if (!strcmp(fill, "unchanged"))
		fill = m->fill;
	if (!strncmp(fill, "inc", 3)) {
		uint64_t base = fill[3] == ':' ? strtoull(fill + 4, NULL, 0) : off;
		*b = (uint8_t)base;
		return 1;	/* counts up */
	}
	unsigned long v = strtoul(fill, &end, 0);
	if (*end || v > 0xff)
		return -1;
	*b = (uint8_t)v;
	return 0;
}

static int compare_hex(struct cf_run *x, const struct cf_step *st, const char *hex,
		       uint64_t off, uint8_t first, int counts, uint64_t done)
{
	size_t n = strlen(hex) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return cf_verdict(x, CF_FAIL, st->line, "the agent's data is not hex");
		uint8_t want = counts ? (uint8_t)(first + done + i) : first;
		if (v != want)
			return cf_verdict(x, CF_FAIL, st->line, "%s byte %llu is %#x, not %#x",
					  st->word, (unsigned long long)(off + i), v, want);
	}
	return 0;
}

static int step_memory(struct cf_run *x, const struct cf_step *st)
{
	const struct cf_mr *m = cf_mr_named(&x->e, st->word, strlen(st->word));
	const char *fill = cf_arg_get(st->args, st->nargs, "fill");
	uint64_t off = 0, len = 0;
	char err[200], req[128], hex[2 * READ_CHUNK + 1];
	uint8_t first;

	const char *o = cf_arg_get(st->args, st->nargs, "off");
	const char *l = cf_arg_get(st->args, st->nargs, "len");
	if (!m || !fill || !l || (o && cf_eval(&x->e, o, &off, err, sizeof(err))) ||
	    cf_eval(&x->e, l, &len, err, sizeof(err)) ||
	    !roce_range_inside(off, len, 0, m->size))
		return cf_verdict(x, CF_FAIL, st->line, "%s: memory needs an MR of the scenario, "
				  "off=, len= within it and fill=", x->sc->path);
	int counts = want_byte(m, fill, off, &first);
	if (counts < 0)
		return cf_verdict(x, CF_FAIL, st->line, "fill=%s: a byte, inc, inc:N or unchanged",
				  fill);
	for (uint64_t done = 0; done < len; done += READ_CHUNK) {
		uint64_t n = len - done < READ_CHUNK ? len - done : READ_CHUNK;
		snprintf(req, sizeof(req), "read mr=%u off=%llu len=%llu", m->id,
			 (unsigned long long)(off + done), (unsigned long long)n);
		if (ask(x, st, req))
			return -1;
		if (!cf_agent_get(&x->s->agent, "data", hex, sizeof(hex)) || strlen(hex) != 2 * n)
			return cf_verdict(x, CF_FAIL, st->line, "read: bad answer %s",
					  x->s->agent.line);
		if (compare_hex(x, st, hex, off + done, first, counts, done))
			return -1;
	}
	return 0;
}

static int step_state(struct cf_run *x, const struct cf_step *st, bool modify)
{
	char req[512], have[32];

	if (modify) {
		snprintf(req, sizeof(req), "modify qp=%u state=%s", x->qp, st->word);
		for (unsigned i = 0; i < st->nargs; i++) {
			size_t l = strlen(req);
			snprintf(req + l, sizeof(req) - l, " %s=%s", st->args[i].key,
				 st->args[i].val);
		}
		return ask(x, st, req);
	}
	/* A state the device reaches on its own (an error after the last
	 * retry, a flush) comes some time after the packet that caused it:
	 * the agent is asked again until it says STATE or within= runs out,
	 * and only the last answer is evidence. */
	const char *w = cf_arg_get(st->args, st->nargs, "within");
	unsigned ms = w ? (unsigned)strtoul(w, NULL, 0) : STATE_MS;
	struct timespec until, now, nap = { 0, STATE_POLL_MS * 1000000L };
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	snprintf(req, sizeof(req), "query qp=%u", x->qp);
	for (unsigned tries = 1;; tries++) {
		int rc = cf_agent_do(&x->s->agent, "%s", req);
		bool got = rc == 1 && cf_agent_get(&x->s->agent, "state", have, sizeof(have));
		clock_gettime(CLOCK_MONOTONIC, &now);
		bool over = now.tv_sec > until.tv_sec ||
			    (now.tv_sec == until.tv_sec && now.tv_nsec >= until.tv_nsec);
		if (rc != 1 || (got && !strcmp(have, st->word)) || over) {
			cf_evidence(x->r, "           agent> %.60s (%u times): %.70s", req, tries,
				    x->s->agent.line);
			if (rc != 1)
				return cf_verdict(x, CF_FAIL, st->line, "the agent refused '%s': %s",
						  req, x->s->agent.line);
			if (got && !strcmp(have, st->word))
				return 0;
			return cf_verdict(x, CF_FAIL, st->line, "the QP's state is %s, not %s "
					  "(asked for %u ms)", got ? have : "not said", st->word, ms);
		}
		nanosleep(&nap, NULL);
	}
}

/* bind type=1|2 mr= off= len= access=: a window, bound; mw names its rkey. */
static int step_bind(struct cf_run *x, const struct cf_step *st)
{
	const char *type = cf_arg_get(st->args, st->nargs, "type");
	const char *mr = cf_arg_get(st->args, st->nargs, "mr");
	const char *acc = cf_arg_get(st->args, st->nargs, "access");
	char req[512];
	uint64_t v;

	if (!mr || !acc)
		return cf_verdict(x, CF_FAIL, st->line, "%s: bind needs mr= and access=",
				  x->sc->path);
	unsigned id = mr_id(x, st, mr);
	if (!id)
		return -1;
	snprintf(req, sizeof(req), "mw pd=%u type=%s", x->pd, type ? type : "2");
	int rc = cf_agent_do(&x->s->agent, "%s", req);
	if (rc == 0 && (strstr(x->s->agent.line, "EOPNOTSUPP") ||
			strstr(x->s->agent.line, "ENOSYS")))
		return cf_verdict(x, CF_NA, st->line, "the device has no type %s memory windows",
				  type ? type : "2");
	if (rc != 1 || !cf_agent_num(&x->s->agent, "mw", &v))
		return cf_verdict(x, CF_FAIL, st->line, "mw: %s", x->s->agent.line);
	x->mw = (unsigned)v;
	snprintf(req, sizeof(req), "bind qp=%u mw=%u mr=%u access=%s", x->qp, x->mw, id, acc);
	static const char *const keys[] = { "off", "len", "id", NULL };
	if (add_words(x, st, keys, req, sizeof(req)) || ask(x, st, req))
		return -1;
	if (!cf_agent_num(&x->s->agent, "rkey", &v))
		return cf_verdict(x, CF_FAIL, st->line, "bind: no rkey in %s", x->s->agent.line);
	x->e.mw_rkey = (uint32_t)v;
	return 0;
}

/* event NAME [within=MS]: the agent's next asynchronous event is NAME
 * (ibv_event_type_str with '_' for spaces), about the scenario's QP. */
static int step_event(struct cf_run *x, const struct cf_step *st)
{
	const char *w = cf_arg_get(st->args, st->nargs, "within");
	char req[64], have[96], qp[16];

	snprintf(req, sizeof(req), "event wait_ms=%lu",
		 w ? strtoul(w, NULL, 0) : (unsigned long)COMPLETION_MS);
	if (ask(x, st, req))
		return -1;
	if (!cf_agent_get(&x->s->agent, "event", have, sizeof(have)))
		return cf_verdict(x, CF_FAIL, st->line, "expected the event %s: none came",
				  st->word);
	if (strcmp(have, st->word))
		return cf_verdict(x, CF_FAIL, st->line, "the event is %s, not %s", have,
				  st->word);
	/* an SRQ's event is about the scenario's SRQ, any other its QP */
	bool srq = !strncmp(have, "SRQ_", 4);
	snprintf(req, sizeof(req), "%u", srq ? x->srq : x->qp);
	if (!cf_agent_get(&x->s->agent, srq ? "srq" : "qp", qp, sizeof(qp)) || strcmp(qp, req))
		return cf_verdict(x, CF_FAIL, st->line, "the event %s is not about the %s: %s",
				  have, srq ? "SRQ" : "QP", x->s->agent.line);
	return 0;
}

/* listen port=N: the agent listens through its CM. */
static int step_listen(struct cf_run *x, const struct cf_step *st)
{
	const char *port = cf_arg_get(st->args, st->nargs, "port");
	char req[64], err[160];
	uint64_t v;

	if (!port || cf_eval(&x->e, port, &v, err, sizeof(err)) || !v || v > 0xffff)
		return cf_verdict(x, CF_FAIL, st->line, "%s: listen needs port=1..65535",
				  x->sc->path);
	if (x->s->sgid_index >= 0)
		snprintf(req, sizeof(req), "cm_listen port=%llu sgid_index=%d",
			 (unsigned long long)v, x->s->sgid_index);
	else
		snprintf(req, sizeof(req), "cm_listen port=%llu", (unsigned long long)v);
	return ask(x, st, req);
}

/* Whether a word is in a comma-separated list. */
static bool listed(const char *list, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != 0))
		if (strcspn(p, ",") == n && !strncmp(p, w, n))
			return true;
	return false;
}

/* cm-event NAME|none [within=MS] [skip=A,B] [status=N]: the agent's next CM
 * event (connect_request, established, disconnected, rejected, comm_est,
 * ...) is NAME, events in skip passed over; none: no event within MS.
 * A connection it names becomes the scenario's. */
static int step_cm_event(struct cf_run *x, const struct cf_step *st)
{
	const char *w = cf_arg_get(st->args, st->nargs, "within");
	const char *skip = cf_arg_get(st->args, st->nargs, "skip");
	const char *status = cf_arg_get(st->args, st->nargs, "status");
	unsigned ms = w ? (unsigned)strtoul(w, NULL, 0) : COMPLETION_MS;
	bool none = !strcmp(st->word, "none");
	char req[64], have[64], conn[16];
	uint64_t v;

	for (unsigned i = 0; i < st->nargs; i++)
		if (strcmp(st->args[i].key, "within") && strcmp(st->args[i].key, "skip") &&
		    strcmp(st->args[i].key, "status"))
			return cf_verdict(x, CF_FAIL, st->line, "%s: cm-event: unknown key '%s'",
					  x->sc->path, st->args[i].key);
	do {
		snprintf(req, sizeof(req), "cm_event wait_ms=%u", ms);
		if (ask(x, st, req))
			return -1;
		if (!cf_agent_get(&x->s->agent, "event", have, sizeof(have))) {
			if (none)
				return 0;
			return cf_verdict(x, CF_FAIL, st->line, "expected the CM event %s "
					  "within %u ms: none came", st->word, ms);
		}
	} while (listed(skip, have));
	if (none || strcmp(have, st->word))
		return cf_verdict(x, CF_FAIL, st->line, "the CM event is %s, not %s: %s", have,
				  st->word, x->s->agent.line);
	if (cf_agent_get(&x->s->agent, "conn", conn, sizeof(conn)))
		x->conn = (unsigned)strtoul(conn, NULL, 10);
	if (status && (!cf_agent_num(&x->s->agent, "status", &v) ||
		       v != strtoull(status, NULL, 0)))
		return cf_verdict(x, CF_FAIL, st->line, "the CM event's status is not %s: %s",
				  status, x->s->agent.line);
	return 0;
}

/* accept and disconnect: the scenario's connection, from cm-event. */
static int step_conn(struct cf_run *x, const struct cf_step *st, const char *cmd)
{
	char req[64];

	if (!x->conn)
		return cf_verdict(x, CF_FAIL, st->line, "%s: %s before a cm-event named a "
				  "connection", x->sc->path, cmd + 3);
	snprintf(req, sizeof(req), "%s conn=%u", cmd, x->conn);
	return ask(x, st, req);
}

int cf_agent_step(struct cf_run *x, const struct cf_step *st)
{
	switch (st->kind) {
	case CF_RECV:
		return step_post(x, st, true);
	case CF_POST:
		return step_post(x, st, false);
	case CF_COMPLETION:
		return step_completion(x, st);
	case CF_NO_COMPLETION:
		return step_no_completion(x, st);
	case CF_MEMORY:
		return step_memory(x, st);
	case CF_STATE:
		return step_state(x, st, false);
	case CF_MODIFY:
		return step_state(x, st, true);
	case CF_BIND:
		return step_bind(x, st);
	case CF_EVENT:
		return step_event(x, st);
	case CF_LISTEN:
		return step_listen(x, st);
	case CF_CM_EVENT:
		return step_cm_event(x, st);
	case CF_ACCEPT:
		return step_conn(x, st, "cm_accept");
	case CF_DISCONNECT:
		return step_conn(x, st, "cm_disconnect");
	default:
		return cf_verdict(x, CF_FAIL, st->line, "step kind %d not playable", st->kind);
	}
}
