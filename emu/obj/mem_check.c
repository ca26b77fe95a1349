/* SPDX-License-Identifier: MIT */
/* Whether a range of the process's memory is mapped, and writable: what memory registration asks before it trusts an address; and copies that cannot fault, for on-demand memory. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dma.h"
#include "obj.h"
#include "rocemu/range.h"

/*
 * The kernel's registration path pins the pages with get_user_pages(),
 * which fails with EFAULT when part of the range is not mapped, or not
 * writable while a write access is asked for. rocemu pins nothing, so it
 * asks the same question of the process's own map: /proc/self/maps lists
 * every mapping with its permissions, in address order. Probing the
 * memory itself would not do: reading cannot tell writable from read-only,
 * and a fault is exactly what must not happen. The answer holds at the
 * time of registration; unmapping registered memory afterwards is the
 * application's error, as with any verbs provider, except for on-demand
 * (ODP) memory, which mem_get/mem_put below check at every access.
 */
int mem_range_check(const void *addr, uint64_t len, bool write)
{
	uint64_t at = (uint64_t)(uintptr_t)addr, end;
	FILE *maps;
	char *line = NULL;
	size_t cap = 0;
	int rc = -EFAULT;

	if (!len)
		return 0;
	if (!roce_range_end(at, len, &end))
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

/*
 * An on-demand MR promises nothing about its pages: the application may
 * unmap and map them again at any time, as a NIC with ODP faults pages in
 * when it touches them. A plain memcpy on a page that is gone would kill
 * the process, so these copies go through process_vm_readv/writev on the
 * process itself: the kernel walks the page tables, faults in what is
 * mapped (the "page fault" an ODP NIC asks for), and answers EFAULT for
 * what is not, or for a write to a read-only page. One iovec each side:
 * the kernel then moves all or nothing useful, and anything short is a
 * fault. Where the call is refused (no such syscall, a seccomp filter)
 * the maps check guards a direct copy instead, slower and racy against
 * another thread's munmap, but never wrong for a quiet application.
 */
static int vm_copy(uint64_t va, void *buf, uint64_t n, bool write)
{
	struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)va, n };
	uint64_t end;
	ssize_t got;

	if (!n)
		return 0;
	if (!roce_range_end(va, n, &end))
		return -EFAULT;
	got = write ? process_vm_writev(getpid(), &local, 1, &remote, 1, 0)
		    : process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (got == (ssize_t)n)
		return 0;
	if (got < 0 && (errno == ENOSYS || errno == EPERM)) {
		if (mem_range_check(remote.iov_base, n, write))
			return -EFAULT;
		if (write)
			memcpy(remote.iov_base, buf, n);
		else
			memcpy(buf, remote.iov_base, n);
		return 0;
	}
	return -EFAULT;
}

int mem_put_checked(uint64_t va, const void *src, uint64_t n)
{
	return vm_copy(va, (void *)(uintptr_t)src, n, true);
}

int mem_get_checked(void *dst, uint64_t va, uint64_t n)
{
	return vm_copy(va, dst, n, false);
}

int mem_put(const struct rocemu_dev *d, uint64_t va, const void *src,
	    uint64_t n)
{
	int rc = 0;

	DMA_BEGIN();
	if (d->odp_mrs)
		rc = mem_put_checked(va, src, n);
	else if (n)
		memcpy((void *)(uintptr_t)va, src, n);
	DMA_END();
	return rc;
}

int mem_get(const struct rocemu_dev *d, void *dst, uint64_t va, uint64_t n)
{
	int rc = 0;

	DMA_BEGIN();
	if (d->odp_mrs)
		rc = mem_get_checked(dst, va, n);
	else if (n)
		memcpy(dst, (const void *)(uintptr_t)va, n);
	DMA_END();
	return rc;
}

const uint8_t *mem_view(const struct rocemu_dev *d, uint64_t va, uint64_t n,
			uint8_t *bounce)
{
	if (!d->odp_mrs)
		return (const uint8_t *)(uintptr_t)va;
	return mem_get_checked(bounce, va, n) ? NULL : bounce;
}
