/* SPDX-License-Identifier: MIT */
/* rocemu impair: a relay between two RoCEv2 endpoints that drops, duplicates, delays, reorders, corrupts or ECN-marks packets by rule. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "impair.h"
#include "rocemu/frame.h"
#include "rocemu/pcapio.h"

static const char usage_text[] =
	"usage: rocemu impair --addr RELAY --a ADDR --b ADDR [options]\n"
	"       rocemu impair --eth --a LOCAL,PEER --b LOCAL,PEER [options]\n"
	"\n"
	"A relay between two RoCEv2 endpoints that forwards their packets both\n"
	"ways and drops, duplicates, delays, reorders, corrupts or ECN-marks\n"
	"the ones its rules pick (docs/impair.md has the rule form). It runs\n"
	"until SIGINT or SIGTERM, then prints what it did.\n"
	"\n"
	"Mode ip (the first form): the relay binds UDP port 4791 on RELAY;\n"
	"each endpoint (A and B, on this host or another) is told RELAY as its\n"
	"peer. A packet from A goes on to B and back, from RELAY, with the\n"
	"IP addresses, UDP port, checksums and ICRC made anew.\n"
	"Mode eth (--eth): each side is a UDP socket at LOCAL (HOST:PORT)\n"
	"exchanging whole Ethernet frames, one per datagram, with PEER, as\n"
	"qemu's -netdev socket,udp= and -netdev dgram do; frames go on\n"
	"unchanged, and only RoCEv2 ones meet the rules.\n"
	"\n"
	"Options:\n"
	"  --addr RELAY     mode ip: the relay's address\n"
	"  --a SIDE         mode ip: endpoint A's address; mode eth: LOCAL,PEER\n"
	"  --b SIDE         the same for B\n"
	"  --eth            mode eth\n"
	"  --rule RULE      a rule, e.g. 'drop opcode=RC_SEND_ONLY count=1'\n"
	"                   (repeatable; after those of --rules, in order)\n"
	"  --rules FILE     rules, one a line ('#' starts a comment)\n"
	"  --pcap-in FILE   a capture of every frame as it arrived\n"
	"  --pcap-out FILE  a capture of every frame as it was sent on\n"
	"  --json FILE      the report also as one JSON object in FILE\n"
	"  -h, --help       print this text and exit\n"
	"\n"
	"Rules: ACTION [ARG=VALUE]... [KEY=VALUE]..., each packet meeting them\n"
	"in order; actions: drop, dup [copies=N], delay ms=N, reorder\n"
	"[after=N] [ms=N], corrupt [byte=N] [icrc=keep|fix], ecn; keys:\n"
	"opcode=NAME[,NAME], qpn=N, psn=N or psn=LO-HI, dir=ab|ba, every=N,\n"
	"prob=P, seed=N, count=K.\n"
	"\n"
	"Exit status:\n"
	"  0  the relay ran and stopped on a signal\n"
	"  1  it failed while relaying (a capture it cannot write)\n"
	"  2  a usage error: a malformed rule, an unknown opcode name, an\n"
	"     address it cannot bind, a capture it cannot create\n";

static const char *who = "rocemu impair";
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct opts {
	struct impair_cfg c;
	const char *addr, *a, *b, *json, *pcap_in, *pcap_out;
	struct sockaddr_storage ss[4];
};

static int usage_err(const char *what, const char *v)
{
	fprintf(stderr, "%s: %s%s%s\n", who, what, v ? ": " : "", v ? v : "");
	return CLI_USAGE;
}

static int add_rule(struct opts *o, const char *text)
{
	char err[IMP_ERR_MAX];
	struct impair_rule *more = realloc(o->c.rules,
					   (o->c.nrules + 1) * sizeof(*more));

	if (!more)
		return usage_err("out of memory", NULL);
	o->c.rules = more;
	if (impair_rule_parse(text, &more[o->c.nrules], err)) {
		fprintf(stderr, "%s: rule '%s': %s\n", who, text, err);
		return CLI_USAGE;
	}
	o->c.nrules++;
	return CLI_OK;
}

/* HOST:PORT ([V6]:PORT) into ss. */
static int host_port(const char *text, struct sockaddr_storage *ss)
{
	char host[128];
	uint8_t gid[16];
	const char *colon = strrchr(text, ':');
	unsigned long port;
	char *end;

	if (!colon || (size_t)(colon - text) >= sizeof(host))
		return -EINVAL;
	memcpy(host, text, (size_t)(colon - text));
	host[colon - text] = 0;
	char *h = host;
	if (*h == '[' && h[strlen(h) - 1] == ']') {
		h[strlen(h) - 1] = 0;
		h++;
	}
	port = strtoul(colon + 1, &end, 10);
	if (*end || !colon[1] || port == 0 || port > 65535 ||
	    roce_gid_parse(h, gid))
		return -EINVAL;
	roce_gid_to_sockaddr(gid, (uint16_t)port, ss);
	return 0;
}

/* mode eth: LOCAL,PEER */
static int eth_side(struct opts *o, const char *v, int i)
{
	char buf[300];
	char *comma;

	snprintf(buf, sizeof(buf), "%s", v);
	comma = strchr(buf, ',');
	if (!comma)
		return -EINVAL;
	*comma = 0;
	if (host_port(buf, &o->ss[2 * i]) || host_port(comma + 1,
						       &o->ss[2 * i + 1]))
		return -EINVAL;
	return 0;
}

