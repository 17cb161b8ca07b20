#!/usr/bin/env bash
# Start to exit of what agents run on every tool call and every commit, for
# each binary, the binaries alternated run by run (a load that comes and
# goes hits them alike):
#   true    /bin/true: a process's spawn, exec and exit on this machine,
#           the floor of every row below;
#   hook    `BIN hook claude PostToolUse` with no bridge and a hub address
#           where nothing listens: it starts, finds no hub and exits 0
#           without the network (the time of a hub's answer is
#           BenchmarkHookRun's);
#   bridge  the same with the agent's bridge answering "nothing new" on its
#           socket (a stand-in serving internal/hooksock, as hub mcp does):
#           what nearly every tool call of an agent with hub mcp costs;
#   guard   `BIN guard check` with nothing staged, in the repository's top
#           directory, after a commit (as git runs its pre-commit hook);
#   staged  `BIN guard check` with a file staged and no hub listening: the
#           paths are listed, the hub is asked and does not answer;
#   version `BIN version`.
# BIN is a hub binary or a hub-hook (which runs the hub beside it for what
# it does not answer itself: the hook and staged rows). A small Go runner
# starts each run itself (no shell, no time(1) in the figures) and prints
# per binary and command the median and 90th percentile of the wall time
# from its fork to the child's exit, the mean CPU time (user + system, from
# the kernel's accounting of the child and what it ran) and minor page
# faults; then the package initialisation from GODEBUG=inittrace=1, its
# clock and allocations (summed over hub-hook and the hub it runs, where it
# runs one; the allocations are the one figure the load does not move).
#
# Usage: scripts/bench-hook-start.sh [-r ROUNDS] [-n RUNS] BINARY...
#   -r  rounds (default 2)
#   -n  runs per command, binary and round (default 20)
# Build each first, e.g. main against this tree:
#   git worktree add /tmp/base main && (cd /tmp/base && go build -tags grpcnotrace -o /tmp/hub-main ./cmd/hub)
#   mkdir -p /tmp/head && go build -tags grpcnotrace -o /tmp/head/hub ./cmd/hub && go build -o /tmp/head/hub-hook ./cmd/hub-hook
#   scripts/bench-hook-start.sh /tmp/hub-main /tmp/head/hub /tmp/head/hub-hook
# (grpcnotrace as `make build` and the release build hub; the release
# builds hub-hook with CGO_ENABLED=0 -trimpath -tags netgo,osusergo
# -ldflags "-s -w")
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
# The runner: reads lines "LABEL<TAB>DIR<TAB>STDIN<TAB>ENV<TAB>ARGV..."
# (ENV: NAME=VALUE pairs split by spaces, or -), runs each line once per
# round, RUNS rounds (after one not counted), and prints one line per
# label: wall median, wall p90, CPU mean (ms), minor faults mean.
cat >"$src/main.go" <<'GO'
package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type cmd struct {
	label, dir, stdin string
	env, argv         []string
	wall              []time.Duration
	cpu               time.Duration
	faults            int64
}

func main() {
	runs, _ := strconv.Atoi(os.Args[1])
	var cmds []*cmd
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		c := &cmd{label: f[0], dir: f[1], stdin: f[2], env: os.Environ(), argv: f[4:]}
		if f[3] != "-" {
			c.env = append(c.env, strings.Fields(f[3])...)
		}
		cmds = append(cmds, c)
	}
	for r := -1; r < runs; r++ {
		for _, c := range cmds {
			in, err := os.Open(c.stdin)
			if err != nil {
				panic(err)
			}
			start := time.Now()
			p, err := os.StartProcess(c.argv[0], c.argv, &os.ProcAttr{Dir: c.dir, Env: c.env, Files: []*os.File{in, nil, nil}})
			if err != nil {
				panic(err)
			}
			st, err := p.Wait()
			wall := time.Since(start)
			in.Close()
			if err != nil {
				panic(err)
			}
			if r < 0 {
				continue // warm-up
			}
			ru := st.SysUsage().(*syscall.Rusage)
			c.wall = append(c.wall, wall)
			c.cpu += time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
			c.faults += ru.Minflt
		}
	}
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) }
	for _, c := range cmds {
		slices.Sort(c.wall)
		n := len(c.wall)
		fmt.Printf("%s\t%s\t%s\t%s\t%d\n", c.label, ms(c.wall[n/2]), ms(c.wall[n*9/10]), ms(c.cpu/time.Duration(n)), c.faults/int64(n))
	}
}
GO
(cd "$root" && go build -o "$work/runner" "./cmd/$(basename "$src")")
# Repositories for the guard: one with nothing staged after a commit, one
# with a file staged.
for r in clean staged; do
	git init -q "$work/$r"
	echo a >"$work/$r/a"
	git -C "$work/$r" add a
	git -C "$work/$r" -c user.name=bench -c user.email=bench@localhost commit -q -m one
