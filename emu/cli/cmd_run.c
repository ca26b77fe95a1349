/* SPDX-License-Identifier: MIT */
/* rocemu run: a program on the drop-ins, with the device where the ecosystem looks for it (/dev/infiniband, /sys/class/infiniband), in a bubblewrap namespace. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "rocemu/device.h"

static const char usage_text[] =
	"usage: rocemu run [--addr ADDR] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Runs PROGRAM, and everything it starts, on rocemu's device: with\n"
	"the libibverbs.so.1 and librdmacm.so.1 drop-ins first on\n"
	"LD_LIBRARY_PATH (the build tree's when rocemu runs from one, else\n"
	"the installed ones) and ROCEMU_ADDR set, inside a user and mount\n"
	"namespace made by bubblewrap (bwrap) in which the device is where\n"
	"the RDMA ecosystem looks for it: /dev/infiniband/uverbs0 and\n"
	"/dev/infiniband/rdma_cm (inert nodes a program can open), and a\n"
	"/sys/class/infiniband/rocemu0 and /sys/class/infiniband_verbs/uverbs0\n"
	"tree in Linux's formats, made from the device's attributes. UCX,\n"
	"Open MPI and rdma-core's tools then find rocemu0 as they find a\n"
	"kernel device. The rest of the system is seen as it is.\n"
	"\n"
	"Options:\n"
	"  --addr ADDR   the device's address (IPv4 or IPv6), given to the\n"
	"                program as ROCEMU_ADDR; default: ROCEMU_ADDR when\n"
	"                set, else 127.0.0.1 (the drop-in's default)\n"
	"  -h, --help    print this help and exit\n"
	"\n"
	"Environment:\n"
	"  ROCEMU_ADDR   the address when --addr is not given\n"
	"  UCX_UD_VERBS_ETH_DGID_CHECK  set to n unless set already: UCX\n"
	"                1.13's UD receive filter reads a vendor's completion\n"
	"                field (docs/run.md)\n"
	"  TMPDIR        where the sysfs tree is made (removed at the end)\n"
	"\n"
	"Exit status:\n"
	"  N  PROGRAM's exit status; 128+S when a signal S ended it\n"
	"  127  PROGRAM not found\n"
	"  2  a usage error, bwrap missing, or a namespace the system refuses\n"
	"     (the message names the fix)\n"
	"\n"
	"Notes:\n"
	"  SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1 and SIGUSR2 sent to rocemu\n"
	"  run reach PROGRAM; Ctrl-C at a terminal reaches it directly.\n"
	"\n"
	"Examples:\n"
	"  rocemu run -- ibv_devinfo -v\n"
	"  rocemu run --addr 127.0.0.2 -- ucx_info -d\n";

/* A program that is not there, as a shell reports it. */
enum { CLI_NOT_FOUND = 127 };

/* The port's answers, as the drop-in's ibv_query_port gives them: the
 * tree and the verbs must agree (tests/cli/run_tree.sh compares). */
#define PORT_RATE "2.5 Gb/sec (1X SDR)"
#define PORT_CAP_MASK 0x00010000u /* IB_PORT_CM_SUP, as rxe's */

/* A file of the tree: dir/name holding the formatted text. */
static int put(const char *dir, const char *name, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;
	int w = snprintf(path, sizeof(path), "%s/%s", dir, name);

	if (w < 0 || (size_t)w >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "w");
	if (!f)
		return -errno;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	return fclose(f) ? -errno : 0;
}

/* dir/name as a directory (its parent exists). */
static int mkdir_in(char *out, size_t cap, const char *dir, const char *name)
{
	int w = snprintf(out, cap, "%s/%s", dir, name);

	if (w < 0 || (size_t)w >= cap)
		return -ENAMETOOLONG;
	return mkdir(out, 0755) && errno != EEXIST ? -errno : 0;
}

