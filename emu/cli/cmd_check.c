/* SPDX-License-Identifier: MIT */
/* rocemu check: judge every RoCEv2 packet of a capture against the IBTA transport rules. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_source.h"
#include "rocemu/check.h"
#include "rocemu/flow.h"
#include "rocemu/packet.h"
#include "rocemu/pcapio.h"

struct check_opts {
	const char *path;
	const char *iface;	/* live capture, or NULL */
	uint32_t mtu;
	bool json;
	bool quiet;
	bool no_explain;	/* leave out the reasons */
	bool book;		/* --rules: print the rule book */
};

/* Findings kept to print in frame order once every flow's ends are
 * known; beyond MAX_KEPT only counted. */
enum { MAX_KEPT = 100000 };

struct check_run {
	const struct check_opts *o;
	struct roce_flows *flows;
	struct roce_check *chk;
	struct roce_violation *found;
	size_t nfound, cap, dropped;
	bool nomem;
	uint64_t frames, roce, other;
};

static const char usage_text[] =
	"usage: rocemu check CAPTURE [--mtu N] [--json] [-q] [--no-explain]\n"
	"       rocemu check -i IFACE [--mtu N] [--json] [-q] [--no-explain]\n"
	"       rocemu check --rules [--json]\n"
	"\n"
	"Judge each RoCEv2 packet of a pcap or pcapng file, or of a live\n"
	"interface until Ctrl-C, against the IBTA transport rules (PSNs,\n"
	"opcode sequences, lengths, ACK/NAK, atomics, ICRC), per flow and\n"
	"direction, and say which packet broke which rule: its ID in the rule\n"
	"book (--rules) and its IBTA section.\n"
	"\n"
	"Packets the capture missed (the other side shows they were sent) are\n"
	"reported as capture loss, not as errors.\n"
	"\n"
	"Errors the capture shows without breaking a rule (a NAK, an RNR\n"
	"NAK run, a request sent again and again and never answered) are\n"
	"explained: a \"reason\" line names the request they answer and what\n"
	"they mean, with the IBTA section. Reasons leave the exit status alone.\n"
	"\n"
	"Options:\n"
	"  -i IFACE    capture live on IFACE (needs CAP_NET_RAW), UDP 4791 only;\n"
	"              findings are printed as they are settled\n"
	"  --mtu N     the path MTU (256..4096); default: inferred per flow\n"
	"  --json      one JSON object per finding, then a summary object\n"
	"  -q          only the summary\n"
	"  --explain   give the reasons (the default)\n"
	"  --no-explain\n"
	"              leave the reasons out: rule findings only\n"
	"  --rules     print the rule book: each rule's ID, whether check\n"
	"              judges it, its IBTA section and text (with --json,\n"
	"              one object per rule), and exit\n"
	"  -h, --help  print this text and exit\n"
	"\n"
	"Exit status:\n"
	"  0  no rule is broken\n"
	"  1  a rule is broken\n"
	"  2  a usage or file error\n";

static int parse_mtu(const char *arg, uint32_t *mtu)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (*end || !*arg || v > UINT32_MAX || !roce_is_path_mtu((uint32_t)v)) {
		fprintf(stderr, "rocemu check: --mtu wants 256, 512, 1024, "
				"2048 or 4096, not '%s'\n", arg);
		return -EINVAL;
	}
	*mtu = (uint32_t)v;
	return 0;
}

/* Returns 0 to run, 1 after --help, -EINVAL after a usage message. */
static int parse_args(int argc, char **argv, struct check_opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "explain", no_argument, NULL, 'e' },
		{ "no-explain", no_argument, NULL, 'E' },
		{ "rules", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "qi:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': o->iface = optarg; break;
		case 'j': o->json = true; break;
		case 'q': o->quiet = true; break;
		case 'e': o->no_explain = false; break;
		case 'E': o->no_explain = true; break;
		case 'r': o->book = true; break;
		case 'm':
			if (parse_mtu(optarg, &o->mtu))
				return -EINVAL;
			break;
		case 'h': fputs(usage_text, stdout); return 1;
		default: fputs(usage_text, stderr); return -EINVAL;
		}
	}
	if (o->book && optind == argc)
		return 0;
	return cli_capture_arg("check", usage_text, argc, argv, optind,
			       o->iface, &o->path);
}

static void print_finding(const struct check_run *run,
			  const struct roce_violation *v, bool json);

/* A finding: printed at once on a live interface (it has no end to wait
 * for), kept to print in frame order from a file. */
