# SPDX-License-Identifier: MIT
# Sourced by make bench's shell parts (bash): one figure's row, and the
# median of the numbers on stdin.
bench_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# bench_row GROUP NAME VALUE UNIT [--ref NAME VALUE] [--target T]: prints
# the row and keeps it in $BENCH_JSONL (tests/bench/bench_report.py); a
# row it refuses ends the script.
bench_row() { python3 "$bench_lib_dir/bench_report.py" row "$@" || exit 1; }

# The median of the numbers on stdin, one a line (0 if there are none).
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'
}

# peak_kb CMD...: runs CMD, its output discarded, and prints its peak
# resident memory in KiB (getrusage of the child; no time(1) needed). A
# failing CMD ends the script.
peak_kb() {
	python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@" || exit 1
}
