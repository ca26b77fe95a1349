/* SPDX-License-Identifier: MIT */
/* rocemu replay: a capture's requests fed to rocemu as the responder, its answers compared with the captured ones. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_source.h"
#include "conform.h"
#include "replay.h"
#include "rocemu/pcapio.h"

enum { MAX_KNOWN_IDS = 16 };

/* The divergences the list of differences explains, counted apart. */
struct tally {
	unsigned known, unexplained;
	const char *ids[MAX_KNOWN_IDS];	/* the entries named, once each */
	unsigned nids;
};

struct replay_opts {
	const char *path;
	const char *write;	/* rocemu's side as a pcap, or NULL */
	const char *differences;	/* --differences, or NULL */
	const struct cf_diffs *known;	/* the list read, or NULL */
	struct tally *tally;
	int flow;		/* -1: every flow */
	bool verbose;
	bool requester;		/* --as requester */
	bool strict;		/* --strict: a known difference fails too */
};

static const char usage_text[] =
	"usage: rocemu replay CAPTURE [--as responder|requester] [--flow N]\n"
	"                            [--write FILE] [--differences FILE]\n"
	"                            [--strict] [-v]\n"
	"\n"
	"Feeds the requests of each RC, UC and UD flow of a capture, in\n"
	"captured order, to rocemu playing the captured responder (its\n"
	"address, QP number, path MTU, and the memory and receives the\n"
	"capture implies), and compares rocemu's answers with the captured\n"
	"ones field by field: the first divergence per direction, with both\n"
	"packets and what rocemu's counters say, then a line per direction\n"
	"(UC and UD answer nothing: there, the receives rocemu completed).\n"
	"\n"
	"A divergence an entry of the list of differences describes (its\n"
	"replay: field) is printed \"diverges as known difference ID\" and\n"
	"counted apart, not as a failure; a last line then counts the known\n"
	"differences and the unexplained divergences. ACKs coalesced otherwise\n"
	"name their entry too.\n"
	"\n"
	"Options:\n"
	"  --as requester  rocemu plays the requester instead: it posts the\n"
	"                  WQEs the capture implies, is fed the captured\n"
	"                  answers, and its requests are compared with the\n"
	"                  captured ones\n"
	"  --flow N        only flow N (as rocemu ladder and check number them)\n"
	"  --write FILE    rocemu's answers as a pcap\n"
	"  --differences FILE\n"
	"                  the list of differences (default: the conformance\n"
	"                  home's differences.md, as rocemu conform's --known,\n"
	"                  when there is one)\n"
	"  --strict        a divergence the list of differences explains fails\n"
	"                  the run too (exit 1): it is still named and counted\n"
	"                  apart\n"
	"  -v              every answer that agrees, too, and at the end the\n"
	"                  packets looked at (\"packet visits\")\n"
	"  -h, --help      print this text and exit\n"
	"\n"
	"Exit status:\n"
	"  0  rocemu answers as captured, or diverges only where the list of\n"
	"     differences says it does (not with --strict)\n"
	"  1  an unexplained divergence, or with --strict any divergence\n"
	"  2  a usage or file error, or a flow that could not be replayed\n"
	"     (docs/capture-limits.md)\n";

static int parse_args(int argc, char **argv, struct replay_opts *o)
{
	static const struct option longopts[] = {
		{ "flow", required_argument, NULL, 'f' },
		{ "as", required_argument, NULL, 'a' },
		{ "write", required_argument, NULL, 'w' },
		{ "differences", required_argument, NULL, 'd' },
		{ "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->flow = -1;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (cli_flow_arg("replay", optarg, &o->flow))
				return -EINVAL;
			break;
		case 'w': o->write = optarg; break;
		case 'd': o->differences = optarg; break;
		case 's': o->strict = true; break;
		case 'a':
			if (strcmp(optarg, "responder") &&
			    strcmp(optarg, "requester")) {
				fprintf(stderr, "rocemu replay: --as takes "
						"responder or requester, not "
						"'%s'\n", optarg);
				return -EINVAL;
			}
			o->requester = !strcmp(optarg, "requester");
			break;
		case 'v': o->verbose = true; break;
		case 'h': fputs(usage_text, stdout); return 1;
		default: fputs(usage_text, stderr); return -EINVAL;
		}
	}
	return cli_capture_arg("replay", usage_text, argc, argv, optind,
			       NULL, &o->path);
}

static int write_sent(struct roce_pcap_writer *pw, const struct rp_result *r)
{
	for (size_t i = 0; i < r->nsent; i++)
		if (roce_pcap_write(pw, r->sent[i].ts_ns, r->sent[i].data,
				    r->sent[i].len))
			return -EIO;
	return 0;
}

