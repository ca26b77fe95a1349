#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make install and make uninstall, with DESTDIR and PREFIX, into
# BUILD_DIR/install_check only (docs/install-layout.md): every file of the
# layout is installed and nothing else; the installed tool works from
# another directory (dump on a bundled capture, conform --lint finding the
# installed scenarios); a C program built with the installed pkg-config
# file alone calls the codec and runs; a stock verbs program on the
# installed drop-in lists rocemu0; make uninstall leaves no file behind.
# Then make help's list, and that only make golden-rxe retakes the rxe
# captures into pcaps/ (make rxe-check's go under BUILD_DIR).
# usage: tests/cli/install_check.sh BUILD_DIR (build, build/san or build/tsan:
# make install is told SAN=1 or TSAN=1 by it)
set -u
build=${1:?usage: install_check.sh BUILD_DIR}
top=$(pwd)
work=$top/$build/install_check
rm -rf "$work" && mkdir -p "$work"
. "$(dirname "$0")/../lib/cli_lib.sh"

dest=$work/dest
prefix=/usr/local
root=$dest$prefix
# The sanitizer builds install from their own folder.
case $build in
*tsan) variant=TSAN=1 ;;
*san) variant=SAN=1 ;;
*) variant= ;;
esac
mk() { ${MAKE:-make} -s --no-print-directory $variant "$@" DESTDIR="$dest" PREFIX="$prefix"; }

# 1. make install: exactly the layout
mk install >"$work/install.txt" 2>&1 && ok || { bad "make install"; cat "$work/install.txt"; }
{
	echo bin/rocemu
	echo bin/rocemu-agent
	echo lib/librocemu.a
	echo lib/pkgconfig/rocemu.pc
	echo lib/rocemu/libibverbs.so.1
	echo lib/rocemu/librdmacm.so.1
	for h in include/rocemu/*.h; do echo "$h"; done
	for s in conformance/scenarios/*.scn conformance/differences.md; do
		echo "share/rocemu/$s"
	done
	for m in "$build"/man/man1/*.1 "$build"/man/man7/*.7; do
		[ -f "$m" ] || continue
		echo "share/man/$(basename "$(dirname "$m")")/$(basename "$m")"
	done
	echo share/rocemu/installed-files
} | sort >"$work/want"
(cd "$root" 2>/dev/null && find . -type f -o -type l | sed 's|^\./||' | sort) >"$work/got"
if diff -u "$work/want" "$work/got" >"$work/layout.diff"; then ok; else
	bad "the installed files differ from the layout (- missing, + extra):"
	grep '^[-+][^-+]' "$work/layout.diff" | head -n 20
fi
[ -x "$root/bin/rocemu" ] && [ -x "$root/bin/rocemu-agent" ] && ok ||
	bad "bin/rocemu and bin/rocemu-agent are not executable"

# 1b. man finds and renders the installed pages (rocemu(1), one per command)
for p in rocemu rocemu-check rocemu-agent rocemu-dropin; do
	[ -n "$(ls "$root"/share/man/man?/"$p".? 2>/dev/null)" ] && ok ||
		bad "no installed man page $p"
done
if command -v man >/dev/null; then
	for p in rocemu rocemu-check; do
		MANPATH=$root/share/man MANWIDTH=80 man "$p" >"$work/man_$p.txt" 2>&1 ||
			bad "man $p with the installed MANPATH"
		expect_grep "$work/man_$p.txt" "SYNOPSIS" "man $p: its SYNOPSIS"
	done
	expect_grep "$work/man_rocemu.txt" "EXIT STATUS" "man rocemu: its EXIT STATUS"
else
	echo "install_check: no man (man-db): the pages' rendering left out"
fi

# 2. The installed tool, from a directory with no conformance/ in it
elsewhere=$work/elsewhere
mkdir -p "$elsewhere"
cap=$(ls "$top"/pcaps/rxe/*.pcap | head -n 1)
(cd "$elsewhere" && "$root/bin/rocemu" dump "$cap") >"$work/dump.txt" 2>&1 && ok ||
	{ bad "installed rocemu dump $cap"; head -n 5 "$work/dump.txt"; }
nscn=$(ls conformance/scenarios/*.scn | wc -l)
(cd "$elsewhere" && "$root/bin/rocemu" conform --lint) >"$work/lint.txt" 2>&1 && ok ||
	{ bad "installed rocemu conform --lint from $elsewhere"; head -n 5 "$work/lint.txt"; }
expect_grep "$work/lint.txt" "$root/share/rocemu/conformance/scenarios" \
	"conform --lint: the installed scenarios"
expect_grep "$work/lint.txt" "$nscn scenario" "conform --lint: every installed scenario"
# A copy of the tool outside any prefix falls back on the compiled-in
# $(PREFIX)/share/rocemu/conformance (not installed here: it says so).
mkdir -p "$work/loose"
cp "$root/bin/rocemu" "$work/loose/rocemu"
if [ ! -d "$prefix/share/rocemu/conformance" ]; then
	(cd "$elsewhere" && "$work/loose/rocemu" conform --lint) >"$work/loose.txt" 2>&1
	rc=$?
	[ $rc = 2 ] && ok || bad "loose rocemu conform --lint: exit $rc, wanted 2"
	expect_grep "$work/loose.txt" "$prefix/share/rocemu/conformance/scenarios" \
		"loose rocemu conform --lint: the compiled-in folder"
fi
# --dir still chooses
(cd "$elsewhere" && "$root/bin/rocemu" conform --lint --dir "$top/conformance/scenarios") \
	>"$work/lint_dir.txt" 2>&1 && ok || bad "conform --lint --dir"
expect_grep "$work/lint_dir.txt" "$top/conformance/scenarios" "conform --lint --dir: that folder"

# 3. A program built with the installed pkg-config file alone
export PKG_CONFIG_PATH=$root/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
cflags=$(pkg-config --cflags rocemu) && ok || bad "pkg-config --cflags rocemu"
case " $cflags " in
*dbus* | *isa-l*) bad "pkg-config --cflags rocemu drags its dependencies' in: $cflags" ;;
*"-I$root/include "*) ok ;;
*) bad "pkg-config --cflags rocemu: $cflags" ;;
esac
cat >"$work/crc.c" <<'EOF'
#include <stdio.h>
#include <rocemu/icrc.h>

int main(void)
{
	/* the CRC-32's check value (IEEE 802.3: "123456789") */
	uint32_t c = roce_crc32(0, "123456789", 9);

	printf("%08x\n", c);
	return c != 0xcbf43926u;
}
EOF
san=
nm "$build/lib/librocemu.a" 2>/dev/null | grep -q __asan_init && san=-fsanitize=address,undefined
nm "$build/lib/librocemu.a" 2>/dev/null | grep -q __tsan_init && san=-fsanitize=thread
# shellcheck disable=SC2046
gcc $san -o "$work/crc" "$work/crc.c" $(pkg-config --cflags --libs --static rocemu) \
	>"$work/cc.txt" 2>&1 && ok || { bad "cc with pkg-config --static rocemu"; head -n 8 "$work/cc.txt"; }
