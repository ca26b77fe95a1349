/* SPDX-License-Identifier: MIT */
/* The rocemu command-line tool: one function per subcommand. */
#ifndef ROCEMU_EMU_CLI_H
#define ROCEMU_EMU_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>

/* Exit codes every subcommand uses. */
enum {
	CLI_OK = 0,
	CLI_FAIL = 1,	/* the tool ran and found a problem */
	CLI_USAGE = 2,	/* bad arguments or a file it cannot use */
};

/*
 * The subcommands, each given the arguments after its name (argv[0] is
 * the name). Each returns CLI_OK, CLI_FAIL when it ran and found a
 * problem, or CLI_USAGE with the reason on stderr; none exits itself.
 */
/* rocemu dump CAPTURE: decode and check every RoCEv2 packet. */
int cmd_dump(int argc, char **argv);
/* rocemu replay CAPTURE: the captured requests fed to rocemu's responder. */
int cmd_replay(int argc, char **argv);
/* rocemu check CAPTURE: judge every packet against the IBTA rules. */
int cmd_check(int argc, char **argv);

/* Prints s to f as a JSON string: quoted, with '"', '\\' and control
 * characters escaped. s may be NULL (printed as ""). */
void cli_json_str(FILE *f, const char *s);

/* rocemu check --rules: prints the rule book (rocemu/rules.h) to stdout,
 * a table or, with json, one object per rule. */
void check_print_book(bool json);

struct cf_scenario;
/* rocemu conform --coverage: prints each rule of the book with the
 * scenarios of sc[0..n) that cover it. Returns -1 (after saying which)
 * when a scenario names no rule, else 0. */
int conform_coverage(struct cf_scenario *const *sc, unsigned n);
/* rocemu demo [CAPTURE]: the annotated RC run on the deterministic wire. */
int cmd_demo(int argc, char **argv);
/* rocemu ping: round trips to a peer over UDP, client or server. */
int cmd_ping(int argc, char **argv);
/* rocemu perf: SEND, WRITE or READ bandwidth to a peer over UDP. */
int cmd_perf(int argc, char **argv);
/* rocemu conform: the conformance scenarios against a device's agent. */
int cmd_conform(int argc, char **argv);
/* rocemu impair: a relay between two endpoints, faults by rule. */
int cmd_impair(int argc, char **argv);
/* rocemu ladder CAPTURE: a message sequence chart per flow, text and SVG. */
int cmd_ladder(int argc, char **argv);
/* rocemu run PROGRAM: PROGRAM on the drop-ins, with /dev/infiniband and
 * /sys/class/infiniband of rocemu's device, in a bubblewrap namespace;
 * returns the program's status, CLI_USAGE when it cannot set that up. */
int cmd_run(int argc, char **argv);

/*
 * The conformance home (its scenarios/ and differences.md): a source
 * tree's conformance/ when run from its top; else the installed one
 * beside this very binary, <prefix>/share/rocemu/conformance for
 * <prefix>/bin/rocemu; else the one the build's PREFIX names. Never
 * fails; the folder may not exist.
 */
const char *cli_conformance_home(void);

/*
 * HOME/name into buf (cap bytes): buf, or NULL when it does not fit
 * (buf then unspecified).
 */
const char *cli_in_home(const char *home, const char *name, char *buf,
			size_t cap);

#endif
