/* SPDX-License-Identifier: MIT */
/* The rule book: the transport rules that can be judged from the wire, by ID, and whether rocemu check judges each. */
#ifndef ROCEMU_RULES_H
#define ROCEMU_RULES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * One rule. Every rule finding of rocemu check names one by id; a
 * conformance scenario names those it tests (its `covers` line). The
 * generated coverage table (docs/rules.md) is this book, row by row.
 */
struct roce_rule {
	const char *id;		/* "PSN-ORDER": capitals, digits, '-' */
	const char *section;	/* the IBTA sections that state it */
	const char *applies;	/* "RC", "RC, UC", "all", "CM" ... */
	const char *text;	/* the rule, one sentence */
	bool checked;		/* rocemu check judges it */
	const char *not_yet;	/* unchecked: what judging it needs, or
				 * why a capture cannot show it; else NULL */
	const char *no_device;	/* why no scenario can test a device on
				 * it (a rule of reading captures), or NULL */
};

/* The book, in the order the table lists it; *n is set to its length. */
const struct roce_rule *roce_rules(size_t *n);

/* The rule named id, or NULL when the book has none. */
const struct roce_rule *roce_rule_find(const char *id);

#endif
