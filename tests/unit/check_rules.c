/* SPDX-License-Identifier: MIT */
/* The rule checker: clean captures pass, and each faulty exchange built here is caught under the right rule. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "rocemu/check.h"
#include "rocemu/flow.h"
#include "rocemu/pcapio.h"
#include "rocemu/rules.h"

enum { MAX_FRAMES = 64, MAX_FOUND = 64 };

/* What a run found. */
struct found {
	unsigned n, errors, losses, reasons;
	struct roce_violation v[MAX_FOUND];
};

static void collect(const struct roce_violation *v, void *arg)
{
	struct found *r = arg;

	ck_assert_uint_ge(v->packets, 1);
	if (v->cls == ROCE_CHECK_REASON) {
		r->reasons++;	/* no finding: what a NAK means */
		return;
	}
	if (v->cls == ROCE_CHECK_LOSS) {
		r->losses += v->packets;
	} else {
		/* Every error names a rule of the book, which cites the
		 * section the finding gives. */
		r->errors++;
		ck_assert_ptr_nonnull(v->id);
		const struct roce_rule *b = roce_rule_find(v->id);
		ck_assert_msg(b != NULL, "rule %s is not in the book", v->id);
		ck_assert_str_eq(v->rule, b->section);
	}
	if (r->n < MAX_FOUND)
		r->v[r->n++] = *v;
}

/* Frames as bytes, each parsed, classified and judged as the tool does. */
struct cap {
	unsigned n;
	size_t len[MAX_FRAMES];
	size_t cut[MAX_FRAMES];	/* bytes captured, when not all */
	uint64_t ts[MAX_FRAMES];	/* capture time, ns; 0: none given */
	uint8_t buf[MAX_FRAMES][ROCE_FRAME_MAX];
};

static void judge(const struct cap *cap, uint32_t mtu, struct found *r)
{
	struct roce_flows *t = roce_flows_new();
	struct roce_check *c = roce_check_new(mtu, collect, r);

	ck_assert(t && c);
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < cap->n; i++) {
		struct roce_frame f;
		const char *why = NULL;
		unsigned dir = 0, flow = ROCE_CHECK_NO_FLOW;
		enum roce_flow_kind kind = ROCE_FLOW_OTHER;
		size_t caplen = cap->cut[i] ? cap->cut[i] : cap->len[i];
		int rc = roce_frame_parse(ROCE_LINK_ETH, cap->buf[i], caplen,
					  cap->len[i], &f, &why);
		ck_assert_int_ne(rc, -ENOMSG);
		if (cap->ts[i])
			roce_check_time(c, cap->ts[i]);
		int id = roce_flows_classify(t, &f, i + 1, &dir);
		if (id >= 0) {
			flow = (unsigned)id;
			kind = roce_flows_get(t, flow)->kind;
		}
		ck_assert_int_eq(roce_check_packet(c, i + 1, &f, rc, why, flow,
						   dir, kind), 0);
	}
	roce_check_finish(c);
	ck_assert_uint_eq(roce_check_errors(c), r->errors);
	ck_assert_uint_eq(roce_check_losses(c), r->losses);
	ck_assert_uint_eq(roce_check_reasons(c), r->reasons);
	roce_check_free(c);
	roce_flows_free(t);
}

static const uint8_t ip_a[4] = { 10, 0, 0, 1 }, ip_b[4] = { 10, 0, 0, 2 };
static uint8_t data[8192];

/* One packet: requests go from A (QP 0x11) to B (QP 0x12), answers back. */
struct pk {
	uint8_t op;
	uint32_t psn;
	uint32_t plen;		/* payload */
	bool ackreq;
	uint32_t reth_len;	/* RETH length, when the opcode has one */
	uint8_t syndrome;	/* AETH */
	uint32_t msn;
	uint64_t va;		/* RETH or AtomicETH address */
};

static void add(struct cap *cap, struct pk p)
{
	struct roce_frame f;
	const struct roce_opcode_info *oi = roce_opcode(p.op);

	ck_assert_ptr_nonnull(oi);
	ck_assert_uint_lt(cap->n, MAX_FRAMES);
	bool req = oi->flags & ROCE_OPF_REQ;
	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, req ? ip_a : ip_b);
	roce_gid_from_ipv4(f.dst_gid, req ? ip_b : ip_a);
	f.sport = 0xc000;
	f.ib.bth.opcode = p.op;
	f.ib.bth.dqpn = req ? 0x12 : 0x11;
	f.ib.bth.psn = p.psn;
	f.ib.bth.ackreq = p.ackreq;
	f.ib.bth.pad = (uint8_t)roce_pad_len(p.plen);
	f.ib.payload = data;
	f.ib.payload_len = p.plen;
	f.ib.reth = (struct roce_reth){ p.va ? p.va : 0x10000, 0x77,
					p.reth_len };
	f.ib.atmeth = (struct roce_atmeth){ p.va, 0x77, 1, 0 };
	f.ib.aeth = (struct roce_aeth){ p.syndrome, p.msn };
	f.ib.deth = (struct roce_deth){ 0x1234, 0, 0x11 };
	int n = roce_frame_build(&f, cap->buf[cap->n], ROCE_FRAME_MAX);
	ck_assert_int_gt(n, 0);
	cap->cut[cap->n] = 0;
	cap->ts[cap->n] = 0;
	cap->len[cap->n++] = (size_t)n;
}

/* Stamps the capture's frames from..n-1 one microsecond apart from t ns
 * on (a time line for the rules that weigh time). */
static void stamp(struct cap *cap, unsigned from, uint64_t t)
{
	for (unsigned i = from; i < cap->n; i++, t += 1000)
		cap->ts[i] = t;
}

#define ACK(psn_, msn_) \
	((struct pk){ .op = ROCE_OP_RC_ACK, .psn = (psn_), \
		      .syndrome = ROCE_AETH_ACK_NO_CREDITS, .msn = (msn_) })
#define SEND_ONLY(psn_) \
	((struct pk){ .op = ROCE_OP_RC_SEND_ONLY, .psn = (psn_), .plen = 64, \
		      .ackreq = true })

/* Exactly one finding, an error under rule (a rule book ID) at frame no. */
/* What the rules found, on stderr: a failing test's context. */
static void show(const struct found *r)
{
	for (unsigned i = 0; i < r->n; i++)
		fprintf(stderr, "  found: frame %llu %s %s %s\n",
			(unsigned long long)r->v[i].no,
			r->v[i].id ? r->v[i].id : "-", r->v[i].rule,
			r->v[i].text);
}

/* Exactly these many errors and losses, whatever else was found. */
static void counts(const struct found *r, unsigned errors, unsigned losses)
{
	show(r);
	ck_assert_uint_eq(r->errors, errors);
	ck_assert_uint_eq(r->losses, losses);
}

static void one_error(const struct found *r, const char *rule, uint64_t no)
{
	show(r);
	ck_assert_uint_eq(r->errors, 1);
	ck_assert_uint_eq(r->losses, 0);
	ck_assert_str_eq(r->v[0].id, rule);
	ck_assert_uint_eq(r->v[0].no, no);
	ck_assert_int_eq(r->v[0].cls, ROCE_CHECK_ERROR);
}

static void nothing(const struct found *r)
{
	show(r);
	ck_assert_uint_eq(r->n, 0);
}

/* A correct exchange with every kind of message: the base the faulty
 * ones below change one thing in. MTU 1024; the MSN counts messages. */
