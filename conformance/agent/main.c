// SPDX-License-Identifier: MIT
/*
 * rocemu-agent: runs on the host of a device under test and does, over
 * one TCP control connection at a time, what `rocemu conform` asks: verbs
 * objects, work requests, completions, events, memory (conformance/PROTOCOL.md).
 * Written against rdma-core's <infiniband/verbs.h> and <rdma/rdma_cma.h> only:
 *   cc -O2 -o rocemu-agent conformance/agent/[a-z]*.c -lrdmacm -libverbs
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

/* Milliseconds from now until t0 + idle_s; -1 (wait forever) when idle_s is 0. */
static int idle_left_ms(const struct timespec *t0, int idle_s)
{
	struct timespec now;

	if (!idle_s)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t ms = (int64_t)idle_s * 1000 - (now.tv_sec - t0->tv_sec) * 1000 -
		     (now.tv_nsec - t0->tv_nsec) / 1000000;
	return ms > 0 ? (int)ms : 0;
}

static bool send_answer(int fd, struct answer *a)
{
	ans_add(a, "\n");
	return send(fd, a->text, a->len, MSG_NOSIGNAL) == (ssize_t)a->len;
}

/*
 * Serves one connection until it closes, says bye, gives a wrong token or
 * sends no complete request for idle_s seconds (0: no limit). The idle
 * clock restarts at each complete request only: a client trickling bytes
 * of a line that never ends holds the agent no longer than a silent one.
 */
static void serve(struct agent_dev *d, int fd, int idle_s)
{
	static struct agent_objs objs;
	static char buf[AGENT_LINE_MAX + 1];
	static struct answer ans;
	size_t have = 0;
	bool discarding = false;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int rc = poll(&p, 1, idle_left_ms(&t0, idle_s));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0) {
			ans.len = 0;
			ans_err(&ans, "ETIMEDOUT", "no request in %d s; closing", idle_s);
			send_answer(fd, &ans);
			break;
		}
		ssize_t got = rc < 0 ? -1 : read(fd, buf + have, sizeof(buf) - 1 - have);
		if (got <= 0)
			break;
		have += (size_t)got;
		char *nl;
		int done = 0;
		while (!done && (nl = memchr(buf, '\n', have))) {
			size_t len = (size_t)(nl - buf);
			done = discarding ? agent_line_overlong(d, &objs, &ans)
					  : agent_line(d, &objs, buf, len, &ans);
			discarding = false;
			if (!send_answer(fd, &ans))
				done = 1;
			have -= len + 1;
			memmove(buf, nl + 1, have);
			clock_gettime(CLOCK_MONOTONIC, &t0);
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

/*
 * Splits --listen ADDR[:PORT] ([V6]:PORT for an IPv6 address with a port;
 * an IPv6 address alone has more than one colon) into addr (cap bytes)
 * and *port (left as it is when none is given). 0, or -1 when it is empty
 * or too long.
 */
static int split_listen(const char *arg, char *addr, size_t cap, char *port,
			size_t pcap)
{
	const char *colon = strrchr(arg, ':');
	size_t n = strlen(arg);

	if (arg[0] == '[') {
		const char *end = strchr(arg, ']');
		if (!end || (end[1] && end[1] != ':'))
			return -1;
		n = (size_t)(end - arg - 1);
		colon = end[1] ? end + 1 : NULL;
		arg++;
	} else if (colon && strchr(arg, ':') != colon) {
		colon = NULL;	/* an IPv6 address without a port */
	} else if (colon) {
		n = (size_t)(colon - arg);
	}
	if (!n || n >= cap || (colon && (!colon[1] || strlen(colon + 1) >= pcap)))
		return -1;
	memcpy(addr, arg, n);
	addr[n] = 0;
	if (colon)
		strcpy(port, colon + 1);
	return 0;
}

/* True for 127.0.0.0/8, ::1 and ::ffff:127.x: only this host can reach it. */
static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >>
			24) == 127;
	if (sa->sa_family != AF_INET6)
		return false;
	const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

