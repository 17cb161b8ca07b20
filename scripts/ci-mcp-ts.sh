#!/usr/bin/env bash
# Drives the hub's MCP bridge with a client that is not ours: the official
# TypeScript SDK (@modelcontextprotocol/sdk, pinned in test/mcpts). Builds
# the hub, starts it on free loopback ports with a temporary data dir,
# creates five agents, installs the npm project and runs its tests:
#   client.test.mjs  stdio through `hub mcp` and streamable HTTP at /mcp;
#   hosts.test.mjs   `hub mcp` started exactly as README.md's Claude Code
#                    line and Gemini CLI snippet configure it;
#   channel.test.mjs Claude Code channel notifications pushed by `hub mcp`.
#
# Usage: scripts/ci-mcp-ts.sh      (needs go, node >= 18 and npm)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# A fresh Debian machine has no Node.js: install it from Debian (node 18+).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
		echo "ci-mcp-ts: installing nodejs and npm from Debian"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
	fi
fi
for tool in go node npm curl; do
	command -v "$tool" >/dev/null || { echo "ci-mcp-ts: $tool is required (node >= 18 with npm: apt-get install nodejs npm)" >&2; exit 1; }
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

echo "ci-mcp-ts: building the hub"
go build -o "$work/hub" ./cmd/hub

"$work/hub" serve --data-dir "$work/data" --grpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 2>"$work/hub.log" &
hub_pid=$!

# The hub logs its bound addresses ("hub started ... grpc=… http=…") once it serves.
grpc_addr="" http_addr=""
for _ in $(seq 1 300); do
	if line=$(grep -m1 'hub started' "$work/hub.log" 2>/dev/null); then
		grpc_addr=$(sed -n 's/.* grpc=\([^ ]*\).*/\1/p' <<<"$line")
		http_addr=$(sed -n 's/.* http=\([^ ]*\).*/\1/p' <<<"$line")
		break
	fi
	kill -0 "$hub_pid" 2>/dev/null || { echo "ci-mcp-ts: the hub exited:" >&2; cat "$work/hub.log" >&2; exit 1; }
	sleep 0.1
done
if [[ -z "$grpc_addr" || -z "$http_addr" ]]; then
	echo "ci-mcp-ts: the hub did not report its addresses within 30s:" >&2
	cat "$work/hub.log" >&2
	exit 1
fi
echo "ci-mcp-ts: hub at gRPC $grpc_addr, HTTP $http_addr"

admin_token=$(tr -d '[:space:]' <"$work/data/admin.token")
create_agent() {
	curl -fsS -X POST "http://$http_addr/v1/admin/agents" \
		-H "Authorization: Bearer $admin_token" -H 'Content-Type: application/json' \
		-d "{\"name\":\"$1\"}" |
		node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).token))'
}

export HUB_BIN="$work/hub" HUB_ADDR="$grpc_addr" HUB_MCP_URL="http://$http_addr/mcp"
export AGENT_A=ts-alice AGENT_B=ts-bob AGENT_C=ts-carol AGENT_D=claude-dora AGENT_E=gemini-eve AGENT_F=ts-frank
TOKEN_A=$(create_agent "$AGENT_A")
TOKEN_B=$(create_agent "$AGENT_B")
TOKEN_C=$(create_agent "$AGENT_C")
TOKEN_D=$(create_agent "$AGENT_D")
TOKEN_E=$(create_agent "$AGENT_E")
TOKEN_F=$(create_agent "$AGENT_F")
export TOKEN_A TOKEN_B TOKEN_C TOKEN_D TOKEN_E TOKEN_F

cd test/mcpts
echo "ci-mcp-ts: npm ci"
npm ci --no-audit --no-fund --loglevel=error
echo "ci-mcp-ts: running the TypeScript SDK client against the hub"
node --test --test-reporter=spec client.test.mjs hosts.test.mjs channel.test.mjs
