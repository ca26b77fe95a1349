/* SPDX-License-Identifier: MIT */
/* libibverbs.so.1: the device list, contexts, device and port queries, the GID table, names. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocemu/dropin.h"
#include "rocemu/frame.h"
#include "verbs_local.h"

#undef ibv_query_port

static pthread_mutex_t once_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rocemu_world *world;
static struct rocemu_dev *dev;
static pid_t owner; /* the process that made them; not a forked child */
/* Forks since this process's line first made a device: each child counts
 * one more, so a context remembers the process it was opened in (written
 * only in a child's fork handler, where the child has one thread). */
static unsigned fork_gen;
static bool atfork_set;
/* The device's address, capture and trace files, so a forked child can
 * tell its parent's from its own (NULL: none). */
static char *cur_addr, *cur_pcap, *cur_trace, *cur_stats;
static char *parent_addr, *parent_pcap, *parent_trace, *parent_stats;
static struct ibv_device the_device = {
	.node_type = IBV_NODE_CA,
	.transport_type = IBV_TRANSPORT_IB,
	.name = "rocemu0",
	.dev_name = "uverbs0",
	.dev_path = "/sys/class/infiniband_verbs/uverbs0",
	.ibdev_path = "/sys/class/infiniband/rocemu0",
};

/* Whether path names the file of the parent's (one this process got in
 * a fork). */
static bool parents_file(const char *path, const char *parents)
{
	return parents && !strcmp(path, parents);
}

/* Whether the file variable var=path names the parent's file (what, which
 * it verb): then a forked child leaves it alone, and says so once. */
static bool refuse_parents(const char *var, const char *path,
			   const char *parents, const char *what,
			   const char *verb)
{
	if (!parents_file(path, parents))
		return false;
	fprintf(stderr, "rocemu: %s=%s is the parent's %s; this forked child "
			"%s none (set %s to a file of its own)\n",
		var, path, what, verb, var);
	return true;
}

static void print_trace(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "rocemu: %s\n", line);
}

/* ROCEMU_TRACE=FILE: the world's events go there, a line each, written
 * as they happen (line-buffered: a forked child has no buffered lines of
 * its parent's to write a second time). */
static FILE *events;

static void trace_from_env(void)
{
	const char *v = getenv("ROCEMU_TRACE");

	if (!v || !*v || !strcmp(v, "0"))
		return;
	if (!strcmp(v, "1")) {
		rocemu_world_trace(world, print_trace, NULL);
		return;
	}
	if (refuse_parents("ROCEMU_TRACE", v, parent_trace, "trace", "writes"))
		return;
	cur_trace = strdup(v);
	events = fopen(v, "w");
	if (!events || setvbuf(events, NULL, _IOLBF, 0) ||
	    rocemu_trace_begin(events)) {
		fprintf(stderr, "rocemu: cannot write ROCEMU_TRACE=%s\n", v);
		if (events)
			fclose(events);
		events = NULL;
		return;
	}
	rocemu_world_events(world, rocemu_trace_to_file, events);
}

static enum ibv_mtu mtu_from_env(void)
{
	const char *m = getenv("ROCEMU_MTU");
	int v = m ? atoi(m) : 1024;

	for (enum ibv_mtu e = IBV_MTU_256; e <= IBV_MTU_4096; e++)
		if (v == (128 << e))
			return e;
	fprintf(stderr, "rocemu: ROCEMU_MTU=%s is not 256, 512, 1024, 2048 "
			"or 4096; using 1024\n", m);
	return IBV_MTU_1024;
}

/* ROCEMU_OFFLOAD=0 sends every packet as its own datagram, for a capture
 * on lo that shows each one; 1, the default, batches them to loopback
 * addresses (rocemu_world_set_offload). */
static int offload_from_env(bool *on)
{
	const char *v = getenv("ROCEMU_OFFLOAD");

	*on = true;
	if (!v || !*v || !strcmp(v, "1"))
		return 0;
	if (!strcmp(v, "0")) {
		*on = false;
		return 0;
	}
	fprintf(stderr, "rocemu: ROCEMU_OFFLOAD=%s is not 0 or 1\n", v);
	return -1;
}

