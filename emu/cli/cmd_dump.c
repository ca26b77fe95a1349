/* SPDX-License-Identifier: MIT */
/* rocemu dump: decode every RoCEv2 packet of a capture and verify its ICRC. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_source.h"
#include "dump_batch.h"
#include "rocemu/pcapio.h"

struct dump_opts {
	const char *path;
	const char *iface;	/* live capture, or NULL */
	enum dump_style style;
	uint64_t max;		/* RoCE packets to show; 0: all */
};

static const char usage_text[] =
	"usage: rocemu dump CAPTURE [-v] [--json] [-c N]\n"
	"       rocemu dump -i IFACE [-v] [--json] [-c N]\n"
	"\n"
	"Decode each RoCEv2 packet (UDP port 4791) of a pcap or pcapng file,\n"
	"or of a live interface until Ctrl-C, and verify its ICRC.\n"
	"\n"
	"Options:\n"
	"  -i IFACE    capture live on IFACE (needs CAP_NET_RAW), UDP 4791 only\n"
	"  -v          every field of every header\n"
	"  --json      one JSON object per packet, then a summary object\n"
	"  -c N        stop after N RoCEv2 packets\n"
	"  -h, --help  print this text and exit\n"
	"\n"
	"Exit status:\n"
	"  0  every RoCEv2 packet decodes and its ICRC verifies\n"
	"  1  a packet does not decode, or its ICRC does not verify\n"
	"  2  a usage or file error\n";

static int parse_count(const char *arg, uint64_t *max)
{
	char *end;

	errno = 0;
	*max = strtoull(arg, &end, 10);
	if (errno || *end || !*arg || arg[0] == '-' || *max == 0) {
		fprintf(stderr,
			"rocemu dump: -c wants a count of 1 or more, not '%s'\n",
			arg);
		return -EINVAL;
	}
	return 0;
}

/* Returns 0 to run, 1 after --help, -EINVAL after a usage message. */
static int parse_args(int argc, char **argv, struct dump_opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "vc:i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': o->iface = optarg; break;
		case 'v': o->style = STYLE_TREE; break;
		case 'j': o->style = STYLE_JSON; break;
		case 'c':
			if (parse_count(optarg, &o->max))
				return -EINVAL;
			break;
		case 'h': fputs(usage_text, stdout); return 1;
		default: fputs(usage_text, stderr); return -EINVAL;
		}
	}
	return cli_capture_arg("dump", usage_text, argc, argv, optind,
			       o->iface, &o->path);
}

/* One frame at a time, for -c and live captures: stops on the N-th
 * RoCEv2 packet. Returns 1 when done. */
static int dump_one(unsigned link, const struct roce_pcap_rec *rec,
		    int64_t rel_ns, const struct dump_opts *o,
		    struct dump_stats *st)
{
	static char text[16384];
	struct roce_frame f;
	struct roce_sb sb;
	const char *why = "";
	int rc = roce_frame_parse(link, rec->data, rec->caplen, rec->wire_len,
				  &f, &why);

	dump_stats_add(st, rc, why, &f);
	if (rc == -ENOMSG)
		return 0;
	struct roce_dissect_in in = { st->frames, rel_ns, rec->caplen, rc,
				      why };
	roce_sb_init(&sb, text, sizeof(text));
	dump_render(&sb, o->style, &in, &f);
	fwrite(text, 1, sb.len, stdout);
	if (o->iface)
		fflush(stdout);	/* live: each packet as it comes */
	return o->max && st->roce >= o->max;
}

/*
 * Time since the first frame. A capture whose clock stepped back has
 * frames stamped before the first: their time is negative, as tshark's
 * relative time and tcpdump -ttttt show it, rather than a wrapped
 * unsigned difference. Stamps are below 2^63 ns, so this cannot overflow.
 */
static int64_t rel_time(uint64_t ts_ns, uint64_t t0_ns)
{
	return ts_ns >= t0_ns ? (int64_t)(ts_ns - t0_ns)
			      : -(int64_t)(t0_ns - ts_ns);
}

/* Reads every frame; returns 0, or -EIO/-ENOMEM after printing why. */
static int dump_loop(struct roce_pcap_reader *r, const struct dump_opts *o,
		     struct dump_stats *st, struct batch *b)
{
	struct roce_pcap_rec rec;
	char err[ROCE_PCAP_ERRLEN];
	uint64_t t0 = 0, n = 0;
	int rc;

	while ((rc = roce_pcap_next(r, &rec, err)) == 1) {
		if (n++ == 0)
			t0 = rec.ts_ns;
		int64_t rel = rel_time(rec.ts_ns, t0);
		if (o->max || o->iface) {
			if (dump_one(roce_pcap_link(r), &rec, rel, o, st))
				break;
			continue;
		}
		if (!batch_has_room(b, rec.caplen) &&
		    batch_process(b, stdout, st))
			goto nomem;
		if (batch_add(b, rec.data, rec.caplen, rec.wire_len, n, rel))
			goto nomem;
	}
	/* What was read before a broken record is still shown and counted */
	if (batch_process(b, stdout, st))
		goto nomem;
	if (rc < 0) {
		fprintf(stderr, "rocemu dump: %s: %s\n", o->path, err);
		return -EIO;
	}
	return 0;
nomem:
	fprintf(stderr, "rocemu dump: %s: out of memory\n", o->path);
	return -ENOMEM;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_opts o = { 0 };
	struct roce_pcap_reader *r;

	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc > 0 ? CLI_OK : CLI_USAGE;
	if (cli_source_open("dump", o.path, o.iface, &r) < 0)
		return CLI_USAGE;
	struct dump_stats *st = calloc(1, sizeof(*st));
	struct batch *b = batch_new(roce_pcap_link(r), o.style);
	if (!st || !b) {
		fprintf(stderr, "rocemu dump: %s: out of memory\n", o.path);
		rc = CLI_USAGE;
		goto done;
	}
	rc = dump_loop(r, &o, st, b);
	if (o.style == STYLE_JSON)
		dump_stats_print_json(stdout, st);
	else
		dump_stats_print_text(stdout, st,
				      o.style == STYLE_TREE && st->roce > 0);
	int werr = fflush(stdout) ? errno : 0;
	if (werr || ferror(stdout)) {
		fprintf(stderr,
			"rocemu dump: %s: writing the output failed%s%s\n",
			o.path, werr ? ": " : "", werr ? strerror(werr) : "");
		rc = -EIO;
	}
	rc = rc ? CLI_USAGE : dump_stats_clean(st) ? CLI_OK : CLI_FAIL;
done:
	batch_free(b);
	free(st);
	cli_source_close(r);
	return rc;
}
