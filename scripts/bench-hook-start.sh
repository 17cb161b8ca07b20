#!/usr/bin/env bash
# Start to exit of what agents run on every tool call and every commit, for
# each binary in turn, round after round:
#   hook    `BIN hook claude PostToolUse` with no bridge and a hub address
#           where nothing listens: it starts, finds no hub and exits 0
#           without the network (the time of a hub's answer is
#           BenchmarkHookRun's);
#   bridge  the same with the agent's bridge answering "nothing new" on its
#           socket (a stand-in serving internal/hooksock, as hub mcp does):
#           what nearly every tool call of an agent with hub mcp costs;
#   guard   `BIN guard check` with nothing staged;
#   version `BIN version`.
# BIN is a hub binary or a hub-hook (which runs the hub beside it for what
# it does not answer itself: the hook row). Prints per binary and command
# the median wall time (hyperfine, else a loop of /usr/bin/time), the CPU
# time (user + system, perf stat's task-clock when it works), and the
# package initialisation from GODEBUG=inittrace=1: its clock and its
# allocations, the one figure the machine's load does not move (summed over
# hub-hook and the hub it runs, where it runs one).
#
# Usage: scripts/bench-hook-start.sh [-r ROUNDS] [-n RUNS] BINARY...
#   -r  rounds (default 2)
#   -n  runs per command, binary and round (default 20)
# Build each first, e.g. main against this tree:
#   git worktree add /tmp/base main && (cd /tmp/base && go build -tags grpcnotrace -o /tmp/hub-main ./cmd/hub)
#   mkdir -p /tmp/head && go build -tags grpcnotrace -o /tmp/head/hub ./cmd/hub && go build -o /tmp/head/hub-hook ./cmd/hub-hook
#   scripts/bench-hook-start.sh /tmp/hub-main /tmp/head/hub /tmp/head/hub-hook
# (grpcnotrace as `make build` and the release build hub)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
rounds=2 runs=20
while getopts "r:n:" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	n) runs=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-n RUNS] BINARY..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
	echo "usage: $0 [-r ROUNDS] [-n RUNS] BINARY... (build each first: go build -o /tmp/hub-X ./cmd/hub; hub-hook beside its hub)" >&2
	exit 2
fi

work=$(mktemp -d)
src=$(mktemp -d "$root/cmd/_quietbridge.XXXXXX")
bridge=
trap '[ -n "$bridge" ] && kill "$bridge" 2>/dev/null; rm -rf "$work" "$src"' EXIT
bins=()
for b in "$@"; do
	bins+=("$(realpath "$b")")
done
# The stand-in bridge: the agent's socket, every hook answered "nothing new".
cat >"$src/main.go" <<'GO'
package main

import (
	"log/slog"
	"os"

	"github.com/agenthub/hub/internal/hooksock"
)

func main() {
	ln, err := hooksock.Listen(hooksock.Path(os.Getenv("HUB_ADDR"), os.Getenv("HUB_TOKEN")))
	if err != nil {
		panic(err)
	}
	os.Stdout.WriteString("ready\n")
	hooksock.Serve(ln, os.Getenv("HUB_TOKEN"), func(hooksock.Query) (hooksock.Reply, func()) {
		return hooksock.Reply{Answer: hooksock.AnswerQuiet}, nil
	}, slog.New(slog.DiscardHandler))
}
GO
(cd "$root" && go build -o "$work/quiet-bridge" "./cmd/$(basename "$src")")
git -C "$work" init -q # a repository with nothing staged, for the guard
echo '{"hook_event_name":"PostToolUse","session_id":"bench","tool_name":"Bash","tool_input":{"command":"true"}}' >"$work/post.json"
export HUB_ADDR=127.0.0.1:9 HUB_TOKEN=bench-token HUB_TOKEN_FILE= HUB_HOOK_BRIDGE= HUB_GUARD=
mkdir -m 0700 "$work/run-none" "$work/run-bridge"
XDG_RUNTIME_DIR=$work/run-bridge "$work/quiet-bridge" >"$work/bridge.out" &
bridge=$!
for _ in $(seq 500); do grep -q ready "$work/bridge.out" 2>/dev/null && break; sleep 0.01; done
grep -q ready "$work/bridge.out" || { echo "the stand-in bridge did not start" >&2; exit 1; }

# cmdline BINARY NAME: the shell command of one run.
cmdline() {
	case $2 in
	hook) echo "XDG_RUNTIME_DIR=$work/run-none $1 hook claude PostToolUse <$work/post.json 2>/dev/null" ;;
	bridge) echo "XDG_RUNTIME_DIR=$work/run-bridge $1 hook claude PostToolUse <$work/post.json 2>/dev/null" ;;
	guard) echo "cd $work && $1 guard check" ;;
	version) echo "$1 version" ;;
	esac
}

# wall_ms CMD: median wall time in ms over $runs runs.
wall_ms() {
	if command -v hyperfine >/dev/null; then
		hyperfine -N -w 2 -r "$runs" --export-json "$work/h.json" "bash -c '$1'" >/dev/null 2>&1 || true
		if [ -s "$work/h.json" ]; then
			python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.1f" % (r["median"]*1000))' "$work/h.json"
			rm -f "$work/h.json"
			return
		fi
	fi
	for _ in $(seq "$runs"); do
		/usr/bin/time -f %e bash -c "$1" 2>&1 >/dev/null | tail -1
	done | sort -n | awk '{a[NR]=$1} END{printf "%.1f\n", a[int((NR+1)/2)]*1000}'
}

# cpu_ms CMD: mean CPU time (user + system) in ms over $runs runs.
cpu_ms() {
	local out
	if out=$(perf stat -x, -e task-clock -r "$runs" bash -c "$1" 2>&1 >/dev/null) && grep -q task-clock <<<"$out"; then
		grep task-clock <<<"$out" | cut -d, -f1
	else
		echo "-"
	fi
}

# init_figures BINARY NAME: "CLOCK_MS ALLOCS" of the package initialisation.
init_figures() {
	local c
	c=$(cmdline "$1" "$2")
	GODEBUG=inittrace=1 bash -c "${c% 2>/dev/null}" 2>&1 >/dev/null |
		awk '/^init /{c+=$5; a+=$10} END{printf "%.1f %d\n", c, a}'
}

echo "| round | binary | command | wall median ms | CPU ms (incl. bash) | init clock ms | init allocs |"
echo "|---|---|---|---|---|---|---|"
for round in $(seq "$rounds"); do
	for name in hook bridge guard version; do
		for bin in "${bins[@]}"; do
			c=$(cmdline "$bin" "$name")
			read -r iclock iallocs < <(init_figures "$bin" "$name")
			echo "| $round | $(basename "$bin") | $name | $(wall_ms "$c") | $(cpu_ms "$c") | $iclock | $iallocs |"
		done
	done
done
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
