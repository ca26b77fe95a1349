/* SPDX-License-Identifier: MIT */
/* rocemu ladder: a message sequence chart per flow of one or more captures merged, as text and as SVG, with the runs' trace events. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_source.h"
#include "rocemu/check.h"
#include "rocemu/ladder.h"
#include "rocemu/pcapio.h"

enum { MAX_TRACES = 16 };

struct ladder_opts {
	const char *caps[ROCE_LADDER_MAX_CAPTURES];
	size_t ncaps;
	const char *traces[MAX_TRACES];
	size_t ntraces;
	const char *svg; /* SVG output file, or NULL */
	int flow;	 /* ROCE_LADDER_ALL_FLOWS or a flow id */
	bool collapse;
	bool check;	 /* --check: the checker's findings marked */
};

static const char usage_text[] =
    "usage: rocemu ladder CAPTURE... [--trace FILE]... [--flow N]\n"
    "                     [--svg FILE] [--no-collapse] [--check]\n"
    "\n"
    "A message sequence chart per flow (two QPs): each packet an arrow\n"
    "from sender to receiver with its opcode, PSN, payload length and\n"
    "AETH; time goes down. Printed as text; --svg writes it as SVG too.\n"
    "Captures of several processes (each its own ROCEMU_PCAP) are merged:\n"
    "a packet both ends captured is drawn once, each capture's order\n"
    "kept; with two or more captures frame numbers name their capture\n"
    "by a letter (#a3: frame 3 of the first capture, #b3 of the second).\n"
    "\n"
    "Options:\n"
    "  --trace FILE  trace events of a run (ROCEMU_TRACE=FILE, rocemu demo\n"
    "                --trace FILE): WQEs, CQEs, why and state notes on the\n"
    "                lifelines, each after the packet its device saw last;\n"
    "                may be given once per process (up to 16)\n"
    "  --flow N      only flow N (flows are numbered from 0 in order of\n"
    "                their first packet)\n"
    "  --svg FILE    write the charts, stacked, to FILE as SVG\n"
    "  --no-collapse draw every row: by default a run of 3 or more repeats\n"
    "                of the same 1 to 4 rows (a retry for ever) is drawn\n"
    "                once, with a row counting the repeats\n"
    "  --check       judge each capture as rocemu check does and draw\n"
    "                every finding as a note after the frame it names:\n"
    "                \"check: ...\" with its rule, a broken rule marked as\n"
    "                an error\n"
    "  -h, --help    print this text and exit\n"
    "\n"
    "Exit status:\n"
    "  0  the charts were written\n"
    "  1  the charts were written, but a capture ended mid-record (they\n"
    "     hold what it held before the cut)\n"
    "  2  a usage or file error\n";

static int usage(const char *why)
{
	fprintf(stderr, "rocemu ladder: %s\n%s", why, usage_text);
	return -EINVAL;
}

/* Returns 0 to run, 1 after --help, -EINVAL after a usage message. */
static int parse_args(int argc, char **argv, struct ladder_opts *o)
{
	static const struct option longopts[] = {
	    {"flow", required_argument, NULL, 'f'},
	    {"svg", required_argument, NULL, 's'},
	    {"trace", required_argument, NULL, 't'},
	    {"no-collapse", no_argument, NULL, 'n'},
	    {"check", no_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (cli_flow_arg("ladder", optarg, &o->flow))
				return -EINVAL;
			break;
		case 's': o->svg = optarg; break;
		case 't':
			if (o->ntraces == MAX_TRACES)
				return usage("at most 16 traces");
			o->traces[o->ntraces++] = optarg;
			break;
		case 'n': o->collapse = false; break;
		case 'c': o->check = true; break;
		case 'h': fputs(usage_text, stdout); return 1;
		default: fputs(usage_text, stderr); return -EINVAL;
		}
	}
	if (optind == argc)
		return usage("no capture file given");
	for (; optind < argc; optind++) {
		if (o->ncaps == ROCE_LADDER_MAX_CAPTURES)
			return usage("at most 16 captures");
		o->caps[o->ncaps++] = argv[optind];
	}
	return 0;
}

static int write_svg(const char *path, const struct roce_ladder *l)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f) {
		fprintf(stderr, "rocemu ladder: cannot write %s: %s\n", path,
			strerror(errno));
		return CLI_USAGE;
	}
	rc = roce_ladder_write_svg(f, l);
	if (rc == -EFBIG) {
		fclose(f);
		remove(path);
		fprintf(stderr, "rocemu ladder: %s: the ladder is taller than an "
				"SVG can be drawn (%u pixels); pick one flow with "
				"--flow N, or use the text output\n", path,
			ROCE_LADDER_SVG_MAX_HEIGHT);
		return CLI_USAGE;
	}
	if (fclose(f) || rc) {
		fprintf(stderr, "rocemu ladder: writing %s failed\n", path);
		return CLI_USAGE;
	}
	return CLI_OK;
}

