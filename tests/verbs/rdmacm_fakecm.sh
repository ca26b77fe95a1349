#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The drop-in's connection glue (emu/rdmacm/cm_glue.c, RDMACM_CM=1) before
# the device's CM exists: a variant of librdmacm.so.1 is linked with
# tests/verbs/fake_cm.c, a stand-in for include/rocemu/ibcm.h that hands
# each message straight to the peer id in the same process, and
# tests/verbs/rdmacm_connect.c runs on it (on the build's libibverbs.so.1)
# through tests/verbs/run.sh.
# usage: tests/verbs/rdmacm_fakecm.sh BUILD_DIR ADDR
set -u
build=$(cd "${1:?usage: rdmacm_fakecm.sh BUILD_DIR ADDR}" && pwd)
addr=${2:?}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$build/rdmacm_fakecm
rm -rf "$work" && mkdir -p "$work/build/lib"
flags="-std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror -Wshadow
	-Wno-missing-field-initializers -fPIC -pthread -I$top/include
	-DROCEMU_RDMACM_CM=1"
# under SAN=1 and TSAN=1 the variant carries the build's sanitizer too
if nm -D "$build/lib/libibverbs.so.1" | grep -q __asan_init; then
	flags="$flags -fsanitize=address,undefined -fno-omit-frame-pointer"
elif nm -D "$build/lib/libibverbs.so.1" | grep -q __tsan_init; then
	flags="$flags -fsanitize=thread -fno-omit-frame-pointer"
fi
# shellcheck disable=SC2086 # the flags are words
if ! cc $flags -shared -Wl,-soname,librdmacm.so.1 \
	-Wl,--version-script="$top/emu/rdmacm/librdmacm.map" \
	-o "$work/build/lib/librdmacm.so.1" "$top"/emu/rdmacm/*.c \
	"$top/tests/verbs/fake_cm.c" -L"$build/lib" -l:libibverbs.so.1 \
	2>"$work/cc.out"; then
	cat "$work/cc.out"
	echo "FAIL: the variant with the stand-in CM does not build"
	echo "rdmacm_fakecm: 0 passed, 1 failed"
	exit 1
fi
# run.sh's build directory: the variant, and the build's libibverbs.so.1
# (and its rocemu, for any capture) beside it
ln -s "$build/lib/libibverbs.so.1" "$work/build/lib/libibverbs.so.1"
ln -s "$build/bin" "$work/build/bin"
exec "$top/tests/verbs/run.sh" "$work/build" "$top/tests/verbs/rdmacm_connect.c" \
	--addr "$addr" --libs -lrdmacm --timeout 120
