#!/usr/bin/env bash
# Compares hub builds under a fleet (`hubbench fleet`, SQLite, the hub pinned
# to the last CPU): each build in turn, round after round, so that whatever
# else the machine does weighs on every build alike. Per run it prints hub
# CPU (cores), peak RSS, post → wake p50 / p99, tick p50 / p99 and the load
# average; with -p it also records where the hub's CPU goes (perf record of
# the hub after the warm-up, the top functions by their own samples and by
# what they call; and, from a hub with --pprof-addr, Go's CPU profile of
# the same window split into parts: the store's writes and reads, the
# streams, gRPC, GC, in .parts) and what its memory is (smaps_rollup,
# goroutines), into the output directory.
#
# Usage: scripts/fleet-ab.sh [-r ROUNDS] [-a AGENTS] [-D DASHBOARDS]
#          [-d DURATION] [-w WARMUP] [-s STREAM_SHARE] [-n NICE] [-p]
#          [-o OUTDIR] HUB_BINARY...
#   -r  rounds (default 2)       -a  agents (default 2000)
#   -D  dashboards (default 5)   -d  duration (default 100s, warm-up included)
#   -w  warm-up (default 20s)    -s  share of agents on the stream (default 0.9)
#   -n  nice of hubbench and the hub (default -10; 0 on a shared machine)
#   -p  profile each hub (needs perf)   -o  where the JSON and profiles go
# Build each hub first, e.g. main against this tree:
#   git worktree add /tmp/base main && (cd /tmp/base && go build -o /tmp/hub-main ./cmd/hub)
#   go build -o /tmp/hub-head ./cmd/hub
#   scripts/fleet-ab.sh -p /tmp/hub-main /tmp/hub-head              # 2,000 agents
#   scripts/fleet-ab.sh -a 10000 -D 20 -d 180s -w 60s /tmp/hub-main /tmp/hub-head
# hubbench is built from this tree.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
rounds=2 agents=2000 dashboards=5 duration=100s warmup=20s stream=0.9 nice=-10 profile= out=
while getopts "r:a:D:d:w:s:n:po:" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	a) agents=$OPTARG ;;
	D) dashboards=$OPTARG ;;
	d) duration=$OPTARG ;;
	w) warmup=$OPTARG ;;
	s) stream=$OPTARG ;;
	n) nice=$OPTARG ;;
	p) profile=1 ;;
	o) out=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-a AGENTS] [-D DASHBOARDS] [-d DURATION] [-w WARMUP] [-s STREAM] [-n NICE] [-p] [-o OUTDIR] HUB_BINARY..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
	echo "usage: $0 [options] HUB_BINARY... (build each hub first: go build -o /tmp/hub-X ./cmd/hub)" >&2
	exit 2
fi
for b in "$@"; do
	if [ ! -x "$b" ]; then
		echo "fleet-ab: $b is not an executable hub binary (build it with: go build -o $b ./cmd/hub)" >&2
		exit 2
	fi
done
if [ -n "$profile" ] && ! command -v perf >/dev/null; then
	echo "fleet-ab: -p needs perf (apt-get install linux-perf)" >&2
	exit 2
fi
out=${out:-$(mktemp -d /tmp/fleet-ab.XXXXXX)}
mkdir -p "$out"
(cd "$root" && go build -o "$out/hubbench" ./cmd/hubbench)

# seconds DURATION: a Go duration of whole seconds or minutes in seconds.
seconds() {
	case $1 in
	*m) echo $((${1%m} * 60)) ;;
	*s) echo "${1%s}" ;;
	*) echo "$1" ;;
	esac
}

# profile_hub HUBBENCH_PID TAG: after the warm-up, perf record the hub (the
# child of hubbench) for half of the measured time, then its memory.
profile_hub() {
	local hb=$1 tag=$2 pid="" wait
	for _ in $(seq 600); do # the agents are created first: up to 10 minutes
		pid=$(pgrep -P "$hb" -f ' serve' | head -1 || true)
		if [ -n "$pid" ] && grep -q "dashboards and .* agents" "$out/$tag.log" 2>/dev/null; then
			break
		fi
		sleep 1
	done
	[ -n "$pid" ] || return 0
	sleep "$(seconds "$warmup")"
	wait=$((($(seconds "$duration") - $(seconds "$warmup")) / 2))
	if [ -n "$pport" ]; then
		curl -sf -o "$out/$tag.pprof" "http://127.0.0.1:$pport/debug/pprof/profile?seconds=$wait" &
	fi
	perf record -q -g -o "$out/$tag.perf" -p "$pid" -- sleep "$wait" >/dev/null 2>&1 || true
	wait
	{
		echo "## /proc/$pid/smaps_rollup"
		cat "/proc/$pid/smaps_rollup" 2>/dev/null
		echo "## threads: $(ls "/proc/$pid/task" 2>/dev/null | wc -l)"
	} >"$out/$tag.mem"
	perf report -i "$out/$tag.perf" --no-children --sort sym --stdio -g none 2>/dev/null | grep -v '^#' | grep % | head -40 >"$out/$tag.self" || true
	perf report -i "$out/$tag.perf" --children --sort sym --stdio -g none 2>/dev/null | grep -v '^#' | grep % | grep 'agenthub\|grpc\|sqlite\|runtime.gcBgMarkWorker\|runtime.mallocgc\|syscall' | head -60 >"$out/$tag.children" || true
	if [ -s "$out/$tag.pprof" ]; then
		parts "$out/$tag.pprof" >"$out/$tag.parts" || true
	fi
}