/*
 * fork(): the device stays the parent's. prepare holds the device's making
 * and the world still, and writes out the capture's buffer, so that a
 * child that exits does not write it into the file a second time.
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&once_lock);
	if (world)
		rocemu_world_fork_prepare(world);
}

static void fork_parent(void)
{
	if (world)
		rocemu_world_fork_parent(world);
	pthread_mutex_unlock(&once_lock);
}

/*
 * The child abandons the parent's world: its threads are not here, its
 * sockets and capture are the parent's, and its lock is held by a thread
 * of the parent's, which cannot be released from here. What the child
 * inherited from it is dead (rv_stale); its first ibv_open_device makes a
 * world and device of its own, on its own address (make_device). The
 * locks are made anew: the parent's threads may have held them.
 */
static void fork_child(void)
{
	if (world)
		rocemu_world_fork_child(world);
	world = NULL;
	dev = NULL;
	/* Line-buffered and written under the world lock: nothing of the
	 * parent's is left in its buffer to write again. */
	events = NULL;
	free(parent_addr), free(parent_pcap), free(parent_trace);
	free(parent_stats);
	parent_addr = cur_addr, parent_pcap = cur_pcap, parent_trace = cur_trace;
	parent_stats = cur_stats;
	cur_addr = cur_pcap = cur_trace = cur_stats = NULL;
	fork_gen++;
	pthread_mutex_init(&once_lock, NULL);
	rv_events_fork_child();
	rv_dm_fork_child();
}

/* The rv_context a context is the last member of (ibv_open_device). */
static struct rv_context *ctx_of(const struct ibv_context *context)
{
	return (struct rv_context *)(void *)((char *)(uintptr_t)context -
		offsetof(struct rv_context, vctx.context));
}

const struct ibv_device_attr_ex *rv_context_attr(
	const struct ibv_context *context)
{
	return &ctx_of(context)->attr;
}

unsigned rv_fork_gen(void)
{
	return fork_gen;
}

bool rv_stale(const struct ibv_context *context)
{
	if (ctx_of(context)->gen == fork_gen)
		return false;
	errno = EIO;
	return true;
}

/* ROCEMU_TEST_MISBEHAVE=NAME (test-only): the responder breaks one rule
 * on purpose (include/rocemu/device.h). An unknown name refuses the
 * device, with the names there are: a typo must not test nothing. */
static int misbehave_from_env(enum rocemu_misbehave *m)
{
	const char *v = getenv("ROCEMU_TEST_MISBEHAVE");

	if (!v || !*v)
		return 0;
	int got = rocemu_misbehave_parse(v);
	if (got >= 0) {
		*m = (enum rocemu_misbehave)got;
		fprintf(stderr, "rocemu: ROCEMU_TEST_MISBEHAVE=%s: this device breaks a "
			"rule on purpose: %s\n", v, rocemu_misbehave_text(*m));
		return 0;
	}
	fprintf(stderr, "rocemu: ROCEMU_TEST_MISBEHAVE=%s is unknown; it is one of:", v);
	for (int i = 1; i < ROCEMU_MISBEHAVE_COUNT; i++)
		fprintf(stderr, " %s", rocemu_misbehave_name((enum rocemu_misbehave)i));
	fprintf(stderr, "\n");
	return -1;
}

/*
 * ROCEMU_EXPLAIN=1 (docs/explain.md): each reason the device gives (a
 * NAK, an error completion, a drop, a refused verb) once on stderr, as
 * "rocemu: why: TEXT [RULE]", a run of the same one counted, not
 * repeated. The trace gets its why events whether or not this is on.
 */
static struct rocemu_why_printer why_printer;

static void explain_from_env(void)
{
	const char *v = getenv("ROCEMU_EXPLAIN");

	if (!v || !*v || !strcmp(v, "0"))
		return;
	why_printer.f = stderr;
	rocemu_world_explain(world, rocemu_why_print, &why_printer);
}

/*
 * ROCEMU_STATS=FILE: the counters, as ROCEMU_STATS=1 prints them but
 * without the "rocemu: " lead, in FILE while the program runs. The
 * progress thread writes them at most every STATS_PERIOD_NS, and only
 * when they changed; each time a new file is written beside FILE and
 * renamed over it, so a reader at any moment finds the whole of one
 * snapshot. The last one is written at exit (a program that leaves
 * through _exit keeps the last the thread wrote).
 */
