/* SPDX-License-Identifier: MIT */
/* CHECK for the verbs test programs built against the drop-in: counts, and prints each failure with its place. */
#ifndef ROCEMU_TESTS_VERBS_CHECK_H
#define ROCEMU_TESTS_VERBS_CHECK_H

#include <stdio.h>

/* Each program prints these at the end and exits non-zero on a failure. */
static int passed, failed;

#define CHECK(cond, ...)                                                 \
	do {                                                             \
		if (cond) {                                              \
			passed++;                                        \
		} else {                                                 \
			failed++;                                        \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);      \
			printf(__VA_ARGS__);                             \
			printf("\n");                                    \
		}                                                        \
	} while (0)

/* CHECK whose message is the condition itself. */
#define EXPECT(cond) CHECK(cond, "%s", #cond)

#endif