/* The kernel's %pI6: eight groups of four hex digits, nothing shortened. */
static void gid_text(const uint8_t g[16], char out[40])
{
	for (int i = 0; i < 8; i++)
		sprintf(out + 5 * i, "%02x%02x%s", g[2 * i], g[2 * i + 1],
			i < 7 ? ":" : "");
}

/* A GUID as sysfs shows it (network order, four groups of four). */
static void guid_text(__be64 guid, char out[20])
{
	const uint8_t *b = (const uint8_t *)&guid;

	snprintf(out, 20, "%02x%02x:%02x%02x:%02x%02x:%02x%02x", b[0], b[1],
		 b[2], b[3], b[4], b[5], b[6], b[7]);
}

/* The interface that holds addr (gid form), as the kernel names a GID's
 * netdev: an exact address first, else the IPv4 subnet (127.0.0.130 is
 * lo's, by 127.0.0.0/8). "lo" when none does. */
static void netdev_of(const uint8_t gid[16], char out[IF_NAMESIZE])
{
	static const uint8_t v4pre[12] = { [10] = 0xff, [11] = 0xff };
	bool v4 = !memcmp(gid, v4pre, 12);
	struct ifaddrs *ifs, *i;
	bool exact = false;

	snprintf(out, IF_NAMESIZE, "lo");
	if (getifaddrs(&ifs))
		return;
	for (i = ifs; i && !exact; i = i->ifa_next) {
		const struct sockaddr *a = i->ifa_addr, *m = i->ifa_netmask;

		if (!a)
			continue;
		if (v4 && a->sa_family == AF_INET && m) {
			uint32_t ip, ia, im;

			memcpy(&ip, gid + 12, 4);
			ia = ((const struct sockaddr_in *)(const void *)a)
				     ->sin_addr.s_addr;
			im = ((const struct sockaddr_in *)(const void *)m)
				     ->sin_addr.s_addr;
			exact = ip == ia;
			if (exact || (ip & im) == (ia & im))
				snprintf(out, IF_NAMESIZE, "%s", i->ifa_name);
		} else if (!v4 && a->sa_family == AF_INET6 &&
			   !memcmp(&((const struct sockaddr_in6 *)(const void *)a)
					    ->sin6_addr,
				   gid, 16)) {
			exact = true;
			snprintf(out, IF_NAMESIZE, "%s", i->ifa_name);
		}
	}
	freeifaddrs(ifs);
}

/* ports/1 of the device: state, rate, LIDs, GIDs and their attributes,
 * the P_Key table, as Linux's drivers/infiniband/core/sysfs.c prints them. */
static int write_port(const char *devdir, const struct rocemu_dev *d,
		      const char *ndev)
{
	char port[PATH_MAX], sub[PATH_MAX], attrs[PATH_MAX], types[PATH_MAX],
		ndevs[PATH_MAX], name[16], txt[40];
	int rc;

	if ((rc = mkdir_in(sub, sizeof(sub), devdir, "ports")) ||
	    (rc = mkdir_in(port, sizeof(port), sub, "1")))
		return rc;
	if ((rc = put(port, "state", "4: ACTIVE\n")) ||
	    (rc = put(port, "phys_state", "5: LinkUp\n")) ||
	    (rc = put(port, "link_layer", "Ethernet\n")) ||
	    (rc = put(port, "rate", PORT_RATE "\n")) ||
	    (rc = put(port, "lid", "0x0\n")) ||
	    (rc = put(port, "sm_lid", "0x0\n")) ||
	    (rc = put(port, "sm_sl", "0\n")) ||
	    (rc = put(port, "lid_mask_count", "0\n")) ||
	    (rc = put(port, "cap_mask", "0x%08x\n", PORT_CAP_MASK)))
		return rc;
	if ((rc = mkdir_in(sub, sizeof(sub), port, "pkeys")) ||
	    (rc = put(sub, "0", "0xffff\n")))
		return rc;
	if ((rc = mkdir_in(sub, sizeof(sub), port, "gids")) ||
	    (rc = mkdir_in(attrs, sizeof(attrs), port, "gid_attrs")) ||
	    (rc = mkdir_in(types, sizeof(types), attrs, "types")) ||
	    (rc = mkdir_in(ndevs, sizeof(ndevs), attrs, "ndevs")))
		return rc;
	for (unsigned i = 0; i < ROCEMU_GID_TABLE_LEN; i++) {
		uint8_t g[16] = { 0 };
		/* An empty entry reads as zeros; its type and netdev files
		 * are absent (Linux's fail to read, EINVAL). */
		bool valid = !rocemu_dev_gid_at(d, i, g);

		snprintf(name, sizeof(name), "%u", i);
		gid_text(g, txt);
		if ((rc = put(sub, name, "%s\n", txt)))
			return rc;
		if (valid && ((rc = put(types, name, "RoCE v2\n")) ||
			      (rc = put(ndevs, name, "%s\n", ndev))))
			return rc;
	}
	return 0;
}

