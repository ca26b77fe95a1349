/* SPDX-License-Identifier: MIT */
/* The agent's control connection: one request line, one answer line (conformance/PROTOCOL.md). */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conform.h"

/* An answer takes at most this long: the longest request waits 10 s. */
enum { ANSWER_MS = 15000, CONNECT_TRIES = 50 };

static int tcp_connect(const char *host, int port, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	char ps[16];

	snprintf(ps, sizeof(ps), "%d", port);
	int rc = getaddrinfo(host, ps, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "agent %s: %s", host, gai_strerror(rc));
		return -1;
	}
	int fd = -1, e = 0;
	/* The agent may still be starting: a refused connection is tried
	 * again for five seconds. */
	for (int t = 0; fd < 0 && t < CONNECT_TRIES; t++) {
		for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
			fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
				    ai->ai_protocol);
			if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen)) {
				e = errno;
				close(fd);
				fd = -1;
			}
		}
		if (fd < 0 && e == ECONNREFUSED)
			usleep(100 * 1000);
		else if (fd < 0)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(err, errlen, "agent %s:%d: %s (is rocemu-agent running there?)",
			 host, port, strerror(e));
	return fd;
}

/* Reads one line into a->line; 0, or -1 with the reason there. */
static int read_line(struct cf_agent *a)
{
	for (;;) {
		char *nl = memchr(a->rbuf, '\n', a->rlen);
		if (nl) {
			size_t n = (size_t)(nl - a->rbuf);
			if (n >= sizeof(a->line))
				n = sizeof(a->line) - 1;
			memcpy(a->line, a->rbuf, n);
			a->line[n] = 0;
			a->rlen -= (size_t)(nl + 1 - a->rbuf);
			memmove(a->rbuf, nl + 1, a->rlen);
			return 0;
		}
		if (a->rlen == sizeof(a->rbuf)) {
			snprintf(a->line, sizeof(a->line), "agent: answer too long");
			return -1;
		}
		struct pollfd p = { .fd = a->fd, .events = POLLIN };
		int rc = poll(&p, 1, ANSWER_MS);
		if (rc <= 0) {
			snprintf(a->line, sizeof(a->line), "agent: no answer in %d s to '%.200s'",
				 ANSWER_MS / 1000, a->sent);
			return -1;
		}
		ssize_t got = read(a->fd, a->rbuf + a->rlen, sizeof(a->rbuf) - a->rlen);
		if (got <= 0) {
			snprintf(a->line, sizeof(a->line), "agent: connection closed%s%s",
				 got < 0 ? ": " : "", got < 0 ? strerror(errno) : "");
			return -1;
		}
		a->rlen += (size_t)got;
	}
}

int cf_agent_do(struct cf_agent *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(a->sent, sizeof(a->sent) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(a->sent) - 1) {
		snprintf(a->line, sizeof(a->line), "agent: request too long");
		return -1;
	}
	if (a->fd < 0) {
		snprintf(a->line, sizeof(a->line), "agent: not connected");
		return -1;
	}
	if (a->log)
		fprintf(a->log, "  agent> %s\n", a->sent);
	a->sent[n] = '\n';
	ssize_t w = send(a->fd, a->sent, (size_t)n + 1, MSG_NOSIGNAL);
	a->sent[n] = 0;
	if (w != n + 1) {
		snprintf(a->line, sizeof(a->line), "agent: send failed: %s",
			 strerror(errno));
		return -1;
	}
	if (read_line(a))
		return -1;
	if (a->log)
		fprintf(a->log, "  agent< %s\n", a->line);
	if (!strncmp(a->line, "ok", 2) && (a->line[2] == 0 || a->line[2] == ' '))
		return 1;
	if (!strncmp(a->line, "err ", 4))
		return 0;
	char bad[128];
	snprintf(bad, sizeof(bad), "%.100s", a->line);
	snprintf(a->line, sizeof(a->line), "agent: not an answer: '%s'", bad);
	return -1;
}

bool cf_agent_get(const struct cf_agent *a, const char *key, char *out,
		  size_t outlen)
{
	size_t kl = strlen(key);

	for (const char *p = a->line; (p = strstr(p, key)); p += kl) {
		if ((p != a->line && p[-1] != ' ') || p[kl] != '=')
			continue;
		const char *v = p + kl + 1;
		size_t n = strcspn(v, " ");
		if (n >= outlen)
			return false;
		memcpy(out, v, n);
		out[n] = 0;
		return true;
	}
	return false;
}

bool cf_agent_num(const struct cf_agent *a, const char *key, uint64_t *v)
{
	char s[64], *end;

	if (!cf_agent_get(a, key, s, sizeof(s)) || !*s)
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !*end && !errno;
}

/* Whether g is an IPv4-mapped GID (::ffff:a.b.c.d). */
static bool gid_v4(const uint8_t *g)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	return !memcmp(g, mapped, sizeof(mapped));
}