static void good_exchange(struct cap *c)
{
	add(c, (struct pk){ .op = ROCE_OP_RC_SEND_FIRST, .psn = 100,
			    .plen = 1024 });
	add(c, (struct pk){ .op = ROCE_OP_RC_SEND_MIDDLE, .psn = 101,
			    .plen = 1024 });
	add(c, (struct pk){ .op = ROCE_OP_RC_SEND_LAST, .psn = 102,
			    .plen = 100, .ackreq = true });
	add(c, ACK(102, 1));
	add(c, (struct pk){ .op = ROCE_OP_RC_RDMA_WRITE_ONLY, .psn = 103,
			    .plen = 300, .reth_len = 300, .ackreq = true });
	add(c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 104,
			    .reth_len = 2000, .ackreq = true });
	add(c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST,
			    .psn = 104, .plen = 1024, .msn = 3,
			    .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	add(c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_RESPONSE_LAST,
			    .psn = 105, .plen = 976, .msn = 3,
			    .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	add(c, (struct pk){ .op = ROCE_OP_RC_CMP_SWAP, .psn = 106,
			    .va = 0x2000, .ackreq = true });
	add(c, (struct pk){ .op = ROCE_OP_RC_ATOMIC_ACK, .psn = 106, .msn = 4,
			    .syndrome = ROCE_AETH_ACK_NO_CREDITS });
}

START_TEST(test_good_exchange_passes)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	good_exchange(&c);
	judge(&c, 0, &r);
	nothing(&r);
	judge(&c, 1024, &r);
	nothing(&r);
}
END_TEST

START_TEST(test_skipped_psn_is_an_error)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, SEND_ONLY(102));	/* 101 never sent, never answered */
	judge(&c, 0, &r);
	one_error(&r, "PSN-ORDER", 2);
}
END_TEST

START_TEST(test_middle_without_first)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, (struct pk){ .op = ROCE_OP_RC_SEND_MIDDLE, .psn = 101,
			     .plen = 1024 });
	add(&c, (struct pk){ .op = ROCE_OP_RC_SEND_LAST, .psn = 102,
			     .plen = 8, .ackreq = true });
	add(&c, ACK(102, 2));
	judge(&c, 0, &r);
	one_error(&r, "MSG-OPCODES", 2);
}
END_TEST

START_TEST(test_new_message_inside_one)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_SEND_FIRST, .psn = 100,
			     .plen = 1024 });
	add(&c, SEND_ONLY(101));
	add(&c, ACK(101, 1));
	judge(&c, 0, &r);
	ck_assert_uint_ge(r.errors, 1);
	ck_assert_str_eq(r.v[0].id, "MSG-OPCODES");
	ck_assert_uint_eq(r.v[0].no, 2);
}
END_TEST

/* The READ asks for 2000 bytes: 1024 + 976. Each row returns another
 * total, the LAST still the frame that shows it. */
static const uint32_t last_len[] = { 900, 1000, 1024 };

START_TEST(test_read_response_wrong_length)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 104,
			     .reth_len = 2000, .ackreq = true });
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST,
			     .psn = 104, .plen = 1024,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_RESPONSE_LAST,
			     .psn = 105, .plen = last_len[_i],
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	ck_assert_uint_ne(1024 + last_len[_i], 2000);
	judge(&c, 0, &r);
	one_error(&r, "READ-RESPONSE", 3);
}
END_TEST

/* An error under rule (a rule book ID) at frame no, among others. */
static bool has(const struct found *r, const char *rule, uint64_t no)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->v[i].id && !strcmp(r->v[i].id, rule) &&
		    r->v[i].no == no)
			return true;
	return false;
}

START_TEST(test_read_response_wrong_psns)
{
	static struct cap c;
	struct found r;

	/* 2048 bytes at MTU 1024: two response packets, PSNs 104 and 105,
	 * and a SEND at 106. The right bytes come, but the LAST at 106. */
	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 104,
			     .reth_len = 2048, .ackreq = true });
	add(&c, SEND_ONLY(106));
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST,
			     .psn = 104, .plen = 1024,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_RESPONSE_LAST,
			     .psn = 106, .plen = 1024,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	judge(&c, 1024, &r);
	ck_assert(has(&r, "READ-RESPONSE", 4));
	ck_assert_uint_eq(r.losses, 0);

	/* Without the SEND, 106 is a PSN the requester never sent: the
	 * LAST may answer a READ there the capture lost, until the capture
	 * ends with no request showing one. */
	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 104,
			     .reth_len = 2048, .ackreq = true });
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST,
			     .psn = 104, .plen = 1024,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_RESPONSE_LAST,
			     .psn = 106, .plen = 1024,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	judge(&c, 1024, &r);
	one_error(&r, "ANSWER-SENT-PSN", 3);
}
END_TEST

/* ---- READ response opcode sequences --------------------------------- */

enum { RSP_MAX = 6 };

#define RF ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST
#define RM ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE
#define RL ROCE_OP_RC_RDMA_READ_RESPONSE_LAST
#define RO ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY

/* A READ of len bytes at PSN 104 (after a SEND at MTU 1024 when
 * mtu_seen, so that the flow's MTU is known), answered by rsp: each
 * wrong one must be named under 9.4.3 at frame bad_no, and errors
 * findings in all (another rule may see the same fault from its side). */
static const struct read_seq {
	const char *what;
	uint32_t len;
	bool mtu_seen;
	uint32_t given_mtu;	/* --mtu */
	struct { uint8_t op; uint32_t psn, plen; } rsp[RSP_MAX];
	uint64_t bad_no;	/* frame numbers count the READ as 1 */
	unsigned errors;
} bad_reads[] = {
	{ "MIDDLE, MIDDLE, LAST", 3072, false, 0,
	  { { RM, 104, 1024 }, { RM, 105, 1024 }, { RL, 106, 1024 } }, 2, 1 },
	{ "FIRST, FIRST, LAST", 3072, false, 0,
	  { { RF, 104, 1024 }, { RF, 105, 1024 }, { RL, 106, 1024 } }, 3, 1 },
	{ "ONLY for a 2-packet READ, MTU seen", 2048, true, 0,
	  { { RO, 104, 2048 } }, 2, 2 },
	{ "ONLY for a 2-packet READ, --mtu", 2048, false, 1024,
	  { { RO, 104, 2048 } }, 2, 2 },
	{ "ONLY for 8192 bytes, no MTU can carry it in one", 8192, false, 0,
	  { { RO, 104, 8192 } }, 2, 2 },
	{ "LAST, LAST", 2048, false, 0,
	  { { RL, 104, 1024 }, { RL, 105, 1024 } }, 2, 1 },
	{ "MIDDLE where the READ's last packet goes", 3072, false, 0,
	  { { RF, 104, 1024 }, { RM, 105, 1024 }, { RM, 106, 1024 },
	    { RM, 107, 1024 }, { RL, 108, 1024 } }, 4, 2 },
	{ "LAST early after a capture gap", 4096, false, 0,
	  { { RF, 104, 1024 }, { RL, 106, 1024 } }, 3, 1 },
	{ "FIRST for a one-packet READ", 512, true, 0,
	  { { RF, 104, 1024 }, { RL, 105, 8 } }, 2, 2 },
};