static void keep(const struct roce_violation *v, void *arg)
{
	struct check_run *run = arg;

	if (v->cls == ROCE_CHECK_REASON && run->o->no_explain)
		return;
	if (run->o->iface) {
		if (!run->o->quiet) {
			print_finding(run, v, run->o->json);
			fflush(stdout);
		}
		return;
	}
	if (run->nfound == run->cap) {
		size_t n = run->cap ? run->cap * 2 : 64;
		if (run->cap >= MAX_KEPT) {
			run->dropped++;
			return;
		}
		void *p = realloc(run->found, n * sizeof(*run->found));
		if (!p) {
			run->nomem = true;
			run->dropped++;
			return;
		}
		run->found = p;
		run->cap = n;
	}
	run->found[run->nfound++] = *v;
}

/* One frame: parse, classify, judge. 0 or -ENOMEM. */
static int check_frame(struct check_run *run, unsigned link,
		       const struct roce_pcap_rec *rec)
{
	struct roce_frame f;
	const char *why = NULL;
	unsigned dir = 0, flow = ROCE_CHECK_NO_FLOW;
	enum roce_flow_kind kind = ROCE_FLOW_OTHER;

	int rc = roce_frame_parse(link, rec->data, rec->caplen, rec->wire_len,
				  &f, &why);
	if (rc == -ENOMSG) {
		run->other++;
		return 0;
	}
	run->roce++;
	int id = roce_flows_classify(run->flows, &f, run->frames, &dir);
	if (id == -ENOMEM)
		return -ENOMEM;
	if (id >= 0) {
		flow = (unsigned)id;
		kind = roce_flows_get(run->flows, flow)->kind;
	}
	roce_check_time(run->chk, rec->ts_ns);
	return roce_check_packet(run->chk, run->frames, &f, rc, why, flow,
				 dir, kind);
}

/*
 * Reads every record of r and judges it: the reading loop, apart from
 * how r was opened (a file here; a live interface would do as well).
 * Returns 0, -EIO after a broken record (what came before is judged), or
 * -ENOMEM; the reason is printed.
 */
static int check_loop(struct roce_pcap_reader *r, const char *name,
		      struct check_run *run)
{
	struct roce_pcap_rec rec;
	char err[ROCE_PCAP_ERRLEN];
	int rc;

	while ((rc = roce_pcap_next(r, &rec, err)) == 1) {
		run->frames++;
		if (check_frame(run, roce_pcap_link(r), &rec) || run->nomem) {
			fprintf(stderr, "rocemu check: %s: out of memory\n",
				name);
			return -ENOMEM;
		}
	}
	roce_check_finish(run->chk);
	if (rc < 0) {
		fprintf(stderr, "rocemu check: %s: %s\n", name, err);
		return -EIO;
	}
	return 0;
}

static int by_frame(const void *a, const void *b)
{
	const struct roce_violation *x = a, *y = b;

	return x->no < y->no ? -1 : x->no > y->no;
}

/* "RC 10.0.0.1 qp 0x11 > 10.0.0.2 qp 0x12" for a packet sent by end[dir]. */
static void flow_text(const struct check_run *run, unsigned id, unsigned dir,
		      const char *sep, char *buf, size_t len)
{
	const struct roce_flow *fl = roce_flows_get(run->flows, id);
	char a[80], b[80];

	if (!fl) {
		snprintf(buf, len, "(no flow)");
		return;
	}
	snprintf(buf, len, "%s %s %s %s", roce_flow_kind_name(fl->kind),
		 roce_flow_end_text(&fl->end[dir & 1], a, sizeof(a)), sep,
		 roce_flow_end_text(&fl->end[1 - (dir & 1)], b, sizeof(b)));
}

static void print_finding(const struct check_run *run,
			  const struct roce_violation *v, bool json)
{
	char ft[200];
	const char *cls = v->cls == ROCE_CHECK_LOSS ? "loss" :
			  v->cls == ROCE_CHECK_REASON ? "reason" : "error";
	const char *head = v->cls == ROCE_CHECK_LOSS ? "capture loss," :
			   v->cls == ROCE_CHECK_REASON ? "reason" : "rule";

	flow_text(run, v->flow, v->dir, ">", ft, sizeof(ft));
	if (!json) {
		printf("frame %llu", (unsigned long long)v->no);
		if (v->flow != ROCE_CHECK_NO_FLOW)
			printf(" flow %u %s", v->flow, ft);
		if (v->id)
			printf(": %s %s (%s): %s\n", head, v->id, v->rule,
			       v->text);
		else
			printf(": %s %s: %s\n", head, v->rule, v->text);
		return;
	}
	printf("{\"frame\":%llu,\"class\":\"%s\",\"packets\":%u,",
	       (unsigned long long)v->no, cls, v->packets);
	if (v->flow != ROCE_CHECK_NO_FLOW) {
		printf("\"flow\":%u,\"dir\":%u,\"path\":", v->flow, v->dir);
		cli_json_str(stdout, ft);
		putchar(',');
	}
	if (v->also)
		printf("\"also\":%llu,", (unsigned long long)v->also);
	printf("\"rule\":");
	cli_json_str(stdout, v->rule);
	if (v->id) {
		printf(",\"id\":");
		cli_json_str(stdout, v->id);
	}
	printf(",\"text\":");
	cli_json_str(stdout, v->text);
	printf("}\n");
}

