/* SPDX-License-Identifier: MIT */
/* CM MADs of a scenario: send-cm builds one with the codec, expect-cm decodes and compares one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/cm.h"
#include "rocemu/frame.h"
#include "rocemu/opcode.h"
#include "conform.h"

enum { ROCE_PORT = 4791, CM_HOP_LIMIT = 64 };

/* The messages a scenario may send and expect, by name. */
static const struct {
	const char *name;
	uint16_t attr;
} msgs[] = {
	{ "REQ", ROCE_CM_ATTR_REQ }, { "MRA", ROCE_CM_ATTR_MRA },
	{ "REJ", ROCE_CM_ATTR_REJ }, { "REP", ROCE_CM_ATTR_REP },
	{ "RTU", ROCE_CM_ATTR_RTU }, { "DREQ", ROCE_CM_ATTR_DREQ },
	{ "DREP", ROCE_CM_ATTR_DREP },
};

/* The attribute ID of a message name; 0 for none. */
static uint16_t attr_of(const char *name)
{
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
		if (!strcmp(msgs[i].name, name))
			return msgs[i].attr;
	return 0;
}

/* The keys send-cm takes, common and per message; expect-cm's. */
static const char *const send_common[] = { "tid", "cv", "comm", "peercomm", NULL };
static const char *const send_req[] = { "sid", "port", "qpn", "psn", "guid", "transport",
	"mtu", "timeout", "ack_timeout", "retries", "rnr_retry", "retry_count", "resp_res",
	"init_depth", "pkey", "priv", NULL };
static const char *const send_dreq[] = { "qpn", NULL };
static const char *const send_rej[] = { "reason", "msg", NULL };
static const char *const expect_keys[] = { "tid", "comm", "peercomm", "reason", "msg",
	"qpn", "psn", "timeout", "skip", "within", "after", NULL };

static bool in(const char *const *keys, const char *k)
{
	for (; *keys; keys++)
		if (!strcmp(*keys, k))
			return true;
	return false;
}

static const char *const *send_keys(uint16_t attr)
{
	static const char *const none[] = { NULL };

	switch (attr) {
	case ROCE_CM_ATTR_REQ: return send_req;
	case ROCE_CM_ATTR_DREQ: return send_dreq;
	case ROCE_CM_ATTR_REJ: return send_rej;
	default: return none;
	}
}

int cf_cm_check(const struct cf_step *st, char *err, size_t errlen)
{
	bool expect = st->kind == CF_CM_EXPECT;
	uint16_t attr = attr_of(st->word);

	if (!attr && !(expect && !strcmp(st->word, "any"))) {
		snprintf(err, errlen, "'%s' is not a CM message (REQ MRA REJ REP RTU DREQ DREP)",
			 st->word);
		return -1;
	}
	/* conform plays the active side: it answers with none of these */
	if (!expect && (attr == ROCE_CM_ATTR_MRA || attr == ROCE_CM_ATTR_REP)) {
		snprintf(err, errlen, "send-cm sends REQ REJ RTU DREQ DREP, not %s", st->word);
		return -1;
	}
	for (unsigned i = 0; i < st->nargs; i++) {
		const char *k = st->args[i].key;
		bool ok = expect ? in(expect_keys, k)
				 : in(send_common, k) || in(send_keys(attr), k);
		if (!ok) {
			snprintf(err, errlen, "%s %s takes no key '%s'",
				 expect ? "expect-cm" : "send-cm", st->word, k);
			return -1;
		}
	}
	return 0;
}

struct cm_ctx {
	const struct cf_env *e;
	const struct cf_step *st;
	char *err;
	size_t errlen;
	int bad;
};

/* The value of key, def when absent; sets c->bad on a bad expression. */
static uint64_t val(struct cm_ctx *c, const char *key, uint64_t def)
{
	const char *s = cf_arg_get(c->st->args, c->st->nargs, key);
	uint64_t v = def;

	if (s && !c->bad && cf_eval(c->e, s, &v, c->err, c->errlen))
		c->bad = 1;
	return v;
}

/* The IBTA MTU code (1 = 256 ... 5 = 4096) of a path MTU in bytes; 0 if none. */
static uint8_t mtu_code(uint64_t bytes)
{
	for (uint8_t code = 1; code <= 5; code++)
		if (bytes == 128u << code)
			return code;
	return 0;
}

