/* SPDX-License-Identifier: MIT */
/* rocemu conform: the conformance scenarios against a device's rocemu-agent. */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rocemu/rules.h"

#include "cli.h"
#include "conform.h"

/* TOKEN_MAX: as rocemu-agent's (conformance/PROTOCOL.md). */
enum { DEFAULT_AGENT_PORT = 18515, MAX_SCENARIOS = 256, TOKEN_MAX = 256 };

static const char usage[] =
	"usage: rocemu conform --agent HOST[:PORT] --local ADDR [--local ADDR6]\n"
	"                      [options] [SCENARIO...]\n"
	"       rocemu conform --lint [--dir DIR] [SCENARIO...]\n"
	"       rocemu conform --coverage [--dir DIR] [SCENARIO...]\n"
	"\n"
	"Plays the conformance scenarios against the device whose rocemu-agent\n"
	"listens at HOST:PORT (default port 18515), from a UDP socket at ADDR\n"
	"port 4791. SCENARIO is a file or a name in DIR; none: every DIR/*.scn.\n"
	"Given an IPv4 and an IPv6 ADDR, every scenario runs over IPv4, then\n"
	"over IPv6, each time to the device's RoCEv2 GID of that version.\n"
	"\n"
	"Options:\n"
	"  --agent HOST[:PORT]      the agent of the device under test\n"
	"  --local ADDR             the address of this end's UDP socket; once\n"
	"                           per IP version (IPv4, IPv6) to run over both\n"
	"  --ipv4, --ipv6           run over that IP version only (of the\n"
	"                           --local addresses given)\n"
	"  --dir DIR                where scenarios are (default: HOME/scenarios)\n"
	"  --known FILE             the list of differences whose conform: entries\n"
	"                           are known deviations (default\n"
	"                           HOME/differences.md)\n"
	"  --impl NAME              the implementation, for the known deviations\n"
	"                           (default: the agent's device name without its\n"
	"                           digits: rxe, rocemu)\n"
	"  --junit FILE             a JUnit XML report\n"
	"  --pcap FILE              every packet of the session\n"
	"  --agent-token-file FILE  the token the agent asks for (its first line;\n"
	"                           default: $ROCEMU_AGENT_TOKEN if set), sent first\n"
	"  -v                       every packet and agent answer as it happens\n"
	"  --lint                   read the scenarios and the list of differences,\n"
	"                           and report format errors only\n"
	"  --coverage               each rule of the rule book (rocemu check\n"
	"                           --rules) with the scenarios that test it,\n"
	"                           not applicable, or not yet; exit 1 when a\n"
	"                           scenario names no rule\n"
	"  -h, --help               print this text and exit\n"
	"\n"
	"HOME is the conformance home: conformance/ when run from the top of a\n"
	"source tree, else <prefix>/share/rocemu/conformance beside this binary,\n"
	"else the one the build's PREFIX names.\n"
	"\n"
	"Environment:\n"
	"  ROCEMU_AGENT_TOKEN  the agent's token when --agent-token-file is not given\n"
	"\n"
	"Exit status:\n"
	"  0  every applicable scenario passed\n"
	"  1  a scenario failed\n"
	"  2  a usage or set-up error\n";

struct opts {
	const char *home;	/* the conformance home (default_home()) */
	const char *agent, *dir, *known, *impl, *junit, *pcap, *token_file;
	const char *local[2];	/* the --local address of each IP version */
	bool only[2];		/* --ipv4, --ipv6 */
	bool verbose, lint, coverage;
	const char *names[MAX_SCENARIOS];
	unsigned nnames;
};

/* A --local address, to the slot of its IP version; -1 when that
 * version has one already. */
