/* SPDX-License-Identifier: MIT */
/* A site on the allowlist passes, on every line it is on. */
int listed(uint64_t va, uint64_t len, uint64_t hi)
{
	return va + len > hi || va+len < va;
}
