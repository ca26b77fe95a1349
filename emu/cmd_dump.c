/* SPDX-License-Identifier: MIT */
/* rocemu dump: decode every RoCEv2 packet of a capture and verify its ICRC. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dump_stats.h"
#include "rocemu/dissect.h"
#include "rocemu/pcapio.h"

enum style { STYLE_LINE, STYLE_TREE, STYLE_JSON };

struct dump_opts {
	const char *path;
	enum style style;
	uint64_t max;		/* RoCE packets to show; 0: all */
};

enum {
	OUT_CAP = 1 << 18,
	/* Room one rendering may need; the buffer is flushed below it. */
	OUT_SLACK = 8192,
};

static const char usage_text[] =
	"usage: rocemu dump CAPTURE [-v] [--json] [-c N]\n"
	"Decode each RoCEv2 packet (UDP port 4791) of a pcap or pcapng file\n"
	"and verify its ICRC.\n"
	"  -v          every field of every header\n"
	"  --json      one JSON object per packet, then a summary object\n"
	"  -c N        stop after N RoCEv2 packets\n"
	"Exit status: 0 if every RoCEv2 packet decodes and its ICRC\n"
	"verifies, 1 otherwise, 2 for a usage or file error.\n";

static int parse_args(int argc, char **argv, struct dump_opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	char *end;

	while ((c = getopt_long(argc, argv, "vc:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'v': o->style = STYLE_TREE; break;
		case 'j': o->style = STYLE_JSON; break;
		case 'c':
			errno = 0;
			o->max = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-' ||
			    o->max == 0) {
				fprintf(stderr, "rocemu dump: -c wants a "
						"count of 1 or more, not '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'h': fputs(usage_text, stdout); return 1;
		default: fputs(usage_text, stderr); return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "rocemu dump: %s\n%s",
			optind == argc ? "no capture file given"
				       : "one capture file at a time",
			usage_text);
		return -EINVAL;
	}
	o->path = argv[optind];
	return 0;
}

static void render(struct roce_sb *sb, const struct dump_opts *o,
		   const struct roce_dissect_in *in,
		   const struct roce_frame *f)
{
	switch (o->style) {
	case STYLE_LINE: roce_fmt_line(sb, in, f); break;
	case STYLE_TREE: roce_fmt_tree(sb, in, f); break;
	case STYLE_JSON: roce_fmt_json(sb, in, f); break;
	}
}

static void flush(struct roce_sb *sb)
{
	fwrite(sb->buf, 1, sb->len, stdout);
	sb->len = 0;
}

/* Reads every frame; returns 0, or -EIO after printing why. */
static int dump_loop(struct roce_pcap_reader *r, const struct dump_opts *o,
		     struct dump_stats *st, char *out)
{
	struct roce_pcap_rec rec;
	struct roce_frame f;
	struct roce_sb sb;
	char err[ROCE_PCAP_ERRLEN];
	uint64_t t0 = 0;
	int rc;

	roce_sb_init(&sb, out, OUT_CAP);
	while ((rc = roce_pcap_next(r, &rec, err)) == 1) {
		const char *why = "";
		if (st->frames == 0)
			t0 = rec.ts_ns;
		int prc = roce_frame_parse(roce_pcap_link(r), rec.data,
					   rec.caplen, rec.wire_len, &f, &why);
		dump_stats_add(st, prc, why, &f);
		if (prc == -ENOMSG)
			continue;
		struct roce_dissect_in in = {
			.frame_no = st->frames, .rel_ns = rec.ts_ns - t0,
			.caplen = rec.caplen, .status = prc, .why = why,
		};
		if (sb.cap - sb.len < OUT_SLACK)
			flush(&sb);
		render(&sb, o, &in, &f);
		if (o->max && st->roce >= o->max)
			break;
	}
	flush(&sb);
	if (rc < 0) {
		fprintf(stderr, "rocemu dump: %s: %s\n", o->path, err);
		return -EIO;
	}
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_opts o = { 0 };
	struct roce_pcap_reader *r;
	char err[ROCE_PCAP_ERRLEN];

	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc > 0 ? CLI_OK : CLI_USAGE;
	if (roce_pcap_open(o.path, &r, err) < 0) {
		fprintf(stderr, "rocemu dump: %s\n", err);
		return CLI_USAGE;
	}
	struct dump_stats *st = calloc(1, sizeof(*st));
	char *out = malloc(OUT_CAP);
	if (!st || !out) {
		fprintf(stderr, "rocemu dump: out of memory\n");
		rc = CLI_USAGE;
		goto done;
	}
	rc = dump_loop(r, &o, st, out);
	if (o.style == STYLE_JSON)
		dump_stats_print_json(stdout, st);
	else
		dump_stats_print_text(stdout, st);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "rocemu dump: writing the output failed\n");
		rc = -EIO;
	}
	rc = rc ? CLI_USAGE : dump_stats_clean(st) ? CLI_OK : CLI_FAIL;
done:
	free(out);
	free(st);
	roce_pcap_close(r);
	return rc;
}
