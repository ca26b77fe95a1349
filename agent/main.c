// SPDX-License-Identifier: MIT
/*
 * rocemu-agent: runs on the host of a device under test and does, over
 * one TCP control connection at a time, what `rocemu conform` asks: verbs
 * objects, work requests, completions, events, memory (agent/PROTOCOL.md).
 * Written against rdma-core's <infiniband/verbs.h> only:
 *   cc -O2 -o rocemu-agent agent/[a-z]*.c -libverbs
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent.h"

typedef int (*cmd_fn)(struct agent_dev *, struct agent_objs *, struct req *,
		      struct answer *);

static const struct command {
	const char *name;
	cmd_fn fn;
	const char *const keys[24];	/* the keys it takes; modify checks its own */
} commands[] = {
	{ "hello", cmd_hello, { "proto" } },
	{ "pd", cmd_pd, { NULL } },
	{ "mr", cmd_mr, { "pd", "size", "access", "fill" } },
	{ "cq", cmd_cq, { "depth" } },
	{ "qp", cmd_qp, { "pd", "type", "scq", "rcq", "sq", "rq" } },
	{ "modify", cmd_modify, { "qp", "state", "access", "qkey", "dgid", "dqpn", "rq_psn",
		"mtu", "max_dest_rd_atomic", "min_rnr_timer", "sq_psn", "timeout", "retry_cnt",
		"rnr_retry", "max_rd_atomic" } },
	{ "query", cmd_query, { "qp" } },
	{ "ah", cmd_ah, { "pd", "dgid" } },
	{ "mw", cmd_mw, { "pd", "type" } },
	{ "bind", cmd_bind, { "qp", "mw", "mr", "off", "len", "access", "id" } },
	{ "recv", cmd_recv, { "qp", "mr", "off", "len", "id" } },
	{ "send", cmd_send, { "qp", "op", "mr", "off", "len", "id", "raddr", "rkey", "imm",
		"inv_rkey", "compare", "swap", "add", "ah", "dqpn", "qkey", "inline", "fence",
		"se" } },
	{ "poll", cmd_poll, { "cq", "wait_ms" } },
	{ "event", cmd_event, { "wait_ms" } },
	{ "read", cmd_read, { "mr", "off", "len" } },
	{ "write", cmd_write, { "mr", "off", "data" } },
	{ "destroy", cmd_destroy, { "qp", "mw", "ah", "mr", "cq", "pd" } },
	{ "bye", NULL, { NULL } },
};

int agent_dispatch(struct agent_dev *d, struct agent_objs *o, struct req *r,
		   struct answer *a)
{
	const struct command *c = NULL;

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, r->cmd))
			c = &commands[i];
	if (!c)
		return ans_err(a, "EINVAL", "unknown command '%.40s'", r->cmd);
	if (!o->hello && strcmp(c->name, "hello"))
		return ans_err(a, "EPROTO", "say hello proto=%d first", AGENT_PROTO);
	if (!req_keys_ok(r, c->keys))
		return ans_err(a, "EINVAL", "%s", r->err);
	if (!c->fn) {
		ans_add(a, "ok");
		return 1;
	}
	return c->fn(d, o, r, a);
}

/* Serves one connection until it closes or says bye. */
static void serve(struct agent_dev *d, int fd)
{
	static struct agent_objs objs;
	static char buf[AGENT_LINE_MAX + 1];
	static struct answer ans;
	size_t have = 0;
	bool discarding = false;

	for (;;) {
		ssize_t got = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (got <= 0)
			break;
		have += (size_t)got;
		char *nl;
		int done = 0;
		while (!done && (nl = memchr(buf, '\n', have))) {
			*nl = 0;
			struct req r;
			ans.len = 0;
			ans.text[0] = 0;
			if (discarding)
				ans_err(&ans, "EINVAL", "line longer than %d bytes", AGENT_LINE_MAX);
			else if (req_split(buf, &r))
				ans_err(&ans, "EINVAL", "%s", r.err);
			else
				done = agent_dispatch(d, &objs, &r, &ans);
			discarding = false;
			ans_add(&ans, "\n");
			if (send(fd, ans.text, ans.len, MSG_NOSIGNAL) < 0)
				done = 1;
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have);
		}
		if (done)
			break;
		if (have == sizeof(buf) - 1) {	/* no newline in a whole buffer */
			discarding = true;
			have = 0;
		}
	}
	agent_objs_free(&objs);
}

static int open_device(struct agent_dev *d, const char *want)
{
	int n;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (!list || n == 0) {
		fprintf(stderr, "rocemu-agent: no RDMA device\n");
		return -1;
	}
	struct ibv_device *dev = NULL;
	for (int i = 0; i < n && !dev; i++)
		if (!want || !strcmp(ibv_get_device_name(list[i]), want))
			dev = list[i];
	if (!dev) {
		fprintf(stderr, "rocemu-agent: no device %s\n", want);
		return -1;
	}
	d->name = strdup(ibv_get_device_name(dev));
	d->ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!d->ctx || ibv_query_device(d->ctx, &d->attr) ||
	    ibv_query_port(d->ctx, d->port, &d->port_attr) ||
	    ibv_query_gid(d->ctx, d->port, d->gid_index, &d->gid)) {
		fprintf(stderr, "rocemu-agent: cannot open %s or read its port %u, GID %d\n",
			d->name, d->port, d->gid_index);
		return -1;
	}
	int fl = fcntl(d->ctx->async_fd, F_GETFL);
	fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	return 0;
}

static int listen_on(const char *addr, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res;
	int one = 1, fd = -1;

	if (getaddrinfo(addr, port, &hints, &res)) {
		fprintf(stderr, "rocemu-agent: cannot resolve %s\n", addr);
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 4)) {
		fprintf(stderr, "rocemu-agent: cannot listen on %s port %s: %s\n", addr, port,
			strerror(errno));
		freeaddrinfo(res);
		return -1;
	}
	freeaddrinfo(res);
	return fd;
}

int main(int argc, char **argv)
{
	struct agent_dev d = { .port = 1, .gid_index = 1 };
	const char *dev = NULL, *addr = "0.0.0.0", *port = "18515";
	bool once = false;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:l:p:1h")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': d.gid_index = atoi(optarg); break;
		case 'l': addr = optarg; break;
		case 'p': port = optarg; break;
		case '1': once = true; break;
		default:
			fprintf(stderr, "usage: rocemu-agent [-d DEVICE] [-g GID_INDEX] [-l ADDRESS] "
				"[-p PORT] [-1]\n");
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	if (open_device(&d, dev))
		return 1;
	int lfd = listen_on(addr, port);
	if (lfd < 0)
		return 1;
	printf("rocemu-agent: listening on %s:%s, device %s, GID index %d\n", addr, port,
	       d.name, d.gid_index);
	fflush(stdout);
	do {
		int fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		serve(&d, fd);
		close(fd);
	} while (!once);
	ibv_close_device(d.ctx);
	return 0;
}