static uint64_t read_exchange(struct cap *c, const struct read_seq *s)
{
	uint64_t base = 0;

	c->n = 0;
	if (s->mtu_seen) {
		add(c, (struct pk){ .op = ROCE_OP_RC_SEND_FIRST, .psn = 100,
				    .plen = 1024 });
		add(c, (struct pk){ .op = ROCE_OP_RC_SEND_MIDDLE, .psn = 101,
				    .plen = 1024 });
		add(c, (struct pk){ .op = ROCE_OP_RC_SEND_LAST, .psn = 102,
				    .plen = 10 });
		add(c, (struct pk){ .op = ROCE_OP_RC_SEND_ONLY, .psn = 103,
				    .plen = 10, .ackreq = true });
		add(c, ACK(103, 2));
		base = c->n;
	}
	add(c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 104,
			    .reth_len = s->len, .ackreq = true });
	for (unsigned i = 0; i < RSP_MAX && s->rsp[i].op; i++)
		add(c, (struct pk){ .op = s->rsp[i].op, .psn = s->rsp[i].psn,
				    .plen = s->rsp[i].plen, .msn = 3,
				    .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	return base;
}

START_TEST(test_read_response_bad_sequence)
{
	static struct cap c;
	struct found r;
	const struct read_seq *s = &bad_reads[_i];
	uint64_t base = read_exchange(&c, s);

	judge(&c, s->given_mtu, &r);
	for (unsigned i = 0; i < r.n; i++)
		fprintf(stderr, "  %s: frame %llu %s %s\n", s->what,
			(unsigned long long)r.v[i].no, r.v[i].rule,
			r.v[i].text);
	ck_assert_msg(has(&r, "READ-RESPONSE", base + s->bad_no),
		      "%s: no 9.4.3 finding at frame %llu", s->what,
		      (unsigned long long)(base + s->bad_no));
	ck_assert_uint_eq(r.errors, s->errors);
	ck_assert_uint_eq(r.losses, 0);
}
END_TEST

/* The READ of 3072 bytes at PSN 104, MTU 1024, answered and re-asked in
 * the ways a requester's retransmission allows (9.7.5.1.1): a duplicate
 * READ is executed again and its response starts over; a READ re-issued
 * for what is missing is answered from its own PSN. */
START_TEST(test_read_response_restarts_pass)
{
	static struct cap c;
	struct found r;
	const struct pk read = { .op = ROCE_OP_RC_RDMA_READ_REQUEST,
				 .psn = 104, .reth_len = 3072,
				 .ackreq = true };
	const struct pk first = { .op = RF, .psn = 104, .plen = 1024,
				  .syndrome = ROCE_AETH_ACK_NO_CREDITS,
				  .msn = 1 };
	struct pk middle = { .op = RM, .psn = 105, .plen = 1024 };
	struct pk last = { .op = RL, .psn = 106, .plen = 1024,
			   .syndrome = ROCE_AETH_ACK_NO_CREDITS, .msn = 1 };

	/* the whole READ again, its response from the start */
	c.n = 0;
	add(&c, read);
	add(&c, first);
	add(&c, middle);
	add(&c, read);
	add(&c, first);
	add(&c, middle);
	add(&c, last);
	judge(&c, 0, &r);
	nothing(&r);

	/* re-issued from PSN 105 for the last 2048 bytes */
	c.n = 0;
	add(&c, read);
	add(&c, first);
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 105,
			     .reth_len = 2048, .va = 0x10400,
			     .ackreq = true });
	add(&c, (struct pk){ .op = RF, .psn = 105, .plen = 1024,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS, .msn = 1 });
	add(&c, last);
	judge(&c, 0, &r);
	nothing(&r);

	/* re-issued from PSN 106 for the last 1024: one ONLY answers it */
	c.n = 0;
	add(&c, read);
	add(&c, first);
	add(&c, middle);
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 106,
			     .reth_len = 1024, .va = 0x10800,
			     .ackreq = true });
	add(&c, (struct pk){ .op = RO, .psn = 106, .plen = 1024,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS, .msn = 1 });
	judge(&c, 0, &r);
	nothing(&r);
}
END_TEST

/* A READ of 2048 bytes at PSN 104 and the requester's next request at
 * 106: the READ spent two PSNs, which only MTU 1024 gives it (9.4.3).
 * One ONLY cannot answer it, though no FIRST or MIDDLE ever showed the
 * MTU. */
START_TEST(test_read_only_for_two_psns)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 104,
			     .reth_len = 2048, .ackreq = true });
	add(&c, SEND_ONLY(106));
	add(&c, (struct pk){ .op = RO, .psn = 104, .plen = 2048, .msn = 1,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	add(&c, ACK(106, 2));
	judge(&c, 0, &r);
	one_error(&r, "READ-RESPONSE", 3);
}
END_TEST

/* Two READs of 3072 bytes at MTU 1024, PSNs 104..106 and 107..109,
 * then a SEND at 110: the capture lost the second READ and, of the
 * answers, the first READ's LAST and the second's FIRST. The MIDDLE at
 * 108 answers the READ the capture lost, not the first: capture loss,
 * no error. */
START_TEST(test_read_response_after_lost_read)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 104,
			     .reth_len = 3072, .ackreq = true });
	add(&c, (struct pk){ .op = RF, .psn = 104, .plen = 1024, .msn = 1,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	add(&c, (struct pk){ .op = RM, .psn = 105, .plen = 1024 });
	add(&c, SEND_ONLY(110));
	add(&c, (struct pk){ .op = RM, .psn = 108, .plen = 1024 });
	add(&c, (struct pk){ .op = RL, .psn = 109, .plen = 1024, .msn = 2,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	add(&c, ACK(110, 3));
	judge(&c, 0, &r);
	counts(&r, 0, 3);
}
END_TEST

/* READs of 700 bytes at PSNs 104 and 106: two PSNs each, which only
 * MTU 512 gives. No FIRST or MIDDLE has shown the MTU when the LAST at
 * 105 comes (the capture lost the FIRST before it): it answers the
 * first READ. */
START_TEST(test_read_response_mtu_from_span)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 104,
			     .reth_len = 700, .ackreq = true });
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 106,
			     .reth_len = 700, .ackreq = true });
	add(&c, (struct pk){ .op = RL, .psn = 105, .plen = 188, .msn = 1,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	add(&c, (struct pk){ .op = RF, .psn = 106, .plen = 512, .msn = 2,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	add(&c, (struct pk){ .op = RL, .psn = 107, .plen = 188, .msn = 2,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	judge(&c, 0, &r);
	nothing(&r);
}
END_TEST

/* READs of 700 bytes at MTU 512, PSNs 104..105 and 106..107, the second
 * lost by the capture with the answers at 105 and 106: the LAST at 107
 * comes before any request shows 106 was sent. The READ at 108 shows
 * it: capture loss, no error. */
START_TEST(test_read_response_before_the_gap_shows)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 104,
			     .reth_len = 700, .ackreq = true });
	add(&c, (struct pk){ .op = RF, .psn = 104, .plen = 512, .msn = 1,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	add(&c, (struct pk){ .op = RL, .psn = 107, .plen = 188, .msn = 2,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 108,
			     .reth_len = 700, .ackreq = true });
	add(&c, (struct pk){ .op = RF, .psn = 108, .plen = 512, .msn = 3,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	add(&c, (struct pk){ .op = RL, .psn = 109, .plen = 188, .msn = 3,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	judge(&c, 0, &r);
	counts(&r, 0, 2);
}
END_TEST

/* A READ response where the requester sent a SEND: no READ to answer. */
START_TEST(test_read_response_for_no_read)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, (struct pk){ .op = RO, .psn = 100, .plen = 64,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS, .msn = 1 });
	judge(&c, 0, &r);
	one_error(&r, "READ-RESPONSE-FOR-READ", 2);
}
END_TEST

/* A NAK that cannot answer the request at its PSN. */
static const struct {
	uint8_t req_op;
	uint8_t syndrome;
	const char *rule;
} bad_naks[] = {
	/* remote access error for a SEND: no R_Key to refuse */
	{ ROCE_OP_RC_SEND_ONLY, ROCE_AETH_NAK_REM_ACCESS, "ACCESS-NAK-FITS" },
	/* RNR for a WRITE without immediate: it needs no receive WQE */
	{ ROCE_OP_RC_RDMA_WRITE_ONLY, ROCE_AETH_RNR_NAK << 5 | 1,
	  "RNR-NAK-FITS" },
	/* a NAK code the table reserves */
	{ ROCE_OP_RC_SEND_ONLY, ROCE_AETH_NAK << 5 | 9, "AETH-RESERVED" },
};

START_TEST(test_nak_that_does_not_fit)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, ACK(100, 1));
	add(&c, (struct pk){ .op = bad_naks[_i].req_op, .psn = 101,
			     .plen = 64, .reth_len = 64, .ackreq = true });
	add(&c, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 101, .msn = 1,
			     .syndrome = bad_naks[_i].syndrome });
	judge(&c, 0, &r);
	one_error(&r, bad_naks[_i].rule, 4);
}
END_TEST

START_TEST(test_fitting_naks_pass)
{
	static struct cap c;
	struct found r;

	/* RNR for a SEND, remote access for a WRITE, PSN sequence error
	 * naming a PSN that was sent and then going back to it. */
	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 100,
			     .syndrome = ROCE_AETH_RNR_NAK << 5 | 1 });
	add(&c, SEND_ONLY(100));
	add(&c, ACK(100, 1));
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_WRITE_ONLY, .psn = 101,
			     .plen = 64, .reth_len = 64, .ackreq = true });
	add(&c, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 101, .msn = 1,
			     .syndrome = ROCE_AETH_NAK_REM_ACCESS });
	judge(&c, 0, &r);
	nothing(&r);
	/* a SEND with Invalidate names an R_Key: any NAK may answer it (a
	 * capture of its own: the fatal NAK above ends that QP's work) */
	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, ACK(100, 1));
	add(&c, (struct pk){ .op = ROCE_OP_RC_SEND_ONLY_INV, .psn = 101,
			     .plen = 64, .ackreq = true });
	add(&c, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 101, .msn = 1,
			     .syndrome = ROCE_AETH_NAK_REM_ACCESS });
	judge(&c, 0, &r);
	nothing(&r);
}
END_TEST

