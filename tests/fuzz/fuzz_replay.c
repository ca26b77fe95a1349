/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as a capture through rocemu replay's planner and runner, as responder and as requester. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/replay.h"
#include "rocemu/pcapio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Flows replayed per input: each sets up a world of its own, and an
 * input should stay well within libFuzzer's -timeout. */
enum { MAX_FLOWS = 16 };

/* One direction of one flow, both ways, as rocemu replay runs it. */
static void replay_dir(const struct roce_capture *cap,
		       const struct rp_index *ix, const struct roce_flow *fl,
		       unsigned req, FILE *out)
{
	struct rp_plan p;
	struct rp_result res;
	uint64_t visits = 0;

	if (rp_plan_make(&p, cap, ix, fl, req, &visits))
		return;
	if (!rp_run_responder(&p, &res)) {
		const char *id;
		rp_compare(&p, &res, NULL, true, out, &id);
		rp_result_free(&res);
	}
	if (rp_run_requester(&p, true, out, &res) >= 0)
		rp_result_free(&res);
	rp_plan_free(&p);
}

static void replay_all(const struct roce_capture *cap, FILE *out)
{
	struct rp_index ix;
	unsigned n = roce_flows_count(cap->flows);

	if (rp_index_make(&ix, cap))
		return;
	for (unsigned id = 0; id < n && id < MAX_FLOWS; id++) {
		const struct roce_flow *fl = roce_flows_get(cap->flows, id);
		/* as cmd_replay: only flows whose two QPs are known */
		if (fl->kind == ROCE_FLOW_OTHER || !fl->end[0].qpn_known ||
		    !fl->end[1].qpn_known)
			continue;
		for (unsigned d = 0; d < 2; d++)
			if (fl->requests[d])
				replay_dir(cap, &ix, fl, d, out);
	}
	rp_index_free(&ix);
}

/* The input is a pcap or pcapng file: loaded through a memfd, as
 * rocemu replay loads a path. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *out;
	struct roce_capture cap;
	char err[ROCE_PCAP_ERRLEN], path[64];

	if (!out)
		out = fopen("/dev/null", "w");
	int fd = memfd_create("fuzz_replay", MFD_CLOEXEC);
	if (fd < 0 || !out)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!roce_capture_load(path, &cap, err)) {
		replay_all(&cap, out);
		roce_capture_free(&cap);
	}
	close(fd);
	return 0;
}
