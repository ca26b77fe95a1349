/* SPDX-License-Identifier: MIT */
/* A scenario's objects on the agent: PD, MRs, CQ, the QP connected to conform's QP, an AH for UD. */
#include <arpa/inet.h>
#include <string.h>

#include "conform_run.h"

/* A setting of the QP being made (x->cur), or def. */
static const char *qp_arg(const struct cf_run *x, const char *k, const char *def)
{
	const struct cf_qpdecl *d = &x->sc->qps[x->cur];
	const char *v = cf_arg_get(d->args, d->nargs, k);
	return v ? v : def;
}

static const char *const qp_keys[] = {
	"psn", "mtu", "access", "rd_atomic", "init_rd_atomic", "min_rnr_timer",
	"timeout", "retry_cnt", "rnr_retry", "qkey", "state", "sq", "rq", "srq", NULL,
};

static const char *const srq_keys[] = { "max_wr", "limit", NULL };

void cf_use_qp(struct cf_run *x, unsigned i)
{
	const struct cf_env_qp *q = &x->e.qps[i];

	x->cur = i;
	x->qp = x->qpno[i];
	x->e.agent_qpn = q->agent_qpn;
	x->e.my_qpn = q->my_qpn;
	x->e.psn = q->psn;
	x->e.mtu = q->mtu;
}

/* The agent answered err: N/A when the device does not do it, else FAIL. */
static int refused(struct cf_run *x, const char *what)
{
	const char *l = x->s->agent.line;
	bool unsupported = strstr(l, "EOPNOTSUPP") || strstr(l, "ENOSYS") ||
			   strstr(l, "ENOTSUP") || strstr(l, "EPROTONOSUPPORT");

	return cf_verdict(x, unsupported ? CF_NA : CF_FAIL, 0, "%s: the agent said '%s'",
			  what, l);
}

/* One agent request whose answer must be ok; -1 after the verdict. */
#define AGENT(x, what, ...) do {					\
	int rc_ = cf_agent_do(&(x)->s->agent, __VA_ARGS__);		\
	if (rc_ < 0)							\
		return cf_verdict(x, CF_FAIL, 0, "%s: %s", what,	\
				  (x)->s->agent.line);			\
	if (rc_ == 0)							\
		return refused(x, what);				\
} while (0)

static int need_num(struct cf_run *x, const char *key, uint64_t *v)
{
	if (cf_agent_num(&x->s->agent, key, v))
		return 0;
	return cf_verdict(x, CF_FAIL, 0, "the agent's answer has no %s: %s", key,
			  x->s->agent.line);
}

static int make_mrs(struct cf_run *x)
{
	uint64_t v;

	for (unsigned i = 0; i < x->e.nmr; i++) {
		struct cf_mr *m = &x->e.mrs[i];
		if (m->other_pd && !x->pd2) {
			AGENT(x, "second pd", "pd");
			if (need_num(x, "pd", &v))
				return -1;
			x->pd2 = (unsigned)v;
		}
		AGENT(x, "mr", "mr pd=%u size=%u access=%s fill=%s",
		      m->other_pd ? x->pd2 : x->pd, m->size, m->access, m->fill);
		if (need_num(x, "mr", &v))
			return -1;
		m->id = (unsigned)v;
		if (need_num(x, "addr", &m->addr) || need_num(x, "rkey", &v))
			return -1;
		m->rkey = (uint32_t)v;
		if (need_num(x, "lkey", &v))
			return -1;
		m->lkey = (uint32_t)v;
	}
	return 0;
}

/* " sgid_index=N" for the family's GID, when the agent named its index;
 * else "" (the agent's own). */
static const char *sgid(const struct cf_run *x)
{
	static char s[32];

	s[0] = 0;
	if (x->s->sgid_index >= 0)
		snprintf(s, sizeof(s), " sgid_index=%d", x->s->sgid_index);
	return s;
}