START_TEST(test_nak_seq_beyond_what_was_sent)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, SEND_ONLY(101));
	add(&c, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 102, .msn = 2,
			     .syndrome = ROCE_AETH_NAK_PSN_SEQ });
	judge(&c, 0, &r);
	ck_assert_uint_ge(r.errors, 1);
	ck_assert_str_eq(r.v[0].id, "SEQNAK-SENT");
	ck_assert_uint_eq(r.v[0].no, 3);
}
END_TEST

START_TEST(test_bad_icrc)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	good_exchange(&c);
	c.buf[4][c.len[4] - 1] ^= 0x01;	/* last ICRC byte of the WRITE */
	judge(&c, 0, &r);
	one_error(&r, "ICRC", 5);
}
END_TEST

/* Frames a short snapshot length cut: their ICRC is not judged, and one
 * cut inside its RETH still counts for its PSN. Judged whole, the same
 * bytes are an ICRC error: the test can fail. */
START_TEST(test_truncated_frames_not_judged)
{
	static struct cap c;
	struct found r;
	size_t hdrs = ROCE_ETH_HLEN + ROCE_IPV4_HLEN + ROCE_UDP_HLEN;

	c.n = 0;
	good_exchange(&c);
	c.buf[4][c.len[4] - 1] ^= 0x01;	/* the WRITE's ICRC */
	c.buf[0][c.len[0] - 1] ^= 0x01;	/* the SEND FIRST's */
	c.cut[4] = hdrs + ROCE_BTH_LEN + 8;	/* half its RETH */
	c.cut[0] = c.len[0] - 100;
	judge(&c, 0, &r);
	nothing(&r);
	c.cut[4] = c.cut[0] = 0;
	judge(&c, 0, &r);
	ck_assert_uint_eq(r.errors, 2);
	ck_assert_str_eq(r.v[0].id, "ICRC");
}
END_TEST

/* UD has two opcodes; its range's others are no operation. */
START_TEST(test_ud_only_send_only)
{
	static struct cap c;
	struct found r;
	size_t bth = ROCE_ETH_HLEN + ROCE_IPV4_HLEN + ROCE_UDP_HLEN;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_UD_SEND_ONLY, .psn = 1,
			     .plen = 16 });
	add(&c, (struct pk){ .op = ROCE_OP_UD_SEND_ONLY, .psn = 2,
			     .plen = 16 });
	judge(&c, 0, &r);
	nothing(&r);
	ck_assert_uint_eq(c.buf[1][bth], ROCE_OP_UD_SEND_ONLY);
	c.buf[1][bth] = ROCE_OP_UD_SEND_ONLY - 4;	/* a "SEND_FIRST" */
	judge(&c, 0, &r);
	one_error(&r, "UD-OPCODES", 2);
}
END_TEST

/* A malformed request is reported once, as malformed: its PSN still
 * counts, so no gap follows it. */
START_TEST(test_malformed_reported_once)
{
	static struct cap c;
	struct found r;
	size_t bth = ROCE_ETH_HLEN + ROCE_IPV4_HLEN + ROCE_UDP_HLEN;

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, SEND_ONLY(101));
	add(&c, SEND_ONLY(102));
	add(&c, ACK(102, 3));
	judge(&c, 0, &r);
	nothing(&r);
	c.buf[1][bth + 1] |= 0x01;	/* BTH TVer 1 */
	judge(&c, 0, &r);
	one_error(&r, "HEADERS", 2);
}
END_TEST

START_TEST(test_misaligned_atomic)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_FETCH_ADD, .psn = 7,
			     .va = 0x2000 + 4, .ackreq = true });
	add(&c, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 7,
			     .syndrome = ROCE_AETH_NAK_INV_REQ });
	judge(&c, 0, &r);
	one_error(&r, "ATOMIC-ALIGN", 1);
}
END_TEST

START_TEST(test_atomic_ack_for_a_send)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, SEND_ONLY(7));
	add(&c, (struct pk){ .op = ROCE_OP_RC_ATOMIC_ACK, .psn = 7, .msn = 1,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	judge(&c, 0, &r);
	one_error(&r, "ATOMIC-ACK-FOR-ATOMIC", 2);
}
END_TEST

START_TEST(test_ack_for_psn_never_sent)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, ACK(100, 1));
	add(&c, SEND_ONLY(101));
	add(&c, ACK(105, 2));
	judge(&c, 0, &r);
	one_error(&r, "ANSWER-SENT-PSN", 4);
}
END_TEST

START_TEST(test_msn_must_count_messages)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, ACK(100, 1));
	add(&c, SEND_ONLY(101));
	add(&c, SEND_ONLY(102));
	add(&c, ACK(102, 3));	/* coalesced: two more messages, right */
	add(&c, SEND_ONLY(103));
	add(&c, ACK(103, 5));	/* one more message, the MSN says two */
	judge(&c, 0, &r);
	one_error(&r, "MSN-COUNTS", 7);
}
END_TEST

/* An ACK whose MSN already counts an atomic executed after the PSN it
 * acknowledges (rocemu answers so): the MSN fits, nothing to report. */
