/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as a trace file, its events laid on the demo capture's ladder and rendered as text and SVG. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/ladder.h"
#include "rocemu/pcapio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef FUZZ_DEMO_PCAP
#define FUZZ_DEMO_PCAP "build/fuzz/demo.pcap"
#endif

/* The demo's capture, loaded once: its flow has the ends the demo's
 * trace names, so events from mutated traces land on its lifelines. */
static const struct roce_capture *demo(void)
{
	static struct roce_capture c;
	static int loaded;
	char err[ROCE_PCAP_ERRLEN];

	if (!loaded) {
		if (roce_capture_load(FUZZ_DEMO_PCAP, &c, err)) {
			fprintf(stderr, "%s: %s\n", FUZZ_DEMO_PCAP, err);
			abort();
		}
		loaded = 1;
	}
	return &c;
}

/*
 * What a renderer wrote must be safe for a terminal and well-formed
 * enough for XML: printable ASCII, newlines and tabs only; in the SVG,
 * every '&' starts one of the entities it writes.
 */
static void check_output(const char *s, size_t len, int svg)
{
	static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;",
					   "&#39;"};

	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)s[i];
		if (b != '\n' && b != '\t' && (b < 0x20 || b >= 0x7f))
			abort();
		if (!svg || b != '&')
			continue;
		size_t k = 0;
		while (k < 5 && strncmp(s + i, ents[k], strlen(ents[k])))
			k++;
		if (k == 5)
			abort();
	}
}

static void render(const struct roce_ladder *l, int svg)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return;
	if (svg)
		roce_ladder_write_svg(f, l);
	else
		roce_ladder_write_text(f, l);
	fclose(f);
	check_output(out, len, svg);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rocemu_event *evs = NULL;
	struct roce_ladder l;
	size_t n = 0;
	char err[256];
	FILE *f = fmemopen((void *)data, size, "r");

	if (!size || !f) {
		if (f)
			fclose(f);
		return 0;
	}
	int rc = rocemu_trace_read(f, &evs, &n, err, sizeof(err));
	fclose(f);
	if (rc)
		return 0;
	if (roce_ladder_build(demo(), evs, n, ROCE_LADDER_ALL_FLOWS, &l) == 0) {
		render(&l, 0);
		render(&l, 1);
		roce_ladder_free(&l);
	}
	free(evs);
	return 0;
}