/* The private data of a REQ: the IP CM service header (Annex A11), the
 * addresses conform's and the agent's, then priv=HEX when given. */
static int req_priv(struct cm_ctx *c, const struct cf_wire *w, struct roce_cm_msg *m)
{
	struct roce_cm_ip_hdr h = { .version = ROCE_CM_IP_HDR_VERSION };
	bool v4 = roce_gid_is_ipv4(w->local_gid);
	const char *hex = cf_arg_get(c->st->args, c->st->nargs, "priv");

	h.ip_version = v4 ? 4 : 6;
	h.src_port = (uint16_t)(0xc000 | (c->e->comm & 0x3fff));
	memcpy(v4 ? h.src.v4 : h.src.v6, v4 ? w->local_gid + 12 : w->local_gid, v4 ? 4 : 16);
	memcpy(v4 ? h.dst.v4 : h.dst.v6, v4 ? w->peer_gid + 12 : w->peer_gid, v4 ? 4 : 16);
	int n = roce_cm_ip_hdr_build(&h, m->priv, sizeof(m->priv));
	if (n < 0) {
		snprintf(c->err, c->errlen, "the IP CM header: %s", strerror(-n));
		return -1;
	}
	size_t len = hex ? strlen(hex) : 0;
	if (len % 2 || strspn(hex ? hex : "", "0123456789abcdefABCDEF") != len ||
	    (size_t)n + len / 2 > ROCE_CM_REQ_PRIV_LEN) {
		snprintf(c->err, c->errlen, "priv= is hex bytes, at most %d of them",
			 ROCE_CM_IP_REQ_USER_LEN);
		return -1;
	}
	for (size_t i = 0; i < len / 2; i++) {
		unsigned v;
		sscanf(hex + 2 * i, "%2x", &v);
		m->priv[n + i] = (uint8_t)v;
	}
	m->priv_len = (uint16_t)(n + len / 2);
	return 0;
}

/* A REQ as Linux's rdma_cm sends one on RoCE, from conform's QP. */
static int fill_req(struct cm_ctx *c, const struct cf_wire *w, struct roce_cm_msg *m)
{
	struct roce_cm_req *q = &m->req;
	uint64_t port = val(c, "port", 0);
	uint8_t mtu = mtu_code(val(c, "mtu", c->e->mtu ? c->e->mtu : 1024));

	q->local_comm_id = (uint32_t)val(c, "comm", c->e->comm);
	q->service_id = val(c, "sid", roce_cm_service_id(ROCE_RDMA_PS_TCP, (uint16_t)port));
	/* One CA GUID per conform address, as a host has one. */
	q->local_ca_guid = val(c, "guid", 0x0200000000000000ull |
			       (uint64_t)w->local_gid[12] << 24 | (uint64_t)w->local_gid[13] << 16 |
			       (uint64_t)w->local_gid[14] << 8 | w->local_gid[15]);
	q->local_qpn = (uint32_t)val(c, "qpn", c->e->my_qpn) & 0xffffff;
	q->starting_psn = (uint32_t)val(c, "psn", c->e->psn) & 0xffffff;
	q->responder_resources = (uint8_t)val(c, "resp_res", 1);
	q->initiator_depth = (uint8_t)val(c, "init_depth", 1);
	q->local_cm_response_timeout = q->remote_cm_response_timeout =
		(uint8_t)val(c, "timeout", 17);
	q->transport_type = (uint8_t)val(c, "transport", ROCE_CM_TRANSPORT_RC);
	q->retry_count = (uint8_t)val(c, "retry_count", 7);
	q->rnr_retry_count = (uint8_t)val(c, "rnr_retry", 7);
	q->max_cm_retries = (uint8_t)val(c, "retries", 15);
	q->pkey = (uint16_t)val(c, "pkey", 0xffff);
	q->path_mtu = mtu;
	memcpy(q->primary.local_gid, w->local_gid, 16);
	memcpy(q->primary.remote_gid, w->peer_gid, 16);
	q->primary.local_lid = q->primary.remote_lid = 0xffff; /* RoCE: permissive */
	q->primary.hop_limit = CM_HOP_LIMIT;
	q->primary.local_ack_timeout = (uint8_t)val(c, "ack_timeout", 15);
	if (!mtu && !c->bad) {
		snprintf(c->err, c->errlen, "mtu= is 256, 512, 1024, 2048 or 4096");
		return -1;
	}
	return c->bad ? -1 : req_priv(c, w, m);
}