START_TEST(test_msn_may_count_a_later_atomic)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_WRITE_ONLY, .psn = 0,
			     .plen = 8, .reth_len = 8, .ackreq = true });
	add(&c, SEND_ONLY(1));
	add(&c, (struct pk){ .op = ROCE_OP_RC_FETCH_ADD, .psn = 2,
			     .va = 0x2000, .ackreq = true });
	add(&c, ACK(1, 3));
	add(&c, (struct pk){ .op = ROCE_OP_RC_ATOMIC_ACK, .psn = 2, .msn = 3,
			     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
	judge(&c, 0, &r);
	nothing(&r);
	/* ... but not a fourth message, which was never sent: after an
	 * ACK of the WRITE alone with MSN 1, an MSN of 4 */
	c.n = 3;
	add(&c, ACK(0, 1));
	add(&c, ACK(1, 4));
	judge(&c, 0, &r);
	one_error(&r, "MSN-COUNTS", 5);
}
END_TEST

START_TEST(test_write_reth_length)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_WRITE_ONLY, .psn = 1,
			     .plen = 64, .reth_len = 100, .ackreq = true });
	add(&c, ACK(1, 1));
	judge(&c, 0, &r);
	one_error(&r, "WRITE-LENGTH", 1);
}
END_TEST

/* Reordering on the way: a WRITE's FIRST (4) arrives behind its first
 * MIDDLE (5), whose gap the responder NAKs; the MIDDLE and LAST after
 * the late FIRST do not make a WRITE of 3072 bytes of the 4096 its RETH
 * says: the message's bytes were not all seen in order. Its resend from
 * the NAK's PSN is a whole WRITE again. */
START_TEST(test_write_first_reordered)
{
	static struct cap c;
	struct found r;
	struct pk first = { .op = ROCE_OP_RC_RDMA_WRITE_FIRST, .plen = 1024,
			    .reth_len = 4096 };
	struct pk mid = { .op = ROCE_OP_RC_RDMA_WRITE_MIDDLE, .plen = 1024 };
	struct pk last = { .op = ROCE_OP_RC_RDMA_WRITE_LAST, .plen = 1024,
			   .ackreq = true };

	c.n = 0;
	for (uint32_t psn = 0; psn <= 4; psn += 4) {
		first.psn = psn;
		add(&c, first);
		for (mid.psn = psn + 1; mid.psn < psn + 3; mid.psn++)
			add(&c, mid);
		last.psn = psn + 3;
		add(&c, last);
		if (psn == 0) {
			add(&c, ACK(3, 1));
			/* the next WRITE, its FIRST held back on the way */
			mid.psn = 5;
			add(&c, mid);
			add(&c, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 4,
				.syndrome = ROCE_AETH_NAK_PSN_SEQ, .msn = 1 });
			first.psn = 4;
			add(&c, first);
			mid.psn = 6;
			add(&c, mid);
			last.psn = 7;
			add(&c, last);
		}
	}
	add(&c, ACK(7, 2));
	judge(&c, 1024, &r);
	for (unsigned i = 0; i < r.n; i++)
		ck_assert_str_ne(r.v[i].rule, "WRITE-LENGTH");
	ck_assert_uint_eq(r.errors, 0);
}
END_TEST

/* A FIRST of a size that is no path MTU, and an empty LAST: each one
 * error of 9.7.5.1, and the MTU is not learnt from the odd FIRST. */
START_TEST(test_first_and_last_sizes)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_SEND_FIRST, .psn = 1, .plen = 100 });
	add(&c, (struct pk){ .op = ROCE_OP_RC_SEND_LAST, .psn = 2, .plen = 0,
			     .ackreq = true });
	add(&c, ACK(2, 1));
	judge(&c, 0, &r);
	ck_assert_uint_eq(r.errors, 2);
	ck_assert_str_eq(r.v[0].id, "PAYLOAD-MTU");
	ck_assert_uint_eq(r.v[0].no, 1);
	ck_assert_str_eq(r.v[1].id, "PAYLOAD-MTU");
	ck_assert_uint_eq(r.v[1].no, 2);
}
END_TEST

START_TEST(test_wrong_mtu_given)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	good_exchange(&c);
	judge(&c, 2048, &r);	/* the exchange uses 1024 */
	ck_assert_uint_ge(r.errors, 1);
	ck_assert_str_eq(r.v[0].id, "PAYLOAD-MTU");
	ck_assert_uint_eq(r.v[0].no, 1);
}
END_TEST

START_TEST(test_last_request_without_ackreq)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, SEND_ONLY(1));
	add(&c, ACK(1, 1));
	add(&c, (struct pk){ .op = ROCE_OP_RC_SEND_ONLY, .psn = 2, .plen = 8 });
	judge(&c, 0, &r);
	one_error(&r, "ACKREQ-LAST", 3);
	/* a later message asking, and its ACK, cover it: coalescing */
	add(&c, SEND_ONLY(3));
	add(&c, ACK(3, 3));
	judge(&c, 0, &r);
	nothing(&r);
}
END_TEST

/* Sent twice after a timeout, and a gap the requester fills after a
 * NAK: both legal, neither reported. */
START_TEST(test_retransmission_not_reported)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, SEND_ONLY(101));
	add(&c, SEND_ONLY(100));	/* timeout: go back */
	add(&c, SEND_ONLY(101));
	add(&c, ACK(101, 2));
	add(&c, SEND_ONLY(103));	/* 102 lost on the wire */
	add(&c, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 102, .msn = 2,
			     .syndrome = ROCE_AETH_NAK_PSN_SEQ });
	add(&c, SEND_ONLY(102));
	add(&c, SEND_ONLY(103));
	add(&c, ACK(103, 4));
	judge(&c, 0, &r);
	nothing(&r);
}
END_TEST

START_TEST(test_uc_gap_is_loss)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_UC_SEND_FIRST, .psn = 10,
			     .plen = 1024 });
	/* 11 lost: the receiver drops the rest of this message */
	add(&c, (struct pk){ .op = ROCE_OP_UC_SEND_MIDDLE, .psn = 12,
			     .plen = 1024 });
	add(&c, (struct pk){ .op = ROCE_OP_UC_SEND_LAST, .psn = 13,
			     .plen = 10 });
	add(&c, (struct pk){ .op = ROCE_OP_UC_SEND_ONLY, .psn = 14,
			     .plen = 10 });
	judge(&c, 0, &r);
	ck_assert_uint_eq(r.errors, 0);
	ck_assert_uint_eq(r.losses, 1);
	ck_assert_uint_eq(r.v[0].no, 2);
}
END_TEST

/* ---- real captures -------------------------------------------------- */

static void load(const char *name, struct cap *cap)
{
	char path[4096], err[ROCE_PCAP_ERRLEN];
	struct roce_pcap_reader *rd;
	struct roce_pcap_rec rec;

	snprintf(path, sizeof(path), "%s/%s", t_pcap_dir(), name);
	ck_assert_msg(roce_pcap_open(path, &rd, err) == 0, "%s: %s", path,
		      err);
	ck_assert_uint_eq(roce_pcap_link(rd), ROCE_LINK_ETH);
	cap->n = 0;
	while (roce_pcap_next(rd, &rec, err) == 1) {
		ck_assert_uint_lt(cap->n, MAX_FRAMES);
		ck_assert_uint_eq(rec.caplen, rec.wire_len);
		memcpy(cap->buf[cap->n], rec.data, rec.caplen);
		cap->cut[cap->n] = 0;
		cap->len[cap->n++] = rec.caplen;
	}
	roce_pcap_close(rd);
}

static void drop_frame(struct cap *cap, unsigned i)
{
	for (unsigned j = i; j + 1 < cap->n; j++) {
		memcpy(cap->buf[j], cap->buf[j + 1], cap->len[j + 1]);
		cap->len[j] = cap->len[j + 1];
		cap->cut[j] = cap->cut[j + 1];
	}
	cap->n--;
}

static const char *const golden[] = {
	"rc_send_5000_mtu1024.pcap", "rc_send_64.pcap", "read_bw.pcap",
	"write_bw.pcap", "atomic_cas.pcap", "atomic_fa.pcap", "loss.pcap",
	"rnr_retry.pcap", "rnr_exhausted.pcap", "uc_send.pcap",
	"ud_send.pcap", "srq.pcap", "err_read_bad_rkey.pcap",
	"err_write_bad_rkey.pcap", "err_write_past_end.pcap",
	"send_imm.pcap", "write_imm.pcap", "inline_send.pcap",
};

