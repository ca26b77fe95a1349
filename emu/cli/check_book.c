/* SPDX-License-Identifier: MIT */
/* rocemu check --rules: the rule book, as a table or one JSON object per rule. */
#include <stdio.h>

#include "rocemu/rules.h"

#include "cli.h"

void cli_json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void json_rule(const struct roce_rule *r)
{
	printf("{\"id\":");
	cli_json_str(r->id);
	printf(",\"section\":");
	cli_json_str(r->section);
	printf(",\"applies\":");
	cli_json_str(r->applies);
	printf(",\"checked\":%s,\"text\":", r->checked ? "true" : "false");
	cli_json_str(r->text);
	if (r->not_yet) {
		printf(",\"not_yet\":");
		cli_json_str(r->not_yet);
	}
	if (r->no_device) {
		printf(",\"no_device\":");
		cli_json_str(r->no_device);
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
