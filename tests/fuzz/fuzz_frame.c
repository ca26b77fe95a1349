/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary frames through the decoder, the three renderings and a rebuild. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Input: one byte choosing the link type (low 2 bits) and how many bytes
 * the "wire" had beyond the capture (the rest), then the frame. Property
 * beyond not crashing: a packet that decodes with its ICRC verified
 * rebuilds into bytes that decode to the same BTH with a verified ICRC.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t rebuilt[70000];
	static char text[16384];
	struct roce_frame f, g;
	struct roce_sb sb;
	const char *why = "";

	if (size < 1)
		return 0;
	unsigned link = data[0] & 3;
	size_t caplen = size - 1, extra = data[0] >> 2;
	uint8_t *frame = malloc(caplen ? caplen : 1); /* exact size */
	memcpy(frame, data + 1, caplen);
	int rc = roce_frame_parse(link, frame, caplen, caplen + extra, &f, &why);
	if (rc == 0 || rc == -EBADMSG) {
		struct roce_dissect_in in = { 1, 0, (uint32_t)caplen, rc, why };
		roce_sb_init(&sb, text, sizeof(text));
		roce_fmt_line(&sb, &in, &f);
		roce_fmt_tree(&sb, &in, &f);
		roce_fmt_json(&sb, &in, &f);
	}
	if (rc == 0 && roce_frame_icrc_ok(&f)) {
		f.link = ROCE_LINK_ETH;
		int n = roce_frame_build(&f, rebuilt, sizeof(rebuilt));
		if (n < 0)
			abort();
		if (roce_frame_parse(ROCE_LINK_ETH, rebuilt, (size_t)n,
				     (size_t)n, &g, &why) ||
		    !roce_frame_icrc_ok(&g) || g.ib.bth.psn != f.ib.bth.psn ||
		    g.ib.bth.opcode != f.ib.bth.opcode ||
		    g.ib.payload_len != f.ib.payload_len)
			abort();
	}
	free(frame);
	return 0;
}