START_TEST(test_golden_captures_pass)
{
	static struct cap c;
	struct found r;
	char name[256];

	for (unsigned side = 0; side < 2; side++) {
		snprintf(name, sizeof(name), "%s/%s",
			 side ? "rocemu" : "rxe", golden[_i]);
		load(name, &c);
		judge(&c, 0, &r);
		nothing(&r);
	}
}
END_TEST

/*
 * rxe's 5000-byte SEND at MTU 1024: take out a request packet that a
 * later ACK covers (both read from the capture's own bytes). The
 * responder got it, so the capture lost it: a loss, no error.
 */
START_TEST(test_capture_loss_is_not_an_error)
{
	static struct cap c;
	struct found r;
	struct roce_frame f[MAX_FRAMES];
	const char *why;

	load("rxe/rc_send_5000_mtu1024.pcap", &c);
	for (unsigned i = 0; i < c.n; i++)
		ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, c.buf[i],
						  c.len[i], c.len[i], &f[i],
						  &why), 0);
	unsigned victim = MAX_FRAMES;
	for (unsigned i = 1; i < c.n && victim == MAX_FRAMES; i++) {
		if (!(f[i].ib.op->flags & ROCE_OPF_REQ) ||
		    !(f[i].ib.op->flags & ROCE_OPF_MIDDLE))
			continue;
		for (unsigned j = i + 1; j < c.n; j++)
			if (f[j].ib.bth.opcode == ROCE_OP_RC_ACK &&
			    roce_aeth_type(f[j].ib.aeth.syndrome) ==
				    ROCE_AETH_ACK &&
			    roce_psn_cmp(f[j].ib.bth.psn, f[i].ib.bth.psn) >= 0) {
				victim = i;
				break;
			}
	}
	ck_assert_uint_lt(victim, c.n);
	drop_frame(&c, victim);
	judge(&c, 0, &r);
	ck_assert_uint_eq(r.errors, 0);
	ck_assert_uint_eq(r.losses, 1);
	ck_assert_int_eq(r.v[0].cls, ROCE_CHECK_LOSS);
	ck_assert_uint_eq(r.v[0].no, victim + 1);	/* the frame after it */
}
END_TEST

/* The same capture with the gap and no ACK after it: an error. */
START_TEST(test_unexplained_gap_in_real_capture)
{
	static struct cap c;
	struct found r;
	struct roce_frame f;
	const char *why;

	load("rxe/rc_send_5000_mtu1024.pcap", &c);
	/* keep only the requests of the first message, drop its 2nd */
	unsigned keep = 0;
	for (unsigned i = 0; i < c.n; i++) {
		ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, c.buf[i],
						  c.len[i], c.len[i], &f,
						  &why), 0);
		if (!(f.ib.op->flags & ROCE_OPF_REQ))
			break;
		keep = i + 1;
	}
	ck_assert_uint_ge(keep, 3);
	c.n = keep;
	drop_frame(&c, 1);
	judge(&c, 0, &r);
	ck_assert_uint_eq(r.errors, 1);
	ck_assert_str_eq(r.v[0].id, "PSN-ORDER");
	ck_assert_uint_eq(r.v[0].no, 2);
}

/* ---- what a packet obliges the two ends to do next --------------------- */
enum { T0 = 1000000000ull, MS = 1000000 };

/* A WRITE refused with a remote access NAK; later a new SEND. Past the
 * 10 ms grace it is the requester's error (9.7.5.2.4), at frame 3; within
 * it, or in a capture without time, nothing can tell. */
START_TEST(test_request_after_fatal_nak)
{
	static struct cap c;
	struct found r;
	static const struct {
		uint64_t after;		/* ns after the NAK; 0: untimed */
		unsigned errors;
	} k[] = { { 20 * MS, 1 }, { 2 * MS, 0 }, { 0, 0 } };

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_WRITE_ONLY, .psn = 100,
			     .plen = 64, .reth_len = 64, .ackreq = true });
	add(&c, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 100,
			     .syndrome = ROCE_AETH_NAK_REM_ACCESS });
	add(&c, SEND_ONLY(101));
	if (k[_i].after) {
		stamp(&c, 0, T0);
		c.ts[2] = c.ts[1] + k[_i].after;
	}
	judge(&c, 0, &r);
	if (k[_i].errors)
		one_error(&r, "FATAL-NAK-STOPS", 3);
	else
		nothing(&r);
}
END_TEST

/* After its invalid request NAK the responder ACKs: an error (9.7.5.2.3)
 * at the ACK; the same NAK repeated is not. */
START_TEST(test_answer_after_fatal_nak)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, SEND_ONLY(101));
	add(&c, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 101,
			     .syndrome = ROCE_AETH_NAK_INV_REQ });
	add(&c, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 101,
			     .syndrome = ROCE_AETH_NAK_INV_REQ });
	judge(&c, 0, &r);
	nothing(&r);
	add(&c, ACK(101, 2));
	judge(&c, 0, &r);
	one_error(&r, "FATAL-NAK-SILENT", 5);
}
END_TEST

/* PSN sequence NAKs (9.7.5.2.1): 102 is skipped; the NAK names it; the
 * requester goes back. A NAK naming a PSN an ACK covered, a second NAK
 * before any go-back, an ACK past the NAKed PSN without a go-back: each
 * an error at the frame named. */
START_TEST(test_seq_nak_follows_a_gap)
{
	static struct cap c;
	struct found r;
	struct pk nak = { .op = ROCE_OP_RC_ACK, .psn = 102,
			  .syndrome = ROCE_AETH_NAK_PSN_SEQ, .msn = 2 };

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, SEND_ONLY(101));
	add(&c, SEND_ONLY(103));	/* 102 lost on the wire */
	add(&c, nak);
	add(&c, SEND_ONLY(102));	/* back to 102 */
	add(&c, SEND_ONLY(103));
	add(&c, ACK(103, 4));
	judge(&c, 0, &r);
	nothing(&r);

	c.n = 4;			/* the same NAK again, nothing resent */
	add(&c, nak);
	add(&c, SEND_ONLY(102));
	add(&c, SEND_ONLY(103));
	add(&c, ACK(103, 4));
	judge(&c, 0, &r);
	one_error(&r, "SEQNAK-ONCE", 5);

	c.n = 3;			/* never back; 103 acknowledged */
	add(&c, nak);
	add(&c, ACK(103, 4));
	judge(&c, 0, &r);
	counts(&r, 1, 1);		/* and 102 then lost by the capture */
	for (unsigned i = 0; i < r.n; i++)
		if (r.v[i].cls == ROCE_CHECK_ERROR) {
			ck_assert_str_eq(r.v[i].id, "SEQNAK-GO-BACK");
			ck_assert_uint_eq(r.v[i].no, 4);
		}

	c.n = 0;			/* 102 acknowledged, then NAKed */
	add(&c, SEND_ONLY(100));
	add(&c, SEND_ONLY(101));
	add(&c, SEND_ONLY(102));
	add(&c, ACK(102, 3));
	add(&c, SEND_ONLY(103));
	nak.msn = 3;
	add(&c, nak);
	judge(&c, 0, &r);
	one_error(&r, "SEQNAK-COVERED", 6);
}
END_TEST

/* A sequence NAK the requester ignores to the end of the capture, new
 * requests going on 20 ms after it: an error at the NAK (9.7.5.2.1);
 * within 10 ms the capture may have stopped before the go-back. */
