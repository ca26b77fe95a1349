/* SPDX-License-Identifier: MIT */
/* rocemu check --rules: the rule book, as a table or one JSON object per rule. */
#include <stdio.h>

#include "rocemu/rules.h"

#include "cli.h"

void cli_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void json_rule(const struct roce_rule *r)
{
	printf("{\"id\":");
	cli_json_str(stdout, r->id);
	printf(",\"section\":");
	cli_json_str(stdout, r->section);
	printf(",\"applies\":");
	cli_json_str(stdout, r->applies);
	printf(",\"checked\":%s,\"text\":", r->checked ? "true" : "false");
	cli_json_str(stdout, r->text);
	if (r->not_yet) {
		printf(",\"not_yet\":");
		cli_json_str(stdout, r->not_yet);
	}
	if (r->no_device) {
		printf(",\"no_device\":");
		cli_json_str(stdout, r->no_device);
	}
	printf("}\n");
}

void check_print_book(bool json)
{
	size_t n;
	const struct roce_rule *book = roce_rules(&n);

	for (size_t i = 0; i < n; i++) {
		const struct roce_rule *r = &book[i];
		if (json)
			json_rule(r);
		else
			printf("%-24s %-8s %-30s %s\n", r->id,
			       r->checked ? "checked" : "not yet", r->section,
			       r->text);
	}
}
