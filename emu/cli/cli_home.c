/* SPDX-License-Identifier: MIT */
/* The conformance home: where rocemu conform and replay find the scenarios and the list of differences. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Where make install puts the conformance home's parent: $(PREFIX)/share/rocemu (Makefile). */
#ifndef ROCEMU_DATADIR
#define ROCEMU_DATADIR "/usr/local/share/rocemu"
#endif

static int is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/*
 * A checkout first (developers), then beside the binary so that a tree
 * installed with DESTDIR, or moved whole, works too, then ROCEMU_DATADIR.
 */
const char *cli_conformance_home(void)
{
	static char beside[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t l;

	if (is_dir("conformance/scenarios"))
		return "conformance";
	l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (l > 0) {
		exe[l] = 0;
		/* <prefix>/bin/rocemu -> <prefix> */
		for (int up = 0; up < 2; up++) {
			char *slash = strrchr(exe, '/');
			if (slash)
				*slash = 0;
		}
		int w = snprintf(beside, sizeof(beside),
				 "%s/share/rocemu/conformance", exe);
		if (w > 0 && (size_t)w < sizeof(beside) && is_dir(beside))
			return beside;
	}
	return ROCEMU_DATADIR "/conformance";
}

const char *cli_in_home(const char *home, const char *name, char *buf,
			size_t cap)
{
	int w = snprintf(buf, cap, "%s/%s", home, name);

	return w > 0 && (size_t)w < cap ? buf : NULL;
}
