// SPDX-License-Identifier: MIT
/* rocemu-agent: a request line's key=value words, numbers, flags and GIDs; answers. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

int req_split(char *line, struct req *r)
{
	char *save = NULL;

	memset(r, 0, sizeof(*r));
	r->cmd = strtok_r(line, " \t\r", &save);
	if (!r->cmd) {
		snprintf(r->err, sizeof(r->err), "empty request");
		return -1;
	}
	for (char *t; (t = strtok_r(NULL, " \t\r", &save));) {
		char *eq = strchr(t, '=');
		if (!eq || eq == t) {
			snprintf(r->err, sizeof(r->err), "'%.40s' is not key=value", t);
			return -1;
		}
		if (r->n == AGENT_MAX_ARGS) {
			snprintf(r->err, sizeof(r->err), "more than %d arguments", AGENT_MAX_ARGS);
			return -1;
		}
		*eq = 0;
		if (req_str(r, t)) {
			snprintf(r->err, sizeof(r->err), "key '%.40s' given twice", t);
			return -1;
		}
		r->key[r->n] = t;
		r->val[r->n++] = eq + 1;
	}
	return 0;
}

bool req_keys_ok(struct req *r, const char *const *keys)
{
	for (unsigned i = 0; i < r->n; i++) {
		const char *const *k = keys;
		while (*k && strcmp(*k, r->key[i]))
			k++;
		if (!*k) {
			snprintf(r->err, sizeof(r->err), "%s takes no key '%.40s'", r->cmd,
				 r->key[i]);
			return false;
		}
	}
	return true;
}

const char *req_str(const struct req *r, const char *key)
{
	for (unsigned i = 0; i < r->n; i++)
		if (!strcmp(r->key[i], key))
			return r->val[i];
	return NULL;
}

int req_num(struct req *r, const char *key, uint64_t max, bool def_ok,
	    uint64_t def, uint64_t *v)
{
	const char *s = req_str(r, key);
	char *end;

	if (!s) {
		if (def_ok) {
			*v = def;
			return 0;
		}
		snprintf(r->err, sizeof(r->err), "%s needs %s=", r->cmd, key);
		return -1;
	}
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (!*s || *end || errno || *s == '-') {
		snprintf(r->err, sizeof(r->err), "%s=%.40s is not a number", key, s);
		return -1;
	}
	if (*v > max) {
		snprintf(r->err, sizeof(r->err), "%s=%.40s is above %llu", key, s,
			 (unsigned long long)max);
		return -1;
	}
	return 0;
}

int req_flags(struct req *r, const char *key, int def, int *flags)
{
	static const struct { const char *name; int flag; } t[] = {
		{ "lw", IBV_ACCESS_LOCAL_WRITE }, { "rw", IBV_ACCESS_REMOTE_WRITE },
		{ "rr", IBV_ACCESS_REMOTE_READ }, { "ra", IBV_ACCESS_REMOTE_ATOMIC },
		{ "mw", IBV_ACCESS_MW_BIND },
		/* IBTA 1.5 FLUSH rights (rdma-core 45's IBV_ACCESS_FLUSH_*) */
		{ "fg", AGENT_ACCESS_FLUSH_GLOBAL },
		{ "fp", AGENT_ACCESS_FLUSH_PERSISTENT },
	};
	const char *s = req_str(r, key);
	char buf[128];

	*flags = def;
	if (!s)
		return 0;
	*flags = 0;
	if (!strcmp(s, "0"))
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	char *save = NULL;
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t i = 0;
		while (i < sizeof(t) / sizeof(t[0]) && strcmp(t[i].name, w))
			i++;
		if (i == sizeof(t) / sizeof(t[0])) {
			snprintf(r->err, sizeof(r->err),
				 "%s: '%.20s' is not an access flag (lw rw rr ra mw fg fp, or 0)", key, w);
			return -1;
		}
		*flags |= t[i].flag;
	}
	return 0;
}

int req_gid(struct req *r, const char *key, union ibv_gid *gid)
{
	const char *s = req_str(r, key);

	if (!s || inet_pton(AF_INET6, s, gid->raw) != 1) {
		snprintf(r->err, sizeof(r->err), "%s needs %s= an IPv6 GID (::ffff:a.b.c.d for IPv4)",
			 r->cmd, key);
		return -1;
	}
	return 0;
}

/* Appends to a, truncating at its end. */
static void ans_vadd(struct answer *a, const char *fmt, va_list ap)
{
	if (a->len >= sizeof(a->text) - 1)
		return;
	int n = vsnprintf(a->text + a->len, sizeof(a->text) - a->len, fmt, ap);
	if (n > 0)
		a->len += (size_t)n < sizeof(a->text) - a->len ? (size_t)n
							       : sizeof(a->text) - 1 - a->len;
}

void ans_add(struct answer *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ans_vadd(a, fmt, ap);
	va_end(ap);
}

int ans_err(struct answer *a, const char *code, const char *fmt, ...)
{
	va_list ap;

	a->len = 0;
	ans_add(a, "err %s ", code);
	va_start(ap, fmt);
	ans_vadd(a, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < a->len; i++)	/* one line, whatever the text */
		if (a->text[i] == '\n')
			a->text[i] = ' ';
	return 0;
}

int ans_errno(struct answer *a, int err, const char *what)
{
	static const struct { int e; const char *name; } t[] = {
		{ EINVAL, "EINVAL" }, { ENOMEM, "ENOMEM" }, { EOPNOTSUPP, "EOPNOTSUPP" },
		{ ENOSYS, "ENOSYS" }, { EBUSY, "EBUSY" }, { EPERM, "EPERM" },
		{ EACCES, "EACCES" }, { ENOENT, "ENOENT" }, { EAGAIN, "EAGAIN" },
		{ ENOSPC, "ENOSPC" }, { EFAULT, "EFAULT" }, { EPROTONOSUPPORT, "EPROTONOSUPPORT" },
	};
	const char *name = "EIO";

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].e == err)
			name = t[i].name;
	return ans_err(a, name, "%s failed: %s", what, strerror(err));
}