/*
 * A device at gid to read the attributes from, and its world. On an IPv6
 * address the device is made on the real network for a moment, as the
 * program's will be: GID 0 is then the interface's link-local address,
 * which only that world knows. Elsewhere, or when the address is taken or
 * not the host's, a world of its own with no socket (GID 0 made from the
 * MAC, as the program's device makes it on IPv4). NULL when neither can
 * be made.
 */
static struct rocemu_dev *probe_dev(const uint8_t gid[16],
				    struct rocemu_world **wp)
{
	static const uint8_t v4pre[12] = { [10] = 0xff, [11] = 0xff };
	struct rocemu_dev_cfg cfg = { .name = "rocemu0", .mtu = IBV_MTU_1024 };
	struct rocemu_world *w = NULL;
	struct rocemu_dev *d = NULL;

	memcpy(cfg.gid, gid, 16);
	if (memcmp(gid, v4pre, 12) && (w = rocemu_world_new_udp())) {
		rocemu_world_set_offload(w, false);
		d = rocemu_dev_new(w, &cfg);
		if (!d)
			rocemu_world_free(w);
	}
	if (!d && (w = rocemu_world_new(1))) {
		d = rocemu_dev_new(w, &cfg);
		if (!d)
			rocemu_world_free(w);
	}
	*wp = d ? w : NULL;
	return d;
}

/*
 * The tree under root: class/infiniband/rocemu0 and
 * class/infiniband_verbs/{abi_version,uverbs0}, from a device made at gid
 * (probe_dev). Returns 0 or a negative errno.
 */
