/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as the list of differences, through the reader rocemu conform and replay share, then its replay matchers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/opcode.h"
#include "conform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every string the reader filled must end inside its array. */
static void check_terminated(const char *s, size_t cap)
{
	if (!memchr(s, 0, cap))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cf_diffs d;
	char err[CF_DIFF_LINE];
	struct roce_frame ack, nak;

	if (!size)
		return 0;
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	int rc = cf_diffs_read(f, "fuzz.md", &d, err, sizeof(err));
	fclose(f);
	check_terminated(err, sizeof(err));
	if (rc) {
		/* a refusal names the file and a line; nothing is left */
		if (strncmp(err, "fuzz.md:", 8) || d.known || d.replay || d.nknown)
			abort();
		return 0;
	}
	for (unsigned i = 0; i < d.nknown; i++) {
		check_terminated(d.known[i].impl, sizeof(d.known[i].impl));
		check_terminated(d.known[i].scenario, sizeof(d.known[i].scenario));
		check_terminated(d.known[i].text, sizeof(d.known[i].text));
		check_terminated(d.known[i].id, sizeof(d.known[i].id));
	}
	roce_frame_init(&ack, 4);
	roce_frame_init(&nak, 4);
	ack.ib.bth.opcode = nak.ib.bth.opcode = ROCE_OP_RC_ACK;
	ack.ib.exts = nak.ib.exts = ROCE_EXT_AETH;
	ack.ib.aeth.syndrome = 0x1f;
	nak.ib.aeth.syndrome = 0x61;
	for (unsigned i = 0; i < d.nreplay; i++) {
		check_terminated(d.replay[i].id, sizeof(d.replay[i].id));
		const char *id = cf_diffs_replay_match(&d, d.replay[i].request,
						       &ack, &nak);
		if (id)
			check_terminated(id, CF_DIFF_ID);
	}
	cf_diffs_coalesced(&d);
	cf_diffs_free(&d);
	return 0;
}