static void print_flow(const struct check_run *run, unsigned id, bool json)
{
	struct roce_check_flow_stats s;
	char ft[200];

	if (!roce_check_flow_stats(run->chk, id, &s))
		return;
	flow_text(run, id, 0, "<>", ft, sizeof(ft));
	if (json) {
		printf("{\"flow\":%u,\"path\":", id);
		cli_json_str(stdout, ft);
		printf(",\"packets\":%llu,\"mtu\":%u,\"errors\":%llu,"
		       "\"lost\":%llu,\"retransmitted\":%llu}\n",
		       (unsigned long long)s.packets, s.mtu,
		       (unsigned long long)s.errors,
		       (unsigned long long)s.losses,
		       (unsigned long long)s.retransmitted);
		return;
	}
	printf("flow %u %s: %llu packets", id, ft,
	       (unsigned long long)s.packets);
	if (s.mtu)
		printf(", MTU %u", s.mtu);
	printf(", %llu errors, %llu lost by the capture, %llu retransmitted\n",
	       (unsigned long long)s.errors, (unsigned long long)s.losses,
	       (unsigned long long)s.retransmitted);
}

static void print_report(struct check_run *run, const struct check_opts *o)
{
	uint64_t errs = roce_check_errors(run->chk);
	uint64_t lost = roce_check_losses(run->chk);
	uint64_t why = o->no_explain ? 0 : roce_check_reasons(run->chk);
	unsigned nflows = roce_flows_count(run->flows);

	if (run->nfound)
		qsort(run->found, run->nfound, sizeof(*run->found),
		      by_frame);
	for (size_t i = 0; !o->quiet && i < run->nfound; i++)
		print_finding(run, &run->found[i], o->json);
	if (!o->quiet && run->dropped && !o->json)
		printf("... and %zu more findings not shown\n", run->dropped);
	for (unsigned i = 0; !o->quiet && i < nflows; i++)
		print_flow(run, i, o->json);
	if (o->json) {
		printf("{\"summary\":{\"frames\":%llu,\"roce\":%llu,"
		       "\"flows\":%u,\"errors\":%llu,\"lost\":%llu,"
		       "\"reasons\":%llu}}\n",
		       (unsigned long long)run->frames,
		       (unsigned long long)run->roce, nflows,
		       (unsigned long long)errs, (unsigned long long)lost,
		       (unsigned long long)why);
		return;
	}
	printf("%llu frames, %llu RoCEv2 packets in %u flows: %llu rule "
	       "violations, %llu packets lost by the capture",
	       (unsigned long long)run->frames, (unsigned long long)run->roce,
	       nflows, (unsigned long long)errs, (unsigned long long)lost);
	/* a reason explains an error or states what the capture shows
	 * (READs in flight), neither a fault */
	if (why)
		printf(", %llu %s", (unsigned long long)why,
		       why == 1 ? "reason given" : "reasons given");
	putchar('\n');
}

int cmd_check(int argc, char **argv)
{
	struct check_opts o = { 0 };
	struct check_run run = { .o = &o };
	struct roce_pcap_reader *r;

	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc > 0 ? CLI_OK : CLI_USAGE;
	if (o.book) {
		check_print_book(o.json);
		return fflush(stdout) ? CLI_USAGE : CLI_OK;
	}
	if (cli_source_open("check", o.path, o.iface, &r) < 0)
		return CLI_USAGE;
	run.flows = roce_flows_new();
	run.chk = roce_check_new(o.mtu, keep, &run);
	if (!run.flows || !run.chk) {
		fprintf(stderr, "rocemu check: %s: out of memory\n", o.path);
		rc = -ENOMEM;
	} else {
		rc = check_loop(r, o.path, &run);
	}
	if (rc != -ENOMEM)
		print_report(&run, &o);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "rocemu check: %s: writing the output failed\n",
			o.path);
		rc = -EIO;
	}
	if (!rc)
		rc = roce_check_errors(run.chk) ? CLI_FAIL : CLI_OK;
	else
		rc = CLI_USAGE;
	roce_check_free(run.chk);
	roce_flows_free(run.flows);
	free(run.found);
	cli_source_close(r);
	return rc;
}