static int write_tree(const char *root, const uint8_t gid[16])
{
	char cls[PATH_MAX], ib[PATH_MAX], dev[PATH_MAX], uv[PATH_MAX],
		u0[PATH_MAX], guid[20], ndev[IF_NAMESIZE], pci[PATH_MAX],
		net[PATH_MAX], nd[PATH_MAX];
	struct ibv_device_attr a;
	struct rocemu_world *w;
	struct rocemu_dev *d = probe_dev(gid, &w);
	int rc;

	if (!d)
		return -ENOMEM;
	rocemu_dev_attr(d, &a);
	netdev_of(gid, ndev);
	if ((rc = mkdir_in(cls, sizeof(cls), root, "class")) ||
	    (rc = mkdir_in(ib, sizeof(ib), cls, "infiniband")) ||
	    (rc = mkdir_in(dev, sizeof(dev), ib, "rocemu0")))
		goto out;
	guid_text(a.node_guid, guid);
	if ((rc = put(dev, "node_guid", "%s\n", guid)))
		goto out;
	guid_text(a.sys_image_guid, guid);
	/* node_type 1: CA; node_desc and board_id as the drop-in's
	 * ibv_read_sysfs_file answers; parent: rxe's netdev file. */
	if ((rc = put(dev, "sys_image_guid", "%s\n", guid)) ||
	    (rc = put(dev, "node_type", "1: CA\n")) ||
	    (rc = put(dev, "node_desc", "rocemu\n")) ||
	    (rc = put(dev, "fw_ver", "%s\n", a.fw_ver)) ||
	    (rc = put(dev, "hw_rev", "0x%x\n", a.hw_ver)) ||
	    (rc = put(dev, "board_id", "rocemu\n")) ||
	    (rc = put(dev, "parent", "%s\n", ndev)) ||
	    (rc = write_port(dev, d, ndev)))
		goto out;
	/* The netdev as a NIC's driver shows it (device/net/<netdev>, port
	 * 1 its dev_port 0): rdma-core's rdma_cm tests find the device's IP
	 * there, and skip without it (as on rxe, which has no device). */
	if ((rc = mkdir_in(pci, sizeof(pci), dev, "device")) ||
	    (rc = mkdir_in(net, sizeof(net), pci, "net")) ||
	    (rc = mkdir_in(nd, sizeof(nd), net, ndev)) ||
	    (rc = put(nd, "dev_port", "0\n")))
		goto out;
	/* uverbs ABI 6 (the kernel's class file), the device's own 1. */
	if ((rc = mkdir_in(uv, sizeof(uv), cls, "infiniband_verbs")) ||
	    (rc = put(uv, "abi_version", "6\n")) ||
	    (rc = mkdir_in(u0, sizeof(u0), uv, "uverbs0")) ||
	    (rc = put(u0, "ibdev", "rocemu0\n")) ||
	    (rc = put(u0, "abi_version", "1\n")) ||
	    (rc = put(u0, "dev", "231:192\n")))
		goto out;
out:
	rocemu_dev_free(d);
	rocemu_world_free(w);
	return rc;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void remove_tree(const char *root)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The argument list bwrap is given, grown as it is built. */
struct args {
	char **v;
	size_t n, cap;
	bool oom;
};

static void add(struct args *a, const char *s)
{
	if (a->oom)
		return;
	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		char **v = realloc(a->v, cap * sizeof(*v));

		if (!v) {
			a->oom = true;
			return;
		}
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n] = strdup(s);
	a->oom = !a->v[a->n];
	a->v[++a->n] = NULL;
}

static void add3(struct args *a, const char *x, const char *y, const char *z)
{
	add(a, x);
	add(a, y);
	add(a, z);
}

