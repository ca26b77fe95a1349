// SPDX-License-Identifier: MIT
/*
 * Memory registration beyond ibv_reg_mr, through the system header as a
 * user program sees it: on-demand paging (ODP) caps and registrations,
 * ibv_advise_mr's answers (ibv_advise_mr(3), as mlx5 gives them),
 * ibv_rereg_mr's return codes and what it keeps (ibv_rereg_mr(3)), and
 * the fork calls. Prints each failure; exits with how many failed.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs_check.h"

enum { ODP_LW = IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE };

static size_t pg(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static void odp_caps(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex a;

	memset(&a, 0, sizeof(a));
	EXPECT(ibv_query_device_ex(ctx, NULL, &a) == 0);
	EXPECT(a.odp_caps.general_caps & IBV_ODP_SUPPORT);
	EXPECT(a.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT);
	uint32_t rc = a.odp_caps.per_transport_caps.rc_odp_caps;
	EXPECT((rc & (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		     IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		     IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV)) ==
	      (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
	       IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
	       IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV));
	EXPECT(a.odp_caps.per_transport_caps.ud_odp_caps & IBV_ODP_SUPPORT_SEND);
}

static void registrations(struct ibv_pd *pd)
{
	struct ibv_mr *mr;
	uint8_t *m = mmap(NULL, pg(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	EXPECT(m != MAP_FAILED);
	/* Inaccessible rather than unmapped: a freed range may be mapped
	 * again by anyone (the sanitizers' allocators do) before the call. */
	EXPECT(mprotect(m, pg(), PROT_NONE) == 0);
	/* pinned memory must be mapped at registration; ODP need not be */
	errno = 0;
	EXPECT(!ibv_reg_mr(pd, m, pg(), IBV_ACCESS_LOCAL_WRITE) &&
	      errno == EFAULT);
	EXPECT((mr = ibv_reg_mr(pd, m, pg(), ODP_LW)) != NULL);
	if (mr)
		EXPECT(ibv_dereg_mr(mr) == 0);
	munmap(m, pg());
	/* the whole address space: implicit ODP only */
	errno = 0;
	EXPECT(!ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE) &&
	      errno == EINVAL);
	EXPECT((mr = ibv_reg_mr(pd, NULL, SIZE_MAX, ODP_LW)) != NULL);
	if (mr) {
		EXPECT(mr->addr == NULL && mr->length == SIZE_MAX);
		EXPECT(ibv_dereg_mr(mr) == 0);
	}
}

static int advise1(struct ibv_pd *pd, int advice, uint32_t flags,
		   void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)addr, len, lkey };

	return ibv_advise_mr(pd, advice, flags, &sge, 1);
}

static void advise(struct ibv_context *ctx, struct ibv_pd *pd)
{
	enum { P = IBV_ADVISE_MR_ADVICE_PREFETCH,
	       PW = IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
	       NF = IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
	       F = IBV_ADVISE_MR_FLAG_FLUSH };
	size_t len = 4 * pg();
	uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *pinned = malloc(256);
	struct ibv_pd *other = ibv_alloc_pd(ctx);
	struct ibv_mr *odp = ibv_reg_mr(pd, m, len, ODP_LW);
	struct ibv_mr *ro = ibv_reg_mr(pd, m, len, IBV_ACCESS_ON_DEMAND);
	struct ibv_mr *pin = ibv_reg_mr(pd, pinned, 256, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *imp = ibv_reg_mr(pd, NULL, SIZE_MAX, ODP_LW);

	EXPECT(m != MAP_FAILED && other && odp && ro && pin && imp);
	if (m == MAP_FAILED || !other || !odp || !ro || !pin || !imp)
		return;
	for (int adv = P; adv <= NF; adv++) {
		EXPECT(advise1(pd, adv, F, m, len, odp->lkey) == 0);
		EXPECT(advise1(pd, adv, 0, m + 1, 100, odp->lkey) == 0);
		EXPECT(advise1(pd, adv, F, m, len, imp->lkey) == 0);
	}
	/* the kernel's checks: flags, an empty list */
	EXPECT(advise1(pd, P, 0x100, m, 64, odp->lkey) == EINVAL);
	EXPECT(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, F, NULL, 0) ==
	      EINVAL);
	/* mlx5's: an advice it does not know */
	EXPECT(advise1(pd, 77, F, m, 64, odp->lkey) == EOPNOTSUPP);
	/* lkeys: not an MR, another PD's, not ODP, not writable for WRITE */
	EXPECT(advise1(pd, P, F, m, 64, odp->lkey ^ 0x100) == ENOENT);
	EXPECT(advise1(other, P, F, m, 64, odp->lkey) == ENOENT);
	EXPECT(advise1(pd, P, F, pinned, 64, pin->lkey) == ENOENT);
	EXPECT(advise1(pd, PW, F, m, 64, ro->lkey) == ENOENT);
	EXPECT(advise1(pd, P, F, m, 64, ro->lkey) == 0);
	/* the range: outside the MR, in either mode */
	EXPECT(advise1(pd, P, F, m + len - 8, 16, odp->lkey) == EFAULT);
	EXPECT(advise1(pd, P, 0, m - 8, 16, odp->lkey) == EFAULT);
	/* a page of the MR unmapped: EFAULT when waited for, best effort
	 * (no error) without the flag, nothing to fault for NO_FAULT */
	EXPECT(mprotect(m + pg(), pg(), PROT_NONE) == 0);
	EXPECT(advise1(pd, P, F, m, len, odp->lkey) == EFAULT);
	EXPECT(advise1(pd, PW, F, m + pg(), 8, imp->lkey) == EFAULT);
	EXPECT(advise1(pd, P, 0, m, len, odp->lkey) == 0);
	EXPECT(advise1(pd, NF, F, m, len, odp->lkey) == 0);
	/* read-only pages cannot be prefetched for writing */
	EXPECT(mprotect(m, pg(), PROT_READ) == 0);
	EXPECT(advise1(pd, PW, F, m, 64, odp->lkey) == EFAULT);
	EXPECT(advise1(pd, P, F, m, 64, odp->lkey) == 0);
	EXPECT(ibv_dereg_mr(odp) == 0 && ibv_dereg_mr(ro) == 0);
	EXPECT(ibv_dereg_mr(pin) == 0 && ibv_dereg_mr(imp) == 0);
	EXPECT(ibv_dealloc_pd(other) == 0);
	munmap(m, len);
	free(pinned);
}

