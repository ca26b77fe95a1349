/* SPDX-License-Identifier: MIT */
/* Headers are read too. */
static inline uint64_t ends_at(uint64_t base_va, uint64_t nbytes)
{
	return base_va+nbytes;
}