START_TEST(test_seq_nak_never_followed)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, SEND_ONLY(101));	/* lost on the wire */
	add(&c, SEND_ONLY(102));
	add(&c, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 101, .msn = 1,
			     .syndrome = ROCE_AETH_NAK_PSN_SEQ });
	add(&c, SEND_ONLY(103));
	stamp(&c, 0, T0);
	c.ts[4] = c.ts[3] + (_i ? 20 : 2) * MS;
	judge(&c, 0, &r);
	counts(&r, _i ? 1 : 0, 0);
	if (_i) {
		ck_assert_str_eq(r.v[0].id, "SEQNAK-GO-BACK");
		ck_assert_uint_eq(r.v[0].no, 4);
		ck_assert_uint_eq(r.v[0].also, 5);
	}
}
END_TEST

/* UC: a gap is loss (9.8.3), unless a link could not have carried it in
 * the time the capture shows: then the sender skipped (9.7.1). */
START_TEST(test_uc_gap_a_link_could_not_carry)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_UC_SEND_ONLY, .psn = 100,
			     .plen = 64 });
	add(&c, (struct pk){ .op = ROCE_OP_UC_SEND_ONLY,
			     .psn = _i ? 100000 : 102, .plen = 64 });
	stamp(&c, 0, T0);
	judge(&c, 0, &r);
	if (_i) {
		one_error(&r, "PSN-JUMP", 2);
		ck_assert_uint_eq(r.v[0].also, 1);
	} else {
		counts(&r, 0, 1);
	}
}
END_TEST

/* An ACKNOWLEDGE's MSN never goes back (9.7.5.2). */
START_TEST(test_msn_goes_back)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, SEND_ONLY(101));
	add(&c, ACK(100, 1));
	add(&c, ACK(101, 2));
	add(&c, ACK(100, 1));	/* a stale MSN */
	judge(&c, 0, &r);
	one_error(&r, "MSN-FORWARD", 5);
}
END_TEST

/* PSNs 101.. skipped up to 101 + jump, the ACK covering them, 1 us after
 * the request before: one packet fits (capture loss), 100000 do not
 * (9.7.1, at the frame after the gap). */
START_TEST(test_loss_a_link_could_carry)
{
	static struct cap c;
	struct found r;
	static const uint32_t jump[] = { 1, 100000 };

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, SEND_ONLY(101 + jump[_i]));
	add(&c, ACK(101 + jump[_i], 1 + jump[_i]));
	stamp(&c, 0, T0);
	judge(&c, 0, &r);
	if (_i == 0)
		counts(&r, 0, 1);
	else
		one_error(&r, "PSN-JUMP", 2);
}
END_TEST
END_TEST

/* The responder-side rules' tests, at the end of this file. */
static void add_resp_tests(TCase *tc);

Suite *rules_suite(void)
{
	Suite *s = suite_create("rules");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, test_good_exchange_passes);
	tcase_add_test(tc, test_skipped_psn_is_an_error);
	tcase_add_test(tc, test_middle_without_first);
	tcase_add_test(tc, test_new_message_inside_one);
	tcase_add_loop_test(tc, test_read_response_wrong_length, 0,
			    sizeof(last_len) / sizeof(last_len[0]));
	tcase_add_test(tc, test_read_response_wrong_psns);
	tcase_add_loop_test(tc, test_read_response_bad_sequence, 0,
			    sizeof(bad_reads) / sizeof(bad_reads[0]));
	tcase_add_test(tc, test_read_response_restarts_pass);
	tcase_add_test(tc, test_read_response_for_no_read);
	tcase_add_test(tc, test_read_only_for_two_psns);
	tcase_add_test(tc, test_read_response_after_lost_read);
	tcase_add_test(tc, test_read_response_mtu_from_span);
	tcase_add_test(tc, test_read_response_before_the_gap_shows);
	tcase_add_loop_test(tc, test_nak_that_does_not_fit, 0,
			    sizeof(bad_naks) / sizeof(bad_naks[0]));
	tcase_add_test(tc, test_fitting_naks_pass);
	tcase_add_test(tc, test_nak_seq_beyond_what_was_sent);
	tcase_add_test(tc, test_bad_icrc);
	tcase_add_test(tc, test_truncated_frames_not_judged);
	tcase_add_test(tc, test_ud_only_send_only);
	tcase_add_test(tc, test_malformed_reported_once);
	tcase_add_test(tc, test_misaligned_atomic);
	tcase_add_test(tc, test_atomic_ack_for_a_send);
	tcase_add_test(tc, test_ack_for_psn_never_sent);
	tcase_add_test(tc, test_msn_must_count_messages);
	tcase_add_test(tc, test_msn_may_count_a_later_atomic);
	tcase_add_test(tc, test_write_reth_length);
	tcase_add_test(tc, test_first_and_last_sizes);
	tcase_add_test(tc, test_wrong_mtu_given);
	tcase_add_test(tc, test_last_request_without_ackreq);
	tcase_add_test(tc, test_retransmission_not_reported);
	tcase_add_test(tc, test_uc_gap_is_loss);
	tcase_add_loop_test(tc, test_golden_captures_pass, 0,
			    sizeof(golden) / sizeof(golden[0]));
	tcase_add_test(tc, test_capture_loss_is_not_an_error);
	tcase_add_test(tc, test_unexplained_gap_in_real_capture);
	tcase_add_loop_test(tc, test_request_after_fatal_nak, 0, 3);
	tcase_add_test(tc, test_answer_after_fatal_nak);
	tcase_add_test(tc, test_seq_nak_follows_a_gap);
	tcase_add_test(tc, test_msn_goes_back);
	tcase_add_loop_test(tc, test_seq_nak_never_followed, 0, 2);
	tcase_add_loop_test(tc, test_uc_gap_a_link_could_not_carry, 0, 2);
	tcase_add_loop_test(tc, test_loss_a_link_could_carry, 0, 2);
	add_resp_tests(tc);
	suite_add_tcase(s, tc);
	return s;
}

/* ---- RNR NAK timer (check_rnr.c) ------------------------------------ */

/*
 * A SEND (frame 1), an RNR NAK with timer code 20 (frame 2, at t=0), the
 * SEND again at retry_us (frame 3), its ACK. The IBTA's RNR timer table
 * gives code 20 as 10.24 ms; docs/check.md's tolerance is an eighth of
 * it plus 1 ms (2.28 ms), so a retry from 7.96 ms on is on time. With
 * timed false the checker is given no times.
 */
static void rnr_run(uint64_t retry_us, bool timed, struct found *r)
{
	static struct cap cap;
	const uint64_t t0 = 1700000000ull * 1000000000ull;
	const uint64_t at[4] = { t0 - 100000, t0, t0 + retry_us * 1000,
				 t0 + retry_us * 1000 + 100000 };

	cap.n = 0;
	add(&cap, SEND_ONLY(0x100));
	add(&cap, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 0x100,
			       .syndrome = roce_aeth_syndrome(
				   ROCE_AETH_RNR_NAK, 20) });
	add(&cap, SEND_ONLY(0x100));
	add(&cap, ACK(0x100, 1));
	if (timed)
		for (unsigned i = 0; i < cap.n; i++)
			cap.ts[i] = at[i];
	judge(&cap, 0, r);
}

START_TEST(test_rnr_retry_too_early)
{
	struct found r;

	rnr_run(7000, true, &r);	/* 7 ms < 7.96 ms */
	one_error(&r, "RNR-TIMER", 3);
	rnr_run(8000, true, &r);	/* 8 ms: within the tolerance */
	counts(&r, 0, 0);
	rnr_run(10240, true, &r);	/* the timer itself */
	counts(&r, 0, 0);
	rnr_run(10, false, &r);		/* no times: not judged */
	counts(&r, 0, 0);
}
END_TEST

