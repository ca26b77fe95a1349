# SPDX-License-Identifier: MIT
# Sourced by the tests that run programs on rocemu's libibverbs.so.1:
# LD_LIBRARY_PATH is the whole set-up. Under SAN=1 or TSAN=1 the library
# carries a sanitizer and the programs do not, so its runtime is loaded
# first. A ThreadSanitizer report fails the program (status 66).
# needs: $build (the build directory)
export LD_LIBRARY_PATH=$build/lib
if nm -D "$build/lib/libibverbs.so.1" | grep -q __asan_init; then
	export LD_PRELOAD=$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)
	export ASAN_OPTIONS=detect_leaks=0
elif nm -D "$build/lib/libibverbs.so.1" | grep -q __tsan_init; then
	export LD_PRELOAD=$(gcc -print-file-name=libtsan.so)
	export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1 exitcode=66 second_deadlock_stack=1}
fi