/* The GID of each family hello names (gid4= gid4_index=, gid6=
 * gid6_index=); an agent that names neither has gid= alone, at its own
 * index. 0, or -1 with the reason in err for a malformed one. */
static int read_family_gids(struct cf_agent *a, struct cf_device *dev, char *err,
			    size_t errlen)
{
	static const char *const key[2][2] = { { "gid4", "gid4_index" },
					       { "gid6", "gid6_index" } };
	char gid[64];
	uint64_t v;

	for (int f = CF_IPV4; f <= CF_IPV6; f++) {
		dev->fam_index[f] = -1;
		if (!cf_agent_get(a, key[f][0], gid, sizeof(gid)))
			continue;
		if (inet_pton(AF_INET6, gid, dev->fam_gid[f]) != 1 ||
		    gid_v4(dev->fam_gid[f]) != (f == CF_IPV4) ||
		    !cf_agent_num(a, key[f][1], &v) || v > 255) {
			snprintf(err, errlen, "agent: hello answer with a bad %s: %s",
				 key[f][0], a->line);
			return -1;
		}
		dev->has_gid[f] = true;
		dev->fam_index[f] = (int)v;
	}
	if (!dev->has_gid[CF_IPV4] && !dev->has_gid[CF_IPV6]) {
		int f = gid_v4(dev->gid_bytes) ? CF_IPV4 : CF_IPV6;
		dev->has_gid[f] = true;
		memcpy(dev->fam_gid[f], dev->gid_bytes, 16);
	}
	return 0;
}

/* Fills dev from the hello answer. */
static int read_hello(struct cf_agent *a, struct cf_device *dev, char *err,
		      size_t errlen)
{
	uint64_t v;
	char gid[64];

	memset(dev, 0, sizeof(*dev));
	if (!cf_agent_get(a, "device", dev->name, sizeof(dev->name)) ||
	    !cf_agent_get(a, "gid", gid, sizeof(gid)) ||
	    inet_pton(AF_INET6, gid, dev->gid_bytes) != 1) {
		snprintf(err, errlen, "agent: hello answer without device and gid: %s",
			 a->line);
		return -1;
	}
	snprintf(dev->gid, sizeof(dev->gid), "%s", gid);
	dev->active_mtu = cf_agent_num(a, "active_mtu", &v) ? (uint32_t)v : 1024;
	dev->max_rd_atom = cf_agent_num(a, "max_qp_rd_atom", &v) ? (uint32_t)v : 1;
	if (!cf_agent_get(a, "atomic_cap", dev->atomic_cap, sizeof(dev->atomic_cap)))
		strcpy(dev->atomic_cap, "none");
	if (!cf_agent_get(a, "caps", dev->caps, sizeof(dev->caps)))
		strcpy(dev->caps, "none");
	return read_family_gids(a, dev, err, errlen);
}

/* auth token=...: 1 ok, 0 refused, -1 lost; the token is kept out of
 * the log and of the request that messages quote. */
static int give_token(struct cf_agent *a)
{
	char req[sizeof(a->sent)];
	int n = snprintf(req, sizeof(req), "auth token=%s\n", a->token);

	snprintf(a->sent, sizeof(a->sent), "auth token=(hidden)");
	if (n < 0 || (size_t)n >= sizeof(req)) {
		snprintf(a->line, sizeof(a->line), "agent: token too long");
		return -1;
	}
	if (a->log)
		fprintf(a->log, "  agent> %s\n", a->sent);
	ssize_t w = send(a->fd, req, (size_t)n, MSG_NOSIGNAL);
	memset(req, 0, sizeof(req));
	if (w != n) {
		snprintf(a->line, sizeof(a->line), "agent: send failed: %s", strerror(errno));
		return -1;
	}
	if (read_line(a))
		return -1;
	if (a->log)
		fprintf(a->log, "  agent< %s\n", a->line);
	return !strcmp(a->line, "ok") ? 1 : 0;
}

int cf_agent_open(struct cf_agent *a, const char *host, int port,
		  struct cf_device *dev, char *err, size_t errlen)
{
	FILE *log = a->log;
	const char *token = a->token;

	memset(a, 0, sizeof(*a));
	a->log = log;
	a->token = token;
	snprintf(a->host, sizeof(a->host), "%s", host);
	a->port = port;
	a->fd = tcp_connect(host, port, err, errlen);
	if (a->fd < 0)
		return -1;
	if (a->token && give_token(a) != 1) {
		snprintf(err, errlen, "agent %s:%d: token refused: %s", host, port, a->line);
		cf_agent_close(a);
		return -1;
	}
	int rc = cf_agent_do(a, "hello proto=1");
	if (rc != 1) {
		snprintf(err, errlen, "agent %s:%d: hello refused: %s", host, port,
			 a->line);
		cf_agent_close(a);
		return -1;
	}
	if (read_hello(a, dev, err, errlen)) {
		cf_agent_close(a);
		return -1;
	}
	return 0;
}

void cf_agent_close(struct cf_agent *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	a->rlen = 0;
}
