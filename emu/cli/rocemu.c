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
	{ "run", cmd_run, "a program on rocemu's device, found where programs look" },
	{ "impair", cmd_impair, "a relay that drops, delays, corrupts packets by rule" },
};

#ifndef ROCEMU_VERSION
#error "ROCEMU_VERSION is given by the Makefile (-DROCEMU_VERSION)"
#endif

enum { NCMDS = sizeof(cmds) / sizeof(cmds[0]) };

/* The tool's usage text, the source of rocemu(1): its sections are the
 * ones every subcommand's has (tools/mkman.py reads them). */
static int usage(FILE *out, int rc)
{
	fputs("usage: rocemu COMMAND [ARGS]\n"
	      "       rocemu help [COMMAND]\n"
	      "       rocemu --version\n"
	      "\n"
	      "rocemu is a software RoCEv2 (RDMA over Converged Ethernet) device\n"
	      "in userspace. This tool decodes, judges, charts and replays\n"
	      "captures of RoCEv2 traffic, runs devices against each other, and\n"
	      "plays conformance scenarios against any device's rocemu-agent.\n"
	      "'rocemu help COMMAND' (or 'rocemu COMMAND --help') describes one\n"
	      "command. Programs written to libibverbs run on the device through\n"
	      "its drop-in library (rocemu-dropin(7)).\n"
	      "\n"
	      "Commands:\n", out);
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(out, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fputs("\n"
	      "Options:\n"
	      "  -h, --help  print this text and exit\n"
	      "  --version   print the version and exit\n"
	      "\n"
	      "Environment:\n"
	      "  ROCEMU_AGENT_TOKEN  the token rocemu conform sends to the agent\n"
	      "                      when --agent-token-file is not given\n"
	      "  ROCEMU_ADDR         rocemu run: the device's address when\n"
	      "                      --addr is not given\n"
	      "\n"
	      "Exit status:\n"
	      "  0  success: the command ran and found no problem\n"
	      "  1  the command ran and found a problem (a broken rule, a\n"
	      "     divergence, a failed scenario or operation)\n"
	      "  2  a usage error, or a file or set-up the command cannot use\n",
	      out);
	return rc;
}

/* rocemu help [COMMAND]: the list, or COMMAND --help. */
static int help(int argc, char **argv)
{
	char name[] = "--help";

	if (argc < 3)
		return usage(stdout, CLI_OK);
	for (size_t i = 0; i < NCMDS; i++) {
		if (!strcmp(argv[2], cmds[i].name)) {
			char *args[] = { argv[2], name, NULL };
			return cmds[i].run(2, args);
		}
	}
	fprintf(stderr, "rocemu help: no command '%s' ('rocemu help' lists "
			"them)\n", argv[2]);
	return CLI_USAGE;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr, CLI_USAGE);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return usage(stdout, CLI_OK);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		puts("rocemu " ROCEMU_VERSION);
		return CLI_OK;
	}
	if (!strcmp(argv[1], "help"))
		return help(argc, argv);
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].run(argc - 1, argv + 1);
	fprintf(stderr, "rocemu: unknown command '%s'\n", argv[1]);
	return usage(stderr, CLI_USAGE);
}