/* Says which accepted requests the plan refused: their range wraps past
 * 2^64, so no memory can stand for it, and rocemu refuses them too. */
static void report_wrapped(const struct rp_plan *p)
{
	const struct roce_ib *ib = &rp_pkt(p, p->first_wrapped)->f.ib;
	bool reth = ib->exts & ROCE_EXT_RETH;

	if (!p->wrapped)
		return;
	rp_head(stdout, p);
	printf(": request #%" PRIu64 " names va 0x%" PRIx64 " length %" PRIu64
	       ", a range that wraps past 2^64: refused, not planned (%zu "
	       "such request%s)\n",
	       rp_pkt(p, p->first_wrapped)->no,
	       reth ? ib->reth.va : ib->atmeth.va,
	       reth ? (uint64_t)ib->reth.len : 8, p->wrapped,
	       p->wrapped == 1 ? "" : "s");
}

/* Counts one direction's divergence (rc 1), known when id names its
 * entry. */
static void count(struct tally *t, int rc, const char *id)
{
	unsigned i = 0;

	if (rc != 1)
		return;
	if (!id) {
		t->unexplained++;
		return;
	}
	t->known++;
	while (i < t->nids && strcmp(t->ids[i], id))
		i++;
	if (i == t->nids && i < MAX_KNOWN_IDS)
		t->ids[t->nids++] = id;
}

/* One direction of one flow: 0 same (or a known difference), 1
 * diverges, 2 could not run. */
static int replay_dir(const struct roce_capture *cap,
		      const struct rp_index *ix, const struct roce_flow *fl,
		      unsigned req, const struct replay_opts *o,
		      struct roce_pcap_writer *pw, uint64_t *visits)
{
	const struct roce_flow_end *me = &fl->end[o->requester ? req : 1 - req];
	struct rp_plan p;
	struct rp_result res;

	if (me->qpn < RP_MIN_QPN) {
		printf("flow %u: not replayed: its %s is QP%u, which the IBTA "
		       "keeps for %s; rocemu creates no such QP\n", fl->id,
		       o->requester ? "requester" : "responder", me->qpn,
		       me->qpn ? "the GSI (MADs)" : "the SMI");
		return 0;
	}
	int rc = rp_plan_make(&p, cap, ix, fl, req, visits);
	if (rc)
		return rc == -ENOENT ? 0 : 2;
	if (!o->requester)	/* the requester sends them as captured */
		report_wrapped(&p);
	if (o->requester)
		rc = rp_run_requester(&p, o->verbose, stdout, &res);
	else
		rc = rp_run_responder(&p, &res);
	if (rc == -E2BIG) {
		const char *what = "memory";
		uint64_t need = res.need;
		if (!o->requester)
			rp_responder_fits(&p, &need, &what);
		fprintf(stderr, "rocemu replay: flow %u: needs %" PRIu64
				" bytes of %s, more than the capture carries "
				"(limit %" PRIu64 " bytes: its %" PRIu64
				" payload bytes and %llu); not replayed\n",
			fl->id, need, what, rp_mem_limit(&p), p.carried,
			RP_MEM_SLACK);
		rp_plan_free(&p);
		return 2;
	}
	if (rc == -ERANGE) {	/* the device's limit, said already */
		rp_plan_free(&p);
		return 2;
	}
	if (rc < 0) {
		fprintf(stderr, "rocemu replay: flow %u: rocemu's %s could "
				"not be set up: %s\n",
			fl->id, o->requester ? "requester" : "responder",
			strerror(-rc));
		rp_plan_free(&p);
		return 2;
	}
	if (!o->requester) {
		const char *id;
		rc = rp_compare(&p, &res, o->known, o->verbose, stdout, &id);
		count(o->tally, rc, id);
		if (id && !o->strict)
			rc = 0;
	} else if (rc == 1) {
		o->tally->unexplained++;
	}
	if (pw && write_sent(pw, &res))
		rc = 2;
	rp_result_free(&res);
	rp_plan_free(&p);
	return rc;
}

static int replay_flow(const struct roce_capture *cap,
		       const struct rp_index *ix, const struct roce_flow *fl,
		       const struct replay_opts *o,
		       struct roce_pcap_writer *pw, uint64_t *visits)
{
	char a[96], b[96];
	int worst = 0;

