# SPDX-License-Identifier: MIT
# Sourced by the tests that run programs on rocemu's libibverbs.so.1:
# LD_LIBRARY_PATH is the whole set-up. Under SAN=1 the library carries ASan
# and the programs do not, so the sanitizer runtimes are loaded first.
# needs: $build (the build directory)
export LD_LIBRARY_PATH=$build/lib
if nm -D "$build/lib/libibverbs.so.1" | grep -q __asan_init; then
	export LD_PRELOAD=$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)
	export ASAN_OPTIONS=detect_leaks=0
fi