done
echo b >"$work/staged/b"
git -C "$work/staged" add b
echo '{"hook_event_name":"PostToolUse","session_id":"bench","tool_name":"Bash","tool_input":{"command":"true"}}' >"$work/post.json"
export HUB_ADDR=127.0.0.1:9 HUB_TOKEN=bench-token HUB_TOKEN_FILE= HUB_HOOK_BRIDGE= HUB_GUARD=
mkdir -m 0700 "$work/run-none" "$work/run-bridge"
XDG_RUNTIME_DIR=$work/run-bridge "$work/quiet-bridge" >"$work/bridge.out" &
bridge=$!
for _ in $(seq 500); do grep -q ready "$work/bridge.out" 2>/dev/null && break; sleep 0.01; done
grep -q ready "$work/bridge.out" || { echo "the stand-in bridge did not start" >&2; exit 1; }

# line BINARY NAME: the runner's line of one command.
line() {
	local t=$'\t'
	case $2 in
	true) echo "true$t$work$t/dev/null$t-$t/bin/true" ;;
	hook) echo "$1 hook$t$work$t$work/post.json${t}XDG_RUNTIME_DIR=$work/run-none$t$1${t}hook${t}claude${t}PostToolUse" ;;
	bridge) echo "$1 bridge$t$work$t$work/post.json${t}XDG_RUNTIME_DIR=$work/run-bridge$t$1${t}hook${t}claude${t}PostToolUse" ;;
	guard) echo "$1 guard$t$work/clean$t/dev/null$t-$t$1${t}guard${t}check" ;;
	staged) echo "$1 staged$t$work/staged$t/dev/null$t-$t$1${t}guard${t}check" ;;
	version) echo "$1 version$t$work$t/dev/null$t-$t$1${t}version" ;;
	esac
}

# init_figures BINARY NAME: "CLOCK_MS ALLOCS" of the package initialisation.
init_figures() {
	local dir=$work in=/dev/null env=
	case $2 in
	hook | bridge) in=$work/post.json env=XDG_RUNTIME_DIR=$work/run-$([ "$2" = hook ] && echo none || echo bridge) ;;
	guard) dir=$work/clean ;;
	staged) dir=$work/staged ;;
	esac
	local args
	case $2 in
	hook | bridge) args=(hook claude PostToolUse) ;;
	guard | staged) args=(guard check) ;;
	version) args=(version) ;;
	esac
	(cd "$dir" && env $env GODEBUG=inittrace=1 "$1" "${args[@]}" <"$in" 2>&1 >/dev/null) |
		awk '/^init /{c+=$5; a+=$10} END{printf "%.1f %d\n", c, a}'
}

echo "| round | binary | command | wall median ms | wall p90 ms | CPU ms | minor faults | init clock ms | init allocs |"
echo "|---|---|---|---|---|---|---|---|---|"
for round in $(seq "$rounds"); do
	for name in true hook bridge guard staged version; do
		{
			if [ "$name" = true ]; then
				line "" true
			else
				for bin in "${bins[@]}"; do line "$bin" "$name"; done
			fi
		} | "$work/runner" "$runs" | while IFS=$'\t' read -r label wall p90 cpu faults; do
			bin=${label% *}
			if [ "$name" = true ]; then
				echo "| $round | /bin/true | true | $wall | $p90 | $cpu | $faults | | |"
			else
				read -r iclock iallocs < <(init_figures "$bin" "$name")
				echo "| $round | $(basename "$(dirname "$bin")")/$(basename "$bin") | $name | $wall | $p90 | $cpu | $faults | $iclock | $iallocs |"
			fi
		done
	done
done
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
