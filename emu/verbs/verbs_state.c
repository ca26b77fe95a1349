/* SPDX-License-Identifier: MIT */
/* libibverbs.so.1: ROCEMU_STATE, the queue state on stderr (and in the trace) on a signal and at exit. */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_local.h"

/* The signal that asks for a dump (0: none, at exit only); whether
 * ROCEMU_STATE is on at all. */
static int state_sig;
static bool state_on;
/* Set by the handler, taken by the progress thread's tick: the handler
 * does nothing else (a lock-free atomic store is async-signal-safe). */
static atomic_int state_asked;
static struct sigaction state_old;	/* the handler ours replaced */
static bool state_installed;		/* once per process line */

/*
 * Records the signal and hands it on to the handler the program had
 * before (SIG_DFL and SIG_IGN: nothing more), so that a program which
 * installed its own first still gets it. A program that installs one
 * after replaces ours (docs/state.md).
 */
static void state_handler(int sig, siginfo_t *si, void *uc)
{
	atomic_store(&state_asked, 1);
	if (state_old.sa_flags & SA_SIGINFO) {
		if (state_old.sa_sigaction)
			state_old.sa_sigaction(sig, si, uc);
	} else if (state_old.sa_handler != SIG_DFL &&
		   state_old.sa_handler != SIG_IGN) {
		state_old.sa_handler(sig);
	}
}

/* The signal ROCEMU_STATE names: 1 is SIGUSR2; -1 if it names none. */
static int state_signal(const char *v)
{
	if (!strcmp(v, "1") || !strcmp(v, "SIGUSR2") || !strcmp(v, "USR2"))
		return SIGUSR2;
	if (!strcmp(v, "SIGUSR1") || !strcmp(v, "USR1"))
		return SIGUSR1;
	if (!strcmp(v, "exit"))
		return 0;
	return -1;
}

bool rv_state_from_env(void)
{
	const char *v = getenv("ROCEMU_STATE");

	if (!v || !*v || !strcmp(v, "0"))
		return false;
	int sig = state_signal(v);
	if (sig < 0) {
		fprintf(stderr, "rocemu: ROCEMU_STATE=%s: wanted 1 (SIGUSR2), "
				"SIGUSR1, SIGUSR2 or exit; no state dumps\n", v);
		return false;
	}
	state_on = true;
	state_sig = sig;
	if (!sig || state_installed)
		return true;
	/* SA_RESTART: the program's system calls interrupted by the signal
	 * carry on, as they would have without ROCEMU_STATE. */
	struct sigaction sa = { .sa_sigaction = state_handler,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &state_old)) {
		fprintf(stderr, "rocemu: ROCEMU_STATE: cannot catch signal %d; "
				"the state is dumped at exit only\n", sig);
		state_sig = 0;
		return true;
	}
	state_installed = true;
	return true;
}

static void state_line(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "rocemu: state: %s\n", line);
}

/* The dump: on stderr, and as state events in the trace file if any. */
static void dump(const char *when)
{
	struct rocemu_world *w = rv_world();

	if (!w)
		return;
	fprintf(stderr, "rocemu: state: dump %s (pid %ld)\n", when,
		(long)getpid());
	rocemu_world_dump_state(w, state_line, NULL);
	rocemu_world_trace_state(w);
}

void rv_state_tick(void)
{
	if (state_on && state_sig && atomic_exchange(&state_asked, 0)) {
		char when[48];
		snprintf(when, sizeof(when), "on signal %s",
			 state_sig == SIGUSR1 ? "SIGUSR1" : "SIGUSR2");
		dump(when);
	}
}

void rv_state_at_exit(void)
{
	if (state_on)
		dump("at exit");
}
