/* SPDX-License-Identifier: MIT */
/* rocemu impair's rule form: parse a line, load a file, decide whether a rule acts on a packet. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "impair.h"
#include "rocemu/opcode.h"

static const char *const action_names[] = {
	[IMP_DROP] = "drop", [IMP_DUP] = "dup", [IMP_DELAY] = "delay",
	[IMP_REORDER] = "reorder", [IMP_CORRUPT] = "corrupt",
	[IMP_ECN] = "ecn",
};

enum { NACTIONS = sizeof(action_names) / sizeof(action_names[0]) };

const char *impair_action_name(unsigned action)
{
	return action < NACTIONS ? action_names[action] : "?";
}

/* A whole unsigned number (decimal or 0x hex) up to max into *v. */
static bool number(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end || x > max)
		return false;
	*v = x;
	return true;
}

int impair_opcode_by_name(const char *name)
{
	uint64_t v;

	for (unsigned i = 0; i < 256; i++) {
		const struct roce_opcode_info *op = roce_opcode((uint8_t)i);
		if (op && op->name && !strcasecmp(op->name, name))
			return (int)i;
	}
	if (number(name, 255, &v) && roce_opcode((uint8_t)v))
		return (int)v;
	return -ENOENT;
}

static int fail(char *err, const char *fmt, const char *a, const char *b)
{
	snprintf(err, IMP_ERR_MAX, fmt, a, b);
	return -EINVAL;
}

/* opcode=NAME[,NAME]... */
static int set_ops(struct impair_rule *r, char *v, char *err)
{
	for (char *save, *t = strtok_r(v, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		int op = impair_opcode_by_name(t);
		if (op < 0)
			return fail(err, "unknown opcode '%s' (names as rocemu "
					 "dump prints them, e.g. RC_SEND_ONLY)%s",
				    t, "");
		r->ops[op / 64] |= 1ull << (op % 64);
		r->has_ops = true;
	}
	return r->has_ops ? 0 : fail(err, "opcode= wants a name%s%s", "", "");
}

/* psn=N or psn=LO-HI */
static int set_psn(struct impair_rule *r, char *v, char *err)
{
	uint64_t lo, hi;
	char *dash = strchr(v, '-');

	if (dash)
		*dash = 0;
	if (!number(v, 0xffffff, &lo) ||
	    !(dash ? number(dash + 1, 0xffffff, &hi) : (hi = lo, true)) ||
	    lo > hi)
		return fail(err, "psn= wants N or LO-HI, 24-bit numbers, LO <= "
				 "HI%s%s", "", "");
	r->has_psn = true;
	r->psn_lo = (uint32_t)lo;
	r->psn_hi = (uint32_t)hi;
	return 0;
}

static int set_prob(struct impair_rule *r, const char *v, char *err)
{
	char *end;
	double p = strtod(v, &end);

	if (!*v || *end || !(p >= 0 && p <= 1))
		return fail(err, "prob= wants a number from 0 to 1, not '%s'%s",
			    v, "");
	r->has_prob = true;
	r->prob = p;
	return 0;
}

/* The numeric keys: name, where kept, the largest value, the smallest. */
struct num_key {
	const char *name;
	size_t at;
	uint64_t min, max;
	unsigned width;		/* bytes of the field */
};

#define NK(n, f, lo, hi) { n, offsetof(struct impair_rule, f), lo, hi, \
			   sizeof(((struct impair_rule *)0)->f) }
static const struct num_key num_keys[] = {
	NK("qpn", qpn, 0, 0xffffff), NK("every", every, 1, 0xffffffff),
	NK("count", max, 1, UINT64_MAX), NK("ms", ms, 0, 600000),
	NK("after", after, 1, 1000000), NK("copies", copies, 1, 100),
	NK("byte", byte, 0, 9215), NK("seed", rng, 0, UINT64_MAX),
};
#undef NK

static void store(struct impair_rule *r, const struct num_key *k, uint64_t v)
{
	char *p = (char *)r + k->at;

	if (k->width == 8) {
		memcpy(p, &v, 8);
	} else {
		uint32_t w = (uint32_t)v;
		memcpy(p, &w, 4);
	}
}

/* The keys each action takes besides the match keys. */
static bool takes(unsigned action, const char *key)
{
	switch (action) {
	case IMP_DUP: return !strcmp(key, "copies");
	case IMP_DELAY: return !strcmp(key, "ms");
	case IMP_REORDER: return !strcmp(key, "ms") || !strcmp(key, "after");
	case IMP_CORRUPT: return !strcmp(key, "byte") || !strcmp(key, "icrc");
	default: return false;
	}
}

static bool is_action_key(const char *key)
{
	static const char *const all[] = { "copies", "ms", "after", "byte",
					   "icrc" };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(key, all[i]))
			return true;
	return false;
}

static int set_num(struct impair_rule *r, const char *key, const char *v,
		   char *err)
{
	for (size_t i = 0; i < sizeof(num_keys) / sizeof(num_keys[0]); i++) {
		const struct num_key *k = &num_keys[i];
		uint64_t x;
		if (strcmp(key, k->name))
			continue;
		if (!number(v, k->max, &x) || x < k->min)
			return fail(err, "%s= wants a number in range, not '%s'",
				    key, v);
		store(r, k, x);
		r->has_qpn |= !strcmp(key, "qpn");
		return 0;
	}
	return fail(err, "unknown key '%s'%s (match keys: opcode qpn psn dir "
			 "every prob seed count)", key, "");
}

