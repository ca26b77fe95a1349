/* SPDX-License-Identifier: MIT */
/* A scenario's objects on the agent: PD, MRs, CQ, the QP connected to conform's QP, an AH for UD. */
#include <arpa/inet.h>
#include <string.h>

#include "conform_run.h"

/* A qp setting of the scenario, or def. */
static const char *qp_arg(const struct cf_scenario *sc, const char *k,
			  const char *def)
{
	const char *v = cf_arg_get(sc->qp, sc->nqp, k);
	return v ? v : def;
}

static const char *const qp_keys[] = {
	"psn", "mtu", "access", "rd_atomic", "init_rd_atomic", "min_rnr_timer",
	"timeout", "retry_cnt", "rnr_retry", "qkey", "state", "sq", "rq", NULL,
};

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
	const char *upto = qp_arg(sc, "state", "rts");
	bool ud = !strcmp(sc->transport, "ud"), rc = !strcmp(sc->transport, "rc");
	char gid[64];

	inet_ntop(AF_INET6, x->s->wire.local_gid, gid, sizeof(gid));
	if (ud)
		AGENT(x, "modify to init", "modify qp=%u state=init qkey=%s", x->qp,
		      qp_arg(sc, "qkey", "0x11111111"));
	else
		AGENT(x, "modify to init", "modify qp=%u state=init access=%s", x->qp,
		      qp_arg(sc, "access", "rw,rr,ra"));
	if (!strcmp(upto, "init"))
		return 0;
	if (ud)
		AGENT(x, "modify to rtr", "modify qp=%u state=rtr", x->qp);
	else if (rc)
		AGENT(x, "modify to rtr", "modify qp=%u state=rtr dgid=%s dqpn=%#x "
		      "rq_psn=%#x mtu=%u max_dest_rd_atomic=%s min_rnr_timer=%s%s", x->qp,
		      gid, x->e.my_qpn, x->e.psn, x->e.mtu, qp_arg(sc, "rd_atomic", "4"),
		      qp_arg(sc, "min_rnr_timer", "1"), sgid(x));
	else
		AGENT(x, "modify to rtr", "modify qp=%u state=rtr dgid=%s dqpn=%#x "
		      "rq_psn=%#x mtu=%u%s", x->qp, gid, x->e.my_qpn, x->e.psn, x->e.mtu,
		      sgid(x));
	if (!strcmp(upto, "rtr"))
		return 0;
	if (rc)
		AGENT(x, "modify to rts", "modify qp=%u state=rts sq_psn=%#x timeout=%s "
		      "retry_cnt=%s rnr_retry=%s max_rd_atomic=%s", x->qp, x->e.psn,
		      qp_arg(sc, "timeout", "12"), qp_arg(sc, "retry_cnt", "7"),
		      qp_arg(sc, "rnr_retry", "7"), qp_arg(sc, "init_rd_atomic", "4"));
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

/* The scenario's words the agent needs before anything else. */
static int check_header(struct cf_run *x)
{
	const struct cf_scenario *sc = x->sc;
	uint64_t v;
	char err[160];

	for (unsigned i = 0; i < sc->nqp; i++) {
		const char *const *k = qp_keys;
		while (*k && strcmp(*k, sc->qp[i].key))
			k++;
		if (!*k)
			return cf_verdict(x, CF_FAIL, 0, "%s: qp: unknown key '%s'", sc->path,
					  sc->qp[i].key);
	}
	if (cf_eval(&x->e, qp_arg(sc, "psn", "0"), &v, err, sizeof(err)))
		return cf_verdict(x, CF_FAIL, 0, "qp psn: %s", err);
	x->e.psn = (uint32_t)v & 0xffffff;
	if (cf_eval(&x->e, qp_arg(sc, "mtu", "1024"), &v, err, sizeof(err)))
		return cf_verdict(x, CF_FAIL, 0, "qp mtu: %s", err);
	x->e.mtu = (uint32_t)v;
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
	if (x->e.mtu > x->s->dev.active_mtu)
		return cf_verdict(x, CF_NA, 0, "path MTU %u is above the port's active MTU %u",
				  x->e.mtu, x->s->dev.active_mtu);
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
	/* the agent posts FLUSH and ATOMIC WRITE only on a QP made for them */
	bool fl = strstr(sc->needs, "flush"), aw = strstr(sc->needs, "atomic_write");
	AGENT(x, "qp", "qp pd=%u type=%s scq=%u rcq=%u sq=%s rq=%s%s%s%s", x->pd,
	      sc->transport, x->cq, x->cq, qp_arg(sc, "sq", "32"), qp_arg(sc, "rq", "32"),
	      fl || aw ? " ops=" : "", fl ? "flush" : "", aw ? (fl ? ",atomic_write"
							   : "atomic_write") : "");
	if (need_num(x, "qp", &v))
		return -1;
	x->qp = (unsigned)v;
	if (need_num(x, "qpn", &v))
		return -1;
	x->e.agent_qpn = (uint32_t)v;
	if (!strcmp(sc->transport, "ud")) {
		char gid[64];
		inet_ntop(AF_INET6, x->s->wire.local_gid, gid, sizeof(gid));
		AGENT(x, "ah", "ah pd=%u dgid=%s%s", x->pd, gid, sgid(x));
		if (need_num(x, "ah", &v))
			return -1;
		x->ah = (unsigned)v;
	}
	return connect_qp(x);
}
