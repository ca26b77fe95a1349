/* SPDX-License-Identifier: MIT */
/* Capture file or live interface; Ctrl-C ends a live capture, not the process. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_source.h"

/* The live reader the signal handler stops: one per process at a time. */
static struct roce_pcap_reader *volatile live;

static void on_signal(int sig)
{
	(void)sig;
	roce_pcap_break(live);
}

static void handle(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* The two ways to get the privilege, with this program's own path. */
static void advise_privilege(const char *tool, const char *iface)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		strcpy(self, "rocemu");
	else
		self[n] = 0;
	fprintf(stderr,
		"run it as root:  sudo %s %s -i %s\n"
		"or let this binary capture, once:  "
		"sudo setcap cap_net_raw,cap_net_admin=eip %s\n",
		self, tool, iface, self);
}

int cli_source_open(const char *tool, const char *path, const char *iface,
		    struct roce_pcap_reader **r)
{
	char err[ROCE_PCAP_ERRLEN];
	int rc;

	if (!iface) {
		rc = roce_pcap_open(path, r, err);
		if (rc < 0)
			fprintf(stderr, "rocemu %s: %s: %s\n", tool, path, err);
		return rc;
	}
	rc = roce_pcap_open_live(iface, r, err);
	if (rc < 0) {
		fprintf(stderr, "rocemu %s: %s\n", tool, err);
		if (rc == -EPERM)
			advise_privilege(tool, iface);
		return rc;
	}
	live = *r;
	handle(SIGINT, on_signal);
	handle(SIGTERM, on_signal);
	fprintf(stderr, "rocemu %s: capturing RoCEv2 (UDP port 4791) on %s; "
			"Ctrl-C ends it\n", tool, iface);
	return 0;
}

void cli_source_close(struct roce_pcap_reader *r)
{
	if (r && r == live) {
		handle(SIGINT, SIG_DFL);
		handle(SIGTERM, SIG_DFL);
		live = NULL;
	}
	roce_pcap_close(r);
}

int cli_capture_arg(const char *tool, const char *usage, int argc,
		    char **argv, int first, const char *iface,
		    const char **path)
{
	const char *why = NULL;

	if (iface && first != argc)
		why = "-i reads an interface, not a capture file too";
	else if (!iface && first == argc)
		why = "no capture file given";
	else if (!iface && first != argc - 1)
		why = "one capture file at a time";
	if (why) {
		fprintf(stderr, "rocemu %s: %s\n%s", tool, why, usage);
		return -EINVAL;
	}
	*path = iface ? iface : argv[first];
	return 0;
}

int cli_flow_arg(const char *tool, const char *arg, int *flow)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || !*arg || v < 0 || v > 0x7fffffff) {
		fprintf(stderr, "rocemu %s: --flow wants a flow number "
				"(0, 1, ...), not '%s'\n", tool, arg);
		return -EINVAL;
	}
	*flow = (int)v;
	return 0;
}
