/* SPDX-License-Identifier: MIT */
/* rocemu ladder: a message sequence chart per flow of a capture, as text and as SVG, with a run's WQEs and CQEs. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_source.h"
#include "rocemu/ladder.h"
#include "rocemu/pcapio.h"

struct ladder_opts {
	const char *path;
	const char *svg;   /* SVG output file, or NULL */
	const char *trace; /* trace events to merge, or NULL */
	int flow;	   /* ROCE_LADDER_ALL_FLOWS or a flow id */
};

static const char usage_text[] =
    "usage: rocemu ladder CAPTURE [--flow N] [--svg FILE] [--trace FILE]\n"
    "\n"
    "A message sequence chart per flow (two QPs): each packet an arrow\n"
    "from sender to receiver with its opcode, PSN, payload length and\n"
    "AETH; time goes down. Printed as text; --svg writes it as SVG too.\n"
    "\n"
    "Options:\n"
    "  --flow N      only flow N (flows are numbered from 0 in order of\n"
    "                their first packet)\n"
    "  --svg FILE    write the charts, stacked, to FILE as SVG\n"
    "  --trace FILE  WQE and CQE events of the run that wrote CAPTURE\n"
    "                (ROCEMU_TRACE=FILE, rocemu demo --trace FILE), shown\n"
    "                on the lifelines with their SQ and CQ slots\n"
    "  -h, --help    print this text and exit\n"
    "\n"
    "Exit status:\n"
    "  0  the charts were written\n"
    "  2  a usage or file error\n";

/* Returns 0 to run, 1 after --help, -EINVAL after a usage message. */
static int parse_args(int argc, char **argv, struct ladder_opts *o)
{
	static const struct option longopts[] = {
	    {"flow", required_argument, NULL, 'f'},
	    {"svg", required_argument, NULL, 's'},
	    {"trace", required_argument, NULL, 't'},
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
		case 't': o->trace = optarg; break;
		case 'h': fputs(usage_text, stdout); return 1;
		default: fputs(usage_text, stderr); return -EINVAL;
		}
	}
	return cli_capture_arg("ladder", usage_text, argc, argv, optind,
			       NULL, &o->path);
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

/* Loads the trace, if one is named; CLI_OK or CLI_USAGE with a message. */
static int load_trace(const char *path, struct rocemu_event **evs, size_t *n)
{
	char err[160];

	if (!path)
		return CLI_OK;
	if (rocemu_trace_load(path, evs, n, err, sizeof(err)) == 0)
		return CLI_OK;
	fprintf(stderr, "rocemu ladder: %s: %s\n", path, err);
	return CLI_USAGE;
}

static int draw(const struct ladder_opts *o, const struct roce_capture *c,
		const struct rocemu_event *evs, size_t n)
{
	struct roce_ladder l;
	int rc = roce_ladder_build(c, evs, n, o->flow, &l);

	if (rc == -ENOENT) {
		fprintf(stderr,
			"rocemu ladder: %s has no flow %d (it has %u)\n",
			o->path, o->flow, roce_flows_count(c->flows));
		return CLI_USAGE;
	}
	if (rc) {
		fprintf(stderr, "rocemu ladder: %s\n", strerror(-rc));
		return CLI_USAGE;
	}
	if (!c->n)
		printf("%s: no RoCEv2 packets (%llu frames)\n", o->path,
		       (unsigned long long)c->frames);
	rc = roce_ladder_write_text(stdout, &l) ? CLI_USAGE : CLI_OK;
	if (n && l.events_unplaced)
		fprintf(stderr,
			"rocemu ladder: %zu of %zu trace events name "
			"a QP of no flow shown; left out\n",
			l.events_unplaced, n);
	if (rc == CLI_OK && o->svg)
		rc = write_svg(o->svg, &l);
	roce_ladder_free(&l);
	return rc;
}

int cmd_ladder(int argc, char **argv)
{
	struct ladder_opts o = {.flow = ROCE_LADDER_ALL_FLOWS};
	struct roce_capture c;
	struct rocemu_event *evs = NULL;
	size_t n = 0;
	char err[ROCE_PCAP_ERRLEN];
	int rc = parse_args(argc, argv, &o);

	if (rc)
		return rc > 0 ? CLI_OK : CLI_USAGE;
	rc = load_trace(o.trace, &evs, &n);
	if (rc)
		return rc;
	if (roce_capture_load(o.path, &c, err)) {
		fprintf(stderr, "rocemu ladder: %s: %s\n", o.path, err);
		free(evs);
		return CLI_USAGE;
	}
	rc = draw(&o, &c, evs, n);
	roce_capture_free(&c);
	free(evs);
	return rc;
}