static int set_key(struct impair_rule *r, char *key, char *v, char *err)
{
	if (is_action_key(key) && !takes(r->action, key))
		return fail(err, "%s does not take %s=", impair_action_name(
				    r->action), key);
	if (!strcmp(key, "opcode"))
		return set_ops(r, v, err);
	if (!strcmp(key, "psn"))
		return set_psn(r, v, err);
	if (!strcmp(key, "prob"))
		return set_prob(r, v, err);
	if (!strcmp(key, "dir")) {
		r->dir = !strcmp(v, "ab") ? IMP_DIR_AB
			 : !strcmp(v, "ba") ? IMP_DIR_BA : IMP_DIR_ANY;
		return r->dir ? 0 : fail(err, "dir= wants ab or ba, not '%s'%s",
					 v, "");
	}
	if (!strcmp(key, "icrc")) {
		if (strcmp(v, "fix") && strcmp(v, "keep"))
			return fail(err, "icrc= wants fix or keep, not '%s'%s",
				    v, "");
		r->fix_icrc = !strcmp(v, "fix");
		return 0;
	}
	return set_num(r, key, v, err);
}

static int set_action(struct impair_rule *r, const char *word, char *err)
{
	for (unsigned i = 0; i < NACTIONS; i++) {
		if (!strcmp(word, action_names[i])) {
			r->action = (uint8_t)i;
			return 0;
		}
	}
	return fail(err, "unknown action '%s' (drop, dup, delay, reorder, "
			 "corrupt, ecn)%s", word, "");
}

/* Each key at most once: seen holds the keys so far, space-separated. */
static bool seen_before(char *seen, size_t cap, const char *key)
{
	char k[40];

	snprintf(k, sizeof(k), " %s ", key);
	if (strstr(seen, k))
		return true;
	strncat(seen, k + 1, cap - strlen(seen) - 1);
	return false;
}

static int check_whole(struct impair_rule *r, char *err)
{
	if (r->action == IMP_DELAY && !r->ms)
		return fail(err, "delay wants ms=N (milliseconds)%s%s", "", "");
	if (r->action == IMP_REORDER && !r->ms)
		r->ms = 50; /* no packet may follow: released by then */
	return 0;
}

int impair_rule_parse(const char *text, struct impair_rule *r, char *err)
{
	char buf[512], seen[512] = " ";
	char *save, *word;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->copies = 1;
	r->after = 1;
	r->byte = IMP_CORRUPT_LAST;
	r->rng = 1;
	if (strlen(text) >= sizeof(buf))
		return fail(err, "rule longer than 511 bytes%s%s", "", "");
	strcpy(buf, text);
	snprintf(r->text, sizeof(r->text), "%s", text);
	word = strtok_r(buf, " \t\r\n", &save);
	if (!word)
		return fail(err, "empty rule%s%s", "", "");
	rc = set_action(r, word, err);
	while (!rc && (word = strtok_r(NULL, " \t\r\n", &save))) {
		char *eq = strchr(word, '=');
		if (!eq || eq == word || !eq[1])
			return fail(err, "'%s' is not KEY=VALUE%s", word, "");
		*eq = 0;
		if (seen_before(seen, sizeof(seen), word))
			return fail(err, "%s= given twice%s", word, "");
		rc = set_key(r, word, eq + 1, err);
	}
	return rc ? rc : check_whole(r, err);
}

int impair_rules_load(const char *path, struct impair_rule **rules, size_t *n,
		      char *err)
{
	FILE *fp = fopen(path, "r");
	char line[1024], why[IMP_ERR_MAX];
	unsigned no = 0;
	int rc = 0;

	if (!fp) {
		rc = -errno;
		snprintf(err, IMP_ERR_MAX, "%s: %s", path, strerror(errno));
		return rc;
	}
	while (!rc && fgets(line, sizeof(line), fp)) {
		no++;
		char *hash = strstr(line, " #"), *p = line;
		if (hash)
			*hash = 0;
		p += strspn(p, " \t\r\n");
		if (!*p || *p == '#')
			continue;
		p[strcspn(p, "\r\n")] = 0;
		struct impair_rule *more = realloc(*rules, (*n + 1) * sizeof(**rules));
		if (!more) {
			rc = -ENOMEM;
			snprintf(err, IMP_ERR_MAX, "%s: out of memory", path);
			break;
		}
		*rules = more;
		rc = impair_rule_parse(p, &more[*n], why);
		if (rc)
			snprintf(err, IMP_ERR_MAX, "%.200s:%u: %.700s", path, no, why);
		else
			(*n)++;
	}
	fclose(fp);
	return rc;
}

/* splitmix64: a generator per rule, so a rule's draws depend on its seed
 * and on the packets that reach it alone. */
static double draw(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) / (double)(1ull << 53);
}

static bool keys_match(const struct impair_rule *r, const struct impair_pkt *p)
{
	if (r->dir && r->dir != p->dir)
		return false;
	if (r->has_ops && !(r->ops[p->opcode / 64] >> (p->opcode % 64) & 1))
		return false;
	if (r->has_qpn && r->qpn != p->dqpn)
		return false;
	return !r->has_psn || (p->psn >= r->psn_lo && p->psn <= r->psn_hi);
}

bool impair_rule_fires(struct impair_rule *r, const struct impair_pkt *p)
{
	if (!keys_match(r, p))
		return false;
	r->matched++;
	if (r->every > 1 && r->matched % r->every)
		return false;
	if (r->has_prob && draw(&r->rng) >= r->prob)
		return false;
	if (r->max && r->fired >= r->max)
		return false;
	r->fired++;
	return true;
}