/* INIT, RTR, RTS as far as the scenario's state= says. */
static int connect_qp(struct cf_run *x)
{
	const struct cf_scenario *sc = x->sc;
	const char *upto = qp_arg(x, "state", "rts");
	bool ud = !strcmp(sc->transport, "ud"), rc = !strcmp(sc->transport, "rc");
	char gid[64];

	inet_ntop(AF_INET6, x->s->wire.local_gid, gid, sizeof(gid));
	if (ud)
		AGENT(x, "modify to init", "modify qp=%u state=init qkey=%s", x->qp,
		      qp_arg(x, "qkey", "0x11111111"));
	else
		AGENT(x, "modify to init", "modify qp=%u state=init access=%s", x->qp,
		      qp_arg(x, "access", "rw,rr,ra"));
	if (!strcmp(upto, "init"))
		return 0;
	if (ud)
		AGENT(x, "modify to rtr", "modify qp=%u state=rtr", x->qp);
	else if (rc)
		AGENT(x, "modify to rtr", "modify qp=%u state=rtr dgid=%s dqpn=%#x "
		      "rq_psn=%#x mtu=%u max_dest_rd_atomic=%s min_rnr_timer=%s%s", x->qp,
		      gid, x->e.my_qpn, x->e.psn, x->e.mtu, qp_arg(x, "rd_atomic", "4"),
		      qp_arg(x, "min_rnr_timer", "1"), sgid(x));
	else
		AGENT(x, "modify to rtr", "modify qp=%u state=rtr dgid=%s dqpn=%#x "
		      "rq_psn=%#x mtu=%u%s", x->qp, gid, x->e.my_qpn, x->e.psn, x->e.mtu,
		      sgid(x));
	if (!strcmp(upto, "rtr"))
		return 0;
	if (rc)
		AGENT(x, "modify to rts", "modify qp=%u state=rts sq_psn=%#x timeout=%s "
		      "retry_cnt=%s rnr_retry=%s max_rd_atomic=%s", x->qp, x->e.psn,
		      qp_arg(x, "timeout", "12"), qp_arg(x, "retry_cnt", "7"),
		      qp_arg(x, "rnr_retry", "7"), qp_arg(x, "init_rd_atomic", "4"));
	else
		AGENT(x, "modify to rts", "modify qp=%u state=rts sq_psn=%#x", x->qp,
		      x->e.psn);
	return 0;
}

/* Whether w is one of the words of list (separated by spaces or commas). */
static bool needs_word(const char *list, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = list; *p; p += strcspn(p, " ,"), p += strspn(p, " ,"))
		if (strcspn(p, " ,") == n && !strncmp(p, w, n))
			return true;
	return false;
}

static bool in_list(const char *const *k, const char *key)
{
	while (*k && strcmp(*k, key))
		k++;
	return *k != NULL;
}

/* QP q's settings: known keys, its first PSN and path MTU. */
static int check_qp(struct cf_run *x, unsigned q)
{
	const struct cf_qpdecl *d = &x->sc->qps[q];
	uint64_t v;
	char err[160];

	x->cur = q;
	for (unsigned i = 0; i < d->nargs; i++)
		if (!in_list(qp_keys, d->args[i].key))
			return cf_verdict(x, CF_FAIL, 0, "%s: qp: unknown key '%s'",
					  x->sc->path, d->args[i].key);
	if (cf_eval(&x->e, qp_arg(x, "psn", "0"), &v, err, sizeof(err)))
		return cf_verdict(x, CF_FAIL, 0, "qp psn: %s", err);
	x->e.qps[q].psn = (uint32_t)v & 0xffffff;
	if (cf_eval(&x->e, qp_arg(x, "mtu", "1024"), &v, err, sizeof(err)))
		return cf_verdict(x, CF_FAIL, 0, "qp mtu: %s", err);
	x->e.qps[q].mtu = (uint32_t)v;
	x->cur = 0;
	return 0;
}

/* needs mtu2048 / mtu4096: the port's active MTU must be at least that
 * (large-message scenarios; a path MTU above it could not be set). */
static int needs_mtu(struct cf_run *x)
{
	static const unsigned mtus[] = { 2048, 4096 };

	for (unsigned i = 0; i < 2; i++) {
		char w[16];
		snprintf(w, sizeof(w), "mtu%u", mtus[i]);
		if (needs_word(x->sc->needs, w) && x->s->dev.active_mtu < mtus[i])
			return cf_verdict(x, CF_NA, 0, "it needs an active MTU of %u (needs "
					  "%s), the port's is %u", mtus[i], w,
					  x->s->dev.active_mtu);
	}
	return 0;
}