static void rereg(struct ibv_context *ctx, struct ibv_pd *pd)
{
	enum { T = IBV_REREG_MR_CHANGE_TRANSLATION, PDF = IBV_REREG_MR_CHANGE_PD,
	       A = IBV_REREG_MR_CHANGE_ACCESS };
	uint8_t *a = malloc(4096), *b = malloc(8192);
	struct ibv_pd *other = ibv_alloc_pd(ctx);
	struct ibv_mr *mr = ibv_reg_mr(pd, a, 4096, IBV_ACCESS_LOCAL_WRITE);
	uint8_t *gone = mmap(NULL, pg(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);

	EXPECT(mr && other && gone != MAP_FAILED);
	if (!mr || !other || gone == MAP_FAILED)
		return;
	uint32_t lkey = mr->lkey, rkey = mr->rkey;
	/* libibverbs' input checks: the old MR stays valid */
	errno = 0;
	EXPECT(ibv_rereg_mr(mr, 1 << 5, NULL, NULL, 0, 0) ==
	      IBV_REREG_MR_ERR_INPUT && errno == EINVAL);
	EXPECT(ibv_rereg_mr(mr, T, NULL, NULL, 4096, 0) ==
	      IBV_REREG_MR_ERR_INPUT);
	EXPECT(ibv_rereg_mr(mr, T, NULL, b, 0, 0) == IBV_REREG_MR_ERR_INPUT);
	EXPECT(ibv_rereg_mr(mr, PDF, pd, NULL, 0, IBV_ACCESS_LOCAL_WRITE) ==
	      IBV_REREG_MR_ERR_INPUT);
	/* the device's: remote write without local write, memory not
	 * writable as asked */
	errno = 0;
	EXPECT(ibv_rereg_mr(mr, A, NULL, NULL, 0, IBV_ACCESS_REMOTE_WRITE) ==
	      IBV_REREG_MR_ERR_CMD && errno == EINVAL);
	errno = 0;
	EXPECT(ibv_rereg_mr(mr, T, NULL, gone, pg(), 0) ==
	      IBV_REREG_MR_ERR_CMD && errno == EFAULT);
	EXPECT(mr->addr == a && mr->length == 4096 && mr->pd == pd);
	/* each change, the keys kept, ibv_mr following */
	/* pd is ignored without IBV_REREG_MR_CHANGE_PD (ibv_rereg_mr(3)):
	 * whatever it points at is never read (pyverbs passes junk there) */
	EXPECT(ibv_rereg_mr(mr, T, (struct ibv_pd *)(uintptr_t)0x6d37e7, b, 8192,
			   0) == 0);
	EXPECT(mr->addr == b && mr->length == 8192 && mr->pd == pd);
	EXPECT(ibv_rereg_mr(mr, PDF, other, NULL, 0, 0) == 0);
	EXPECT(mr->pd == other);
	/* the MR is the other PD's user now, no longer the first one's */
	EXPECT(ibv_dealloc_pd(other) == EBUSY);
	EXPECT(ibv_rereg_mr(mr, A | PDF, pd, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ) == 0);
	EXPECT(mr->pd == pd && mr->lkey == lkey && mr->rkey == rkey);
	EXPECT(ibv_dealloc_pd(other) == 0);
	/* into ODP, where unmapped memory is fine */
	EXPECT(munmap(gone, pg()) == 0);
	EXPECT(ibv_rereg_mr(mr, T | A, NULL, gone, pg(), ODP_LW) == 0);
	EXPECT(ibv_dereg_mr(mr) == 0);
	free(a);
	free(b);
}

static void fork_calls(void)
{
	/* rdma-core 44 on a kernel that copies DMA pages on fork, and
	 * rocemu, which pins nothing: fork support is not needed, and
	 * ibv_fork_init succeeds, even after registrations */
	EXPECT(ibv_fork_init() == 0);
	EXPECT(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED);
}

int main(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx = n > 0 ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;

	setvbuf(stdout, NULL, _IOLBF, 0); /* what came before a crash shows */
	EXPECT(ctx && pd);
	if (pd) {
		odp_caps(ctx);
		registrations(pd);
		advise(ctx, pd);
		rereg(ctx, pd);
		fork_calls();
		EXPECT(ibv_dealloc_pd(pd) == 0);
	}
	if (ctx)
		ibv_close_device(ctx);
	if (list)
		ibv_free_device_list(list);
	printf("verbs_mr_calls: %d failed\n", failed);
	return failed;
}