static void free_args(struct args *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

/* Whether name is one of the RDMA classes or nodes the namespace shows
 * as rocemu's own (the host's, if any, are hidden: the drop-in lists
 * only rocemu0). */
static bool rdma_entry(const char *name)
{
	return !strcmp(name, "infiniband") ||
	       !strcmp(name, "infiniband_verbs") ||
	       !strcmp(name, "infiniband_cm") || !strcmp(name, "infiniband_mad");
}

/*
 * A tmpfs over dir holding each of the host's entries of dir again (bound,
 * device nodes usable; symlinks as symlinks), the RDMA ones left out: so
 * the namespace can add its own beside them without touching the host's
 * /dev or sysfs.
 */
static void add_shadow(struct args *a, const char *dir, bool dev)
{
	char src[PATH_MAX], tgt[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);

	add(a, "--tmpfs");
	add(a, dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat st;
		ssize_t l;

		if (e->d_name[0] == '.' || rdma_entry(e->d_name))
			continue;
		snprintf(src, sizeof(src), "%s/%s", dir, e->d_name);
		if (lstat(src, &st))
			continue;
		if (S_ISLNK(st.st_mode)) {
			l = readlink(src, tgt, sizeof(tgt) - 1);
			if (l <= 0)
				continue;
			tgt[l] = 0;
			add3(a, "--symlink", tgt, src);
		} else {
			add3(a, dev ? "--dev-bind" : "--bind", src, src);
		}
	}
	closedir(d);
}

/* bwrap's arguments: the shadows of /dev and /sys/class with rocemu's
 * nodes and tree in them, then the program. */
static void build_args(struct args *a, const char *bwrap, const char *tree,
		       int info_fd, char **prog)
{
	char path[PATH_MAX], fd[16];

	add(a, bwrap);
	add3(a, "--dev-bind", "/", "/");
	add_shadow(a, "/dev", true);
	add(a, "--dir");
	add(a, "/dev/infiniband");
	/* Inert: UCX opens the node to see that it may (uverbs0), librdmacm's
	 * users stat it (rdma_cm); the drop-ins never read them. */
	add3(a, "--dev-bind", "/dev/null", "/dev/infiniband/uverbs0");
	add3(a, "--dev-bind", "/dev/null", "/dev/infiniband/rdma_cm");
	add_shadow(a, "/sys/class", false);
	snprintf(path, sizeof(path), "%s/class/infiniband", tree);
	add3(a, "--ro-bind", path, "/sys/class/infiniband");
	snprintf(path, sizeof(path), "%s/class/infiniband_verbs", tree);
	add3(a, "--ro-bind", path, "/sys/class/infiniband_verbs");
	snprintf(fd, sizeof(fd), "%d", info_fd);
	add(a, "--info-fd");
	add(a, fd);
	add(a, "--");
	for (; *prog; prog++)
		add(a, *prog);
}

/* name's path from PATH (name itself when it has a slash), into out;
 * false when there is no executable file of that name. */
static bool find_in_path(const char *name, char *out, size_t cap)
{
	const char *p = getenv("PATH");

	if (strchr(name, '/')) {
		int w = snprintf(out, cap, "%s", name);

		return w > 0 && (size_t)w < cap && !access(out, X_OK);
	}
	while (p && *p) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int w = snprintf(out, cap, "%.*s/%s", (int)len, p, name);

		if (len && w > 0 && (size_t)w < cap && !access(out, X_OK))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* The directory holding the drop-ins: beside a build tree's binary
 * (build/bin/rocemu -> build/lib), else the installed layout's
 * (<prefix>/bin/rocemu -> <prefix>/lib/rocemu). */
static bool find_libdir(char *out, size_t cap)
{
	static const char *const rel[] = { "../lib", "../lib/rocemu" };
	char exe[PATH_MAX], probe[PATH_MAX + 32];
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (l <= 0)
		return false;
	exe[l] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = 0;
	for (size_t i = 0; i < 2; i++) {
		snprintf(probe, sizeof(probe), "%s/%s/libibverbs.so.1", exe,
			 rel[i]);
		if (access(probe, R_OK))
			continue;
		snprintf(probe, sizeof(probe), "%s/%s", exe, rel[i]);
		return realpath(probe, out) && strlen(out) < cap;
	}
	return false;
}

/* The sysctl file's first number, or -1 when it cannot be read. */
static long sysctl_num(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Why bwrap could not make the namespace, and the command that fixes it. */
static void explain_refusal(void)
{
	fprintf(stderr, "rocemu run: bubblewrap could not make the user and "
			"mount namespace (its message is above)\n");
	if (sysctl_num("/proc/sys/kernel/unprivileged_userns_clone") == 0)
		fprintf(stderr, "rocemu run: unprivileged user namespaces are "
				"off; as root: sysctl -w "
				"kernel.unprivileged_userns_clone=1\n");
	else if (sysctl_num("/proc/sys/user/max_user_namespaces") == 0)
		fprintf(stderr, "rocemu run: user namespaces are limited to 0; "
				"as root: sysctl -w "
				"user.max_user_namespaces=10000\n");
	else if (sysctl_num("/proc/sys/kernel/"
			    "apparmor_restrict_unprivileged_userns") == 1)
		fprintf(stderr, "rocemu run: AppArmor refuses unprivileged user "
				"namespaces; as root: sysctl -w "
				"kernel.apparmor_restrict_unprivileged_userns=0\n");
	else
		fprintf(stderr, "rocemu run: if user namespaces are refused, as "
				"root: sysctl -w kernel.unprivileged_userns_clone=1 "
				"(Debian) or sysctl -w user.max_user_namespaces="
				"10000; run as root otherwise\n");
}

static const int fwd_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
				SIGUSR2 };

/*
 * The signals this process takes through a signalfd rather than handlers
 * (they are blocked: none interrupts anything, and none is lost while the
 * program's pid is not known yet): those it passes on, and SIGCHLD. The
 * old mask goes to *old, for the children to have again.
 */
static int signals_to_fd(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(fwd_sigs) / sizeof(fwd_sigs[0]); i++)
		sigaddset(&set, fwd_sigs[i]);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, old))
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC);
}

