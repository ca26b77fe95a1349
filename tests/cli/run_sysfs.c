// SPDX-License-Identifier: MIT
/*
 * Where the libibverbs.so.1 in use says the device's sysfs files are:
 * ibv_get_sysfs_path() and the device's ibdev_path and dev_path must be
 * ROOT (the first argument), ROOT/class/infiniband/rocemu0 and
 * ROOT/class/infiniband_verbs/uverbs0; with --tree, the files must exist
 * there and agree with the verbs (node_guid, the uverbs node's ibdev).
 * Exits 0 when all hold, 1 with each difference on stderr.
 * usage: run_sysfs ROOT [--tree]
 */
#include <infiniband/verbs.h>
#include <endian.h>
#include <stdio.h>
#include <string.h>

/* rdma-core's, declared in its driver.h, which Debian does not ship. */
const char *ibv_get_sysfs_path(void);

static int fails;

static void same(const char *what, const char *got, const char *want)
{
	if (!got || strcmp(got, want)) {
		fprintf(stderr, "run_sysfs: %s is '%s', wanted '%s'\n", what,
			got ? got : "(null)", want);
		fails++;
	}
}

/* The first line of dir/name, or "" when it cannot be read. */
static const char *first_line(const char *dir, const char *name, char *buf,
			      size_t cap)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	buf[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return buf;
	if (!fgets(buf, (int)cap, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

int main(int argc, char **argv)
{
	char want[4096], buf[256], guid[32];
	struct ibv_device **list;
	uint64_t g;
	int n;

	if (argc < 2) {
		fprintf(stderr, "usage: run_sysfs ROOT [--tree]\n");
		return 2;
	}
	same("ibv_get_sysfs_path()", ibv_get_sysfs_path(), argv[1]);
	list = ibv_get_device_list(&n);
	if (!list || n != 1) {
		fprintf(stderr, "run_sysfs: %d devices, wanted 1\n", n);
		return 1;
	}
	snprintf(want, sizeof(want), "%s/class/infiniband/rocemu0", argv[1]);
	same("ibdev_path", list[0]->ibdev_path, want);
	snprintf(want, sizeof(want), "%s/class/infiniband_verbs/uverbs0",
		 argv[1]);
	same("dev_path", list[0]->dev_path, want);
	if (argc > 2 && !strcmp(argv[2], "--tree")) {
		g = be64toh(ibv_get_device_guid(list[0]));
		snprintf(guid, sizeof(guid), "%04x:%04x:%04x:%04x",
			 (unsigned)(g >> 48) & 0xffff,
			 (unsigned)(g >> 32) & 0xffff,
			 (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
		same("ibdev_path/node_guid",
		     first_line(list[0]->ibdev_path, "node_guid", buf,
				sizeof(buf)),
		     guid);
		same("dev_path/ibdev",
		     first_line(list[0]->dev_path, "ibdev", buf, sizeof(buf)),
		     ibv_get_device_name(list[0]));
	}
	ibv_free_device_list(list);
	return fails ? 1 : 0;
}
