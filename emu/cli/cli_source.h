/* SPDX-License-Identifier: MIT */
/* Where a command's packets come from: a capture file, or a live interface until Ctrl-C. */
#ifndef ROCEMU_EMU_CLI_SOURCE_H
#define ROCEMU_EMU_CLI_SOURCE_H

#include "rocemu/pcapio.h"

/*
 * Opens the capture file path, or when iface is not NULL the live
 * interface iface; for a live one, SIGINT and SIGTERM then end the
 * reading cleanly (roce_pcap_next returns 0) instead of the process, so
 * the command still prints its summary. Returns 0 with *r set; on failure
 * prints "rocemu TOOL: NAME: reason" on stderr and returns the negative
 * errno of roce_pcap_open or roce_pcap_open_live.
 */
int cli_source_open(const char *tool, const char *path, const char *iface,
		    struct roce_pcap_reader **r);

/*
 * The capture named after the options (argv[first..argc)): exactly one
 * file, or none when iface is set (live; *path is then iface). Returns 0
 * with *path set; -EINVAL after printing "rocemu TOOL: why" and usage on
 * stderr (*path untouched).
 */
int cli_capture_arg(const char *tool, const char *usage, int argc,
		    char **argv, int first, const char *iface,
		    const char **path);

/*
 * A flow number for --flow (0, 1, ... as the tools number flows): 0 and
 * *flow set; -EINVAL after printing why on stderr (*flow untouched).
 */
int cli_flow_arg(const char *tool, const char *arg, int *flow);

/* Closes r and gives SIGINT and SIGTERM back their default action. */
void cli_source_close(struct roce_pcap_reader *r);

#endif