enum { STATS_PERIOD_NS = 100 * 1000 * 1000 };
static char *stats_last; /* the text FILE holds now, or NULL */
static size_t stats_last_len;

/* FILE replaced whole by len bytes of text: 0, or -1. */
static int replace_file(const char *path, const char *text, size_t len)
{
	char tmp[4096];
	int n = snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());

	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -1;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	if (close(fd) || done < len || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The tick (rocemu_world_tick) and the exit's last word. */
static void write_stats(void *arg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	(void)arg;
	if (!m)
		return;
	rocemu_dev_print_counters(dev, m, "");
	rocemu_world_print_wire_stats(world, m, "");
	rocemu_dev_print_why(dev, m, "");
	if (fclose(m) || (stats_last && len == stats_last_len &&
			  !memcmp(text, stats_last, len)) ||
	    replace_file(cur_stats, text, len)) {
		free(text);
		return;
	}
	free(stats_last);
	stats_last = text;
	stats_last_len = len;
}

static void stats_from_env(void)
{
	const char *v = getenv("ROCEMU_STATS");

	/* the reasons' last texts, for the why lines */
	if (v && *v && strcmp(v, "0"))
		rocemu_world_explain_keep(world, true);
	if (!v || !*v || !strcmp(v, "0") || !strcmp(v, "1"))
		return;
	if (refuse_parents("ROCEMU_STATS", v, parent_stats, "counters file",
			   "writes"))
		return;
	cur_stats = strdup(v);
	free(stats_last);
	stats_last = NULL;
}

/* The progress thread's tick: the counters file, a state dump asked for. */
static void tick(void *arg)
{
	if (cur_stats)
		write_stats(arg);
	rv_state_tick();
}

/* A message about the device's address, printed once a process: a program
 * asks for the device more than once (ibv_get_device_guid and then
 * ibv_open_device, rdma_cm and then verbs), each time with the same cause. */
__attribute__((format(printf, 1, 2))) static void say_once(const char *fmt,
							    ...)
{
	static bool said;
	va_list ap;

	if (said)
		return;
	said = true;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* What a failed bind of UDP port 4791 means, and what to do about it. */
static const char *bind_advice(int e)
{
	if (e == EADDRNOTAVAIL)
		return "it is not an address of this host: set ROCEMU_ADDR to "
		       "one that is, e.g. 127.0.0.1 or any 127.x.y.z";
	if (e == EUSERS)
		return "256 processes share it already: stop one, or set "
		       "ROCEMU_ADDR to another local address";
	return "another user's rocemu, a program that binds it without "
	       "SO_REUSEPORT or an rxe device binds it: stop it, or set "
	       "ROCEMU_ADDR to a free local address";
}

/* The device, bound to ROCEMU_ADDR, else to hint (the address the
 * first rdma_bind_addr or rdma_resolve_addr names), else to 127.0.0.1;
 * made once. */
static int make_device(const char *hint)
{
	const char *addr = getenv("ROCEMU_ADDR");
	struct rocemu_dev_cfg cfg = { .name = "rocemu0", .mtu = mtu_from_env() };
	bool offload;

	if (misbehave_from_env(&cfg.misbehave) || offload_from_env(&offload))
		return -EINVAL;
	addr = addr && *addr ? addr : hint ? hint : "127.0.0.1";
	if (roce_gid_parse(addr, cfg.gid)) {
		say_once("rocemu: ROCEMU_ADDR=%s is not an IP address: set it to "
			 "an address of this host, e.g. ROCEMU_ADDR=127.0.0.1\n",
			 addr);
		return -EINVAL;
	}
	world = rocemu_world_new_udp();
	if (world)
		rocemu_world_set_offload(world, offload);
	dev = world ? rocemu_dev_new(world, &cfg) : NULL;
	owner = getpid();
	if (!dev) {
		int e = errno;
		/* The processes of one user share an address (SO_REUSEPORT,
		 * docs/sharing.md); a socket that does not share it keeps
		 * the device out. */
		say_once("rocemu: cannot bind %s UDP port 4791: %s (%s)\n",
			 addr, strerror(e), bind_advice(e));
		rocemu_world_free(world);
		world = NULL;
		return -e;
	}
	cur_addr = strdup(addr);
	const char *pcap = getenv("ROCEMU_PCAP");
	if (pcap && *pcap &&
	    !refuse_parents("ROCEMU_PCAP", pcap, parent_pcap, "capture",
			    "records")) {
		if (rocemu_world_record(world, pcap))
			fprintf(stderr, "rocemu: cannot write ROCEMU_PCAP=%s\n",
				pcap);
		else
			cur_pcap = strdup(pcap);
	}
	trace_from_env();
	explain_from_env();
	stats_from_env();
	if (rv_state_from_env() || cur_stats)
		rocemu_world_tick(world, tick, NULL, STATS_PERIOD_NS);
	if (!atfork_set) /* a forked child has its parent's handlers */
		atfork_set = !pthread_atfork(fork_prepare, fork_parent,
					     fork_child);
	return rocemu_world_start(world);
}

struct rocemu_dev *rv_dev(void)
{
	pthread_mutex_lock(&once_lock);
	int rc = dev ? 0 : make_device(NULL);
	pthread_mutex_unlock(&once_lock);
	if (rc)
		errno = -rc;
	return rc ? NULL : dev;
}

struct rocemu_world *rv_world(void)
{
	return world;
}

/* ROCEMU_STATS=1: every counter of the device, as rocemu ping --stats
 * prints them, each line led by "rocemu: " as the library's messages are.
 * ROCEMU_STATS=FILE: their last snapshot in FILE. */
static void print_counters(void)
{
	const char *v = getenv("ROCEMU_STATS");

	if (cur_stats) {
		write_stats(NULL);
		return;
	}
	if (!v || strcmp(v, "1"))
		return;
	rocemu_dev_print_counters(dev, stderr, "rocemu: ");
	rocemu_world_print_wire_stats(world, stderr, "rocemu: ");
	rocemu_dev_print_why(dev, stderr, "rocemu: ");
}

/*
 * At exit: stops the progress thread, flushes the capture, then prints
 * the counters, final now. The device is one per process however many
 * contexts are open, so they are printed once. A forked child that exits
 * leaves all of it to its parent: the thread and the counts are the
 * parent's, and the child would print them a second time.
 */
__attribute__((destructor)) static void rv_fini(void)
{
	if (!world || owner != getpid())
		return;
	rocemu_world_stop(world);
	rv_state_at_exit();
	rocemu_world_record(world, NULL);
	if (events) {
		rocemu_world_events(world, NULL, NULL);
		fclose(events);
		events = NULL;
	}
	if (why_printer.f) {
		rocemu_world_explain(world, NULL, NULL);
		rocemu_why_printer_end(&why_printer);
	}
	print_counters();
}

const char *ibv_get_sysfs_path(void); /* verbs_provider_abi.c */

/*
 * The device's sysfs paths under the sysfs root in effect, as rdma-core
 * builds them (<root>/class/infiniband/<name>, <root>/class/
 * infiniband_verbs/<dev_name>): `rocemu run` makes that tree, and a
 * program given SYSFS_PATH looks there. A root too long for the fields
 * keeps the default /sys ones.
 */
static void sysfs_paths(void)
{
	const char *root = ibv_get_sysfs_path();
	char ib[sizeof(the_device.ibdev_path)], uv[sizeof(the_device.dev_path)];
	int a = snprintf(ib, sizeof(ib), "%s/class/infiniband/%s", root,
			 the_device.name);
	int b = snprintf(uv, sizeof(uv), "%s/class/infiniband_verbs/%s", root,
			 the_device.dev_name);

	if (a < 0 || (size_t)a >= sizeof(ib) || b < 0 ||
	    (size_t)b >= sizeof(uv))
		return;
	memcpy(the_device.ibdev_path, ib, sizeof(ib));
	memcpy(the_device.dev_path, uv, sizeof(uv));
}

struct ibv_device **ibv_get_device_list(int *num)
{
	static pthread_once_t paths_once = PTHREAD_ONCE_INIT;
	struct ibv_device **list = calloc(2, sizeof(*list));

	pthread_once(&paths_once, sysfs_paths);
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	list[0] = &the_device;
	if (num)
		*num = 1;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	struct ibv_device_attr a;
	struct rocemu_dev *d = rv_dev();

	(void)device;
	if (!d)
		return 0;
	rocemu_dev_attr(d, &a);
	return a.node_guid;
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct rocemu_dev *d = rv_dev();
	struct rv_context *ctx;

	if (!d)
		return NULL;
	if (!(ctx = calloc(1, sizeof(*ctx)))) {
		errno = ENOMEM;
		return NULL;
	}
	struct ibv_context *c = &ctx->vctx.context;
	c->device = device;
	/* No kernel device file stands behind the context; programs that
	 * dup() it to share the context (rdma-core's test_shared_pd) get a
	 * descriptor, and ibv_import_device then says EOPNOTSUPP. */
	c->cmd_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	c->async_fd = rocemu_dev_async_fd(d);
	c->num_comp_vectors = 1;
	c->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->vctx.sz = sizeof(ctx->vctx);
	ctx->gen = fork_gen;
	rocemu_dev_attr_ex(d, &ctx->attr);
	pthread_mutex_init(&c->mutex, NULL);
	rv_fill_ops(ctx);
	return c;
}

int ibv_close_device(struct ibv_context *context)
{
	pthread_mutex_destroy(&context->mutex);
	if (context->cmd_fd >= 0)
		close(context->cmd_fd);
	free(ctx_of(context));
	return 0;
}

/* From the context's copy, taken at its open: a forked child may ask an
 * inherited context (rdma-core's suite does before allocating device
 * memory in children), and the answer touches nothing of the world. */
int ibv_query_device(struct ibv_context *context,
		     struct ibv_device_attr *device_attr)
{
	*device_attr = rv_context_attr(context)->orig_attr;
	return 0;
}

static void port_attr(struct ibv_port_attr *a)
{
	struct rocemu_dev *d = rv_dev();
	struct ibv_device_attr da;

	memset(a, 0, sizeof(*a));
	rocemu_dev_attr(d, &da);
	a->state = IBV_PORT_ACTIVE;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = mtu_from_env();
	a->gid_tbl_len = ROCEMU_GID_TABLE_LEN;
	a->port_cap_flags = IBV_PORT_CM_SUP;
	a->max_msg_sz = 1u << 31;
	a->pkey_tbl_len = 1;
	a->active_width = 1;		/* 1X */
	a->active_speed = 1;		/* 2.5 Gb/s, as rxe reports */
	a->phys_state = 5;		/* LinkUp */
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	a->max_vl_num = 1;
}

int rv_query_port(struct ibv_context *context, uint8_t port,
		  struct ibv_port_attr *attr, size_t len)
{
	struct ibv_port_attr a;

	if (rv_stale(context))
		return EIO;
	if (port != 1)
		return EINVAL;
	port_attr(&a);
	memcpy(attr, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

/* The exported one takes the older, shorter layout: fill up to there. */
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	return rv_query_port(context, port_num,
			      (struct ibv_port_attr *)(void *)port_attr,
			      offsetof(struct ibv_port_attr, port_cap_flags2));
}

/* An empty entry reads as the zero GID, as rdma-core answers it; an index
 * past the table fails. */
int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
		  union ibv_gid *gid)
{
	struct rocemu_dev *d = rv_stale(context) ? NULL : rv_dev();

	if (port_num != 1 || index < 0 || !d)
		return -1;
	int rc = rocemu_dev_gid_at(d, (unsigned)index, gid->raw);
	if (rc == -ENODATA)
		memset(gid, 0, sizeof(*gid));
	return rc && rc != -ENODATA ? -1 : 0;
}

/*
 * rdma-core's private call (IBVERBS_PRIVATE_34, declared in its driver.h)
 * for the GID type as sysfs spells it: 0 IB/RoCE v1, 1 RoCE v2. ibv_devinfo
 * asks it for each GID; all of rocemu's are RoCEv2; an empty entry has none.
 */
enum { GID_TYPE_SYSFS_ROCE_V2 = 1 };
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, int *type);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, int *type)
{
	struct rocemu_dev *d = rv_stale(context) ? NULL : rv_dev();
	uint8_t gid[16];

	if (port_num != 1 || !d || rocemu_dev_gid_at(d, index, gid))
		return -1;
	*type = GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

/* There is no sysfs behind rocemu: the few files tools read are answered
 * here; anything else is absent. (Declared in rdma-core's driver.h.) */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size)
{
	const char *v = !strcmp(file, "fw_ver") ? "0.1.0"
			: !strcmp(file, "node_desc") ? "rocemu"
			: !strcmp(file, "board_id") ? "rocemu" : NULL;

	(void)dir;
	if (!v || !size)
		return -1;
	snprintf(buf, size, "%s\n", v);
	return (int)strlen(buf);
}

