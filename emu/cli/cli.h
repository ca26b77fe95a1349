/* SPDX-License-Identifier: MIT */
/* The rocemu command-line tool: one function per subcommand. */
#ifndef ROCEMU_EMU_CLI_H
#define ROCEMU_EMU_CLI_H

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
/* rocemu demo [CAPTURE]: the annotated RC run on the deterministic wire. */
int cmd_demo(int argc, char **argv);
/* rocemu ping: round trips to a peer over UDP, client or server. */
int cmd_ping(int argc, char **argv);
/* rocemu perf: SEND, WRITE or READ bandwidth to a peer over UDP. */
int cmd_perf(int argc, char **argv);
/* rocemu conform: the conformance scenarios against a device's agent. */
int cmd_conform(int argc, char **argv);
/* rocemu ladder CAPTURE: a message sequence chart per flow, text and SVG. */
int cmd_ladder(int argc, char **argv);

#endif