static int check_sides(struct opts *o)
{
	if (!o->a || !o->b)
		return usage_err("--a and --b are both needed (see --help)",
				 NULL);
	if (o->c.eth) {
		if (o->addr)
			return usage_err("--addr is for mode ip, not --eth",
					 NULL);
		if (eth_side(o, o->a, 0))
			return usage_err("--a wants LOCAL,PEER as HOST:PORT",
					 o->a);
		if (eth_side(o, o->b, 1))
			return usage_err("--b wants LOCAL,PEER as HOST:PORT",
					 o->b);
		o->c.a_local = &o->ss[0], o->c.a_peer = &o->ss[1];
		o->c.b_local = &o->ss[2], o->c.b_peer = &o->ss[3];
		return CLI_OK;
	}
	if (!o->addr)
		return usage_err("--addr RELAY is needed (or --eth)", NULL);
	if (roce_gid_parse(o->addr, o->c.relay_gid))
		return usage_err("--addr wants an IPv4 or IPv6 address",
				 o->addr);
	if (roce_gid_parse(o->a, o->c.a_gid))
		return usage_err("--a wants an IPv4 or IPv6 address", o->a);
	if (roce_gid_parse(o->b, o->c.b_gid))
		return usage_err("--b wants an IPv4 or IPv6 address", o->b);
	bool v4 = roce_gid_is_ipv4(o->c.relay_gid);
	if (roce_gid_is_ipv4(o->c.a_gid) != v4 ||
	    roce_gid_is_ipv4(o->c.b_gid) != v4)
		return usage_err("--addr, --a and --b must be of one IP version",
				 NULL);
	if (!memcmp(o->c.a_gid, o->c.b_gid, 16))
		return usage_err("--a and --b must differ", NULL);
	return CLI_OK;
}

static int parse(struct opts *o, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char **slot = !strcmp(a, "--addr") ? &o->addr
			: !strcmp(a, "--a") ? &o->a : !strcmp(a, "--b") ? &o->b
			: !strcmp(a, "--json") ? &o->json
			: !strcmp(a, "--pcap-in") ? &o->pcap_in
			: !strcmp(a, "--pcap-out") ? &o->pcap_out : NULL;
		bool rule = !strcmp(a, "--rule"), file = !strcmp(a, "--rules");

		if (!strcmp(a, "--eth")) {
			o->c.eth = true;
			continue;
		}
		if (!slot && !rule && !file)
			return usage_err("unknown option (see --help)", a);
		if (!v)
			return usage_err("a value is needed after", a);
		i++;
		if (slot) {
			*slot = v;
		} else if (rule) {
			if (add_rule(o, v))
				return CLI_USAGE;
		} else {
			char err[IMP_ERR_MAX];
			if (impair_rules_load(v, &o->c.rules, &o->c.nrules, err))
				return usage_err(err, NULL);
		}
	}
	return check_sides(o);
}

static void close_fds(int fds[2])
{
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Flushes and closes the captures: 0, or -1 when one did not reach its
 * file (said on stderr). */
static int finish(struct opts *o)
{
	int rc = 0;

	if (o->c.pcap_in && roce_pcap_finish(o->c.pcap_in)) {
		fprintf(stderr, "%s: cannot write %s\n", who, o->pcap_in);
		rc = -1;
	}
	if (o->c.pcap_out && roce_pcap_finish(o->c.pcap_out)) {
		fprintf(stderr, "%s: cannot write %s\n", who, o->pcap_out);
		rc = -1;
	}
	o->c.pcap_in = o->c.pcap_out = NULL;
	return rc;
}

/* Creates the captures asked for, each writing whole records as they come
 * (the relay ends by a signal); CLI_USAGE, the sockets closed, when one
 * cannot be created. */
static int open_captures(struct opts *o, int fds[2])
{
	const char *path[2] = { o->pcap_in, o->pcap_out };
	struct roce_pcap_writer **w[2] = { &o->c.pcap_in, &o->c.pcap_out };
	char why[ROCE_PCAP_ERRLEN] = "cannot write it";

	for (int i = 0; i < 2; i++) {
		if (!path[i])
			continue;
		if (roce_pcap_create(path[i], w[i], why) ||
		    roce_pcap_unbuffered(*w[i])) {
			/* why names the path */
			fprintf(stderr, "%s: cannot create a capture: %s\n",
				who, why);
			finish(o);
			close_fds(fds);
			return CLI_USAGE;
		}
	}
	return CLI_OK;
}

int cmd_impair(int argc, char **argv)
{
	struct opts o = { 0 };
	struct impair_stats st = { 0 };
	char err[IMP_ERR_MAX];
	int fds[2], rc;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage_text, stdout);
		return CLI_OK;
	}
	rc = parse(&o, argc, argv);
	if (!rc && impair_bind(&o.c, fds, err))
		rc = usage_err(err, NULL);
	else if (!rc)
		rc = open_captures(&o, fds);
	if (rc) {
		free(o.c.rules);
		return rc;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "%s: relaying, %zu rule%s (SIGINT or SIGTERM stops "
			"it)\n", who, o.c.nrules, o.c.nrules == 1 ? "" : "s");
	rc = impair_relay(&o.c, fds, &stop, &st, err) ? CLI_FAIL : CLI_OK;
	if (rc)
		fprintf(stderr, "%s: %s\n", who, err);
	impair_report(&o.c, &st, stdout, false);
	if (o.json) {
		FILE *j = fopen(o.json, "w");
		if (!j || (impair_report(&o.c, &st, j, true), fclose(j))) {
			fprintf(stderr, "%s: cannot write %s\n", who, o.json);
			rc = CLI_FAIL;
		}
	}
	if (finish(&o) && !rc)
		rc = CLI_FAIL;
	close_fds(fds);
	free(o.c.rules);
	return rc;
}