int ibv_fork_init(void)
{
	return 0; /* nothing is pinned: fork is always safe */
}

/* The one P_Key of the port: the default, full membership. */
int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
		   __be16 *pkey)
{
	(void)context;
	if (port_num != 1 || index != 0)
		return -1;
	*pkey = htobe16(0xffff);
	return 0;
}

/* ENODATA for an empty entry, EINVAL for a bad port or an index past the
 * table (the kernel's answers to rdma-core). */
int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
		      uint32_t gid_index, struct ibv_gid_entry *entry,
		      uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e = { .gid_index = gid_index, .port_num = port_num,
				   .gid_type = IBV_GID_TYPE_ROCE_V2 };
	struct rocemu_dev *d = rv_stale(context) ? NULL : rv_dev();

	if (!d)
		return errno;
	if (flags || entry_size < sizeof(e) || port_num != 1)
		return EINVAL;
	int rc = rocemu_dev_gid_at(d, gid_index, e.gid.raw);
	if (rc)
		return -rc;
	*entry = e;
	return 0;
}

/* Every valid GID of the one port; returns how many, or a negative errno:
 * -EINVAL when they do not all fit in max_entries, as the kernel answers. */
ssize_t _ibv_query_gid_table(struct ibv_context *context,
			     struct ibv_gid_entry *entries, size_t max_entries,
			     uint32_t flags, size_t entry_size)
{
	size_t n = 0;

	if (flags || entry_size < sizeof(*entries))
		return -EINVAL;
	for (uint32_t i = 0; i < ROCEMU_GID_TABLE_LEN; i++) {
		struct ibv_gid_entry e;
		int rc = _ibv_query_gid_ex(context, 1, i, &e, 0, sizeof(e));

		if (rc == ENODATA)
			continue;
		if (rc)
			return -rc;
		if (n == max_entries)
			return -EINVAL;
		memcpy((char *)entries + n++ * entry_size, &e, sizeof(e));
	}
	return (ssize_t)n;
}

