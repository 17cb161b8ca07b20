#!/usr/bin/env bash
# Start to exit of what agents run on every tool call and every commit:
# `hub hook claude PostToolUse` with nothing to inject, `hub guard check`
# with nothing staged, and `hub version`, for each hub binary in turn, round
# after round. The hook and the guard are given a hub address where nothing
# listens, so they start, find nothing to do and exit 0 without the network
# (the time of a hub's answer is BenchmarkHookRun's). Prints per binary and
# command the median wall time (hyperfine, else a loop of /usr/bin/time), the
# CPU time (user + system, perf stat's task-clock when it works), and the
# package initialisation from GODEBUG=inittrace=1: its clock and its
# allocations, the one figure the machine's load does not move.
#
# Usage: scripts/bench-hook-start.sh [-s] [-r ROUNDS] [-n RUNS] HUB_BINARY...
#   -r  rounds (default 2)
#   -n  runs per command, binary and round (default 20)
#   -s  also build and measure, from this tree, a binary of the hook, the
#       guard and the version alone (what a binary of their own would start at)
# Build each hub first, e.g. main against this tree:
#   git worktree add /tmp/base main && (cd /tmp/base && go build -o /tmp/hub-main ./cmd/hub)
#   go build -tags grpcnotrace -o /tmp/hub-head ./cmd/hub && scripts/bench-hook-start.sh /tmp/hub-main /tmp/hub-head
# (grpcnotrace as `make build` and the release build hub)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
rounds=2 runs=20 small=
while getopts "sr:n:" opt; do
	case $opt in
	s) small=1 ;;
	r) rounds=$OPTARG ;;
	n) runs=$OPTARG ;;
	*) echo "usage: $0 [-s] [-r ROUNDS] [-n RUNS] HUB_BINARY..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
	echo "usage: $0 [-r ROUNDS] [-n RUNS] HUB_BINARY... (build each hub first: go build -o /tmp/hub-X ./cmd/hub)" >&2
	exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work" ${src:+"$src"}' EXIT
bins=("$@")
if [ -n "$small" ]; then
	src=$(mktemp -d "$root/cmd/_hookonly.XXXXXX")
	cat >"$src/main.go" <<'GO'
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agenthub/hub/internal/guard"
	"github.com/agenthub/hub/internal/hook"
	"github.com/agenthub/hub/internal/version"
)

func main() {
	addr, tok := os.Getenv("HUB_ADDR"), os.Getenv("HUB_TOKEN")
	switch {
	case len(os.Args) == 4 && os.Args[1] == "hook":
		hook.Run(context.Background(), hook.Hosts[os.Args[2]], os.Args[3], os.Stdin, os.Stdout, os.Stderr,
			hook.Options{Addr: addr, Token: tok, Timeout: hook.DefaultTimeout, ApprovalWait: hook.DefaultApprovalWait})
	case len(os.Args) == 3 && os.Args[1] == "guard":
		if !guard.Check(context.Background(), guard.Options{Dir: ".", Addr: addr, Token: tok, Timeout: guard.DefaultTimeout, Getenv: os.Getenv}, os.Stderr) {
			os.Exit(1)
		}
	default:
		fmt.Print(version.Long("hub"))
	}
}
GO
	(cd "$root" && go build -o "$work/hub-hookonly" "./cmd/$(basename "$src")")
	bins+=("$work/hub-hookonly")
fi
git -C "$work" init -q # a repository with nothing staged, for the guard
echo '{"hook_event_name":"PostToolUse","session_id":"bench","tool_name":"Bash","tool_input":{"command":"true"}}' >"$work/post.json"
export HUB_ADDR=127.0.0.1:9 HUB_TOKEN=bench-token

# cmdline BINARY NAME: the shell command of one run.
cmdline() {
	case $2 in
	hook) echo "$1 hook claude PostToolUse <$work/post.json 2>/dev/null" ;;
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
	for name in hook guard version; do
		for bin in "${bins[@]}"; do
			c=$(cmdline "$bin" "$name")
			read -r iclock iallocs < <(init_figures "$bin" "$name")
			echo "| $round | $(basename "$bin") | $name | $(wall_ms "$c") | $(cpu_ms "$c") | $iclock | $iallocs |"
		done
	done
done
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