/* A listening socket at addr:port; -1 after saying why. *loopback says
 * whether only this host can reach it. */
static int listen_on(const char *addr, const char *port, bool *loopback)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res;
	int one = 1, fd = -1, rc;

	if ((rc = getaddrinfo(addr, port, &hints, &res))) {
		fprintf(stderr, "rocemu-agent: cannot listen on %s port %s: %s\n", addr, port,
			gai_strerror(rc));
		return -1;
	}
	*loopback = is_loopback(res->ai_addr);
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 4)) {
		fprintf(stderr, "rocemu-agent: cannot listen on %s port %s: %s\n", addr, port,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* The token of file (its first line, trailing blanks dropped), malloc'd;
 * NULL after saying why. */
static char *read_token(const char *file)
{
	FILE *f = fopen(file, "re");
	char *line = NULL;
	size_t cap = 0;
	struct stat st;

	if (!f) {
		fprintf(stderr, "rocemu-agent: token file %s: %s\n", file, strerror(errno));
		return NULL;
	}
	ssize_t n = getline(&line, &cap, f);
	if (!fstat(fileno(f), &st) && (st.st_mode & 077))
		fprintf(stderr, "rocemu-agent: warning: token file %s can be read by others\n",
			file);
	fclose(f);
	while (n > 0 && strchr(" \t\r\n", line[n - 1]))
		line[--n] = 0;
	if (n <= 0 || !agent_token_ok(line)) {
		fprintf(stderr, "rocemu-agent: token file %s: the token is 1 to %d printable "
			"characters without spaces, on the first line\n", file, AGENT_TOKEN_MAX);
		free(line);
		return NULL;
	}
	return line;
}

#ifndef ROCEMU_VERSION
#error "ROCEMU_VERSION is given by the Makefile (-DROCEMU_VERSION)"
#endif

/* The usage text, the source of rocemu-agent(1) (tools/mkman.py). */
static const char usage[] =
	"usage: rocemu-agent [-d DEVICE] [-g GID_INDEX] [-l ADDRESS[:PORT]] [-p PORT]\n"
	"                    [-t IDLE_SECONDS] [-T TOKEN_FILE] [-1]\n"
	"       rocemu-agent --version\n"
	"\n"
	"The conformance agent: drives a verbs device (rxe, rocemu's drop-in, a\n"
	"NIC) on the orders of rocemu conform, a line each over TCP: it makes\n"
	"the device's objects, posts work requests, accepts connections through\n"
	"the device's connection manager (librdmacm) and reports completions and\n"
	"events (the protocol is in conformance/PROTOCOL.md). It runs on the host\n"
	"of the device under test.\n"
	"\n"
	"Options:\n"
	"  -l, --listen ADDR[:PORT]   where to listen (default 127.0.0.1, port 18515;\n"
	"                             0.0.0.0 or :: for every address)\n"
	"  -p, --port PORT            the port alone\n"
	"  -t, --idle-timeout S       drop a client silent for S seconds (default 60,\n"
	"                             0 never)\n"
	"  -T, --token-file FILE      clients must send 'auth token=' this file's first\n"
	"                             line first (default: $ROCEMU_AGENT_TOKEN if set)\n"
	"  -d, --device NAME          the verbs device (default: the first)\n"
	"  -g, --gid-index N          the GID index of its port 1 to use (default 1)\n"
	"  -1, --once                 serve one connection, then exit\n"
	"  -h, --help                 print this text and exit\n"
	"  --version                  print the version and exit\n"
	"\n"
	"Environment:\n"
	"  ROCEMU_AGENT_TOKEN  the token clients must send when -T is not given\n"
	"\n"
	"Exit status:\n"
	"  0  it served until stopped, or its one connection with -1\n"
	"  1  the device or the listening socket could not be set up\n"
	"  2  a usage error, or a token file that cannot be used\n";

struct opts {
	const char *dev, *token_file;
	char addr[256], port[32];
	int idle_s;
	bool once;
};

/* 0, 1 for --help, or -1 after saying what is wrong. */
static int parse_opts(int argc, char **argv, struct opts *o, struct agent_dev *d)
{
	static const struct option longs[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "listen", required_argument, NULL, 'l' },
		{ "port", required_argument, NULL, 'p' },
		{ "idle-timeout", required_argument, NULL, 't' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "once", no_argument, NULL, '1' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int opt;

	while ((opt = getopt_long(argc, argv, "d:g:l:p:t:T:1h", longs, NULL)) != -1) {
		switch (opt) {
		case 'd': o->dev = optarg; break;
		case 'g': d->gid_index = atoi(optarg); break;
		case 'l':
			if (split_listen(optarg, o->addr, sizeof(o->addr), o->port,
					 sizeof(o->port))) {
				fprintf(stderr, "rocemu-agent: --listen %s: not ADDRESS[:PORT]\n",
					optarg);
				return -1;
			}
			break;
		case 'p': snprintf(o->port, sizeof(o->port), "%s", optarg); break;
		case 't':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (!*optarg || *end || errno || v < 0 || v > 86400) {
				fprintf(stderr, "rocemu-agent: --idle-timeout %s: seconds, 0 to "
					"86400\n", optarg);
				return -1;
			}
			o->idle_s = (int)v;
			break;
		case 'T': o->token_file = optarg; break;
		case '1': o->once = true; break;
		case 'h': fputs(usage, stdout); return 1;
		case 'V': puts("rocemu " ROCEMU_VERSION); return 1;
		default: fputs(usage, stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rocemu-agent: unexpected argument %s\n%s", argv[optind], usage);
		return -1;
	}
	return 0;
}

/* The token asked for: the file's, else $ROCEMU_AGENT_TOKEN's, else none
 * (0 with d->token NULL); -1 after saying why. */
static int load_token(const struct opts *o, struct agent_dev *d)
{
	const char *env = getenv("ROCEMU_AGENT_TOKEN");

	if (o->token_file)
		return (d->token = read_token(o->token_file)) ? 0 : -1;
	if (!env || !*env)
		return 0;
	if (!agent_token_ok(env)) {
		fprintf(stderr, "rocemu-agent: ROCEMU_AGENT_TOKEN: the token is 1 to %d "
			"printable characters without spaces\n", AGENT_TOKEN_MAX);
		return -1;
	}
	d->token = env;
	return 0;
}

int main(int argc, char **argv)
{
	struct agent_dev d = { .port = 1, .gid_index = 1 };
	struct opts o = { .addr = "127.0.0.1", .port = "18515", .idle_s = AGENT_IDLE_S };
	bool loopback;

	int rc = parse_opts(argc, argv, &o, &d);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (load_token(&o, &d))
		return 2;
	signal(SIGPIPE, SIG_IGN);
	if (open_device(&d, o.dev))
		return 1;
	int lfd = listen_on(o.addr, o.port, &loopback);
	if (lfd < 0)
		return 1;
	if (!loopback && !d.token)
		fprintf(stderr, "rocemu-agent: warning: anyone who can reach %s port %s can "
			"make this device write its registered memory: no token is asked for "
			"(--token-file)\n", o.addr, o.port);
	printf("rocemu-agent: listening on %s%s%s:%s, device %s, GID index %d, ",
	       strchr(o.addr, ':') ? "[" : "", o.addr, strchr(o.addr, ':') ? "]" : "", o.port,
	       d.name, d.gid_index);
	if (o.idle_s)
		printf("idle timeout %d s, ", o.idle_s);
	else
		printf("no idle timeout, ");
	printf("%s\n", d.token ? "a token asked for" : "no token");
	fflush(stdout);
	do {
		int fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		/* An answer the client does not read blocks no longer than
		 * its silence would. */
		struct timeval tv = { .tv_sec = o.idle_s };
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		serve(&d, fd, o.idle_s);
		close(fd);
	} while (!o.once);
	ibv_close_device(d.ctx);
	return 0;
}