static int add_local(struct opts *o, const char *addr)
{
	int f = strchr(addr, ':') && strncmp(addr, "::ffff:", 7) &&
		strncmp(addr, "::FFFF:", 7) ? CF_IPV6 : CF_IPV4;

	if (o->local[f]) {
		fprintf(stderr, "rocemu conform: --local %s: an %s address is given "
			"already (%s); --local takes one of each IP version\n", addr,
			f ? "IPv6" : "IPv4", o->local[f]);
		return -1;
	}
	o->local[f] = addr;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static char dir[PATH_MAX];

	o->home = cli_conformance_home();
	o->dir = cli_in_home(o->home, "scenarios", dir, sizeof(dir));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *fam_slot = NULL;
		const char **slot = !strcmp(a, "--agent") ? &o->agent :
				    !strcmp(a, "--local") ? &fam_slot :
				    !strcmp(a, "--dir") ? &o->dir :
				    !strcmp(a, "--known") ? &o->known :
				    !strcmp(a, "--impl") ? &o->impl :
				    !strcmp(a, "--junit") ? &o->junit :
				    !strcmp(a, "--pcap") ? &o->pcap :
				    !strcmp(a, "--agent-token-file") ? &o->token_file : NULL;
		if (slot) {
			if (i + 1 == argc) {
				fprintf(stderr, "rocemu conform: %s needs a value\n%s", a, usage);
				return -1;
			}
			*slot = argv[++i];
			if (slot == &fam_slot && add_local(o, fam_slot))
				return -1;
		} else if (!strcmp(a, "--ipv4") || !strcmp(a, "--ipv6")) {
			o->only[a[5] == '6'] = true;
		} else if (!strcmp(a, "-v")) {
			o->verbose = true;
		} else if (!strcmp(a, "--lint")) {
			o->lint = true;
		} else if (!strcmp(a, "--coverage")) {
			o->lint = o->coverage = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 1;
		} else if (a[0] == '-') {
			fprintf(stderr, "rocemu conform: unknown option %s\n%s", a, usage);
			return -1;
		} else if (o->nnames < MAX_SCENARIOS) {
			o->names[o->nnames++] = a;
		}
	}
	if (!o->dir) {
		fprintf(stderr, "rocemu conform: %s: the conformance home's path is too long\n",
			o->home);
		return -1;
	}
	if (!o->lint && (!o->agent || (!o->local[0] && !o->local[1]))) {
		fprintf(stderr, "rocemu conform: --agent and --local are needed\n%s", usage);
		return -1;
	}
	for (int f = CF_IPV4; f <= CF_IPV6 && !o->lint; f++)
		if (o->only[f] && !o->local[f]) {
			fprintf(stderr, "rocemu conform: --%s needs an %s --local address\n",
				cf_family_name(f), f ? "IPv6" : "IPv4");
			return -1;
		}
	return 0;
}

/* Whether IP version f is to be run: its --local given, and no --ipv4
 * or --ipv6 that leaves it out. */
