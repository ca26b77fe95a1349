/* SPDX-License-Identifier: MIT */
/* cm_seeds DIR: writes the cm suite's known-answer MADs as fuzz_cm seeds. */
#include <stdio.h>
#include <stdlib.h>

#include "../unit/cm_known.h"

static const struct seed {
	const char *name;
	const uint8_t *mad;
} seeds[] = {
	{ "req", ka_req },   { "rep", ka_rep },
	{ "rej", ka_rej },   { "dreq", ka_dreq },
	{ "sidr_req", ka_sidr_req },
};

int main(int argc, char **argv)
{
	char path[4096];

	if (argc != 2) {
		fprintf(stderr, "usage: cm_seeds DIR\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s.mad", argv[1], seeds[i].name);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(seeds[i].mad, 256, 1, f) != 1 || fclose(f)) {
			perror(path);
			return 1;
		}
	}
	return 0;
}
