/* SPDX-License-Identifier: MIT */
/* rocemu conform --coverage: each rule of the book, and the scenarios that test a device on it. */
#include <stdio.h>
#include <string.h>

#include "rocemu/rules.h"

#include "cli.h"
#include "conform.h"

/* Whether the space-separated words of list include word. */
static bool covers_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
			return true;
	return false;
}

/* Whether scenario s names id on its covers line. */
static bool covers(const struct cf_scenario *s, const char *id)
{
	return covers_word(s->covers, id);
}

/* One rule's line; returns how many scenarios cover it. */
static unsigned rule_line(const struct roce_rule *r,
			  struct cf_scenario *const *sc, unsigned n)
{
	unsigned k = 0;

	printf("%-24s %-28s ", r->id, r->section);
	for (unsigned i = 0; i < n; i++)
		if (covers(sc[i], r->id))
			printf("%s%s", k++ ? " " : "", sc[i]->id);
	if (!k && r->no_device)
		printf("not applicable: %s", r->no_device);
	else if (!k)
		printf("not yet");
	putchar('\n');
	return k;
}

int conform_coverage(struct cf_scenario *const *sc, unsigned n)
{
	size_t nr;
	const struct roce_rule *book = roce_rules(&nr);
	unsigned covered = 0, na = 0, bare = 0;

	printf("%-24s %-28s %s\n", "RULE", "IBTA", "SCENARIOS");
	for (size_t i = 0; i < nr; i++) {
		if (rule_line(&book[i], sc, n))
			covered++;
		else if (book[i].no_device)
			na++;
	}
	for (unsigned i = 0; i < n; i++)
		if (!*sc[i]->covers) {
			fprintf(stderr, "rocemu conform: %s: no covers line: "
				"which rule of the book does it test?\n",
				sc[i]->path);
			bare++;
		}
	unsigned one = 0;	/* scenarios that hold over one IP version */
	for (unsigned i = 0; i < n; i++)
		one += covers_word(sc[i]->needs, "ipv4") ||
		       covers_word(sc[i]->needs, "ipv6");
	printf("%zu rules: %u covered by %u scenarios (each over IPv4 and "
	       "IPv6, but %u over one only), %u not applicable to a device, "
	       "%zu not yet\n", nr, covered, n, one, na, nr - covered - na);
	return bare ? -1 : 0;
}