/* What the wait for the program knows. */
struct waiter {
	pid_t bwrap, prog;	/* prog: 0 until bwrap's --info-fd names it */
	int info_fd;		/* -1 once read whole */
	char info[512];
	size_t info_len;
	uint64_t pending;	/* signals sent before prog was known */
	bool done;
	int code;
};

/* More of bwrap's --info-fd JSON; at its end (or bwrap's), the program's
 * pid from "child-pid": N, and the signals held for it passed on. */
static void take_info(struct waiter *w)
{
	ssize_t r = read(w->info_fd, w->info + w->info_len,
			 sizeof(w->info) - 1 - w->info_len);
	const char *k;

	if (r < 0 && errno == EINTR)
		return;
	if (r > 0) {
		w->info_len += (size_t)r;
		w->info[w->info_len] = 0;
		if (!strchr(w->info, '}') && w->info_len < sizeof(w->info) - 1)
			return;
	}
	close(w->info_fd);
	w->info_fd = -1;
	k = strstr(w->info, "\"child-pid\"");
	if (k && (k = strchr(k, ':')))
		w->prog = (pid_t)strtol(k + 1, NULL, 10);
	for (int sig = 1; sig < 64 && w->prog > 0; sig++)
		if (w->pending & (1ull << sig))
			kill(w->prog, sig);
	w->pending = 0;
}

/* A wait status as a shell reports it: the code, or 128 + the signal. */
static int status_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * Reaps what has ended. bwrap's monitor waits for the program and exits
 * with its code; when the monitor dies first (a terminal's Ctrl-C reaches
 * it too) the program, orphaned, comes to this process (a subreaper),
 * which then has its status itself. Other orphans are reaped and ignored.
 */
static void reap(struct waiter *w)
{
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if ((p == w->bwrap && (WIFEXITED(st) || w->prog <= 0)) ||
		    (p == w->prog && w->prog > 0)) {
			w->done = true;
			w->code = status_code(st);
		}
	}
	if (p < 0 && errno == ECHILD && !w->done) {
		w->done = true;
		w->code = CLI_USAGE;
	}
}

/* One signal from the signalfd: SIGCHLD reaps; a signal some process sent
 * (kill, sigqueue) goes on to the program, held until its pid is known. One
 * the kernel made (Ctrl-C at a terminal: SI_KERNEL) reached the program's
 * process group, the program included, already. */
static void take_signal(struct waiter *w, int sfd)
{
	struct signalfd_siginfo si;

	if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return;
	if (si.ssi_signo == SIGCHLD) {
		reap(w);
		return;
	}
	if (si.ssi_code == SI_KERNEL || si.ssi_signo >= 64)
		return;
	if (w->prog > 0)
		kill(w->prog, (int)si.ssi_signo);
	else
		w->pending |= 1ull << si.ssi_signo;
}

/* Waits for bwrap's program (signals and info through poll, never a
 * handler): its status as a shell reports it. */
