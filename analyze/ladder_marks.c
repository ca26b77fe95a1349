/* SPDX-License-Identifier: MIT */
/* Marks on a ladder: the capture checker's findings drawn as notes right after the packet each names. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ladder_local.h"

/* Marks in order of capture, then frame, then input order. */
struct mark_ref {
	const struct roce_ladder_mark *m;
	size_t seq;
};

static int mark_cmp(const void *pa, const void *pb)
{
	const struct mark_ref *a = pa, *b = pb;

	if (a->m->cap != b->m->cap)
		return a->m->cap < b->m->cap ? -1 : 1;
	if (a->m->frame_no != b->m->frame_no)
		return a->m->frame_no < b->m->frame_no ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The first mark of frame no of capture cap, or n when none. */
static size_t first_of(const struct mark_ref *r, size_t n, unsigned cap,
		       uint64_t no)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct roce_ladder_mark *m = r[mid].m;
		if (m->cap < cap || (m->cap == cap && m->frame_no < no))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && r[lo].m->cap == cap && r[lo].m->frame_no == no ? lo
									: n;
}

/* The note of mark m after packet row p; its text kept by l. 0 or
 * -ENOMEM. */
static int mark_row(struct roce_ladder *l, const struct roce_ladder_mark *m,
		    const struct roce_ladder_row *p, struct roce_ladder_row *r)
{
	const char *src = m->text ? m->text : "";
	size_t n = strlen(src);
	char *t = malloc(n + 1);
	char **grown = reallocarray(l->texts, l->ntexts + 1, sizeof(*grown));

	if (grown)
		l->texts = grown;
	if (!t || !grown) {
		free(t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) /* a finding is text, but check */
		t[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
	t[n] = '\0';
	l->texts[l->ntexts++] = t;
	memset(r, 0, sizeof(*r));
	r->kind = ROCE_LADDER_WHY;
	r->check = true;
	r->style = m->error ? ROCE_LADDER_ERROR : ROCE_LADDER_NORMAL;
	r->col = p->col;
	r->rel_ns = p->rel_ns;
	snprintf(r->rule, sizeof(r->rule), "%s", m->rule ? m->rule : "");
	snprintf(r->label, sizeof(r->label), "check: %s", t);
	r->text = t;
	return 0;
}

/* Chart ch with each marked packet followed by its marks; *placed counts
 * them. 0 or -ENOMEM (ch unchanged). */
static int mark_chart(struct roce_ladder *l, struct roce_ladder_chart *ch,
		      const struct mark_ref *r, size_t n, size_t *placed)
{
	size_t add = 0;

	for (size_t i = 0; i < ch->n; i++) {
		const struct roce_ladder_row *p = &ch->rows[i];
		if (p->kind != ROCE_LADDER_PACKET)
			continue;
		for (size_t k = first_of(r, n, p->cap, p->frame_no);
		     k < n && r[k].m->cap == p->cap &&
		     r[k].m->frame_no == p->frame_no;
		     k++)
			add++;
	}
	if (!add)
		return 0;
	struct roce_ladder_row *rows =
	    reallocarray(NULL, ch->n + add, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	size_t at = 0;
	for (size_t i = 0; i < ch->n; i++) {
		const struct roce_ladder_row *p = &ch->rows[i];
		rows[at++] = *p;
		if (p->kind != ROCE_LADDER_PACKET)
			continue;
		for (size_t k = first_of(r, n, p->cap, p->frame_no);
		     k < n && r[k].m->cap == p->cap &&
		     r[k].m->frame_no == p->frame_no;
		     k++) {
			if (mark_row(l, r[k].m, p, &rows[at])) {
				free(rows);
				return -ENOMEM;
			}
			at++;
		}
	}
	free(ch->rows);
	ch->rows = rows;
	ch->n = at;
	*placed += add;
	return 0;
}

int ladder_marks(struct roce_ladder *l, const struct roce_ladder_mark *marks,
		 size_t n)
{
	size_t placed = 0;
	int rc = 0;

	if (!n)
		return 0;
	struct mark_ref *r = reallocarray(NULL, n, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct mark_ref){ &marks[i], i };
	qsort(r, n, sizeof(*r), mark_cmp);
	for (size_t k = 0; !rc && k < l->n; k++)
		rc = mark_chart(l, &l->charts[k], r, n, &placed);
	free(r);
	l->marks_unplaced = n - placed;
	return rc;
}
