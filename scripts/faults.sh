#!/usr/bin/env bash
# The replicated mode under real faults (test/faults): PostgreSQL, hub
# replicas and clients in network namespaces of their own, a seeded nemesis
# (replica kills, PostgreSQL stopped and crashed, nftables partitions, a
# fault proxy's latency, bandwidth, stalls and resets), a recorded workload
# and a checker over the history and the final store.
#
#   scripts/faults.sh --duration 30m --seed 7   # runs of --run each (seeds 7, 8, …) for 30 min of faults
#   scripts/faults.sh --seeds 1,2 --run 60s     # exactly these seeds (CI: scripts/ci-faults.sh)
#   scripts/faults.sh --kinds pg-kill,leader-isolate --seed 3
#
# Options: --duration D (total time of faults; default one run), --seed N
# (first seed, default 1), --seeds A,B (one run each), --run D (faults per
# run, default 2m), --replicas 2|3 (default 3), --agents N (default 6),
# --kinds K,… (default every kind), --report FILE (every run's result as
# JSON).
#
# Needs root (network namespaces, nftables); installs Debian's postgresql,
# nftables and iproute2 when they are missing, and says so. Everything the
# rig starts is stopped by PID and its namespaces removed at the end, even on
# failure or ^C; a rig left by a run that was killed is removed at the start.
# The last line of the output is the summary:
#
#   faults: runs=N faults=N acked=N unknown=N lost=N duplicated=N reordered=N leader_overlaps=N converge_p99_ms=N
#
# The exit status is non-zero when any check failed (lost, duplicated,
# reordered, leader overlaps above 0, or any other broken promise).
set -euo pipefail
cd "$(dirname "$0")/.."

duration="" seed=1 seeds="" run=2m replicas=3 agents=6 kinds="" report=""
while [ $# -gt 0 ]; do
	case "$1" in
	--duration) duration=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--seeds) seeds=$2; shift 2 ;;
	--run) run=$2; shift 2 ;;
	--replicas) replicas=$2; shift 2 ;;
	--agents) agents=$2; shift 2 ;;
	--kinds) kinds=$2; shift 2 ;;
	--report) report=$2; shift 2 ;;
	-h | --help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "faults.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done

if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		exec sudo -E env "PATH=$PATH" bash "$0" "$@"
	fi
	echo "faults.sh: the rig needs root (network namespaces, nftables)" >&2
	exit 1
fi

missing=()
command -v ip >/dev/null || missing+=(iproute2)
command -v nft >/dev/null || missing+=(nftables)
command -v setpriv >/dev/null || missing+=(util-linux)
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || missing+=(postgresql)
if [ "${#missing[@]}" -gt 0 ]; then
	echo "faults.sh: installing Debian's ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# removeStale removes the namespaces of rigs whose test process is gone
# (hubf<PID>-<node>), killing what still runs in them, by PID.
removeStale() {
	local ns owner pids
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^hubf[0-9]+-[a-z0-9]+$' || true); do
		owner=${ns#hubf}
		owner=${owner%%-*}
		if kill -0 "$owner" 2>/dev/null; then
			continue
		fi
		pids=$(ip netns pids "$ns" 2>/dev/null || true)
		if [ -n "$pids" ]; then
			echo "faults.sh: killing PIDs $(echo $pids) left in the stale namespace $ns"
			kill -9 $pids 2>/dev/null || true
		fi
		ip netns del "$ns" && echo "faults.sh: removed the stale namespace $ns"
	done
}

out=$(mktemp -d /tmp/hub-faults-out.XXXXXX)
status=0
cleanup() {
	removeStale
	if [ -s "$out/summary" ]; then
		cat "$out/summary"
	else
		echo "faults: runs=0 faults=0 acked=0 unknown=0 lost=0 duplicated=0 reordered=0 leader_overlaps=0 converge_p99_ms=0"
		status=1
	fi
	rm -rf "$out"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

removeStale
args=(-faults.run "$run" -faults.replicas "$replicas" -faults.agents "$agents" -faults.summary "$out/summary")
if [ -n "$seeds" ]; then
	args+=(-faults.seeds "$seeds")
else
	args+=(-faults.seed "$seed")
	[ -n "$duration" ] && args+=(-faults.duration "$duration")
fi
[ -n "$kinds" ] && args+=(-faults.kinds "$kinds")
[ -n "$report" ] && args+=(-faults.report "$report")

export CGO_ENABLED=1
set +e
HUB_FAULTS=1 HUB_FAULTS_REQUIRE=1 go test -count=1 -v -timeout 0 -run '^TestFaults$' ./test/faults -args "${args[@]}" 2>&1 |
	grep --line-buffered -v -E '^(=== RUN|--- PASS|PASS$|ok |faults: runs=)'
status=${PIPESTATUS[0]}
set -e