/* A PSN sequence NAK names the PSN the responder expected when a later
 * one came (9.7.5.2.1): naming the newest request sent, no later PSN
 * could have shown a gap. Naming an older one, with a later sent, is
 * the usual go-back. */
START_TEST(test_seq_nak_without_a_gap)
{
	static struct cap c;
	struct found r;
	struct pk nak = { .op = ROCE_OP_RC_ACK, .psn = 101,
			  .syndrome = ROCE_AETH_NAK_PSN_SEQ, .msn = 1 };

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, SEND_ONLY(101));
	add(&c, nak);			/* 101 is the newest: no gap */
	add(&c, SEND_ONLY(101));	/* the requester obeys it */
	add(&c, ACK(101, 2));
	judge(&c, 0, &r);
	one_error(&r, "SEQNAK-GAP", 3);

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, SEND_ONLY(101));
	add(&c, SEND_ONLY(102));	/* 102 shows 101 missing */
	add(&c, nak);
	add(&c, SEND_ONLY(101));
	add(&c, SEND_ONLY(102));
	add(&c, ACK(102, 3));
	judge(&c, 0, &r);
	nothing(&r);
}
END_TEST

/* An ACK for PSN n acknowledges every request up to n (9.7.5.1.2) and
 * answers leave in order (9.5): a READ's response after an ACK that
 * covered the READ is out of order. Before the ACK, it is the usual. */
START_TEST(test_read_answered_after_covering_ack)
{
	static struct cap c;
	struct found r;
	struct pk read = { .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 100,
			   .reth_len = 64, .ackreq = true };
	struct pk resp = { .op = RO, .psn = 100, .plen = 64, .msn = 1,
			   .syndrome = ROCE_AETH_ACK_NO_CREDITS };

	c.n = 0;
	add(&c, read);
	add(&c, SEND_ONLY(101));
	add(&c, ACK(101, 2));		/* covers the READ at 100 */
	add(&c, resp);
	judge(&c, 0, &r);
	one_error(&r, "ACK-IMPLIES-RESPONSES", 4);
	ck_assert_uint_eq(r.v[0].also, 3);

	c.n = 0;
	add(&c, read);
	add(&c, SEND_ONLY(101));
	add(&c, resp);
	add(&c, ACK(101, 2));
	judge(&c, 0, &r);
	nothing(&r);
}
END_TEST

/* A UC requester never retransmits (9.8.3): a PSN that goes back is its
 * error, where on RC it would be a legal resend. */
START_TEST(test_uc_psn_goes_back)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_UC_SEND_ONLY, .psn = 10,
			     .plen = 10 });
	add(&c, (struct pk){ .op = ROCE_OP_UC_SEND_ONLY, .psn = 11,
			     .plen = 10 });
	add(&c, (struct pk){ .op = ROCE_OP_UC_SEND_ONLY, .psn = 10,
			     .plen = 10 });
	judge(&c, 0, &r);
	one_error(&r, "UC-PSN-FORWARD", 3);
}
END_TEST

/* A NAK syndrome belongs in an ACKNOWLEDGE packet (9.7.5.2): a READ
 * response carrying one is an error; the same NAK as an ACK is not. */
START_TEST(test_nak_in_a_read_response)
{
	static struct cap c;
	struct found r;

	c.n = 0;
	add(&c, (struct pk){ .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 100,
			     .reth_len = 64, .ackreq = true });
	add(&c, (struct pk){ .op = RO, .psn = 100, .plen = 64, .msn = 1,
			     .syndrome = ROCE_AETH_NAK_REM_ACCESS });
	judge(&c, 0, &r);
	one_error(&r, "NAK-IN-ACKNOWLEDGE", 2);

	c.n = 1;
	add(&c, (struct pk){ .op = ROCE_OP_RC_ACK, .psn = 100, .msn = 0,
			     .syndrome = ROCE_AETH_NAK_REM_ACCESS });
	judge(&c, 0, &r);
	nothing(&r);
}
END_TEST

/* Reordering on the way: 101 arrives after 102 and 103, which made the
 * NAK for 101; the responder then takes 101 and NAKs 102, whose AETH
 * acknowledges 101. The requester resends from 102: legal, the first
 * NAK's PSN came late. So may 102 have, in flight behind it; but 103,
 * the newest before the NAK, showed the gap and was dropped: an ACK of
 * it with nothing resent is not. */
START_TEST(test_seq_nak_for_a_late_psn)
{
	static struct cap c;
	struct found r;
	struct pk nak = { .op = ROCE_OP_RC_ACK, .psn = 101,
			  .syndrome = ROCE_AETH_NAK_PSN_SEQ, .msn = 1 };

	c.n = 0;
	add(&c, SEND_ONLY(100));
	add(&c, SEND_ONLY(101));	/* delayed on the way */
	add(&c, SEND_ONLY(102));
	add(&c, SEND_ONLY(103));
	add(&c, nak);			/* 102 came first */
	nak.psn = 102;
	nak.msn = 2;
	add(&c, nak);			/* 101 came and was taken */
	add(&c, SEND_ONLY(102));
	add(&c, SEND_ONLY(103));
	add(&c, ACK(103, 4));
	judge(&c, 0, &r);
	nothing(&r);

	c.n = 5;			/* 102 may have come late too */
	add(&c, ACK(102, 3));
	judge(&c, 0, &r);
	nothing(&r);

	c.n = 5;			/* but 103, which showed the gap, */
	add(&c, ACK(103, 4));		/* was dropped: never resent */
	judge(&c, 0, &r);
	counts(&r, 1, 0);
	ck_assert_str_eq(r.v[0].id, "SEQNAK-GO-BACK");
	ck_assert_uint_eq(r.v[0].no, 5);
	ck_assert_uint_eq(r.v[0].also, 6);
}
END_TEST

/* A READ request duplicated on the way is executed twice (9.7.5.1.1):
 * its second answer may come after many later READs, when the ring has
 * long moved on; it answers a READ that was sent (the flow's first). */
START_TEST(test_duplicated_read_answered_late)
{
	static struct cap c;
	struct found r;
	struct pk read = { .op = ROCE_OP_RC_RDMA_READ_REQUEST, .psn = 100,
			   .reth_len = 4096, .ackreq = true };
	static const unsigned ops[4] = {
		ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST,
		ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
		ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
		ROCE_OP_RC_RDMA_READ_RESPONSE_LAST };

	c.n = 0;
	add(&c, read);
	add(&c, read);			/* the copy */
	for (unsigned k = 0; k < 2; k++) {
		for (unsigned i = 0; i < 4; i++)
			add(&c, (struct pk){ .op = ops[i], .psn = 100 + i,
					     .plen = 1024, .msn = 1,
					     .syndrome = ROCE_AETH_ACK_NO_CREDITS });
		for (unsigned j = 0; !k && j < 11; j++) {
			read.psn = 104 + 4 * j;
			add(&c, read);
		}
	}
	judge(&c, 1024, &r);
	counts(&r, 0, 0);
}
END_TEST

static void add_resp_tests(TCase *tc)
{
	tcase_add_test(tc, test_duplicated_read_answered_late);
	tcase_add_test(tc, test_seq_nak_for_a_late_psn);
	tcase_add_test(tc, test_write_first_reordered);
	tcase_add_test(tc, test_uc_psn_goes_back);
	tcase_add_test(tc, test_nak_in_a_read_response);
	tcase_add_test(tc, test_rnr_retry_too_early);
	tcase_add_test(tc, test_seq_nak_without_a_gap);
	tcase_add_test(tc, test_read_answered_after_covering_ack);
}