/* The MAD of a send-cm step, by the codec; its length or -1. */
static int build_mad(struct cm_ctx *c, const struct cf_wire *w, uint64_t tid,
		     uint8_t mad[ROCE_MAD_LEN])
{
	static struct roce_cm_msg m;
	uint32_t comm = (uint32_t)val(c, "comm", c->e->comm);
	uint32_t peer = (uint32_t)val(c, "peercomm", c->e->peer_comm);

	memset(&m, 0, sizeof(m));
	m.attr_id = attr_of(c->st->word);
	m.tid = tid;
	switch (m.attr_id) {
	case ROCE_CM_ATTR_REQ:
		if (fill_req(c, w, &m))
			return -1;
		break;
	case ROCE_CM_ATTR_REJ:
		m.rej.local_comm_id = comm;
		m.rej.remote_comm_id = peer;
		m.rej.reason = (uint16_t)val(c, "reason", ROCE_CM_REJ_CONSUMER_DEFINED);
		m.rej.msg_rejected = (uint8_t)val(c, "msg", ROCE_CM_MSG_REP);
		break;
	case ROCE_CM_ATTR_DREQ:
		m.dreq.local_comm_id = comm;
		m.dreq.remote_comm_id = peer;
		m.dreq.remote_qpn = (uint32_t)val(c, "qpn", c->e->agent_qpn) & 0xffffff;
		break;
	case ROCE_CM_ATTR_RTU:
	case ROCE_CM_ATTR_DREP:
		m.rtu.local_comm_id = comm;
		m.rtu.remote_comm_id = peer;
		break;
	default:
		snprintf(c->err, c->errlen, "send-cm cannot send %s", c->st->word);
		return -1;
	}
	if (c->bad)
		return -1;
	int n = roce_cm_encode(&m, mad);
	if (n < 0) {
		snprintf(c->err, c->errlen, "the codec refuses this %s (a field too wide?)",
			 c->st->word);
		return -1;
	}
	const char *cv = cf_arg_get(c->st->args, c->st->nargs, "cv");
	if (cv) {	/* a class version other than 2, on purpose */
		struct roce_mad_hdr h;
		roce_mad_hdr_parse(mad, ROCE_MAD_LEN, &h);
		h.class_version = (uint8_t)val(c, "cv", ROCE_CM_CLASS_VERSION);
		roce_mad_hdr_write(&h, mad, ROCE_MAD_LEN);
	}
	return c->bad ? -1 : n;
}

int cf_cm_build(const struct cf_env *e, const struct cf_wire *w,
		const struct cf_step *st, uint64_t tid, uint8_t *out, size_t cap,
		struct roce_frame *fp, char *err, size_t errlen)
{
	static uint8_t mad[ROCE_MAD_LEN];
	struct cm_ctx c = { .e = e, .st = st, .err = err, .errlen = errlen };
	struct roce_frame f;

	if (cf_cm_check(st, err, errlen) || build_mad(&c, w, tid, mad) < 0)
		return -1;
	roce_frame_init(&f, roce_gid_is_ipv4(w->local_gid) ? 4 : 6);
	memcpy(f.src_gid, w->local_gid, 16);
	memcpy(f.dst_gid, w->peer_gid, 16);
	f.sport = ROCE_PORT;
	f.ttl = w->ttl;	/* as the kernel sends it */
	f.ib.bth.opcode = ROCE_OP_UD_SEND_ONLY;
	f.ib.bth.dqpn = ROCE_CM_QPN;
	f.ib.bth.pkey = 0xffff;
	f.ib.bth.psn = (uint32_t)tid & 0xffffff;
	f.ib.deth.qkey = ROCE_CM_QP1_QKEY;
	f.ib.deth.src_qp = ROCE_CM_QPN;
	f.ib.payload = mad;
	f.ib.payload_len = f.ib.payload_avail = ROCE_MAD_LEN;
	int n = roce_frame_build(&f, out, cap);
	if (n < 0) {
		snprintf(err, errlen, "the codec cannot build the UD packet of this %s", st->word);
		return -1;
	}
	f.icrc_calc = (uint32_t)out[n - 4] << 24 | (uint32_t)out[n - 3] << 16 |
		      (uint32_t)out[n - 2] << 8 | out[n - 1];
	f.ib.icrc = f.icrc_calc;
	f.ib.op = roce_opcode(ROCE_OP_UD_SEND_ONLY);
	f.ib.exts = f.ib.op->exts;
	*fp = f;
	return n;
}