static int wait_program(struct waiter *w, int sfd)
{
	reap(w);	/* a SIGCHLD before the loop is in the fd too */
	while (!w->done) {
		struct pollfd p[2] = { { .fd = sfd, .events = POLLIN },
				       { .fd = w->info_fd, .events = POLLIN } };

		if (poll(p, w->info_fd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return CLI_USAGE;
		}
		if (w->info_fd >= 0 && p[1].revents)
			take_info(w);
		if (p[0].revents)
			take_signal(w, sfd);
	}
	if (w->info_fd >= 0)
		close(w->info_fd);
	return w->code;
}

/* Runs bwrap with argv, the program given the environment already set and
 * old, the signal mask before signals_to_fd. probe: the run that only tests
 * the namespace (its output hidden). Returns the program's code; -1 when
 * bwrap could not be started. */
static int run_bwrap(char **argv, int info_fd[2], bool probe, int sfd,
		     const sigset_t *old)
{
	struct waiter w = { .info_fd = info_fd[0] };

	w.bwrap = fork();
	if (w.bwrap < 0)
		return -1;
	if (!w.bwrap) {
		close(info_fd[0]);
		if (probe) {
			int null = open("/dev/null", O_WRONLY);

			if (null >= 0)
				dup2(null, STDOUT_FILENO);
		}
		sigprocmask(SIG_SETMASK, old, NULL);
		execv(argv[0], argv);
		_exit(127);
	}
	close(info_fd[1]);
	return wait_program(&w, sfd);
}

/* The device's address (--addr, else ROCEMU_ADDR, else the drop-in's
 * default) as a GID; false when it is no address. */
static bool parse_addr(const char *addr, uint8_t gid[16])
{
	struct in_addr a4;

	memset(gid, 0, 16);
	if (inet_pton(AF_INET, addr, &a4) == 1) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &a4, 4);
		return true;
	}
	return inet_pton(AF_INET6, addr, gid) == 1;
}

/* The environment the program gets: the drop-ins first, its address, and
 * UCX's UD filter off unless the user chose (docs/run.md). */
static int set_env(const char *libdir, const char *addr)
{
	const char *old = getenv("LD_LIBRARY_PATH");
	char *v;
	int rc;

	if (asprintf(&v, "%s%s%s", libdir, old && *old ? ":" : "",
		     old ? old : "") < 0)
		return -ENOMEM;
	rc = setenv("LD_LIBRARY_PATH", v, 1);
	free(v);
	if (rc || setenv("ROCEMU_ADDR", addr, 1) ||
	    setenv("UCX_UD_VERBS_ETH_DGID_CHECK", "n", 0))
		return -errno;
	return 0;
}

/* One bwrap run over the tree: the probe (our own --version in the
 * namespace) or the program. */
static int one_run(const char *bwrap, const char *tree, char **prog,
		   bool probe, int sfd, const sigset_t *old)
{
	struct args a = { 0 };
	int fds[2], rc;

	if (pipe(fds))
		return -1;
	build_args(&a, bwrap, tree, fds[1], prog);
	if (a.oom) {
		close(fds[0]);
		close(fds[1]);
		free_args(&a);
		return -1;
	}
	rc = run_bwrap(a.v, fds, probe, sfd, old);
	free_args(&a);
	return rc;
}

static int run_in_tree(const char *bwrap, const char *tree, char **prog,
		       int sfd, const sigset_t *old)
{
	char exe[PATH_MAX], ver[] = "--version";
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *probe[] = { exe, ver, NULL };
	int rc;

	if (l <= 0) {
		fprintf(stderr, "rocemu run: cannot find its own binary\n");
		return CLI_USAGE;
	}
	exe[l] = 0;
	/* A namespace bwrap cannot make fails here, before the program
	 * starts: never a program run half set up. */
	rc = one_run(bwrap, tree, probe, true, sfd, old);
	if (rc) {
		if (rc < 0)
			fprintf(stderr, "rocemu run: cannot start %s: %s\n",
				bwrap, strerror(errno));
		else
			explain_refusal();
		return CLI_USAGE;
	}
	rc = one_run(bwrap, tree, prog, false, sfd, old);
	if (rc < 0) {
		fprintf(stderr, "rocemu run: cannot start %s: %s\n", bwrap,
			strerror(errno));
		return CLI_USAGE;
	}
	return rc;
}

