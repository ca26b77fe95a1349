#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The rxe lab's parts, from Debian's packages only: a Debian kernel (fetched
# once with apt-get download, unpacked with dpkg -x, kept under RXE_DIR) and
# an initramfs holding busybox, rdma-core's userspace with the rxe provider,
# perftest, iproute2, tcpdump, the kernel modules rxe needs (depmod'd), the
# guest's /init (tests/rxe/init) and rocemu's build (the drop-in and the
# tool). The initramfs is rebuilt only when one of its inputs changed.
# usage: tests/rxe/parts.sh BUILD_DIR
#   BUILD_DIR holds rocemu's build (lib/libibverbs.so.1, bin/rocemu); the
#   parts go to BUILD_DIR/rxe: vmlinuz, initrd.gz, kernel/ (the cache).
#   RXE_LAB_PERF=1 adds the host's perf (linux-perf) for make rxe-bench's
#   profiles; it is left out otherwise, as it triples the initramfs.
# Exit 77 (with one line saying why) when a host tool is missing or no
# kernel can be had; 1 on other errors.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: parts.sh BUILD_DIR}" && pwd)
rxe=$build/rxe
mkdir -p "$rxe/kernel"

say() { echo "rxe parts: $*"; }
die() { echo "rxe parts: $*" >&2; exit 1; }

# Host tools the parts are made with; RXE_LAB_PKGS in the Makefile names
# their packages.
for t in busybox cpio depmod dpkg apt-get gzip ldconfig; do
	command -v $t >/dev/null || {
		echo "rxe parts: '$t' missing (make rxe-deps installs the lab's" \
			"Debian packages)" >&2
		exit 77
	}
done
busybox=$(command -v busybox)
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$busybox" 2>&1 | grep -q 'not a dynamic' ||
	die "$busybox is not static (install busybox-static)"

# Programs the guest runs, by name on the host. A later scenario that needs
# another program adds it here.
progs="ibv_devices ibv_devinfo ibv_rc_pingpong ibv_uc_pingpong
	ibv_ud_pingpong ibv_srq_pingpong ibv_xsrq_pingpong
	ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw
	ib_write_lat ib_read_lat ib_send_lat ib_atomic_lat
	rping ucmatose udaddy
	ip rdma tc tcpdump"
paths=""
for p in $progs; do
	f=$(command -v "$p") || die "'$p' missing (make rxe-deps installs it)"
	paths="$paths $(readlink -f "$f")"
done
if [ "${RXE_LAB_PERF:-0}" = 1 ]; then
	f=$(command -v perf) || die "RXE_LAB_PERF=1 but no perf (apt-get install linux-perf)"
	paths="$paths $(readlink -f "$f")"
fi
provider_dir=$(dirname "$(readlink -f "$(env -u LD_LIBRARY_PATH -u LD_PRELOAD \
	ldd "$(command -v ibv_devinfo)" | awk '/libibverbs.so.1 =>/ {print $3}')")")/libibverbs
rxe_provider=$(ls "$provider_dir"/librxe-rdmav*.so 2>/dev/null | head -n 1)
[ -n "$rxe_provider" ] || die "no librxe provider in $provider_dir (install ibverbs-providers)"
[ -f /etc/libibverbs.d/rxe.driver ] || die "/etc/libibverbs.d/rxe.driver missing (install ibverbs-providers)"
dropin=$build/lib/libibverbs.so.1
rdmacm=$build/lib/librdmacm.so.1
# glibc loads libgcc_s.so.1 at run time (pthread_exit unwinds through it);
# ldd does not list it, and rping aborts at its end without it.
libgcc=$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/ {print $NF; exit}')
[ -n "$libgcc" ] || die "no libgcc_s.so.1 (install libgcc-s1)"
tool=$build/bin/rocemu
probe=$build/tests/rxe/rxe_probe
udgrh=$build/tests/rxe/ud_grh
agent=$build/bin/rocemu-agent
[ -x "$agent" ] || die "no $agent (the conformance suite's agent: make $agent)"
[ -f "$dropin" ] && [ -f "$rdmacm" ] && [ -x "$tool" ] || die "no rocemu build in $build (run make first)"
[ -x "$probe" ] || die "no $probe (the golden scenarios' program: make $probe)"
[ -x "$udgrh" ] || die "no $udgrh (the part gid's UD program: make $udgrh)"

# ---- the kernel: the version linux-image-amd64 depends on, fetched once ----
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$pkg" ]; then
	# no package lists: use what an earlier run fetched
	pkg=$(ls -d "$rxe"/kernel/linux-image-*/ 2>/dev/null | tail -n 1 | xargs -r basename)
	[ -n "$pkg" ] || {
		echo "rxe parts: apt-cache knows no linux-image-amd64 and no kernel is cached (run apt-get update)" >&2
		exit 77
	}