/* What was loaded: freed by unload. */
struct inputs {
	struct roce_capture caps[ROCE_LADDER_MAX_CAPTURES];
	struct roce_ladder_trace traces[MAX_TRACES];
	bool partial; /* a capture ended mid-record */
	struct roce_ladder_mark *marks; /* --check: the findings */
	size_t nmarks, cap;
	unsigned now;	/* the capture being checked */
	bool nomem;
};

static void unload(struct inputs *in, const struct ladder_opts *o)
{
	for (size_t c = 0; c < o->ncaps; c++)
		roce_capture_free(&in->caps[c]);
	for (size_t t = 0; t < o->ntraces; t++)
		free((void *)in->traces[t].evs);
	for (size_t m = 0; m < in->nmarks; m++) {
		free((void *)in->marks[m].rule);
		free((void *)in->marks[m].text);
	}
	free(in->marks);
}

/* A finding of the checker, kept as a mark (the strings copied: v lives
 * during the call only). */
static void keep_mark(const struct roce_violation *v, void *arg)
{
	static const char *const cls[] = { "rule broken", "capture loss",
					   "reason" };
	struct inputs *in = arg;
	char text[ROCE_CHECK_TEXT + 32];

	if (in->nmarks == in->cap) {
		size_t n = in->cap ? 2 * in->cap : 16;
		struct roce_ladder_mark *m =
		    reallocarray(in->marks, n, sizeof(*m));
		if (!m) {
			in->nomem = true;
			return;
		}
		in->marks = m;
		in->cap = n;
	}
	snprintf(text, sizeof(text), "%s%s%s: %s", cls[v->cls % 3],
		 v->id ? " " : "", v->id ? v->id : "", v->text);
	struct roce_ladder_mark *m = &in->marks[in->nmarks];
	*m = (struct roce_ladder_mark){ .cap = in->now, .frame_no = v->no,
					.error = v->cls == ROCE_CHECK_ERROR,
					.rule = strdup(v->rule ? v->rule : ""),
					.text = strdup(text) };
	if (!m->rule || !m->text) {
		free((void *)m->rule);
		free((void *)m->text);
		in->nomem = true;
		return;
	}
	in->nmarks++;
}

/* Judges capture c (number k) packet by packet, as rocemu check does,
 * its findings kept as marks. CLI_OK, or CLI_USAGE when out of memory. */
static int check_capture(struct inputs *in, size_t k)
{
	const struct roce_capture *c = &in->caps[k];
	struct roce_check *chk = roce_check_new(0, keep_mark, in);

	if (!chk)
		return CLI_USAGE;
	in->now = (unsigned)k;
	for (size_t i = 0; i < c->n && !in->nomem; i++) {
		const struct roce_cap_pkt *p = &c->pkts[i];
		const struct roce_flow *fl = roce_flows_get(c->flows, p->flow);
		roce_check_time(chk, p->ts_ns);
		if (roce_check_packet(chk, p->no, &p->f, p->parse_rc, p->why,
				      fl ? p->flow : ROCE_CHECK_NO_FLOW,
				      p->dir, fl ? fl->kind : ROCE_FLOW_OTHER))
			in->nomem = true;
	}
	roce_check_finish(chk);
	roce_check_free(chk);
	return in->nomem ? CLI_USAGE : CLI_OK;
}

/* Loads every trace and capture; CLI_OK or CLI_USAGE with a message. A
 * capture cut short is kept, with a warning. */
