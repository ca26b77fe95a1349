/* SPDX-License-Identifier: MIT */
/* rocemu impair's report: what it received, sent and did, per action and per rule, as text or JSON. */
#include <stdio.h>

#include "cli.h"
#include "impair.h"

enum { NACT = IMP_ECN + 1 };

static void text(const struct impair_cfg *c, const struct impair_stats *st,
		 FILE *out)
{
	fprintf(out, "received ab %llu ba %llu\n",
		(unsigned long long)st->rx[IMP_DIR_AB],
		(unsigned long long)st->rx[IMP_DIR_BA]);
	fprintf(out, "sent ab %llu ba %llu\n",
		(unsigned long long)st->tx[IMP_DIR_AB],
		(unsigned long long)st->tx[IMP_DIR_BA]);
	fprintf(out, "not_roce %llu malformed %llu strangers %llu bad_icrc "
		     "%llu send_errors %llu\n",
		(unsigned long long)st->not_roce,
		(unsigned long long)st->malformed,
		(unsigned long long)st->stranger,
		(unsigned long long)st->bad_icrc,
		(unsigned long long)st->send_err);
	for (unsigned a = 0; a < NACT; a++)
		fprintf(out, "action %s %llu\n", impair_action_name(a),
			(unsigned long long)st->acted[a]);
	for (size_t i = 0; i < c->nrules; i++)
		fprintf(out, "rule %zu matched %llu acted %llu: %s\n", i + 1,
			(unsigned long long)c->rules[i].matched,
			(unsigned long long)c->rules[i].fired,
			c->rules[i].text);
}

static void json(const struct impair_cfg *c, const struct impair_stats *st,
		 FILE *out)
{
	fprintf(out, "{\"received\":{\"ab\":%llu,\"ba\":%llu},"
		     "\"sent\":{\"ab\":%llu,\"ba\":%llu},",
		(unsigned long long)st->rx[IMP_DIR_AB],
		(unsigned long long)st->rx[IMP_DIR_BA],
		(unsigned long long)st->tx[IMP_DIR_AB],
		(unsigned long long)st->tx[IMP_DIR_BA]);
	fprintf(out, "\"not_roce\":%llu,\"malformed\":%llu,\"strangers\":%llu,"
		     "\"bad_icrc\":%llu,\"send_errors\":%llu,\"actions\":{",
		(unsigned long long)st->not_roce,
		(unsigned long long)st->malformed,
		(unsigned long long)st->stranger,
		(unsigned long long)st->bad_icrc,
		(unsigned long long)st->send_err);
	for (unsigned a = 0; a < NACT; a++)
		fprintf(out, "%s\"%s\":%llu", a ? "," : "",
			impair_action_name(a),
			(unsigned long long)st->acted[a]);
	fputs("},\"rules\":[", out);
	for (size_t i = 0; i < c->nrules; i++) {
		const struct impair_rule *r = &c->rules[i];
		fprintf(out, "%s{\"rule\":", i ? "," : "");
		cli_json_str(out, r->text);
		fprintf(out, ",\"action\":\"%s\",\"matched\":%llu,"
			     "\"acted\":%llu}",
			impair_action_name(r->action),
			(unsigned long long)r->matched,
			(unsigned long long)r->fired);
	}
	fputs("]}\n", out);
}

void impair_report(const struct impair_cfg *c, const struct impair_stats *st,
		   FILE *out, bool as_json)
{
	if (as_json)
		json(c, st, out);
	else
		text(c, st, out);
	fflush(out);
}
