#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The rxe side of the golden captures (part of make rxe-check): boots two
# rxe lab guests joined by one wire (boot.sh), guest a the server
# (10.0.0.1) and guest b the client (10.0.0.2), each with Linux rxe on its
# eth0, runs every scenario of scenarios.sh across them (golden_guest.sh),
# takes the server's capture of each scenario that ran clean into
# pcaps/rxe/<scenario>.pcap with a note beside it (<scenario>.txt: kernel,
# commands, both programs' output), and compares each with
# pcaps/rocemu/<scenario>.pcap (compare.py). Prints one line per scenario
# (packets compared, differences listed and unlisted) and a summary line.
# usage: tests/rxe/golden_lab.sh BUILD_DIR [PCAPS_DIR]
#   BUILD_DIR holds rocemu's build and the lab's parts (BUILD_DIR/rxe,
#   made by parts.sh). Results and logs in BUILD_DIR/rxe/golden.
#   PCAPS_DIR (make golden-rxe: the source tree's pcaps/) receives the
#   retaken captures in its rxe/ and rocemu/; by default they go to
#   BUILD_DIR/rxe/pcaps, a copy of pcaps/, and the tree is left alone.
# Exit 0 when every scenario ran on rxe and its comparison found no
# unlisted difference; 1 otherwise.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: golden_lab.sh BUILD_DIR}" && pwd)
rxe=$build/rxe
out=$rxe/golden
dest=${2:-}
if [ -z "$dest" ]; then
	dest=$rxe/pcaps
	rm -rf "$dest"
	mkdir -p "$dest"
	cp -r "$top/pcaps/rxe" "$top/pcaps/rocemu" "$dest/"
fi
dest=$(cd "$dest" && pwd)
t0=$(date +%s)

rc=0
"$here/boot.sh" -t 600 -f "$here/scenarios.sh" "$rxe" "$out" \
	"$here/golden_guest.sh" "$here/golden_guest.sh" >"$out.boot.txt" 2>&1 || rc=$?
t1=$(date +%s)
if [ $rc = 2 ] || [ ! -d "$out/a/golden" ]; then
	echo "rxe lab: golden: FAILED: the guests brought no captures back (boot.sh exit $rc)" >&2
	cat "$out.boot.txt" >&2
	for g in a b; do
		[ -f "$out/$g/log.txt" ] && tail -n 5 "$out/$g/log.txt" | sed "s/^/  $g| /" >&2
	done
	exit 1
fi
kernel=$(sed -n 's/.*Linux version \([^ ]*\).*/\1/p' "$out/a/dmesg.txt" | head -n 1)

# A scenario is taken when both of its programs exited 0 (the server's
# status is in guest a's log, the client's in guest b's).
status=0 taken=() failed=()
for s in $(bash "$here/scenarios.sh" --list); do
	la=$(grep "^scenario $s: " "$out/a/log.txt" || true)
	lb=$(grep "^scenario $s: " "$out/b/log.txt" || true)
	if [ -z "$la$lb" ] || echo "$la$lb" | grep -q ': skipped'; then
		continue	# not run on rxe (scenarios.sh says why in the logs)
	fi
	g=$out/a/golden
	if echo "$la" | grep -q ': ok ' && echo "$lb" | grep -q ': ok ' &&
		[ -s "$g/$s.pcap" ]; then
		cp "$g/$s.pcap" "$dest/rxe/$s.pcap"
		{
			echo "scenario: $s"
			echo "taken by: make rxe-check (tests/rxe/golden_lab.sh), $(date -u '+%Y-%m-%d %H:%M UTC')"
			echo "kernel: Linux $kernel, rdma_rxe, in qemu (software emulation, -smp 1)"
			echo "topology: guest a server 10.0.0.1 (52:54:00:12:34:0a) <-> guest b client" \
				"10.0.0.2 (52:54:00:12:34:0b), qemu -netdev socket over UDP; rxe0 on eth0 (MTU 1500);" \
				"GID 1 = ::ffff:10.0.0.x (RoCEv2)"
			echo "capture: tcpdump -i eth0 udp port 4791 on guest a, started before the server"
			echo
			echo "===== server (guest a) ====="
			cat "$g/$s.server.log"
			echo
			echo "===== client (guest b) ====="
			cat "$out/b/golden/$s.client.log"
		} >"$dest/rxe/$s.txt"
		taken+=("$s")
	else
		failed+=("$s: ${la#scenario $s: } / ${lb#scenario $s: }")
		status=1
	fi
done

# rocemu's side of the loss scenario, taken in guest a (golden_guest.sh):
# the hosts make golden runs on need not drop packets with tc.
r=$out/a/golden-rocemu
if grep -q '^scenario loss: ok ' "$out/a/log.txt" && [ -s "$r/loss.pcap" ] &&
	[ "$(grep -c '^scenario loss: ok ' "$out/a/log.txt")" = 2 ]; then
	cp "$r/loss.pcap" "$dest/rocemu/loss.pcap"
else
	failed+=("loss (rocemu's side, in guest a): $(grep '^scenario loss: ' "$out/a/log.txt" | tail -n 1)")
	status=1
fi

cmp=$out/compare.txt
crc=0
python3 "$here/compare.py" --rocemu "$build/bin/rocemu" --dirs \
	"$dest/rxe" "$dest/rocemu" >"$cmp" 2>&1 || crc=$?
[ $crc = 0 ] || status=1
t2=$(date +%s)

echo "rxe lab: golden captures, Linux $kernel rxe <-> rxe (two guests) against rocemu <-> rocemu (pcaps/rocemu)"
awk -v taken=" ${taken[*]-} " '
	/^scenario [^ ]+: [0-9]+ packets compared/ {
		name = $2; sub(/:$/, "", name)
		fresh = index(taken, " " name " ") ? "" : "  (capture not retaken)"
		printf "  %-22s %5d packets compared, %3d listed, %d unlisted%s\n",
			name, $3, $6, $8, fresh
	}
	/^  UNLISTED / { print "   " $0 }' "$cmp"
for f in ${failed[@]+"${failed[@]}"}; do
	echo "  FAIL $f (programs on rxe; logs in $out/{a,b}/golden)"
done
total=$(grep '^all [0-9]* scenarios:' "$cmp" || true)
[ -n "$total" ] || { cat "$cmp"; total="comparison failed (exit $crc)"; }
echo "rxe lab: golden ${#taken[@]} captures taken, ${#failed[@]} failed; $total" \
	"(guests $((t1 - t0)) s, compare $((t2 - t1)) s; details in $cmp)"
exit $status