fi
kdir=$rxe/kernel/$pkg
if [ ! -f "$kdir/.unpacked" ]; then
	say "fetching $pkg with apt-get download"
	rm -rf "$kdir" "$rxe"/kernel/*.deb
	mkdir -p "$kdir"
	# The sandbox user could not write here; root downloads it itself.
	(cd "$rxe/kernel" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >/dev/null) || {
		echo "rxe parts: apt-get download $pkg failed: no guest kernel" >&2
		exit 77
	}
	dpkg -x "$rxe"/kernel/"$pkg"_*.deb "$kdir"
	rm -f "$rxe"/kernel/"$pkg"_*.deb
	kver=$(ls "$kdir/lib/modules")
	depmod -b "$kdir" "$kver"
	touch "$kdir/.unpacked"
fi
kver=$(ls "$kdir/lib/modules")
cp -u "$kdir/boot/vmlinuz-$kver" "$rxe/vmlinuz"

# Modules /init loads (its order is in init), with what they depend on;
# sch_netem is for scenarios that lose packets; with sch_prio, cls_u32 and
# act_gact it loses one chosen packet (the golden loss scenario);
# sch_ingress (clsact), cls_u32 and act_gact drop every RoCEv2 packet a
# responder sends (the error paths' retry exhaustion); rdma_ucm brings
# Linux's CM (rdma_cm, ib_cm, iw_cm; /dev/infiniband/rdma_cm) and
# configfs, which its rdma_cm needs.
mods="crc32_generic virtio_pci virtio_net virtio_blk veth rdma_rxe ib_uverbs sch_netem
	sch_prio sch_ingress cls_u32 act_gact configfs rdma_ucm"
modfiles=$(for m in $mods; do
	modprobe -d "$kdir" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | sort -u)

# ---- the initramfs, rebuilt when an input changed ----
libs_of() { env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd "$@" 2>/dev/null |
	awk '/=> \// {print $3} /^\t\/[^ ]+ \(/ {print $1}' | sort -u; }
libs="$(libs_of $paths "$rxe_provider" "$dropin" "$rdmacm" "$tool" "$probe" "$udgrh" "$agent")
$libgcc"
inputs="$busybox $paths $rxe_provider /etc/libibverbs.d/rxe.driver $dropin $rdmacm $tool
	$probe $udgrh $agent $libs $modfiles $here/init $here/parts.sh"
stamp=$( (echo "$kver"; for f in $inputs; do
	stat -L -c '%n %s %Y' "$f"; done) | sha256sum | cut -c1-16)
if [ -f "$rxe/initrd.gz" ] && [ "$(cat "$rxe/initrd.stamp" 2>/dev/null)" = "$stamp" ]; then
	say "initramfs up to date ($kver)"
	exit 0
fi

root=$rxe/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,run,etc/libibverbs.d,usr/bin,usr/lib,usr/lib64,rocemu/bin,rocemu/lib}
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
ln -s bin "$root/sbin"
mkdir -p "$root/var" && ln -s ../run "$root/var/run"
cp "$busybox" "$root/bin/busybox"
for a in $("$busybox" --list); do
	[ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
done
# Copies a host file to the same path in the guest (through /usr: the
# guest's /lib is a link to usr/lib, as on the host).
put() {
	local src=$1 dst=${2:-$1}
	case $dst in /lib/*|/lib64/*) dst=/usr$dst ;; esac
	mkdir -p "$root$(dirname "$dst")"
	cp -L "$src" "$root$dst"
}
for f in $paths; do put "$f" "/usr/bin/$(basename "$f")"; done
for f in $libs; do put "$f"; done
put "$rxe_provider"
put /etc/libibverbs.d/rxe.driver
cp "$dropin" "$root/rocemu/lib/libibverbs.so.1"
cp "$rdmacm" "$root/rocemu/lib/librdmacm.so.1"
cp "$tool" "$root/rocemu/bin/rocemu"
cp "$probe" "$root/usr/bin/rxe_probe"
cp "$udgrh" "$root/usr/bin/ud_grh"
cp "$agent" "$root/usr/bin/rocemu-agent"
for f in $modfiles; do put "$f" "/lib/modules/$kver/${f#"$kdir"/lib/modules/"$kver"/}"; done
cp "$kdir/lib/modules/$kver"/modules.{order,builtin,builtin.modinfo} "$root/usr/lib/modules/$kver/"
depmod -b "$root" "$kver"
ldconfig -r "$root"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"
printf '127.0.0.1 localhost\n' >"$root/etc/hosts"
cp "$here/init" "$root/init"
chmod 755 "$root/init"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) |
	gzip -1 >"$rxe/initrd.gz.tmp"
mv "$rxe/initrd.gz.tmp" "$rxe/initrd.gz"
echo "$stamp" >"$rxe/initrd.stamp"
rm -rf "$root"
say "initramfs for $kver: $(du -k "$rxe/initrd.gz" | cut -f1) KiB"
