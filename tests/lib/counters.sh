# SPDX-License-Identifier: MIT
# Sourced by the tests that read the device's counters as rocemu prints
# them ("counter NAME VALUE", led by "rocemu: " from the drop-in).
# needs: $work, and the script's ok and bad functions.
counter() { # FILE NAME: the value on FILE's "counter NAME VALUE" line
	awk -v n="$2" '{ for (i = 1; i + 2 <= NF; i++)
		if ($i == "counter" && $(i + 1) == n) print $(i + 2) }' "$work/$1"
}
expect_counter() { # FILE NAME TEST VALUE, TEST as for [ ]
	local v
	v=$(counter "$1" "$2")
	if [ -n "$v" ] && [ "$v" "$3" "$4" ]; then ok; else
		bad "$1: counter $2 is '${v:-absent}', not $3 $4"
	fi
}