static int load(const struct ladder_opts *o, struct inputs *in)
{
	char err[ROCE_PCAP_ERRLEN > 160 ? ROCE_PCAP_ERRLEN : 160];

	for (size_t t = 0; t < o->ntraces; t++) {
		struct rocemu_event *evs = NULL;
		if (rocemu_trace_load(o->traces[t], &evs, &in->traces[t].n, err,
				      sizeof(err))) {
			fprintf(stderr, "rocemu ladder: %s: %s\n", o->traces[t],
				err);
			return CLI_USAGE;
		}
		in->traces[t].evs = evs;
	}
	for (size_t c = 0; c < o->ncaps; c++) {
		bool partial;
		if (roce_ladder_capture_load(o->caps[c], &in->caps[c], err,
					     &partial)) {
			fprintf(stderr, "rocemu ladder: %s: %s\n", o->caps[c],
				err);
			return CLI_USAGE;
		}
		if (partial)
			fprintf(stderr,
				"rocemu ladder: warning: %s is cut short (%s); "
				"drawing its %llu frames before the cut\n",
				o->caps[c], err,
				(unsigned long long)in->caps[c].frames);
		in->partial = in->partial || partial;
		if (o->check && check_capture(in, c)) {
			fprintf(stderr, "rocemu ladder: %s: out of memory\n",
				o->caps[c]);
			return CLI_USAGE;
		}
		size_t mid = roce_ladder_mid_flows(&in->caps[c]);
		if (mid)
			fprintf(stderr,
				"rocemu ladder: warning: %s starts mid-connection: "
				"%zu flows begin with a response or the middle "
				"or end of a message; drawn from there\n",
				o->caps[c], mid);
	}
	return CLI_OK;
}

/* Says, once per trace and once for the captures, what was drawn in a
 * way the inputs could not settle exactly. */
static void warn(const struct ladder_opts *o, const struct inputs *in,
		 const struct roce_ladder *l)
{
	size_t all = 0;

	for (size_t t = 0; t < o->ntraces; t++) {
		all += in->traces[t].n;
		if (l->by_time[t])
			fprintf(stderr,
				"rocemu ladder: warning: %s: %zu of %zu events "
				"follow packets no capture given holds; drawn by "
				"time\n",
				o->traces[t], l->by_time[t], in->traces[t].n);
	}
	if (l->events_unplaced)
		fprintf(stderr,
			"rocemu ladder: %zu of %zu trace events name a QP of no "
			"flow shown; left out\n",
			l->events_unplaced, all);
	if (l->marks_unplaced)
		fprintf(stderr,
			"rocemu ladder: %zu of %zu findings name a frame no "
			"chart shows; left out\n",
			l->marks_unplaced, in->nmarks);
	if (l->out_of_order)
		fprintf(stderr,
			"rocemu ladder: warning: the captures disagree on the "
			"order of %zu packets; those are drawn by time\n",
			l->out_of_order);
}

static int draw(const struct ladder_opts *o, const struct inputs *in)
{
	struct roce_ladder l;
	struct roce_ladder_input li = {.caps = in->caps,
				       .ncaps = o->ncaps,
				       .traces = in->traces,
				       .ntraces = o->ntraces,
				       .only_flow = o->flow,
				       .collapse = o->collapse,
				       .marks = in->marks,
				       .nmarks = in->nmarks};
	int rc = roce_ladder_build_many(&li, &l);
	size_t packets = 0;

	if (rc == -ENOENT) {
		li.only_flow = ROCE_LADDER_ALL_FLOWS;
		size_t flows = roce_ladder_build_many(&li, &l) ? 0 : l.n;
		roce_ladder_free(&l);
		fprintf(stderr, "rocemu ladder: %s has no flow %d (it has %zu)\n",
			o->ncaps > 1 ? "the merged capture" : o->caps[0],
			o->flow, flows);
		return CLI_USAGE;
	}
	if (rc == -EDOM) {
		fprintf(stderr,
			"rocemu ladder: a trace has no seen/last fields (written "
			"by an older rocemu): its events can be placed only in "
			"the capture of its own process; give that one capture "
			"alone\n");
		return CLI_USAGE;
	}
	if (rc) {
		fprintf(stderr, "rocemu ladder: %s\n", strerror(-rc));
		return CLI_USAGE;
	}
	for (size_t c = 0; c < o->ncaps; c++)
		packets += in->caps[c].n;
	for (size_t c = 0; !packets && c < o->ncaps; c++)
		printf("%s: no RoCEv2 packets (%llu frames)\n", o->caps[c],
		       (unsigned long long)in->caps[c].frames);
	rc = roce_ladder_write_text(stdout, &l) ? CLI_USAGE : CLI_OK;
	warn(o, in, &l);
	if (rc == CLI_OK && o->svg)
		rc = write_svg(o->svg, &l);
	roce_ladder_free(&l);
	return rc;
}

int cmd_ladder(int argc, char **argv)
{
	struct ladder_opts o = {.flow = ROCE_LADDER_ALL_FLOWS,
				.collapse = true};
	struct inputs in = {0};
	int rc = parse_args(argc, argv, &o);

	if (rc)
		return rc > 0 ? CLI_OK : CLI_USAGE;
	rc = load(&o, &in);
	if (rc == CLI_OK)
		rc = draw(&o, &in);
	unload(&in, &o);
	if (rc == CLI_OK && in.partial)
		rc = CLI_FAIL;
	return rc;
}
