# SPDX-License-Identifier: MIT
# Sourced after verbs_env.sh by the tests that run UCX: UCX 1.13 does not
# start with ThreadSanitizer's runtime preloaded (Debian's ucx_info -d
# dies of SIGSEGV so, rocemu or not), so under TSAN=1 such a test says
# so and passes; the SAN=1 and plain builds run it.
case ${LD_PRELOAD:-} in
*libtsan*)
	echo "$(basename "$0"): left out under ThreadSanitizer: UCX does not start with its runtime"
	exit 0 ;;
esac
