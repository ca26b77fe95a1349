/* SPDX-License-Identifier: MIT */
/* Whether a range of the process's memory is mapped, and writable: what memory registration asks before it trusts an address. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "obj.h"

/*
 * The kernel's registration path pins the pages with get_user_pages(),
 * which fails with EFAULT when part of the range is not mapped, or not
 * writable while a write access is asked for. rocemu pins nothing, so it
 * asks the same question of the process's own map: /proc/self/maps lists
 * every mapping with its permissions, in address order. Probing the
 * memory itself would not do: reading cannot tell writable from read-only,
 * and a fault is exactly what must not happen. The answer holds at the
 * time of registration; unmapping registered memory afterwards is the
 * application's error, as with any verbs provider.
 */
int mem_range_check(const void *addr, uint64_t len, bool write)
{
	uint64_t at = (uint64_t)(uintptr_t)addr, end = at + len;
	FILE *maps;
	char *line = NULL;
	size_t cap = 0;
	int rc = -EFAULT;

	if (!len)
		return 0;
	if (end < at)
		return -EFAULT; /* wraps around the address space */
	if (!(maps = fopen("/proc/self/maps", "re")))
		return 0; /* no /proc: nothing to ask, as before this check */
	/* getline: a mapping's path can make a line of any length. */
	while (getline(&line, &cap, maps) > 0) {
		uint64_t lo, hi;
		char perm[5];
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s", &lo, &hi,
			   perm) != 3 || hi <= at)
			continue;
		if (lo > at || perm[0] != 'r' || (write && perm[1] != 'w'))
			break; /* a hole, or a mapping without the right */
		at = hi;
		if (at >= end) {
			rc = 0;
			break;
		}
	}
	free(line);
	fclose(maps);
	return rc;
}
