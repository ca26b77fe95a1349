#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh's further check for verbs_exit (usage: BUILD_DIR WORK_DIR):
# the capture of a program that left through _exit holds every SEND it
# made, two packets each (run.sh has already read it back whole, every
# ICRC verified), and the counters file is still a whole one.
set -u
work=${2:?usage: verbs_exit_check.sh BUILD_DIR WORK_DIR}
# the program says how many SENDs it made: "sends N"
msgs=$(sed -n 's/^sends \([0-9]*\)$/\1/p' "$work/out")
[ -n "$msgs" ] || { echo "FAIL: no 'sends N' line in $work/out"; exit 1; }
first=$(grep -c "^[0-9].* RC_SEND_FIRST " "$work/dump")
last=$(grep -c "^[0-9].* RC_SEND_LAST " "$work/dump")
fail=0
if [ "$first" != "$msgs" ] || [ "$last" != "$msgs" ]; then
	echo "FAIL: the capture holds $first SEND_FIRST and $last SEND_LAST, want $msgs of each"
	fail=1
fi
if ! grep -q "^counter tx_packets [0-9]" "$work/verbs_exit.stats"; then
	echo "FAIL: $work/verbs_exit.stats has no tx_packets line"
	fail=1
fi
exit $fail
