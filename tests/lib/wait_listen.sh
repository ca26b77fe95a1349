# SPDX-License-Identifier: MIT
# wait_listen PORT [NETNS]: waits up to 30 s until a TCP socket listens on
# PORT (in network namespace NETNS if given), so that a client started
# after it finds its server ready however loaded the machine is (a fixed
# sleep was not always enough under the sanitizers). Returns 1 on timeout.
wait_listen() {
	local port=$1 ns=${2:-} i
	for i in $(seq 300); do
		if [ -n "$ns" ]; then
			ip netns exec "$ns" ss -Hltn "sport = :$port"
		else
			ss -Hltn "sport = :$port"
		fi 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

# wait_udp_4791 ADDR: waits up to 20 s until a socket holds UDP port 4791
# on ADDR (a rocemu device made there: an rdma_cm server's device exists
# from its bind on). Returns 1 on timeout.
wait_udp_4791() {
	local addr=$1 i
	for i in $(seq 200); do
		ss -Huln "sport = :4791" 2>/dev/null | grep -qF " $addr:4791 " &&
			return 0
		sleep 0.1
	done
	return 1
}
