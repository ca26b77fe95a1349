/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as rocemu-agent request lines, through its line reader, token check, word splitter, command table and argument parsers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The commands themselves make verbs objects; here each stands in for
 * its handler with the parsing every handler does: each key it was given
 * read as a number, as access flags and as a GID (whichever apply), each
 * failure answered as the handlers answer it. hello does what the real
 * one does to the connection (o->hello). No device is opened.
 */
static int parse_all(struct req *r, struct answer *a)
{
	static const uint64_t maxes[] = { 0, 1, 255, 0xffffff, AGENT_MAX_OBJS, UINT64_MAX };
	uint64_t v;
	int flags;
	union ibv_gid gid;

	for (unsigned i = 0; i < r->n; i++) {
		const char *k = r->key[i];
		req_num(r, k, maxes[i % (sizeof(maxes) / sizeof(maxes[0]))], i & 1, 7, &v);
		req_flags(r, k, 0, &flags);
		req_gid(r, k, &gid);
		if (!req_str(r, k))
			abort();	/* a key split out of the line is found again */
	}
	if (req_num(r, "absent key", 1, false, 0, &v) == 0)
		abort();	/* "absent key" cannot be a key: it has a space */
	ans_add(a, "ok n=%u", r->n);
	return 0;
}

#define STUB(name)                                                              \
	int name(struct agent_dev *d, struct agent_objs *o, struct req *r,     \
		 struct answer *a)                                              \
	{                                                                       \
		(void)d;                                                        \
		(void)o;                                                        \
		return parse_all(r, a);                                         \
	}
STUB(cmd_pd) STUB(cmd_mr) STUB(cmd_cq) STUB(cmd_qp) STUB(cmd_modify)
STUB(cmd_query) STUB(cmd_ah) STUB(cmd_mw) STUB(cmd_destroy) STUB(cmd_recv)
STUB(cmd_send) STUB(cmd_bind) STUB(cmd_poll) STUB(cmd_event) STUB(cmd_read)
STUB(cmd_write) STUB(cmd_cm_listen) STUB(cmd_cm_event) STUB(cmd_cm_accept)
STUB(cmd_cm_disconnect) STUB(cmd_cm_poll) STUB(cmd_srq)

int cmd_hello(struct agent_dev *d, struct agent_objs *o, struct req *r,
	      struct answer *a)
{
	uint64_t proto;

	(void)d;
	if (req_num(r, "proto", 255, false, 0, &proto))
		return ans_err(a, "EINVAL", "%s", r->err);
	if (proto != AGENT_PROTO)
		return ans_err(a, "EPROTO", "not %llu", (unsigned long long)proto);
	o->hello = true;
	ans_add(a, "ok proto=1");
	return 0;
}

/* An answer is one line of printable ASCII starting "ok" or "err ". */
static void check_answer(const struct answer *a)
{
	if (a->len >= sizeof(a->text) || strlen(a->text) != a->len)
		abort();
	if (strncmp(a->text, "ok", 2) && strncmp(a->text, "err ", 4))
		abort();
	for (size_t i = 0; i < a->len; i++)
		if (a->text[i] < ' ' || a->text[i] >= 127)
			abort();
}

/*
 * Input: one byte of settings (bit 0: the agent asks for the token
 * "fuzz-token"), then lines separated by '\n', served as one connection
 * is. Properties beyond not crashing: every answer is one printable line
 * of ok or err; with a token asked for, nothing before a right auth
 * answers ok but that auth, and a refusal closes the connection.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct agent_objs o;
	static struct answer ans;
	struct agent_dev d = { .name = "fuzz0", .port = 1, .gid_index = 1 };

	if (size < 1)
		return 0;
	d.token = data[0] & 1 ? "fuzz-token" : NULL;
	memset(&o, 0, sizeof(o));
	const uint8_t *p = data + 1, *end = data + size;
	while (p < end) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		char *line = malloc(len + 1);	/* exact size: overreads show */
		memcpy(line, p, len);
		bool was_authed = o.authed;
		int done = agent_line(&d, &o, line, len, &ans);
		free(line);
		check_answer(&ans);
		if (d.token && !was_authed && !o.authed && (!done || !strncmp(ans.text, "ok", 2)))
			abort();	/* served without the token */
		if (done)
			break;
		p += len + 1;
	}
	return 0;
}