# parts PROFILE: the share of a Go CPU profile each part of the hub takes
# (the samples under its functions; the parts overlap where one calls
# another: a unary call's reads are in both).
parts() {
	python3 - "$1" <<'PY'
import re, subprocess, sys
prof = sys.argv[1]
def top(*args):
    return subprocess.run(["go", "tool", "pprof", "-top", "-cum", "-nodecount=1", *args, prof],
                          capture_output=True, text=True, cwd="/").stdout
def secs(v):
    return float(v[:-2]) / 1000 if v.endswith("ms") else float(v.rstrip("s") or 0)
head = top()
total = secs(re.search(r"Total samples = ([0-9.]+m?s)", head).group(1))
dur = secs(re.search(r"Duration: ([0-9.]+m?s)", head).group(1))
print("%-38s %7.2f s  100.0 %%  %.3f cores" % ("all (Go's profile)", total, total / dur))
for name, rx in [
    ("store: writes (the writer's commits)", r"writer\.\(\*Queue\)\.loop$"),
    ("store: reads (views)", r"sqlite\.\(\*DB\)\.View$"),
    ("  SQLite's C code, both", r"runtime\.cgocall$"),
    ("streams: looks and frames", r"hub\.\(\*Stream\)\.pump$"),
    ("unary calls (handlers)", r"grpc\.\(\*Server\)\.processRPC$"),
    ("gRPC: reading frames", r"http2Server\)\.HandleStreams$"),
    ("gRPC: writing frames", r"loopyWriter\)\.run$"),
    ("dashboards", r"internal/dashboard\."),
    ("MCP over HTTP", r"StreamableHTTPHandler\)\.ServeHTTP$"),
    ("orchestrator", r"internal/orchestrator\."),
    ("GC (mark, assist, sweep)", r"gcBgMarkWorker$|gcAssistAlloc$|bgsweep$|bgscavenge$"),
    ("Go's scheduler", r"runtime\.schedule$"),
]:
    m = re.search(r"^\s*[0-9.]+m?s?\s+[0-9.]+%\s+[0-9.]+%\s+([0-9.]+m?s)\s+[0-9.]+%", top("-focus=" + rx), re.M)
    v = secs(m.group(1)) if m else 0.0
    print("%-38s %7.2f s  %5.1f %%  %.3f cores" % (name, v, 100 * v / total, v / dur))
PY
}

echo "| round | binary | hub CPU cores | RSS MiB | post → wake p50 / p99 ms | tick p50 / p99 ms | errors | load |"
echo "|---|---|---|---|---|---|---|---|"
for round in $(seq "$rounds"); do
	n=0
	for bin in "$@"; do
		n=$((n + 1)) # two binaries may share a name (…/main/hub, …/head/hub)
		tag="r$round-b$n-$(basename "$bin")"
		pport= pargs=()
		if [ -n "$profile" ] && [[ $("$bin" serve -h 2>&1 || true) == *-pprof-addr* ]]; then
			pport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
			pargs=(--hub-arg="--pprof-addr=127.0.0.1:$pport")
		fi
		"$out/hubbench" fleet --hub-bin "$bin" --agents "$agents" --dashboards "$dashboards" \
			--duration "$duration" --warmup "$warmup" --report-every 20s --stream "$stream" \
			--nice "$nice" --json "$out/$tag.json" "${pargs[@]}" >"$out/$tag.log" 2>&1 &
		hb=$!
		if [ -n "$profile" ]; then
			profile_hub "$hb" "$tag" &
		fi
		status=0
		wait "$hb" || status=$?
		wait # the profile
		if [ "$status" -ne 0 ] || [ ! -s "$out/$tag.json" ]; then
			echo "| $round | $bin | failed ($status): $out/$tag.log | | | | | |"
			continue
		fi
		python3 - "$out/$tag.json" "$round" "$bin" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("| %s | %s | %.3f | %.0f | %.1f / %.1f | %.1f / %.1f | %d | %s |" % (
    sys.argv[2], sys.argv[3], r["hub_cpu_cores"], r["hub_rss_bytes"] / 2**20,
    r["post_wake_p50_ms"], r["post_wake_p99_ms"], r["tick_p50_ms"], r["tick_p99_ms"],
    r["errors"], r["load_average"]))
PY
	done
done
echo
echo "runs, logs and profiles: $out"
