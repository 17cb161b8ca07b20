#!/usr/bin/env bash
# Measures what post_message costs through MCP, with the official TypeScript
# SDK (test/mcpts) as the client: server CPU per post (hub, plus the `hub mcp`
# processes over stdio, read from /proc/PID/stat) with CLIENTS clients posting
# at once over streamable HTTP (/mcp) and over stdio, and the round trip of
# sequential posts through one `hub mcp` (p50, p90, p99).
#
# Starts its own hub (SQLite in a temporary data dir, free loopback ports,
# write and read rate limits off so that the clients are never slowed down)
# and stops it at the end. Prints one JSON line per scenario.
#
# Usage: scripts/bench-mcp.sh [-b HUB_BINARY] [-c CLIENTS] [-n POSTS_PER_CLIENT]
#                             [-s SEQUENTIAL_POSTS] [-S http,stdio,seq]
#   -b  a prebuilt hub binary (to compare builds); default: build ./cmd/hub
#   -c  concurrent clients (default 8)
#   -n  posts per client in each concurrent run (default 250)
#   -s  posts in the sequential run (default 1000)
#   -S  scenarios to run, comma-separated (default http,stdio,seq)
# Needs go, node >= 18 with npm, and curl.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
hub_bin="" clients=8 posts=250 seq=1000 scenarios=http,stdio,seq
while getopts "b:c:n:s:S:" opt; do
	case $opt in
	b) hub_bin=$OPTARG ;;
	c) clients=$OPTARG ;;
	n) posts=$OPTARG ;;
	s) seq=$OPTARG ;;
	S) scenarios=$OPTARG ;;
	*) sed -n '2,18p' "$0" >&2; exit 2 ;;
	esac
done
for tool in go node npm curl; do
	command -v "$tool" >/dev/null || { echo "bench-mcp: $tool is required" >&2; exit 1; }
done

# shellcheck source=lib/testhub.sh
source "$root/scripts/lib/testhub.sh"
testhub_init bench-mcp

if [[ -z "$hub_bin" ]]; then
	echo "bench-mcp: building the hub" >&2
	(cd "$root" && go build -o "$work/hub" ./cmd/hub)
	hub_bin="$work/hub"
fi
testhub_start "$hub_bin" --rate-limit 0 --read-rate-limit 0

testhub_agent bench-sink >/dev/null
tokens=""
for i in $(seq 1 "$clients"); do
	tokens+="${tokens:+,}$(testhub_agent "bench-$i")"
done

cd "$root/test/mcpts"
[[ -d node_modules ]] || npm ci --no-audit --no-fund --loglevel=error >&2
HUB_BIN="$hub_bin" HUB_ADDR="$grpc_addr" HUB_MCP_URL="http://$http_addr/mcp" HUB_PID="$hub_pid" \
	BENCH_TOKENS="$tokens" BENCH_TO=bench-sink BENCH_POSTS="$posts" BENCH_SEQ="$seq" \
	BENCH_SCENARIOS="$scenarios" CLK_TCK=$(getconf CLK_TCK) \
	node bench.mjs
