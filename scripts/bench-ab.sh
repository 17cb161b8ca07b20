#!/usr/bin/env bash
# Compares hub builds the way BENCHMARKS.md does: hub CPU per acknowledged
# post and per heartbeat (32 senders, from /proc/PID/stat) and the writes per
# commit, each build in turn, round after round, so that whatever else the
# machine does weighs on every build alike. Prints a Markdown table: one row
# per round, then the median of each column.
#
# Usage: scripts/bench-ab.sh [-r ROUNDS] [-d DURATION] HUB_BINARY...
#   -r  rounds (default 4)
#   -d  length of each posts and heartbeats run (default 10s)
# Build each hub first, e.g. for main against a commit:
#   git worktree add /tmp/base COMMIT && (cd /tmp/base && go build -o /tmp/hub-base ./cmd/hub)
#   go build -o /tmp/hub-main ./cmd/hub && scripts/bench-ab.sh /tmp/hub-base /tmp/hub-main
# hubbench is built from this tree. On a machine with two CPUs or more, each
# hub runs on CPU 1 and hubbench on CPU 0 (taskset).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
rounds=4 duration=10s
while getopts "r:d:" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	d) duration=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-d DURATION] HUB_BINARY..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
	echo "usage: $0 [-r ROUNDS] [-d DURATION] HUB_BINARY... (build each hub first: go build -o /tmp/hub-X ./cmd/hub)" >&2
	exit 2
fi
for b in "$@"; do
	if [ ! -x "$b" ]; then
		echo "bench-ab: $b is not an executable hub binary (build it with: go build -o $b ./cmd/hub)" >&2
		exit 2
	fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "bench-ab: building hubbench" >&2
(cd "$root" && go build -o "$work/hubbench" ./cmd/hubbench)
pin=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	pin=(--hub-cpus 1 --bench-cpus 0)
fi

# field ROW_LABEL: the figure after "hub CPU **" (µs) or before " writes per
# commit" in hubbench's row that starts with ROW_LABEL; "?" if absent.
cpu() { grep "^| $1" "$work/out" | grep -o 'hub CPU \*\*[0-9.]* µs' | grep -o '[0-9.]*' | head -1 || echo "?"; }
batch() { grep "^| $1" "$work/out" | grep -o '[0-9.]* writes per commit' | grep -o '^[0-9.]*' | head -1 || echo "?"; }

header="| round |" rule="|---|"
for b in "$@"; do
	header+=" $(basename "$b"): post · heartbeat (µs) · writes per commit |"
	rule+="---|"
done
rows=()
declare -A posts hbs
for r in $(seq 1 "$rounds"); do
	row="| $r |"
	for i in $(seq 1 $#); do
		b=${!i}
		echo "bench-ab: round $r of $rounds, $(basename "$b")" >&2
		"$work/hubbench" --hub-bin "$b" --scenarios throughput --duration "$duration" "${pin[@]}" >"$work/out" 2>"$work/err" ||
			{ echo "bench-ab: hubbench failed with $b:" >&2; tail -5 "$work/err" >&2; exit 1; }
		p=$(cpu "Acknowledged posts/s") h=$(cpu "Heartbeats/s") w=$(batch "Acknowledged posts/s")
		posts[$i]+="$p " hbs[$i]+="$h "
		row+=" $p · $h · $w |"
	done
	rows+=("$row")
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "?"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
echo "$header"
echo "$rule"
printf '%s\n' "${rows[@]}"
row="| median |"
for i in $(seq 1 $#); do
	row+=" **$(echo "${posts[$i]}" | median)** · $(echo "${hbs[$i]}" | median) |"
done
echo "$row"