bool cf_cm_decode(const struct cf_packet *p, struct roce_cm_msg *m)
{
	const struct roce_ib *ib = &p->f.ib;

	return p->parse_rc == 0 && ib->bth.dqpn == ROCE_CM_QPN &&
	       ib->bth.opcode == ROCE_OP_UD_SEND_ONLY &&
	       roce_cm_decode(ib->payload, ib->payload_avail, m) == 0;
}

/* The comm IDs a message carries: its sender's and its receiver's. */
static void ids_of(const struct roce_cm_msg *m, uint32_t *local, uint32_t *remote)
{
	*local = *remote = 0;
	switch (m->attr_id) {
	case ROCE_CM_ATTR_MRA: *local = m->mra.local_comm_id; *remote = m->mra.remote_comm_id; break;
	case ROCE_CM_ATTR_REJ: *local = m->rej.local_comm_id; *remote = m->rej.remote_comm_id; break;
	case ROCE_CM_ATTR_REP: *local = m->rep.local_comm_id; *remote = m->rep.remote_comm_id; break;
	case ROCE_CM_ATTR_RTU: *local = m->rtu.local_comm_id; *remote = m->rtu.remote_comm_id; break;
	case ROCE_CM_ATTR_DREQ:
		*local = m->dreq.local_comm_id;
		*remote = m->dreq.remote_comm_id;
		break;
	case ROCE_CM_ATTR_DREP:
		*local = m->drep.local_comm_id;
		*remote = m->drep.remote_comm_id;
		break;
	case ROCE_CM_ATTR_REQ: *local = m->req.local_comm_id; break;
	default: break;
	}
}

bool cf_cm_foreign(const struct cf_env *e, const struct cf_packet *p)
{
	struct roce_cm_msg m;
	uint32_t local, remote;

	if (p->parse_rc || p->f.ib.bth.dqpn != ROCE_CM_QPN)
		return false;
	if (!e->cm)
		return true;	/* no CM in this scenario: a late one's */
	if (!cf_cm_decode(p, &m) || m.attr_id == ROCE_CM_ATTR_REQ)
		return false;
	ids_of(&m, &local, &remote);
	return remote - e->comm >= CF_COMM_SPAN;
}

void cf_cm_describe(const struct cf_packet *p, char *out, size_t len)
{
	struct roce_cm_msg m;
	uint32_t local, remote;

	if (!cf_cm_decode(p, &m)) {
		snprintf(out, len, "a packet to QP1 that is no CM MAD rocemu decodes");
		return;
	}
	ids_of(&m, &local, &remote);
	/* The sender's comm ID and the receiver's, whichever way it went. */
	size_t n = (size_t)snprintf(out, len, "CM %s tid=%#llx from comm %#x to %#x",
				    roce_cm_attr_name(m.attr_id), (unsigned long long)m.tid,
				    local, remote);
	if (n < len && m.attr_id == ROCE_CM_ATTR_REJ)
		snprintf(out + n, len - n, " reason=%u (%s) msg=%u", m.rej.reason,
			 roce_cm_rej_reason_name(m.rej.reason), m.rej.msg_rejected);
	else if (n < len && m.attr_id == ROCE_CM_ATTR_REP)
		snprintf(out + n, len - n, " qpn=%#x psn=%#x", m.rep.local_qpn,
			 m.rep.starting_psn);
	else if (n < len && m.attr_id == ROCE_CM_ATTR_MRA)
		snprintf(out + n, len - n, " msg=%u timeout=%u", m.mra.msg_mraed,
			 m.mra.service_timeout);
	else if (n < len && m.attr_id == ROCE_CM_ATTR_DREQ)
		snprintf(out + n, len - n, " qpn=%#x", m.dreq.remote_qpn);
}

