/* SPDX-License-Identifier: MIT */
/* rocemu: entry point, dispatching to subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "demo", cmd_demo, "two emulated devices, traced, written to a pcap" },
	{ "check", cmd_check, "judge a capture against the IBTA transport rules" },
	{ "dump", cmd_dump, "decode a capture and verify every ICRC" },
	{ "ladder", cmd_ladder, "a message sequence chart per flow (text, SVG)" },
	{ "conform", cmd_conform, "play the conformance scenarios against a device's agent" },
	{ "replay", cmd_replay, "feed a capture's requests to rocemu, compare its answers" },
	{ "ping", cmd_ping, "round trips between two rocemu devices (RC/UC/UD)" },
	{ "perf", cmd_perf, "bandwidth and latency: write, read, send, atomic" },
};

static int usage(FILE *out, int rc)
{
	fprintf(out, "usage: rocemu COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(out, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(out, "\n'rocemu COMMAND --help' describes one command.\n");
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr, CLI_USAGE);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return usage(stdout, CLI_OK);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].run(argc - 1, argv + 1);
	fprintf(stderr, "rocemu: unknown command '%s'\n", argv[1]);
	return usage(stderr, CLI_USAGE);
}
