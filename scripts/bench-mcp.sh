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

work=$(mktemp -d)
hub_pid=""
cleanup() {
	if [[ -n "$hub_pid" ]] && kill -0 "$hub_pid" 2>/dev/null; then
		kill "$hub_pid" 2>/dev/null || true
		wait "$hub_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

if [[ -z "$hub_bin" ]]; then
	echo "bench-mcp: building the hub" >&2
	(cd "$root" && go build -o "$work/hub" ./cmd/hub)
	hub_bin="$work/hub"
fi

"$hub_bin" serve --data-dir "$work/data" --grpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 \
	--rate-limit 0 --read-rate-limit 0 2>"$work/hub.log" &
hub_pid=$!

grpc_addr="" http_addr=""
for _ in $(seq 1 300); do
	if line=$(grep -m1 'hub started' "$work/hub.log" 2>/dev/null); then
		grpc_addr=$(sed -n 's/.* grpc=\([^ ]*\).*/\1/p' <<<"$line")
		http_addr=$(sed -n 's/.* http=\([^ ]*\).*/\1/p' <<<"$line")
		break
	fi
	kill -0 "$hub_pid" 2>/dev/null || { echo "bench-mcp: the hub exited:" >&2; cat "$work/hub.log" >&2; exit 1; }
	sleep 0.1
done
[[ -n "$grpc_addr" && -n "$http_addr" ]] || { echo "bench-mcp: the hub did not start:" >&2; cat "$work/hub.log" >&2; exit 1; }

admin_token=$(tr -d '[:space:]' <"$work/data/admin.token")
create_agent() {
	curl -fsS -X POST "http://$http_addr/v1/admin/agents" \
		-H "Authorization: Bearer $admin_token" -H 'Content-Type: application/json' \
		-d "{\"name\":\"$1\"}" |
		node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).token))'
}
create_agent bench-sink >/dev/null
tokens=""
for i in $(seq 1 "$clients"); do
	tokens+="${tokens:+,}$(create_agent "bench-$i")"
done

cd "$root/test/mcpts"
[[ -d node_modules ]] || npm ci --no-audit --no-fund --loglevel=error >&2
HUB_BIN="$hub_bin" HUB_ADDR="$grpc_addr" HUB_MCP_URL="http://$http_addr/mcp" HUB_PID="$hub_pid" \
	BENCH_TOKENS="$tokens" BENCH_TO=bench-sink BENCH_POSTS="$posts" BENCH_SEQ="$seq" \
	BENCH_SCENARIOS="$scenarios" CLK_TCK=$(getconf CLK_TCK) \
	node bench.mjs
