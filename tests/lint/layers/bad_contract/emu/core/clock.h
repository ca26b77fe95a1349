/* A header whose functions are not all given a contract. */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>

/* The time in ns: covered. */
uint64_t clock_now(void);
uint64_t clock_then(void);

uint64_t clock_bare(int a,
		    int b);

/*
 * A block comment covers what follows it.
 */
void clock_set(uint64_t t);

static inline int clock_inline(void)
{
	return clock_helper(1);
}

#define CLOCK_MACRO(x) clock_now()

#endif
