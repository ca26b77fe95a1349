#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu run makes the device visible where programs look for it: inert
# /dev/infiniband nodes a program opens read-write, and a sysfs tree in
# Linux's formats whose values agree with the verbs outside run (ibv_devinfo
# -v on the drop-in at the same address) and with what this test computes
# from the address (the GIDs); ibv_get_sysfs_path and the device's paths
# lead to it (tests/cli/run_sysfs.c). The tree is gone afterwards.
# usage: tests/cli/run_tree.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: run_tree.sh BUILD_DIR}" && pwd)
work=$build/run_tree
rm -rf "$work" && mkdir -p "$work/tmp"
. "$(dirname "$0")/../lib/cli_lib.sh"
. "$(dirname "$0")/../lib/verbs_env.sh"
rocemu=$build/bin/rocemu
addr=127.0.0.132
export TMPDIR=$work/tmp

# What the test knows without rocemu run: the address's GIDs, computed
# here (GID 1 ::ffff:ADDR; GID 0 fe80::, EUI-64 of the MAC 02:00:ADDR)
# and as the verbs give them.
IFS=. read -r a b c d <<<"$addr"
gid1=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")
gid0=$(printf 'fe80:0000:0000:0000:0000:%02xff:fe%02x:%02x%02x' "$a" "$b" "$c" "$d")
ROCEMU_ADDR=$addr ibv_devinfo -v >"$work/devinfo" 2>&1 && ok || bad "ibv_devinfo -v outside run"
field() { awk -v k="$1:" '$1 == k { print $2; exit }' "$work/devinfo"; }
exploded() { python3 -c 'import ipaddress,sys; print(ipaddress.ip_address(sys.argv[1]).exploded)' "$1"; }
node_guid=$(field node_guid) sys_guid=$(field sys_image_guid) fw=$(field fw_ver)
v_gid0=$(exploded "$(grep -o 'GID\[  0\]:[[:space:]]*[^,]*' "$work/devinfo" | awk '{print $NF}')")
v_gid1=$(exploded "$(grep -o 'GID\[  1\]:[[:space:]]*[^,]*' "$work/devinfo" | awk '{print $NF}')")
[ "$v_gid0" = "$gid0" ] && [ "$v_gid1" = "$gid1" ] && ok ||
	bad "the verbs' GIDs $v_gid0 $v_gid1 are not the address's $gid0 $gid1"
cap=$(field port_cap_flags) width=$(awk '$1 == "active_width:" { print $2; exit }' "$work/devinfo")
speed=$(awk '$1 == "active_speed:" { print $2; exit }' "$work/devinfo")
[ -n "$node_guid" ] && [ -n "$cap" ] && ok || bad "no node_guid or port_cap_flags in ibv_devinfo -v"

# The tree and the nodes, from inside.
cat >"$work/inside.sh" <<'IN'
d=/sys/class/infiniband/rocemu0 p=/sys/class/infiniband/rocemu0/ports/1
for f in node_guid sys_image_guid node_type node_desc fw_ver parent; do
	echo "$f=$(cat $d/$f)"
done
for f in state phys_state link_layer rate lid sm_lid lid_mask_count \
	 cap_mask gids/0 gids/1 gids/2 gids/1023 gid_attrs/types/0 \
	 gid_attrs/types/1 gid_attrs/ndevs/0 gid_attrs/ndevs/1 pkeys/0; do
	echo "$f=$(cat $p/$f)"
done
echo "gids=$(ls $p/gids | wc -l)"
echo "types2=$(cat $p/gid_attrs/types/2 2>/dev/null || echo none)"
u=/sys/class/infiniband_verbs
echo "abi=$(cat $u/abi_version) ibdev=$(cat $u/uverbs0/ibdev) uabi=$(cat $u/uverbs0/abi_version)"
for n in uverbs0 rdma_cm; do
	if [ -c /dev/infiniband/$n ] && exec 3<>/dev/infiniband/$n; then
		echo "$n=rw"; exec 3>&-
	fi
done
[ -e /sys/class/net/lo ] && echo "net=kept"
[ -e /dev/null ] && [ -c /dev/null ] && echo "devnull=kept"
IN
# (The shell without the sanitizer's runtime verbs_env.sh preloads: dash
# does not start under ThreadSanitizer's, and it reads only files.)
"$rocemu" run --addr "$addr" -- env -u LD_PRELOAD sh "$work/inside.sh" >"$work/tree" 2>"$work/err" && ok ||
	{ bad "rocemu run -- sh inside.sh failed"; cat "$work/err"; }