"$work/crc" >"$work/crc.txt" 2>&1 && ok || bad "the pkg-config program: $(cat "$work/crc.txt")"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# 4. A stock program on the installed drop-in
if command -v ibv_devices >/dev/null; then
	(. "$top/tests/lib/verbs_env.sh"
		export LD_LIBRARY_PATH=$root/lib/rocemu
		ROCEMU_ADDR=127.0.0.2 ibv_devices) >"$work/devices.txt" 2>&1 && ok ||
		bad "ibv_devices on the installed drop-in"
	expect_grep "$work/devices.txt" rocemu0 "ibv_devices on the installed drop-in"
else
	echo "install_check: no ibv_devices (ibverbs-utils): the drop-in's run left out"
fi

# 5. make uninstall: no file left
mk uninstall >"$work/uninstall.txt" 2>&1 && ok || { bad "make uninstall"; cat "$work/uninstall.txt"; }
left=$(find "$dest" \( -type f -o -type l \) 2>/dev/null)
[ -z "$left" ] && ok || bad "make uninstall left: $(echo "$left" | head -n 5)"
[ -d "$root/share/rocemu" ] && bad "make uninstall left share/rocemu" || ok

# 6. make help lists the targets; the rxe lab's make rxe-check retakes its
# captures under BUILD_DIR (its dry run), only make golden-rxe into pcaps/
mkm() { ${MAKE:-make} --no-print-directory "$@"; }
mkm help >"$work/help.txt" 2>&1 && ok || bad "make help: $(head -n 3 "$work/help.txt")"
for t in all check demo install uninstall help golden golden-rxe rxe-check clean; do
	grep -qE "^  $t +[^ ]" "$work/help.txt" && ok || bad "make help does not list $t"
done
mkm -n rxe-check >"$work/rxe-check.n" 2>&1
grep 'tests/rxe/check.sh' "$work/rxe-check.n" >"$work/rxe-check.cmd"
[ -s "$work/rxe-check.cmd" ] && ! grep -q -- '--pcaps' "$work/rxe-check.cmd" && ok ||
	bad "make rxe-check writes into the tree: $(cat "$work/rxe-check.cmd")"
mkm -n golden-rxe >"$work/golden-rxe.n" 2>&1
grep -q 'tests/rxe/golden_lab.sh .* pcaps$' "$work/golden-rxe.n" && ok ||
	bad "make golden-rxe does not retake pcaps/: $(grep golden_lab "$work/golden-rxe.n")"

echo "install_check: $pass passed, $fail failed"
[ $fail = 0 ]