int ibv_get_device_index(struct ibv_device *device)
{
	(void)device;
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num,
		       __be16 pkey)
{
	(void)context;
	return port_num == 1 && (be16toh(pkey) & 0x7fff) == 0x7fff ? 0 : -1;
}

/* Enhanced connection establishment: no options to offer or accept. */
int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp, (void)ece;
	return EOPNOTSUPP;
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp, (void)ece;
	return EOPNOTSUPP;
}

/* The Ethernet address behind a GID, made as rocemu devices make theirs. */
int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
				struct ibv_ah_attr *attr, uint8_t eth_mac[6],
				uint16_t *vid)
{
	(void)context;
	eth_mac[0] = 0x02;
	eth_mac[1] = 0;
	memcpy(eth_mac + 2, attr->grh.dgid.raw + 12, 4);
	*vid = 0xffff; /* no VLAN */
	return 0;
}

int rocemu_dropin_make_dev(const uint8_t *gid, uint8_t out[16])
{
	char hint[64];
	int rc = 0;

	pthread_mutex_lock(&once_lock);
	if (!dev) {
		const char *a = getenv("ROCEMU_ADDR");
		struct sockaddr_storage ss;
		roce_gid_to_sockaddr(gid ? gid : (const uint8_t[16]){ 0 }, 0, &ss);
		const void *ip = ss.ss_family == AF_INET ?
			(const void *)&((struct sockaddr_in *)&ss)->sin_addr :
			(const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr;
		if ((!a || !*a) && gid &&
		    inet_ntop(ss.ss_family, ip, hint, sizeof(hint)))
			rc = make_device(hint);
		else
			rc = make_device(NULL);
	}
	if (!rc && out)
		memcpy(out, rocemu_dev_gid(dev), 16);
	pthread_mutex_unlock(&once_lock);
	return rc;
}

struct rocemu_dev *rocemu_dropin_dev(const struct ibv_context *context)
{
	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	if (rv_stale(context))
		return NULL;
	return rv_dev();
}