/* The scenario's words the agent needs before anything else. */
static int check_header(struct cf_run *x)
{
	const struct cf_scenario *sc = x->sc;
	for (unsigned q = 0; q < sc->nqps; q++) {
		if (check_qp(x, q))
			return -1;
	}
	for (unsigned i = 0; i < sc->nsrq; i++)
		if (!in_list(srq_keys, sc->srq[i].key))
			return cf_verdict(x, CF_FAIL, 0, "%s: srq: unknown key '%s'", sc->path,
					  sc->srq[i].key);
	if (needs_mtu(x))
		return -1;
	cf_use_qp(x, 0);	/* the first QP's PSN and MTU (a CM REQ's too) */
	/* a scenario that by nature holds over one IP version only (needs
	 * ipv4 or ipv6; its comments say why) is not applicable over the other */
	int other = x->s->family == CF_IPV6 ? CF_IPV4 : CF_IPV6;
	if (needs_word(sc->needs, cf_family_name(other)))
		return cf_verdict(x, CF_NA, 0, "it holds over %s only (needs %s), this run "
				  "is over %s", other ? "IPv6" : "IPv4", cf_family_name(other),
				  other ? "IPv4" : "IPv6");
	if (strstr(sc->needs, "atomics") && !strcmp(x->s->dev.atomic_cap, "none"))
		return cf_verdict(x, CF_NA, 0, "the device does no atomics (atomic_cap none)");
	/* IBTA 1.5 (Linux 6.2 on): the device's capability bits say */
	if (strstr(sc->needs, "flush") && !strstr(x->s->dev.caps, "flush_global"))
		return cf_verdict(x, CF_NA, 0, "the device does no FLUSH (no FLUSH_GLOBAL "
				  "capability; caps %s)", x->s->dev.caps);
	if (strstr(sc->needs, "atomic_write") && !strstr(x->s->dev.caps, "atomic_write"))
		return cf_verdict(x, CF_NA, 0, "the device does no ATOMIC WRITE (no "
				  "ATOMIC_WRITE capability; caps %s)", x->s->dev.caps);
	for (unsigned q = 0; q < sc->nqps; q++)
		if (x->e.qps[q].mtu > x->s->dev.active_mtu)
			return cf_verdict(x, CF_NA, 0, "path MTU %u is above the port's active "
					  "MTU %u", x->e.qps[q].mtu, x->s->dev.active_mtu);
	return 0;
}

/* The scenario's SRQ (srq max_wr=N limit=N), on the QPs' PD. */
static int make_srq(struct cf_run *x)
{
	const struct cf_scenario *sc = x->sc;
	const char *w = cf_arg_get(sc->srq, sc->nsrq, "max_wr");
	const char *l = cf_arg_get(sc->srq, sc->nsrq, "limit");
	uint64_t v;

	AGENT(x, "srq", "srq pd=%u max_wr=%s%s%s", x->pd, w ? w : "32",
	      l ? " limit=" : "", l ? l : "");
	if (need_num(x, "srq", &v))
		return -1;
	x->srq = (unsigned)v;
	return 0;
}

/* Agent QP q: made on the PD and the one CQ, its QPN noted; an AH to
 * conform's address for UD. */
static int make_qp(struct cf_run *x, unsigned q)
{
	const struct cf_scenario *sc = x->sc;
	uint64_t v;
	char srq[24] = "";

	x->cur = q;
	if (cf_arg_get(sc->qps[q].args, sc->qps[q].nargs, "srq"))
		snprintf(srq, sizeof(srq), " srq=%u", x->srq);
	/* the agent posts FLUSH and ATOMIC WRITE only on a QP made for them */
	bool fl = strstr(sc->needs, "flush"), aw = strstr(sc->needs, "atomic_write");
	AGENT(x, "qp", "qp pd=%u type=%s scq=%u rcq=%u sq=%s rq=%s%s%s%s%s", x->pd,
	      sc->transport, x->cq, x->cq, qp_arg(x, "sq", "32"), qp_arg(x, "rq", "32"),
	      srq, fl || aw ? " ops=" : "", fl ? "flush" : "", aw ? (fl ? ",atomic_write"
								 : "atomic_write") : "");
	if (need_num(x, "qp", &v))
		return -1;
	x->qpno[q] = (unsigned)v;
	if (need_num(x, "qpn", &v))
		return -1;
	x->e.qps[q].agent_qpn = (uint32_t)v;
	if (!strcmp(sc->transport, "ud") && !x->ah) {
		char gid[64];
		inet_ntop(AF_INET6, x->s->wire.local_gid, gid, sizeof(gid));
		AGENT(x, "ah", "ah pd=%u dgid=%s%s", x->pd, gid, sgid(x));
		if (need_num(x, "ah", &v))
			return -1;
		x->ah = (unsigned)v;
	}
	return 0;
}

int cf_setup(struct cf_run *x)
{
	const struct cf_scenario *sc = x->sc;
	uint64_t v;

	if (check_header(x))
		return -1;
	AGENT(x, "pd", "pd");
	if (need_num(x, "pd", &v))
		return -1;
	x->pd = (unsigned)v;
	if (make_mrs(x))
		return -1;
	AGENT(x, "cq", "cq depth=256");
	if (need_num(x, "cq", &v))
		return -1;
	x->cq = (unsigned)v;
	if (sc->role == CF_CM)	/* the QP is the one the CM accepts with */
		return 0;
	if (sc->has_srq && make_srq(x))
		return -1;
	for (unsigned q = 0; q < sc->nqps; q++) {
		if (make_qp(x, q))
			return -1;
	}
	for (unsigned q = 0; q < sc->nqps; q++) {
		cf_use_qp(x, q);
		if (connect_qp(x))
			return -1;
	}
	cf_use_qp(x, 0);
	return 0;
}