want() {
	if grep -qxF -- "$1" "$work/tree"; then ok; else
		bad "inside run: wanted '$1', got '$(grep -F "${1%%=*}=" "$work/tree" | head -n 1)'"
	fi
}
want "node_guid=$node_guid"
want "sys_image_guid=$sys_guid"
want "fw_ver=$fw"
want "node_type=1: CA"
want "node_desc=rocemu"
want "parent=lo"
want "state=4: ACTIVE"
want "phys_state=5: LinkUp"
want "link_layer=Ethernet"
[ "$width $speed" = "1X 2.5" ] && want "rate=2.5 Gb/sec (1X SDR)" ||
	bad "the verbs' width and speed changed ($width $speed): the rate here needs its new form"
want "lid=0x0"
want "sm_lid=0x0"
want "lid_mask_count=0"
want "cap_mask=$cap"
want "gids/0=$gid0"
want "gids/1=$gid1"
want "gids/2=0000:0000:0000:0000:0000:0000:0000:0000"
want "gids/1023=0000:0000:0000:0000:0000:0000:0000:0000"
want "gids=1024"
want "gid_attrs/types/0=RoCE v2"
want "gid_attrs/types/1=RoCE v2"
want "gid_attrs/ndevs/0=lo"
want "gid_attrs/ndevs/1=lo"
want "types2=none"
want "pkeys/0=0xffff"
want "abi=6 ibdev=rocemu0 uabi=1"
want "uverbs0=rw"
want "rdma_cm=rw"
want "net=kept"
want "devnull=kept"

# ibv_get_sysfs_path and the device's paths: under run, the tree; outside,
# rdma-core's SYSFS_PATH rule (trailing slashes dropped).
cc -O1 -Wall -Werror -o "$work/run_sysfs" "$(dirname "$0")/run_sysfs.c" -libverbs 2>"$work/cc.err" && ok ||
	{ bad "cc run_sysfs.c"; cat "$work/cc.err"; }
"$rocemu" run --addr "$addr" -- "$work/run_sysfs" /sys --tree >"$work/sysfs_in" 2>&1 && ok ||
	{ bad "run_sysfs /sys --tree inside run"; cat "$work/sysfs_in"; }
SYSFS_PATH=$work/alt// ROCEMU_ADDR=$addr "$work/run_sysfs" "$work/alt" >"$work/sysfs_out" 2>&1 && ok ||
	{ bad "run_sysfs with SYSFS_PATH=$work/alt//"; cat "$work/sysfs_out"; }

# On an IPv6 address of an interface, GID 0 is the interface's link-local
# address and the netdev is that interface, as the verbs say. Only in a
# network namespace of the test's own (root: {isolated}), where a veth pair
# can be made without touching the host's interfaces.
if [ "$(id -u)" = 0 ] && [ "$(ip -o link show | wc -l)" = 1 ] &&
   ip link add rt_v0 type veth peer name rt_v1 2>/dev/null; then
	# No duplicate address detection: the link-local address is usable
	# (not tentative) as soon as it is there.
	sysctl -qw net.ipv6.conf.rt_v0.accept_dad=0
	ip link set rt_v0 up && ip link set rt_v1 up &&
		ip -6 addr add fd00:72::5/64 dev rt_v0 nodad
	for _ in $(seq 100); do
		ip -6 addr show dev rt_v0 scope link | grep 'inet6 fe80' | grep -qv tentative && break
		sleep 0.1
	done
	ll=$(ip -6 addr show dev rt_v0 scope link | awk '/inet6 fe80/ { sub("/.*", "", $2); print $2; exit }')
	ROCEMU_ADDR=fd00:72::5 ibv_devinfo -v >"$work/devinfo6" 2>&1 && ok || bad "ibv_devinfo -v on fd00:72::5"
	v6_gid0=$(grep -o 'GID\[  0\]:[[:space:]]*[^,]*' "$work/devinfo6" | awk '{print $NF}')
	[ -n "$ll" ] && [ "$v6_gid0" = "$ll" ] && ok ||
		bad "the verbs' GID 0 $v6_gid0 is not rt_v0's link-local address $ll"
	"$rocemu" run --addr fd00:72::5 -- env -u LD_PRELOAD sh -c 'd=/sys/class/infiniband/rocemu0/ports/1
		echo "gids/0=$(cat $d/gids/0)"; echo "gids/1=$(cat $d/gids/1)"
		echo "ndevs/0=$(cat $d/gid_attrs/ndevs/0)"' >"$work/tree" 2>&1 ||
		bad "rocemu run on fd00:72::5"
	want "gids/0=$(exploded "$ll")"
	want "gids/1=$(exploded fd00:72::5)"
	want "ndevs/0=rt_v0"
	ip link del rt_v0
else
	echo "run_tree: no network namespace of its own: the IPv6 part left out"
fi

[ -z "$(ls -A "$work/tmp")" ] && ok || bad "rocemu run left $(ls "$work/tmp") in TMPDIR"

echo "run_tree: $pass passed, $fail failed"
[ "$fail" = 0 ]
