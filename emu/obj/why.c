/* SPDX-License-Identifier: MIT */
/* Explain mode: reasons counted per kind, their text built only for a listener, and printed once. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "obj.h"

static const char *const why_names[ROCEMU_WHY_KINDS] = {
	[ROCEMU_WHY_NAK_PSN_SEQ] = "nak_psn_seq",
	[ROCEMU_WHY_NAK_RNR] = "nak_rnr",
	[ROCEMU_WHY_NAK_INV_REQ] = "nak_inv_req",
	[ROCEMU_WHY_NAK_REM_ACCESS] = "nak_rem_access",
	[ROCEMU_WHY_NAK_REM_OP] = "nak_rem_op",
	[ROCEMU_WHY_DROP] = "drop",
	[ROCEMU_WHY_CQE_ERROR] = "cqe_error",
	[ROCEMU_WHY_FLUSH] = "flush",
	[ROCEMU_WHY_VERB] = "verb",
};

const char *rocemu_why_name(enum rocemu_why k)
{
	return k < ROCEMU_WHY_KINDS ? why_names[k] : "?";
}

const char *qp_state_name(enum ibv_qp_state s)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR",	   [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD",	   [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

void dev_why(struct rocemu_dev *d, enum rocemu_why k, uint32_t qpn,
	     const char *op, uint64_t wr_id, const char *rule,
	     const char *fmt, ...)
{
	struct rocemu_event ev = { .kind = ROCEMU_EV_WHY, .qpn = qpn,
				   .wr_id = wr_id };
	va_list ap;

	d->why_cnt[k]++;
	/* Off: a count, and not one character formatted. */
	if (!dev_explaining(d))
		return;
	va_start(ap, fmt);
	vsnprintf(ev.text, sizeof(ev.text), fmt, ap);
	va_end(ap);
	snprintf(ev.rule, sizeof(ev.rule), "%s", rule);
	snprintf(ev.op, sizeof(ev.op), "%s", op ? op : "");
	memcpy(d->why_last[k], ev.text, sizeof(ev.text));
	memcpy(d->why_rule[k], ev.rule, sizeof(ev.rule));
	/* once on stderr: not as a trace line too when explain prints it */
	if (!d->core->explain)
		core_trace(d->core, "%s why: %s [%s]", d->name, ev.text,
			   ev.rule);
	dev_event(d, &ev);
}

uint64_t rocemu_dev_why_count(const struct rocemu_dev *d, enum rocemu_why k)
{
	CORE_GUARD(d->core);
	return k < ROCEMU_WHY_KINDS ? d->why_cnt[k] : 0;
}

void rocemu_dev_print_why(const struct rocemu_dev *d, FILE *f,
			  const char *prefix)
{
	uint64_t cnt[ROCEMU_WHY_KINDS];
	char last[ROCEMU_WHY_KINDS][ROCEMU_EV_TEXT];
	char rule[ROCEMU_WHY_KINDS][ROCEMU_EV_NAME];

	{ /* one snapshot, and no stdio under the world lock */
		CORE_GUARD(d->core);
		memcpy(cnt, d->why_cnt, sizeof(cnt));
		memcpy(last, d->why_last, sizeof(last));
		memcpy(rule, d->why_rule, sizeof(rule));
	}
	for (enum rocemu_why k = 0; k < ROCEMU_WHY_KINDS; k++) {
		fprintf(f, "%swhy %s %llu", prefix, rocemu_why_name(k),
			(unsigned long long)cnt[k]);
		if (cnt[k] && last[k][0])
			fprintf(f, " last: %s [%s]", last[k], rule[k]);
		fputc('\n', f);
	}
}

static void printer_repeats(struct rocemu_why_printer *p)
{
	if (p->repeats)
		fprintf(p->f, "rocemu: why: (the same %llu more times)\n",
			(unsigned long long)p->repeats);
	p->repeats = 0;
}

void rocemu_why_print(void *arg, const struct rocemu_event *ev)
{
	struct rocemu_why_printer *p = arg;
	char line[sizeof(p->last)];

	if (ev->kind != ROCEMU_EV_WHY)
		return;
	snprintf(line, sizeof(line), "%s [%s]", ev->text, ev->rule);
	if (!strcmp(line, p->last)) {
		p->repeats++;
		return;
	}
	printer_repeats(p);
	memcpy(p->last, line, sizeof(line));
	fprintf(p->f, "rocemu: why: %s\n", line);
}

void rocemu_why_printer_end(struct rocemu_why_printer *p)
{
	printer_repeats(p);
	p->last[0] = '\0';
}