	if (fl->kind == ROCE_FLOW_OTHER) {
		printf("flow %u %s - %s: not replayed: neither RC, UC nor UD\n",
		       fl->id, roce_flow_end_text(&fl->end[0], a, sizeof(a)),
		       roce_flow_end_text(&fl->end[1], b, sizeof(b)));
		return 0;
	}
	for (unsigned d = 0; d < 2; d++) {
		if (!fl->requests[d])
			continue;
		if (!fl->end[0].qpn_known || !fl->end[1].qpn_known) {
			printf("flow %u: not replayed: the capture never shows "
			       "a packet to one of its QPs\n", fl->id);
			return 0;
		}
		int rc = replay_dir(cap, ix, fl, d, o, pw, visits);
		if (rc > worst)
			worst = rc;
	}
	return worst;
}

static int replay_all(const struct roce_capture *cap,
		      const struct replay_opts *o,
		      struct roce_pcap_writer *pw)
{
	unsigned n = roce_flows_count(cap->flows);
	struct rp_index ix;
	uint64_t visits = 0;
	int worst = 0;

	if (o->flow >= (int)n) {
		fprintf(stderr, "rocemu replay: %s has %u flows: no flow %d\n",
			o->path, n, o->flow);
		return CLI_USAGE;
	}
	if (rp_index_make(&ix, cap)) {
		fprintf(stderr, "rocemu replay: out of memory\n");
		return CLI_USAGE;
	}
	for (unsigned id = 0; id < n; id++) {
		if (o->flow >= 0 && id != (unsigned)o->flow)
			continue;
		int rc = replay_flow(cap, &ix, roce_flows_get(cap->flows, id),
				     o, pw, &visits);
		if (rc > worst)
			worst = rc;
	}
	rp_index_free(&ix);
	const struct tally *t = o->tally;
	if (t->known) {
		printf("replay: %u known difference%s (", t->known,
		       t->known == 1 ? "" : "s");
		for (unsigned i = 0; i < t->nids; i++) {
			const char *ibta = o->known ?
				cf_diffs_ibta(o->known, t->ids[i]) : NULL;
			printf("%s%s", i ? ", " : "", t->ids[i]);
			if (ibta)
				printf(" (IBTA %s)", ibta);
		}
		printf("), %u unexplained divergence%s\n", t->unexplained,
		       t->unexplained == 1 ? "" : "s");
	}
	/* the work done, in packets looked at: a multiple of the packets
	 * (tests/cli/replay_cli.sh holds it so) */
	if (o->verbose)
		printf("replay: %u flows, %zu packets, %" PRIu64
		       " packet visits\n", n, cap->n, visits);
	return worst == 2 ? CLI_USAGE : worst ? CLI_FAIL : CLI_OK;
}

/*
 * The list of differences into *d: --differences's, else the conformance
 * home's when there is one (else none: o->known stays NULL). 0, or -1
 * after saying why.
 */
static int load_differences(struct replay_opts *o, struct cf_diffs *d)
{
	char home[PATH_MAX], err[CF_DIFF_LINE];
	const char *path = o->differences;
	struct stat st;

	if (!path) {
		path = cli_in_home(cli_conformance_home(), "differences.md",
				   home, sizeof(home));
		if (!path || stat(path, &st))
			return 0;
	}
	if (cf_diffs_load(path, d, err, sizeof(err))) {
		fprintf(stderr, "rocemu replay: %s\n", err);
		return -1;
	}
	o->known = d;
	return 0;
}

int cmd_replay(int argc, char **argv)
{
	struct tally tally = { 0 };
	struct replay_opts o = { .tally = &tally };
	struct cf_diffs diffs = { 0 };
	struct roce_capture cap;
	struct roce_pcap_writer *pw = NULL;
	char err[ROCE_PCAP_ERRLEN];

	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc > 0 ? CLI_OK : CLI_USAGE;
	if (load_differences(&o, &diffs))
		return CLI_USAGE;
	if (roce_capture_load(o.path, &cap, err)) {
		cf_diffs_free(&diffs);
		fprintf(stderr, "rocemu replay: %s: %s\n", o.path, err);
		return CLI_USAGE;
	}
	if (o.write && roce_pcap_create(o.write, &pw, err)) {
		fprintf(stderr, "rocemu replay: %s: %s\n", o.write, err);
		roce_capture_free(&cap);
		cf_diffs_free(&diffs);
		return CLI_USAGE;
	}
	rc = replay_all(&cap, &o, pw);
	if (pw && roce_pcap_finish(pw)) {
		fprintf(stderr, "rocemu replay: %s: writing failed\n", o.write);
		rc = CLI_USAGE;
	}
	roce_capture_free(&cap);
	cf_diffs_free(&diffs);
	return rc;
}