/* The options: *addr set by --addr; returns the index of PROGRAM, or
 * -CLI_USAGE (the reason on stderr) or -1 for --help (printed). */
static int parse_args(int argc, char **argv, const char **addr)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return -1;
		} else if (!strcmp(argv[i], "--addr")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "rocemu run: --addr needs an "
						"address\n%s", usage_text);
				return -CLI_USAGE;
			}
			*addr = argv[++i];
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "rocemu run: unknown option '%s'\n%s",
				argv[i], usage_text);
			return -CLI_USAGE;
		} else {
			break;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "rocemu run: no program given\n%s", usage_text);
		return -CLI_USAGE;
	}
	return i;
}

/* What the run needs from the host: the program (the namespace sees the
 * host's file system and PATH: one not found here is not found there
 * either, 127 as a shell says), bwrap and the drop-ins. Returns 0 or the
 * status to exit with, the reason on stderr. */
static int find_tools(const char *name, char *bwrap, char *libdir)
{
	char prog[PATH_MAX];

	if (!find_in_path(name, prog, sizeof(prog))) {
		fprintf(stderr, "rocemu run: %s: no such program\n", name);
		return CLI_NOT_FOUND;
	}
	if (!find_in_path("bwrap", bwrap, PATH_MAX)) {
		fprintf(stderr, "rocemu run: bwrap (bubblewrap) is not on PATH: "
				"it makes the namespace the device is shown "
				"in; install it: apt-get install bubblewrap\n");
		return CLI_USAGE;
	}
	if (!find_libdir(libdir, PATH_MAX)) {
		fprintf(stderr, "rocemu run: no libibverbs.so.1 drop-in beside "
				"this rocemu (../lib or ../lib/rocemu)\n");
		return CLI_USAGE;
	}
	return 0;
}

/* The tree in a new folder of $TMPDIR (into tree) and the program's
 * environment. Returns 0 or CLI_USAGE, the reason on stderr, nothing
 * left behind. */
static int make_tree(char *tree, const uint8_t gid[16], const char *libdir,
		     const char *addr)
{
	const char *tmp = getenv("TMPDIR");
	int rc;

	snprintf(tree, PATH_MAX, "%s/rocemu-run.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tree)) {
		fprintf(stderr, "rocemu run: cannot make %s: %s\n", tree,
			strerror(errno));
		return CLI_USAGE;
	}
	rc = write_tree(tree, gid);
	if (!rc)
		rc = set_env(libdir, addr);
	if (rc) {
		fprintf(stderr, "rocemu run: cannot make the sysfs tree in %s: "
				"%s\n", tree, strerror(-rc));
		remove_tree(tree);
		return CLI_USAGE;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	const char *addr = getenv("ROCEMU_ADDR");
	char bwrap[PATH_MAX], libdir[PATH_MAX], tree[PATH_MAX];
	uint8_t gid[16];
	sigset_t old;
	int i, rc, sfd;

	i = parse_args(argc, argv, &addr);
	if (i < 0)
		return i == -1 ? CLI_OK : -i;
	if (!addr || !*addr)
		addr = "127.0.0.1";
	if (!parse_addr(addr, gid)) {
		fprintf(stderr, "rocemu run: '%s' is no IPv4 or IPv6 address\n",
			addr);
		return CLI_USAGE;
	}
	if ((rc = find_tools(argv[i], bwrap, libdir)) ||
	    (rc = make_tree(tree, gid, libdir, addr)))
		return rc;
	/* Orphans of the program come here, so the program is waited for
	 * even when bwrap's monitor is gone. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	sfd = signals_to_fd(&old);
	if (sfd < 0) {
		fprintf(stderr, "rocemu run: signalfd: %s\n", strerror(errno));
		remove_tree(tree);
		return CLI_USAGE;
	}
	rc = run_in_tree(bwrap, tree, argv + i, sfd, &old);
	close(sfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	remove_tree(tree);
	return rc;
}