/* The message's value for an expect-cm key; false if it has none. */
static bool cm_field(const struct roce_cm_msg *m, const char *k, uint64_t *v)
{
	uint32_t local, remote;
	uint16_t a = m->attr_id;

	ids_of(m, &local, &remote);
	struct { const char *key; bool has; uint64_t v; } t[] = {
		{ "tid", true, m->tid },
		{ "comm", a != ROCE_CM_ATTR_REQ, remote },
		{ "peercomm", true, local },
		{ "reason", a == ROCE_CM_ATTR_REJ, m->rej.reason },
		{ "msg", a == ROCE_CM_ATTR_REJ || a == ROCE_CM_ATTR_MRA,
		  a == ROCE_CM_ATTR_REJ ? m->rej.msg_rejected : m->mra.msg_mraed },
		{ "qpn", a == ROCE_CM_ATTR_REP || a == ROCE_CM_ATTR_DREQ,
		  a == ROCE_CM_ATTR_REP ? m->rep.local_qpn : m->dreq.remote_qpn },
		{ "psn", a == ROCE_CM_ATTR_REP, m->rep.starting_psn },
		{ "timeout", a == ROCE_CM_ATTR_MRA, m->mra.service_timeout },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].key, k)) {
			*v = t[i].v;
			return t[i].has;
		}
	return false;
}

bool cf_cm_skipped(const struct cf_step *st, const struct cf_packet *p)
{
	const char *skip = cf_arg_get(st->args, st->nargs, "skip");
	struct roce_cm_msg m;

	return skip && cf_cm_decode(p, &m) && strcmp(skip, st->word) &&
	       !strcmp(roce_cm_attr_name(m.attr_id), skip);
}

int cf_cm_match(struct cf_env *e, const struct cf_step *st,
		const struct cf_packet *p, char *why, size_t whylen)
{
	struct roce_cm_msg m;
	const struct roce_ib *ib = &p->f.ib;

	if (p->parse_rc || !p->icrc_ok) {
		snprintf(why, whylen, "not a RoCEv2 packet with a good ICRC");
		return 0;
	}
	if (ib->bth.dqpn != ROCE_CM_QPN || ib->bth.opcode != ROCE_OP_UD_SEND_ONLY ||
	    ib->deth.qkey != ROCE_CM_QP1_QKEY || ib->deth.src_qp != ROCE_CM_QPN) {
		snprintf(why, whylen, "not a UD SEND Only from QP1 to QP1 with the GSI Q_Key");
		return 0;
	}
	if (!cf_cm_decode(p, &m)) {
		snprintf(why, whylen, "a MAD of %u bytes that is no CM message",
			 ib->payload_avail);
		return 0;
	}
	if (strcmp(st->word, "any") && attr_of(st->word) != m.attr_id) {
		snprintf(why, whylen, "CM %s, not %s", roce_cm_attr_name(m.attr_id), st->word);
		return 0;
	}
	for (unsigned i = 0; i < st->nargs; i++) {
		const char *k = st->args[i].key, *want = st->args[i].val;
		uint64_t have, w;
		if (!strcmp(want, "any") || !strcmp(k, "within") || !strcmp(k, "after") ||
		    !strcmp(k, "skip"))
			continue;
		if (cf_eval(e, want, &w, why, whylen))
			return -1;
		if (!cm_field(&m, k, &have)) {
			snprintf(why, whylen, "a %s has no %s", roce_cm_attr_name(m.attr_id), k);
			return 0;
		}
		if (have != w) {
			snprintf(why, whylen, "%s is %#llx, not %#llx (%s)", k,
				 (unsigned long long)have, (unsigned long long)w, want);
			return 0;
		}
	}
	uint32_t local, remote;
	ids_of(&m, &local, &remote);
	if (local)
		e->peer_comm = local;
	e->rtid = m.tid;
	if (m.attr_id == ROCE_CM_ATTR_REP) {
		e->agent_qpn = m.rep.local_qpn;
		e->repsn = m.rep.starting_psn;
	}
	return 1;
}