static bool runs(const struct opts *o, int f)
{
	return o->local[f] && (o->only[f] || !o->only[!f]);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every DIR/NAME.scn, sorted, as paths into names (malloc'd); the count or -1. */
static int list_dir(const char *dir, char **names, unsigned cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	if (!d) {
		fprintf(stderr, "rocemu conform: %s: cannot read the scenario folder\n", dir);
		return -1;
	}
	while ((e = readdir(d)) && n < cap) {
		size_t l = strlen(e->d_name);
		if (l > 4 && !strcmp(e->d_name + l - 4, ".scn")) {
			names[n] = malloc(strlen(dir) + l + 2);
			if (!names[n])
				break;
			sprintf(names[n++], "%s/%s", dir, e->d_name);
		}
	}
	closedir(d);
	qsort(names, n, sizeof(*names), by_name);
	return (int)n;
}

/* A scenario argument as a path: itself if it is a file, else DIR/NAME.scn. */
static char *scenario_path(const char *dir, const char *name)
{
	struct stat st;
	char *p = malloc(strlen(dir) + strlen(name) + 6);

	if (!p)
		return NULL;
	if (!stat(name, &st) && S_ISREG(st.st_mode))
		strcpy(p, name);
	else
		sprintf(p, "%s/%s.scn", dir, name);
	return p;
}

/* Reads every scenario; -1 after printing each format error. */
/* Each ID of the scenario's covers line, and each step's rule=, names a
 * rule of the book; false, after saying which does not. */
static bool covers_known(const struct cf_scenario *s)
{
	char ids[sizeof(s->covers)], *save = NULL;
	bool ok = true;

	snprintf(ids, sizeof(ids), "%s", s->covers);
	for (char *t = strtok_r(ids, " ", &save); t;
	     t = strtok_r(NULL, " ", &save))
		if (!roce_rule_find(t)) {
			fprintf(stderr, "rocemu conform: %s: covers %s, which "
				"is no rule of the book (rocemu check --rules)\n",
				s->path, t);
			ok = false;
		}
	for (unsigned i = 0; i < s->nsteps; i++)
		if (s->steps[i].rule[0] && !roce_rule_find(s->steps[i].rule)) {
			fprintf(stderr, "rocemu conform: %s:%u: rule=%s, which is no "
				"rule of the book (rocemu check --rules)\n", s->path,
				s->steps[i].line, s->steps[i].rule);
			ok = false;
		}
	return ok;
}

static int load_all(const struct opts *o, struct cf_scenario **sc, unsigned *n)
{
	char *paths[MAX_SCENARIOS];
	int np = 0, bad = 0;
	char err[512];

	if (o->nnames)
		for (unsigned i = 0; i < o->nnames; i++)
			paths[np++] = scenario_path(o->dir, o->names[i]);
	else if ((np = list_dir(o->dir, paths, MAX_SCENARIOS)) < 0)
		return -1;
	*n = 0;
	for (int i = 0; i < np; i++) {
		struct cf_scenario *s = malloc(sizeof(*s));
		if (!s || !paths[i] || cf_scenario_load(paths[i], s, err, sizeof(err))) {
			fprintf(stderr, "rocemu conform: %s\n", s && paths[i] ? err : "out of memory");
			free(s);
			bad = 1;
		} else {
			sc[(*n)++] = s;
			bad |= !covers_known(s);
		}
		free(paths[i]);
	}
	if (!np)
		fprintf(stderr, "rocemu conform: no scenarios in %s\n", o->dir);
	return bad || !np ? -1 : 0;
}

/* "rxe0" -> "rxe", "mlx5_0" -> "mlx5": the device name without its number. */
static void impl_of(const char *dev, char *impl, size_t cap)
{
	snprintf(impl, cap, "%s", dev);
	size_t l = strlen(impl);
	while (l && isdigit((unsigned char)impl[l - 1]))
		impl[--l] = 0;
	if (l && impl[l - 1] == '_')
		impl[--l] = 0;
}

static void print_result(const struct cf_scenario *sc, const struct cf_result *r)
{
	static const char *const name[] = { "PASS", "FAIL", "N/A" };

	printf("%-5s %s (%s) (%llu ms): %s\n", r->known ? "KNOWN" : name[r->verdict], sc->id,
	       cf_family_name(r->family), (unsigned long long)r->ms, sc->title);
	if (r->verdict == CF_PASS)
		return;
	printf("      rule: %s\n", sc->rule);
	printf("      %s%s:%u: %s\n", r->verdict == CF_NA ? "not applicable: " : "",
	       sc->path, r->step_line, r->why);
	if (r->step_rule[0]) {
		const struct roce_rule *b = roce_rule_find(r->step_rule);
		printf("      step rule: %s (IBTA %s): %s\n", r->step_rule,
		       b ? b->section : "?", b ? b->text : "?");
	}
	if (r->known)
		printf("      deviates from the IBTA; known %s behaviour: %s\n", r->known->impl,
		       r->known->text);
	if (r->verdict == CF_FAIL) {
		unsigned left_out, n = cf_evidence_count(r, &left_out);
		for (unsigned i = 0; i < n; i++) {
			if (i == CF_EVIDENCE_HEAD && left_out)
				printf("      ... %u lines left out ...\n", left_out);
			printf("      %s\n", cf_evidence_at(r, i));
		}
	}
}

/* The wire of each IP version run, s->wire the one in use. */
static struct cf_wire wires[2];

/* Makes family f's wire the session's: the other one's capture and
 * clock go with it, so one capture holds both. */
static void use_family(struct cf_session *s, int f)
{
	if (s->family != f) {
		wires[s->family] = s->wire;
		s->wire = wires[f];
		s->wire.pcap = wires[s->family].pcap;
		wires[s->family].pcap = NULL;
		s->family = f;
	}
	s->sgid_index = s->dev.fam_index[f];
	memcpy(s->wire.peer_gid, s->dev.fam_gid[f], 16);
}

/* Runs every scenario over each IP version asked for; the exit status. */
static int run_all(const struct opts *o, struct cf_session *s,
		   struct cf_scenario **sc, unsigned n)
{
	struct cf_result *r = calloc(2 * (size_t)n, sizeof(*r));
	const struct cf_scenario **rs = calloc(2 * (size_t)n, sizeof(*rs));
	unsigned failed = 0, k = 0;

	if (!r || !rs) {
		free(r);
		free(rs);
		return CLI_USAGE;
	}
	for (int f = CF_IPV4; f <= CF_IPV6; f++) {
		if (!runs(o, f))
			continue;
		use_family(s, f);
		for (unsigned i = 0; i < n; i++, k++) {
			rs[k] = sc[i];
			cf_run(s, sc[i], &r[k]);
			print_result(sc[i], &r[k]);
			fflush(stdout);
			failed += r[k].verdict == CF_FAIL;
		}
	}
	cf_report_table(stdout, rs, r, k, s->impl);
	int rc = failed ? CLI_FAIL : CLI_OK;
	if (o->junit && cf_report_junit(o->junit, rs, r, k, s->impl)) {
		fprintf(stderr, "rocemu conform: %s: cannot write the JUnit report\n", o->junit);
		rc = CLI_USAGE;
	}
	free(r);
	free(rs);
	return rc;
}

/* A token travels as one word of printable ASCII (conformance/PROTOCOL.md). */
static bool token_ok(const char *t)
{
	size_t n = strlen(t);

	if (!n || n > TOKEN_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (t[i] <= ' ' || t[i] >= 127)
			return false;
	return true;
}

/* The token for the agent into s->agent.token: the file's first line
 * (trailing blanks dropped), else $ROCEMU_AGENT_TOKEN, else none. 0, or
 * -1 after saying why. */
static int load_token(const struct opts *o, struct cf_session *s)
{
	static char tok[TOKEN_MAX + 2];
	const char *env = getenv("ROCEMU_AGENT_TOKEN");
	const char *from = "ROCEMU_AGENT_TOKEN";

	if (o->token_file) {
		FILE *f = fopen(o->token_file, "re");
		if (!f) {
			fprintf(stderr, "rocemu conform: %s: cannot read the agent token\n",
				o->token_file);
			return -1;
		}
		if (!fgets(tok, sizeof(tok), f))
			tok[0] = 0;
		fclose(f);
		size_t n = strlen(tok);
		while (n && strchr(" \t\r\n", tok[n - 1]))
			tok[--n] = 0;
		from = o->token_file;
	} else if (env && *env) {
		snprintf(tok, sizeof(tok), "%s", env);
	} else {
		return 0;
	}
	if (!token_ok(tok)) {
		fprintf(stderr, "rocemu conform: %s: the agent token is 1 to %d printable "
			"characters without spaces\n", from, TOKEN_MAX);
		return -1;
	}
	s->agent.token = tok;
	return 0;
}

/*
 * The list of differences into *d: --known's, else HOME/differences.md
 * when there is one (none: no deviation is known). 0, or -1 after
 * saying why (a list that cannot be read or breaks the format).
 */
static int load_known(const struct opts *o, struct cf_diffs *d)
{
	char path[PATH_MAX], err[CF_DIFF_LINE];
	const char *kp = o->known ? o->known :
			 cli_in_home(o->home, "differences.md", path, sizeof(path));
	struct stat st;

	memset(d, 0, sizeof(*d));
	if (!o->known && (!kp || stat(kp, &st)))
		return 0;
	if (cf_diffs_load(kp, d, err, sizeof(err))) {
		fprintf(stderr, "rocemu conform: %s\n", err);
		return -1;
	}
	return 0;
}

/* The agent's address, the capture; 0 or -1. */
static int open_session(const struct opts *o, struct cf_session *s)
{
	char host[128], err[512];
	const char *colon = strrchr(o->agent, ':');

	s->agent.fd = -1;
	s->agent_port = DEFAULT_AGENT_PORT;
	snprintf(host, sizeof(host), "%s", o->agent);
	if (colon && !strchr(colon + 1, ']') && strchr(o->agent, ':') == colon) {
		host[colon - o->agent] = 0;
		s->agent_port = atoi(colon + 1);
	}
	s->agent_host = strdup(host);
	s->verbose = o->verbose;
	s->my_qpn = 0x000c00;
	s->first_qpn = s->my_qpn + 1;
	if (o->verbose)
		s->agent.log = stdout;
	if (load_token(o, s))
		return -1;
	int first = runs(o, CF_IPV4) ? CF_IPV4 : CF_IPV6;
	for (int f = first; f <= CF_IPV6; f++)
		if (runs(o, f) && cf_wire_open(&wires[f], o->local[f], f == first ? o->pcap : NULL,
					       err, sizeof(err))) {
			fprintf(stderr, "rocemu conform: %s\n", err);
			return -1;
		}
	wires[!first].t0_ns = wires[first].t0_ns;	/* one clock for the capture */
	s->wire = wires[first];
	wires[first].fd = -1;		/* s->wire has its socket and capture now */
	wires[first].pcap = NULL;
	s->family = first;
	if (cf_agent_open(&s->agent, s->agent_host, s->agent_port, &s->dev, err, sizeof(err))) {
		fprintf(stderr, "rocemu conform: %s\n", err);
		return -1;
	}
	cf_agent_close(&s->agent);
	impl_of(s->dev.name, s->impl, sizeof(s->impl));
	if (o->impl)
		snprintf(s->impl, sizeof(s->impl), "%s", o->impl);
	char gids[2][64] = { "", "" };
	for (int f = CF_IPV4; f <= CF_IPV6; f++) {
		if (!runs(o, f))
			continue;
		if (!s->dev.has_gid[f]) {
			fprintf(stderr, "rocemu conform: the device has no RoCEv2 %s GID "
				"(the agent's hello: %s); give it one, or run %s only\n",
				f ? "IPv6" : "IPv4", s->agent.line, f ? "--ipv4" : "--ipv6");
			return -1;
		}
		inet_ntop(AF_INET6, s->dev.fam_gid[f], gids[f], sizeof(gids[f]));
	}
	bool both = runs(o, CF_IPV4) && runs(o, CF_IPV6);
	printf("conform: device %s (%s) gid %s%s%s, active MTU %u, via agent %s:%d; "
	       "conform at %s%s%s\n", s->dev.name, s->impl, gids[first], both ? " and " : "",
	       both ? gids[1] : "", s->dev.active_mtu, s->agent_host, s->agent_port,
	       o->local[first], both ? " and " : "", both ? o->local[1] : "");
	return 0;
}

int cmd_conform(int argc, char **argv)
{
	struct opts o = { .agent = NULL };
	static struct cf_scenario *sc[MAX_SCENARIOS];
	unsigned n = 0;

	int p = parse_opts(argc, argv, &o);
	if (p)
		return p > 0 ? CLI_OK : CLI_USAGE;
	static struct cf_diffs known;
	static struct cf_session s;
	int rc = CLI_OK;
	if (load_all(&o, sc, &n) || load_known(&o, &known)) {
		rc = CLI_USAGE;
	} else if (o.coverage) {
		rc = conform_coverage(sc, n) ? CLI_FAIL : CLI_OK;
	} else if (o.lint) {
		printf("conform: %u scenarios read from %s, no format errors\n",
		       n, o.dir);
		if (known.entries)
			printf("conform: %u differences listed, %u known deviations, "
			       "%u replay matchers\n", known.entries, known.nknown,
			       known.nreplay);
	} else {
		s.known = known.known;
		s.nknown = known.nknown;
		wires[0].fd = wires[1].fd = s.wire.fd = -1;
		rc = open_session(&o, &s) ? CLI_USAGE : run_all(&o, &s, sc, n);
		cf_wire_close(&s.wire);
		cf_wire_close(&wires[0]);
		cf_wire_close(&wires[1]);
		free((void *)s.agent_host);
	}
	for (unsigned i = 0; i < n; i++)
		free(sc[i]);
	cf_diffs_free(&known);
	return rc;
}
